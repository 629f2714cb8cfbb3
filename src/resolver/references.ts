/** Finding blob URLs in canonical cases, and replacing them (for `--rewrite` and `--embed`). */

import { FetchError } from '../errors.ts'
import type { EvalCase } from '../model.ts'
import { type HostConfig, hostTable } from './hosts.ts'
import { parseBlobUrl } from './url.ts'

export interface Reference {
  /** The URL, without the whitespace a spreadsheet cell may have put around it. */
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

// A file's page on GitHub Enterprise (`/<owner>/<repo>/blob/<ref>/<path>`) or Bitbucket Server
// (`/projects/<KEY>/repos/<slug>/browse/<path>`); no other shape of an unknown host is taken for one.
const FILE_PAGE_SHAPE = /^https?:\/\/([^/?#\s]+)\/(?:[^/?#\s]+\/[^/?#\s]+\/blob\/[^/?#\s]+\/[^?#\s]|projects\/[^/?#\s]+\/repos\/[^/?#\s]+\/browse\/[^?#\s])[^\s]*$/i

/**
 * The host of a value that is wholly a URL shaped as a file's page on a host not in `hosts`, which
 * prefetch cannot fetch until the host is declared; else undefined.
 */
export function undeclaredFileHost(value: string, hosts: Map<string, HostConfig>): string | undefined {
  const url = value.trim()
  const match = url.length <= 4096 ? FILE_PAGE_SHAPE.exec(url) : null
  if (!match) return undefined
  const host = match[1]!.toLowerCase()
  if (hosts.has(host) || hosts.has(host.replace(/^www\./, '')) || isReferenceUrl(url, hosts)) return undefined
  return host
}

/** Each value of the case that is wholly a URL `undeclaredFileHost` finds, with its host. */
export function undeclaredReferences(c: EvalCase, hosts: Map<string, HostConfig>): { host: string; url: string }[] {
  const found: { host: string; url: string }[] = []
  eachString(c, (value) => {
    const host = undeclaredFileHost(value, hosts)
    if (host !== undefined) found.push({ host, url: value.trim() })
  })
  return found
}

/** Calls `visit` with every string of the case, in document order: where it is, and what holds it. */
function eachString(c: EvalCase, visit: (value: string, pointer: (string | number)[], parent: unknown) => void): void {
  const walk = (value: unknown, pointer: (string | number)[], parent: unknown): void => {
    if (typeof value === 'string') visit(value, pointer, parent)
    else if (Array.isArray(value)) value.forEach((item, i) => walk(item, [...pointer, i], value))
    else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) walk(item, [...pointer, key], value)
  }
  walk(c, [], undefined)
}

/** `['input', 0, 'content', 1, 'value']` as `input[0].content[1].value`. */
export function fieldPath(pointer: (string | number)[]): string {
  return pointer.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? key : `.${key}`)).join('')
}

function isFileBlock(value: unknown): value is { type: 'file'; value: string } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'file'
}

/**
 * Every string in the case that is wholly a blob URL, but for whitespace around it (file blocks included),
 * in document order; `hostList` as for parseBlobUrl.
 */
export function findReferences(c: EvalCase, hostList: Map<string, HostConfig> | string[] = hostTable()): Reference[] {
  const hosts = Array.isArray(hostList) ? hostTable(hostList) : hostList
  const found: Reference[] = []
  eachString(c, (value, pointer, parent) => {
    const url = value.trim()
    if (isReferenceUrl(url, hosts)) found.push({ url, pointer, fileBlock: pointer.at(-1) === 'value' && isFileBlock(parent) })
  })
  return found
}

/** Whether the reference is the case's `id`, which is never replaced: it identifies the case, even when it is a URL. */
export function isCaseId(ref: Reference): boolean {
  return ref.pointer.length === 1 && ref.pointer[0] === 'id'
}

/**
 * What a reference becomes: a string takes the URL's place, inside any whitespace around it (a local
 * path); `{ text }` is the whole new string and a block the whole new file block (embedded text).
 */
export type Replacement = string | { text: string } | { type: string; value: string }

/** A copy of the case where each reference but its id is replaced as `replace` says; undefined keeps it. */
export function replaceReferences(c: EvalCase, replace: (ref: Reference) => Replacement | undefined, hosts: Map<string, HostConfig> = hostTable()): EvalCase {
  const copy = structuredClone(c) as unknown as Record<string | number, unknown>
  for (const ref of findReferences(c, hosts)) {
    if (isCaseId(ref)) continue
    const replacement = replace(ref)
    if (replacement === undefined) continue
    const block = typeof replacement === 'object' && 'type' in replacement
    const target = block ? ref.pointer.slice(0, -1) : ref.pointer
    let holder: Record<string | number, unknown> = copy
    for (const key of target.slice(0, -1)) holder = holder[key] as Record<string | number, unknown>
    const last = target.at(-1)
    if (last === undefined) continue
    if (block) holder[last] = { ...(holder[last] as object), ...replacement }
    else if (typeof replacement === 'object') holder[last] = replacement.text
    else {
      // Sliced rather than String.replace, which would read `$&` and the like in the replacement.
      const value = holder[last] as string
      const at = value.indexOf(ref.url)
      holder[last] = value.slice(0, at) + replacement + value.slice(at + ref.url.length)
    }
  }
  return copy as unknown as EvalCase
}
