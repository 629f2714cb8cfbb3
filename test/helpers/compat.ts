/**
 * The real tools that judge what evalferry writes: agentv, promptfoo, the langsmith and
 * @huggingface/hub clients, and Python's datasets, pyarrow, pandas, huggingface_hub, langsmith and
 * PyYAML. They live in `compat/`, outside evalferry's own dependencies, installed by
 * `compat/setup.sh` (which `.ci/run` runs). Where they are missing a test is skipped with the
 * command that installs them, except in CI, where a missing judge fails the run.
 */
import assert from 'node:assert/strict'
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './cli.ts'

export const COMPAT = join(ROOT, 'compat')
const NODE_MODULES = join(COMPAT, 'node_modules')
export const COMPAT_PYTHON = join(COMPAT, '.venv', 'bin', 'python')

export type Judge = 'agentv' | 'promptfoo' | 'langsmith' | '@huggingface/hub' | 'python'

function installed(judge: Judge): boolean {
  if (judge === 'python') return existsSync(COMPAT_PYTHON)
  return existsSync(join(NODE_MODULES, judge, 'package.json'))
}

/**
 * The options of a test that `judge` decides: `{ skip: false }` where it is installed, else a skip
 * that says how to install it. In CI (`CI` set) a missing judge throws, so the run fails.
 */
export function judgedBy(...judges: Judge[]): { skip: string | false } {
  const missing = judges.filter((j) => !installed(j))
  if (missing.length === 0) return { skip: false }
  const reason = `needs ${missing.join(', ')} from compat/: run compat/setup.sh`
  if (process.env.CI) throw new Error(`${reason} (.ci/run runs it before the tests)`)
  return { skip: reason }
}

/** `agentv <args>` (4.42.4, from compat/), run in `cwd`. */
export function agentv(args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [join(NODE_MODULES, 'agentv', 'dist', 'cli.js'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' },
    maxBuffer: 1 << 28,
  })
}

const RESULT = '\u0000evalferry-compat-result\u0000'
const PRELUDE = `const result = (v) => process.stdout.write(${JSON.stringify(RESULT)} + JSON.stringify(v) + ${JSON.stringify(RESULT)});\n`

function compatArgs(script: string, args: string[]): string[] {
  return ['--input-type=module', '-e', PRELUDE + script, ...args]
}

const COMPAT_OPTIONS = { cwd: COMPAT, env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1' } }

/** The value a compat script handed to `result`; a failure fails the test. */
function compatResult<T>(status: number | null, stdout: string, stderr: string): T {
  assert.equal(status, 0, `compat script failed:\n${stderr}`)
  const parts = stdout.split(RESULT)
  assert.ok(parts.length >= 3, `compat script gave no result:\n${stdout}\n${stderr}`)
  return JSON.parse(parts[1]!) as T
}

/**
 * Runs an ES module `script` with compat/ as its folder (so it imports compat's packages by name),
 * with `args` as `process.argv.slice(1)`. The script hands back its answer by calling
 * `result(value)`; what the tools print around it is left aside. A failure fails the test.
 */
export function runInCompat<T = unknown>(script: string, args: string[] = []): T {
  const run = spawnSync(process.execPath, compatArgs(script, args), { ...COMPAT_OPTIONS, encoding: 'utf8', maxBuffer: 1 << 28 })
  return compatResult<T>(run.status, run.stdout, run.stderr)
}

/** `runInCompat` without blocking this process: a server the test runs here can answer the script. */
export function runInCompatAsync<T = unknown>(script: string, args: string[] = []): Promise<T> {
  const child = spawn(process.execPath, compatArgs(script, args), COMPAT_OPTIONS)
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (status) => {
      try {
        resolve(compatResult<T>(status, stdout, stderr))
      } catch (error) {
        reject(error)
      }
    })
  })
}

/** The module of agentv 4.42.4's bundle that exports its loaders (`loadTests`...), for `import()`. */
export function agentvCoreModule(): string {
  const dist = join(NODE_MODULES, 'agentv', 'dist')
  const entry = readdirSync(dist).find((f) => /^dist-[A-Z0-9]+\.js$/.test(f))
  assert.ok(entry, `no loader module in ${dist}`)
  return join(dist, entry)
}

/** The tests agentv's own loader (`loadTests`) makes of an eval file, as JSON. */
export function agentvLoadTests(evalFile: string, repoRoot: string): Array<Record<string, unknown>> {
  return runInCompat(
    `const { loadTests } = await import(${JSON.stringify(agentvCoreModule())});
     result(await loadTests(process.argv[1], process.argv[2]))`,
    [evalFile, repoRoot],
  )
}

/** What Python `script` prints, run by compat's Python (datasets, pyarrow, pandas...) with `args`. */
export function compatPython(script: string, args: string[] = [], input = ''): string {
  const run = spawnSync(COMPAT_PYTHON, ['-c', script, ...args], { input, encoding: 'utf8', maxBuffer: 1 << 28, env: { ...process.env, HF_DATASETS_OFFLINE: '1', HF_HUB_OFFLINE: '1', HF_HUB_DISABLE_TELEMETRY: '1' } })
  assert.equal(run.status, 0, run.stderr)
  return run.stdout
}
