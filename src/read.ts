/**
 * Reading: a codec yields the records of a file, the source adapter turns each into canonical
 * cases, with the file's own keys on the first, its includes read in place, and each case told by
 * where it was read. Only the current record is held, whatever the input size.
 */
import { dirname, resolve as resolvePath } from 'node:path'
import { open, readFile } from 'node:fs/promises'
import { allAdapters, getAdapter } from '../adapters/index.ts'
import type { Adapter, Container, DecodeContext, FormatName } from '../adapters/types.ts'
import { applyCarry, deepEqual, isCarry } from './carry.ts'
import { containerOf, readRecords } from './codecs/index.ts'
import { CASES_FILE_KEY, SINGLE_KEY, type ColumnType, type HeaderWarning, type SourceRecord } from './codecs/types.ts'
import { detect, readersOf, SURE, type DetectOptions, type Detection } from './detect.ts'
import { DataError, EvalferryError, locate, UsageError, type Location } from './errors.ts'
import { grown, SEEN, StringTable } from './ids.ts'
import { exists, isFile, isPipe, startsAsGzip, STDIO } from './io.ts'
import { checkCaseShape } from './mapping.ts'
import { CARRY_KEY, isJsonObject, own, type EvalCase, type JsonObject } from './model.ts'
import { addWarning, type ConversionReport } from './report.ts'
import { untilAborted } from './abort.ts'
import type { ReadOptions } from './options.ts'
import type { FilePart } from './parts.ts'
import { checkReadOptions, requireContainer } from './option-checks.ts'

const COMMENTS_NOT_CARRIED = "comments are not carried (YAML comments are not data); this is the file's first"
const INCLUDE_NOT_KEPT = "the include is not kept: its file's cases are written in its place"

/** Keys a file holds after its first case had taken the file's keys: the file is read again with them (see `ReadOptions.fileKeys`). */
export class LateKeys extends Error {
  constructor(readonly header: JsonObject) {
    super('the file has keys after its records')
  }
}

/**
 * A record past the first ones, which detection read, that the detected format refuses and a
 * format detection weighed as likely reads: the conversion begins again, reading the file as that.
 */
export class GuessRefused extends Error {
  constructor(
    readonly format: FormatName,
    readonly refusal: EvalferryError,
  ) {
    super(`the file reads as ${format}`)
  }
}
/** The canonical cases of one dataset file (or `-`), in order. */
export async function* read(input: string, options: ReadOptions = {}): AsyncGenerator<EvalCase> {
  checkReadOptions(input, options)
  const items = await openCases(input, options)
  for await (const item of options.signal ? untilAborted(items, options.signal) : items) {
    if (item.from) readFrom.set(item.value, item.from)
    yield item.value
  }
}

/** A case read from a file, and where: a case the target cannot take is named by its place in the input. */
export interface ReadCase {
  value: EvalCase
  /** Absent for a case a caller made, which is named by its place in the output. */
  from?: Location | undefined
}

/**
 * The format of a file that is read after: a named pipe, which gives its bytes once, cannot be
 * read to tell its format and then again to convert it.
 */
export async function detectFormat(input: string, options: DetectOptions): Promise<FormatName> {
  return (await detectGuess(input, options)).format
}

/** `detectFormat`, with how sure detection was and of what else. */
export async function detectGuess(input: string, options: DetectOptions): Promise<Detection> {
  if (await isPipe(input)) throw new UsageError(`${input} is a named pipe, which can be read only once: name its format with --from`)
  return detect(input, options)
}

/** The cases of a file, once its format is known to read its container. */
export async function openCases(input: string, options: ReadOptions, idTable?: StringTable): Promise<AsyncGenerator<ReadCase>> {
  const container = requireContainer(input, options.container, 'input')
  let from = options.from
  if (!from) {
    if (input === STDIO) throw new UsageError('reading standard input needs --from')
    const guess = await detectGuess(input, { container })
    from = guess.format
    options = { ...options, guess }
  }
  const adapter = await getAdapter(from)
  if (!adapter.reads.includes(container)) {
    throw new UsageError(`${adapter.name} does not read ${container} files (it reads ${adapter.reads.join(', ')})`)
  }
  if (options.map && !adapter.mapsRows) {
    throw new UsageError(`--map maps the columns of a table (csv, hf, langsmith); ${input} is ${adapter.name}, whose fields are its own`)
  }
  return readCases(input, container, adapter, options, new SeenIds(input, idTable))
}

export async function* readCases(
  file: string,
  container: Container,
  adapter: Adapter,
  options: ReadOptions,
  seenIds: SeenIds,
  /** The files that include this one, the outermost first: none for the file converted. */
  includedBy: readonly string[] = [],
  part?: FilePart,
): AsyncGenerator<ReadCase> {
  const isIncluded = includedBy.length > 0
  const header: JsonObject = { ...options.fileKeys, ...(await sidecarKeys(file, container, adapter)) }
  const range = options.recordRange
  const { records, columns, headerWarnings, comments, schemaMetadata, columnTypes } = recordsOf(file, container, adapter, options, header, part)
  const report = options.report
  const state: Record<string, unknown> = part?.state ? structuredClone(part.state) : {}
  let first = !part?.continuation
  if (part) part.decodeState = state

  const ctx: DecodeContext = {
    file,
    container,
    header,
    index: 0,
    columns,
    map: options.map,
    schemaMetadata,
    columnTypes,
    state,
    ...(options.target ? { target: options.target } : {}),
    warn: () => {},
  }

  // The record being decoded, and its location, built only when needed: a CSV row counts its line on demand.
  let record: SourceRecord | undefined
  let place: Location | undefined
  let previousLine: number | undefined
  const where = (): Location => {
    if (place) return place
    const { line, column } = record!
    return (place = { file, ...(line === undefined ? { record: record!.index } : column === undefined ? { line } : { line, column }) })
  }
  ctx.warn = (message, field) => report && addWarning(report, message, { ...where(), ...(field ? { field } : {}) })
  // Called per record: an empty list (nearly always) costs one comparison.
  const headerWarned = (): void => {
    if (headerWarnings.length === 0) return
    for (const w of headerWarnings.splice(0)) if (report) addWarning(report, w.message, { file, line: w.line, field: w.field })
  }

  // Columns `--map ignore=` leaves out are reported as dropped, as a dropped field is.
  const ignored = options.map && typeof options.map !== 'function' && options.map.ignore?.length ? options.map.ignore : undefined
  // The file's keys as the first case took them.
  let takenKeys: JsonObject | undefined
  // Keys read on an earlier pass win over those read so far: a key given twice keeps its last value, as Python's json keeps it.
  const takeFileKeys = (c: EvalCase): void => {
    if (options.fileKeys) Object.assign(header, options.fileKeys)
    attachFileKeys(c, adapter, header)
    takenKeys = { ...header }
  }
  let refusedOnce = false
  for await (record of records) {
    headerWarned()
    if (range) {
      if (record.index < range[0]) continue
      if (record.index >= range[1]) break
    }
    if (options.progress) options.progress.records++
    place = undefined
    ctx.index = record.index

    const included = record.error ? undefined : adapter.include?.(record.value, header)
    if (included !== undefined) {
      // Included cases would shift every later part's record numbers: the file converts in one thread.
      if (part?.range) throw new Error('an include inside a part of a file')
      const { path, includedContainer } = includeOf(included, record.value, file, adapter, header, options, where())
      // A file that includes itself, or a file that includes it, would be read without end.
      if ([...includedBy, file].some((f) => resolvePath(f) === path)) {
        throw new DataError('E_FIELD', `the include names ${path === resolvePath(file) ? 'this file itself' : 'a file that includes this one'}: its cases would be read without end`, { ...where(), field: String(record.value) })
      }
      try {
        for await (const c of readCases(path, includedContainer, adapter, options, seenIds, [...includedBy, file])) {
          // The file's first case, included or its own, takes the file's keys.
          if (first && !isIncluded) {
            takeFileKeys(c.value)
            first = false
          }
          yield c
        }
      } catch (error) {
        if (error instanceof EvalferryError && error.code === 'E_IO') error.location = { ...where(), field: String(record.value) }
        throw error
      }
      continue
    }

    let cases: EvalCase[]
    try {
      if (record.error) throw record.error
      if (record.warnings) for (const warning of record.warnings) ctx.warn(warning)
      const decoded = adapter.decode(record.value, ctx)
      cases = Array.isArray(decoded) ? decoded : [decoded]
      if (options.check && adapter.check && report) reportChecks(adapter.check(record.value, ctx), record, where(), report)
      if (ignored && report) countIgnored(report, ignored, record.value)
      for (const c of cases) {
        // The file's own ids are unique; a carry may restore a case's id that was not (see CaseEncoder).
        if (adapter.uniqueIds) seenIds.add(c, where())
        applyCarried(c)
      }
      // Included cases join the including file, whose own keys ride on its first case.
      if (first && cases[0] && !isIncluded) takeFileKeys(cases[0])
    } catch (error) {
      const located = locatedAt(error, where(), record)
      if (await weighGuess(located, record, adapter, options, { file, container, header, columns }, first && !refusedOnce)) refusedOnce = true
      skip(located, record, options)
      continue
    }
    if (cases[0]) first = false
    if (part) part.firstPending = first
    // Records that share a line (a JSON list on one line) are told apart by their number.
    const from = record.line !== undefined && record.line === previousLine ? { file, record: record.index } : where()
    previousLine = record.line
    for (const c of cases) {
      if (report) report.records.read++
      yield { value: c, from }
    }
  }
  headerWarned()
  if (comments.line !== undefined && report) addWarning(report, COMMENTS_NOT_CARRIED, { file, line: comments.line })
  if (takenKeys && !options.recordRange) keysAfterTheFirstCase(header, takenKeys, adapter, options, file)
}

/**
 * The records of `file` as its codec reads them, and what the codec tells of the file as it goes
 * (its header keys, columns and their types, its first comment), which the adapter decodes with.
 */
function recordsOf(file: string, container: Container, adapter: Adapter, options: ReadOptions, header: JsonObject, part: FilePart | undefined) {
  const found = {
    columns: [] as string[],
    headerWarnings: [] as HeaderWarning[],
    comments: {} as { line?: number },
    schemaMetadata: {} as Record<string, string>,
    columnTypes: {} as Record<string, ColumnType>,
  }
  const range = options.recordRange
  // A record range whose bytes are known is read as a part of the file that starts it (its file keys and includes stay).
  const bytes = range && !part && (container === 'csv' || container === 'jsonl') ? options.recordBytes : undefined
  const continuation = part?.continuation ?? (bytes && bytes.start > 0 ? { line: bytes.line, index: range![0] } : undefined)
  const records = readRecords(
    container,
    file,
    {
      file,
      recordKeys: adapter.recordKeys,
      ...(adapter.include ? { casesFiles: true } : {}),
      header,
      headerWarnings: found.headerWarnings,
      ...(options.comments === 'warn' ? { comments: found.comments } : {}),
      columns: found.columns,
      schemaMetadata: found.schemaMetadata,
      columnTypes: found.columnTypes,
      ...(options.progress ? { progress: options.progress } : {}),
      ...(options.parseThread ? { parseThread: options.parseThread } : {}),
      ...(continuation ? { continuation } : {}),
      ...(range ? { recordRange: range } : {}),
    },
    part ?? (bytes ? { range: { start: bytes.start, end: bytes.end }, ...(bytes.prefix === undefined ? {} : { prefix: bytes.prefix }) } : undefined),
  )
  return { records, ...found }
}

/**
 * The file an include (`- file://cases.yaml`) names, beside the including file, and its
 * container; a name that is no dataset of the format is bad data at the include's line.
 */
function includeOf(included: string, value: unknown, file: string, adapter: Adapter, header: JsonObject, options: ReadOptions, at: Location): { path: string; includedContainer: Container } {
  const path = resolvePath(dirname(file), included)
  const includedContainer = containerOf(path)
  if (!includedContainer || !adapter.reads.includes(includedContainer)) {
    const expected = adapter.reads.map((c) => `.${c}`).join(' or ')
    throw new DataError('E_FIELD', `the include names no ${adapter.name} dataset: expected a ${expected} file`, { ...at, field: String(value) })
  }
  // A file named in place of the list (`tests: ./dataset.jsonl`) is kept: the file's keys name it.
  const named = header[CASES_FILE_KEY] === value
  if (options.includes === 'warn' && options.report && !named) addWarning(options.report, INCLUDE_NOT_KEPT, { ...at, field: String(value) })
  return { path, includedContainer }
}

/** The keys of the sidecar beside `file` that the format reads its header from, if there is one. */
async function sidecarKeys(file: string, container: Container, adapter: Adapter): Promise<JsonObject | undefined> {
  const sidecar = file !== STDIO ? adapter.sidecar?.(file, container) : undefined
  // A YAML file of cases there is a dataset of its own, not this one's sidecar.
  if (!sidecar || !(await isFile(sidecar)) || (await holdsCases(sidecar, adapter))) return undefined
  const { parseYamlDocument } = await import('./codecs/yaml.ts')
  const parsed = parseYamlDocument(await readSidecar(sidecar), sidecar)
  return isJsonObject(parsed) ? parsed : undefined
}

/** What the format's own tool refuses in a record that reads (`Adapter.check`), as errors in the report, each on its field's line. */
function reportChecks(refusals: { field: string; message: string }[], record: SourceRecord, at: Location, report: ConversionReport): void {
  for (const { field, message } of refusals) {
    // On the field's own line, the record's column says nothing.
    const line = record.fieldLine?.(field)
    const location: Location = { ...at, field }
    if (line !== undefined) {
      location.line = line
      delete location.column
    }
    report.errors.push({ message, code: 'E_FIELD', location })
  }
}

/** The error a record gave, at the record, or on its field's own line where the codec can tell it. */
function locatedAt(error: unknown, at: Location, record: SourceRecord): EvalferryError {
  const located = locate(error, at)
  const field = located.location.field
  const line = field === undefined ? undefined : record.fieldLine?.(field)
  if (line !== undefined && line !== located.location.line) {
    // The record's column was where it starts: on the field's own line, it says nothing.
    located.location.line = line
    delete located.location.column
  }
  return located
}

/**
 * A record the detected format refuses: a weak guess refused by the file's first record (`first`)
 * says which formats would read it (true when it did); a surer one, refused by a later record,
 * gives way to the likely format that reads it, when the conversion can begin again.
 */
async function weighGuess(located: EvalferryError, record: SourceRecord, adapter: Adapter, options: ReadOptions, context: Parameters<typeof readersOf>[2], first: boolean): Promise<boolean> {
  const guess = options.guess
  if (!guess || guess.format !== adapter.name || record.error || located instanceof UsageError) return false
  if (guess.confidence < SURE && first) {
    located.message += await otherReaders(record.value, guess, context)
    return true
  }
  if (guess.confidence >= SURE && options.reguess && options.canRetry?.() !== false) {
    const reader = (await readersOf(record.value, adapter.name, context, guess.candidates)).find((f) => !options.reguess!.has(f) && (guess.candidates.find((c) => c.format === f)?.confidence ?? 0) >= SURE)
    if (reader) throw new GuessRefused(reader, located)
  }
  return false
}

/** A record left out under `onError: 'skip'`, told in the report and to `onReject`; otherwise its error stops the read. */
function skip(located: EvalferryError, record: SourceRecord, options: ReadOptions): void {
  // A mistake in the command (a --map column the table lacks) is no record's: it is never skipped.
  if (options.onError !== 'skip' || located instanceof UsageError) throw located
  const report = options.report
  if (report) {
    report.records.skipped++
    report.errors.push({ message: located.message, code: located.code, location: located.location })
  }
  options.onReject?.({ error: located.message, code: located.code, location: located.location, record: record.raw ?? record.value })
}

/**
 * Keys read after the first case took the file's (a JSON key after the record list, a key given
 * twice): the file is read again with them where it can be, else each is warned of as dropped.
 */
function keysAfterTheFirstCase(header: JsonObject, takenKeys: JsonObject, adapter: Adapter, options: ReadOptions, file: string): void {
  const late = Object.keys(withoutRecordKeys(header, adapter.recordKeys)).filter((k) => !Object.hasOwn(takenKeys, k) || !deepEqual(takenKeys[k], header[k]))
  if (!late.length) return
  const retry = options.lateKeys === 'retry'
  if (retry && options.canRetry?.() !== false) throw new LateKeys(withoutRecordKeys(header, adapter.recordKeys))
  const report = options.report
  for (const key of late) {
    if (!report) continue
    report.dropped[`$file.${key}`] = 1
    const keep =
      file === STDIO
        ? 'convert the file rather than standard input to keep it'
        : retry
          ? 'the output, a stream, had taken it, and is not written again: write to a file to keep it'
          : 'convert() reads the file again to keep it'
    addWarning(report, `this key comes after the records, and the first case, which carries the file's keys, was given out before it was read; ${keep}`, { file, field: key })
  }
}

/** What to add to the error of a record a weak guess refused: the other formats that read it, as `--from` names them. */
async function otherReaders(record: unknown, guess: Detection, context: Parameters<typeof readersOf>[2]): Promise<string> {
  const readers = await readersOf(record, guess.format, context, guess.candidates)
  const taken = `; the file was taken for ${guess.format} from its content, with confidence ${guess.confidence.toFixed(2)}`
  if (!readers.length) return `${taken}, and no other format reads this record either`
  return `${taken}: it reads as ${readers.map((f) => `${f} (--from ${f})`).join(' or ')}`
}

/**
 * Puts back what the case's carry holds. A carry is data too (a user may write one by hand, or
 * hold an object of their own under its key): what it restores must have a case's shape, or it is
 * an error naming the carried field, not a failure further on.
 */
function applyCarried(c: EvalCase): void {
  if (!isCarry(c.metadata?.[CARRY_KEY])) return
  applyCarry(c)
  try {
    checkCaseShape(c, 'the carry gives it')
  } catch (error) {
    if (error instanceof DataError && error.location.field !== undefined) error.location.field = `${CARRY_KEY}.${error.location.field}`
    throw error
  }
}

/** Counts, under `dropped`, the ignored columns a row holds a value in. */
function countIgnored(report: ConversionReport, ignored: readonly string[], row: unknown): void {
  if (!isJsonObject(row)) return
  for (const column of ignored) {
    const value = own(row, column)
    if (value !== undefined && value !== null && value !== '') report.dropped[`ignored.${column}`] = (own(report.dropped, `ignored.${column}`) ?? 0) + 1
  }
}

/**
 * Where each case that `read` gave was read, for `write`: a case the target cannot take is named
 * by its place in the input, which the user can mend. A conversion passes the place beside the case.
 */
const readFrom = new WeakMap<EvalCase, Location>()

/** Where read() read a case: its file and line (or record), as errors name it. */
export function placeOf(c: EvalCase): Location | undefined {
  return readFrom.get(c)
}



/** Puts the file's own keys on its first case as `extras[format].$file`, unless its carry restored them. */
export function attachFileKeys(c: EvalCase, adapter: Adapter, header: JsonObject): void {
  const own = c.extras?.[adapter.name]
  if (own && '$file' in own) return
  const fileKeys = withoutRecordKeys(header, adapter.recordKeys)
  if (!adapter.singleRecord) delete fileKeys[SINGLE_KEY]
  if (Object.keys(fileKeys).length) c.extras = { ...c.extras, [adapter.name]: { ...c.extras?.[adapter.name], $file: fileKeys } }
}

export function withoutRecordKeys(header: JsonObject, recordKeys: string[]): JsonObject {
  const out: JsonObject = {}
  for (const [k, v] of Object.entries(header)) if (!recordKeys.includes(k)) out[k] = v
  return out
}

/**
 * The ids read so far where the source needs them unique, each with where it was first used: in
 * the file being read as a number (its line, or minus its record number), in a file it includes
 * as text. The ids are kept outside the JavaScript heap (see `StringTable`), so that millions of
 * them do not outgrow a worker's capped heap: 4 million UUID ids converted in 374 MB.
 */
export class SeenIds {
  private places = new Float64Array(1024)
  /** Places in files this one includes, by the id's number. */
  private readonly placesElsewhere = new Map<number, string>()
  /** `table` may be the writer's too (see `IdSet`): the ids seen here are those it marks `SEEN`. */
  constructor(
    private readonly file: string,
    private readonly table = new StringTable(),
  ) {}

  /** Remembers the id of `c` at `location`; an id read before is an E_DUPLICATE_ID error. */
  add(c: EvalCase, location: Location): void {
    if (c.id === undefined) return
    const index = this.table.mark(c.id, SEEN)
    if (index < 0) {
      throw new DataError('E_DUPLICATE_ID', `duplicate id "${c.id}" (first used at ${this.describe(-1 - index)})`, { field: 'id' })
    }
    while (index >= this.places.length) this.places = grown(this.places)
    const own = location.file === this.file
    if (!own) this.placesElsewhere.set(index, placeText(location))
    this.places[index] = own && location.line !== undefined ? location.line : -((location.record ?? 0) + 1)
  }

  ids(): string[] {
    return [...this.table.marked(SEEN)]
  }

  private describe(index: number): string {
    const elsewhere = this.placesElsewhere.get(index)
    if (elsewhere !== undefined) return elsewhere
    const place = this.places[index]!
    return placeText(place > 0 ? { file: this.file, line: place } : { file: this.file, record: -place - 1 })
  }
}

function placeText(location: Location): string {
  const where = location.line !== undefined ? `line ${location.line}` : `record ${(location.record ?? 0) + 1}`
  return location.file && location.file !== STDIO ? `${location.file}:${where.replace('line ', '')}` : where
}

/**
 * The files reading `inputs` reads, for `assertWritable`: each input, and the sidecar beside it
 * that a reader takes its header from (an evalcase JSON Lines dataset's YAML), where there is one.
 */
export async function filesRead(inputs: string[]): Promise<string[]> {
  const adapters = await allAdapters()
  const files: string[] = []
  // A set beside the list: a batch names thousands of inputs.
  const listed = new Set<string>()
  for (const input of inputs) {
    files.push(input)
    listed.add(input)
    const container = input === STDIO ? undefined : containerOf(input)
    if (!container) continue
    for (const adapter of adapters) {
      const sidecar = adapter.sidecar?.(input, container)
      // A file of cases there is no sidecar (an earlier conversion's output, say), and no reader takes it as one.
      if (sidecar && !listed.has(sidecar) && (await exists(sidecar)) && !(await holdsCases(sidecar, adapter))) {
        files.push(sidecar)
        listed.add(sidecar)
      }
    }
  }
  return files
}

/** A sidecar's text: unreadable or not UTF-8, it is an error naming it, as a dataset would be. */
async function readSidecar(path: string): Promise<string> {
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (error) {
    throw new EvalferryError('E_IO', `cannot read the sidecar ${path}: ${(error as Error).message}`, { file: path })
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    throw new DataError('E_PARSE', 'invalid UTF-8 in the sidecar', { file: path })
  }
}

/** Whether a YAML file holds a dataset (a case list at the top, or under a record key), not just a sidecar's header keys. */
export async function holdsCases(path: string, adapter: Adapter): Promise<boolean> {
  let head: string
  try {
    const file = await open(path, 'r')
    try {
      const { buffer, bytesRead } = await file.read(Buffer.alloc(1 << 16), 0, 1 << 16, 0)
      // Compressed, it is no sidecar evalferry wrote, and may hold cases: it is never overwritten.
      if (startsAsGzip(buffer.subarray(0, bytesRead))) return true
      head = buffer.toString('utf8', 0, bytesRead)
    } finally {
      await file.close()
    }
  } catch {
    return false
  }
  // A list as the document (its first line of content starts one), or a record key at the top; a
  // list under a header key, which PyYAML writes at the line's start too (`tags:` then `- smoke`), is no case list.
  const first = head.split('\n').find((line) => line.trim() !== '' && !/^\s*#|^---|^%/.test(line))
  return (first !== undefined && /^-( |$)/.test(first)) || new RegExp(`^(${adapter.recordKeys.join('|')})\\s*:`, 'm').test(head)
}

