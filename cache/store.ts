/** Putting files of one commit into the cache: raw HTTP for a few files, else the git mirror. */

import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, readdir, readFile, rm, stat, utimes } from 'node:fs/promises'
import { join, posix } from 'node:path'
import { FetchError, quoted } from '../src/errors.ts'
import { cacheError, writeAtomic } from './fs.ts'
import { type GitRemote, type GitRunOptions, type TreeEntry, fetchBlobs, fetchCommit, hasCommit, listTree, objectType, prepareMirror, readBlobs } from './git.ts'
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
  /** Per path, the single-file API URL when the host has one. */
  rawUrl?: (path: string) => string | undefined
  rawHeaders?: Record<string, string>
  /** Use the single-file API only when at most this many files are missing (0: never). */
  rawLimit: number
  /** Refuse files larger than this. */
  maxBytes: number
  /** Where errors say a file came from: path to the URL that named it. */
  describe: (path: string) => string
  /** How the single-file API is retried (tests shorten it). */
  rawRetry?: Partial<RetryPolicy>
}

export interface FetchFilesResult {
  viaRaw: string[]
  viaGit: string[]
  /** What went wrong on the way and was made good (raw answers refused or failed, cached files replaced). */
  notes: string[]
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

/** Make sure the mirror holds the commit and its trees, fetching them when it does not (call under the lock). */
async function ensureCommit(layout: RepoLayout, commit: string, options: FetchFilesOptions): Promise<void> {
  await prepareMirror(layout, options)
  if (await mirrorHasCommit(layout, commit, options)) return
  await fetchCommit(layout, options.remote, commit, options)
  if (!(await mirrorHasCommit(layout, commit, options))) throw new FetchError('E_REF', `${options.remote.label}: the server sent no commit ${commit}`)
}

/**
 * Bring the missing `paths` of `commit` into `commits/<commit>/`. Call it holding the repository's lock.
 * Symlinks inside the repository are followed (their target's content is stored under the link's
 * path); a symlink leaving it, or `..`, is E_UNSAFE. A cached file that no longer matches its recorded
 * sha256 is removed and fetched again. Content from the single-file API is kept only when the commit's
 * tree (fetched without blobs) has the path as a plain file whose blob id matches it, and it matches the
 * hashes the host declared; otherwise git, which checks every object against its id, brings the file.
 */
export async function fetchFiles(layout: RepoLayout, commit: string, paths: string[], options: FetchFilesOptions): Promise<FetchFilesResult> {
  const result: FetchFilesResult = { viaRaw: [], viaGit: [], notes: [] }
  const sums = await readSums(layout, commit)
  const missing: string[] = []
  for (const path of new Set(paths)) {
    const cached = await checkCachedFile(layout, commit, path, sums)
    if (cached.state === 'ok') continue
    if (cached.state === 'mismatch') {
      await rm(commitFile(layout, commit, path), { force: true })
      result.notes.push(`${options.describe(path)}: the cached copy no longer matched its recorded sha256 and was removed; fetching it again`)
    }
    missing.push(path)
  }
  if (missing.length === 0) return result

  let forGit = missing
  if (options.rawUrl && options.rawLimit > 0 && missing.length <= options.rawLimit) {
    forGit = []
    // With the commit's trees already in the mirror (local, no request), raw content is checked against their blob ids.
    let tree = (await exists(join(layout.git, 'config'))) && (await mirrorHasCommit(layout, commit, options)) ? await listTree(layout, commit, missing, options) : undefined
    const answers: { path: string; content: Buffer; declared: DeclaredHashes }[] = []
    let hostDown = false
    for (const path of missing) {
      const entry = tree?.get(path)
      const url = options.rawUrl(path)
      // Symlinks and what is not a plain file go through git, where where they lead is checked.
      if (hostDown || !url || (entry && (entry.type !== 'blob' || entry.mode === '120000'))) {
        forGit.push(path)
        continue
      }
      const answer = await fetchRawFile(url, {
        label: options.describe(path),
        timeoutMs: options.timeoutMs,
        maxBytes: options.maxBytes,
        ...(options.rawHeaders ? { headers: options.rawHeaders } : {}),
        ...(options.rawRetry ? { retry: options.rawRetry } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      })
      if (!answer.ok) {
        // 404, a redirect, a 429 or 5xx that outlasted its retries, a network error: git is the fallback.
        if (answer.status !== 404) result.notes.push(`${options.describe(path)}: the single-file API failed (${answer.reason}, ${answer.attempts} attempt(s)); asking git instead`)
        if (answer.transient) hostDown = true
        forGit.push(path)
        continue
      }
      answers.push({ path, content: answer.content, declared: answer.declared })
    }
    // The single-file APIs serve a symlink's text as if it were the file, and no declared hash tells the
    // two apart: only the tree's mode does. So every answer is checked against the commit's trees, fetched once.
    if (!tree && answers.length > 0) {
      await ensureCommit(layout, commit, options)
      tree = await listTree(layout, commit, missing, options)
    }
    for (const { path, content, declared } of answers) {
      const entry = tree?.get(path)
      // Not a plain file in the tree (absent, a symlink, a submodule): git tells what it is, and follows or refuses a symlink.
      if (!entry || entry.type !== 'blob' || entry.mode === '120000') {
        forGit.push(path)
        continue
      }
      const id = gitBlobId(content, entry.oid.length === 64 ? 'sha256' : 'sha1')
      const sha256 = sha256Of(content)
      if (id !== entry.oid || (declared.sha256 && declared.sha256 !== sha256)) {
        result.notes.push(`${options.describe(path)}: the single-file API sent content whose hash is not the file's (blob ${id}, expected ${entry.oid}); asking git instead`)
        forGit.push(path)
        continue
      }
      await recordSums(layout, commit, new Map([[path, sha256]]))
      await writeCommitFile(layout, commit, path, content, options.describe)
      result.viaRaw.push(path)
    }
  }
  if (forGit.length === 0) return result

  await ensureCommit(layout, commit, options)

  // Each wanted path resolves, through symlinks that stay inside, to a blob.
  const wanted = new Map<string, { current: string; hops: number }>(forGit.map((p) => [p, { current: p, hops: 0 }]))
  const resolved = new Map<string, TreeEntry>()
  let fetchedOids = new Set<string>()
  while (wanted.size > 0) {
    const entries = await listTree(layout, commit, [...new Set([...wanted.values()].map((w) => w.current))], options)
    const links = new Map<string, TreeEntry>()
    for (const [path, w] of wanted) {
      const entry = entries.get(w.current)
      if (!entry) throw new MissingFileError('E_FETCH', `${options.describe(path)}: no file ${quoted(w.current)} at commit ${commit}`)
      if (entry.type === 'tree') throw new FetchError('E_FETCH', `${options.describe(path)}: ${quoted(w.current)} is a directory, not a file`)
      if (entry.type !== 'blob') throw new FetchError('E_FETCH', `${options.describe(path)}: ${quoted(w.current)} is a submodule, not a file`)
      if (entry.mode === '120000') links.set(path, entry)
      else {
        resolved.set(path, entry)
        wanted.delete(path)
      }
    }
    const oids = [...new Set([...resolved.values(), ...links.values()].map((e) => e.oid))].filter((o) => !fetchedOids.has(o))
    await fetchBlobs(layout, options.remote, oids, options)
    fetchedOids = new Set([...fetchedOids, ...oids])
    if (links.size === 0) break
    const targets = await readBlobs(layout, [...links.values()].map((e) => e.oid), 4096, options)
    let i = 0
    for (const [path, entry] of links) {
      const blob = targets[i++]
      const w = wanted.get(path)!
      if (!blob || !('content' in blob)) throw new FetchError('E_FETCH', `${options.describe(path)}: cannot read symlink ${w.current}`)
      const target = blob.content.toString('utf8')
      const next = posix.normalize(posix.join(posix.dirname(w.current), target))
      if (posix.isAbsolute(target) || next === '..' || next.startsWith('../') || next === '.') {
        throw new FetchError('E_UNSAFE', `${options.describe(path)}: ${quoted(w.current)} is a symlink to ${quoted(target)}, outside the repository`)
      }
      if (++w.hops > MAX_SYMLINK_HOPS) throw new FetchError('E_UNSAFE', `${options.describe(path)}: too many levels of symlinks`)
      w.current = next
      void entry
    }
  }

  const byOid = [...new Set([...resolved.values()].map((e) => e.oid))]
  const blobs = await readBlobs(layout, byOid, options.maxBytes, options)
  const content = new Map(blobs.map((b) => [b.oid, b]))
  const toWrite = new Map<string, Buffer>()
  for (const [path, entry] of resolved) {
    const blob = content.get(entry.oid)
    if (!blob || 'missing' in blob) throw new FetchError('E_FETCH', `${options.describe(path)}: the server did not send ${entry.oid}`)
    if ('tooLarge' in blob) throw new FetchError('E_UNSAFE', `${options.describe(path)}: ${blob.tooLarge} bytes is over the size limit of ${options.maxBytes}`)
    // git checked each object against its id on receipt; this catches a mirror damaged on disk since.
    if (gitBlobId(blob.content, entry.oid.length === 64 ? 'sha256' : 'sha1') !== entry.oid) {
      await rm(layout.git, { recursive: true, force: true })
      throw new FetchError('E_CACHE', `${options.describe(path)}: the mirror's copy of ${entry.oid} was damaged; the mirror is removed, run again`)
    }
    toWrite.set(path, blob.content)
  }
  await recordSums(layout, commit, new Map([...toWrite].map(([path, bytes]) => [path, sha256Of(bytes)])))
  for (const [path, bytes] of toWrite) {
    await writeCommitFile(layout, commit, path, bytes, options.describe)
    result.viaGit.push(path)
  }
  return result
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
