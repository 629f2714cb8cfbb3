/** The resolver: references in cases, host URLs, refs, credentials, prefetch, manifest and rewrite. */

import type { Location } from '../errors.ts'
import { AtomicFile } from '../io.ts'
import type { FormatOption } from '../../adapters/types.ts'
import type { EvalCase } from '../model.ts'
import type { CaseSource, ManifestEntry, PrefetchOptions, PrefetchResult, UndeclaredHost } from './options.ts'
import { PrefetchError, Session, prefetchUrls } from './prefetch.ts'
import { fieldPath, findReferences, undeclaredReferences } from './references.ts'
import { rewriteCases } from './rewrite.ts'
import { redactUrl } from './url.ts'

export { credentialFor, type Credential } from './credentials.ts'
export { BUILTIN_HOSTS, type HostConfig, type HostType, cloneUrl, hostTable, parseHostSpec, rawFileUrl } from './hosts.ts'
export type { CaseSource, ManifestEntry, PrefetchOptions, PrefetchResult, ResolverOptions, UndeclaredHost } from './options.ts'
export { checkSetting, MAX_TIMEOUT_SECONDS } from './options.ts'
export { PrefetchError, type PrefetchFailure, prefetchSummary, prefetchUrls, resolve } from './prefetch.ts'
export { findReferences, replaceReferences, type Reference, type Replacement } from './references.ts'
export { isFullSha, matchRef, parseLsRemote, type RefMap, type ResolvedRef } from './refs.ts'
export { rewriteCases, textOf } from './rewrite.ts'
export { parseBlobUrl, type BlobUrl } from './url.ts'
export {
  type CachedCommit,
  type CachedRepository,
  type PruneResult,
  cacheRoot,
  clearCache,
  listCache,
  parseDuration,
  pruneCache,
  releaseHeldLocks,
  rootKind,
} from '../../cache/index.ts'

/** Each case and where it is: its file and line where read from one (as read() names it), else its place among the cases. */
async function* casesOf(source: string | string[] | CaseSource, from: FormatOption | undefined, signal: AbortSignal | undefined): AsyncGenerator<{ c: EvalCase; place: Location }> {
  const [{ read, placeOf }, { untilAborted }] = await Promise.all([import('../read.ts'), import('../abort.ts')])
  if (typeof source === 'string' || (Array.isArray(source) && source.every((s) => typeof s === 'string'))) {
    for (const file of typeof source === 'string' ? [source] : (source as string[])) {
      let record = 0
      for await (const c of read(file, { ...(from ? { from } : {}), ...(signal ? { signal } : {}) })) yield { c, place: placeOf(c) ?? { file, record: record++ } }
    }
    return
  }
  let record = 0
  for await (const c of signal ? untilAborted(source as CaseSource, signal) : (source as CaseSource)) yield { c, place: { record: record++ } }
}

/**
 * Fetch every file the cases reference into the cache. `source` is cases, or dataset files read
 * through the pipeline. Resolves to one manifest entry per URL; throws a PrefetchError naming each
 * URL that failed and where the first case holding it is (after trying them all).
 */
export async function prefetch(source: string | string[] | CaseSource, options: PrefetchOptions = {}): Promise<PrefetchResult> {
  const session = new Session(options)
  const urls: string[] = []
  const places = new Map<string, Location>()
  const undeclared = new Map<string, UndeclaredHost>()
  for await (const { c, place } of casesOf(source, options.from, options.signal)) {
    options.signal?.throwIfAborted()
    for (const ref of findReferences(c, session.hosts)) {
      urls.push(ref.url)
      if (!places.has(ref.url)) places.set(ref.url, { ...place, field: fieldPath(ref.pointer) })
    }
    for (const { host, url } of undeclaredReferences(c, session.hosts)) {
      const seen = undeclared.get(host)
      if (seen) seen.references++
      else undeclared.set(host, { host, references: 1, first: redactUrl(url) })
    }
  }
  const told = undeclared.size > 0 ? { undeclared: [...undeclared.values()] } : {}
  try {
    return { ...(await prefetchUrls(urls, options, session, places)), ...told }
  } catch (error) {
    if (error instanceof PrefetchError) Object.assign(error.result, told)
    throw error
  }
}

/** Write the manifest: `{ entries: [{ url, host, repository, ref, commit, path, local_path, bytes, sha256 }] }`. */
export async function writeManifest(file: string, entries: ManifestEntry[]): Promise<void> {
  const out = await AtomicFile.create(file)
  try {
    await out.sink.write(`${JSON.stringify({ entries }, null, 2)}\n`)
    await out.commit()
  } catch (error) {
    await out.abort()
    throw error
  }
}

/**
 * Write a copy of a dataset, in its own format, whose references point at the cached files
 * (or, with `embed`, hold their text).
 */
export async function rewriteDataset(
  input: string,
  output: string,
  entries: ManifestEntry[],
  options: { from?: FormatOption; embed?: boolean; hosts?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  const [{ read, placeOf }, { write }] = await Promise.all([import('../read.ts'), import('../write.ts')])
  const { detect } = await import('../detect.ts')
  const detected = await detect(input)
  const from = options.from ?? detected.format
  const session = new Session({ ...(options.hosts ? { hosts: options.hosts } : {}), ...(options.env ? { env: options.env } : {}) })
  const cases = rewriteCases(read(input, { from, container: detected.container }), entries, { embed: options.embed === true, hosts: session.hosts, file: input, placeOf })
  await write(cases, output, { to: from, container: detected.container })
}
