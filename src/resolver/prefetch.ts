/**
 * Prefetch: parse every referenced URL, resolve its ref (one listing per repository and run at most),
 * and bring each repository's files into the cache with one fetch for all its commits, repositories in parallel.
 */

import { createHash } from 'node:crypto'
import { setMaxListeners } from 'node:events'
import { readFile } from 'node:fs/promises'
import {
  type CachedState,
  type GitRemote,
  type GitRunOptions,
  MissingFileError,
  NotACommitError,
  type RepoLayout,
  cacheRoot,
  checkCacheRoot,
  checkCachedFile,
  commitFile,
  earlierCommits,
  fetchFiles,
  groupBy,
  initRepoDir,
  lsRemote,
  openCacheRoot,
  readRefListing,
  readSums,
  repoLayout,
  sweepTemp,
  touchCommit,
  withLock,
  writeRefListing,
} from '../../cache/index.ts'
import { type ErrorCode, EvalferryError, FetchError, type Location, UsageError, formatLocation, quoted, requireAbortSignal } from '../errors.ts'
import { interruptSignal } from '../io.ts'
import { type Credential, credentialFor } from './credentials.ts'
import { type HostConfig, type HostType, cloneUrl, hostTable, rawFileUrl, servesRawPath } from './hosts.ts'
import { checkSetting, DEFAULTS, envTimeoutSeconds, MAX_TIMEOUT_SECONDS, type ManifestEntry, type PrefetchResult, type ResolverOptions, isOffline } from './options.ts'
import { type RefMap, type ResolvedRef, isFullSha, matchRef, parseLsRemote } from './refs.ts'
import { type BlobUrl, parseBlobUrl, redactUrl } from './url.ts'

/** What the run has brought so far: an entry per URL, and the cached copies written in this run. */
interface Outcome {
  entries: ManifestEntry[]
  /** Local paths of the files fetched (not found in the cache) in this run. */
  fetched: Set<string>
}

interface RepoWork {
  host: HostConfig
  repository: string
  layout: RepoLayout
  urls: BlobUrl[]
}

/** How each type of host writes the page of one file. */
const FILE_PAGES: Record<HostType, string> = {
  github: '/<owner>/<repo>/blob/<ref>/<path>',
  gitlab: '/<group…>/<project>/-/blob/<ref>/<path>',
  bitbucket: '/<workspace>/<repo>/src/<ref>/<path>',
  'bitbucket-server': '/projects/<KEY>/repos/<slug>/browse/<path>?at=<ref>',
}

/**
 * What to do about a URL that names no file: on a known host, the shape of a file's URL there; on
 * no known host, a host declared under the same name but another port is named, since a host's
 * name is written as URLs write it, port and all.
 */
export function notAFileHint(url: string, hosts: Map<string, HostConfig>): string {
  let authority: string
  try {
    const parsed = new URL(url)
    authority = parsed.host.toLowerCase()
  } catch {
    return 'a self-hosted one needs --host <name>=<base-url>'
  }
  const known = hosts.get(authority) ?? (authority.startsWith('www.') ? hosts.get(authority.slice(4)) : undefined)
  if (known) {
    const also = servesRawPath(known) ? ' (or /raw/<owner>/<repo>/<ref>/<path>)' : ''
    return `a file's URL on ${known.name} is ${FILE_PAGES[known.type]}${also}; a directory's or a repository's page names no file`
  }
  const bare = authority.replace(/:\d+$/, '')
  const near = [...hosts.values()].find((h) => !h.builtin && h.name !== authority && h.name.replace(/:\d+$/, '') === bare)
  if (near) return `a host is declared as ${near.name}, but this URL's host is ${authority}: name the host as URLs write it, --host ${authority}=<base-url> (the hosts option in the library)`
  return 'a self-hosted one needs --host <name>=<base-url>'
}

function checkSettings(options: ResolverOptions): void {
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
    if (options[key] !== undefined) checkSetting(key, options[key])
  }
}

/** What one run shares: settings, the host table, and the listings made so far. */
export class Session {
  readonly root: string
  readonly hosts: Map<string, HostConfig>
  readonly offline: boolean
  readonly env: NodeJS.ProcessEnv
  readonly startedAt = Date.now()
  /** Aborted when the caller's signal is, or the process is interrupted: what the prefetch started stops. */
  readonly signal: AbortSignal
  private readonly listings = new Map<string, Promise<RefMap>>()

  constructor(readonly options: ResolverOptions = {}) {
    this.env = options.env ?? process.env
    this.root = cacheRoot(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}, this.env)
    this.hosts = hostTable(options.hosts ?? [], this.env)
    this.offline = isOffline(options)
    checkSettings(options)
    requireAbortSignal('', options.signal)
    this.signal = options.signal ? AbortSignal.any([interruptSignal, options.signal]) : interruptSignal
    if (options.signal) setMaxListeners(0, this.signal)
    // The option was checked above; EVALFERRY_TIMEOUT is checked as it is read.
    this.setting('timeoutSeconds')
  }

  setting<K extends keyof typeof DEFAULTS>(key: K): number {
    const given = this.options[key]
    if (given !== undefined) return given
    return (key === 'timeoutSeconds' ? envTimeoutSeconds(this.env) : undefined) ?? DEFAULTS[key]
  }

  progress(message: string): void {
    this.options.onProgress?.(message)
  }

  /** The remote's refs, listed at most once per repository in this run (under the repository's lock). */
  listRefs(work: RepoWork, remote: GitRemote, credential: Credential | undefined, seen: string | undefined): Promise<RefMap> {
    const key = work.layout.dir
    let listing = this.listings.get(key)
    if (!listing) {
      listing = withLock(work.layout.lock, async () => {
        // Another process may have listed, or cleared the cache, while this one waited for the lock.
        await initRepoDir(work.layout)
        const current = await readRefListing(work.layout)
        if (current && current.listed_at !== seen && Date.parse(current.listed_at) >= this.startedAt - 1000) return current.refs
        this.progress(`listing refs of ${work.host.name}/${work.repository}`)
        const output = await lsRemote(work.layout.dir, remote, this.gitOptions(credential))
        return (await writeRefListing(work.layout, parseLsRemote(output))).refs
      }, this.lockOptions(work))
      this.listings.set(key, listing)
    }
    return listing
  }

  gitOptions(credential: Credential | undefined): GitRunOptions & { timeoutMs: number } {
    return {
      timeoutMs: this.setting('timeoutSeconds') * 1000,
      env: this.env,
      secrets: credential?.secrets ?? [],
      signal: this.signal,
      ...(credential ? { credentialSource: credential.source } : {}),
    }
  }

  lockOptions(work: RepoWork): { onWait: () => void; signal: AbortSignal } {
    return { signal: this.signal, onWait: () => this.progress(`waiting for another process working on ${work.host.name}/${work.repository}`) }
  }
}

/** Run `task` over `items`, at most `limit` at once. */
async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const workers = Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, async () => {
    while (next < items.length) await task(items[next++]!)
  })
  await Promise.all(workers)
}

function remoteFor(work: RepoWork, credential: Credential | undefined): GitRemote {
  return { url: cloneUrl(work.host, work.repository), label: `${work.host.name}/${work.repository}`, ...(credential ? { headers: credential.gitHeaders } : {}) }
}

interface Resolution {
  resolved: Map<string, ResolvedRef>
  /** When refs were taken from a listing cached before this run: its `listed_at`. */
  cachedListing?: string
}

async function resolveRefs(session: Session, work: RepoWork, remote: GitRemote, credential: Credential | undefined, fail: (url: string, e: unknown) => void): Promise<Resolution> {
  const resolved = new Map<string, ResolvedRef>()
  const needsListing = work.urls.filter((u) => !(u.ref !== undefined ? isFullSha(u.ref) : isFullSha(u.segments[0] ?? '')))
  for (const u of work.urls) if (!needsListing.includes(u)) resolved.set(u.url, matchRef(u.url, u.segments, undefined, u.ref, u.refKind))
  if (needsListing.length === 0) return { resolved }

  const cached = await readRefListing(work.layout)
  const ttlMs = session.setting('refTtlSeconds') * 1000
  const fresh = cached !== undefined && Date.now() - Date.parse(cached.listed_at) < ttlMs
  const attempt = (refs: RefMap | undefined): { ok: Map<string, ResolvedRef>; errors: Map<string, unknown> } => {
    const ok = new Map<string, ResolvedRef>()
    const errors = new Map<string, unknown>()
    for (const u of needsListing) {
      try {
        ok.set(u.url, matchRef(u.url, u.segments, refs, u.ref, u.refKind))
      } catch (error) {
        errors.set(u.url, error)
      }
    }
    return { ok, errors }
  }

  let result = attempt(cached?.refs)
  // Tags keep their commit; branches are trusted for the TTL; a miss may be a ref pushed since.
  const relist = !session.offline && (session.options.refresh === true || cached === undefined || result.errors.size > 0 || (!fresh && [...result.ok.values()].some((r) => r.kind !== 'tag')))
  if (relist) {
    try {
      result = attempt(await session.listRefs(work, remote, credential, cached?.listed_at))
    } catch (error) {
      for (const u of needsListing) fail(u.url, error)
      return { resolved }
    }
  } else if (session.offline && cached === undefined) {
    for (const u of needsListing) fail(u.url, new FetchError('E_OFFLINE', `${u.url}: offline, and the refs of ${work.host.name}/${work.repository} were never listed into the cache`))
    return { resolved }
  }
  for (const [url, error] of result.errors) {
    // Offline, the listing is the one cached: a ref pushed since is not in it, and cannot be listed.
    const offline = session.offline && cached && error instanceof FetchError && error.code === 'E_REF'
    fail(url, offline ? new FetchError('E_OFFLINE', `${error.message} (offline: the refs as listed into the cache at ${cached.listed_at})`) : error)
  }
  for (const [url, ref] of result.ok) resolved.set(url, ref)
  return { resolved, ...(!relist && cached ? { cachedListing: cached.listed_at } : {}) }
}

const REMOVED = 'it was removed meanwhile (by a cache clear or prune?)'

// A file stored with Git LFS is committed as a pointer to its content, which lives on an LFS server
// that neither git nor the raw-file APIs reach: a pointer is under 1024 bytes, `key value` lines
// beginning with the spec's version and holding the content's sha256 and size.
const LFS_POINTER_LIMIT = 1024
const LFS_POINTER = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\n(?:[a-z0-9.-]+ [^\n]*\n)+$/

/** The size of the content a Git LFS pointer stands for, or undefined when `content` is not one. */
function lfsPointerSize(content: Buffer): number | undefined {
  if (content.length >= LFS_POINTER_LIMIT) return undefined
  const text = content.toString('utf8')
  if (!LFS_POINTER.test(text) || !/^oid sha256:[0-9a-f]{64}$/m.test(text)) return undefined
  const size = /^size (\d+)$/m.exec(text)
  return size ? Number(size[1]) : undefined
}

async function fileEntry(u: BlobUrl, ref: ResolvedRef, local: string, checked: CachedState): Promise<ManifestEntry> {
  let bytes: number
  let sha256: string
  if (checked.state === 'ok') ({ bytes, sha256 } = checked)
  else {
    const content = await readFile(local)
    bytes = content.length
    sha256 = createHash('sha256').update(content).digest('hex')
  }
  return { url: u.url, host: u.host.name, repository: u.repository, ref: ref.ref, commit: ref.commit, path: ref.path, local_path: local, bytes, sha256 }
}

async function prefetchRepository(session: Session, work: RepoWork, outcome: Outcome, fail: (url: string, e: unknown) => void): Promise<void> {
  const credential = session.offline ? undefined : credentialFor(work.host, session.env)
  const remote = remoteFor(work, credential)
  const { resolved, cachedListing } = await resolveRefs(session, work, remote, credential, fail)

  // A file missing at a branch resolved from a cached listing may have been pushed since: those
  // are kept aside, and tried again once at the commits a new listing gives. Offline, a file not
  // cached at the commit a branch was last listed at may be cached at one it had before.
  const missingAtCachedBranch = new Map<BlobUrl, unknown>()
  const notCachedOffline = new Map<BlobUrl, unknown>()
  const byUrl = new Map(work.urls.map((u) => [u.url, u]))
  const failOrRelist = (url: string, error: unknown): void => {
    const u = byUrl.get(url)
    const branch = resolved.get(url)?.kind === 'branch'
    if (u && branch && cachedListing !== undefined && error instanceof MissingFileError) missingAtCachedBranch.set(u, error)
    else if (u && branch && session.offline && error instanceof FetchError && error.code === 'E_OFFLINE') notCachedOffline.set(u, error)
    else fail(url, error)
  }
  await prefetchAtCommits(session, work, remote, credential, work.urls, resolved, outcome, failOrRelist)
  if (notCachedOffline.size > 0) await serveEarlierCommits(session, work, remote, notCachedOffline, resolved, outcome, fail)
  if (missingAtCachedBranch.size === 0) return

  let refs: RefMap
  try {
    refs = await session.listRefs(work, remote, credential, cachedListing)
  } catch (error) {
    for (const u of missingAtCachedBranch.keys()) fail(u.url, error)
    return
  }
  const again: BlobUrl[] = []
  for (const [u, error] of missingAtCachedBranch) {
    const before = resolved.get(u.url)!.commit
    try {
      resolved.set(u.url, matchRef(u.url, u.segments, refs, u.ref, u.refKind))
    } catch (refError) {
      fail(u.url, refError)
      continue
    }
    // The ref has not moved: the file is not there.
    if (resolved.get(u.url)!.commit === before) fail(u.url, error)
    else again.push(u)
  }
  await prefetchAtCommits(session, work, remote, credential, again, resolved, outcome, fail)
}

/**
 * Offline, each of these branch URLs whose file is not cached at the branch's listed commit is
 * served from the latest commit the branch had before at which the file is cached (another run
 * listed the branch further on since this file was prefetched); a URL with none fails as it did.
 */
async function serveEarlierCommits(
  session: Session,
  work: RepoWork,
  remote: GitRemote,
  notCached: Map<BlobUrl, unknown>,
  resolved: Map<string, ResolvedRef>,
  outcome: Outcome,
  fail: (url: string, e: unknown) => void,
): Promise<void> {
  const listing = await readRefListing(work.layout)
  const again: BlobUrl[] = []
  for (const [u, error] of notCached) {
    const ref = resolved.get(u.url)!
    let found: string | undefined
    for (const commit of earlierCommits(listing, ref.fullRef)) {
      const state = await checkCachedFile(work.layout, commit, ref.path, await readSums(work.layout, commit))
      if (state.state === 'ok' || state.state === 'unrecorded') {
        found = commit
        break
      }
    }
    if (found === undefined) {
      fail(u.url, error)
      continue
    }
    session.progress(`offline: ${ref.ref} of ${remote.label} was listed at ${ref.commit.slice(0, 12)}, where ${quoted(ref.path)} is not cached; serving it as cached at ${found.slice(0, 12)}, where the branch was before`)
    resolved.set(u.url, { ...ref, commit: found })
    again.push(u)
  }
  await prefetchAtCommits(session, work, remote, undefined, again, resolved, outcome, fail)
}

/** Fetch the files these URLs name, every commit of the repository together (one request for trees, one for blobs). */
async function prefetchAtCommits(
  session: Session,
  work: RepoWork,
  remote: GitRemote,
  credential: Credential | undefined,
  urls: BlobUrl[],
  resolved: Map<string, ResolvedRef>,
  outcome: Outcome,
  fail: (url: string, e: unknown) => void,
): Promise<void> {
  const pathOf = (u: BlobUrl): string => resolved.get(u.url)!.path
  const named: BlobUrl[] = []
  for (const u of urls) {
    const ref = resolved.get(u.url)
    if (!ref) continue
    if (ref.path === '') fail(u.url, new FetchError('E_REF', `${u.url}: names the ref '${ref.ref}' but no file in it`))
    else named.push(u)
  }
  const byCommit = groupBy(named, (u) => resolved.get(u.url)!.commit)

  const sums = new Map<string, Map<string, string>>()
  const checked = new Map<string, CachedState>()
  const missing = new Map<string, BlobUrl[]>()
  for (const [commit, atCommit] of byCommit) {
    sums.set(commit, await readSums(work.layout, commit))
    for (const u of atCommit) {
      const state = await checkCachedFile(work.layout, commit, pathOf(u), sums.get(commit)!)
      checked.set(u.url, state)
      // Offline, a file cached before sums were recorded is served as it is: there is nothing to compare it with.
      if (state.state === 'ok' || (session.offline && state.state === 'unrecorded')) continue
      missing.set(commit, [...(missing.get(commit) ?? []), u])
    }
  }
  const drop = (commit: string, gone: BlobUrl[]): void => {
    const left = byCommit.get(commit)!.filter((u) => !gone.includes(u))
    if (left.length > 0) byCommit.set(commit, left)
    else byCommit.delete(commit)
  }
  if (missing.size > 0 && session.offline) {
    for (const [commit, atCommit] of missing) {
      for (const u of atCommit) {
        const damaged = checked.get(u.url)?.state === 'mismatch'
        const why = damaged ? 'its cached copy no longer matches the sha256 recorded when it was fetched (run online to fetch it again)' : 'is not in the cache'
        fail(u.url, new FetchError(damaged ? 'E_CACHE' : 'E_OFFLINE', `${u.url}: offline, and ${quoted(pathOf(u))} at ${commit.slice(0, 12)} ${why}`))
      }
      drop(commit, atCommit)
    }
    missing.clear()
  } else if (missing.size > 0) {
    const describe = (commit: string, path: string): string => missing.get(commit)?.find((u) => pathOf(u) === path)?.url ?? path
    try {
      await withLock(work.layout.lock, async () => {
        await initRepoDir(work.layout) // again: a `cache clear` may have run since
        await sweepTemp(work.layout.tmp)
        const how = await fetchFiles(work.layout, new Map([...missing].map(([commit, atCommit]) => [commit, atCommit.map(pathOf)])), {
          ...session.gitOptions(credential),
          remote,
          rawUrl: (commit, path) => rawFileUrl(work.host, work.repository, commit, path),
          ...(credential ? { rawHeaders: credential.rawHeaders } : {}),
          rawLimit: session.setting('rawFileLimit'),
          maxBytes: session.setting('maxFileBytes'),
          describe,
        })
        // What this process brought in: another may have fetched the rest while this one waited for the lock.
        for (const { commit, path } of [...how.viaGit, ...how.viaRaw]) outcome.fetched.add(commitFile(work.layout, commit, path))
        for (const note of how.notes) session.progress(note)
        for (const [commit, viaGit] of groupBy(how.viaGit, (f) => f.commit)) session.progress(`fetched ${viaGit.length} file(s) of ${remote.label} at ${commit.slice(0, 12)} with git`)
        for (const [commit, viaRaw] of groupBy(how.viaRaw, (f) => f.commit)) session.progress(`fetched ${viaRaw.length} file(s) of ${remote.label} at ${commit.slice(0, 12)} over HTTP`)
        for (const [commit, error] of how.failed) {
          // A SHA that names a tree, blob or tag fails every URL written with it, each named in its own error; another
          // failure of the commit (the server does not have it) fails its files to fetch, and its files cached are still given.
          const failing = error instanceof NotACommitError ? byCommit.get(commit)! : missing.get(commit)!
          for (const u of failing) fail(u.url, error instanceof NotACommitError ? new FetchError('E_REF', `${u.url}: ${error.message}`) : error)
          drop(commit, failing)
          missing.delete(commit)
        }
      }, session.lockOptions(work))
    } catch (error) {
      // A problem with one file names its URL: the other files are tried again without it.
      const all = [...missing.values()].flat()
      const culprit = error instanceof EvalferryError ? all.find((u) => error.message.startsWith(`${u.url}:`)) : undefined
      if (culprit) {
        fail(culprit.url, error)
        const rest = [...byCommit.values()].flat().filter((u) => u !== culprit)
        if (rest.length) await prefetchAtCommits(session, work, remote, credential, rest, resolved, outcome, fail)
        return
      }
      // A failure of the whole request (the host down, a timeout): the files already cached are still given.
      for (const [commit, atCommit] of missing) {
        for (const u of atCommit) fail(u.url, error)
        drop(commit, atCommit)
      }
      missing.clear()
    }
  }

  for (const [commit, atCommit] of byCommit) {
    await touchCommit(work.layout, commit)
    const fetchedHere = missing.get(commit) ?? []
    const after = fetchedHere.length > 0 ? await readSums(work.layout, commit) : sums.get(commit)!
    for (const u of atCommit) {
      const local = commitFile(work.layout, commit, pathOf(u))
      try {
        const state = fetchedHere.includes(u) ? await checkCachedFile(work.layout, commit, pathOf(u), after) : checked.get(u.url)!
        if (state.state === 'missing' || state.state === 'mismatch') throw new Error(state.state === 'missing' ? REMOVED : 'it does not match its recorded sha256')
        const entry = await fileEntry(u, resolved.get(u.url)!, local, state)
        // The pointer is what git holds, so it stays cached (a later run tells without a fetch), but it is never served as the file.
        const lfsSize = entry.bytes < LFS_POINTER_LIMIT ? lfsPointerSize(await readFile(local)) : undefined
        if (lfsSize !== undefined) {
          fail(u.url, new FetchError('E_FETCH', `${u.url}: ${quoted(entry.path)} is a Git LFS pointer: its content (${lfsSize} bytes) is stored with Git LFS, which is not fetched`))
          continue
        }
        outcome.entries.push(entry)
      } catch (error) {
        // Read after the lock was released: a clear or prune may have removed it since.
        const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? REMOVED : (error as Error).message
        fail(u.url, new FetchError('E_CACHE', `${u.url}: cached file ${local} cannot be read: ${why}`))
      }
    }
  }
}

/** One URL that failed: its message, and where the dataset holds it when known. */
export interface PrefetchFailure {
  url: string
  message: string
  location?: Location
}

/** Some references failed: `result` holds the entries of those that did not, `failures` one per URL that failed. */
export class PrefetchError extends FetchError {
  constructor(
    code: ErrorCode,
    message: string,
    location: Location,
    readonly result: PrefetchResult,
    readonly failures: PrefetchFailure[],
    options?: { cause?: unknown },
  ) {
    super(code, message, location, options)
  }
}

/**
 * Bring every file these URLs name into the cache; the result lists each URL's entry in the order
 * given (duplicates once). Throws a PrefetchError naming every URL that failed (and, from `places`,
 * where a dataset holds it), after trying them all; it carries the entries that succeeded.
 */
export async function prefetchUrls(urls: Iterable<string>, options: ResolverOptions = {}, session = new Session(options), places = new Map<string, Location>()): Promise<PrefetchResult> {
  const outcome: Outcome = { entries: [], fetched: new Set() }
  const failures = new Map<string, unknown>()
  const fail = (url: string, error: unknown): void => {
    if (!failures.has(url)) failures.set(url, error)
  }
  const order: string[] = []
  const work = new Map<string, RepoWork>()
  for (const url of new Set(urls)) {
    order.push(url)
    let parsed: BlobUrl | undefined
    try {
      parsed = parseBlobUrl(url, session.hosts)
    } catch (error) {
      fail(url, error)
      continue
    }
    if (!parsed) {
      fail(url, new FetchError('E_REF', `${redactUrl(url)}: not a blob URL naming a file on a known host (${notAFileHint(url, session.hosts)})`))
      continue
    }
    const key = `${parsed.host.name}/${parsed.repository}`
    let repo = work.get(key)
    if (!repo) {
      try {
        repo = { host: parsed.host, repository: parsed.repository, layout: repoLayout(session.root, parsed.host.name, parsed.repository), urls: [] }
      } catch (error) {
        fail(url, error)
        continue
      }
      work.set(key, repo)
    }
    repo.urls.push(parsed)
  }

  options.signal?.throwIfAborted()
  if (work.size > 0) await (session.offline ? checkCacheRoot(session.root) : openCacheRoot(session.root))
  await pool([...work.values()], session.setting('concurrency'), async (repo) => {
    // Aborted, no repository is begun; those under way fail as their git or HTTP is stopped.
    if (options.signal?.aborted) return
    try {
      await prefetchRepository(session, repo, outcome, fail)
    } catch (error) {
      for (const u of repo.urls) fail(u.url, error)
    }
  })

  // What failed because the caller aborted is no failure of its references.
  options.signal?.throwIfAborted()
  const position = new Map(order.map((u, i) => [u, i]))
  const entries = outcome.entries.sort((a, b) => position.get(a.url)! - position.get(b.url)!)
  // Counted by file, not by URL: URLs naming one file at one commit (other anchors, a blob and a raw form) share its cached copy.
  const files = new Set(entries.map((e) => e.local_path))
  const fetched = [...files].filter((local) => outcome.fetched.has(local)).length
  const result: PrefetchResult = { entries, files: files.size, fetched, cached: files.size - fetched }
  if (failures.size > 0) throw combinedFailure(new Map([...failures].sort((a, b) => position.get(a[0])! - position.get(b[0])!)), result, places)
  return result
}

function combinedFailure(failures: Map<string, unknown>, result: PrefetchResult, places: Map<string, Location>): PrefetchError {
  const messageOf = (url: string, error: unknown): string => {
    const message = error instanceof Error ? error.message : String(error)
    return message.includes(redactUrl(url)) ? message : `${redactUrl(url)}: ${message}`
  }
  const list: PrefetchFailure[] = [...failures].map(([url, error]) => {
    const location = places.get(url)
    return { url: redactUrl(url), message: messageOf(url, error), ...(location ? { location } : {}) }
  })
  // One error shared by many URLs (a repository that failed whole) is told once.
  const groups = new Map<unknown, string[]>()
  for (const [url, error] of failures) groups.set(error, [...(groups.get(error) ?? []), url])
  const lines = [...groups].map(([error, urls]) => {
    const place = formatLocation(places.get(urls[0]!) ?? {})
    if (urls.length === 1) return place + messageOf(urls[0]!, error)
    return `${place}${error instanceof Error ? error.message : String(error)} (${urls.length} references, first ${redactUrl(urls[0]!)})`
  })
  const first = [...groups.keys()].find((e): e is FetchError => e instanceof FetchError)
  const code = first?.code ?? 'E_FETCH'
  if (failures.size === 1) {
    const only = list[0]!
    return new PrefetchError(code, only.message, only.location ?? {}, result, list, { cause: first })
  }
  const message = lines.length === 1 ? lines[0]! : `${failures.size} reference(s) failed:\n  ${lines.slice(0, 50).join('\n  ')}${lines.length > 50 ? `\n  … and ${lines.length - 50} more` : ''}`
  return new PrefetchError(code, message, {}, result, list, { cause: first })
}

/**
 * The line `evalferry prefetch` ends with: the files (several URLs naming one file count once), where
 * they came from, and how many URLs named them, e.g.
 * `2 file(s) from 1 repository: 1 fetched, 1 already cached (named by 3 URL(s))`.
 */
export function prefetchSummary(result: PrefetchResult): string {
  const repositories = new Set(result.entries.map((e) => `${e.host}/${e.repository}`)).size
  const urls = result.entries.length === result.files ? '' : ` (named by ${result.entries.length} URLs)`
  return `${result.files} file(s) from ${repositories} repositor${repositories === 1 ? 'y' : 'ies'}: ${result.fetched} fetched, ${result.cached} already cached${urls}`
}

/** The local path of one blob URL's file, fetching it when it is not cached. */
export async function resolve(url: string, options: ResolverOptions = {}): Promise<string> {
  const result = await prefetchUrls([url], options)
  return result.entries[0]!.local_path
}
