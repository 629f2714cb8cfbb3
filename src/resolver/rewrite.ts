/** `--rewrite` and `--embed`: a copy of the dataset whose references point at cached files, or hold their text. */

import { readFile } from 'node:fs/promises'
import type { EvalCase } from '../model.ts'
import type { HostConfig } from './hosts.ts'
import type { CaseSource, ManifestEntry } from './options.ts'
import { findReferences, replaceReferences } from './references.ts'
import { parseBlobUrl } from './url.ts'

export interface RewriteOptions {
  /** Put the text of text files inline (file blocks become text blocks); binary files keep their local path. */
  embed?: boolean
  hosts: Map<string, HostConfig>
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The file's text, or undefined when it is not UTF-8 text. A `#L10-L20` anchor keeps those lines. */
export function textOf(content: Buffer, lines?: { start: number; end: number }): string | undefined {
  if (content.includes(0)) return undefined
  let text: string
  try {
    text = utf8.decode(content)
  } catch {
    return undefined
  }
  if (!lines) return text
  return text.split('\n').slice(lines.start - 1, lines.end).join('\n')
}

/** The cases with each prefetched reference replaced by its local path (or, with `embed`, its text). */
export async function* rewriteCases(cases: CaseSource, entries: ManifestEntry[], options: RewriteOptions): AsyncGenerator<EvalCase> {
  const byUrl = new Map(entries.map((e) => [e.url, e]))
  for await (const c of cases) {
    const texts = new Map<string, string | undefined>()
    if (options.embed) {
      for (const ref of findReferences(c, options.hosts)) {
        const entry = byUrl.get(ref.url)
        if (!entry || texts.has(ref.url)) continue
        let lines: { start: number; end: number } | undefined
        try {
          lines = parseBlobUrl(ref.url, options.hosts)?.lines
        } catch {
          lines = undefined
        }
        texts.set(ref.url, textOf(await readFile(entry.local_path), lines))
      }
    }
    yield replaceReferences(
      c,
      (ref) => {
        const entry = byUrl.get(ref.url)
        if (!entry) return undefined
        const text = texts.get(ref.url)
        if (text === undefined) return entry.local_path
        return ref.fileBlock ? { type: 'text', value: text } : text
      },
      options.hosts,
    )
  }
}
