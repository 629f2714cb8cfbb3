/** What every service's reader and writer are given, and what a push tells of itself. */
import { createHash } from 'node:crypto'
import type { JsonObject } from '../model.ts'

export type IfExists = 'fail' | 'append' | 'replace'
export const IF_EXISTS = ['fail', 'append', 'replace'] as const

/** Options a conversion from or to a service takes beside those of a file's. */
export interface ServiceOptions {
  /** What a push does with a dataset that already holds records it would not write: `fail` (default), `append`, `replace`. */
  ifExists?: IfExists
  /** Show what a push would send, and send nothing. */
  dryRun?: boolean
  /** Each request's timeout in milliseconds (default 60 000). */
  timeoutMs?: number
  /** The environment the credentials and endpoints are read from (default: `process.env`). */
  env?: NodeJS.ProcessEnv
  /** The repository cache's root, where Hub files are kept. */
  cacheDir?: string
  /** No network: only what the cache holds is served. */
  offline?: boolean
  /**
   * Of an hf:// input, only the `index`-th of `count` deterministic parts (1-based): whole files
   * dealt out by size when the dataset has at least `count`, else a contiguous part of each.
   */
  shard?: { index: number; count: number }
}

export interface ServiceContext {
  env: NodeJS.ProcessEnv
  /** Each request's timeout (milliseconds). */
  timeoutMs: number
  signal?: AbortSignal
  /** The repository cache's root (Hub files are kept there). */
  cacheDir?: string
  /** No network: Hub files are served from the cache, and nothing else can be. */
  offline?: boolean
  /** Records moved so far, for a progress bar. */
  progress?: { records: number; bytes: number }
}

export interface PushOptions extends ServiceContext {
  ifExists: IfExists
}

/** What a push did, for the report. */
export interface PushSummary {
  target: string
  /** The dataset was made by this push. */
  created: boolean
  /** Records sent as new. */
  sent: number
  /** Records that were there already with other content, sent again in place. */
  updated: number
  /** Records the target held already as they are (a push run again). */
  unchanged: number
  /** Records of the target removed (`--if-exists replace`). */
  removed: number
  requests: number
  [key: string]: unknown
}

/** What a dry run would send. */
export interface DryRun {
  target: string
  records: number
  fields: string[]
  splits?: string[]
  /** A Hub push: the files of its commit, which it sends in place of records. */
  files?: string[]
  [key: string]: unknown
}

/** The dotted paths of the keys `records` hold, two levels down (`inputs.question`), in first-seen order. */
export function fieldsOf(records: JsonObject[], skip: readonly string[] = []): string[] {
  const seen = new Set<string>()
  for (const r of records) {
    for (const [key, value] of Object.entries(r)) {
      if (skip.includes(key)) continue
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) for (const sub of Object.keys(value)) seen.add(`${key}.${sub}`)
      else seen.add(key)
    }
  }
  return [...seen]
}

/** A version 5 UUID (RFC 9562: SHA-1 of a namespace and a name). */
export function uuid5(name: string, namespace: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest()
  hash[6] = (hash[6]! & 0x0f) | 0x50
  hash[8] = (hash[8]! & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** JSON with object keys sorted, so that two equal values give one text; `withoutNull` leaves out keys whose value is null. */
export function canonicalJson(value: unknown, withoutNull = false): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as object).filter(([, x]) => !(withoutNull && x === null)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  )
}

/**
 * `items` in consecutive batches of at most `maxItems` whose `sizeOf` adds up to at most
 * `maxBytes`; an item bigger than that goes alone.
 */
export function batchesOf<T>(items: readonly T[], sizeOf: (item: T) => number, maxBytes: number, maxItems = Infinity): T[][] {
  const out: T[][] = []
  let current: T[] = []
  let bytes = 0
  for (const item of items) {
    const size = sizeOf(item)
    if (current.length && (current.length >= maxItems || bytes + size > maxBytes)) {
      out.push(current)
      current = []
      bytes = 0
    }
    current.push(item)
    bytes += size
  }
  if (current.length) out.push(current)
  return out
}
