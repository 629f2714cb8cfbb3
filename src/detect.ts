/** Telling formats apart: the container from the extension (checked against the content), the format from the records. */
import { allAdapters } from '../adapters/index.ts'
import type { Adapter, Container, DecodeContext, FormatName, SniffSample } from '../adapters/types.ts'
import { existsSync } from 'node:fs'
import { basename, dirname, resolve } from 'node:path'
import { CONTAINERS, containerOf, readRecords } from './codecs/index.ts'
import { CASES_FILE_KEY } from './codecs/types.ts'
import { DataError, EvalferryError, UsageError, type Location } from './errors.ts'
import { isJsonObject, type JsonObject } from './model.ts'
import { missingInput } from './io.ts'

export interface Detection {
  file: string
  format: FormatName
  container: Container
  /** How sure, from 0 to 1. */
  confidence: number
  /** Every format's score, best first; a surer one that gave way to the one taken says why (`passedOver`). */
  candidates: { format: FormatName; confidence: number; passedOver?: string }[]
  /** Records in the file (with `count`), those that read. */
  records?: number
  /** Records that could not be read (with `count`: a line of JSON Lines that is not JSON), and the first one's error. */
  unreadable?: { count: number; first: { message: string; code: string; location: Location } }
  /** Top-level fields seen in the records (with `count`: in all of them; else in the sample). */
  fields: string[]
}

const SAMPLE_SIZE = 20

/** The format an empty file is read as, the first of these that reads its container. */
const EMPTY_READERS: FormatName[] = ['evalcase', 'deepeval', 'hf']

export interface DetectOptions {
  /** Read the whole file to count records and collect fields. */
  count?: boolean
  container?: Container
  /** The format the file is being converted to (see below). */
  target?: FormatName
  /** Counters updated as the read goes, for a progress bar: records read, bytes read. */
  progress?: { records: number; bytes: number }
}

interface Sample {
  header: JsonObject
  columns: string[]
  records: unknown[]
  fields: Set<string>
  count: number
  unreadable: { count: number; first: EvalferryError } | undefined
}

export async function detect(file: string, options: DetectOptions = {}): Promise<Detection> {
  const adapters = await allAdapters()
  const recordKeys = [...new Set(adapters.flatMap((a) => a.recordKeys))]
  if (options.container !== undefined && !CONTAINERS.includes(options.container)) {
    throw new UsageError(`detect(): the option container takes ${CONTAINERS.join(' or ')}, not ${JSON.stringify(options.container)}`)
  }
  let container = options.container ?? containerOf(file)
  if (!container) throw missingInput(file) ?? new UsageError(`cannot tell the container of ${file} from its extension`)

  const sampleOf = async (c: Container, strict = false, path = file, named = false): Promise<Sample> => {
    const header: JsonObject = {}
    const columns: string[] = []
    const records: unknown[] = []
    const fields = new Set<string>()
    let count = 0
    // A bad record the rest of the file can be read past (a line of JSON Lines that is not JSON) is
    // left out of the sample and the count: `--on-error skip` skips it later. With nothing else, it is the answer.
    let bad: EvalferryError | undefined
    let unreadable = 0
    let firstLine: number | undefined
    const progress = options.progress
    for await (const r of readRecords(c, path, { file: path, recordKeys, casesFiles: true, header, columns, ...(progress ? { progress } : {}) })) {
      // Set, not added to: a file read again as JSON Lines counts from its start.
      if (progress) progress.records = count + unreadable + 1
      if (r.error) {
        if (strict) throw r.error
        bad ??= r.error
        unreadable++
      } else {
        if (records.length === 0) firstLine = r.line
        if (records.length < SAMPLE_SIZE) records.push(r.value)
        if (isJsonObject(r.value) && (options.count || count < SAMPLE_SIZE)) for (const k of Object.keys(r.value)) fields.add(k)
        count++
      }
      if (!options.count && count + unreadable >= SAMPLE_SIZE) break
    }
    if (bad && records.length === 0) throw bad
    // A suite that names its cases file in place of the list (`tests: ./dataset.jsonl`) is told by
    // that file's cases; the file's own name in it is not followed again, nor another suite's.
    const cases = named ? undefined : header[CASES_FILE_KEY]
    const casesFile = typeof cases === 'string' && records.length === 1 && records[0] === cases ? resolve(dirname(path), cases.replace(/^file:\/\//, '')) : undefined
    const casesContainer = casesFile === undefined ? undefined : containerOf(casesFile)
    if (casesFile !== undefined && casesContainer !== undefined) {
      try {
        return { ...(await sampleOf(casesContainer, strict, casesFile, true)), header }
      } catch (error) {
        // A cases file that cannot be read is told where the suite names it, as converting tells it.
        if (error instanceof EvalferryError && error.code === 'E_IO' && error.location.file === casesFile) {
          error.location = { file: path, ...(firstLine === undefined ? {} : { line: firstLine }), field: cases as string }
        }
        throw error
      }
    }
    return { header, columns, records, fields, count, unreadable: bad ? { count: unreadable, first: bad } : undefined }
  }

  let sample
  try {
    sample = await sampleOf(container)
  } catch (error) {
    // A `.json` file that holds JSON Lines is common enough to accept.
    if (container === 'json' && error instanceof EvalferryError && /after the end of the JSON document/.test(error.message)) {
      try {
        // Only a file of JSON lines, every one: a JSON document with more text after it stays an error.
        sample = await sampleOf('jsonl', true)
        container = 'jsonl'
      } catch {
        throw error
      }
    } else throw error
  }

  const sniffSample: SniffSample = {
    container,
    records: sample.records,
    header: sample.header,
    columns: sample.columns,
    fileName: file,
  }
  const candidates: Detection['candidates'] = adapters
    .filter((a) => a.reads.includes(container!))
    .map((a) => ({ format: a.name, confidence: clamp(a.sniff(sniffSample)) }))
    // On a tie, the generic table wins: it maps every column and so loses nothing whatever the table holds.
    .sort((a, b) => b.confidence - a.confidence || Number(b.format === 'csv') - Number(a.format === 'csv'))
  // A plain table converted to hf is read as hf reads it, so that a Hugging Face CSV keeps its
  // column names: the two map a table's columns alike, but each keeps its own header.
  const hf = options.target === 'hf' ? candidates.find((c) => c.format === 'hf' && c.confidence > 0) : undefined
  if (candidates[0]?.format === 'csv' && hf) candidates.unshift(...candidates.splice(candidates.indexOf(hf), 1))
  const top = candidates[0]
  const topReading = top && top.confidence > 0 && top.confidence < CERTAIN ? readingOf(adapters, top.format, sniffSample) : undefined
  const preferred = topReading?.refused
    ? // A guess that cannot read the records it was made from gives way to the surest other that reads them all.
      candidates.find((c) => c !== top && c.confidence >= SURE && !readingOf(adapters, c.format, sniffSample).refused)
    : topReading?.unnamed.size
      ? // One that keeps keys of theirs aside as unknown gives way to one that knows them all, and reads some as fields of a case.
        candidates.find((c) => {
          if (c === top || c.confidence === 0) return false
          const other = readingOf(adapters, c.format, sniffSample)
          const unnamed = [...topReading.unnamed]
          return !other.refused && unnamed.every((key) => !other.unnamed.has(key)) && unnamed.some((key) => other.fields.has(key))
        })
      : undefined
  if (preferred) {
    const refused = topReading!.refused
    top!.passedOver = refused
      ? `its reader refuses record ${(refused.location.record ?? 0) + 1}: ${refused.location.field ? `${refused.location.field}: ` : ''}${refused.message}`
      : `its reader keeps ${[...topReading!.unnamed].join(', ')} aside as unknown`
    candidates.unshift(...candidates.splice(candidates.indexOf(preferred), 1))
  }
  const best = candidates[0]
  // A file that holds nothing (no record, no header) reads as no cases in every format: any reader will do.
  const empty = sample.count === 0 && sample.columns.length === 0 && Object.keys(sample.header).length === 0
  const format = best?.confidence ? best.format : empty ? EMPTY_READERS.find((f) => candidates.some((c) => c.format === f)) : undefined
  if (!format) {
    const described = sidecarOf(adapters, file)
    if (described) throw new DataError('E_DETECT', `this file is the sidecar of ${described.cases} beside it (the keys of its ${described.format} cases) and holds no cases: convert ${described.cases}`, { file })
    throw new DataError('E_DETECT', `cannot tell which format this ${container} file is; name it with --from`, { file })
  }
  return {
    file,
    format,
    container,
    confidence: best?.confidence ?? 0,
    candidates,
    ...(options.count ? { records: sample.count } : {}),
    ...(options.count && sample.unreadable ? { unreadable: { count: sample.unreadable.count, first: errorEntry(sample.unreadable.first) } } : {}),
    fields: [...sample.fields],
  }
}

/** How sure a guess must be to be taken in place of one whose reader refuses the file's first records; a weaker one is only suggested (see `readersOf`). */
export const SURE = 0.5

/** A guess this sure is taken as it is. */
const CERTAIN = 0.9

/** How the reader of a format takes the sampled records. */
interface Reading {
  /** The first error it gives, read as a conversion reads them. */
  refused?: EvalferryError
  /** Top-level keys of the records it keeps aside as unknown (in its `extras`). */
  unnamed: Set<string>
  /** Top-level keys of the records it reads as fields of a case (neither unknown nor metadata). */
  fields: Set<string>
}

/** How `format`'s reader takes the sample's records: a file's first ones in detection, a refused one in `readersOf`. */
function readingOf(adapters: Adapter[], format: FormatName, sample: SniffSample): Reading {
  const reading: Reading = { unnamed: new Set(), fields: new Set() }
  const adapter = adapters.find((a) => a.name === format)
  if (!adapter) return reading
  const ctx = decodeContext(sample.fileName, sample.container, sample.header, sample.columns)
  for (const [index, record] of sample.records.entries()) {
    if (adapter.include?.(record, sample.header) !== undefined) continue
    ctx.index = index
    let decoded
    try {
      decoded = adapter.decode(record, ctx)
    } catch (error) {
      // Whatever a reader throws on another format's record is its refusal: detection itself never fails on it.
      const refused = error instanceof EvalferryError ? error : new DataError('E_FIELD', error instanceof Error ? error.message : String(error))
      refused.location.record ??= index
      reading.refused = refused
      return reading
    }
    if (!isJsonObject(record)) continue
    for (const c of Array.isArray(decoded) ? decoded : [decoded]) {
      const unknown = Object.keys(c.extras?.[format] ?? {}).filter((key) => !key.startsWith('$'))
      for (const key of unknown) reading.unnamed.add(key)
      for (const key of Object.keys(record)) if (!unknown.includes(key) && !Object.hasOwn(c.metadata ?? {}, key)) reading.fields.add(key)
    }
  }
  return reading
}

/** A context to decode a record with outside a conversion: warnings go nowhere, the file's state starts afresh. */
function decodeContext(file: string, container: Container, header: JsonObject, columns: string[] | undefined): DecodeContext {
  return { file, container, header: { ...header }, index: 0, ...(columns ? { columns } : {}), state: {}, warn: () => {} }
}

/**
 * The other formats whose readers take `record` (a record of `file`, which `format` refused), by
 * how sure detection was of them: what to suggest with `--from`.
 */
export async function readersOf(record: unknown, format: FormatName, context: { file: string; container: Container; header: JsonObject; columns?: string[] }, candidates?: Detection['candidates']): Promise<FormatName[]> {
  const adapters = await allAdapters()
  const rank = (name: FormatName): number => candidates?.find((c) => c.format === name)?.confidence ?? 0
  const sample: SniffSample = { container: context.container, records: [record], header: context.header, ...(context.columns ? { columns: context.columns } : {}), fileName: context.file }
  return adapters
    .filter((a) => a.name !== format && a.reads.includes(context.container))
    // A record a format takes as an include names a file; it is no case that format reads.
    .filter((a) => a.include?.(record, context.header) === undefined && !readingOf(adapters, a.name, sample).refused)
    .map((a) => a.name)
    .sort((a, b) => rank(b) - rank(a))
}

/** An error as `detect --json` lists it. */
export function errorEntry(error: EvalferryError): { message: string; code: string; location: Location } {
  return { message: error.message, code: error.code, location: error.location }
}

function clamp(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.min(1, n)) : 0
}

/** The format and cases file whose sidecar `file` is (AgentV's `dataset.yaml` beside `dataset.jsonl`), if it is one. */
function sidecarOf(adapters: Adapter[], file: string): { format: FormatName; cases: string } | undefined {
  const cases = file.replace(/\.ya?ml$/i, '.jsonl')
  if (cases === file || !existsSync(cases)) return undefined
  const adapter = adapters.find((a) => a.sidecar?.(cases, 'jsonl') === file)
  return adapter && { format: adapter.name, cases: basename(cases) }
}
