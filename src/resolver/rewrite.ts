/** `--rewrite` and `--embed`: a copy of the dataset whose references point at cached files, or hold their text. */

import { readFile } from 'node:fs/promises'
import { FetchError, type Location } from '../errors.ts'
import type { EvalCase } from '../model.ts'
import type { HostConfig } from './hosts.ts'
import type { CaseSource, ManifestEntry } from './options.ts'
import { fieldPath, findReferences, isCaseId, replaceReferences } from './references.ts'
import { parseBlobUrl } from './url.ts'

export interface RewriteOptions {
  /** Put the text of text files inline (file blocks become text blocks); binary files keep their local path. */
  embed?: boolean
  hosts: Map<string, HostConfig>
  /** The dataset the cases come from, for error messages. */
  file?: string
  /** Where in the dataset a case was read (its line), for error messages. */
  placeOf?: (c: EvalCase) => Location | undefined
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * The file's text, or undefined when it is not UTF-8 text. A `#L10-L20` anchor keeps those lines,
 * without the line ending of the last (LF or CRLF alike); one that does not fit the text is E_REF.
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
  const ended = all.length - 1 // the lines a newline ends
  if (all.at(-1) === '') all.pop() // the final newline ends the last line
  const range = lines.start === lines.end ? `line ${lines.start}` : `lines ${lines.start}-${lines.end}`
  if (lines.start < 1) throw new FetchError('E_REF', `${range}: lines are numbered from 1`)
  if (lines.end < lines.start) throw new FetchError('E_REF', `${range}: the range ends before it starts`)
  if (lines.end > all.length) throw new FetchError('E_REF', `${range}: the file has ${all.length} line(s)`)
  const taken = all.slice(lines.start - 1, lines.end)
  // A CRLF line's '\r' belongs to its line ending, which the last line taken goes without.
  if (lines.end <= ended) taken[taken.length - 1] = taken.at(-1)!.replace(/\r$/, '')
  return taken.join('\n')
}

/** A line anchor as written after a local path: `#L10-L20`, or `#L10` for one line, whatever form the URL had. */
function lineAnchor(lines: { start: number; end: number } | undefined): string {
  if (!lines) return ''
  return lines.start === lines.end ? `#L${lines.start}` : `#L${lines.start}-L${lines.end}`
}

/**
 * The cases with each prefetched reference replaced by its local path, with the URL's line anchor
 * kept after it (`/cache/…/a.md#L10-L20`), but for a file block, whose value is the path alone; or
 * with `embed` by its text (those lines only). A string
 * keeps any whitespace around the path that it had around the URL; embedded text is the whole value.
 * An anchor that does not fit a text file is E_REF either way.
 */
export async function* rewriteCases(cases: CaseSource, entries: ManifestEntry[], options: RewriteOptions): AsyncGenerator<EvalCase> {
  const byUrl = new Map(entries.map((e) => [e.url, e]))
  let record = -1
  for await (const c of cases) {
    record++
    const replacements = new Map<string, { path: string; anchor: string; text?: string }>()
    for (const ref of findReferences(c, options.hosts)) {
      const entry = byUrl.get(ref.url)
      if (!entry || replacements.has(ref.url) || isCaseId(ref)) continue
      let lines: { start: number; end: number } | undefined
      try {
        lines = parseBlobUrl(ref.url, options.hosts)?.lines
      } catch {
        lines = undefined
      }
      let text: string | undefined
      if (options.embed || lines) {
        try {
          text = textOf(await readFile(entry.local_path), lines)
        } catch (error) {
          if (!(error instanceof FetchError)) throw error
          // Named as a prefetch failure is: the case's line where it is known, and the field.
          const place = options.placeOf?.(c) ?? { ...(options.file !== undefined ? { file: options.file } : {}), record }
          throw new FetchError(error.code, `${ref.url}: ${error.message}`, { ...place, field: fieldPath(ref.pointer) })
        }
      }
      replacements.set(ref.url, { path: entry.local_path, anchor: lineAnchor(lines), ...(options.embed && text !== undefined ? { text } : {}) })
    }
    yield replaceReferences(
      c,
      (ref) => {
        const replacement = replacements.get(ref.url)
        if (!replacement) return undefined
        // A file block's value is read as a path (AgentV opens it), so it gets the path alone.
        if (replacement.text === undefined) return ref.fileBlock ? { type: 'file', value: replacement.path } : replacement.path + replacement.anchor
        return ref.fileBlock ? { type: 'text', value: replacement.text } : { text: replacement.text }
      },
      options.hosts,
    )
  }
}
