/**
 * What a reviewer reads beside a conversion's counts (`--report report.html`): where each field of
 * the source went in the output, and the first records as they were read and as they were written.
 * It reads the input and the output again, after the conversion, one record of each at a time.
 */
import { SPELLING_MARKERS } from '../adapters/fields.ts'
import { getAdapter } from '../adapters/index.ts'
import type { Container, FieldMapping, FormatName } from '../adapters/types.ts'
import { containerOf, readRecords } from './codecs/index.ts'
import type { SourceRecord } from './codecs/types.ts'
import { mayBeJson } from './codecs/json.ts'
import type { Location } from './errors.ts'
import { STDIO } from './io.ts'
import { CARRY_KEY, isJsonObject, type EvalCase, type JsonObject } from './model.ts'
import { placeOf, read } from './read.ts'

/** One field of the canonical case: where it was read from, where it was written, in how many records. */
export interface FieldRow {
  /** The canonical field (`input`, `metadata.difficulty`, `extras.deepeval.comments`). */
  field: string
  /** Paths in the source records that held it, with how many records each. */
  from: Record<string, number>
  /** Paths in the written records that hold it, with how many records each. */
  to: Record<string, number>
  /** Records that had the field. */
  records: number
  /** Of those, the records that hold it under the carry key (`evalferry`). */
  carried: number
  /** Of those, the records whose written record does not hold it. */
  dropped: number
}

/** One record read and what it was written as. */
export interface RecordPair {
  place: Location
  /** The record as the source file holds it (absent: an included file's, not traced). */
  source?: unknown
  /** The record written for it (absent: the output was not read back). */
  written?: unknown
  /** Paths of `source` whose value went under the carry key. */
  carriedFrom: string[]
}

export interface Review {
  fields: FieldRow[]
  samples: RecordPair[]
  /** Outputs that could not be read back (standard output, a file a failed run did not write). */
  unread: string[]
}

/** One file of a conversion, as the review reads it again. */
export interface ReviewFile {
  input: string
  /** Absent: the output was not written (standard output, a failed run). */
  output?: string
  from: FormatName
  to: FormatName
  inputContainer?: Container
  outputContainer?: Container
  map?: FieldMapping
  /** A shard's records: the 0-based [start, end) of the input's. */
  recordRange?: [number, number]
}

/** How many records are shown side by side. */
export const SAMPLE_RECORDS = 5

/** Traces every record of `files`; keeps the first `samples` side by side. */
export async function reviewConversion(files: ReviewFile[], samples = SAMPLE_RECORDS): Promise<Review> {
  const rows = new Map<string, FieldRow>()
  const review: Review = { fields: [], samples: [], unread: [] }
  for (const file of files) {
    if (file.output === STDIO) review.unread.push('standard output')
    else if (file.output === undefined) review.unread.push(`the output of ${file.input}, not written`)
    await reviewFile(file, rows, review, samples)
  }
  review.fields = [...rows.values()]
  return review
}

async function reviewFile(file: ReviewFile, rows: Map<string, FieldRow>, review: Review, samples: number): Promise<void> {
  const source = await getAdapter(file.from)
  const target = await getAdapter(file.to)
  const inputContainer = file.inputContainer ?? containerOf(file.input)
  const raw = inputContainer && file.input !== STDIO ? new Cursor(readRecords(inputContainer, file.input, { file: file.input, recordKeys: source.recordKeys, header: {} })) : undefined
  const outputContainer = file.output && file.output !== STDIO ? (file.outputContainer ?? containerOf(file.output)) : undefined
  const written = outputContainer ? new Cursor(readRecords(outputContainer, file.output!, { file: file.output!, recordKeys: target.recordKeys, header: {} })) : undefined
  let group: string | undefined
  let current: SourceRecord | undefined
  const cases = read(file.input, { from: file.from, onError: 'skip', ...(inputContainer ? { container: inputContainer } : {}), ...(file.map ? { map: file.map } : {}), ...(file.recordRange ? { recordRange: file.recordRange } : {}), target: file.to })
  try {
    for await (const c of cases) await reviewCase(c)
  } finally {
    // A file not read to its end is closed now, not when its handle is collected.
    await raw?.close()
    await written?.close()
  }

  async function reviewCase(c: EvalCase): Promise<void> {
    const place = placeOf(c) ?? {}
    const own = place.file === undefined || place.file === file.input
    const sourceRecord = own && raw ? await raw.find((r) => (place.line === undefined || r.line === place.line) && (place.record === undefined || r.index === place.record)) : undefined
    // Cases a record groups together (DeepEval's arena contestants) are written as one record.
    const inGroup = outputContainer ? target.group?.(c, outputContainer) : undefined
    if (inGroup === undefined || inGroup !== group) current = await written?.next()
    group = inGroup
    const carriedFrom = trace(c, sourceRecord?.value, current?.value, file.output !== undefined && written !== undefined, rows)
    if (review.samples.length < samples) {
      review.samples.push({
        place: { ...place, ...(place.file === undefined ? { file: file.input } : {}) },
        ...(sourceRecord ? { source: sourceRecord.value } : {}),
        ...(current ? { written: current.value } : {}),
        carriedFrom,
      })
    }
  }
}

/** A stream of records read one at a time, and searched forward. */
class Cursor {
  private readonly iterator: AsyncIterator<SourceRecord>
  private held: SourceRecord | undefined
  private done = false

  constructor(records: AsyncIterable<SourceRecord>) {
    this.iterator = records[Symbol.asyncIterator]()
  }

  async close(): Promise<void> {
    this.done = true
    await this.iterator.return?.()
  }

  async next(): Promise<SourceRecord | undefined> {
    if (this.held) {
      const r = this.held
      this.held = undefined
      return r
    }
    if (this.done) return undefined
    try {
      const step = await this.iterator.next()
      if (!step.done) return step.value
    } catch {
      // A record the conversion skipped as bad is passed over here too; a file that cannot be read is not traced further.
    }
    this.done = true
    return undefined
  }

  /** The first record from here on that `matches`, which is kept for the next search (records a record's cases share). */
  async find(matches: (r: SourceRecord) => boolean): Promise<SourceRecord | undefined> {
    for (let r = await this.next(); r; r = await this.next()) {
      if (r.error) continue
      if (matches(r)) {
        this.held = r
        return r
      }
    }
    return undefined
  }
}

/** The canonical fields of a case a reviewer tells apart: each key, and each key of `metadata` and of each format's `extras`. */
function caseFields(c: EvalCase): [string, unknown][] {
  const out: [string, unknown][] = []
  for (const [key, value] of Object.entries(c)) {
    if (key === 'generated' || value === undefined) continue
    if (key === 'metadata' && isJsonObject(value) && Object.keys(value).length) for (const [k, v] of Object.entries(value)) out.push([`metadata.${k}`, v])
    else if (key === 'extras' && isJsonObject(value)) {
      for (const [format, kept] of Object.entries(value)) {
        // How the source spelled its data (`$keys`, `$form`) is no field of it.
        if (isJsonObject(kept)) for (const [k, v] of Object.entries(kept)) if (!SPELLING_MARKERS.has(k)) out.push([`extras.${format}.${k}`, v])
      }
    } else out.push([key, value])
  }
  return out
}

/**
 * Counts, for each canonical field of `c`, the path of the source record and of the written
 * record that hold its values; returns the source paths whose values went under the carry key.
 */
function trace(c: EvalCase, source: unknown, written: unknown, outputRead: boolean, rows: Map<string, FieldRow>): string[] {
  const sourcePaths = source === undefined ? [] : pathsOf(source)
  const writtenPaths = written === undefined ? [] : pathsOf(written)
  const carriedFrom: string[] = []
  for (const [field, value] of caseFields(c)) {
    let row = rows.get(field)
    if (!row) rows.set(field, (row = { field, from: {}, to: {}, records: 0, carried: 0, dropped: 0 }))
    row.records++
    const wanted = leavesOf(value)
    // The file's own keys (`$file`) ride on the first case, from no record.
    const from = field.endsWith('.$file') ? '(file keys)' : bestPath(sourcePaths, wanted)
    if (from !== undefined) row.from[from] = (row.from[from] ?? 0) + 1
    if (!outputRead) continue
    const to = bestPath(writtenPaths, wanted)
    // The file's own keys a record does not hold are the written file's (a JSON Lines dataset's sidecar).
    if (to === undefined && field.endsWith('.$file')) {
      row.to['(file keys)'] = (row.to['(file keys)'] ?? 0) + 1
      continue
    }
    if (to === undefined) {
      row.dropped++
      continue
    }
    row.to[to] = (row.to[to] ?? 0) + 1
    if (to.split('.').includes(CARRY_KEY)) {
      row.carried++
      if (from !== undefined && !from.startsWith('(')) carriedFrom.push(from)
    }
  }
  return carriedFrom
}

interface Path {
  path: string
  depth: number
  leaves: Set<string>
  /** The leaves joined by NUL, which no text holds, once asked for: a value inside one of them is found in one search. */
  text?: string
}

/** How deep into objects a record's fields are told apart (`additional_metadata.evalferry.extras.evalcase.name`). */
const MAX_DEPTH = 6

/** Every path into objects of a record (not into lists), with the text of the values under it; JSON text in a cell counts as its value. */
function pathsOf(record: unknown): Path[] {
  const paths: Path[] = []
  const walk = (value: unknown, path: string, depth: number): Set<string> => {
    const object = asObject(value)
    if (!object || depth >= MAX_DEPTH) return leavesOf(value)
    const all = new Set<string>()
    for (const [key, child] of Object.entries(object)) {
      const childPath = path ? `${path}.${key}` : key
      const leaves = walk(child, childPath, depth + 1)
      paths.push({ path: childPath, depth: depth + 1, leaves })
      for (const leaf of leaves) all.add(leaf)
    }
    return all
  }
  walk(record, '', 0)
  return paths
}

/** An object, or JSON text of one (a CSV cell, a Parquet column of JSON). */
export function asObject(value: unknown): JsonObject | undefined {
  if (isJsonObject(value)) return value
  if (typeof value === 'string' && value.startsWith('{') && mayBeJson(value)) {
    try {
      const parsed: unknown = JSON.parse(value)
      return isJsonObject(parsed) ? parsed : undefined
    } catch {
      return undefined
    }
  }
  return undefined
}

/** The text of every number, string and boolean in a value (JSON text in a string too), the role of a message aside: it tells no field apart. */
function leavesOf(value: unknown, out = new Set<string>(), key?: string): Set<string> {
  if (typeof value === 'string') {
    if (value !== '' && !(key === 'role' || key === 'type')) out.add(value)
    if ((value.startsWith('{') || value.startsWith('[')) && mayBeJson(value)) {
      try {
        leavesOf(JSON.parse(value) as unknown, out)
      } catch {
        // text that only looks like JSON is text
      }
    }
  } else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') out.add(String(value))
  else if (Array.isArray(value)) for (const v of value) leavesOf(v, out)
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) leavesOf(v, out, k)
  return out
}

/** The path whose values hold most of `wanted` (by length of text), the deepest of equals: the field's own place, not the object around it. */
function bestPath(paths: Path[], wanted: Set<string>): string | undefined {
  if (!wanted.size) return undefined
  let best: Path | undefined
  let bestScore = 0
  for (const p of paths) {
    let score = 0
    // A value found whole counts twice what one found inside a longer text does (a list joined with `|`, a message's text).
    for (const w of wanted) if (p.leaves.has(w)) score += 2 * w.length
    else if (w.length >= 8 && (p.text ??= [...p.leaves].join('\0')).includes(w)) score += w.length
    if (score > bestScore || (score === bestScore && score > 0 && best && p.depth > best.depth && p.path.startsWith(best.path + '.'))) {
      best = p
      bestScore = score
    }
  }
  return best?.path
}
