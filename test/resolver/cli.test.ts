import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { read } from '../../src/read.ts'
import { runCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, sha256, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'

let fx: Fixture
let cache: string
let hostArgs: string[]
before(async () => {
  fx = await startFixture({}, 12)
  cache = fx.newCache()
  hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
})
after(() => fx.cleanup())

const urls = () =>
  fx.repos.flatMap((r) => [blobUrl(r, 'main', 'data/file-1.txt'), blobUrl(r, 'feature/x/y', 'docs/with space.md'), blobUrl(r, 'v1.0', 'bin/blob.bin'), ...Array.from({ length: 9 }, (_, i) => `${blobUrl(r, 'main', `data/file-${i + 2}.txt`)}#L1`)])

test('prefetch --manifest lists url, host, repository, ref, commit, path, local path, bytes and hash', async () => {
  const dataset = join(fx.dir, 'cases.yaml')
  writeEvalcaseDataset(dataset, urls())
  const manifest = join(fx.dir, 'manifest.json')
  const run = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--manifest', manifest, '--concurrency', '2'])
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stderr, /36 file\(s\) from 3 repositories: 36 fetched, 0 already cached/)
  const { entries } = JSON.parse(readFileSync(manifest, 'utf8')) as { entries: Record<string, unknown>[] }
  assert.equal(entries.length, 36)
  assert.deepEqual(Object.keys(entries[0]!), ['url', 'host', 'repository', 'ref', 'commit', 'path', 'local_path', 'bytes', 'sha256'])
  const gitlab = entries.find((e) => e.url === blobUrl(fx.repos[1]!, 'feature/x/y', 'docs/with space.md'))!
  assert.deepEqual(
    { host: gitlab.host, repository: gitlab.repository, ref: gitlab.ref, commit: gitlab.commit, path: gitlab.path },
    { host: 'gitlab.com', repository: 'group/subgroup/project', ref: 'feature/x/y', commit: fx.repos[1]!.feature, path: 'docs/with space.md' },
  )
  const content = fx.repos[1]!.featureFiles.get('docs/with space.md')!
  assert.equal(gitlab.bytes, content.length)
  assert.equal(gitlab.sha256, sha256(content))
  assert.deepEqual(readFileSync(gitlab.local_path as string), content)
})

test('prefetch --rewrite writes the dataset pointing at cached files; --embed puts text inline', async () => {
  const dataset = join(fx.dir, 'cases.yaml')
  const rewritten = join(fx.dir, 'rewritten.yaml')
  const embedded = join(fx.dir, 'embedded.yaml')
  const before = fx.server.requests.length
  const a = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--rewrite', rewritten, '--quiet'])
  assert.equal(a.code, 0, a.stderr)
  assert.equal(a.stderr, '')
  assert.equal(fx.server.requests.length, before, 'warm cache')
  const cases = []
  for await (const c of read(rewritten, { from: 'evalcase' })) cases.push(c)
  const blocks = cases[0]!.input![0]!.content as { type: string; value: string }[]
  assert.equal(blocks[1]!.type, 'file')
  assert.ok(blocks[1]!.value.startsWith(cache), blocks[1]!.value)
  assert.equal(readFileSync(blocks[1]!.value, 'utf8'), fx.repos[0]!.files.get('data/file-1.txt')!.toString())
  assert.ok((cases[0]!.input![1]!.content as string).startsWith(cache))

  const b = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--rewrite', embedded, '--embed', '--quiet'])
  assert.equal(b.code, 0, b.stderr)
  const inline = []
  for await (const c of read(embedded, { from: 'evalcase' })) inline.push(c)
  const first = inline[0]!.input![0]!.content as { type: string; value: string }[]
  assert.deepEqual(first[1], { type: 'text', value: fx.repos[0]!.files.get('data/file-1.txt')!.toString() })
  // A `#L1` anchor embeds that line (file-4 is a message whose whole content was its URL); a binary file keeps its local path.
  const strings = inline.flatMap((c) => c.input!).map((m) => m.content).filter((c): c is string => typeof c === 'string')
  assert.ok(strings.includes('github.com/acme/widgets file 4'), strings.join(' | '))
  assert.ok(strings.some((c) => c.startsWith(cache) && c.endsWith('bin/blob.bin')))
})

test('resolve prints local paths; --json prints entries', async () => {
  const url = blobUrl(fx.repos[2]!, 'main', 'data/file-3.txt')
  const plain = await runCli(['resolve', url, '--cache-dir', cache, ...hostArgs])
  assert.equal(plain.code, 0, plain.stderr)
  assert.equal(readFileSync(plain.stdout.trim()).toString(), fx.repos[2]!.files.get('data/file-3.txt')!.toString())
  const other = blobUrl(fx.repos[2]!, 'main', 'data/file-4.txt')
  const repeated = await runCli(['resolve', url, other, url, '--cache-dir', cache, ...hostArgs])
  assert.equal(repeated.code, 0, repeated.stderr)
  const lines = repeated.stdout.trimEnd().split('\n')
  assert.equal(lines.length, 3)
  assert.equal(lines[0], plain.stdout.trim())
  assert.equal(lines[2], lines[0])
  assert.equal(readFileSync(lines[1]!).toString(), fx.repos[2]!.files.get('data/file-4.txt')!.toString())
  const json = await runCli(['resolve', url, '--cache-dir', cache, ...hostArgs, '--json'])
  assert.equal((JSON.parse(json.stdout) as { entries: { commit: string }[] }).entries[0]!.commit, fx.repos[2]!.main)
  const bad = await runCli(['resolve', 'https://github.com/acme/widgets/blob/main/../x', '--cache-dir', cache, ...hostArgs])
  assert.equal(bad.code, 3)
  assert.match(bad.stderr, /refused/)
  // A page of a known host that names no file: the message gives the shape of a file's URL there.
  const tree = 'https://github.com/acme/widgets/tree/main/data'
  const directory = await runCli(['resolve', tree, '--cache-dir', cache, ...hostArgs])
  assert.equal(directory.code, 2)
  assert.equal(directory.stderr, `evalferry: ${tree}: not a blob URL naming a file on a known host (a file's URL on github.com is /<owner>/<repo>/blob/<ref>/<path>; a directory's or a repository's page names no file)\n`)
  const unknown = await runCli(['resolve', 'https://code.corp.io/a/b/blob/main/x', '--cache-dir', cache, ...hostArgs])
  assert.match(unknown.stderr, /a self-hosted one needs --host <name>=<base-url>/)
})

test('prefetch warns of file URLs on a host no --host declares, which it cannot fetch; --json lists them; declared, they are fetched', async () => {
  const dataset = join(fx.dir, 'undeclared.yaml')
  const good = blobUrl(fx.repos[0]!, 'main', 'data/file-1.txt')
  const ghe = ['https://ghe.corp.example/team/app/blob/main/a.md', 'https://ghe.corp.example/team/app/blob/main/b.md#L2']
  writeEvalcaseDataset(dataset, [good, ...ghe])
  const run = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs])
  assert.equal(run.code, 0, run.stderr)
  assert.ok(
    run.stderr.includes(`evalferry: warning: 2 values are file URLs (the first ${ghe[0]}) of ghe.corp.example, which is not a declared host: not fetched; declare it with --host ghe.corp.example=<base-url>\n`),
    run.stderr,
  )
  assert.match(run.stderr, /^1 file\(s\) from 1 repository/m)
  const json = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--json'])
  assert.equal(json.code, 0, json.stderr)
  assert.deepEqual((JSON.parse(json.stdout) as { undeclared: unknown }).undeclared, [{ host: 'ghe.corp.example', references: 2, first: ghe[0] }])
  const quiet = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--quiet'])
  assert.equal(quiet.stderr, '')
  // Declared, the host's URLs are references: fetched (here they fail, the host being unreachable), not warned of.
  const declared = await runCli(['prefetch', dataset, '--cache-dir', fx.newCache(), ...hostArgs, '--host', 'ghe.corp.example=http://127.0.0.1:9', '--timeout', '5'])
  assert.equal(declared.code, 3, declared.stderr)
  assert.doesNotMatch(declared.stderr, /not a declared host/)
  assert.ok(declared.stderr.includes(ghe[0]!), declared.stderr)
})

test('cache dir, list, prune and clear', async () => {
  const dir = await runCli(['cache', 'dir', '--cache-dir', cache])
  assert.equal(dir.stdout.trim(), cache)
  const fromEnv = await runCli(['cache', 'dir'], { EVALFERRY_CACHE_DIR: cache })
  assert.equal(fromEnv.stdout.trim(), cache)
  const list = await runCli(['cache', 'list', '--cache-dir', cache, '--json'])
  const { repositories } = JSON.parse(list.stdout) as { repositories: { host: string; repository: string; commits: { commit: string; files: number }[] }[] }
  assert.deepEqual(repositories.map((r) => `${r.host}/${r.repository}`), ['bitbucket.org/workspace/repo', 'github.com/acme/widgets', 'gitlab.com/group/subgroup/project'])
  const github = repositories[1]!
  assert.deepEqual(github.commits.map((c) => c.commit).sort(), [fx.repos[0]!.main, fx.repos[0]!.feature].sort())
  const text = await runCli(['cache', 'list', '--cache-dir', cache])
  assert.match(text.stdout, /github\.com\/acme\/widgets {2}2 commit\(s\)/)
  const keep = await runCli(['cache', 'prune', '--older-than', '30d', '--cache-dir', cache, '--json'])
  assert.equal((JSON.parse(keep.stdout) as { removed: unknown[] }).removed.length, 0)
  await new Promise((r) => setTimeout(r, 1100))
  const before = (JSON.parse((await runCli(['cache', 'list', '--cache-dir', cache, '--json'])).stdout) as { repositories: { mirror_bytes: number; commits: { bytes: number }[] }[] }).repositories
  const prune = await runCli(['cache', 'prune', '--older-than', '1s', '--cache-dir', cache, '--json'])
  const pruned = JSON.parse(prune.stdout) as { removed: unknown[]; mirrors: { bytes: number }[]; bytes: number }
  assert.equal(pruned.removed.length, 6)
  // The bytes freed count the mirrors removed with the commits, as the listing counted them.
  assert.deepEqual(pruned.mirrors.map((m) => m.bytes).sort(), before.map((r) => r.mirror_bytes).filter((b) => b > 0).sort())
  assert.equal(pruned.bytes, before.reduce((sum, r) => sum + r.mirror_bytes + r.commits.reduce((s, c) => s + c.bytes, 0), 0))
  assert.ok(!existsSync(join(cache, 'github.com', 'acme', 'widgets')))
  const bad = await runCli(['cache', 'prune', '--older-than', 'soon', '--cache-dir', cache])
  assert.equal(bad.code, 2)
  const clear = await runCli(['cache', 'clear', '--cache-dir', cache])
  assert.equal(clear.code, 0, clear.stderr)
  const refused = await runCli(['cache', 'clear', '--cache-dir', fx.dir])
  assert.equal(refused.code, 3)
  assert.match(refused.stderr, /does not look like an evalferry cache/)
  // Listing what is no cache, or none yet, says so rather than that the cache is empty.
  const notCache = await runCli(['cache', 'list', '--cache-dir', fx.dir])
  assert.deepEqual([notCache.code, notCache.stdout, notCache.stderr], [0, '', `${fx.dir} is not an evalferry cache (it has no CACHEDIR.TAG): nothing listed\n`])
  const none = await runCli(['cache', 'list', '--cache-dir', join(fx.dir, 'no-cache-here')])
  assert.equal(none.stderr, `no cache at ${join(fx.dir, 'no-cache-here')} yet\n`)
  const emptied = await runCli(['cache', 'list', '--cache-dir', cache])
  assert.equal(emptied.stderr, `the cache at ${cache} is empty\n`)
})

test('the prefetch summary counts files: URLs naming one file (line anchors, a raw form) count once, and it says how many URLs there were', async () => {
  const dataset = join(fx.dir, 'one-file.yaml')
  const url = blobUrl(fx.repos[0]!, 'main', 'data/file-3.txt')
  writeEvalcaseDataset(dataset, [url, `${url}#L1`, url.replace('/blob/', '/raw/')])
  const run = await runCli(['prefetch', dataset, '--cache-dir', fx.newCache(), ...hostArgs])
  assert.equal(run.code, 0, run.stderr)
  assert.equal(run.stderr.trim().split('\n').at(-1), '1 file(s) from 1 repository: 1 fetched, 0 already cached (named by 3 URLs)')
})
