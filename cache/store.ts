/** Putting files of one commit into the cache: raw HTTP for a few files, else the git mirror. */

import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat, utimes } from 'node:fs/promises'
import { join, posix } from 'node:path'
import { FetchError, quoted } from '../src/errors.ts'
import { cacheError, writeAtomic } from './fs.ts'
import { type GitRemote, type GitRunOptions, type TreeEntry, fetchBlobs, fetchCommits, hasCommit, listTree, objectType, prepareMirror, readBlobs } from './git.ts'
import { CACHEDIR_TAG, type RepoLayout, commitFile } from './layout.ts'
import { type DeclaredHashes, type RetryPolicy, fetchRawFile } from './raw.ts'

export interface RefListing {
  /** When the remote was listed (ISO 8601). */
  listed_at: string
  /** Full ref name to commit, tags peeled. */
  refs: Record<string, string>
  /**
   * Per branch, the commits earlier listings gave it, the latest first: offline, a file cached at
   * one of them is still served after another run listed the branch further on.
   */
  earlier?: Record<string, string[]>
}

/** How many earlier commits of each branch a listing remembers. */
const EARLIER_KEPT = 16

export async function readRefListing(layout: RepoLayout): Promise<RefListing | undefined> {
  try {
    const listing = JSON.parse(await readFile(layout.refs, 'utf8')) as RefListing
    return typeof listing.listed_at === 'string' && typeof listing.refs === 'object' ? listing : undefined
  } catch {
    return undefined
  }
}

/** The commits `listing` remembers for `ref` before its current one, the latest first. */
export function earlierCommits(listing: RefListing | undefined, ref: string): string[] {
  const earlier = listing?.earlier
  const commits = earlier && typeof earlier === 'object' && Object.hasOwn(earlier, ref) ? earlier[ref] : undefined
  return Array.isArray(commits) ? commits.filter((c) => typeof c === 'string') : []
}

/** Replace the listing (under the repository's lock); a branch that moved remembers where it was. */
export async function writeRefListing(layout: RepoLayout, refs: Record<string, string>): Promise<RefListing> {
  const previous = await readRefListing(layout)
  const earlier = new Map<string, string[]>()
  for (const name of Object.keys(refs)) {
    if (!name.startsWith('refs/heads/') && name !== 'HEAD') continue
    const before = previous && Object.hasOwn(previous.refs, name) ? [previous.refs[name]!] : []
    const commits = [...new Set([...before, ...earlierCommits(previous, name)])].filter((c) => c !== refs[name]).slice(0, EARLIER_KEPT)
    if (commits.length > 0) earlier.set(name, commits)
  }
  const listing: RefListing = { listed_at: new Date().toISOString(), refs, ...(earlier.size > 0 ? { earlier: Object.fromEntries(earlier) } : {}) }
  await writeAtomic(layout.refs, `${JSON.stringify(listing, null, 1)}\n`, layout.tmp)
  return listing
}

/** Our temporaries of CACHEDIR.TAG, as writeAtomic names them. */
export const TAG_TEMP = /^\.CACHEDIR\.TAG\.\d+-[0-9a-f]+\.tmp$/

/** Whether the cache root exists; E_CACHE when it is there but is not a directory. */
export async function checkCacheRoot(root: string): Promise<boolean> {
  const info = await stat(root).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    if (error.code === 'ENOTDIR') throw new FetchError('E_CACHE', `the cache ${root} cannot be a directory: a part of its path is a file`)
    throw cacheError(error, `cannot use the cache ${root}`)
  })
  if (info && !info.isDirectory()) throw new FetchError('E_CACHE', `the cache ${root} is not a directory`)
  return info !== undefined
}

/**
 * Make `root` a cache: a new or empty directory gets our CACHEDIR.TAG; one that has it already is
 * taken as it is. Any other directory is refused, so that `cache clear` never meets files it did not make.
 */
export async function openCacheRoot(root: string): Promise<void> {
  await checkCacheRoot(root)
  try {
    await mkdir(root, { recursive: true })
    const names = await readdir(root)
    // The tag is renamed into place before anything else is made, so a root with more has it.
    if (names.includes('CACHEDIR.TAG')) {
      if ((await readFile(join(root, 'CACHEDIR.TAG'), 'utf8')) === CACHEDIR_TAG) return
    } else if (names.every((n) => TAG_TEMP.test(n))) {
      await writeAtomic(join(root, 'CACHEDIR.TAG'), CACHEDIR_TAG)
      return
    }
  } catch (error) {
    throw cacheError(error, `cannot use the cache ${root}`)
  }
  throw new FetchError('E_CACHE', `${root} is not empty and is not an evalferry cache (no CACHEDIR.TAG of ours); name a new or empty directory for the cache`)
}

/** Create the repository's directory and repo.json when missing (in a root that openCacheRoot accepts). */
export async function initRepoDir(layout: RepoLayout): Promise<void> {
  await openCacheRoot(layout.root)
  try {
    await mkdir(layout.tmp, { recursive: true })
    if (!(await exists(layout.info))) {
      await writeAtomic(layout.info, `${JSON.stringify({ host: layout.host, repository: layout.repository })}\n`, layout.tmp)
    }
  } catch (error) {
    throw cacheError(error, `cannot write the cache of ${layout.host}/${layout.repository}`)
  }
}

export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  )
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  )
}

/** Record that a commit's files were used now (what `cache prune` goes by). */
export async function touchCommit(layout: RepoLayout, commit: string): Promise<void> {
  const now = new Date()
  await utimes(`${layout.commits}/${commit}`, now, now).catch(() => undefined)
}

const sha256Of = (content: Buffer): string => createHash('sha256').update(content).digest('hex')

/** The git object id of a blob with this content: sha1 (or sha256, for a 64-digit id) of `blob <len>\0<content>`. */
export function gitBlobId(content: Buffer, algorithm: 'sha1' | 'sha256' = 'sha1'): string {
  return createHash(algorithm).update(`blob ${content.length}\0`).update(content).digest('hex')
}

function sumsFile(layout: RepoLayout, commit: string): string {
  return join(layout.sums, `${commit}.json`)
}

/** The recorded sha256 of each file of the commit in the cache. */
export async function readSums(layout: RepoLayout, commit: string): Promise<Map<string, string>> {
  try {
    const recorded = JSON.parse(await readFile(sumsFile(layout, commit), 'utf8')) as Record<string, unknown>
    return new Map(Object.entries(recorded).filter((e): e is [string, string] => typeof e[1] === 'string'))
  } catch {
    return new Map()
  }
}

/** Add to the commit's record (under the repository's lock, before the files are renamed into place). */
async function recordSums(layout: RepoLayout, commit: string, add: Map<string, string>): Promise<void> {
  const sums = await readSums(layout, commit)
  for (const [path, sum] of add) sums.set(path, sum)
  await writeAtomic(sumsFile(layout, commit), `${JSON.stringify(Object.fromEntries(sums))}\n`, layout.tmp)
}

export type CachedState = { state: 'ok'; sha256: string; bytes: number } | { state: 'missing' } | { state: 'unrecorded' } | { state: 'mismatch'; sha256: string }

/** Whether a cached file is there and still holds the bytes recorded for it. */
export async function checkCachedFile(layout: RepoLayout, commit: string, path: string, sums: Map<string, string>): Promise<CachedState> {
  const file = commitFile(layout, commit, path)
  if (!(await isFile(file))) return { state: 'missing' }
  const recorded = sums.get(path)
  if (recorded === undefined) return { state: 'unrecorded' }
  const hash = createHash('sha256')
  let bytes = 0
  try {
    for await (const chunk of createReadStream(file)) {
      hash.update(chunk as Buffer)
      bytes += (chunk as Buffer).length
    }
  } catch {
    return { state: 'missing' }
  }
  const sha256 = hash.digest('hex')
  return sha256 === recorded ? { state: 'ok', sha256, bytes } : { state: 'mismatch', sha256 }
}

export interface FetchFilesOptions extends GitRunOptions {
  remote: GitRemote
  /** Per commit and path, the single-file API URL when the host has one. */
  rawUrl?: (commit: string, path: string) => string | undefined
  rawHeaders?: Record<string, string>
  /** Use the single-file API for a commit only when at most this many of its files are missing (0: never). */
  rawLimit: number
  /** Refuse files larger than this. */
  maxBytes: number
  /** Where errors say a file came from: the URL that named the path at the commit. */
  describe: (commit: string, path: string) => string
  /** How the single-file API is retried (tests shorten it). */
  rawRetry?: Partial<RetryPolicy>
}

/** One file of one commit. */
export interface CommitPath {
  commit: string
  path: string
}

export interface FetchFilesResult {
  viaRaw: CommitPath[]
  viaGit: CommitPath[]
  /** What went wrong on the way and was made good (raw answers refused or failed, cached files replaced). */
  notes: string[]
  /** Commits that could not be brought whole (not on the server, not a commit): none of their missing files were. */
  failed: Map<string, FetchError>
}

const MAX_SYMLINK_HOPS = 8

/** The commit has no file at the path (or at a symlink's target): a branch listed a while ago may have moved since. */
export class MissingFileError extends FetchError {}

/** A full SHA taken for a commit names another object: a tree, a blob or an annotated tag. */
export class NotACommitError extends FetchError {
  constructor(
    readonly oid: string,
    readonly type: string,
    label: string,
  ) {
    super('E_REF', `'${oid}' is ${type === 'tag' ? 'an annotated tag' : `a ${type}`} of ${label}, not a commit; a SHA in a URL must name a commit`)
  }
}

/**
 * Whether the mirror holds the commit and its trees. An id it holds as a tree, blob or tag is
 * NotACommitError: git fetches a tree by its id and lists it as if it were a commit's.
 */
async function mirrorHasCommit(layout: RepoLayout, commit: string, options: FetchFilesOptions): Promise<boolean> {
  const type = await objectType(layout, commit, options)
  if (type !== undefined && type !== 'commit') throw new NotACommitError(commit, type, options.remote.label)
  return type === 'commit' && (await hasCommit(layout, commit, options))
}

/**
 * Make sure the mirror holds these commits and their trees, fetching those it lacks in one request
 * (call under the lock). A commit that cannot be had goes to `failed`; when the server refuses one,
 * it refuses the request, so each is then asked for alone to tell which.
 */
async function ensureCommits(layout: RepoLayout, commits: string[], options: FetchFilesOptions, failed: Map<string, FetchError>): Promise<void> {
  await prepareMirror(layout, options)
  const absent: string[] = []
  const held = async (commit: string): Promise<boolean> => {
    try {
      return await mirrorHasCommit(layout, commit, options)
    } catch (error) {
      if (!(error instanceof NotACommitError)) throw error
      failed.set(commit, error)
      return true
    }
  }
  for (const commit of commits) if (!(await held(commit))) absent.push(commit)
  const fetch = async (some: string[]): Promise<void> => {
    try {
      await fetchCommits(layout, options.remote, some, options)
    } catch (error) {
      if (!(error instanceof FetchError && error.code === 'E_REF')) throw error
      if (some.length === 1) failed.set(some[0]!, error)
      else for (const commit of some) await fetch([commit])
    }
  }
  if (absent.length > 0) await fetch(absent)
  for (const commit of absent) {
    if (failed.has(commit)) continue
    if (!(await held(commit))) failed.set(commit, new FetchError('E_REF', `${options.remote.label}: the server sent no commit ${commit}`))
  }
}

/** The paths of a commit not in the cache as recorded; a cached copy that no longer matches is removed. */
async function missingFiles(layout: RepoLayout, commit: string, paths: string[], options: FetchFilesOptions, notes: string[]): Promise<string[]> {
  const sums = await readSums(layout, commit)
  const missing: string[] = []
  for (const path of new Set(paths)) {
    const cached = await checkCachedFile(layout, commit, path, sums)
    if (cached.state === 'ok') continue
    if (cached.state === 'mismatch') {
      await rm(commitFile(layout, commit, path), { force: true })
      notes.push(`${options.describe(commit, path)}: the cached copy no longer matched its recorded sha256 and was removed; fetching it again`)
    }
    missing.push(path)
  }
  return missing
}

interface RawAnswer {
  path: string
  content: Buffer
  declared: DeclaredHashes
}

/**
 * Ask the single-file API for these files of one commit; what it cannot serve, and what the commit's
 * trees (when the mirror has them already: local, no request) show is not a plain file, goes to `forGit`.
 */
async function askRaw(layout: RepoLayout, commit: string, missing: string[], options: FetchFilesOptions, result: FetchFilesResult, forGit: string[], host: { down: boolean }): Promise<RawAnswer[]> {
  const tree = (await exists(join(layout.git, 'config'))) && (await mirrorHasCommit(layout, commit, options)) ? await listTree(layout, commit, missing, options) : undefined
  const answers: RawAnswer[] = []
  for (const path of missing) {
    const entry = tree?.get(path)
    const url = options.rawUrl?.(commit, path)
    // Symlinks and what is not a plain file go through git, where where they lead is checked.
    if (host.down || !url || (entry && (entry.type !== 'blob' || entry.mode === '120000'))) {
      forGit.push(path)
      continue
    }
    const answer = await fetchRawFile(url, {
      label: options.describe(commit, path),
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      ...(options.rawHeaders ? { headers: options.rawHeaders } : {}),
      ...(options.rawRetry ? { retry: options.rawRetry } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    })
    if (!answer.ok) {
      // 404, a redirect, a 429 or 5xx that outlasted its retries, a network error: git is the fallback.
      if (answer.status !== 404) result.notes.push(`${options.describe(commit, path)}: the single-file API failed (${answer.reason}, ${answer.attempts} attempt(s)); asking git instead`)
      if (answer.transient) host.down = true
      forGit.push(path)
      continue
    }
    answers.push({ path, content: answer.content, declared: answer.declared })
  }
  return answers
}

/**
 * Bring the missing paths of each commit of `wanted` into `commits/<commit>/`, with one request for
 * the trees of every commit the mirror lacks and one for every blob needed, however many commits.
 * Call it holding the repository's lock.
 * Symlinks inside the repository are followed (their target's content is stored under the link's
 * path); a symlink leaving it, or `..`, is E_UNSAFE. A cached file that no longer matches its recorded
 * sha256 is removed and fetched again. Content from the single-file API is kept only when the commit's
 * tree (fetched without blobs) has the path as a plain file whose blob id matches it, and it matches the
 * hashes the host declared; otherwise git, which checks every object against its id, brings the file.
 */
export async function fetchFiles(layout: RepoLayout, wanted: Map<string, string[]>, options: FetchFilesOptions): Promise<FetchFilesResult> {
  const result: FetchFilesResult = { viaRaw: [], viaGit: [], notes: [], failed: new Map() }
  const forGit = new Map<string, string[]>()
  const answered = new Map<string, RawAnswer[]>()
  const host = { down: false }
  for (const [commit, paths] of wanted) {
    const missing = await missingFiles(layout, commit, paths, options, result.notes)
    if (missing.length === 0) continue
    const viaGit: string[] = []
    if (options.rawUrl && options.rawLimit > 0 && missing.length <= options.rawLimit) {
      const answers = await askRaw(layout, commit, missing, options, result, viaGit, host)
      if (answers.length > 0) answered.set(commit, answers)
    } else viaGit.push(...missing)
    if (viaGit.length > 0) forGit.set(commit, viaGit)
  }
  if (answered.size === 0 && forGit.size === 0) return result

  // The single-file APIs serve a symlink's text as if it were the file, and no declared hash tells the
  // two apart: only the tree's mode does. So every answer is checked against its commit's trees,
  // fetched in the one request that brings the trees git reads from.
  await ensureCommits(layout, [...new Set([...answered.keys(), ...forGit.keys()])], options, result.failed)
  for (const commit of result.failed.keys()) forGit.delete(commit)
  for (const [commit, answers] of answered) {
    if (result.failed.has(commit)) continue
    const tree = await listTree(layout, commit, answers.map((a) => a.path), options)
    for (const { path, content, declared } of answers) {
      const entry = tree.get(path)
      // Not a plain file in the tree (absent, a symlink, a submodule): git tells what it is, and follows or refuses a symlink.
      if (!entry || entry.type !== 'blob' || entry.mode === '120000') {
        forGit.set(commit, [...(forGit.get(commit) ?? []), path])
        continue
      }
      const id = gitBlobId(content, entry.oid.length === 64 ? 'sha256' : 'sha1')
      const sha256 = sha256Of(content)
      if (id !== entry.oid || (declared.sha256 && declared.sha256 !== sha256)) {
        result.notes.push(`${options.describe(commit, path)}: the single-file API sent content whose hash is not the file's (blob ${id}, expected ${entry.oid}); asking git instead`)
        forGit.set(commit, [...(forGit.get(commit) ?? []), path])
        continue
      }
      await recordSums(layout, commit, new Map([[path, sha256]]))
      await writeCommitFile(layout, commit, path, content, (p) => options.describe(commit, p))
      result.viaRaw.push({ commit, path })
    }
  }
  if (forGit.size === 0) return result

  // Each wanted path resolves, through symlinks that stay inside, to a blob; each round of symlinks is one request for all commits.
  interface Wanted extends CommitPath {
    current: string
    hops: number
  }
  let open: Wanted[] = [...forGit].flatMap(([commit, paths]) => paths.map((path) => ({ commit, path, current: path, hops: 0 })))
  const resolved: (CommitPath & { entry: TreeEntry })[] = []
  const fetchedOids = new Set<string>()
  while (open.length > 0) {
    const links: (Wanted & { entry: TreeEntry })[] = []
    const newOids = new Set<string>()
    for (const [commit, atCommit] of groupBy(open, (w) => w.commit)) {
      const entries = await listTree(layout, commit, [...new Set(atCommit.map((w) => w.current))], options)
      for (const w of atCommit) {
        const entry = entries.get(w.current)
        const name = options.describe(commit, w.path)
        if (!entry) throw new MissingFileError('E_FETCH', `${name}: no file ${quoted(w.current)} at commit ${commit}`)
        if (entry.type === 'tree') throw new FetchError('E_FETCH', `${name}: ${quoted(w.current)} is a directory, not a file`)
        if (entry.type !== 'blob') throw new FetchError('E_FETCH', `${name}: ${quoted(w.current)} is a submodule, not a file`)
        if (entry.mode === '120000') links.push({ ...w, entry })
        else resolved.push({ commit, path: w.path, entry })
        if (!fetchedOids.has(entry.oid)) newOids.add(entry.oid)
      }
    }
    await fetchBlobs(layout, options.remote, [...newOids], options)
    for (const oid of newOids) fetchedOids.add(oid)
    if (links.length === 0) break
    const targets = await readBlobs(layout, links.map((l) => l.entry.oid), 4096, options)
    open = links.map((w, i) => {
      const blob = targets[i]
      const name = options.describe(w.commit, w.path)
      if (!blob || !('content' in blob)) throw new FetchError('E_FETCH', `${name}: cannot read symlink ${w.current}`)
      const target = blob.content.toString('utf8')
      const next = posix.normalize(posix.join(posix.dirname(w.current), target))
      if (posix.isAbsolute(target) || next === '..' || next.startsWith('../') || next === '.') {
        throw new FetchError('E_UNSAFE', `${name}: ${quoted(w.current)} is a symlink to ${quoted(target)}, outside the repository`)
      }
      if (w.hops + 1 > MAX_SYMLINK_HOPS) throw new FetchError('E_UNSAFE', `${name}: too many levels of symlinks`)
      return { commit: w.commit, path: w.path, current: next, hops: w.hops + 1 }
    })
  }

  const blobs = await readBlobs(layout, [...new Set(resolved.map((r) => r.entry.oid))], options.maxBytes, options)
  const content = new Map(blobs.map((b) => [b.oid, b]))
  for (const [commit, atCommit] of groupBy(resolved, (r) => r.commit)) {
    const toWrite = new Map<string, Buffer>()
    for (const { path, entry } of atCommit) {
      const name = options.describe(commit, path)
      const blob = content.get(entry.oid)
      if (!blob || 'missing' in blob) throw new FetchError('E_FETCH', `${name}: the server did not send ${entry.oid}`)
      if ('tooLarge' in blob) throw new FetchError('E_UNSAFE', `${name}: ${blob.tooLarge} bytes is over the size limit of ${options.maxBytes}`)
      // git checked each object against its id on receipt; this catches a mirror damaged on disk since.
      if (gitBlobId(blob.content, entry.oid.length === 64 ? 'sha256' : 'sha1') !== entry.oid) {
        await rm(layout.git, { recursive: true, force: true })
        throw new FetchError('E_CACHE', `${name}: the mirror's copy of ${entry.oid} was damaged; the mirror is removed, run again`)
      }
      toWrite.set(path, blob.content)
    }
    await recordSums(layout, commit, new Map([...toWrite].map(([path, bytes]) => [path, sha256Of(bytes)])))
    for (const [path, bytes] of toWrite) {
      await writeCommitFile(layout, commit, path, bytes, (p) => options.describe(commit, p))
      result.viaGit.push({ commit, path })
    }
  }
  return result
}

/** `items` by `key`, in the order first met. */
export function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>()
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item])
  return groups
}

/**
 * A file of a commit into the cache. A name git holds but this filesystem cannot (a part of the
 * path over 255 bytes) fails that file alone, named by its URL, not the others of its commit.
 */
async function writeCommitFile(layout: RepoLayout, commit: string, path: string, bytes: Buffer | string, describe: (path: string) => string): Promise<void> {
  try {
    await writeAtomic(commitFile(layout, commit, path), bytes, layout.tmp)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENAMETOOLONG') throw error
    throw new FetchError('E_CACHE', `${describe(path)}: its name is too long for the cache's filesystem`, {}, { cause: error })
  }
}
