/** Ref resolution: which listed branch or tag is the prefix of `<ref>/<path>`. */

import { FetchError } from '../errors.ts'

/** A remote's refs: full name (`refs/heads/main`, `refs/tags/v1`, `HEAD`) to commit (tags peeled). */
export type RefMap = Record<string, string>

export interface ResolvedRef {
  /** The ref as the URL wrote it (`main`, `feature/x/y`, `v1.0`), or the SHA. */
  ref: string
  /** The full ref name (`refs/heads/main`), or the SHA. */
  fullRef: string
  commit: string
  /** The file path inside the repository, `/`-separated. */
  path: string
  /** Branches move; tags and commits do not (only branches are re-listed after the TTL). */
  kind: 'branch' | 'tag' | 'commit' | 'other'
}

/** A full SHA-1 or SHA-256 commit id, in either case. */
export function isFullSha(s: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i.test(s)
}

/** Parse `git ls-remote` output; a peeled `^{}` line replaces its annotated tag's object id. */
export function parseLsRemote(output: string): RefMap {
  const refs: RefMap = {}
  for (const line of output.split('\n')) {
    const m = /^([0-9a-f]{40,64})\t(.+)$/.exec(line.trim())
    if (!m) continue
    const [, sha, name] = m as unknown as [string, string, string]
    if (name.endsWith('^{}')) refs[name.slice(0, -3)] = sha
    else if (!Object.hasOwn(refs, name)) refs[name] = sha
  }
  return refs
}

function kindOf(name: string): ResolvedRef['kind'] {
  if (name.startsWith('refs/heads/') || name === 'HEAD') return 'branch'
  if (name.startsWith('refs/tags/')) return 'tag'
  return 'other'
}

/** The names a URL may use for a ref: its short name for branches and tags, and its full name. */
function namesOf(full: string): string[] {
  const short = full.replace(/^refs\/(heads|tags)\//, '')
  return short === full ? [full] : [short, full]
}

function startsWith(segments: string[], prefix: string[]): boolean {
  return prefix.length < segments.length && prefix.every((p, i) => segments[i] === p)
}

/**
 * Split `<ref>/<path>` against a listing. A full SHA is taken as is (that it names a commit, not a
 * tree, blob or tag, is checked where it is fetched). Otherwise exactly one listed ref must be a
 * prefix; none or several is E_REF naming the candidates. `kind` keeps to branches or to tags.
 */
export function matchRef(url: string, segments: string[], listed: RefMap | undefined, explicitRef?: string, kind?: 'heads' | 'tags'): ResolvedRef {
  // A URL that says a branch or a tag (GitLab's `?ref_type=`) is matched against those alone.
  const refs = kind && listed ? Object.fromEntries(Object.entries(listed).filter(([name]) => name.startsWith(`refs/${kind}/`))) : listed
  if (explicitRef !== undefined) {
    const path = segments.join('/')
    if (isFullSha(explicitRef)) return { ref: explicitRef, fullRef: explicitRef, commit: explicitRef.toLowerCase(), path, kind: 'commit' }
    const full = [explicitRef, `refs/heads/${explicitRef}`, `refs/tags/${explicitRef}`].filter((n) => refs !== undefined && Object.hasOwn(refs, n))
    if (full.length === 1) return { ref: explicitRef, fullRef: full[0]!, commit: refs![full[0]!]!, path, kind: kindOf(full[0]!) }
    throw refError(url, explicitRef, full, refs)
  }
  const first = segments[0] ?? ''
  if (isFullSha(first)) return { ref: first, fullRef: first, commit: first.toLowerCase(), path: segments.slice(1).join('/'), kind: 'commit' }
  const matches = new Map<string, number>()
  for (const full of Object.keys(refs ?? {})) {
    for (const name of namesOf(full)) {
      const prefix = name.split('/')
      if (startsWith(segments, prefix)) matches.set(full, Math.max(matches.get(full) ?? 0, prefix.length))
    }
  }
  if (matches.size === 1) {
    const [[full, length]] = [...matches] as [[string, number]]
    return { ref: segments.slice(0, length).join('/'), fullRef: full, commit: refs![full]!, path: segments.slice(length).join('/'), kind: kindOf(full) }
  }
  throw refError(url, segments.join('/'), [...matches.keys()], refs)
}

function refError(url: string, wanted: string, matches: string[], refs: RefMap | undefined): FetchError {
  if (matches.length > 1) {
    return new FetchError('E_REF', `${url}: ambiguous ref, '${wanted}' starts with each of: ${matches.join(', ')}`)
  }
  const known = Object.keys(refs ?? {}).filter((n) => n === 'HEAD' || n.startsWith('refs/heads/') || n.startsWith('refs/tags/'))
  const shown = known.slice(0, 12).map((n) => n.replace(/^refs\/(heads|tags)\//, '')).join(', ')
  const more = known.length > 12 ? ` and ${known.length - 12} more` : ''
  const hint = /^[0-9a-f]{7,39}$/.test(wanted.split('/')[0] ?? '') ? ' (abbreviated SHAs are not resolved; use the full SHA)' : ''
  return new FetchError('E_REF', `${url}: no branch or tag of the repository starts '${wanted}'${hint}; candidates: ${shown || 'none'}${more}`)
}
