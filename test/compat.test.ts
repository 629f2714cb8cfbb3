/** The judges in compat/ are the releases the tests name: a drifted lock file would change the verdicts. */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { agentv, COMPAT, compatPython, judgedBy } from './helpers/compat.ts'

const version = (pkg: string): string => (JSON.parse(readFileSync(join(COMPAT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version

test('compat/ holds the npm releases the judges are pinned to', judgedBy('agentv', 'promptfoo', 'langsmith', '@huggingface/hub'), () => {
  const pinned = (JSON.parse(readFileSync(join(COMPAT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies
  for (const [pkg, want] of Object.entries(pinned)) assert.equal(version(pkg), want, pkg)
  const run = agentv(['--version'], COMPAT)
  assert.equal(run.status, 0, run.stderr)
  assert.match(run.stdout, /\b4\.42\.4\b/)
})

test("compat/'s Python imports the pinned releases of datasets, pyarrow, pandas, huggingface_hub, langsmith and PyYAML", judgedBy('python'), () => {
  const wanted = Object.fromEntries(
    readFileSync(join(COMPAT, 'requirements.txt'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Za-z]/.test(l))
      .map((l) => l.split('==') as [string, string]),
  )
  const got = JSON.parse(
    compatPython(`
import json, importlib.metadata as m
print(json.dumps({n: m.version(n) for n in ${JSON.stringify(Object.keys(wanted))}}))
import datasets, pyarrow, pandas, huggingface_hub, langsmith, yaml
`),
  ) as Record<string, string>
  assert.deepEqual(got, wanted)
})
