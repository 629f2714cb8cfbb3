/**
 * A file stored with Git LFS is committed as a pointer (`version https://git-lfs.github.com/spec/v1`,
 * `oid sha256:…`, `size N`): git and the raw-file APIs serve that pointer, not the content. Its
 * reference fails saying so (exit 3), through git and the single-file APIs alike, online and offline;
 * the other references still resolve.
 */

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { PrefetchError, prefetchUrls } from '../../src/resolver/index.ts'
import { runCli } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl, createRepo } from '../helpers/repos.ts'

const POINTER = 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 123456\n'
// Prose that begins like a pointer is not one: served as it is.
const NEAR_MISS = 'version https://git-lfs.github.com/spec/v1\nis the first line of every Git LFS pointer.\n'
const README = 'the weights are in model.bin\n'

let fx: Fixture
let repos: ReturnType<typeof createRepo>[]
before(async () => {
  fx = await startFixture({}, 1)
  repos = [
    ['github.com', 'acme/lfs-demo'],
    ['gitlab.com', 'group/subgroup/lfs-demo'],
    ['bitbucket.org', 'workspace/lfs-demo'],
  ].map(([host, path]) => createRepo(fx.server.root, host!, path!, { 'model.bin': POINTER, 'readme.txt': README, 'docs/lfs.txt': NEAR_MISS }))
})
after(() => fx.cleanup())

const urlsOf = (repo: (typeof repos)[number]) => ({
  pointer: blobUrl(repo, 'main', 'model.bin'),
  readme: blobUrl(repo, 'main', 'readme.txt'),
  nearMiss: blobUrl(repo, 'main', 'docs/lfs.txt'),
})
const lfsMessage = (url: string): string => `${url}: 'model.bin' is a Git LFS pointer: its content (123456 bytes) is stored with Git LFS, which is not fetched`

/** The references that failed (URL to message and code) and the content of those that did not. */
async function outcome(urls: string[], options: Record<string, unknown>): Promise<{ failed: [string, string][]; code?: string; exit?: number; served: [string, string][] }> {
  try {
    const result = await prefetchUrls(urls, options)
    return { failed: [], served: result.entries.map((e) => [e.url, readFileSync(e.local_path, 'utf8')]) }
  } catch (error) {
    if (!(error instanceof PrefetchError)) throw error
    return {
      failed: error.failures.map((f) => [f.url, f.message]),
      code: error.code,
      exit: error.exitCode,
      served: error.result.entries.map((e) => [e.url, readFileSync(e.local_path, 'utf8')]),
    }
  }
}

for (const path of ['git', 'raw'] as const) {
  test(`a Git LFS pointer fails only its own reference, saying its content is not fetched (${path === 'git' ? 'through git' : 'through the single-file APIs'}); offline too`, async () => {
    for (const repo of repos) {
      const { pointer, readme, nearMiss } = urlsOf(repo)
      const cacheDir = fx.newCache()
      const options = { cacheDir, hosts: fx.server.hostSpecs(), env: {}, ...(path === 'git' ? { rawFileLimit: 0 } : {}) }
      const since = fx.server.requests.length
      const online = await outcome([readme, pointer, nearMiss], options)
      assert.deepEqual(online, { failed: [[pointer, lfsMessage(pointer)]], code: 'E_FETCH', exit: 3, served: [[readme, README], [nearMiss, NEAR_MISS]] }, repo.repository)
      const raw = fx.server.requests.slice(since).filter((r) => r.repository === repo.repository && r.kind === 'raw')
      if (path === 'git') assert.equal(raw.length, 0, repo.repository)
      else {
        // The single-file API served the pointer (its blob id is the tree's), and git fetched only the commit's trees.
        assert.ok(raw.some((r) => r.path.endsWith('/model.bin') || r.path.includes('model.bin/raw')) && raw.every((r) => r.status === 200), repo.repository)
        assert.equal(fx.server.requests.slice(since).filter((r) => r.repository === repo.repository && r.command === 'fetch').length, 1, repo.repository)
      }
      // From the cache, without a request: the same answer.
      const before = fx.server.requests.length
      assert.deepEqual(await outcome([readme, pointer, nearMiss], { ...options, offline: true }), online, repo.repository)
      assert.equal(fx.server.requests.length, before)
    }
  })
}

test('resolve of a Git LFS pointer exits 3 naming it, and prints the paths of the others', async () => {
  const { pointer, readme } = urlsOf(repos[0]!)
  const hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  const run = await runCli(['resolve', pointer, readme, '--cache-dir', fx.newCache(), ...hostArgs, '--quiet'])
  assert.equal(run.code, 3, run.stderr)
  assert.equal(run.stderr, `evalferry: ${lfsMessage(pointer)}\n`)
  assert.equal(readFileSync(run.stdout.trim(), 'utf8'), README)
})
