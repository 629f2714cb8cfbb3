/** `evalferry <command> --help` ends with examples, and each example is a command line the command takes. */
import assert from 'node:assert/strict'
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parseArgs } from 'node:util'
import { SHARED_OPTIONS, type Command } from '../src/cli/command.ts'
import { ROOT, runCli } from './helpers/cli.ts'
import { startFixture } from './helpers/fixture.ts'
import { createRepo } from './helpers/repos.ts'
import { tempDir } from './helpers/temp.ts'

const NAMES = ['convert', 'detect', 'validate', 'prefetch', 'resolve', 'cache']

async function command(name: string): Promise<Command> {
  return ((await import(`../src/cli/${name}.ts`)) as { default: Command }).default
}

test('each command\'s --help ends with two or three examples of that command', async () => {
  for (const name of NAMES) {
    const run = await runCli([name, '--help'])
    assert.equal(run.code, 0, run.stderr)
    const [, examples] = run.stdout.split('\n\nExamples:\n')
    assert.ok(examples, `${name} --help has no examples:\n${run.stdout}`)
    const lines = examples.trimEnd().split('\n')
    const commands = lines.filter((l) => !l.startsWith('  # '))
    assert.ok(commands.length >= 2 && commands.length <= 3, `${name}: ${commands.length} examples`)
    // Each example is said in a line before it.
    assert.equal(lines.length, commands.length * 2, examples)
    for (const line of commands) assert.match(line, new RegExp(`^  evalferry ${name} \\S`))
  }
})

test('each example names only options its command takes, with values where they take one', async () => {
  for (const name of NAMES) {
    const cmd = await command(name)
    for (const { line } of cmd.examples) {
      const [, verb, ...args] = line.split(' ')
      assert.equal(verb, name, line)
      assert.doesNotThrow(() => parseArgs({ args, options: { ...SHARED_OPTIONS, ...cmd.options }, allowPositionals: true, strict: true }), line)
    }
  }
})

test('every example runs on the bundled example as written; those that fetch, from a git server on loopback standing for github.com', async (t) => {
  const dir = tempDir()
  cpSync(join(ROOT, 'examples', 'goldens.json'), join(dir, 'goldens.json'))
  mkdirSync(join(dir, 'exports'))
  cpSync(join(ROOT, 'examples', 'goldens.json'), join(dir, 'exports', 'support.json'))
  writeFileSync(join(dir, 'questions.csv'), 'question,answer\nWhat is 2 + 2?,4\n')
  // The repository the bundled example and the examples point at, served on loopback.
  const fx = await startFixture({}, 1)
  t.after(() => fx.cleanup())
  createRepo(join(fx.dir, 'repos'), 'github.com', 'evalferry-examples/handbook', { 'docs/onboarding.md': '# Onboarding\n' })
  const hosts = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  // The cache's examples work on a cache of their own.
  const env = { EVALFERRY_CACHE_DIR: join(dir, 'cache') }
  for (const name of NAMES) {
    for (const { line } of (await command(name)).examples) {
      const fetches = name === 'prefetch' || name === 'resolve'
      const run = await runCli([...line.split(' ').slice(1), ...(fetches ? hosts : [])], env, 60_000, undefined, dir)
      assert.equal(run.code, 0, `${line}: ${run.stderr}`)
    }
  }
  // What they fetched is in the cache, and the rewritten dataset points at it.
  assert.match(readFileSync(join(dir, 'offline.yaml'), 'utf8'), /onboarding\.md/)
  assert.doesNotMatch(readFileSync(join(dir, 'offline.yaml'), 'utf8'), /https:\/\/github\.com/)
})
