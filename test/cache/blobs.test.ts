/**
 * Reading blobs out of the mirror (`git cat-file --batch`): several blobs of various sizes in one
 * read, ones spanning many pipe chunks, one over the size limit in the middle, a missing one; and,
 * through a whole prefetch against the loopback server, a file over the limit refused by its URL
 * while the other files of its commit arrive intact.
 */

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { after, test } from 'node:test'
import { readBlobs } from '../../cache/git.ts'
import { repoLayout } from '../../cache/layout.ts'
import { PrefetchError, prefetchUrls } from '../../src/resolver/index.ts'
import { startGitServer } from '../helpers/git-server.ts'
import { tempDir } from '../helpers/temp.ts'

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
const MiB = 1024 * 1024

const dir = tempDir('evalferry-blobs-')
after(() => rmSync(dir, { recursive: true, force: true }))

/** `size` bytes that compress well yet differ from one offset to the next (a period of 251, a prime), so a misaligned read shows. */
function pattern(size: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(size)
  for (let i = 0; i < size; i++) out[i] = (i + seed) % 251
  return out
}

function git(cwd: string, args: string[], input?: Buffer): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 * MiB }).trim()
}

test('readBlobs: blobs of every size in one read, the one over the limit reported by its size and never held', async () => {
  const layout = repoLayout(join(dir, 'cache'), 'example.com', 'acme/sizes')
  mkdirSync(dirname(layout.git), { recursive: true })
  git(dirname(layout.git), ['init', '-q', '--bare', layout.git])
  const limit = 4 * MiB
  const blobs = {
    empty: Buffer.alloc(0),
    oneByte: Buffer.from('x'),
    // Content that reads like cat-file's own header and separator lines.
    lookalike: Buffer.from(`${'0'.repeat(40)} blob 5\nabcde\n\n${'1'.repeat(40)} missing\n`),
    belowChunk: randomBytes(65_535),
    chunk: randomBytes(65_536),
    aboveChunk: randomBytes(65_537),
    manyChunks: pattern(3 * MiB + 17, 1),
    atLimit: pattern(limit, 2),
    overByOne: pattern(limit + 1, 3),
    huge: pattern(24 * MiB, 4),
  }
  const oid = new Map(Object.entries(blobs).map(([name, content]) => [name, git(layout.git, ['hash-object', '-w', '--stdin'], content)]))
  const missing = 'f'.repeat(40)
  const order = ['empty', 'huge', 'oneByte', 'lookalike', 'missing', 'belowChunk', 'overByOne', 'manyChunks', 'atLimit', 'chunk', 'aboveChunk', 'empty']
  const oids = order.map((name) => (name === 'missing' ? missing : oid.get(name)!))

  // What Buffer.concat copies while reading: rejoining everything read so far on each chunk copies
  // the output over and over (quadratic) and holds a blob over the limit whole.
  const concat = Buffer.concat
  let joined = 0
  let largest = 0
  Buffer.concat = ((list: readonly Uint8Array[], totalLength?: number) => {
    const out = concat(list, totalLength)
    joined += out.length
    largest = Math.max(largest, out.length)
    return out
  }) as typeof Buffer.concat
  let results: Awaited<ReturnType<typeof readBlobs>>
  try {
    results = await readBlobs(layout, oids, limit, { timeoutMs: 30_000, env: GIT_ENV })
  } finally {
    Buffer.concat = concat
  }

  assert.deepEqual(results.map((r) => r.oid), oids)
  order.forEach((name, i) => {
    const result = results[i]!
    if (name === 'missing') assert.deepEqual(result, { oid: missing, missing: true })
    else if (name === 'huge' || name === 'overByOne') assert.deepEqual(result, { oid: oid.get(name), tooLarge: blobs[name].length }, name)
    else {
      assert.ok('content' in result, name)
      assert.ok(result.content.equals(blobs[name as keyof typeof blobs]), `${name}: ${result.content.length} bytes read of ${blobs[name as keyof typeof blobs].length}`)
    }
  })
  assert.ok(joined < 64 * 1024, `${joined} bytes copied by rejoining`)
  assert.ok(largest < limit, `a buffer of ${largest} bytes was built`)
})

test('a file over the size limit, through git, is refused by its URL; the other files of its commit arrive whole', { timeout: 60_000 }, async () => {
  const root = join(dir, 'repos')
  const work = join(dir, 'work')
  mkdirSync(work, { recursive: true })
  git(work, ['init', '-q', '-b', 'main'])
  const files = new Map<string, Buffer>([
    ['small.txt', Buffer.from('small\n')],
    ['big.bin', pattern(3 * MiB, 5)],
    ['too-big.bin', pattern(5 * MiB, 6)],
    ['empty.txt', Buffer.alloc(0)],
    ['after.bin', randomBytes(200_000)],
  ])
  for (const [path, content] of files) writeFileSync(join(work, path), content)
  git(work, ['add', '-A'])
  git(work, ['commit', '-q', '-m', 'sizes'])
  mkdirSync(join(root, 'github.com', 'acme'), { recursive: true })
  git(root, ['clone', '-q', '--bare', work, join(root, 'github.com', 'acme', 'sizes.git')])
  const server = await startGitServer(root)
  try {
    const url = (path: string): string => `https://github.com/acme/sizes/blob/main/${path}`
    const limit = 4 * MiB
    const options = { cacheDir: join(dir, 'prefetch-cache'), hosts: server.hostSpecs(), env: {}, rawFileLimit: 0, maxFileBytes: limit }
    const error = await prefetchUrls([...files.keys()].map(url), options).then(
      () => assert.fail('the file over the limit was accepted'),
      (e: unknown) => e,
    )
    assert.ok(error instanceof PrefetchError, String(error))
    assert.equal(error.code, 'E_UNSAFE')
    assert.deepEqual(error.failures.map((f) => f.url), [url('too-big.bin')])
    assert.equal(error.failures[0]!.message, `${url('too-big.bin')}: ${5 * MiB} bytes is over the size limit of ${limit}`)
    const fetched = new Map(error.result.entries.map((e) => [e.path, e]))
    assert.deepEqual([...fetched.keys()].sort(), ['after.bin', 'big.bin', 'empty.txt', 'small.txt'])
    for (const [path, entry] of fetched) {
      assert.equal(entry.bytes, files.get(path)!.length, path)
      assert.ok(readFileSync(entry.local_path).equals(files.get(path)!), path)
    }
  } finally {
    await server.close()
  }
})
