/**
 * Faults of the network and of the cache, injected into the loopback servers:
 * - git (smart HTTP): a connection dropped in the middle of a response (the pack included), a server
 *   that does not answer (the timeout fires), garbage instead of git's answer, a 500; at each step
 *   (capabilities, ref listing, the commit's trees, the blob batch). Expected: the run fails with a
 *   FetchError naming the repository (exit 3 at the command line), in about the timeout when the
 *   server is silent; `commits/` holds no partial or wrong file; the next run succeeds.
 * - the single-file API: 429 is retried after its Retry-After (at most 3 times, waits over 10 s are
 *   not taken), 5xx is retried with back-off (at most 2 times), a silent or dropped answer is not
 *   retried; what still fails goes to git, and so do the commit's other files. Content whose hash is
 *   not the file's (against the tree's blob id, or the hashes GitLab declares) is refused and git
 *   brings the file.
 * - the cache: a cached file changed on disk no longer matches the sha256 recorded when it was
 *   written; it is fetched again, or refused offline.
 * - an interruption while git waits on a silent server: the run exits as the signal asks, leaving
 *   no lock; the next run fetches the files.
 */

import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { FetchError } from '../../src/errors.ts'
import { PrefetchError, prefetchUrls } from '../../src/resolver/index.ts'
import { runCli, startCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, sha256, startFixture } from '../helpers/fixture.ts'
import type { GitFault, LoggedRequest, RawFault } from '../helpers/git-server.ts'
import { type FixtureRepo, blobUrl } from '../helpers/repos.ts'

const TIMEOUT_S = 2

let fx: Fixture
let github: FixtureRepo
let gitlab: FixtureRepo
before(async () => {
  fx = await startFixture({}, 12)
  github = fx.repos[0]!
  gitlab = fx.repos[1]!
})
after(() => fx.cleanup())

const options = (cacheDir: string, extra: Record<string, unknown> = {}) => ({ cacheDir, hosts: fx.server.hostSpecs(), env: {}, timeoutSeconds: TIMEOUT_S, ...extra })
const files = (n: number) => Array.from({ length: n }, (_, i) => `data/file-${i}.txt`)

/** Every file under the repository's commits/ is whole and right, tmp/ is empty, no lock is left, and the mirror holds no git leftovers. */
function assertCleanCache(cache: string, repo: FixtureRepo): number {
  const dir = join(cache, repo.repository)
  let checked = 0
  for (const commit of existsSync(join(dir, 'commits')) ? readdirSync(join(dir, 'commits')) : []) {
    const contents = commit === repo.main ? repo.files : repo.featureFiles
    const walk = (sub: string): void => {
      for (const name of readdirSync(join(dir, 'commits', commit, sub))) {
        const rel = sub ? `${sub}/${name}` : name
        const path = join(dir, 'commits', commit, rel)
        if (statSync(path).isDirectory()) walk(rel)
        else {
          assert.deepEqual(readFileSync(path), contents.get(rel), `${path} holds the wrong bytes`)
          checked++
        }
      }
    }
    walk('')
  }
  if (existsSync(join(dir, 'tmp'))) assert.deepEqual(readdirSync(join(dir, 'tmp')), [], 'tmp/ is empty')
  assert.ok(!existsSync(join(dir, 'lock')), 'no lock left')
  if (existsSync(join(dir, 'git'))) assert.deepEqual(readdirSync(join(dir, 'git')).filter((n) => n.endsWith('.lock')), [])
  return checked
}

function assertServed(result: Awaited<ReturnType<typeof prefetchUrls>>, repo: FixtureRepo, paths: string[]): void {
  assert.equal(result.entries.length, paths.length)
  for (const [i, path] of paths.entries()) {
    assert.deepEqual(readFileSync(result.entries[i]!.local_path), repo.files.get(path), path)
    assert.equal(result.entries[i]!.sha256, sha256(repo.files.get(path)!))
  }
}

const injected = (since: number) => fx.server.requests.slice(since).filter((r) => r.fault !== undefined && r.fault !== 'cut-missed')

type Step = 'info-refs' | 'ls-refs' | 'fetch-commit' | 'fetch-blobs'
type Kind = 'cut' | 'delay' | 'garbage' | 'http-500'

/** A fault for the first request of `step` in a run that lists refs, fetches the commit, then its blobs. */
function gitFault(step: Step, kind: Kind, cleanBytes: Record<Step, number>): (r: LoggedRequest) => GitFault | undefined {
  let fetches = 0
  let done = false
  return (r) => {
    if (done) return undefined
    if (r.command === 'fetch') fetches++
    const at =
      step === 'info-refs' ? r.method === 'GET' : step === 'ls-refs' ? r.command === 'ls-refs' : step === 'fetch-commit' ? r.command === 'fetch' && fetches === 1 : r.command === 'fetch' && fetches === 2
    if (!at) return undefined
    done = true
    switch (kind) {
      case 'cut':
        return { cutAfter: Math.max(8, Math.floor(cleanBytes[step] / 2)) }
      case 'delay':
        return { delayMs: (TIMEOUT_S + 6) * 1000 }
      case 'garbage':
        return { garbage: Buffer.from('0032\u0001PACK\u0000\u0000\u0000\u0002garbage \u001b[31m bytes, not git\n'.repeat(3), 'latin1') }
      case 'http-500':
        return { status: 500 }
    }
  }
}

test('git faults at every network step: the run fails naming the repository, leaves no partial file, and the next run succeeds', { timeout: 120_000 }, async (t) => {
  const paths = files(10)
  const urls = paths.map((p) => blobUrl(github, 'main', p))
  // A clean run measures each step's answer, so that a cut falls in its middle (the pack's, for fetches).
  const start = fx.server.requests.length
  assertServed(await prefetchUrls(urls, options(fx.newCache(), { rawFileLimit: 0 })), github, paths)
  const clean = fx.server.requests.slice(start).filter((r) => r.repository === github.repository)
  const fetchBytes = clean.filter((r) => r.command === 'fetch').map((r) => r.bytes ?? 0)
  const cleanBytes: Record<Step, number> = {
    'info-refs': clean.find((r) => r.method === 'GET')?.bytes ?? 0,
    'ls-refs': clean.find((r) => r.command === 'ls-refs')?.bytes ?? 0,
    'fetch-commit': fetchBytes[0] ?? 0,
    'fetch-blobs': fetchBytes[1] ?? 0,
  }
  assert.ok(cleanBytes['fetch-blobs'] > 200, `the blob pack is ${cleanBytes['fetch-blobs']} bytes`)

  const counts: Record<string, number> = {}
  let runs = 0
  for (const step of ['info-refs', 'ls-refs', 'fetch-commit', 'fetch-blobs'] as Step[]) {
    for (const kind of ['cut', 'delay', 'garbage', 'http-500'] as Kind[]) {
      const cache = fx.newCache()
      const since = fx.server.requests.length
      fx.server.options.gitFault = gitFault(step, kind, cleanBytes)
      const began = Date.now()
      await assert.rejects(prefetchUrls(urls, options(cache, { rawFileLimit: 0 })), (e: unknown) => {
        assert.ok(e instanceof FetchError, `${step}/${kind}: ${String(e)}`)
        assert.equal(e.exitCode, 3)
        assert.match(e.message, /github\.com\/acme\/widgets: /, `${step}/${kind}: names the repository`)
        if (kind === 'delay') assert.match(e.message, /timed out \(no progress for 2 s\)/, `${step}/${kind}`)
        assert.ok(!e.message.includes('\u001b'), 'no control bytes from the server reach the message')
        return true
      })
      const ms = Date.now() - began
      assert.ok(ms < (TIMEOUT_S + 5) * 1000, `${step}/${kind} took ${ms} ms`)
      const faults = injected(since)
      assert.equal(faults.length, 1, `${step}/${kind}: one fault injected (${faults.map((f) => f.fault).join()})`)
      counts[`${step}/${kind}`] = faults.length
      assert.equal(assertCleanCache(cache, github), 0, `${step}/${kind}: nothing in commits/`)
      runs++

      // The next run, the server healthy again, repairs whatever the failed one left.
      delete fx.server.options.gitFault
      assertServed(await prefetchUrls(urls, options(cache, { rawFileLimit: 0 })), github, paths)
      assert.equal(assertCleanCache(cache, github), paths.length)
      runs++
    }
  }
  t.diagnostic(`git faults injected: ${Object.values(counts).reduce((a, b) => a + b, 0)} (${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}); ${runs} runs, every failed one followed by a successful one`)
})

test('at the command line a silent server fails the run with exit 3 within the timeout (EVALFERRY_TIMEOUT), naming URL and repository', { timeout: 60_000 }, async (t) => {
  const dataset = join(fx.dir, 'slow.yaml')
  const url = blobUrl(github, 'main', 'data/file-2.txt')
  writeEvalcaseDataset(dataset, [url])
  const hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  const since = fx.server.requests.length
  fx.server.options.gitFault = (r) => (r.command === 'ls-refs' ? { delayMs: 20_000 } : undefined)
  try {
    const run = await runCli(['prefetch', dataset, '--cache-dir', fx.newCache(), ...hostArgs], { EVALFERRY_TIMEOUT: String(TIMEOUT_S) }, 30_000)
    assert.equal(run.signal, null, 'no hang')
    assert.equal(run.code, 3, run.stderr)
    assert.match(run.stderr, /github\.com\/acme\/widgets: listing refs timed out/)
    assert.ok(run.stderr.includes(url), run.stderr)
    assert.ok(run.ms < 15_000, `${run.ms} ms`)
    const viaOption = await runCli(['resolve', url, '--timeout', '1', '--cache-dir', fx.newCache(), ...hostArgs], {}, 30_000)
    assert.equal(viaOption.code, 3, viaOption.stderr)
    assert.match(viaOption.stderr, /timed out \(no progress for 1 s\)/)
    t.diagnostic(`silent ref listings injected: ${injected(since).length}`)
  } finally {
    delete fx.server.options.gitFault
  }
})

test('prefetch and resolve interrupted while git waits on a silent server exit as the signal asks, leaving no lock and reporting no failure', { timeout: 90_000 }, async () => {
  const dataset = join(fx.dir, 'interrupted.yaml')
  const urls = [blobUrl(github, 'main', 'data/file-3.txt'), blobUrl(gitlab, 'main', 'data/file-4.txt')]
  writeEvalcaseDataset(dataset, urls)
  const hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  for (const command of [['prefetch', dataset], ['resolve', ...urls]]) {
    const cache = fx.newCache()
    const since = fx.server.requests.length
    fx.server.options.gitFault = (r) => (r.command === 'ls-refs' ? { delayMs: 20_000 } : undefined)
    try {
      const run = startCli([...command, '--cache-dir', cache, ...hostArgs], { EVALFERRY_TIMEOUT: '30' }, 30_000)
      // Both repositories are listing their refs, each under its lock, when the interruption comes.
      for (let waited = 0; fx.server.requests.slice(since).filter((r) => r.command === 'ls-refs').length < 2; waited += 20) {
        if (waited > 20_000) throw new Error(`${command[0]}: the ref listings never began: ${run.stderr()}`)
        await new Promise((r) => setTimeout(r, 20))
      }
      process.kill(run.pid, 'SIGINT')
      const result = await run.done
      assert.equal(result.signal, null, `${command[0]}: no hang`)
      assert.equal(result.code, 130, result.stderr)
      // git, stopped with the run, failed both references: that is the interruption, not a failure to tell.
      assert.deepEqual(
        result.stderr.split('\n').filter((line) => line.startsWith('evalferry:')),
        ['evalferry: interrupted (SIGINT); no file left unfinished'],
        result.stderr,
      )
      // The locks it held are gone with it: a waiter on another machine need not wait for them to go stale.
      assert.equal(assertCleanCache(cache, github), 0)
      assert.equal(assertCleanCache(cache, gitlab), 0)
    } finally {
      delete fx.server.options.gitFault
    }
    // The next run fetches both files.
    const next = await runCli([...command, '--cache-dir', cache, '--json', ...hostArgs], {}, 30_000)
    assert.equal(next.code, 0, next.stderr)
    const entries = (JSON.parse(next.stdout) as { entries: { url: string; local_path: string }[] }).entries
    assert.deepEqual(entries.map((e) => e.url).sort(), [...urls].sort())
    assert.deepEqual(readFileSync(entries.find((e) => e.url === urls[0])!.local_path), github.files.get('data/file-3.txt'))
    assert.equal(assertCleanCache(cache, github), 1)
    assert.equal(assertCleanCache(cache, gitlab), 1)
  }
})

interface RawCase {
  name: string
  /** The fault for the n-th (1-based) request for the first file; undefined serves it. */
  fault: (n: number) => RawFault | undefined
  /** Requests to the single-file API for the first file, and whether git was needed. */
  attempts: number
  git: boolean
  /** At least this long, for the waits Retry-After asks for. */
  minMs?: number
  maxMs?: number
}

const date = (s: number) => new Date(Date.now() + s * 1000).toUTCString()
const RAW_CASES: RawCase[] = [
  { name: '429 Retry-After: 1, then the file', fault: (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : undefined), attempts: 2, git: false, minMs: 1000 },
  { name: '429 Retry-After as an HTTP date, then the file', fault: (n) => (n === 1 ? { status: 429, headers: { 'retry-after': date(2) } } : undefined), attempts: 2, git: false, minMs: 400 },
  { name: '429 Retry-After: 1 every time: 1 + 3 tries, then git', fault: () => ({ status: 429, headers: { 'retry-after': '1' } }), attempts: 4, git: true, minMs: 3000 },
  { name: '429 Retry-After: 3600 is not waited for: git at once', fault: () => ({ status: 429, headers: { 'retry-after': '3600' } }), attempts: 1, git: true, maxMs: 5000 },
  { name: '500, then the file', fault: (n) => (n === 1 ? { status: 500 } : undefined), attempts: 2, git: false },
  { name: '503 twice, then the file', fault: (n) => (n <= 2 ? { status: 503 } : undefined), attempts: 3, git: false },
  { name: '502 with Retry-After: 1 twice, then the file', fault: (n) => (n <= 2 ? { status: 502, headers: { 'retry-after': '1' } } : undefined), attempts: 3, git: false, minMs: 2000 },
  { name: '503 every time: 1 + 2 tries, then git', fault: () => ({ status: 503 }), attempts: 3, git: true },
  { name: '500 every time: 1 + 2 tries, then git', fault: () => ({ status: 500 }), attempts: 3, git: true },
  { name: 'no answer: the timeout fires, then git', fault: () => ({ delayMs: (TIMEOUT_S + 6) * 1000 }), attempts: 1, git: true, maxMs: (TIMEOUT_S + 5) * 1000 },
  { name: 'dropped after 3 bytes of the body: git', fault: () => ({ cutAfter: 3 }), attempts: 1, git: true },
]

test('single-file API faults: 429 waits for Retry-After, 5xx backs off, both bounded, then git; the commit\'s other files skip the failing API', { timeout: 120_000 }, async (t) => {
  const paths = files(4)
  const urls = paths.map((p) => blobUrl(github, github.main, p))
  const counts: Record<string, number> = {}
  for (const c of RAW_CASES) {
    const cache = fx.newCache()
    const since = fx.server.requests.length
    // The fault is the first file's; the others are served (or, once the API failed for good, asked of git).
    let faulty: string | undefined
    let n = 0
    fx.server.options.rawFault = (r) => {
      faulty ??= r.path
      return r.path === faulty ? c.fault(++n) : undefined
    }
    const began = Date.now()
    const result = await prefetchUrls(urls, options(cache)).finally(() => delete fx.server.options.rawFault)
    const ms = Date.now() - began
    assertServed(result, github, paths)
    assert.equal(assertCleanCache(cache, github), paths.length, c.name)
    const requests = fx.server.requests.slice(since)
    const raw = requests.filter((r) => r.kind === 'raw')
    assert.ok(raw.length > 0, `${c.name}: the single-file API was asked (${requests.map((r) => `${r.method} ${r.path} ${r.status}`).join(', ')})`)
    const first = raw[0]!.path
    assert.equal(raw.filter((r) => r.path === first).length, c.attempts, `${c.name}: tries of the first file`)
    const gitFetches = requests.filter((r) => r.command === 'fetch').length
    if (c.git) {
      assert.equal(gitFetches, 2, `${c.name}: one git fetch of the commit`)
      assert.equal(new Set(raw.map((r) => r.path)).size, 1, `${c.name}: after the API failed, the other files went to git without asking it`)
    } else {
      assert.equal(gitFetches, 1, `${c.name}: git fetched only the trees, to check the content against`)
      assert.equal(result.fetched, paths.length)
    }
    if (c.minMs !== undefined) assert.ok(ms >= c.minMs, `${c.name}: ${ms} ms, Retry-After honoured`)
    if (c.maxMs !== undefined) assert.ok(ms <= c.maxMs, `${c.name}: ${ms} ms`)
    counts[c.name] = injected(since).length
  }
  const total = Object.values(counts).reduce((a, b) => a + b, 0)
  t.diagnostic(`single-file API faults injected: ${total} over ${RAW_CASES.length} cases (${Object.entries(counts).map(([k, v]) => `${k}: ${v}`).join('; ')})`)
})

test('content whose hash is not the file\'s is refused and fetched with git: against GitLab\'s declared hashes, and against the tree\'s blob id', { timeout: 60_000 }, async (t) => {
  let wrong = 0
  const tamper = (r: LoggedRequest): RawFault | undefined => {
    wrong++
    return { body: Buffer.from(`tampered ${r.path}\n`) }
  }
  // GitLab declares the blob id and sha256 of what it means to send.
  const glPaths = files(3)
  const glCache = fx.newCache()
  fx.server.options.rawFault = tamper
  const since = fx.server.requests.length
  const gl = await prefetchUrls(glPaths.map((p) => blobUrl(gitlab, gitlab.main, p)), options(glCache)).finally(() => delete fx.server.options.rawFault)
  assertServed(gl, gitlab, glPaths)
  assert.equal(assertCleanCache(glCache, gitlab), glPaths.length)
  assert.equal(fx.server.requests.slice(since).filter((r) => r.repository === gitlab.repository && r.command === 'fetch').length, 2)

  // GitHub declares nothing; once the mirror holds the commit's trees, their blob ids are the check.
  const ghCache = fx.newCache()
  assertServed(await prefetchUrls([blobUrl(github, github.main, 'data/file-0.txt')], options(ghCache, { rawFileLimit: 0 })), github, ['data/file-0.txt'])
  const ghPaths = ['data/file-5.txt', 'data/file-6.txt']
  const notes: string[] = []
  fx.server.options.rawFault = tamper
  const gh = await prefetchUrls(ghPaths.map((p) => blobUrl(github, github.main, p)), options(ghCache, { onProgress: (m: string) => notes.push(m) })).finally(() => delete fx.server.options.rawFault)
  assertServed(gh, github, ghPaths)
  assert.equal(assertCleanCache(ghCache, github), 3)
  assert.ok(notes.some((n) => /hash is not the file's/.test(n)), notes.join('\n'))
  t.diagnostic(`tampered answers injected: ${wrong}; all refused, the right bytes came through git`)
})

test('a sign-in page answered 200 by the GitHub or Bitbucket single-file API on a cold cache is refused: the cached file holds the real content', { timeout: 60_000 }, async () => {
  const page = Buffer.from('<html>Sign in</html>')
  for (const repo of [github, fx.repos[2]!]) {
    const paths = ['data/file-1.txt', 'data/file-2.txt']
    const cache = fx.newCache()
    const notes: string[] = []
    const since = fx.server.requests.length
    fx.server.options.rawFault = () => ({ body: page })
    const result = await prefetchUrls(paths.map((p) => blobUrl(repo, repo.main, p)), options(cache, { onProgress: (m: string) => notes.push(m) })).finally(() => delete fx.server.options.rawFault)
    assertServed(result, repo, paths)
    assert.equal(assertCleanCache(cache, repo), paths.length, repo.repository)
    const requests = fx.server.requests.slice(since)
    assert.equal(requests.filter((r) => r.kind === 'raw' && r.fault === 'body').length, paths.length, `${repo.repository}: the API was asked`)
    assert.equal(requests.filter((r) => r.command === 'fetch').length, 2, `${repo.repository}: the trees, then the blobs`)
    assert.ok(notes.some((n) => /hash is not the file's/.test(n)), notes.join('\n'))
    // The real content is what later runs trust.
    const warm = fx.server.requests.length
    assertServed(await prefetchUrls(paths.map((p) => blobUrl(repo, repo.main, p)), options(cache)), repo, paths)
    assert.equal(fx.server.requests.length, warm, 'warm: no request')
  }
})

test('a cached file changed on disk is fetched again; offline it is refused, naming the URL', { timeout: 60_000 }, async (t) => {
  const paths = files(6)
  const urls = paths.map((p) => blobUrl(gitlab, gitlab.main, p))
  const cache = fx.newCache()
  assertServed(await prefetchUrls(urls, options(cache, { rawFileLimit: 0 })), gitlab, paths)
  const local = (p: string) => join(cache, gitlab.repository, 'commits', gitlab.main, ...p.split('/'))
  // Three kinds of damage: other bytes of the same length, a truncation, an appended byte.
  const original = readFileSync(local(paths[0]!))
  writeFileSync(local(paths[0]!), Buffer.from(original.toString().replace(/file/g, 'fiLe')))
  writeFileSync(local(paths[1]!), readFileSync(local(paths[1]!)).subarray(0, 5))
  writeFileSync(local(paths[2]!), Buffer.concat([readFileSync(local(paths[2]!)), Buffer.from('x')]))
  const damaged = 3

  await assert.rejects(prefetchUrls(urls, options(cache, { offline: true })), (e: unknown) => {
    assert.ok(e instanceof FetchError)
    assert.match(e.message, /3 reference\(s\) failed/)
    for (const u of urls.slice(0, 3)) assert.ok(e.message.includes(u), `names ${u}`)
    assert.match(e.message, /no longer matches the sha256 recorded/)
    return true
  })
  const since = fx.server.requests.length
  const repaired = await prefetchUrls(urls, options(cache, { rawFileLimit: 0 }))
  assertServed(repaired, gitlab, paths)
  assert.equal(repaired.fetched, damaged)
  assert.equal(repaired.cached, paths.length - damaged)
  // The mirror still holds the blobs: they are read from it again (checked against their ids), at most one blob batch.
  assert.ok(fx.server.requests.slice(since).filter((r) => r.command === 'fetch').length <= 1)
  assert.equal(assertCleanCache(cache, gitlab), paths.length)

  // A file with no recorded sum (a cache of an earlier version) is fetched again too, and recorded.
  rmSync(join(cache, gitlab.repository, 'sums'), { recursive: true })
  const rerecorded = await prefetchUrls(urls, options(cache, { rawFileLimit: 0 }))
  assert.equal(rerecorded.fetched, paths.length)
  const warm = fx.server.requests.length
  assert.equal((await prefetchUrls(urls, options(cache))).cached, paths.length)
  assert.equal(fx.server.requests.length, warm, 'warm again: no request')
  t.diagnostic(`cached files damaged on disk: ${damaged}; refused offline, fetched again online; ${paths.length} unrecorded files re-fetched`)
})

test('a prefetch of many repositories at once, each git waiting on a silent server, warns of no listener leak', { timeout: 60_000 }, async () => {
  const silent = createServer(() => {})
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done))
  const port = (silent.address() as AddressInfo).port
  const warnings: string[] = []
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`)
  process.on('warning', onWarning)
  try {
    const urls = Array.from({ length: 12 }, (_, i) => `https://github.com/owner/repo-${i}/blob/main/a.txt`)
    for (const signal of [undefined, new AbortController().signal]) {
      const failed = await prefetchUrls(urls, { cacheDir: fx.newCache(), hosts: [`github.com=http://127.0.0.1:${port}`], concurrency: 12, timeoutSeconds: 1, ...(signal ? { signal } : {}) }).catch((error: unknown) => error)
      assert.ok(failed instanceof PrefetchError, String(failed))
      assert.equal(failed.failures.length, 12)
      assert.ok(failed.failures.every((f) => /timed out/.test(f.message)), failed.message)
    }
    // A warning is emitted on the next tick.
    await new Promise((done) => setImmediate(done))
    assert.deepEqual(warnings, [])
  } finally {
    process.off('warning', onWarning)
    silent.closeAllConnections()
    silent.close()
  }
})
