import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { prefetchUrls } from '../../src/resolver/index.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'

let fx: Fixture
before(async () => {
  fx = await startFixture({}, 5)
})
after(() => fx.cleanup())

/** Three files per repository, at the full SHA: no ref listing needed. */
const urls = () => fx.repos.flatMap((r) => ['data/file-1.txt', 'docs/with space.md', 'bin/blob.bin'].map((p) => ({ url: blobUrl(r, r.main, p), repo: r, path: p })))

test('few files come through GitHub raw, GitLab files API and Bitbucket src API: no git request for GitLab (its hashes vouch), only the trees for the others', async () => {
  fx.server.options.raw = 'serve'
  const start = fx.server.requests.length
  const result = await prefetchUrls(urls().map((u) => u.url), { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), env: { GITLAB_TOKEN: 'gl-token-123' } })
  for (const [i, u] of urls().entries()) assert.deepEqual(readFileSync(result.entries[i]!.local_path), u.repo.files.get(u.path), u.url)
  const seen = fx.server.requests.slice(start)
  assert.equal(seen.filter((r) => r.kind === 'git' && r.repository?.startsWith('gitlab.com/')).length, 0)
  // GitHub and Bitbucket declare no hash: one fetch of the commit's trees gives the blob ids to check against.
  for (const repo of [fx.repos[0]!, fx.repos[2]!]) assert.equal(fx.server.count(repo.repository, 'fetch'), 1, repo.repository)
  for (const repo of fx.repos) assert.equal(fx.server.count(repo.repository, 'raw'), 3, repo.repository)
  assert.ok(seen.some((r) => r.path.startsWith('/github.com/raw/acme/widgets/')))
  assert.ok(seen.some((r) => r.path.startsWith('/gitlab.com/api/v4/projects/group%2Fsubgroup%2Fproject/repository/files/')))
  assert.ok(seen.some((r) => r.path.startsWith('/bitbucket.org/!api/2.0/repositories/workspace/repo/src/')))
  // The token went to GitLab's API only, as its header.
  assert.ok(seen.filter((r) => r.repository?.startsWith('gitlab.com/')).every((r) => r.headers['private-token'] === 'gl-token-123'))
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
