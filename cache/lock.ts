/**
 * An exclusive lock between processes: a file created with O_EXCL holding the holder's pid, host
 * name and a random token. A lock whose holder died (its pid is gone on this machine, or its heartbeat,
 * the file's mtime, is older than `staleMs`) is removed, under a short-lived `mkdir` mutex so that
 * two waiters never both remove it and one of them a live successor's lock.
 */

import { randomBytes } from 'node:crypto'
import { mkdir, open, readFile, rm, rmdir, stat, unlink, utimes } from 'node:fs/promises'
import { hostname } from 'node:os'
import { dirname } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { FetchError } from '../src/errors.ts'
import { processAlive } from './fs.ts'

export interface LockOptions {
  /** A holder whose heartbeat is older than this is presumed dead (milliseconds; default 60 s). */
  staleMs?: number
  /** Give up waiting after this long (milliseconds; default 15 min). */
  timeoutMs?: number
  /** Called once when the lock is busy and the caller starts to wait. */
  onWait?: (holder: LockHolder | undefined) => void
  /** Stops the wait for the lock when aborted, with the signal's reason. */
  signal?: AbortSignal
}

export interface LockHolder {
  pid: number
  hostname: string
  acquired_at: string
  token: string
}

const STEAL_MUTEX_STALE_MS = 10_000

/** The locks this process holds, each with its token. */
const held = new Map<string, string>()

/**
 * Removes the locks this process holds, for a command line about to exit on an interruption: a
 * waiter on another machine, which cannot tell that this process is gone, need not wait out `staleMs`.
 */
export async function releaseHeldLocks(): Promise<void> {
  await Promise.all([...held].map(([path, token]) => releaseIfOwn(path, token)))
}

async function releaseIfOwn(path: string, token: string): Promise<void> {
  const seen = await readHolder(path)
  if (seen?.holder?.token === token) await unlink(path).catch(() => undefined)
}

async function readHolder(path: string): Promise<{ holder: LockHolder | undefined; mtimeMs: number } | undefined> {
  try {
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)])
    let holder: LockHolder | undefined
    try {
      holder = JSON.parse(text) as LockHolder
    } catch {
      holder = undefined // created but not yet written, or written by a process killed at that moment
    }
    return { holder, mtimeMs: info.mtimeMs }
  } catch {
    return undefined
  }
}

function isStale(seen: { holder: LockHolder | undefined; mtimeMs: number }, staleMs: number): boolean {
  const age = Date.now() - seen.mtimeMs
  if (age > staleMs) return true
  if (!seen.holder) return age > 5_000
  return seen.holder.hostname === hostname() && !processAlive(seen.holder.pid)
}

/** Removes the lock at `path` if its holder is gone, under a `mkdir` mutex; the caller then tries to take it again. */
export async function breakIfStale(path: string, staleMs: number): Promise<void> {
  const mutex = `${path}.steal`
  try {
    await mkdir(mutex)
  } catch (error) {
    // The lock's directory was removed meanwhile (a cache clear or prune), lock and all: the caller tries again.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const info = await stat(mutex).catch(() => undefined)
    if (info && Date.now() - info.mtimeMs > STEAL_MUTEX_STALE_MS) await rm(mutex, { recursive: true, force: true })
    return
  }
  try {
    // Checked again inside the mutex: only a dead holder's lock is removed, never a successor's.
    const seen = await readHolder(path)
    if (seen && isStale(seen, staleMs)) await unlink(path).catch(() => undefined)
  } finally {
    await rmdir(mutex).catch(() => undefined)
  }
}

/** Run `fn` holding the lock at `path`; the lock is released however `fn` ends. */
export async function withLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const staleMs = options.staleMs ?? 60_000
  const deadline = Date.now() + (options.timeoutMs ?? 15 * 60_000)
  const holder: LockHolder = { pid: process.pid, hostname: hostname(), acquired_at: '', token: randomBytes(8).toString('hex') }
  let waited = false
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted()
    try {
      const handle = await open(path, 'wx')
      // Held from here: an interruption while the holder is written or the file closed still releases it.
      held.set(path, holder.token)
      try {
        holder.acquired_at = new Date().toISOString()
        await handle.writeFile(JSON.stringify(holder))
      } catch (error) {
        held.delete(path)
        throw error
      } finally {
        await handle.close()
      }
      break
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') {
        // A cache clear or prune may remove the directory again while it is being made: try again, for a while.
        await mkdir(dirname(path), { recursive: true }).catch((made: NodeJS.ErrnoException) => {
          if (made.code !== 'ENOENT' || Date.now() > deadline) throw new FetchError('E_CACHE', `cannot create lock ${path}: ${made.message}`, {}, { cause: made })
        })
        continue
      }
      if (code !== 'EEXIST') throw new FetchError('E_CACHE', `cannot create lock ${path}: ${(error as Error).message}`, {}, { cause: error })
      const seen = await readHolder(path)
      if (!seen) continue
      if (isStale(seen, staleMs)) {
        await breakIfStale(path, staleMs)
        continue
      }
      if (!waited) {
        waited = true
        options.onWait?.(seen.holder)
      }
      if (Date.now() > deadline) {
        const who = seen.holder ? `process ${seen.holder.pid} on ${seen.holder.hostname}` : 'another process'
        throw new FetchError('E_CACHE', `timed out waiting for the cache lock ${path}, held by ${who}`)
      }
      await sleep(Math.min(250, 20 + attempt * 10) * (0.5 + Math.random()), undefined, options.signal ? { signal: options.signal } : {})
    }
  }
  const beat = setInterval(() => {
    const now = new Date()
    utimes(path, now, now).catch(() => undefined)
  }, Math.max(1_000, staleMs / 4))
  beat.unref()
  try {
    return await fn()
  } finally {
    clearInterval(beat)
    held.delete(path)
    await releaseIfOwn(path, holder.token)
  }
}
