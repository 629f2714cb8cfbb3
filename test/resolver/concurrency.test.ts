import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { openCacheRoot, withLock } from '../../cache/index.ts'
import { prefetch } from '../../src/resolver/index.ts'
import { kill, runCli, startCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'

let fx: Fixture
let hostArgs: string[]
let dataset: string
before(async () => {
  fx = await startFixture({}, 20)
  hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  dataset = join(fx.dir, 'cases.yaml')
  writeEvalcaseDataset(dataset, expected().map((e) => e.url))
})
after(() => fx.cleanup())

function expected() {
  return fx.repos.flatMap((repo) => ['docs/with space.md', ...Array.from({ length: 20 }, (_, i) => `data/file-${i}.txt`)].map((path) => ({ url: blobUrl(repo, 'main', path), repo, path })))
}

/** Every file present with the right bytes, one commit directory per repository, nothing half-written, no lock. */
function assertCompleteCache(cache: string): void {
  for (const e of expected()) {
    assert.deepEqual(readFileSync(join(cache, e.repo.repository, 'commits', e.repo.main, ...e.path.split('/'))), e.repo.files.get(e.path), e.url)
  }
  for (const repo of fx.repos) {
    const dir = join(cache, repo.repository)
    assert.deepEqual(readdirSync(join(dir, 'commits')), [repo.main])
    assert.deepEqual(readdirSync(join(dir, 'tmp')), [])
    assert.ok(!existsSync(join(dir, 'lock')), `${dir}/lock left behind`)
    assert.deepEqual(readdirSync(join(dir, 'git')).filter((n) => n.endsWith('.lock')), [])
  }
}

test('eight prefetch processes at once on one cold cache all succeed, fetching each repository about once and each file once', { timeout: 150_000 }, async () => {
  const cache = fx.newCache()
  const start = fx.server.requests.length
  const runs = await Promise.all(Array.from({ length: 8 }, () => runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--json'], {}, 120_000)))
  for (const run of runs) assert.equal(run.code, 0, run.stderr)
  assertCompleteCache(cache)
  // A process that waited for the lock and found the files there counts them cached, not fetched.
  const counts = runs.map((run) => {
    const { files, fetched, cached } = JSON.parse(run.stdout) as { files: number; fetched: number; cached: number }
    return { files, fetched, cached }
  })
  for (const c of counts) assert.deepEqual([c.files, c.fetched + c.cached], [expected().length, expected().length])
  assert.equal(counts.reduce((sum, c) => sum + c.fetched, 0), expected().length, JSON.stringify(counts))
  const seen = fx.server.requests.slice(start)
  for (const repo of fx.repos) {
    // The lock makes the first process list and fetch while the others wait and then find it done;
    // "a few" allows a process whose ref listing was read just before another's rename.
    const listings = seen.filter((r) => r.repository === repo.repository && r.command === 'ls-refs').length
    const fetches = seen.filter((r) => r.repository === repo.repository && r.command === 'fetch').length
    assert.ok(listings >= 1 && listings <= 3, `${repo.repository}: ${listings} ref listings`)
    assert.ok(fetches >= 2 && fetches <= 6, `${repo.repository}: ${fetches} fetch commands (2 per fetch of a commit)`)
  }
})

test('a process killed in the middle of a fetch leaves a cache the next run repairs without help', { timeout: 150_000 }, async () => {
  const cache = fx.newCache()
  // The second fetch command is a blob batch: the mirror already holds the commit and its trees.
  fx.server.options.stallFetch = { nth: fx.server.requests.filter((r) => r.command === 'fetch').length + 2, afterBytes: 60 }
  const victim = startCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--concurrency', '1', '--quiet'])
  const stalled = await fx.server.waitFor((r) => r.stalled === true)
  await new Promise((r) => setTimeout(r, 300))
  kill(victim.pid)
  const killed = await victim.done
  assert.equal(killed.signal, 'SIGKILL')
  delete fx.server.options.stallFetch
  const repo = stalled.repository!
  assert.ok(existsSync(join(cache, repo, 'lock')), 'the dead process still holds the lock')

  const repair = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs], {}, 120_000)
  assert.equal(repair.code, 0, repair.stderr)
  assertCompleteCache(cache)
})

test('a prefetch stopped by SIGTERM in the middle of a fetch stops the git that writes the mirror with it', { timeout: 150_000 }, async () => {
  const cache = fx.newCache()
  fx.server.options.stallFetch = { nth: fx.server.requests.filter((r) => r.command === 'fetch').length + 2, afterBytes: 60 }
  // This run's stalled request, not an earlier test's.
  const earlier = new Set(fx.server.requests)
  const victim = startCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--concurrency', '1', '--quiet'])
  await fx.server.waitFor((r) => r.stalled === true && !earlier.has(r))
  await new Promise((r) => setTimeout(r, 300))
  // The git processes working in the cache, by their working directory, but for the remote
  // helpers (git remote-http), which only read from the server into the fetch that is gone and end
  // with their connection.
  const gitInCache = (): string[] =>
    readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .map((p) => {
        try {
          return readlinkSync(`/proc/${p}/cwd`).startsWith(cache) ? readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ') : ''
        } catch {
          return ''
        }
      })
      .filter((command) => command !== '' && !/remote-https?\b/.test(command))
  let stopped: Awaited<typeof victim.done> | undefined
  try {
    assert.ok(gitInCache().some((command) => / fetch /.test(command)), 'git was fetching when the signal came')
    process.kill(victim.pid, 'SIGTERM')
    stopped = await victim.done
  } finally {
    // The next test's fetches are not stalled, and no process of this one is left, whatever failed here.
    delete fx.server.options.stallFetch
    if (!stopped) kill(victim.pid)
  }
  assert.equal(stopped.code, 143, stopped.stderr)
  assert.match(stopped.stderr, /interrupted \(SIGTERM\)/)
  assert.doesNotMatch(stopped.stderr, /internal error|failed/)
  const deadline = Date.now() + 5_000
  while (gitInCache().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  assert.deepEqual(gitInCache(), [])
})

test('a prefetch waiting for a repository held by another process writes nothing in its directory meanwhile', { timeout: 60_000 }, async () => {
  // A `cache clear` empties the directory while it holds the lock: anything written there unlocked may vanish mid-write.
  const cache = fx.newCache()
  const repo = fx.repos[0]!
  const one = join(fx.dir, 'one-repository.yaml')
  writeEvalcaseDataset(one, expected().filter((e) => e.repo === repo).map((e) => e.url))
  await openCacheRoot(cache)
  const dir = join(cache, repo.repository)
  let run: ReturnType<typeof startCli> | undefined
  await withLock(join(dir, 'lock'), async () => {
    run = startCli(['prefetch', one, '--cache-dir', cache, ...hostArgs], {}, 50_000)
    const deadline = Date.now() + 30_000
    while (!run.stderr().includes('waiting for another process') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.match(run.stderr(), /waiting for another process working on .*/)
    assert.deepEqual(readdirSync(dir), ['lock'])
  })
  const done = await run!.done
  assert.equal(done.code, 0, done.stderr)
  for (const e of expected().filter((x) => x.repo === repo)) {
    assert.deepEqual(readFileSync(join(dir, 'commits', repo.main, ...e.path.split('/'))), repo.files.get(e.path), e.url)
  }
})

test('prefetch() given an AbortSignal stops when it aborts: in the middle of a fetch, and waiting for a lock; the next run completes the cache', { timeout: 150_000 }, async () => {
  const cache = fx.newCache()
  const hosts = fx.server.hostSpecs()
  fx.server.options.stallFetch = { nth: fx.server.requests.filter((r) => r.command === 'fetch').length + 2, afterBytes: 60 }
  const earlier = new Set(fx.server.requests)
  const controller = new AbortController()
  // A timeout longer than the test: what ends the stalled fetch can only be the abort.
  const running = prefetch(dataset, { cacheDir: cache, hosts, concurrency: 1, timeoutSeconds: 600, signal: controller.signal })
  running.catch(() => {})
  try {
    await fx.server.waitFor((r) => r.stalled === true && !earlier.has(r))
    controller.abort()
    await assert.rejects(running, { name: 'AbortError' })
  } finally {
    delete fx.server.options.stallFetch
  }
  for (const repo of fx.repos) assert.ok(!existsSync(join(cache, repo.repository, 'lock')), `${repo.repository}: the lock is released`)

  // Waiting for a lock another holds, the abort ends the wait.
  const repo = fx.repos[0]!
  const waiting = new AbortController()
  await withLock(join(cache, repo.repository, 'lock'), async () => {
    const blocked = prefetch(dataset, {
      cacheDir: cache,
      hosts,
      concurrency: 1,
      signal: waiting.signal,
      onProgress: (message) => {
        if (message.startsWith('waiting for another process')) waiting.abort(new Error('no longer wanted'))
      },
    })
    await assert.rejects(blocked, { message: 'no longer wanted' })
  })

  const aborted = new AbortController()
  aborted.abort()
  await assert.rejects(prefetch(dataset, { cacheDir: cache, hosts, signal: aborted.signal }), { name: 'AbortError' })
  await assert.rejects(prefetch(dataset, { cacheDir: cache, hosts, signal: 'stop' as unknown as AbortSignal }), { code: 'E_USAGE', message: 'the option signal takes an AbortSignal, not string' })

  const result = await prefetch(dataset, { cacheDir: cache, hosts })
  assert.equal(result.files, expected().length)
  assertCompleteCache(cache)
})

test('prefetch() aborted while it reads its dataset from a pipe, or waits on cases that do not come, rejects at once', { timeout: 30_000 }, async () => {
  const fifo = join(fx.dir, 'cases-pipe.yaml')
  execFileSync('mkfifo', [fifo])
  // A writer that opens the pipe and sends nothing until the end of the test.
  const { open } = await import('node:fs/promises')
  const writer = open(fifo, 'w')
  const controller = new AbortController()
  const fromPipe = prefetch(fifo, { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), from: 'evalcase', signal: controller.signal })
  fromPipe.catch(() => {})
  const handle = await writer
  try {
    controller.abort()
    await assert.rejects(fromPipe, { name: 'AbortError' })
  } finally {
    await handle.close()
  }
  const stalled = new AbortController()
  async function* never(): AsyncGenerator<never> {
    await new Promise(() => {})
  }
  const fromCases = prefetch(never(), { cacheDir: fx.newCache(), hosts: fx.server.hostSpecs(), signal: stalled.signal })
  setTimeout(() => stalled.abort(new Error('gave up waiting')), 20)
  await assert.rejects(fromCases, { message: 'gave up waiting' })
})
