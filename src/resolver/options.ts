/** Resolver options, and the environment variables that set them. */

import type { FormatOption } from '../../adapters/types.ts'
import type { EvalCase } from '../model.ts'
import { UsageError } from '../errors.ts'

export interface ResolverOptions {
  /** Cache root. Default: `EVALFERRY_CACHE_DIR`, else the platform's cache directory (env-paths). */
  cacheDir?: string
  /** `--host` values, `<name>=<base-url>[,type=github|gitlab|bitbucket|bitbucket-server][,raw=<url>|off]`; `EVALFERRY_HOSTS` adds to them. */
  hosts?: string[]
  /** No network at all: serve what is cached, fail naming the URL otherwise. `EVALFERRY_OFFLINE=1` sets it too. */
  offline?: boolean
  /** List refs again even when the cached listing is fresh. */
  refresh?: boolean
  /** Repositories fetched at once. Default 4. */
  concurrency?: number
  /** Seconds a cached listing is trusted for branches (tags and SHAs never expire). Default 600. */
  refTtlSeconds?: number
  /** The largest file accepted, in bytes. Default 100 MiB. */
  maxFileBytes?: number
  /** Use a host's single-file API when a commit needs at most this many files; 0 turns it off. Default 8. */
  rawFileLimit?: number
  /** Seconds without progress before a network step is abandoned. Default: `EVALFERRY_TIMEOUT`, else 60. */
  timeoutSeconds?: number
  /** Where tokens and `EVALFERRY_*` come from. Default `process.env`. */
  env?: NodeJS.ProcessEnv
  /** Called with one line per notable step (a listing, a fetch, waiting for a lock). */
  onProgress?: (message: string) => void
  /**
   * Stops the prefetch when aborted: git and HTTP requests under way are stopped, no more are
   * begun, and the promise rejects with the signal's reason. What was cached before stays cached.
   */
  signal?: AbortSignal
}

export interface PrefetchOptions extends ResolverOptions {
  /** Source format of dataset files (detected when absent). */
  from?: FormatOption
}

/** One file of the manifest (`--manifest`), per URL. */
export interface ManifestEntry {
  url: string
  /** The host as written in the URL. */
  host: string
  /** `owner/repo` or `group/subgroup…/project`. */
  repository: string
  /** The ref as the URL wrote it, or the SHA. */
  ref: string
  commit: string
  /** The file's path inside the repository. */
  path: string
  /** Absolute path of the cached copy. */
  local_path: string
  bytes: number
  /** Hex SHA-256 of the content. */
  sha256: string
}

export interface PrefetchResult {
  /** One per URL that resolved, in the order given; URLs naming one file at one commit share its `local_path`. */
  entries: ManifestEntry[]
  /** Distinct files among the entries (distinct `local_path`s): `fetched + cached`. */
  files: number
  /** Files fetched in this run. */
  fetched: number
  /** Files served from the cache without any network request. */
  cached: number
  /**
   * Hosts not declared whose URLs in the cases are shaped as a file's page on GitHub Enterprise or
   * Bitbucket Server (`/<owner>/<repo>/blob/<ref>/<path>`): not fetched, since they need `--host`
   * (`hosts`) to say where the host's git is. Only from `prefetch`, and only when there are some.
   */
  undeclared?: UndeclaredHost[]
}

export interface UndeclaredHost {
  host: string
  /** How many values name it so. */
  references: number
  /** The first of them. */
  first: string
}

export type CaseSource = AsyncIterable<EvalCase> | Iterable<EvalCase>

export const DEFAULTS = {
  concurrency: 4,
  refTtlSeconds: 600,
  maxFileBytes: 100 * 1024 * 1024,
  rawFileLimit: 8,
  timeoutSeconds: 60,
} as const

/** The longest timeout Node's timers hold (2^31 - 1 ms), in whole seconds. */
export const MAX_TIMEOUT_SECONDS = 2_147_483

/** What each numeric setting takes: the command line checks its flags with these, and a library caller gets the same refusal. */
const SETTING_RULES: Record<keyof typeof DEFAULTS, { whole: boolean; least: number; says: string; most?: { value: number; says: string } }> = {
  concurrency: { whole: true, least: 1, says: 'a whole number of at least 1' },
  refTtlSeconds: { whole: false, least: 0, says: 'a number of seconds of at least 0' },
  maxFileBytes: { whole: true, least: 1, says: 'a whole number of bytes of at least 1' },
  rawFileLimit: { whole: true, least: 0, says: 'a whole number of at least 0' },
  timeoutSeconds: { whole: false, least: Number.MIN_VALUE, says: 'a number of seconds above 0', most: { value: MAX_TIMEOUT_SECONDS, says: `at most ${MAX_TIMEOUT_SECONDS} seconds` } },
}

/**
 * Refuses a value a resolver setting does not take, as a usage error naming it as `name` (the
 * library option, or the command line's flag) and showing `shown` (by default the value).
 */
export function checkSetting(key: keyof typeof DEFAULTS, given: unknown, name = `the option ${key}`, shown?: string): void {
  const rule = SETTING_RULES[key]
  const value = shown ?? (typeof given === 'number' ? String(given) : JSON.stringify(given))
  const fits = typeof given === 'number' && Number.isFinite(given) && given >= rule.least && (!rule.whole || Number.isInteger(given))
  if (!fits) throw new UsageError(`${name} takes ${rule.says}, not ${value}`)
  if (rule.most && given > rule.most.value) throw new UsageError(`${name} takes ${rule.most.says}, not ${value}`)
}

/**
 * `EVALFERRY_TIMEOUT` in seconds, as the resolver and the services read it: a number above 0, else
 * none (the default then holds); one longer than a timer holds is refused, naming the variable.
 */
export function envTimeoutSeconds(env: NodeJS.ProcessEnv): number | undefined {
  const text = env.EVALFERRY_TIMEOUT
  const seconds = Number(text)
  if (!text || !Number.isFinite(seconds) || seconds <= 0) return undefined
  if (seconds > MAX_TIMEOUT_SECONDS) throw new UsageError(`EVALFERRY_TIMEOUT=${text} is too long: the largest timeout accepted is ${MAX_TIMEOUT_SECONDS} seconds`)
  return seconds
}

export function isOffline(options: ResolverOptions): boolean {
  const env = options.env ?? process.env
  return options.offline === true || /^(1|true|yes|on)$/i.test(env.EVALFERRY_OFFLINE ?? '')
}
