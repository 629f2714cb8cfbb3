/**
 * Self-hosted instances served under a path: GitLab with a relative URL root, Bitbucket Server under a
 * context path. The loopback server holds their repositories below that path, so git, the GitLab files
 * API and Bitbucket Server's raw REST endpoint are only found there; the dataset URLs carry the path
 * before the repository, as the instances' pages do.
 */

import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { prefetchUrls } from '../../src/resolver/index.ts'
import { runCli } from '../helpers/cli.ts'
import { type GitServer, startGitServer } from '../helpers/git-server.ts'
import { createRepo } from '../helpers/repos.ts'
import { tempDir } from '../helpers/temp.ts'

let dir: string
let server: GitServer
let caches = 0
const newCache = (): string => join(dir, `cache-${caches++}`)

// GitLab at https://git.corp.io/gitlab, Bitbucket Server at https://bitbucket.corp.io/tools/bitbucket.
const FILES = { 'a.md': '# a\n', 'docs/b c.txt': 'bee see\n' }
let gitlab: ReturnType<typeof createRepo>
let bitbucket: ReturnType<typeof createRepo>
let hosts: string[]

before(async () => {
  dir = tempDir('evalferry-prefix-')
  const root = join(dir, 'repos')
  gitlab = createRepo(root, 'gitlab', 'group/sub/project', FILES)
  // Bitbucket Server clones at <context path>/scm/<project key, lower case>/<slug>.git.
  bitbucket = createRepo(root, 'tools/bitbucket/scm', 'prj/repo', FILES)
  server = await startGitServer(root)
  hosts = [`git.corp.io=${server.url}/gitlab,type=gitlab`, `bitbucket.corp.io=${server.url}/tools/bitbucket,type=bitbucket-server`]
})
after(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

const gitlabUrl = (ref: string, file: string): string => `https://git.corp.io/gitlab/group/sub/project/-/blob/${ref}/${file.split('/').map(encodeURIComponent).join('/')}#L1`
const bitbucketUrl = (ref: string, file: string): string =>
  `https://bitbucket.corp.io/tools/bitbucket/projects/PRJ/repos/repo/browse/${file.split('/').map(encodeURIComponent).join('/')}?at=${encodeURIComponent(ref)}`

for (const via of ['git', 'the single-file API'] as const) {
  test(`GitLab under /gitlab and Bitbucket Server under /tools/bitbucket: the path is no part of the repository, and ${via} is asked below it`, async () => {
    const cache = newCache()
    const since = server.requests.length
    const urls = [gitlabUrl('main', 'a.md'), gitlabUrl('main', 'docs/b c.txt'), bitbucketUrl('refs/heads/main', 'a.md'), bitbucketUrl('main', 'docs/b c.txt')]
    const result = await prefetchUrls(urls, { cacheDir: cache, hosts, env: {}, rawFileLimit: via === 'git' ? 0 : 8 })
    assert.deepEqual(
      result.entries.map((e) => [e.url, e.host, e.repository, e.ref, e.commit, e.path]),
      [
        [urls[0], 'git.corp.io', 'group/sub/project', 'main', gitlab.main, 'a.md'],
        [urls[1], 'git.corp.io', 'group/sub/project', 'main', gitlab.main, 'docs/b c.txt'],
        [urls[2], 'bitbucket.corp.io', 'PRJ/repo', 'refs/heads/main', bitbucket.main, 'a.md'],
        [urls[3], 'bitbucket.corp.io', 'PRJ/repo', 'main', bitbucket.main, 'docs/b c.txt'],
      ],
    )
    for (const entry of result.entries) assert.equal(readFileSync(entry.local_path, 'utf8'), FILES[entry.path as keyof typeof FILES], entry.url)
    assert.ok(result.entries[0]!.local_path.startsWith(join(cache, 'git.corp.io', 'group', 'sub', 'project', 'commits', gitlab.main)))
    assert.ok(result.entries[2]!.local_path.startsWith(join(cache, 'bitbucket.corp.io', 'PRJ', 'repo', 'commits', bitbucket.main)))

    const seen = server.requests.slice(since)
    assert.deepEqual(seen.filter((r) => r.status !== 200), [], 'every request found its repository')
    // Git was asked at the clone URLs under the path: one ref listing each.
    const listings = seen.filter((r) => r.command === 'ls-refs').map((r) => r.path)
    assert.deepEqual(listings.sort(), ['/gitlab/group/sub/project.git/git-upload-pack', '/tools/bitbucket/scm/prj/repo.git/git-upload-pack'])
    const raw = seen.filter((r) => r.kind === 'raw').map((r) => `${r.path}?${r.query}`).sort()
    if (via === 'git') assert.deepEqual(raw, [])
    else {
      assert.deepEqual(raw, [
        `/gitlab/api/v4/projects/group%2Fsub%2Fproject/repository/files/a.md/raw?ref=${gitlab.main}`,
        `/gitlab/api/v4/projects/group%2Fsub%2Fproject/repository/files/docs%2Fb%20c.txt/raw?ref=${gitlab.main}`,
        `/tools/bitbucket/rest/api/1.0/projects/PRJ/repos/repo/raw/a.md?at=${bitbucket.main}`,
        `/tools/bitbucket/rest/api/1.0/projects/PRJ/repos/repo/raw/docs/b%20c.txt?at=${bitbucket.main}`,
      ])
    }
  })
}

test('evalferry resolve takes both from --host <name>=<base-url with the path>', { timeout: 60_000 }, async () => {
  const urls = [gitlabUrl(gitlab.main, 'docs/b c.txt'), bitbucketUrl(bitbucket.main, 'a.md')]
  const run = await runCli(['resolve', ...urls, '--cache-dir', newCache(), ...hosts.flatMap((h) => ['--host', h]), '--json'])
  assert.equal(run.code, 0, run.stderr)
  const { entries } = JSON.parse(run.stdout) as { entries: { host: string; repository: string; path: string; local_path: string }[] }
  assert.deepEqual(
    entries.map((e) => [e.host, e.repository, e.path, readFileSync(e.local_path, 'utf8')]),
    [
      ['git.corp.io', 'group/sub/project', 'docs/b c.txt', FILES['docs/b c.txt']],
      ['bitbucket.corp.io', 'PRJ/repo', 'a.md', FILES['a.md']],
    ],
  )
})
