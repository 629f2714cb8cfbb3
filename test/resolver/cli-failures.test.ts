/**
 * When some references fail, end to end against the loopback server: what is not a blob URL is a
 * usage error; the references that worked are still printed (paths, or --json with an errors list);
 * prefetch names the dataset file, the case and the field that hold a failing reference.
 */

import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { runCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'

let fx: Fixture
let hostArgs: string[]
before(async () => {
  fx = await startFixture({}, 3)
  hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
})
after(() => fx.cleanup())

interface Failure {
  url: string
  message: string
  location?: { file?: string; line?: number; record?: number; field?: string }
}
interface JsonOut {
  entries: { url: string; local_path: string }[]
  files: number
  fetched: number
  cached: number
  errors?: Failure[]
}

test('resolve of what is not a blob URL of a known host is a usage error (exit 2), with no request', async () => {
  const since = fx.server.requests.length
  for (const arg of ['not-a-url', 'https://example.com/some/page']) {
    const run = await runCli(['resolve', arg, '--cache-dir', fx.newCache(), ...hostArgs])
    assert.equal(run.code, 2, run.stderr)
    assert.ok(run.stderr.includes(`${arg}: not a blob URL`), run.stderr)
    assert.equal(run.stdout, '')
  }
  const mixed = await runCli(['resolve', blobUrl(fx.repos[0]!, 'main', 'data/file-1.txt'), 'not-a-url', '--cache-dir', fx.newCache(), ...hostArgs])
  assert.equal(mixed.code, 2, mixed.stderr)
  // A host declared by its name alone does not take URLs that write a port: the error says which name they need.
  const portless = fx.server.url.replace(/:\d+$/, '').replace('http://', '')
  const onPort = `${fx.server.url}/acme/widgets/blob/main/README.md`
  const declared = await runCli(['resolve', onPort, '--cache-dir', fx.newCache(), '--host', `${portless}=${fx.server.url}/github.com,type=github`])
  assert.equal(declared.code, 2, declared.stderr)
  const authority = fx.server.url.replace('http://', '')
  assert.ok(declared.stderr.includes(`a host is declared as ${portless}, but this URL's host is ${authority}: name the host as URLs write it, --host ${authority}=<base-url>`), declared.stderr)
  assert.equal(fx.server.requests.length, since)
})

test('resolve with one failing URL prints an empty line in its place, the others in order, and names the failure; --json adds an errors list', async () => {
  const [a, b] = [fx.repos[0]!, fx.repos[2]!]
  const good1 = blobUrl(a, 'main', 'data/file-1.txt')
  const missing = blobUrl(a, 'main', 'data/no-such-file.txt')
  const good2 = blobUrl(b, 'main', 'data/file-2.txt')
  const cache = fx.newCache()
  const plain = await runCli(['resolve', good1, missing, good2, '--cache-dir', cache, ...hostArgs])
  assert.equal(plain.code, 3, plain.stderr)
  // One line per URL given, so that a script pairs them with its arguments.
  const lines = plain.stdout.split('\n')
  assert.equal(lines.length, 4, plain.stdout)
  assert.ok(lines[0]!.endsWith(join('commits', a.main, 'data', 'file-1.txt')), lines[0])
  assert.equal(lines[1], '')
  assert.ok(lines[2]!.endsWith(join('commits', b.main, 'data', 'file-2.txt')), lines[2])
  assert.equal(lines[3], '')
  assert.ok(plain.stderr.includes(missing), plain.stderr)
  assert.ok(!plain.stderr.includes('internal error'))

  const json = await runCli(['resolve', good1, missing, good2, '--cache-dir', cache, ...hostArgs, '--json'])
  assert.equal(json.code, 3, json.stderr)
  const out = JSON.parse(json.stdout) as JsonOut
  assert.deepEqual(
    out.entries.map((e) => e.url),
    [good1, good2],
  )
  // The first run fetched both files: this one finds them cached.
  assert.deepEqual([out.files, out.fetched, out.cached], [2, 0, 2])
  assert.equal(out.errors?.length, 1)
  assert.equal(out.errors![0]!.url, missing)
  assert.match(out.errors![0]!.message, /no file 'data\/no-such-file\.txt'/)
})

test('prefetch names the dataset, the case and the field holding a failing reference; --json keeps the entries that worked', async () => {
  const repo = fx.repos[1]!
  const good = blobUrl(repo, 'main', 'data/file-0.txt')
  const missing = blobUrl(repo, 'main', 'data/absent.txt')
  const noRef = blobUrl(repo, 'no-such-branch', 'data/file-1.txt')
  const dataset = join(fx.dir, 'partial.yaml')
  // Case 1 holds good and missing as file blocks, case 2 holds noRef as a message's whole content (see writeEvalcaseDataset).
  writeEvalcaseDataset(dataset, [good, missing, blobUrl(repo, 'main', 'data/file-1.txt'), blobUrl(repo, 'main', 'data/file-2.txt'), noRef])
  const cache = fx.newCache()

  const single = join(fx.dir, 'single.yaml')
  writeEvalcaseDataset(single, [good, missing])
  const one = await runCli(['prefetch', single, '--cache-dir', cache, ...hostArgs])
  assert.equal(one.code, 3, one.stderr)
  // Named by the line its case starts on, as read() names it.
  assert.ok(one.stderr.includes(`evalferry: ${single}:2: input[0].content[2].value: ${missing}: `), one.stderr)

  const plain = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs])
  assert.equal(plain.code, 3, plain.stderr)
  assert.ok(plain.stderr.includes(`${dataset}:2: input[0].content[2].value: ${missing}: `), plain.stderr)
  assert.ok(plain.stderr.includes(`${dataset}:14: input[0].content[2].value: ${noRef}: `), plain.stderr)

  const json = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--json'])
  assert.equal(json.code, 3, json.stderr)
  const out = JSON.parse(json.stdout) as JsonOut
  assert.equal(out.entries.length, 3)
  assert.ok(out.entries.some((e) => e.url === good))
  assert.deepEqual(
    out.errors?.map((e) => [e.url, e.location]),
    [
      [missing, { file: dataset, line: 2, field: 'input[0].content[2].value' }],
      [noRef, { file: dataset, line: 14, field: 'input[0].content[2].value' }],
    ],
  )
})

test('a path a URL decodes to control characters reaches the terminal escaped: no escape sequence acts, no line is forged', async () => {
  const hostile = blobUrl(fx.repos[0]!, 'main', 'x\x1b]0;owned\x07\r\nevalferry: all good\n.txt')
  const run = await runCli(['resolve', hostile, '--cache-dir', fx.newCache(), ...hostArgs])
  assert.equal(run.code, 3, run.stderr)
  assert.doesNotMatch(run.stderr, /[\x00-\x08\x0b-\x1f\x7f]/)
  assert.deepEqual(run.stderr.split('\n').filter((l) => l.startsWith('evalferry:')).length, 1, run.stderr)
  assert.ok(run.stderr.includes(`no file "x\\u001b]0;owned\\u0007\\r\\nevalferry: all good\\n.txt" at commit ${fx.repos[0]!.main}`), run.stderr)
})
