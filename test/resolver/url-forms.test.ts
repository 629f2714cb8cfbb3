/**
 * Other spellings of a blob URL, against the loopback server: `www.` hosts, blame pages, and a URL
 * with whitespace around it (as spreadsheet cells have). Each is the file its blob URL names, in the
 * same cached repository; `--rewrite` keeps the whitespace and the line anchor around the local path.
 */

import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { EvalCase } from '../../src/model.ts'
import { read } from '../../src/read.ts'
import { prefetch, prefetchUrls } from '../../src/resolver/index.ts'
import { runCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { type FixtureRepo, blobUrl } from '../helpers/repos.ts'

let fx: Fixture
before(async () => {
  fx = await startFixture({}, 6)
})
after(() => fx.cleanup())

const options = (cacheDir: string) => ({ cacheDir, hosts: fx.server.hostSpecs(), env: {}, rawFileLimit: 0 })

const www = (url: string): string => url.replace('https://', 'https://www.')

/** The blame page of a file as each host writes it. */
function blameUrl(repo: FixtureRepo, ref: string, file: string): string {
  const blob = blobUrl(repo, ref, file)
  if (repo.host === 'github.com') return blob.replace('/blob/', '/blame/')
  if (repo.host === 'gitlab.com') return blob.replace('/-/blob/', '/-/blame/')
  return blob.replace('/src/', '/annotate/')
}

test('www. and bare spellings of one repository are one repository: one ref listing, one fetch, one cache directory', async () => {
  const cacheDir = fx.newCache()
  for (const repo of fx.repos) {
    const bare = blobUrl(repo, 'main', 'data/file-1.txt')
    const urls = [bare, www(bare), www(blobUrl(repo, 'main', 'data/file-2.txt'))]
    const result = await prefetchUrls(urls, options(cacheDir))
    assert.deepEqual(
      result.entries.map((e) => [e.url, e.host, e.repository, e.commit, e.path]),
      [
        [urls[0], repo.host, repo.path, repo.main, 'data/file-1.txt'],
        [urls[1], repo.host, repo.path, repo.main, 'data/file-1.txt'],
        [urls[2], repo.host, repo.path, repo.main, 'data/file-2.txt'],
      ],
      repo.repository,
    )
    assert.equal(result.entries[1]!.local_path, result.entries[0]!.local_path)
    assert.deepEqual(readFileSync(result.entries[1]!.local_path), repo.files.get('data/file-1.txt'))
    assert.deepEqual(readFileSync(result.entries[2]!.local_path), repo.files.get('data/file-2.txt'))
    // One `ls-refs`, and one fetch of the commit (its trees, then the blobs in one batch).
    assert.equal(fx.server.count(repo.repository, 'ls-refs'), 1, repo.repository)
    assert.equal(fx.server.count(repo.repository, 'fetch'), 2, repo.repository)
  }
  assert.deepEqual(readdirSync(cacheDir).sort(), ['CACHEDIR.TAG', 'bitbucket.org', 'github.com', 'gitlab.com'])
})

test('blame pages (GitHub /blame/, GitLab /-/blame/, Bitbucket /annotate/) give the file of the blob page', async () => {
  const cacheDir = fx.newCache()
  for (const repo of fx.repos) {
    const blame = `${blameUrl(repo, 'feature/x/y', 'docs/with space.md')}#L1`
    const blob = blobUrl(repo, 'feature/x/y', 'docs/with space.md')
    const result = await prefetchUrls([blame, blob], options(cacheDir))
    const [fromBlame, fromBlob] = result.entries
    assert.deepEqual([fromBlame!.url, fromBlame!.ref, fromBlame!.commit, fromBlame!.path], [blame, 'feature/x/y', repo.feature, 'docs/with space.md'], repo.repository)
    assert.equal(fromBlame!.local_path, fromBlob!.local_path)
    assert.deepEqual(readFileSync(fromBlame!.local_path), repo.featureFiles.get('docs/with space.md'))
  }
})

test('a URL with whitespace around it is prefetched as the URL; one with whitespace inside is not a reference', async () => {
  const repo = fx.repos[0]!
  const url = blobUrl(repo, 'main', 'data/file-3.txt')
  const cases: EvalCase[] = [{ id: 'padded', input: [{ role: 'user', content: ` ${url}\n` }], context: [`${url.replace('file-3', 'file 3')}`, `\t${url}\r\n`] }]
  const result = await prefetch(cases, options(fx.newCache()))
  assert.deepEqual(
    result.entries.map((e) => [e.url, e.path]),
    [[url, 'data/file-3.txt']],
  )
  assert.deepEqual(readFileSync(result.entries[0]!.local_path), repo.files.get('data/file-3.txt'))
})

test('prefetch --rewrite keeps whitespace and line anchors around the local path, and gives a file block the path alone; --embed puts the lines in place of the whole value', async () => {
  const github = fx.repos[0]!
  const gitlab = fx.repos[1]!
  const cache = fx.newCache()
  const hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  // data/file-4.txt has five lines; file block one holds a www. URL, file block two a blame page, the message a padded URL with an anchor.
  const first = `  ${www(blobUrl(github, 'main', 'data/file-4.txt'))}#L2-L3\n`
  const second = `${blameUrl(gitlab, 'main', 'data/file-4.txt')}#L5`
  const third = `\t${blobUrl(github, 'main', 'data/file-4.txt')}#L4 `
  const dataset = join(fx.dir, 'padded.yaml')
  writeEvalcaseDataset(dataset, [first, second, third])

  const rewritten = join(fx.dir, 'padded-rewritten.yaml')
  const run = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--rewrite', rewritten, '--quiet'])
  assert.equal(run.code, 0, run.stderr)
  const local = (repo: FixtureRepo, file: string): string => join(cache, repo.repository, 'commits', repo.main, ...file.split('/'))
  const [pointed] = await casesIn(rewritten)
  assert.deepEqual(pointed!.input, [
    {
      role: 'user',
      content: [
        { type: 'text', value: 'read these' },
        // A file block's value is opened as a path: the path alone.
        { type: 'file', value: local(github, 'data/file-4.txt') },
        { type: 'file', value: local(gitlab, 'data/file-4.txt') },
      ],
    },
    { role: 'user', content: `\t${local(github, 'data/file-4.txt')}#L4 ` },
  ])

  const embedded = join(fx.dir, 'padded-embedded.yaml')
  const again = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--rewrite', embedded, '--embed', '--quiet'])
  assert.equal(again.code, 0, again.stderr)
  const [inline] = await casesIn(embedded)
  const line = (repo: FixtureRepo, n: number): string => repo.files.get('data/file-4.txt')!.toString().split('\n')[n - 1]!
  assert.deepEqual(inline!.input, [
    {
      role: 'user',
      content: [
        { type: 'text', value: 'read these' },
        { type: 'text', value: `${line(github, 2)}\n${line(github, 3)}` },
        { type: 'text', value: line(gitlab, 5) },
      ],
    },
    { role: 'user', content: line(github, 4) },
  ])
})

async function casesIn(file: string): Promise<EvalCase[]> {
  const cases: EvalCase[] = []
  for await (const c of read(file, { from: 'evalcase' })) cases.push(c)
  return cases
}
