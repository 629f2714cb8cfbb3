/**
 * Git hosts: the built-in public ones and those configured with `--host` / `EVALFERRY_HOSTS`.
 *
 * `--host <name>=<base-url>[,type=github|gitlab|bitbucket|bitbucket-server][,raw=<url>|raw=off]`
 * - `name` is the host as it appears in dataset URLs (`github.com`, `ghe.example.com:8443`).
 * - without `type=`, the type its name suggests, and a URL shaped as GitLab's or Bitbucket Server's
 *   pages is read as theirs.
 * - `base-url` is where git really is: the clone URL is `<base-url>/<owner…>/<repo>.git`
 *   (Bitbucket Server: `<base-url>/scm/<project>/<repo>.git`).
 * - a gitlab or bitbucket-server base URL's path (GitLab's relative URL root, Bitbucket Server's context
 *   path: `https://git.corp.io/gitlab`) is where that instance's page URLs begin too: dataset URLs that
 *   begin with it are read after it (see url.ts), and the clone and API URLs keep it, built on `base-url`.
 * - the single-file API defaults to, by type: github `<base-url>/raw/<owner>/<repo>/<commit>/<path>`
 *   (GitHub Enterprise's raw path), gitlab `<base-url>/api/v4`, bitbucket `<base-url>/!api/2.0`,
 *   bitbucket-server `<base-url>/rest/api/1.0`; `raw=<url>` replaces that base, `raw=off` disables it.
 */

import { UsageError } from '../errors.ts'

export type HostType = 'github' | 'gitlab' | 'bitbucket' | 'bitbucket-server'
export const HOST_TYPES: readonly HostType[] = ['github', 'gitlab', 'bitbucket', 'bitbucket-server']

export interface HostConfig {
  /** The host as written in dataset URLs, lower-cased, with its port when it has one. */
  name: string
  type: HostType
  /** Where git lives; no trailing slash. */
  gitBase: string
  /** Base of the single-file HTTP API; undefined when the host has none or it is turned off. */
  rawBase?: string
  /** True for github.com, gitlab.com and bitbucket.org as they are on the internet. */
  builtin: boolean
  /**
   * True for a host neither built in nor configured, read as GitLab only because a dataset URL's path
   * holds `/-/blob/` (or `/-/raw/`, `/-/blame/`): whoever wrote the dataset chose it, so it is sent no token.
   */
  guessed?: boolean
  /**
   * Set for a host configured without `type=`: its type is the one its name suggests (`github`
   * unless it holds `gitlab` or `bitbucket`), and a URL shaped as another type's pages (`/-/blob/`,
   * `/projects/<KEY>/repos/`) is read as that type's (see `withType`). Holds the `raw=` given, if any.
   */
  untyped?: { raw?: string }
}

export const BUILTIN_HOSTS: readonly HostConfig[] = [
  { name: 'github.com', type: 'github', gitBase: 'https://github.com', rawBase: 'https://raw.githubusercontent.com', builtin: true },
  { name: 'gitlab.com', type: 'gitlab', gitBase: 'https://gitlab.com', rawBase: 'https://gitlab.com/api/v4', builtin: true },
  { name: 'bitbucket.org', type: 'bitbucket', gitBase: 'https://bitbucket.org', rawBase: 'https://api.bitbucket.org/2.0', builtin: true },
]

function defaultRawBase(type: HostType, gitBase: string): string {
  switch (type) {
    case 'github':
      return `${gitBase}/raw`
    case 'gitlab':
      return `${gitBase}/api/v4`
    case 'bitbucket':
      return `${gitBase}/!api/2.0`
    case 'bitbucket-server':
      return `${gitBase}/rest/api/1.0`
  }
}

function guessType(name: string): HostType {
  const builtin = BUILTIN_HOSTS.find((h) => h.name === name)
  if (builtin) return builtin.type
  if (name.includes('gitlab')) return 'gitlab'
  if (name.includes('bitbucket')) return 'bitbucket-server'
  return 'github'
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '')
}

function checkBase(url: string, spec: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(`--host ${spec.replace(/:\/\/[^/@\s]*@/g, '://***@')}: '${url.replace(/:\/\/[^/@\s]*@/g, '://***@')}' is not a URL`)
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new UsageError(`--host ${spec}: only http and https base URLs are supported`)
  }
  if (parsed.username || parsed.password) {
    // The message must not repeat the secret it refuses.
    throw new UsageError(`--host ${spec.replace(/:\/\/[^/@\s]*@/g, '://***@')}: put credentials in the environment (SPEC 6), not in the URL`)
  }
  return trimSlash(url)
}

/** Parse one `--host` value. */
export function parseHostSpec(spec: string): HostConfig {
  const parts = spec.split(',').map((p) => p.trim())
  const [first, ...attributes] = parts
  const eq = first ? first.indexOf('=') : -1
  if (!first || eq <= 0) throw new UsageError(`--host ${spec}: expected <name>=<base-url>[,type=${HOST_TYPES.join('|')}][,raw=<url>|raw=off]`)
  // A name as URLs write their host: a default port is left out of both, and a scheme or a path is no part of one.
  const name = first.slice(0, eq).toLowerCase().replace(/:(443|80)$/, '')
  if (!/^[a-z0-9.-]+(:\d+)?$/.test(name)) throw new UsageError(`--host ${spec}: the name is a host as URLs write it (ghe.corp.io, or git.corp.io:8443), not "${first.slice(0, eq)}"`)
  const gitBase = checkBase(first.slice(eq + 1), spec)
  let type: HostType | undefined
  let raw: string | undefined
  for (const attribute of attributes) {
    const [key, value = ''] = attribute.split(/=(.*)/s)
    if (key === 'type') {
      const named = value.toLowerCase()
      if (!(HOST_TYPES as readonly string[]).includes(named)) {
        throw new UsageError(`--host ${spec}: type must be one of ${HOST_TYPES.join(', ')}`)
      }
      type = named as HostType
    } else if (key === 'raw') {
      raw = value
    } else {
      throw new UsageError(`--host ${spec}: unknown attribute '${key}' (type, raw)`)
    }
  }
  const rawBase = raw === 'off' || raw === undefined ? raw : checkBase(raw, spec)
  if (type) return typed({ name, type, gitBase, builtin: false }, rawBase)
  return { ...typed({ name, type: guessType(name), gitBase, builtin: false }, rawBase), untyped: rawBase === undefined ? {} : { raw: rawBase } }
}

/** `host` with its single-file API: `raw` as given (`off`: none), else the type's default. */
function typed(host: Omit<HostConfig, 'rawBase'>, raw: string | undefined): HostConfig {
  if (raw === 'off') return host
  return { ...host, rawBase: raw ?? defaultRawBase(host.type, host.gitBase) }
}

/**
 * Whether the host serves raw files at `/raw/<owner>/<repo>/<ref>/<path>`, as GitHub Enterprise
 * does without subdomain isolation (github.com serves them from raw.githubusercontent.com).
 */
export function servesRawPath(host: HostConfig): boolean {
  return host.type === 'github' && host.name !== 'github.com'
}

/** A host configured without `type=` as a host of `type`, for a URL shaped as that type's pages. */
export function withType(host: HostConfig, type: HostType): HostConfig {
  if (!host.untyped || host.type === type) return host
  const { untyped, rawBase: _default, ...rest } = host
  return { ...typed({ ...rest, type }, untyped.raw), untyped }
}

/** Split `EVALFERRY_HOSTS`: the `--host` syntax, entries separated by commas (attributes stay with their host). */
export function splitHostList(list: string): string[] {
  const specs: string[] = []
  for (const piece of list.split(/[,\s]+/).filter(Boolean)) {
    const key = piece.split('=')[0]
    if ((key === 'type' || key === 'raw') && specs.length > 0) specs[specs.length - 1] += `,${piece}`
    else specs.push(piece)
  }
  return specs
}

/** The host table: built-ins, then `EVALFERRY_HOSTS`, then `--host` values (later entries win). */
export function hostTable(specs: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): Map<string, HostConfig> {
  const table = new Map<string, HostConfig>(BUILTIN_HOSTS.map((h) => [h.name, h]))
  const fromEnv = env.EVALFERRY_HOSTS ? splitHostList(env.EVALFERRY_HOSTS) : []
  for (const spec of [...fromEnv, ...specs]) {
    const host = parseHostSpec(spec)
    table.set(host.name, host)
  }
  return table
}

/** The URL git clones and fetches from. */
export function cloneUrl(host: HostConfig, repository: string): string {
  if (host.type === 'bitbucket-server') {
    const [project = '', slug = ''] = repository.split('/')
    return `${host.gitBase}/scm/${project.toLowerCase()}/${slug}.git`
  }
  return `${host.gitBase}/${repository}.git`
}

/** The single-file API URL for one file at one commit, or undefined when the host has none. */
export function rawFileUrl(host: HostConfig, repository: string, commit: string, path: string): string | undefined {
  if (!host.rawBase) return undefined
  const encodedPath = path.split('/').map(encodeURIComponent).join('/')
  const parts = repository.split('/')
  switch (host.type) {
    case 'github':
      return `${host.rawBase}/${repository}/${commit}/${encodedPath}`
    case 'gitlab':
      return `${host.rawBase}/projects/${encodeURIComponent(repository)}/repository/files/${encodeURIComponent(path)}/raw?ref=${commit}`
    case 'bitbucket':
      return `${host.rawBase}/repositories/${repository}/src/${commit}/${encodedPath}`
    case 'bitbucket-server':
      return `${host.rawBase}/projects/${parts[0]}/repos/${parts[1]}/raw/${encodedPath}?at=${commit}`
  }
}
