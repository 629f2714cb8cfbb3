import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { PrefetchError, type PrefetchFailure, prefetchUrls } from '../../src/resolver/index.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'

let fx: Fixture
before(async () => {
  fx = await startFixture({}, 5)
})
after(() => fx.cleanup())

/** Three files per repository, at the full SHA: no ref listing needed. */
const urls = () => fx.repos.flatMap((r) => ['data/file-1.txt', 'docs/with space.md', 'bin/blob.bin'].map((p) => ({ url: blobUrl(r, r.main, p), repo: r, path: p })))

test('few files come through GitHub raw, GitLab files API and Bitbucket src API: git fetches only the trees, to check them against', async () => {
  fx.server.options.raw = 'serve'
  const start = fx.server.requests.length
  const result = await prefetchUrls(urls().map((u) => u.url), { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), env: { GITLAB_TOKEN: 'gl-token-123' } })
  for (const [i, u] of urls().entries()) assert.deepEqual(readFileSync(result.entries[i]!.local_path), u.repo.files.get(u.path), u.url)
  const seen = fx.server.requests.slice(start)
  // One fetch of the commit's trees gives the blob ids to check against, and tells files from symlinks
  // (whose text the APIs serve as if it were the file): GitLab's declared hashes cannot.
  for (const repo of fx.repos) assert.equal(fx.server.count(repo.repository, 'fetch'), 1, repo.repository)
  for (const repo of fx.repos) assert.equal(fx.server.count(repo.repository, 'raw'), 3, repo.repository)
  assert.ok(seen.some((r) => r.path.startsWith('/github.com/raw/acme/widgets/')))
  assert.ok(seen.some((r) => r.path.startsWith('/gitlab.com/api/v4/projects/group%2Fsubgroup%2Fproject/repository/files/')))
  assert.ok(seen.some((r) => r.path.startsWith('/bitbucket.org/!api/2.0/repositories/workspace/repo/src/')))
  // The token went to GitLab only: as its API's header, and to git as basic auth.
  const gitlabSeen = seen.filter((r) => r.repository?.startsWith('gitlab.com/'))
  assert.ok(gitlabSeen.filter((r) => r.kind === 'raw').every((r) => r.headers['private-token'] === 'gl-token-123'))
  assert.ok(gitlabSeen.filter((r) => r.kind === 'git').every((r) => r.headers.authorization === `Basic ${Buffer.from('oauth2:gl-token-123').toString('base64')}`))
  assert.ok(seen.filter((r) => !r.repository?.startsWith('gitlab.com/')).every((r) => r.headers['private-token'] === undefined && r.headers.authorization === undefined))
})

for (const status of [404, 500, 503] as const) {
  test(`git is the fallback when the single-file API answers ${status}`, async () => {
    fx.server.options.raw = status
    const start = fx.server.requests.length
    const result = await prefetchUrls(urls().map((u) => u.url), { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), env: {} })
    for (const [i, u] of urls().entries()) assert.deepEqual(readFileSync(result.entries[i]!.local_path), u.repo.files.get(u.path), u.url)
    const seen = fx.server.requests.slice(start)
    for (const repo of fx.repos) {
      assert.ok(seen.some((r) => r.repository === repo.repository && r.kind === 'raw' && r.status === status))
      assert.equal(seen.filter((r) => r.repository === repo.repository && r.command === 'fetch').length, 2, repo.repository)
    }
  })
}

/** The references that failed, URL to message, and the content of those that did not. */
async function outcome(urls: string[], options: Record<string, unknown>): Promise<{ failed: Map<string, string>; served: Map<string, Buffer> }> {
  const result = await prefetchUrls(urls, options).then(
    (r) => ({ result: r, failures: [] as PrefetchFailure[] }),
    (e: unknown) => {
      if (!(e instanceof PrefetchError)) throw e
      return { result: e.result, failures: e.failures }
    },
  )
  return {
    failed: new Map(result.failures.map((f) => [f.url, f.message])),
    served: new Map(result.result.entries.map((e) => [e.url, readFileSync(e.local_path)])),
  }
}

test('a symlink through the single-file API is what it is through git: one leaving the repository is refused, one inside is followed', async () => {
  fx.server.options.raw = 'serve'
  for (const repo of fx.repos) {
    const linkOut = blobUrl(repo, repo.main, 'link-out')
    const linkIn = blobUrl(repo, repo.main, 'link-in')
    const since = fx.server.requests.length
    // A cold cache with a full SHA: no tree in the mirror yet, so the single-file API is asked first.
    const raw = await outcome([linkOut, linkIn], { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), env: {} })
    assert.ok(fx.server.requests.slice(since).some((r) => r.repository === repo.repository && r.kind === 'raw' && r.status === 200), `${repo.repository}: the single-file API answered`)
    const git = await outcome([linkOut, linkIn], { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), env: {}, rawFileLimit: 0 })
    assert.deepEqual([...raw.failed], [[linkOut, `${linkOut}: 'link-out' is a symlink to '../../../../etc/passwd', outside the repository`]], repo.repository)
    assert.deepEqual([...raw.failed], [...git.failed], repo.repository)
    assert.deepEqual([...raw.served], [[linkIn, repo.files.get('data/file-1.txt')]], repo.repository)
    assert.deepEqual([...raw.served], [...git.served], repo.repository)
  }
})

test('one file over the size limit on the single-file API fails only its own reference, named by the dataset URL', async () => {
  fx.server.options.raw = 'serve'
  for (const repo of fx.repos) {
    // data/file-4.txt is five lines (over 100 bytes), the others one or two.
    const [small1, huge, small2] = ['data/file-0.txt', 'data/file-4.txt', 'data/file-1.txt'].map((p) => blobUrl(repo, repo.main, p)) as [string, string, string]
    const size = repo.files.get('data/file-4.txt')!.length
    const since = fx.server.requests.length
    const { failed, served } = await outcome([small1, huge, small2], { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), env: {}, maxFileBytes: 100 })
    assert.ok(fx.server.requests.slice(since).some((r) => r.repository === repo.repository && r.kind === 'raw' && r.path.includes('file-4.txt')), `${repo.repository}: the single-file API was asked`)
    assert.deepEqual([...failed], [[huge, `${huge}: ${size} bytes is over the size limit of 100`]], repo.repository)
    assert.deepEqual([...served], [[small1, repo.files.get('data/file-0.txt')], [small2, repo.files.get('data/file-1.txt')]], repo.repository)
  }
})

test('an abort stops a single-file request the host holds, and its retries: the prefetch rejects with the reason, not a fallback to git', async () => {
  fx.server.options.raw = 'serve'
  const controller = new AbortController()
  const held = fx.server.waitFor((r) => r.kind === 'raw')
  // The host holds every request far longer than the test.
  fx.server.options.rawFault = () => ({ delayMs: 600_000 })
  try {
    const running = prefetchUrls([urls()[0]!.url], { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), timeoutSeconds: 600, signal: controller.signal })
    running.catch(() => {})
    await held
    const fetchesBefore = fx.server.requests.filter((r) => r.command === 'fetch').length
    controller.abort(new Error('stopped by the caller'))
    await assert.rejects(running, { message: 'stopped by the caller' })
    // git was not asked for the file instead.
    assert.equal(fx.server.requests.filter((r) => r.command === 'fetch').length, fetchesBefore)
  } finally {
    delete fx.server.options.rawFault
  }
})
