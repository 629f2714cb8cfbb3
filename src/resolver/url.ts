/**
 * Blob URLs of GitHub, GitLab, Bitbucket and configured hosts, parsed into repository and `<ref>/<path>` segments.
 * A blame page (GitHub `/blame/`, GitLab `/-/blame/`, Bitbucket `/annotate/`) names the same file as its blob page.
 */

import { FetchError } from '../errors.ts'
import { BUILTIN_HOSTS, type HostConfig, type HostType, hostTable, servesRawPath, withType } from './hosts.ts'

export interface BlobUrl {
  /** The URL as written in the dataset. */
  url: string
  /** The host's configuration (its `name` is the host as written in URLs). */
  host: HostConfig
  /**
   * `owner/repo`, or `group/subgroup…/project` on GitLab; lower-cased on github.com and
   * bitbucket.org (see `CASELESS_HOSTS`).
   */
  repository: string
  /**
   * Decoded segments of `<ref>/<path>`: where the ref ends is only known from the remote's refs.
   * When `ref` is set (Bitbucket Server's `?at=`, or a ref written with encoded slashes), these are the path alone.
   */
  segments: string[]
  /** A ref named apart from the path: `?at=`, or one written `feature%2Fx` (`feature/x`). */
  ref?: string
  /** Lines from a `#L10-L20` style anchor. */
  lines?: { start: number; end: number }
  /** Whether the ref is a branch or a tag, where the URL says so (GitLab's `?ref_type=heads|tags`). */
  refKind?: 'heads' | 'tags'
}

/** The type of host whose pages a URL's path is shaped as, where it tells: GitLab's `/-/blob/`, Bitbucket Server's `/projects/<KEY>/repos/`. */
function typeByShape(path: string): HostType | undefined {
  if (/\/-\/(blob|raw|blame)\//.test(path)) return 'gitlab'
  if (/\/projects\/[^/]+\/repos\/[^/]+\/(browse|raw)\//.test(path)) return 'bitbucket-server'
  return undefined
}

/**
 * Hosts that name a repository without regard to case (GitHub's owners and repositories,
 * Bitbucket's workspaces and slugs, which it keeps lower-case): there, `Acme/Widgets` and
 * `acme/widgets` are one repository, fetched and cached once, under its lower-case name. Other
 * hosts, GitLab's and those configured, keep the name as written.
 */
const CASELESS_HOSTS = new Set(['github.com', 'bitbucket.org'])

const URL_SHAPE = /^(https?):\/\/([^/?#\s]+)(\/[^?#\s]*)?(\?[^#\s]*)?(#\S*)?$/i

// Query parameters that carry a secret: GitHub's private raw links (`?token=`), GitLab's `?private_token=`
// and `?access_token=`, a signed link's `sig` (Azure) or `X-Amz-Signature`, a `key` or `access_key`, and the like.
const SECRET_PARAMETER = /token|secret|passw(?:or)?d|credential|signature|api[-_]?key|^sig$|^(?:.*[-_])?key$|^auth(?:orization)?$/i

/** A query parameter's name as a server reads it (percent-decoded, `+` a space). */
function parameterName(raw: string): string {
  return [...new URLSearchParams(`${raw}=`).keys()][0] ?? raw
}

/** The URL with any `user:password@` replaced by `***@` and the values of secret query parameters by `***`, for messages and logs. */
export function redactUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/i, '$1***@')
    .replace(/([?&])([^=&#]*)=([^&#]*)/g, (whole, separator: string, name: string) => (SECRET_PARAMETER.test(parameterName(name)) ? `${separator}${name}=***` : whole))
}

function unsafe(url: string, why: string): FetchError {
  return new FetchError('E_UNSAFE', `${redactUrl(url)}: ${why}`)
}

// A DNS name or IPv4 address, or a bracketed IPv6 one, with an optional port: a host is also a cache directory name.
const HOST_NAME = /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/

function decodeSegment(url: string, segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw unsafe(url, `bad percent-encoding in '${segment}'`)
  }
}

function decodeSegments(url: string, raw: string[]): string[] {
  return raw.map((segment) => {
    const decoded = decodeSegment(url, segment)
    if (decoded === '.' || decoded === '..') throw unsafe(url, `'${decoded}' in the path is refused`)
    if (decoded === '') throw unsafe(url, 'an empty path segment (an absolute path) is refused')
    if (decoded.includes('/') || decoded.includes('\0')) throw unsafe(url, `path segment '${decoded}' holds a slash or NUL`)
    return decoded
  })
}

/** The ref of a first segment written with encoded slashes (`feature%2Fx%2Fy`, as Bitbucket links do), else undefined. */
function encodedRef(url: string, segment: string): string | undefined {
  const ref = decodeSegment(url, segment)
  if (!ref.includes('/')) return undefined
  if (ref.includes('\0') || ref.split('/').some((part) => part === '' || part === '.' || part === '..')) throw unsafe(url, `'${ref}' is not a ref name`)
  return ref
}

function checkRepository(url: string, parts: string[]): void {
  // Hosts refuse owners and groups starting with '-'; refused here too, so that none can pass for a git option.
  const bad = parts.find((p) => p.startsWith('-'))
  if (bad !== undefined) throw unsafe(url, `repository name segment '${bad}' may not begin with '-'`)
}

/**
 * The lines an anchor names: GitHub's `#L2-L3` (and `#L2C1-L3C5`, a selection's columns), GitLab's
 * `#L2-3`, Bitbucket's `#lines-2:3`, Bitbucket Server's `#2-3`.
 */
function parseLines(fragment: string | undefined): BlobUrl['lines'] {
  if (!fragment) return undefined
  const m = /^#(?:L|lines-)?(\d+)(?:C\d+)?(?:(?:-L?|:)(\d+)(?:C\d+)?)?$/.exec(fragment)
  if (!m) return undefined
  const start = Number(m[1])
  return { start, end: m[2] ? Number(m[2]) : start }
}

/**
 * The path segments of a self-hosted instance's base URL (`https://git.corp.io/gitlab` gives `['gitlab']`):
 * GitLab under a relative URL root and Bitbucket Server under a context path write them before the repository.
 * GitHub Enterprise is served at the root, and a github or bitbucket base with a path is taken as a mirror's.
 */
function basePath(host: HostConfig): string[] {
  if (host.type !== 'gitlab' && host.type !== 'bitbucket-server') return []
  return new URL(host.gitBase).pathname.split('/').filter(Boolean)
}

/** `raw` without the host's base path when it begins with it (segment by segment, decoded); else `raw` as it is. */
function withoutBasePath(url: string, host: HostConfig, raw: string[]): string[] {
  const prefix = basePath(host)
  if (prefix.length === 0 || prefix.length >= raw.length) return raw
  return prefix.every((segment, i) => decodeSegment(url, raw[i]!) === decodeSegment(host.gitBase, segment)) ? raw.slice(prefix.length) : raw
}

function lookupHost(name: string, origin: string, path: string, hosts: Map<string, HostConfig>): { host: HostConfig; rawHost: boolean } | undefined {
  const direct = hosts.get(name)
  if (direct) return { host: direct, rawHost: false }
  // www.github.com, www.gitlab.com and www.bitbucket.org redirect to the bare host: the same repositories, cached once.
  if (name.startsWith('www.') && BUILTIN_HOSTS.some((h) => h.name === name.slice(4))) {
    const bare = hosts.get(name.slice(4))
    if (bare) return { host: bare, rawHost: false }
  }
  if (name === 'raw.githubusercontent.com') {
    const github = hosts.get('github.com')
    if (github) return { host: github, rawHost: true }
  }
  if (name.startsWith('raw.')) {
    const parent = hosts.get(name.slice(4))
    if (parent?.type === 'github') return { host: parent, rawHost: true }
  }
  if (/\/-\/(blob|raw|blame)\//.test(path)) {
    return { host: { name, type: 'gitlab', gitBase: origin, rawBase: `${origin}/api/v4`, builtin: false, guessed: true }, rawHost: false }
  }
  return undefined
}

/**
 * Parse a blob URL; `hostList` is a host table or `--host` values (added to the built-ins and
 * `EVALFERRY_HOSTS`). Returns undefined when `url` is not one (another URL, a local path, prose);
 * throws FetchError E_UNSAFE when it is one whose path climbs out (`..`), is absolute or badly encoded.
 */
export function parseBlobUrl(url: string, hostList: Map<string, HostConfig> | string[] = hostTable()): BlobUrl | undefined {
  const hosts = Array.isArray(hostList) ? hostTable(hostList) : hostList
  const m = URL_SHAPE.exec(url)
  if (!m) return undefined
  const scheme = m[1]!.toLowerCase()
  let authority = m[2]!.toLowerCase()
  const userinfo = authority.includes('@')
  authority = authority.slice(authority.lastIndexOf('@') + 1)
  // A name WHATWG URLs refuse (a label `xn--` that is no punycode) is no host a file is fetched from.
  if (!HOST_NAME.test(authority) || !URL.canParse(`${scheme}://${authority}`)) return undefined
  if ((scheme === 'https' && authority.endsWith(':443')) || (scheme === 'http' && authority.endsWith(':80'))) {
    authority = authority.replace(/:\d+$/, '')
  }
  const path = m[3] ?? '/'
  const query = new URLSearchParams(m[4]?.slice(1) ?? '')
  const found = lookupHost(authority, `${scheme}://${authority}`, path, hosts)
  if (!found) return undefined
  const { rawHost } = found
  const host = found.host.untyped ? withType(found.host, typeByShape(path) ?? found.host.type) : found.host
  // A token in a dataset URL would reach logs, manifests and rewritten datasets; tokens belong in the environment.
  if (userinfo) throw unsafe(url, 'credentials in a URL are refused; set the host\'s token in the environment instead (GH_TOKEN, GITLAB_TOKEN, BITBUCKET_TOKEN)')
  const secret = [...query.keys()].find((name) => SECRET_PARAMETER.test(name))
  if (secret !== undefined) {
    throw unsafe(url, `credentials in a URL are refused (its query parameter '${secret}'); set the host's token in the environment instead (GH_TOKEN, GITLAB_TOKEN, BITBUCKET_TOKEN)`)
  }
  const segments = path.split('/').slice(1)
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop() // a trailing slash names a directory; caught below as too short
  // A URL of an instance served under a path carries that path before the repository; one without it
  // (a host whose base URL points elsewhere, as a mirror's does) is read from the root.
  const raw = withoutBasePath(url, host, segments)
  const lines = parseLines(m[5])
  const make = (ownerParts: string[], rest: string[], ref?: string): BlobUrl | undefined => {
    if (ownerParts.length < 2 || rest.length < (ref === undefined ? 2 : 1)) return undefined
    const owner = decodeSegments(url, ownerParts)
    checkRepository(url, owner)
    // The clone URL's suffix written on the repository (`widgets.git/blob/…`) names the same repository.
    const last = owner.length - 1
    owner[last] = owner[last]!.replace(/\.git$/i, '') || owner[last]!
    // Bitbucket Server's project keys are upper-case, and its URLs take them in any case.
    if (host.type === 'bitbucket-server') owner[0] = owner[0]!.toUpperCase()
    const written = owner.join('/')
    const repository = CASELESS_HOSTS.has(host.name) ? written.toLowerCase() : written
    const slashed = ref === undefined ? encodedRef(url, rest[0]!) : undefined
    if (slashed !== undefined) return { url, host, repository, segments: decodeSegments(url, rest.slice(1)), ref: slashed, ...(lines ? { lines } : {}) }
    return { url, host, repository, segments: decodeSegments(url, rest), ...(ref !== undefined ? { ref } : {}), ...(lines ? { lines } : {}) }
  }

  switch (host.type) {
    case 'github': {
      if (rawHost) return make(raw.slice(0, 2), raw.slice(2))
      if (raw[2] === 'blob' || raw[2] === 'raw' || raw[2] === 'blame') return make(raw.slice(0, 2), raw.slice(3))
      if (raw[0] === 'raw' && servesRawPath(host)) return make(raw.slice(1, 3), raw.slice(3))
      return undefined
    }
    case 'gitlab': {
      const dash = raw.findIndex((s, i) => s === '-' && (raw[i + 1] === 'blob' || raw[i + 1] === 'raw' || raw[i + 1] === 'blame'))
      if (dash < 0) return undefined
      const made = make(raw.slice(0, dash), raw.slice(dash + 2))
      // `?ref_type=heads|tags`: which of a branch and a tag of one name the page shows.
      const refType = query.get('ref_type')
      return made && (refType === 'heads' || refType === 'tags') ? { ...made, refKind: refType } : made
    }
    case 'bitbucket': {
      if (raw[2] !== 'src' && raw[2] !== 'raw' && raw[2] !== 'annotate') return undefined
      return make(raw.slice(0, 2), raw.slice(3))
    }
    case 'bitbucket-server': {
      // /projects/<KEY>/repos/<slug>/browse|raw/<path>?at=<ref>
      if (raw[0] !== 'projects' || raw[2] !== 'repos' || (raw[4] !== 'browse' && raw[4] !== 'raw')) return undefined
      return make([raw[1]!, raw[3]!], raw.slice(5), query.get('at') ?? 'HEAD')
    }
  }
}
