/** Putting files of one commit into the cache: raw HTTP for a few files, else the git mirror. */

import { mkdir, readFile, stat, utimes, writeFile } from 'node:fs/promises'
import { posix } from 'node:path'
import { FetchError } from '../src/errors.ts'
import { writeAtomic } from './fs.ts'
import { type GitRemote, type GitRunOptions, type TreeEntry, fetchBlobs, fetchCommit, hasCommit, listTree, prepareMirror, readBlobs } from './git.ts'
import { CACHEDIR_TAG, type RepoLayout, commitFile } from './layout.ts'
import { fetchRawFile } from './raw.ts'

export interface RefListing {
  /** When the remote was listed (ISO 8601). */
  listed_at: string
  /** Full ref name to commit, tags peeled. */
  refs: Record<string, string>
}

export async function readRefListing(layout: RepoLayout): Promise<RefListing | undefined> {
  try {
    const listing = JSON.parse(await readFile(layout.refs, 'utf8')) as RefListing
    return typeof listing.listed_at === 'string' && typeof listing.refs === 'object' ? listing : undefined
  } catch {
    return undefined
  }
}

export async function writeRefListing(layout: RepoLayout, refs: Record<string, string>): Promise<RefListing> {
  const listing = { listed_at: new Date().toISOString(), refs }
  await writeAtomic(layout.refs, `${JSON.stringify(listing, null, 1)}\n`, layout.tmp)
  return listing
}

/** Create the root's CACHEDIR.TAG and the repository's repo.json when missing. */
export async function initRepoDir(layout: RepoLayout): Promise<void> {
  await mkdir(layout.tmp, { recursive: true })
  const tag = `${layout.root}/CACHEDIR.TAG`
  if (!(await exists(tag))) await writeFile(tag, CACHEDIR_TAG)
  if (!(await exists(layout.info))) {
    await writeAtomic(layout.info, `${JSON.stringify({ host: layout.host, repository: layout.repository })}\n`, layout.tmp)
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
}

export interface FetchFilesResult {
  viaRaw: string[]
  viaGit: string[]
}

const MAX_SYMLINK_HOPS = 8

/**
 * Bring the missing `paths` of `commit` into `commits/<commit>/`. Call it holding the repository's lock.
 * Symlinks inside the repository are followed (their target's content is stored under the link's
 * path); a symlink leaving it, or `..`, is E_UNSAFE.
 */
export async function fetchFiles(layout: RepoLayout, commit: string, paths: string[], options: FetchFilesOptions): Promise<FetchFilesResult> {
  const missing: string[] = []
  for (const path of new Set(paths)) if (!(await isFile(commitFile(layout, commit, path)))) missing.push(path)
  const result: FetchFilesResult = { viaRaw: [], viaGit: [] }
  if (missing.length === 0) return result

  let forGit = missing
  if (options.rawUrl && options.rawLimit > 0 && missing.length <= options.rawLimit) {
    forGit = []
    for (const path of missing) {
      const url = options.rawUrl(path)
      const answer = url ? await fetchRawFile(url, { timeoutMs: options.timeoutMs, maxBytes: options.maxBytes, ...(options.rawHeaders ? { headers: options.rawHeaders } : {}) }) : undefined
      if (answer?.ok) {
        await writeAtomic(commitFile(layout, commit, path), answer.content, layout.tmp)
        result.viaRaw.push(path)
      } else {
        forGit.push(path) // 404, 5xx, a redirect or a network error: git is the fallback
      }
    }
  }
  if (forGit.length === 0) return result

  await prepareMirror(layout, options)
  if (!(await hasCommit(layout, commit, options))) {
    await fetchCommit(layout, options.remote, commit, options)
    if (!(await hasCommit(layout, commit, options))) throw new FetchError('E_REF', `${options.remote.label}: the server sent no commit ${commit}`)
  }

  // Each wanted path resolves, through symlinks that stay inside, to a blob.
  const wanted = new Map<string, { current: string; hops: number }>(forGit.map((p) => [p, { current: p, hops: 0 }]))
  const resolved = new Map<string, TreeEntry>()
  let fetchedOids = new Set<string>()
  while (wanted.size > 0) {
    const entries = await listTree(layout, commit, [...new Set([...wanted.values()].map((w) => w.current))], options)
    const links = new Map<string, TreeEntry>()
    for (const [path, w] of wanted) {
      const entry = entries.get(w.current)
      if (!entry) throw new FetchError('E_FETCH', `${options.describe(path)}: no file '${w.current}' at commit ${commit}`)
      if (entry.type === 'tree') throw new FetchError('E_FETCH', `${options.describe(path)}: '${w.current}' is a directory, not a file`)
      if (entry.type !== 'blob') throw new FetchError('E_FETCH', `${options.describe(path)}: '${w.current}' is a submodule, not a file`)
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
        throw new FetchError('E_UNSAFE', `${options.describe(path)}: '${w.current}' is a symlink to '${target}', outside the repository`)
      }
      if (++w.hops > MAX_SYMLINK_HOPS) throw new FetchError('E_UNSAFE', `${options.describe(path)}: too many levels of symlinks`)
      w.current = next
      void entry
    }
  }

  const byOid = [...new Set([...resolved.values()].map((e) => e.oid))]
  const blobs = await readBlobs(layout, byOid, options.maxBytes, options)
  const content = new Map(blobs.map((b) => [b.oid, b]))
  for (const [path, entry] of resolved) {
    const blob = content.get(entry.oid)
    if (!blob || 'missing' in blob) throw new FetchError('E_FETCH', `${options.describe(path)}: the server did not send ${entry.oid}`)
    if ('tooLarge' in blob) throw new FetchError('E_UNSAFE', `${options.describe(path)}: ${blob.tooLarge} bytes is over the size limit of ${options.maxBytes}`)
    await writeAtomic(commitFile(layout, commit, path), blob.content, layout.tmp)
    result.viaGit.push(path)
  }
  return result
}
