/** `cache list`, `cache prune` and `cache clear`: what the cache holds, and removing it safely. */

import { mkdir, readdir, readFile, rename, rm, rmdir, stat } from 'node:fs/promises'
import { dirname, join, sep } from 'node:path'
import { FetchError, UsageError } from '../src/errors.ts'
import { CACHEDIR_TAG, type RepoLayout, repoLayout } from './layout.ts'
import { withLock } from './lock.ts'
import { cacheError, leftBehind, sweepTemp, tempPath } from './fs.ts'
import { TAG_TEMP, checkCacheRoot, readRefListing } from './store.ts'

export interface CachedCommit {
  commit: string
  files: number
  bytes: number
  /** When its files were last fetched or served (ISO 8601). */
  last_used: string
}

export interface CachedRepository {
  host: string
  repository: string
  dir: string
  commits: CachedCommit[]
  /** Bytes of the git mirror. */
  mirror_bytes: number
  refs_listed_at?: string
}

async function sizeOf(path: string): Promise<{ files: number; bytes: number }> {
  const info = await stat(path).catch(() => undefined)
  if (!info) return { files: 0, bytes: 0 }
  if (!info.isDirectory()) return { files: 1, bytes: info.size }
  let files = 0
  let bytes = 0
  for (const name of await readdir(path).catch(() => [] as string[])) {
    const sub = await sizeOf(join(path, name))
    files += sub.files
    bytes += sub.bytes
  }
  return { files, bytes }
}

async function findRepositories(root: string): Promise<RepoLayout[]> {
  const found: RepoLayout[] = []
  const walk = async (dir: string, depth: number): Promise<void> => {
    const names = await readdir(dir).catch(() => [] as string[])
    if (names.includes('repo.json')) {
      try {
        const info = JSON.parse(await readFile(join(dir, 'repo.json'), 'utf8')) as { host: string; repository: string }
        const layout = repoLayout(root, info.host, info.repository)
        // Only a repo.json where its repository belongs: any other is not one the cache wrote.
        if (layout.dir === dir) found.push(layout)
      } catch {
        // a repo.json being written right now (the next listing shows it), or not one of ours
      }
      return
    }
    if (depth > 12) return
    for (const name of names) {
      const sub = join(dir, name)
      if ((await stat(sub).catch(() => undefined))?.isDirectory()) await walk(sub, depth + 1)
    }
  }
  await walk(root, 0)
  return found.sort((a, b) => `${a.host}/${a.repository}`.localeCompare(`${b.host}/${b.repository}`))
}

export async function listCache(root: string): Promise<CachedRepository[]> {
  const repositories: CachedRepository[] = []
  if (!(await checkCacheRoot(root))) return repositories
  for (const layout of await findRepositories(root)) {
    const commits: CachedCommit[] = []
    for (const commit of (await readdir(layout.commits).catch(() => [] as string[])).sort()) {
      const dir = join(layout.commits, commit)
      const info = await stat(dir).catch(() => undefined)
      if (!info?.isDirectory()) continue
      commits.push({ commit, ...(await sizeOf(dir)), last_used: info.mtime.toISOString() })
    }
    const listing = await readRefListing(layout)
    repositories.push({
      host: layout.host,
      repository: layout.repository,
      dir: layout.dir,
      commits,
      mirror_bytes: (await sizeOf(layout.git)).bytes,
      ...(listing ? { refs_listed_at: listing.listed_at } : {}),
    })
  }
  return repositories
}

/** `30d`, `12h`, `90m`, `45s`, `2w` to milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)$/.exec(text.trim())
  if (!m) throw new UsageError(`'${text}' is not a duration: write e.g. 30d, 12h, 90m, 45s`)
  const unit = { ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 }[m[2] as 'ms' | 's' | 'm' | 'h' | 'd' | 'w']
  return Number(m[1]) * unit
}

export interface PruneResult {
  removed: { host: string; repository: string; commit: string; bytes: number }[]
  /** Mirrors removed with those commits (rebuilt on demand), and their bytes. */
  mirrors: { host: string; repository: string; bytes: number }[]
  /** Bytes freed: the commits' files and the mirrors. */
  bytes: number
}

/**
 * Remove commits not used for `olderThanMs`. A repository that loses a commit also loses its mirror
 * (rebuilt on demand), and one left with no commit is removed whole, as is one that never had a
 * commit (see `pruneEmpty`). What dead processes left in a repository's tmp/ is removed too.
 */
export async function pruneCache(root: string, olderThanMs: number): Promise<PruneResult> {
  const result: PruneResult = { removed: [], mirrors: [], bytes: 0 }
  const cutoff = Date.now() - olderThanMs
  try {
    for (const repo of await listCache(root)) {
      const layout = repoLayout(root, repo.host, repo.repository)
      if (repo.commits.length === 0) {
        await pruneEmpty(root, layout, repo.refs_listed_at, cutoff)
        continue
      }
      const old = repo.commits.filter((c) => Date.parse(c.last_used) < cutoff)
      // What a process that died left in tmp/ (a commit a prune had begun to remove, say) goes too;
      // the writes of a live process there are in flight, and wait for no prune.
      if (old.length === 0) {
        if ((await leftBehind(layout.tmp)).length) await withLock(layout.lock, () => sweepTemp(layout.tmp))
        continue
      }
      await withLock(layout.lock, async () => {
        await sweepTemp(layout.tmp)
        for (const c of old) {
          await discard(layout, join(layout.commits, c.commit))
          await rm(join(layout.sums, `${c.commit}.json`), { force: true })
          result.removed.push({ host: repo.host, repository: repo.repository, commit: c.commit, bytes: c.bytes })
          result.bytes += c.bytes
        }
        const mirror = (await sizeOf(layout.git)).bytes
        await discard(layout, layout.git)
        if (mirror > 0) {
          result.mirrors.push({ host: repo.host, repository: repo.repository, bytes: mirror })
          result.bytes += mirror
        }
        if (old.length === repo.commits.length) await emptyRepository(layout)
      })
      // As in clear: the directory stays when another process took its lock meanwhile.
      if (old.length === repo.commits.length) await removeEmptyParents(root, layout.dir)
    }
  } catch (error) {
    throw cacheError(error, `cannot prune the cache ${root}`)
  }
  return result
}

/**
 * A repository with no commit (its fetch failed, or it was never found) serves nothing offline: it
 * is removed once its refs listing, or without one its directory, is older than `cutoff`, unless a
 * prefetch has brought a commit meanwhile.
 */
async function pruneEmpty(root: string, layout: RepoLayout, listedAt: string | undefined, cutoff: number): Promise<void> {
  const since = listedAt !== undefined ? Date.parse(listedAt) : (await stat(layout.dir).catch(() => undefined))?.mtimeMs
  if (since === undefined || since >= cutoff) return
  let emptied = false
  await withLock(layout.lock, async () => {
    if ((await readdir(layout.commits).catch(() => [] as string[])).length) return
    await emptyRepository(layout)
    emptied = true
  })
  if (emptied) await removeEmptyParents(root, layout.dir)
}

/**
 * What a cache root is: `absent` (no directory yet), `empty`, `cache` (it holds our CACHEDIR.TAG),
 * or `foreign`, a directory of other files, which the cache never starts in nor clears.
 */
export async function rootKind(root: string): Promise<'absent' | 'empty' | 'cache' | 'foreign'> {
  const names = await readdir(root).catch(() => undefined)
  if (names === undefined) return 'absent'
  if (names.length === 0) return 'empty'
  const tag = await readFile(join(root, 'CACHEDIR.TAG'), 'utf8').catch(() => '')
  return tag === CACHEDIR_TAG ? 'cache' : 'foreign'
}

/**
 * Remove what the cache made: each repository's directory (holding its lock, so that no process is
 * working in it meanwhile), the host and owner directories that leaves empty, and our temporaries of
 * CACHEDIR.TAG; anything else in the root stays. Refused when the root is not empty and not an
 * evalferry cache.
 */
export async function clearCache(root: string, options: { onWait?: (repository: string) => void } = {}): Promise<void> {
  if (!(await checkCacheRoot(root))) return
  try {
    const names = await readdir(root)
    if (names.length === 0) return
    if ((await rootKind(root)) === 'foreign') {
      throw new FetchError('E_CACHE', `${root} does not look like an evalferry cache (no CACHEDIR.TAG of ours); not clearing it`)
    }
    for (const layout of await findRepositories(root)) {
      const name = `${layout.host}/${layout.repository}`
      await withLock(layout.lock, () => emptyRepository(layout), { onWait: () => options.onWait?.(name) })
      // The directory stays when another process took its lock meanwhile.
      await removeEmptyParents(root, layout.dir)
    }
    for (const name of names.filter((n) => TAG_TEMP.test(n))) await rm(join(root, name), { force: true })
  } catch (error) {
    // A lock that cannot be made is told as this failure, naming its path.
    const lockFailure = error instanceof FetchError && (error.cause as NodeJS.ErrnoException | undefined)?.code !== undefined
    throw cacheError(lockFailure ? error.cause : error, `cannot clear the cache ${root}`)
  }
}

/**
 * Remove everything in a repository's directory but its lock, which the caller holds: the
 * directory itself goes after the lock is released, and only if no one took the lock meanwhile.
 * `repo.json` goes last, so that a removal cut short leaves a repository that list, prune and clear
 * still find.
 */
async function emptyRepository(layout: RepoLayout): Promise<void> {
  const entries = (await readdir(layout.dir).catch(() => [] as string[])).filter((e) => e !== 'lock' && e !== 'repo.json' && e !== 'tmp')
  for (const entry of entries) await discard(layout, join(layout.dir, entry))
  await rm(layout.tmp, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 })
  await rm(layout.info, { force: true })
}

/**
 * Remove a file or directory of a repository in one step: it is renamed into tmp/ first, so that
 * a removal cut short (Ctrl-C) leaves it whole or gone, never a commit with some of its files. What
 * is left in tmp/ the next prefetch or prune of the repository sweeps.
 */
async function discard(layout: RepoLayout, path: string): Promise<void> {
  await mkdir(layout.tmp, { recursive: true })
  const temp = tempPath(layout.tmp)
  try {
    await rename(path, temp)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  await rm(temp, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 })
}

/** Remove `dir` and its parents below `root` while they are empty. */
async function removeEmptyParents(root: string, dir: string): Promise<void> {
  for (let at = dir; at.startsWith(join(root, sep)); at = dirname(at)) {
    const removed = await rmdir(at).then(() => true, () => false)
    if (!removed) return
  }
}
