/** Python's tools as judges of what Python reads: a Python that has them, and a script run on text. */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { COMPAT_PYTHON } from './compat.ts'

/**
 * The first Python on this machine that imports `module`: compat's (`compat/setup.sh`, which
 * `.ci/run` runs, gives it PyYAML, pandas and numpy), else `python3` on the PATH, else Debian's.
 */
export function pythonWith(module: string): string | undefined {
  return [COMPAT_PYTHON, 'python3', '/usr/bin/python3'].find((python) => spawnSync(python, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0)
}

/** What `script` prints, run by `python` with `input` on its standard input; a failure fails the test. */
export function runPython(python: string, script: string, input: string): string {
  const run = spawnSync(python, ['-c', script], { input, encoding: 'utf8', maxBuffer: 1 << 28 })
  assert.equal(run.status, 0, run.stderr)
  return run.stdout
}
