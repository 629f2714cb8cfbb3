/**
 * What the resolver's commands refuse, end to end against the loopback server: a cache in someone's
 * directory, outputs that would overwrite inputs or each other, anchors that do not fit, timeouts
 * Node cannot hold, an empty --cache-dir, and filesystem failures as errors that name the path.
 */

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, lchownSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { type EvalferryError, prefetch, resolve } from '../../src/index.ts'
import { MAIN, ROOT, runCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'
import { tempDir } from '../helpers/temp.ts'

let fx: Fixture
let hostArgs: string[]
let github: string
before(async () => {
  fx = await startFixture({}, 3)
  hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  github = blobUrl(fx.repos[0]!, 'main', 'data/file-1.txt')
})
after(() => fx.cleanup())

/** A new directory under the fixture's. */
function dir(name: string): string {
  const path = join(fx.dir, name)
  mkdirSync(path, { recursive: true })
  return path
}

test('a cache is not started in a directory holding other files, and clear removes only what the cache made', async () => {
  const project = dir('project')
  mkdirSync(join(project, 'src'))
  writeFileSync(join(project, 'src', 'main.ts'), 'x\n')
  const refused = await runCli(['resolve', github, '--cache-dir', project, ...hostArgs])
  assert.equal(refused.code, 3, refused.stderr)
  assert.match(refused.stderr, new RegExp(`${project} is not empty and is not an evalferry cache`))
  assert.deepEqual(readdirSync(project), ['src'])
  const clear = await runCli(['cache', 'clear', '--cache-dir', project])
  assert.equal(clear.code, 3)
  assert.equal(readFileSync(join(project, 'src', 'main.ts'), 'utf8'), 'x\n')

  // A cache directory that later gets a file of the user's: clear removes the repositories, not the file.
  const cache = join(fx.dir, 'cache-mixed')
  const ok = await runCli(['resolve', github, '--cache-dir', cache, ...hostArgs])
  assert.equal(ok.code, 0, ok.stderr)
  writeFileSync(join(cache, 'notes.txt'), 'mine\n')
  const again = await runCli(['resolve', github, '--cache-dir', cache, ...hostArgs])
  assert.equal(again.code, 0, again.stderr)
  const cleared = await runCli(['cache', 'clear', '--cache-dir', cache])
  assert.equal(cleared.code, 0, cleared.stderr)
  assert.deepEqual(readdirSync(cache).sort(), ['CACHEDIR.TAG', 'notes.txt'])
})

test('prefetch refuses a manifest or rewrite that is an input, the two in one file, and two inputs rewritten to one file', async () => {
  const work = dir('outputs')
  const dataset = join(work, 'same.yaml')
  writeEvalcaseDataset(dataset, [github])
  const original = readFileSync(dataset, 'utf8')
  const cache = fx.newCache()
  const requests = fx.server.requests.length
  const run = (...args: string[]) => runCli(['prefetch', ...args, '--cache-dir', cache, ...hostArgs])

  const rewrite = await run(dataset, '--rewrite', dataset)
  assert.equal(rewrite.code, 2)
  assert.match(rewrite.stderr, /the rewritten dataset .*same\.yaml is the input .*same\.yaml; evalferry never overwrites an input/)
  const manifest = await run(dataset, '--manifest', dataset)
  assert.equal(manifest.code, 2)
  assert.match(manifest.stderr, /the manifest .*same\.yaml is the input/)
  const both = await run(dataset, '--manifest', join(work, 'out.json'), '--rewrite', join(work, 'out.json'))
  assert.equal(both.code, 2)
  assert.match(both.stderr, /the manifest and the rewritten dataset would both be written to .*out\.json/)

  mkdirSync(join(work, 'a'))
  mkdirSync(join(work, 'b'))
  writeEvalcaseDataset(join(work, 'a', 'x.yaml'), [github])
  writeEvalcaseDataset(join(work, 'b', 'x.yaml'), [github])
  const rw = join(work, 'rw')
  const twice = await run(join(work, 'a', 'x.yaml'), join(work, 'b', 'x.yaml'), '--rewrite', rw)
  assert.equal(twice.code, 2)
  assert.ok(twice.stderr.includes(`two inputs would both write ${join(rw, 'x.yaml')}`), twice.stderr)

  // A rewrite keeps the dataset's container; --offline cannot --refresh; standard input is no dataset file; a host is named as URLs write it.
  const otherContainer = await run(dataset, '--manifest', join(work, 'm.json'), '--rewrite', join(work, 'rewritten.json'))
  assert.equal(otherContainer.code, 2)
  assert.equal(otherContainer.stderr, `evalferry: --rewrite writes the dataset as it is, a yaml file: ${join(work, 'rewritten.json')} is named as a json one\n`)
  const offlineRefresh = await run(dataset, '--offline', '--refresh')
  assert.equal(offlineRefresh.code, 2)
  assert.match(offlineRefresh.stderr, /--refresh lists refs again, which --offline forbids/)
  const stdin = await run('-', '--from', 'evalcase')
  assert.equal(stdin.code, 2)
  assert.match(stdin.stderr, /save standard input to a file first/)
  for (const name of ['https://ghe.corp', 'ghe.corp/path']) {
    const host = await runCli(['resolve', github, '--cache-dir', cache, '--host', `${name}=https://ghe.corp`])
    assert.equal(host.code, 2, host.stderr)
    assert.match(host.stderr, /the name is a host as URLs write it/)
  }

  assert.equal(readFileSync(dataset, 'utf8'), original)
  assert.ok(!existsSync(join(work, 'out.json')) && !existsSync(rw) && !existsSync(join(work, 'm.json')))
  assert.equal(fx.server.requests.length, requests, 'refused before any fetch')
})

test('prefetch takes a directory as convert does: its datasets, each rewritten into the directory named', async () => {
  const work = dir('prefetch-folder')
  const folder = join(work, 'datasets')
  mkdirSync(folder)
  writeEvalcaseDataset(join(folder, 'one.yaml'), [github])
  writeFileSync(join(folder, 'notes.txt'), 'not a dataset\n')
  const rw = join(work, 'rw')
  const result = await runCli(['prefetch', folder, '--rewrite', rw, '--cache-dir', fx.newCache(), ...hostArgs, '--quiet'])
  assert.equal(result.code, 0, result.stderr)
  assert.deepEqual(readdirSync(rw), ['one.yaml'])
  assert.doesNotMatch(readFileSync(join(rw, 'one.yaml'), 'utf8'), /https:\/\/github\.com/)
})

test('--embed refuses an anchor past the end, reversed or at line 0, naming the URL, the lines and the dataset', async () => {
  const work = dir('embed')
  const cache = fx.newCache()
  for (const [anchor, why] of [
    ['#L999', /line 999: the file has 2 line\(s\)/],
    ['#L3-L1', /lines 3-1: the range ends before it starts/],
    ['#L0', /line 0: lines are numbered from 1/],
  ] as const) {
    const url = `${github}${anchor}`
    const dataset = join(work, 'cases.yaml')
    writeEvalcaseDataset(dataset, [blobUrl(fx.repos[0]!, 'main', 'data/file-0.txt'), url])
    const out = join(work, 'out.yaml')
    const run = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--rewrite', out, '--embed'])
    assert.equal(run.code, 3, run.stderr)
    // Named as a failed prefetch is: the case's line and the field.
    assert.ok(run.stderr.includes(`${dataset}:2: input[0].content[2].value: ${url}: `), run.stderr)
    assert.match(run.stderr, why)
    assert.ok(!existsSync(out))
  }
})

test('a timeout longer than Node timers hold is a usage error naming the largest accepted', async () => {
  const flag = await runCli(['resolve', github, '--timeout', '2147484', '--cache-dir', fx.newCache(), ...hostArgs])
  assert.equal(flag.code, 2)
  assert.match(flag.stderr, /--timeout takes at most 2147483 seconds, not "2147484"/)
  const env = await runCli(['resolve', github, '--cache-dir', fx.newCache(), ...hostArgs], { EVALFERRY_TIMEOUT: '1e10' })
  assert.equal(env.code, 2)
  assert.match(env.stderr, /EVALFERRY_TIMEOUT=1e10 is too long: the largest timeout accepted is 2147483 seconds/)
  const most = await runCli(['resolve', github, '--timeout', '2147483', '--cache-dir', fx.newCache(), ...hostArgs])
  assert.equal(most.code, 0, most.stderr)
})

test('the library refuses a setting the command line would, before any fetch: NaN, a fraction, zero, text', async () => {
  const cacheDir = fx.newCache()
  const hosts = fx.server.hostSpecs()
  const bad: [Record<string, unknown>, string][] = [
    [{ concurrency: Number.NaN }, 'the option concurrency takes a whole number of at least 1, not NaN'],
    [{ concurrency: 1.5 }, 'the option concurrency takes a whole number of at least 1, not 1.5'],
    [{ timeoutSeconds: 0 }, 'the option timeoutSeconds takes a number of seconds above 0, not 0'],
    [{ maxFileBytes: '10' }, 'the option maxFileBytes takes a whole number of bytes of at least 1, not "10"'],
    [{ refTtlSeconds: -1 }, 'the option refTtlSeconds takes a number of seconds of at least 0, not -1'],
  ]
  for (const [setting, message] of bad) {
    for (const call of [() => resolve(github, { cacheDir, hosts, env: {}, ...setting }), () => prefetch([{ input: [{ role: 'user', content: github }] }], { cacheDir, hosts, env: {}, ...setting })]) {
      await assert.rejects(call(), (error: EvalferryError) => {
        assert.equal(error.code, 'E_USAGE')
        assert.equal(error.message, message)
        return true
      })
    }
  }
  assert.equal(existsSync(cacheDir), false)
  const fine = await resolve(github, { cacheDir, hosts, env: {}, concurrency: 2, rawFileLimit: 0, refTtlSeconds: 0 })
  assert.deepEqual(readFileSync(fine), fx.repos[0]!.files.get('data/file-1.txt'))
})

test('an empty --cache-dir is a usage error, not the default cache', async () => {
  for (const args of [['resolve', github, ...hostArgs], ['cache', 'list'], ['cache', 'clear'], ['prefetch', join(fx.dir, 'none.yaml')]]) {
    // Were it taken as the default, the default would be here, not in the user's home.
    const run = await runCli([...args, '--cache-dir', ''], { XDG_CACHE_HOME: join(fx.dir, 'xdg') })
    assert.equal(run.code, 2, `${args[0]}: ${run.stderr}`)
    assert.match(run.stderr, /--cache-dir is empty/)
  }
  assert.ok(!existsSync(join(fx.dir, 'xdg')))
})

test('a manifest on a directory is a usage error; filesystem failures name the path: a manifest below a file, a cache that is a file', async () => {
  const work = dir('fs')
  const dataset = join(work, 'cases.yaml')
  writeEvalcaseDataset(dataset, [github])
  const cache = fx.newCache()
  const isDir = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--manifest', work])
  assert.equal(isDir.code, 2, isDir.stderr)
  assert.ok(isDir.stderr.includes(`the manifest ${work} is a directory; name a file`), isDir.stderr)
  const afile = join(work, 'afile')
  writeFileSync(afile, 'x\n')
  const below = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--manifest', join(afile, 'm.json')])
  assert.equal(below.code, 1, below.stderr)
  assert.ok(below.stderr.includes(`${join(afile, 'm.json')}: cannot be written: a part of its path is a file, not a directory`), below.stderr)

  for (const args of [['resolve', github, ...hostArgs], ['cache', 'list'], ['cache', 'prune'], ['cache', 'clear']]) {
    const run = await runCli([...args, '--cache-dir', afile])
    assert.equal(run.code, 3, `${args.join(' ')}: ${run.stderr}`)
    assert.ok(run.stderr.includes(`the cache ${afile} is not a directory`), run.stderr)
    assert.doesNotMatch(run.stderr, /internal error|cleared/)
  }
  const under = await runCli(['resolve', github, ...hostArgs, '--cache-dir', join(afile, 'cache')])
  assert.equal(under.code, 3, under.stderr)
  assert.match(under.stderr, /a part of its path is a file/)
  assert.equal(readFileSync(afile, 'utf8'), 'x\n')
})

test('cache clear on a cache it may not write is E_CACHE naming the path', async (t) => {
  // Root may write anywhere: as root, the cache is given to nobody and clear runs as root without its capabilities,
  // bound by the cache's modes as another user is, while it still reads this checkout wherever it is (in a private
  // folder, as `mktemp -d` makes one, nobody could not).
  const asRoot = process.getuid?.() === 0
  if (asRoot && !existsSync('/usr/bin/setpriv')) return t.skip('needs setpriv to drop root\'s capabilities')
  const cache = tempDir('evalferry-readonly-')
  t.after(() => {
    chmodSync(join(cache, 'github.com'), 0o755)
    rmSync(cache, { recursive: true, force: true })
  })
  const ok = await runCli(['resolve', github, '--cache-dir', cache, ...hostArgs])
  assert.equal(ok.code, 0, ok.stderr)
  // Readable by all, as a cache is; only github.com/ may not be written, even by its owner.
  chmodSync(cache, 0o755)
  chmodSync(join(cache, 'github.com'), 0o555)
  if (asRoot) for (const path of [cache, ...readdirSync(cache, { recursive: true }).map((p) => join(cache, String(p)))]) lchownSync(path, 65534, 65534)
  const command = [process.execPath, '--import', 'tsx', MAIN, 'cache', 'clear', '--cache-dir', cache]
  const run = asRoot
    ? spawnSync('setpriv', ['--bounding-set=-all', '--inh-caps=-all', '--', ...command], { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME }, encoding: 'utf8' })
    : spawnSync(command[0]!, command.slice(1), { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME }, encoding: 'utf8' })
  assert.equal(run.status, 3, run.stderr)
  assert.ok(run.stderr.includes(`evalferry: cannot clear the cache ${cache}: ${join(cache, 'github.com', 'acme')}`), run.stderr)
  assert.match(run.stderr, /permission denied/)
  assert.ok(existsSync(join(cache, 'github.com', 'acme', 'widgets', 'repo.json')))
})

test('a branch written with encoded slashes and an upper-case SHA resolve', async () => {
  const cache = fx.newCache()
  const repo = fx.repos[2]!
  const encoded = `https://bitbucket.org/${repo.path}/src/feature%2Fx%2Fy/x/feature-only.txt`
  const upper = blobUrl(repo, repo.main.toUpperCase(), 'data/file-2.txt')
  const run = await runCli(['resolve', encoded, upper, '--cache-dir', cache, ...hostArgs, '--json'])
  assert.equal(run.code, 0, run.stderr)
  const [a, b] = (JSON.parse(run.stdout) as { entries: { ref: string; commit: string; path: string; local_path: string }[] }).entries
  assert.deepEqual([a!.ref, a!.commit, a!.path], ['feature/x/y', repo.feature, 'x/feature-only.txt'])
  assert.equal(readFileSync(a!.local_path, 'utf8'), 'only on feature/x/y\n')
  assert.equal(b!.commit, repo.main)
  assert.deepEqual(readFileSync(b!.local_path), repo.files.get('data/file-2.txt'))
})
