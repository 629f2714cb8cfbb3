import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { FetchError } from '../../src/errors.ts'
import type { EvalCase } from '../../src/model.ts'
import { PrefetchError, prefetch, prefetchSummary, prefetchUrls, resolve } from '../../src/resolver/index.ts'
import { runCli } from '../helpers/cli.ts'
import { type Fixture, pushToBranch, sha256, startFixture, twoHundredReferences } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'
import { tempDir } from '../helpers/temp.ts'

let fx: Fixture
let cache: string

before(async () => {
  fx = await startFixture()
  cache = fx.newCache()
})
after(() => fx.cleanup())

const options = () => ({ cacheDir: cache, hosts: fx.server.hostSpecs(), env: {} })

/** The cases of a dataset: file blocks, and plain strings that are wholly a URL. */
function casesOf(urls: string[]): EvalCase[] {
  const cases: EvalCase[] = []
  for (let i = 0; i < urls.length; i += 4) {
    const [a, b, c, d] = urls.slice(i, i + 4)
    cases.push({
      id: `case-${i}`,
      input: [{ role: 'user', content: [{ type: 'text', value: 'read these' }, ...[a, b].filter((u) => u !== undefined).map((value) => ({ type: 'file' as const, value }))] }],
      ...(c ? { context: [c, 'not a url'] } : {}),
      ...(d ? { metadata: { fixture: d } } : {}),
    })
  }
  return cases
}

test('200 references in 3 repositories: the right bytes, one ref listing and one fetch per repository', async () => {
  const expected = twoHundredReferences(fx.repos)
  assert.equal(expected.length, 200)
  const result = await prefetch(casesOf(expected.map((e) => e.url)), options())
  assert.equal(result.entries.length, 200)
  assert.equal(result.fetched, 200)
  for (const [i, e] of expected.entries()) {
    const entry = result.entries[i]!
    assert.equal(entry.url, e.url)
    assert.equal(entry.commit, e.commit)
    assert.equal(entry.path, e.path)
    assert.equal(entry.host, e.repo.host)
    assert.equal(entry.repository, e.repo.path)
    assert.equal(entry.bytes, e.content.length)
    assert.equal(entry.sha256, sha256(e.content))
    assert.deepEqual(readFileSync(entry.local_path), e.content, e.url)
  }
  // Protocol v2 over smart HTTP: every git process opens with GET info/refs (capabilities only).
  // "One ref listing" is one `ls-refs` command; "one fetch" is the fetch of one commit, which is
  // two `fetch` commands: the commit with its trees (--filter=blob:none), then every blob needed
  // in a single batch, however many files point into the repository. No lazy per-file fetch.
  for (const repo of fx.repos) {
    assert.equal(fx.server.count(repo.repository, 'ls-refs'), 1, repo.repository)
    assert.equal(fx.server.count(repo.repository, 'fetch'), 2, repo.repository)
    assert.equal(fx.server.count(repo.repository, 'info-refs'), 3, repo.repository)
    assert.equal(fx.server.count(repo.repository, 'raw'), 0, repo.repository)
  }
  // The cache holds one directory per commit and nothing half-written.
  for (const repo of fx.repos) {
    const dir = `${cache}/${repo.repository}`
    assert.deepEqual(readdirSync(`${dir}/commits`), [repo.main])
    assert.deepEqual(readdirSync(`${dir}/tmp`), [])
    assert.ok(!existsSync(`${dir}/lock`))
  }
})

test('files at two commits of a repository cost one ref listing and one fetch, as files at one commit do; a commit the server lacks fails alone', async () => {
  const github = fx.repos[0]!
  const kinds = ['info-refs', 'ls-refs', 'fetch', 'raw'] as const
  const counts = (): number[] => kinds.map((kind) => fx.server.count(github.repository, kind))
  const atMain = ['data/file-1.txt', 'data/file-2.txt', 'docs/with space.md']
  const atFeature = ['data/file-0.txt', 'x/feature-only.txt']
  const urls = [...atMain.map((p) => blobUrl(github, 'main', p)), ...atFeature.map((p) => blobUrl(github, 'feature/x/y', p)), blobUrl(github, github.main, 'bin/blob.bin')]
  const before = counts()
  const result = await prefetchUrls(urls, { ...options(), cacheDir: fx.newCache(), rawFileLimit: 0 })
  assert.deepEqual(
    result.entries.map((e) => [e.commit, readFileSync(e.local_path)]),
    [...atMain.map((p) => [github.main, github.files.get(p)]), ...atFeature.map((p) => [github.feature, github.featureFiles.get(p)]), [github.main, github.files.get('bin/blob.bin')]],
  )
  // GET info/refs opens each of the three git processes: the listing, the trees of both commits, every blob.
  assert.deepEqual(counts().map((n, i) => n - before[i]!), [3, 1, 2, 0])

  // Through the single-file API, both commits' trees (to check what it sent) are still one request.
  const viaRaw = counts()
  const raw = await prefetchUrls([blobUrl(github, 'main', 'data/file-3.txt'), blobUrl(github, 'feature/x/y', 'x/feature-only.txt')], { ...options(), cacheDir: fx.newCache() })
  assert.deepEqual(raw.entries.map((e) => readFileSync(e.local_path)), [github.files.get('data/file-3.txt'), github.featureFiles.get('x/feature-only.txt')])
  assert.deepEqual(counts().map((n, i) => n - viaRaw[i]!), [2, 1, 1, 2])

  // A commit the server does not have refuses the request for both: each is asked alone, and only its URL fails.
  const absent = 'f'.repeat(40)
  const lost = blobUrl(github, absent, 'data/file-1.txt')
  await assert.rejects(prefetchUrls([lost, blobUrl(github, 'feature/x/y', 'data/file-0.txt')], { ...options(), cacheDir: fx.newCache(), rawFileLimit: 0 }), (e: unknown) => {
    assert.ok(e instanceof PrefetchError, String(e))
    assert.deepEqual(e.failures.map((f) => [f.url, e.code]), [[lost, 'E_REF']])
    assert.match(e.failures[0]!.message, new RegExp(`fetching commit ${absent}: the server does not have it`))
    assert.deepEqual(e.result.entries.map((entry) => [entry.commit, readFileSync(entry.local_path)]), [[github.feature, github.featureFiles.get('data/file-0.txt')]])
    return true
  })
})

test('a second prefetch over the warm cache makes no request at all', async () => {
  const seen = fx.server.requests.length
  const result = await prefetch(casesOf(twoHundredReferences(fx.repos).map((e) => e.url)), options())
  assert.equal(result.cached, 200)
  assert.equal(result.fetched, 0)
  assert.equal(fx.server.requests.length, seen)
})

test('refs with slashes, tags and names with spaces resolve; a file of another commit is one more fetch', async () => {
  const gitlab = fx.repos[1]!
  const url = blobUrl(gitlab, 'feature/x/y', 'data/file-0.txt')
  const spaced = blobUrl(gitlab, 'feature/x/y', 'docs/with space.md')
  const result = await prefetchUrls([url, spaced, blobUrl(gitlab, 'feature/x/y', 'x/feature-only.txt')], { ...options(), rawFileLimit: 0 })
  assert.equal(result.entries[0]!.commit, gitlab.feature)
  assert.equal(result.entries[0]!.ref, 'feature/x/y')
  assert.deepEqual(readFileSync(result.entries[0]!.local_path), gitlab.featureFiles.get('data/file-0.txt'))
  assert.deepEqual(readFileSync(result.entries[1]!.local_path), gitlab.featureFiles.get('docs/with space.md'))
  assert.ok(result.entries[1]!.local_path.endsWith('/docs/with space.md'))
  assert.equal(fx.server.count(gitlab.repository, 'ls-refs'), 1) // the listing was fresh: no second one
  assert.equal(fx.server.count(gitlab.repository, 'fetch'), 4)
})

test('an ambiguous ref and a missing ref fail naming the candidates', async () => {
  const github = fx.repos[0]!
  await assert.rejects(prefetchUrls([blobUrl(github, 'dup', 'data/file-1.txt')], options()), (e: unknown) => {
    assert.ok(e instanceof FetchError)
    assert.equal(e.code, 'E_REF')
    assert.match(e.message, /ambiguous.*refs\/heads\/dup.*refs\/tags\/dup|ambiguous.*refs\/tags\/dup.*refs\/heads\/dup/)
    return true
  })
  // GitLab's ?ref_type= says which of the two its page showed.
  const gitlab = fx.repos[1]!
  for (const kind of ['tags', 'heads']) {
    const url = `${blobUrl(gitlab, 'dup', 'data/file-1.txt')}?ref_type=${kind}`
    const result = await prefetchUrls([url], options())
    assert.deepEqual([result.entries[0]!.ref, result.entries[0]!.commit, result.entries[0]!.path], ['dup', gitlab.main, 'data/file-1.txt'], kind)
    assert.deepEqual(readFileSync(result.entries[0]!.local_path), gitlab.files.get('data/file-1.txt'))
  }
  await assert.rejects(prefetchUrls([blobUrl(github, 'no-such-branch', 'a.txt')], options()), (e: unknown) => {
    assert.ok(e instanceof FetchError)
    assert.equal(e.code, 'E_REF')
    assert.match(e.message, /no-such-branch\/a\.txt/)
    assert.match(e.message, /candidates: .*feature\/x\/y/)
    return true
  })
})

test('a host declared without type= fetches the GitLab pages its URLs show', async () => {
  const gitlab = fx.repos[1]!
  const base = fx.server.hostSpecs().find((spec) => spec.startsWith('gitlab.com='))!.split('=')[1]!.split(',')[0]!
  const url = `https://git.corp.io/${gitlab.path}/-/blob/main/data/file-1.txt`
  const result = await prefetchUrls([url], { ...options(), hosts: [`git.corp.io=${base}`] })
  assert.deepEqual([result.entries[0]!.host, result.entries[0]!.repository, result.entries[0]!.commit], ['git.corp.io', gitlab.path, gitlab.main])
  assert.deepEqual(readFileSync(result.entries[0]!.local_path), gitlab.files.get('data/file-1.txt'))
})

test('safety: .. and symlinks leaving the repository are refused, symlinks inside are followed, sizes are limited', async () => {
  const bitbucket = fx.repos[2]!
  const before = fx.server.requests.length
  await assert.rejects(prefetchUrls([`https://bitbucket.org/${bitbucket.path}/src/main/../../../etc/passwd`], options()), (e: unknown) => e instanceof FetchError && e.code === 'E_UNSAFE')
  assert.equal(fx.server.requests.length, before, 'refused before any request')
  await assert.rejects(prefetchUrls([blobUrl(bitbucket, 'main', 'link-out')], { ...options(), rawFileLimit: 0 }), (e: unknown) => e instanceof FetchError && e.code === 'E_UNSAFE' && /outside the repository/.test(e.message))
  const inside = await prefetchUrls([blobUrl(bitbucket, 'main', 'link-in')], { ...options(), rawFileLimit: 0 })
  assert.deepEqual(readFileSync(inside.entries[0]!.local_path), bitbucket.files.get('data/file-1.txt'))
  await assert.rejects(prefetchUrls([blobUrl(bitbucket, 'main', 'data/file-68.txt')], { ...options(), rawFileLimit: 0, maxFileBytes: 10 }), (e: unknown) => e instanceof FetchError && e.code === 'E_UNSAFE' && /size limit/.test(e.message))
  await assert.rejects(prefetchUrls([blobUrl(bitbucket, 'main', 'data')], { ...options(), rawFileLimit: 0 }), /is a directory/)
  await assert.rejects(prefetchUrls([blobUrl(bitbucket, 'main', 'nope.txt')], { ...options(), rawFileLimit: 0 }), /no file 'nope.txt'/)
  // Hooks of the mirror never run and none were installed.
  assert.ok(!existsSync(`${cache}/${bitbucket.repository}/git/hooks`))
})

test('a branch that moved is seen after the TTL or with refresh; before, the cached listing serves without a request', async () => {
  const github = fx.repos[0]!
  const url = blobUrl(github, 'feature/x/y', 'x/feature-only.txt')
  const first = await prefetchUrls([url], options())
  assert.equal(first.entries[0]!.commit, github.feature)
  const moved = pushToBranch(fx.server, github, 'feature/x/y', 'x/feature-only.txt', 'moved\n')
  const listings = fx.server.count(github.repository, 'ls-refs')
  const stillFresh = await prefetchUrls([url], options())
  assert.equal(stillFresh.entries[0]!.commit, github.feature)
  assert.equal(fx.server.count(github.repository, 'ls-refs'), listings)
  const refreshed = await prefetchUrls([url], { ...options(), refresh: true })
  assert.equal(refreshed.entries[0]!.commit, moved)
  assert.equal(readFileSync(refreshed.entries[0]!.local_path, 'utf8'), 'moved\n')
  assert.equal(fx.server.count(github.repository, 'ls-refs'), listings + 1)
  // A tag never expires: with a TTL of zero it still needs no listing.
  const tagged = await prefetchUrls([blobUrl(github, 'v1.0', 'data/file-3.txt')], { ...options(), refTtlSeconds: 0 })
  assert.equal(tagged.entries[0]!.commit, github.main)
  assert.equal(fx.server.count(github.repository, 'ls-refs'), listings + 1)
})

test('a file missing at a branch whose listing was cached lists the refs again once: a file pushed since is found, one still missing names the commit looked at', async () => {
  const gitlab = fx.repos[1]!
  const cacheDir = fx.newCache()
  const at = (path: string, ref = 'feature/x/y'): string => blobUrl(gitlab, ref, path)
  const listings = () => fx.server.count(gitlab.repository, 'ls-refs')
  assert.equal((await prefetchUrls([at('x/feature-only.txt')], { ...options(), cacheDir })).entries[0]!.commit, gitlab.feature)
  const moved = pushToBranch(fx.server, gitlab, 'feature/x/y', 'new.md', 'pushed since\n')

  // The cached listing is fresh, but the file is not at its commit: the refs are listed again.
  const before = listings()
  const pushed = await prefetchUrls([at('new.md')], { ...options(), cacheDir })
  assert.equal(pushed.entries[0]!.commit, moved)
  assert.equal(readFileSync(pushed.entries[0]!.local_path, 'utf8'), 'pushed since\n')
  assert.equal(listings(), before + 1)

  // Still missing after the new listing: the error names the commit the new listing gave.
  await assert.rejects(prefetchUrls([at('nope.md')], { ...options(), cacheDir }), (e: unknown) => {
    assert.ok(e instanceof FetchError)
    assert.equal(e.message, `${at('nope.md')}: no file 'nope.md' at commit ${moved}`)
    return true
  })
  assert.equal(listings(), before + 2)
  // A listing made in this run, a tag or a full SHA is not listed again.
  await assert.rejects(prefetchUrls([at('nope.md')], { ...options(), cacheDir, refresh: true }), /no file 'nope\.md' at commit/)
  assert.equal(listings(), before + 3)
  await assert.rejects(prefetchUrls([at('nope.md', 'v1.0')], { ...options(), cacheDir }), /no file 'nope\.md' at commit/)
  await assert.rejects(prefetchUrls([at('nope.md', moved)], { ...options(), cacheDir }), /no file 'nope\.md' at commit/)
  assert.equal(listings(), before + 3)
})

test('offline, a file prefetched at a branch is still served after another run listed the branch further on', async () => {
  const bitbucket = fx.repos[2]!
  const cacheDir = fx.newCache()
  const at = (path: string): string => blobUrl(bitbucket, 'feature/x/y', path)
  const first = await prefetchUrls([at('x/feature-only.txt')], { ...options(), cacheDir })
  assert.equal(first.entries[0]!.commit, bitbucket.feature)
  // The branch moves, and another dataset's run lists it again and fetches its file at the new commit.
  const moved = pushToBranch(fx.server, bitbucket, 'feature/x/y', 'later.md', 'pushed later\n')
  assert.equal((await prefetchUrls([at('later.md')], { ...options(), cacheDir, refresh: true })).entries[0]!.commit, moved)
  const listing = JSON.parse(readFileSync(join(cacheDir, bitbucket.repository, 'refs.json'), 'utf8')) as { refs: Record<string, string>; earlier: Record<string, string[]> }
  assert.equal(listing.refs['refs/heads/feature/x/y'], moved)
  assert.deepEqual(listing.earlier['refs/heads/feature/x/y'], [bitbucket.feature])

  const requests = fx.server.requests.length
  const notes: string[] = []
  const offline = await prefetchUrls([at('x/feature-only.txt'), at('later.md')], { ...options(), cacheDir, offline: true, onProgress: (m) => notes.push(m) })
  assert.deepEqual(offline.entries.map((e) => e.commit), [bitbucket.feature, moved])
  assert.deepEqual(readFileSync(offline.entries[0]!.local_path), bitbucket.featureFiles.get('x/feature-only.txt'))
  assert.deepEqual(notes, [
    `offline: feature/x/y of bitbucket.org/${bitbucket.path} was listed at ${moved.slice(0, 12)}, where 'x/feature-only.txt' is not cached; serving it as cached at ${bitbucket.feature.slice(0, 12)}, where the branch was before`,
  ])
  assert.equal(fx.server.requests.length, requests, 'no request offline')
  // A file cached at none of the branch's commits still fails, naming the commit listed last.
  await assert.rejects(
    prefetchUrls([at('data/file-1.txt')], { ...options(), cacheDir, offline: true }),
    (e: unknown) => e instanceof FetchError && e.code === 'E_OFFLINE' && e.message.includes(`'data/file-1.txt' at ${moved.slice(0, 12)} is not in the cache`),
  )
})

test('resolve gives the local path', async () => {
  const path = await resolve(blobUrl(fx.repos[0]!, 'main', 'data/file-5.txt'), options())
  assert.deepEqual(readFileSync(path), fx.repos[0]!.files.get('data/file-5.txt'))
})

test('URLs naming one file (line anchors, blob and raw forms, a branch and its commit) count as one file; the summary says how many URLs named them', async () => {
  const github = fx.repos[0]!
  const cacheDir = fx.newCache()
  const one = blobUrl(github, 'main', 'data/file-1.txt')
  const urls = [one, `${one}#L1`, blobUrl(github, 'main', 'data/file-1.txt', 'raw'), blobUrl(github, github.main, 'data/file-1.txt'), blobUrl(github, 'main', 'data/file-2.txt')]
  const first = await prefetchUrls(urls, { ...options(), cacheDir })
  assert.deepEqual(first.entries.map((e) => e.url), urls)
  assert.equal(new Set(first.entries.map((e) => e.local_path)).size, 2)
  assert.deepEqual([first.files, first.fetched, first.cached], [2, 2, 0])
  assert.equal(prefetchSummary(first), '2 file(s) from 1 repository: 2 fetched, 0 already cached (named by 5 URLs)')

  // Again, with one more file named twice: that one is fetched, the two others are cached.
  const three = blobUrl(github, 'main', 'data/file-3.txt')
  const second = await prefetchUrls([...urls, three, `${three}#L2`], { ...options(), cacheDir })
  assert.deepEqual([second.entries.length, second.files, second.fetched, second.cached], [7, 3, 1, 2])
  assert.equal(prefetchSummary(second), '3 file(s) from 1 repository: 1 fetched, 2 already cached (named by 7 URLs)')
})

test('one GitHub repository written in two cases is listed, fetched and cached once', async () => {
  const github = fx.repos[0]!
  const kinds = ['info-refs', 'ls-refs', 'fetch', 'raw'] as const
  const requests = async (urls: string[]) => {
    const before = kinds.map((kind) => fx.server.count(github.repository, kind))
    const cacheDir = fx.newCache()
    const result = await prefetchUrls(urls, { ...options(), cacheDir })
    return { result, cacheDir, made: kinds.map((kind, i) => fx.server.count(github.repository, kind) - before[i]!) }
  }
  const shouting = { ...github, path: github.path.toUpperCase() }
  const urls = [blobUrl(shouting, 'main', 'data/file-1.txt'), blobUrl(github, 'main', 'data/file-1.txt'), blobUrl(shouting, 'main', 'data/file-2.txt')]
  assert.notEqual(urls[0], urls[1])
  const { result, cacheDir, made } = await requests(urls)
  assert.deepEqual(result.entries.map((e) => e.url), urls)
  assert.deepEqual(result.entries.map((e) => e.repository), [github.path, github.path, github.path])
  assert.equal(result.entries[0]!.local_path, result.entries[1]!.local_path)
  assert.deepEqual(readFileSync(result.entries[0]!.local_path), github.files.get('data/file-1.txt'))
  assert.equal(prefetchSummary(result), '2 file(s) from 1 repository: 2 fetched, 0 already cached (named by 3 URLs)')
  assert.deepEqual(readdirSync(join(cacheDir, 'github.com')), [github.path.split('/')[0]])
  // The requests of the same files named in one spelling: one listing of refs, one fetch.
  const once = await requests([blobUrl(github, 'main', 'data/file-1.txt'), blobUrl(github, 'main', 'data/file-2.txt')])
  assert.deepEqual(made, once.made)
  assert.equal(made[1], 1)
})

test('a full SHA naming a tree, a blob or an annotated tag is E_REF for each URL written with it, saying it is not a commit; the commit beside it resolves', async () => {
  const gitlab = fx.repos[1]!
  const revParse = (what: string): string => execFileSync('git', ['--git-dir', join(fx.server.root, `${gitlab.repository}.git`), 'rev-parse', what], { encoding: 'utf8' }).trim()
  const tree = revParse('HEAD^{tree}')
  const blob = revParse('HEAD:data/file-1.txt')
  const tag = revParse('refs/tags/v1.0')
  assert.notEqual(tag, gitlab.main, 'v1.0 is an annotated tag')
  const not = (url: string, sha: string, what: string): [string, string] => [url, `${url}: '${sha}' is ${what} of gitlab.com/${gitlab.path}, not a commit; a SHA in a URL must name a commit`]
  // Through git alone, and with the single-file API first (which the stand-in answers for a tree or tag too).
  for (const rawFileLimit of [0, 8]) {
    const cacheDir = fx.newCache()
    const good = blobUrl(gitlab, gitlab.main, 'data/file-1.txt')
    const urls = [blobUrl(gitlab, tree, 'data/file-1.txt'), `${blobUrl(gitlab, tree, 'data/file-2.txt')}#L1`, blobUrl(gitlab, blob, 'data/file-1.txt'), blobUrl(gitlab, tag, 'data/file-1.txt'), good]
    await assert.rejects(prefetchUrls(urls, { ...options(), cacheDir, rawFileLimit }), (e: unknown) => {
      assert.ok(e instanceof PrefetchError, String(e))
      assert.equal(e.code, 'E_REF')
      assert.equal(e.exitCode, 3)
      assert.deepEqual(
        e.failures.map((f) => [f.url, f.message]),
        [not(urls[0]!, tree, 'a tree'), not(urls[1]!, tree, 'a tree'), not(urls[2]!, blob, 'a blob'), not(urls[3]!, tag, 'an annotated tag')],
        `rawFileLimit ${rawFileLimit}`,
      )
      assert.deepEqual(e.result.entries.map((entry) => [entry.url, entry.commit, readFileSync(entry.local_path, 'utf8')]), [[good, gitlab.main, gitlab.files.get('data/file-1.txt')!.toString()]])
      return true
    })
    // Nothing was cached under the ids that are no commits.
    assert.deepEqual(readdirSync(join(cacheDir, gitlab.repository, 'commits')), [gitlab.main])
  }
  // On the command line: exit code 3, the URL and the reason on stderr.
  const url = blobUrl(gitlab, tree, 'data/file-1.txt')
  const run = await runCli(['resolve', url, '--cache-dir', fx.newCache(), ...fx.server.hostSpecs().flatMap((h) => ['--host', h])])
  assert.equal(run.code, 3, run.stderr)
  // The failed URL's line is empty, as in a list of several.
  assert.equal(run.stdout, '\n')
  assert.ok(run.stderr.includes(not(url, tree, 'a tree')[1]), run.stderr)
})

test('a file whose name the cache\'s filesystem cannot hold fails alone, named by its URL; the other files of its commit arrive', async () => {
  const repo = fx.repos[0]!
  const long = `${'名'.repeat(90)}.txt`
  // Git holds the name (270 bytes) though no worktree here can: it goes in by the index alone.
  const work = tempDir('evalferry-long-name-')
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x', GIT_CONFIG_GLOBAL: '/dev/null' }
  const git = (args: string[], input?: string): string => execFileSync('git', args, { cwd: work, env, encoding: 'utf8', ...(input === undefined ? {} : { input }) }).trim()
  git(['clone', '-q', '--branch', 'main', join(fx.server.root, `${repo.repository}.git`), '.'])
  git(['update-index', '--add', '--cacheinfo', `100644,${git(['hash-object', '-w', '--stdin'], 'long\n')},${long}`])
  writeFileSync(join(work, 'short.txt'), 'short\n')
  git(['add', 'short.txt'])
  git(['commit', '-q', '-m', 'a long name'])
  git(['push', '-q', 'origin', 'main'])
  const commit = git(['rev-parse', 'HEAD'])
  rmSync(work, { recursive: true, force: true })
  const longUrl = blobUrl(repo, commit, long)
  const shortUrl = blobUrl(repo, commit, 'short.txt')
  await assert.rejects(prefetchUrls([longUrl, shortUrl], { ...options(), cacheDir: fx.newCache() }), (e: unknown) => {
    assert.ok(e instanceof PrefetchError)
    assert.deepEqual(e.result.entries.map((entry) => entry.url), [shortUrl])
    assert.deepEqual(e.failures.map((failure) => failure.url), [longUrl])
    assert.match(e.failures[0]!.message, /its name is too long for the cache's filesystem$/)
    return true
  })
})

test('offline (option or EVALFERRY_OFFLINE=1) serves every cached file with the server stopped; a miss names the URL', async () => {
  await fx.server.close()
  const urls = twoHundredReferences(fx.repos).map((e) => e.url)
  const result = await prefetch(casesOf(urls), { ...options(), offline: true })
  assert.equal(result.cached, 200)
  for (const value of ['1', 'true', 'yes', 'ON']) {
    const viaEnv = await prefetchUrls(urls.slice(0, 5), { ...options(), env: { EVALFERRY_OFFLINE: value } })
    assert.equal(viaEnv.entries.length, 5, value)
  }
  const missing = blobUrl(fx.repos[1]!, 'main', 'data/file-69.txt')
  await assert.rejects(prefetchUrls([missing], { ...options(), offline: true }), (e: unknown) => e instanceof FetchError && e.code === 'E_OFFLINE' && e.message.includes(missing))
  // A ref the cached listing lacks may have been pushed since: offline, the error says the listing is the cached one.
  const unlisted = blobUrl(fx.repos[1]!, 'pushed-since', 'a.txt')
  await assert.rejects(prefetchUrls([unlisted], { ...options(), offline: true }), (e: unknown) => e instanceof FetchError && e.code === 'E_OFFLINE' && /no branch or tag .* \(offline: the refs as listed into the cache at \d{4}-/.test(e.message))
  const neverListed = 'https://github.com/other/repo/blob/main/a.txt'
  await assert.rejects(prefetchUrls([neverListed], { ...options(), offline: true }), (e: unknown) => e instanceof FetchError && e.code === 'E_OFFLINE' && e.message.includes(neverListed))
  // Online with the host down, a file of the commit already cached is still given beside the error of the one that is not.
  const cachedUrl = urls.find((u) => u.startsWith(blobUrl(fx.repos[1]!, 'main', '')))!
  await assert.rejects(prefetchUrls([cachedUrl, missing], options()), (e: unknown) => {
    assert.ok(e instanceof PrefetchError)
    assert.deepEqual(e.result.entries.map((entry) => entry.url), [cachedUrl])
    assert.deepEqual(e.failures.map((failure) => failure.url), [missing])
    return true
  })
})
