import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { breakIfStale, releaseHeldLocks, withLock } from '../../cache/lock.ts'
import { FetchError } from '../../src/errors.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('evalferry-lock-')
after(() => rmSync(dir, { recursive: true, force: true }))

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
  return Number(child.stdout)
}

test('holders never overlap, and the lock is gone after', async () => {
  const lock = join(dir, 'a', 'lock')
  let inside = 0
  let most = 0
  await Promise.all(
    Array.from({ length: 6 }, () =>
      withLock(lock, async () => {
        inside++
        most = Math.max(most, inside)
        await sleep(20)
        inside--
      }),
    ),
  )
  assert.equal(most, 1)
  assert.ok(!existsSync(lock))
})

test('a lock whose holder died is taken over at once', async () => {
  const lock = join(dir, 'dead')
  writeFileSync(lock, JSON.stringify({ pid: deadPid(), hostname: hostname(), acquired_at: new Date().toISOString(), token: 'x' }))
  const started = Date.now()
  assert.equal(await withLock(lock, async () => JSON.parse(readFileSync(lock, 'utf8')).pid as number), process.pid)
  assert.ok(Date.now() - started < 2000)
  assert.ok(!existsSync(lock))
})

test('a lock from another machine is taken over when its heartbeat is older than staleMs; an empty one after a moment', async () => {
  const lock = join(dir, 'remote')
  writeFileSync(lock, JSON.stringify({ pid: 1, hostname: 'elsewhere', acquired_at: '', token: 'y' }))
  const old = new Date(Date.now() - 120_000)
  utimesSync(lock, old, old)
  assert.equal(await withLock(lock, async () => 'ok', { staleMs: 60_000 }), 'ok')
  writeFileSync(lock, '') // a holder killed between creating the file and writing it
  utimesSync(lock, old, old)
  assert.equal(await withLock(lock, async () => 'ok'), 'ok')
})

test('a live holder is waited for, and a wait that is too long is E_CACHE naming the holder', async () => {
  const lock = join(dir, 'live')
  let waited = false
  let release!: () => void
  let held!: () => void
  // The second begins once the first holds the lock, and is seen waiting, however slow the machine.
  const holds = new Promise<void>((r) => (held = r))
  const holding = withLock(lock, () => new Promise<void>((r) => ((release = r), held())))
  await holds
  const waiting = withLock(lock, async () => 'second', { onWait: () => (waited = true) })
  for (const deadline = Date.now() + 10_000; !waited && Date.now() < deadline; ) await sleep(10)
  assert.ok(waited)
  await assert.rejects(withLock(lock, async () => 'third', { timeoutMs: 200 }), (e: unknown) => e instanceof FetchError && e.code === 'E_CACHE' && e.message.includes(`process ${process.pid}`))
  release()
  await holding
  assert.equal(await waiting, 'second')
})

test('the lock is released when the work throws', async () => {
  const lock = join(dir, 'throws')
  await assert.rejects(withLock(lock, async () => Promise.reject(new Error('boom'))), /boom/)
  assert.ok(!existsSync(lock))
})

test('a stale lock whose directory a cache clear or prune removed meanwhile is left to the caller to take again, not an ENOENT', async () => {
  const gone = join(dir, 'removed-repository', 'lock')
  await breakIfStale(gone, 60_000)
  assert.ok(!existsSync(join(dir, 'removed-repository')))
  // The caller's next attempt makes the directory and takes the lock.
  assert.equal(await withLock(gone, async () => 'taken'), 'taken')
})

test('releaseHeldLocks removes the locks this process holds, not one another holds', async () => {
  const mine = join(dir, 'mine', 'lock')
  const theirs = join(dir, 'theirs')
  writeFileSync(theirs, JSON.stringify({ pid: process.pid, hostname: hostname(), acquired_at: '', token: 'someone-else' }))
  let release!: () => void
  let held = false
  const holding = withLock(mine, async () => {
    held = true
    await new Promise<void>((r) => (release = r))
  })
  while (!held) await sleep(5)
  assert.ok(existsSync(mine))
  await releaseHeldLocks()
  assert.ok(!existsSync(mine))
  assert.ok(existsSync(theirs))
  // The holder's own release, after, finds nothing to remove.
  release()
  await holding
  assert.ok(!existsSync(mine))
  await releaseHeldLocks()
  assert.ok(existsSync(theirs))
})

test('releaseHeldLocks leaves a lock another process took over meanwhile (its token is not ours)', async () => {
  const lock = join(dir, 'taken-over')
  const other = JSON.stringify({ pid: process.pid, hostname: 'elsewhere', acquired_at: '', token: 'successor' })
  await withLock(lock, async () => {
    // Our lock was judged stale and broken, and another holder's written in its place.
    writeFileSync(lock, other)
    await releaseHeldLocks()
    assert.equal(readFileSync(lock, 'utf8'), other)
  })
  // Nor does the holder's own release take it.
  assert.equal(readFileSync(lock, 'utf8'), other)
})
