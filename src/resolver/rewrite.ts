/** `--rewrite` and `--embed`: a copy of the dataset whose references point at cached files, or hold their text. */

import { readFile } from 'node:fs/promises'
import { FetchError } from '../errors.ts'
import type { EvalCase } from '../model.ts'
import type { HostConfig } from './hosts.ts'
import type { CaseSource, ManifestEntry } from './options.ts'
import { findReferences, isCaseId, replaceReferences } from './references.ts'
import { parseBlobUrl } from './url.ts'

export interface RewriteOptions {
  /** Put the text of text files inline (file blocks become text blocks); binary files keep their local path. */
  embed?: boolean
  hosts: Map<string, HostConfig>
  /** The dataset the cases come from, for error messages. */
  file?: string
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The file's text, or undefined when it is not UTF-8 text. A `#L10-L20` anchor keeps those lines;
 * one that does not fit the text is E_REF.
 */
export function textOf(content: Buffer, lines?: { start: number; end: number }): string | undefined {
  if (content.includes(0)) return undefined
  let text: string
  try {
    text = utf8.decode(content)
  } catch {
    return undefined
  }
  if (!lines) return text
  const all = text.split('\n')
  if (all.at(-1) === '') all.pop() // the final newline ends the last line
  const range = lines.start === lines.end ? `line ${lines.start}` : `lines ${lines.start}-${lines.end}`
  if (lines.start < 1) throw new FetchError('E_REF', `${range}: lines are numbered from 1`)
  if (lines.end < lines.start) throw new FetchError('E_REF', `${range}: the range ends before it starts`)
  if (lines.end > all.length) throw new FetchError('E_REF', `${range}: the file has ${all.length} line(s)`)
  return all.slice(lines.start - 1, lines.end).join('\n')
}

/** The cases with each prefetched reference replaced by its local path (or, with `embed`, its text). */
export async function* rewriteCases(cases: CaseSource, entries: ManifestEntry[], options: RewriteOptions): AsyncGenerator<EvalCase> {
  const byUrl = new Map(entries.map((e) => [e.url, e]))
  let record = -1
  for await (const c of cases) {
    record++
    const texts = new Map<string, string | undefined>()
    if (options.embed) {
      for (const ref of findReferences(c, options.hosts)) {
        const entry = byUrl.get(ref.url)
        if (!entry || texts.has(ref.url) || isCaseId(ref)) continue
        let lines: { start: number; end: number } | undefined
        try {
          lines = parseBlobUrl(ref.url, options.hosts)?.lines
        } catch {
          lines = undefined
        }
        try {
          texts.set(ref.url, textOf(await readFile(entry.local_path), lines))
        } catch (error) {
          if (!(error instanceof FetchError)) throw error
          throw new FetchError(error.code, `${ref.url}: ${error.message}`, { ...(options.file !== undefined ? { file: options.file } : {}), record })
        }
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
