/** Finding blob URLs in canonical cases, and replacing them (for `--rewrite` and `--embed`). */

import { FetchError } from '../errors.ts'
import type { EvalCase } from '../model.ts'
import { type HostConfig, hostTable } from './hosts.ts'
import { parseBlobUrl } from './url.ts'

export interface Reference {
  url: string
  /** Where in the case: keys and indexes from the case root, e.g. `['input', 0, 'content', 1, 'value']`. */
  pointer: (string | number)[]
  /** True when the URL is the value of a `{ type: 'file' }` content block. */
  fileBlock: boolean
}

function isReferenceUrl(value: string, hosts: Map<string, HostConfig>): boolean {
  if (value.length > 4096 || !/^https?:\/\//i.test(value)) return false
  try {
    return parseBlobUrl(value, hosts) !== undefined
  } catch (error) {
    // A blob URL with an unsafe path is still a reference: prefetch reports it rather than skip it.
    if (error instanceof FetchError) return true
    throw error
  }
}

function isFileBlock(value: unknown): value is { type: 'file'; value: string } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'file'
}

/** Every string in the case that is wholly a blob URL (file blocks included), in document order; `hostList` as for parseBlobUrl. */
export function findReferences(c: EvalCase, hostList: Map<string, HostConfig> | string[] = hostTable()): Reference[] {
  const hosts = Array.isArray(hostList) ? hostTable(hostList) : hostList
  const found: Reference[] = []
  const walk = (value: unknown, pointer: (string | number)[], parent: unknown): void => {
    if (typeof value === 'string') {
      if (isReferenceUrl(value, hosts)) {
        found.push({ url: value, pointer, fileBlock: pointer.at(-1) === 'value' && isFileBlock(parent) })
      }
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, [...pointer, i], value))
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) walk(item, [...pointer, key], value)
    }
  }
  walk(c, [], undefined)
  return found
}

/** Whether the reference is the case's `id`, which is never replaced: it identifies the case, even when it is a URL. */
export function isCaseId(ref: Reference): boolean {
  return ref.pointer.length === 1 && ref.pointer[0] === 'id'
}

/**
 * A copy of the case where each reference but its id is replaced: `replace` returns the new string,
 * or for a file block a whole new block (`{ type: 'text', value }` when embedding), or undefined to keep it.
 */
export function replaceReferences(
  c: EvalCase,
  replace: (ref: Reference) => string | { type: string; value: string } | undefined,
  hosts: Map<string, HostConfig> = hostTable(),
): EvalCase {
  const copy = structuredClone(c) as unknown as Record<string | number, unknown>
  for (const ref of findReferences(c, hosts)) {
    if (isCaseId(ref)) continue
    const replacement = replace(ref)
    if (replacement === undefined) continue
    const replaceWhole = typeof replacement !== 'string'
    const target = replaceWhole ? ref.pointer.slice(0, -1) : ref.pointer
    let holder: Record<string | number, unknown> = copy
    for (const key of target.slice(0, -1)) holder = holder[key] as Record<string | number, unknown>
    const last = target.at(-1)
    if (last === undefined) continue
    holder[last] = replaceWhole ? { ...(holder[last] as object), ...replacement } : replacement
  }
  return copy as unknown as EvalCase
}
