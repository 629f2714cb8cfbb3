/** The README's examples run as written: the set-up and test commands first, the library example, and the offline recipes with the built command. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './helpers/cli.ts'
import { runBlock, workspace } from './helpers/docs.ts'

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const blocks = [...readme.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, code: m[2]! }))
// The package's own entry point, as `import ... from 'evalferry'` resolves it.
const built = existsSync(join(ROOT, 'dist', 'src', 'index.js'))

test('the README opens with the set-up command and the test command', () => {
  const [setup, tests] = blocks
  assert.equal(setup?.code.trim(), 'npm ci && node bin/evalferry.js convert examples/goldens.json --to evalcase -o out/goldens.eval.yaml')
  assert.equal(tests?.code.trim(), 'npm test')
})

test('the library example runs as written', { skip: built ? false : 'dist/ is built by npm ci (prepare); run npm run build first' }, () => {
  const example = blocks.find((b) => b.lang === 'ts')
  assert.ok(example, 'the README has a TypeScript example')
  const file = join(ROOT, '.readme-example.mjs')
  writeFileSync(file, example.code)
  try {
    const run = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8' })
    assert.equal(run.status, 0, run.stderr)
    assert.match(run.stdout, /^refund-damaged What is the refund window for a damaged item\?$/m)
    assert.match(run.stdout, /read: 3, written: 3, skipped: 0/)
  } finally {
    rmSync(file, { force: true })
  }
})

test('the offline command-line recipes run as written with the built command', { skip: built ? false : 'bin/ runs dist/, built by npm ci (prepare)' }, async () => {
  // Those that reach no server: the others, and these too, run from the sources in test/docs.test.ts.
  const recipes = blocks.slice(2).filter((b) => b.lang === 'sh' && !b.code.includes('://') && !/\bevalferry (prefetch|resolve)\b/.test(b.code))
  const commands = recipes.flatMap((b) => b.code.split('\n')).filter((line) => /^\s*evalferry (convert|detect|validate) /.test(line))
  assert.ok(commands.length >= 4, `found ${commands.length} examples`)
  const { dir, env } = workspace([process.execPath, join(ROOT, 'bin', 'evalferry.js')], {})
  for (const recipe of recipes) {
    const run = await runBlock(recipe.code, dir, env)
    assert.equal(run.status, 0, `${recipe.code}\n${run.output}`)
  }
})

test('the package loads with import, and with require on Node.js 20.19 and later, where require(esm) works', { skip: built ? false : 'dist/ is built by npm ci (prepare)' }, () => {
  assert.equal(process.features.require_module, true, 'the Node.js running the tests loads ES modules with require')
  const file = join(ROOT, '.require-example.cjs')
  writeFileSync(file, "const { convert, FORMAT_NAMES } = require('evalferry')\nconvert({ input: 'examples/goldens.json', output: '-', to: 'deepeval', outputContainer: 'jsonl' }).then((r) => console.error(FORMAT_NAMES[0], r.records.written))\n")
  try {
    const run = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8' })
    assert.equal(run.status, 0, run.stderr)
    assert.equal(run.stderr, 'evalcase 3\n')
    assert.equal(run.stdout.trim().split('\n').length, 3)
    assert.match(run.stdout, /^\{"input": "What is the refund window for a damaged item\?"/)
  } finally {
    rmSync(file, { force: true })
  }
  const dynamic = spawnSync(process.execPath, ['--input-type=commonjs', '-e', "import('evalferry').then((m) => console.log(typeof m.convert))"], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(dynamic.stdout, 'function\n', dynamic.stderr)
})

test('an older Node.js, which has no module-sync condition, is told how to load the package instead of failing on the exports map', () => {
  const { exports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> }
  // Conditions are tried in order: module-sync must come before require, which only an older Node.js reaches.
  assert.deepEqual(Object.keys(exports['.']!), ['types', 'module-sync', 'import', 'require'])
  assert.equal(exports['.']!['require'], './require.cjs')
  const run = spawnSync(process.execPath, [join(ROOT, 'require.cjs')], { encoding: 'utf8' })
  assert.equal(run.status, 1)
  assert.match(run.stderr, /Error: evalferry is an ES module: `require\('evalferry'\)` needs Node\.js 20\.19 or later; here load it with `await import\('evalferry'\)`/)
})
