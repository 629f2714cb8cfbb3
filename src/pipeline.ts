/**
 * read → decode → encode → write, as async iterables: a codec yields records, the source adapter
 * turns each into canonical cases, the target adapter turns each case into a record, a codec
 * writes it. Only the current record (and, when writing, the first 100 cases for the layout, at most 32 MB of them) is
 * held, so memory stays bounded whatever the input size.
 */
import { dirname, resolve as resolvePath } from 'node:path'
import { open, readFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { SPELLING_MARKERS } from '../adapters/fields.ts'
import { allAdapters, getAdapter } from '../adapters/index.ts'
import type { Adapter, Container, DecodeContext, EncodeContext, FileLayout, FormatName, FormatOption } from '../adapters/types.ts'
import { applyCarry, deepEqual, hasOwnSlot, isCarry, lostFields, METADATA_VALUES, withCarry, withoutCarrySlot } from './carry.ts'
import { namedDelimiter } from './codecs/csv.ts'
import { containerOf, readRecords, recordWriter } from './codecs/index.ts'
import { CASES_FILE_KEY, LIST_KEY, SINGLE_KEY, type ColumnType, type HeaderWarning, type Sink, type SourceRecord } from './codecs/types.ts'
import { detect, readersOf, SURE, type DetectOptions, type Detection } from './detect.ts'
import { RelativeFiles } from './file-blocks.ts'
import { DataError, EvalferryError, LayoutError, noCaseRead, requireAbortSignal, UsageError, type Location } from './errors.ts'
import { grown, IdSet, ownString, SEEN, StringTable, WRITTEN } from './ids.ts'
import { assertWritable, AtomicFile, BytesSink, exists, isFile, isPipe, isSpecialFile, missingInput, startsAsGzip, STDIO, type Written } from './io.ts'
import { checkCaseShape, withCellsOf } from './mapping.ts'
import { CARRY_KEY, hasKeys, isJsonObject, isMessageList, own, roughSize, withHeaderOf, withoutFileKeys, withoutGenerated, type EvalCase, type Extras, type JsonObject, type JsonValue } from './model.ts'
import { addWarning, countField, newReport, type ConversionReport } from './report.ts'
import { raceAbort, untilAborted } from './abort.ts'
import type { ConvertOptions, ReadOptions, WriteOptions } from './options.ts'
import type { FilePart, PartResult } from './parts.ts'
import { startSidecar } from './sidecar.ts'

export type { ConvertOptions, ReadOptions, RecordBytes, Reject, WriteOptions } from './options.ts'
export type { FilePart, PartResult } from './parts.ts'
export { raceAbort, untilAborted } from './abort.ts'
import { isAddress } from './services/address.ts'



const COMMENTS_NOT_CARRIED = "comments are not carried (YAML comments are not data); this is the file's first"
const INCLUDE_NOT_KEPT = "the include is not kept: its file's cases are written in its place"

/** Keys a file holds after its first case had taken the file's keys: the file is read again with them (see `ReadOptions.fileKeys`). */
class LateKeys extends Error {
  constructor(readonly header: JsonObject) {
    super('the file has keys after its records')
  }
}

/**
 * A record past the first ones, which detection read, that the detected format refuses and a
 * format detection weighed as likely reads: the conversion begins again, reading the file as that.
 */
class GuessRefused extends Error {
  constructor(
    readonly format: FormatName,
    readonly refusal: EvalferryError,
  ) {
    super(`the file reads as ${format}`)
  }
}


const LAYOUT_SAMPLE = 100
/**
 * The sample stops sooner where its cases take this much memory (as `roughSize` tells it): a
 * hundred records of a few megabytes each, read as objects, took gigabytes.
 */
const LAYOUT_SAMPLE_BYTES = 32 << 20

/** Whether a layout sample of `count` cases taking `bytes` holds enough to choose the layout from. */
function sampleFull(count: number, bytes: number): boolean {
  return count >= LAYOUT_SAMPLE || bytes >= LAYOUT_SAMPLE_BYTES
}
/**
 * How many times `convert` writes a file again for cases its layout could not hold. Each pass
 * gathers every such case it meets (up to `LATE_CASES`, or `LAYOUT_SAMPLE_BYTES` of them), so a
 * file needs more than one more pass only where its cases keep needing columns none before did.
 */
const LAYOUT_RETRIES = 8
const LATE_CASES = LAYOUT_SAMPLE

/** The error of a file whose passes all met cases their layout could not hold. */
function layoutGivenUp(error: LayoutError): LayoutError {
  error.message += ` (the file was written ${LAYOUT_RETRIES + 1} times, each time with up to ${LATE_CASES} more such cases among those its layout is chosen from, and cases kept needing columns none before had); JSON Lines, whose records each have their own keys, holds such a dataset`
  return error
}

/** What `write` and `convert` pass to `writeFile` beside the caller's options. */
interface WriteFileOptions extends WriteOptions {
  /**
   * The file will be written again if its layout cannot hold a case: the pass goes on past such a
   * case to gather the others like it, and the `LayoutError` it ends with holds them all.
   */
  gatherLate?: boolean
  /** The reader's table of the ids it has seen, where both sides keep them: each id is kept once. */
  idTable?: StringTable
  /** Told the output once it is open: `convert` asks it whether a stream has taken bytes. */
  opened?: (file: AtomicFile) => void
  /** Filled with the file the layout names for the records (`FileLayout.casesFile`), committed with the output. */
  companions?: AtomicFile[]
  /** The files being read, which a file the layout names must not be, nor the one each names. */
  inputs?: string[]
}

function requireContainer(path: string, given: Container | undefined, role: 'input' | 'output'): Container {
  const named = path === STDIO ? undefined : containerOf(path)
  if (given && named && given !== named) {
    throw new UsageError(`${path} is named as a ${named} file, but --${role === 'input' ? 'from' : 'to'}-container says ${given}; rename the file, or leave the option out`)
  }
  const container = given ?? named
  if (!container) {
    if (role === 'input') {
      const missing = missingInput(path)
      if (missing) throw missing
    }
    throw new UsageError(
      path === STDIO
        ? `standard ${role === 'input' ? 'input' : 'output'} needs its container named (--${role === 'input' ? 'from-container' : 'to-container'} json|jsonl|csv|yaml|parquet)`
        : `cannot tell the container of ${path} from its extension; expected .json, .jsonl, .csv, .tsv, .yaml, .yml or .parquet, each maybe followed by .gz${role === 'input' ? ', or --from-container' : ', or --to-container'}`,
    )
  }
  return container
}

/** The canonical cases of one dataset file (or `-`), in order. */
export async function* read(input: string, options: ReadOptions = {}): AsyncGenerator<EvalCase> {
  requireText('read()', 'the input path', input)
  // `read(file, 'deepeval')` from JavaScript: the format goes in the options.
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new UsageError(`read() takes its options as an object (read(file, { from: 'deepeval' })), not ${typeof options === 'string' ? JSON.stringify(options) : String(options)}`)
  }
  requireChoice('read(): the option onError', options.onError, ON_ERROR)
  requireChoice('read(): the option comments', options.comments, ['warn'])
  requireChoice('read(): the option includes', options.includes, ['warn'])
  requireMap('read()', options.map)
  requireSignal('read()', options.signal)
  const items = await openCases(input, options)
  for await (const item of options.signal ? untilAborted(items, options.signal) : items) {
    if (item.from) readFrom.set(item.value, item.from)
    yield item.value
  }
}

/** A case read from a file, and where: a case the target cannot take is named by its place in the input. */
interface ReadCase {
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
async function detectGuess(input: string, options: DetectOptions): Promise<Detection> {
  if (await isPipe(input)) throw new UsageError(`${input} is a named pipe, which can be read only once: name its format with --from`)
  return detect(input, options)
}

/** A library caller's missing argument, named as a usage error rather than failing deeper in. */
function requireText(fn: string, what: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${fn} needs ${what}, a string; got ${value === '' ? 'an empty one' : typeof value}`)
}

/**
 * Refuses a value outside `choices` as a usage error, naming it as `name`: the library's option
 * (`convert(): the option onError`) or the command line's flag (`--on-error`).
 */
export function requireChoice<T extends string>(name: string, value: unknown, choices: readonly T[]): asserts value is T | undefined {
  if (value !== undefined && !choices.includes(value as T)) throw new UsageError(`${name} takes ${choices.join(' or ')}, not ${JSON.stringify(value)}`)
}

/** A yes-or-no option given as anything but a boolean (`'false'` would read as true) is refused. */
function requireBoolean(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') throw new UsageError(`${name} takes true or false, not ${JSON.stringify(value)}`)
}

/** What `map` takes: `--map`'s pairs as an object (`{ input: 'question' }`), or a function of the row. */
function requireMap(fn: string, map: unknown): void {
  if (map !== undefined && typeof map !== 'function' && (typeof map !== 'object' || map === null || Array.isArray(map))) {
    throw new UsageError(`${fn}: the option map takes an object of --map's pairs ({ input: 'question' }) or a function of the row, not ${JSON.stringify(map)}`)
  }
}

/** The write options a caller gives, checked as the command line checks its flags. */
function requireWriteOptions(fn: string, options: { extras?: unknown; strict?: unknown }): void {
  requireBoolean(`${fn}: the option extras`, options.extras)
  requireBoolean(`${fn}: the option strict`, options.strict)
}

/** Checked as the other options are, and already aborted, the call does nothing. */
function requireSignal(fn: string, signal: unknown): void {
  requireAbortSignal(`${fn}: `, signal)
  ;(signal as AbortSignal | undefined)?.throwIfAborted()
}

/** A dialect is a way of writing evalcase: given with another target it would be ignored. */

function requireDialectFor(fn: string, dialect: unknown, to: string): void {
  requireChoice(`${fn}: the option dialect`, dialect, DIALECTS)
  if (dialect !== undefined && to !== 'evalcase') throw new UsageError(`${fn}: the option dialect chooses how evalcase is written; the target here is ${to}`)
}

export const DIALECTS = ['agentv', 'evalcase'] as const
export const ON_ERROR = ['fail', 'skip'] as const

/** The cases of a file, once its format is known to read its container. */
async function openCases(input: string, options: ReadOptions, idTable?: StringTable): Promise<AsyncGenerator<ReadCase>> {
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
  return readFile_(input, container, adapter, options, new SeenIds(input, idTable))
}

async function* readFile_(
  file: string,
  container: Container,
  adapter: Adapter,
  options: ReadOptions,
  seenIds: SeenIds,
  isIncluded = false,
  part?: FilePart,
): AsyncGenerator<ReadCase> {
  const header: JsonObject = { ...options.fileKeys }
  const sidecar = file !== STDIO ? adapter.sidecar?.(file, container) : undefined
  // A YAML file of cases there is a dataset of its own, not this one's sidecar.
  if (sidecar && (await isFile(sidecar)) && !(await holdsCases(sidecar, adapter))) {
    const { parseYamlDocument } = await import('./codecs/yaml.ts')
    const parsed = parseYamlDocument(await readSidecar(sidecar), sidecar)
    if (isJsonObject(parsed)) Object.assign(header, parsed)
  }
  const columns: string[] = []
  const headerWarnings: HeaderWarning[] = []
  const comments: { line?: number } = {}
  const schemaMetadata: Record<string, string> = {}
  const columnTypes: Record<string, ColumnType> = {}
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
      headerWarnings,
      ...(options.comments === 'warn' ? { comments } : {}),
      columns,
      schemaMetadata,
      columnTypes,
      ...(options.progress ? { progress: options.progress } : {}),
      ...(continuation ? { continuation } : {}),
      ...(range ? { recordRange: range } : {}),
    },
    part ?? (bytes ? { range: { start: bytes.start, end: bytes.end }, ...(bytes.prefix === undefined ? {} : { prefix: bytes.prefix }) } : undefined),
  )
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
      const path = resolvePath(dirname(file), included)
      const includedContainer = containerOf(path)
      // The dataset names the file: a name that is no dataset is bad data at the include's line.
      if (!includedContainer || !adapter.reads.includes(includedContainer)) {
        const expected = adapter.reads.map((c) => `.${c}`).join(' or ')
        throw new DataError('E_FIELD', `the include names no ${adapter.name} dataset: expected a ${expected} file`, { ...where(), field: String(record.value) })
      }
      // A file named in place of the list (`tests: ./dataset.jsonl`) is kept: the file's keys name it.
      const named = header[CASES_FILE_KEY] === record.value
      if (options.includes === 'warn' && report && !named) addWarning(report, INCLUDE_NOT_KEPT, { ...where(), field: String(record.value) })
      try {
        for await (const c of readFile_(path, includedContainer, adapter, options, seenIds, true)) {
          // The file's first case, included or its own, takes the file's keys.
          if (first && !isIncluded) {
            if (options.fileKeys) Object.assign(header, options.fileKeys)
            attachFileKeys(c.value, adapter, header)
            takenKeys = { ...header }
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
      if (options.check && adapter.check && report) {
        for (const { field, message } of adapter.check(record.value, ctx)) {
          // On the field's own line, the record's column says nothing.
          const line = record.fieldLine?.(field)
          const location: Location = { ...where(), field }
          if (line !== undefined) {
            location.line = line
            delete location.column
          }
          report.errors.push({ message, code: 'E_FIELD', location })
        }
      }
      if (ignored && report) countIgnored(report, ignored, record.value)
      for (const c of cases) {
        // The file's own ids are unique; a carry may restore a case's id that was not (see CaseEncoder).
        if (adapter.uniqueIds) seenIds.add(c, where())
        applyCarried(c)
      }
      // Included cases join the including file, whose own keys ride on its first case.
      if (first && cases[0] && !isIncluded) {
        // Keys read on an earlier pass win over those read so far: a key given twice keeps its last value, as Python's json keeps it.
        if (options.fileKeys) Object.assign(header, options.fileKeys)
        attachFileKeys(cases[0], adapter, header)
        takenKeys = { ...header }
      }
    } catch (error) {
      const located = locate(error, where())
      const field = located.location.field
      const line = field === undefined ? undefined : record.fieldLine?.(field)
      if (line !== undefined && line !== located.location.line) {
        // The record's column was where it starts: on the field's own line, it says nothing.
        located.location.line = line
        delete located.location.column
      }
      // A weak guess that cannot read the file's first record says which formats would.
      const guess = options.guess
      const guessed = guess && guess.format === adapter.name && !record.error && !(located instanceof UsageError) ? guess : undefined
      if (guessed && guessed.confidence < SURE && first && !refusedOnce) {
        refusedOnce = true
        located.message += await otherReaders(record.value, guessed, { file, container, header, columns })
      }
      // A surer one, refused by a later record, gives way to the likely format that reads it, when the conversion can begin again.
      if (guessed && guessed.confidence >= SURE && options.reguess && options.canRetry?.() !== false) {
        const reader = (await readersOf(record.value, adapter.name, { file, container, header, columns }, guessed.candidates)).find((f) => !options.reguess!.has(f) && (guessed.candidates.find((c) => c.format === f)?.confidence ?? 0) >= SURE)
        if (reader) throw new GuessRefused(reader, located)
      }
      // A mistake in the command (a --map column the table lacks) is no record's: it is never skipped.
      if (options.onError !== 'skip' || located instanceof UsageError) throw located
      if (report) {
        report.records.skipped++
        report.errors.push({ message: located.message, code: located.code, location: located.location })
      }
      options.onReject?.({ error: located.message, code: located.code, location: located.location, record: record.raw ?? record.value })
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
  // Keys read after the first case took the file's (a JSON key after the record list, a key given twice).
  const late = takenKeys && Object.keys(withoutRecordKeys(header, adapter.recordKeys)).filter((k) => !Object.hasOwn(takenKeys!, k) || !deepEqual(takenKeys![k], header[k]))
  if (late?.length && !options.recordRange) {
    const retry = options.lateKeys === 'retry'
    if (retry && options.canRetry?.() !== false) throw new LateKeys(withoutRecordKeys(header, adapter.recordKeys))
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
function attachFileKeys(c: EvalCase, adapter: Adapter, header: JsonObject): void {
  const own = c.extras?.[adapter.name]
  if (own && '$file' in own) return
  const fileKeys = withoutRecordKeys(header, adapter.recordKeys)
  if (!adapter.singleRecord) delete fileKeys[SINGLE_KEY]
  if (Object.keys(fileKeys).length) c.extras = { ...c.extras, [adapter.name]: { ...c.extras?.[adapter.name], $file: fileKeys } }
}

function withoutRecordKeys(header: JsonObject, recordKeys: string[]): JsonObject {
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
class SeenIds {
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

/** An error with the file, line or record filled in (an adapter knows only the field). */
function locate(error: unknown, location: Location): EvalferryError {
  // A mistake in code (a row mapper's, or evalferry's own) is no fault of the record: it stops the run as it is, never skipped.
  if (error instanceof TypeError || error instanceof ReferenceError) throw error
  if (error instanceof EvalferryError) {
    error.location = { ...location, ...error.location }
    return error
  }
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    // A value nested past what recursion can walk (JSON text in a CSV cell, say) is bad data, not a crash.
    return new DataError('E_PARSE', 'nested too deeply: a value holds more levels of lists and objects than can be read', location, { cause: error })
  }
  return new DataError('E_FIELD', (error as Error)?.message ?? String(error), location, { cause: error })
}

/**
 * Writes cases to one file (or `-`) atomically; returns the report. Cases given as an array can be
 * gone through again: a later one that needs a column the first ones did not is written with
 * them, as `convert` writes a file again.
 */
export async function write(cases: AsyncIterable<EvalCase> | Iterable<EvalCase>, output: string, options: WriteOptions): Promise<ConversionReport> {
  requireText('write()', 'the output path', output)
  requireText('write()', 'options.to', options?.to)
  requireDialectFor('write()', options.dialect, (await getAdapter(options.to)).name)
  requireWriteOptions('write()', options)
  requireSignal('write()', options.signal)
  const iterable = cases !== null && typeof cases === 'object' && (Symbol.iterator in cases || Symbol.asyncIterator in cases)
  if (!iterable) throw new UsageError(`write() takes the cases as an array, an iterable or an async iterable, not ${cases === null ? 'null' : typeof cases}`)
  if (!Array.isArray(cases)) return writeFile(placed(cases), output, options)
  const start = options.report && structuredClone(options.report)
  let layoutCases = options.layoutCases
  for (let attempt = 0; ; attempt++) {
    try {
      return await writeFile(placed(cases), output, { ...options, ...(layoutCases ? { layoutCases } : {}), gatherLate: attempt < LAYOUT_RETRIES })
    } catch (error) {
      if (!(error instanceof LayoutError && error.cases)) throw error
      if (attempt === LAYOUT_RETRIES) throw layoutGivenUp(error)
      layoutCases = [...(layoutCases ?? []), ...error.cases]
      // The caller's report tells of the last attempt only.
      if (start) Object.assign(options.report!, structuredClone(start))
    }
  }
}

async function writeFile(cases: AsyncIterable<ReadCase>, output: string, options: WriteFileOptions): Promise<ConversionReport> {
  const container = requireContainer(output, options.container, 'output')
  const adapter = await getAdapter(options.to)
  if (!adapter.writes.includes(container)) {
    throw new UsageError(`${adapter.name} does not write ${container} files (it writes ${adapter.writes.join(', ')})`)
  }
  const report = options.report ?? newReport('canonical', adapter.name, [], output)
  const file = await AtomicFile.create(output)
  options.opened?.(file)
  // A stream (standard output, a pipe) cannot be written again once it has taken bytes: its pass stops at the first case its layout cannot hold.
  if (file.isStream) options = { ...options, gatherLate: false }
  const sidecarPath = sidecarOf(output, container, adapter)
  let sidecar: AtomicFile | undefined
  const companions: AtomicFile[] = []
  options = { ...options, companions }
  try {
    if (options.signal) cases = untilAborted(cases, options.signal)
    const layout = await raceAbort(writeCases(cases, adapter, container, file, options, report, sidecarPath !== undefined), options.signal)
    sidecar = await startSidecar(sidecarPath, sidecarHeader(layout), output, adapter, report)
    await file.commit()
    await sidecar?.commit()
    for (const companion of companions) await companion.commit()
  } catch (error) {
    for (const companion of companions) await companion.abort()
    if (error instanceof LayoutError && error.cases && file.hasSent) notWrittenAgain(error, output)
    // A bad record ends a stream with every record before it; one written again, or a failed write, leaves it as it is.
    const retried = error instanceof LayoutError && error.cases !== undefined
    await file.abort(error instanceof EvalferryError && error.code !== 'E_IO' && !retried)
    await sidecar?.abort()
    throw error
  }
  return report
}

/** A case the layout of a stream could not hold, once the stream has taken the records before it: the error is final. */
function notWrittenAgain(error: LayoutError, output: string): void {
  error.cases = undefined
  const stream = output === STDIO ? 'standard output' : output
  error.message += `; ${stream} had already taken the records before it, and a stream cannot be written again with the column added: write to a file instead, which can`
}



/** The caller's cases, each with where `read` read it, if it did. */
async function* placed(cases: AsyncIterable<EvalCase> | Iterable<EvalCase>): AsyncGenerator<ReadCase> {
  for await (const c of cases) yield { value: c, from: readFrom.get(c) }
}


/** JSON Lines has no place for file-level keys: they go to the sidecar the adapter names. */
function sidecarOf(output: string, container: Container | undefined, adapter: Adapter): string | undefined {
  return output !== STDIO && container === 'jsonl' ? adapter.sidecar?.(output, container) : undefined
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

/** The files writing `output` as `to` makes (itself, and a JSON Lines sidecar), for `assertWritable`. */
export async function filesWritten(output: string, to: string, container?: Container): Promise<Written[]> {
  const adapter = await getAdapter(to)
  const sidecar = sidecarOf(output, container ?? containerOf(output), adapter)
  if (!sidecar) return [{ path: output, what: 'the output' }]
  const refuse = async () =>
    (await holdsCases(sidecar, adapter)) ? `${sidecar} holds cases, and would be overwritten by the sidecar of ${output} (its description and execution); move it, or name another output` : undefined
  return [
    { path: output, what: 'the output' },
    { path: sidecar, what: "the output's sidecar", refuse },
  ]
}

/** Whether a YAML file holds a dataset (a case list at the top, or under a record key), not just a sidecar's header keys. */
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

/** A part of a file written on its own: the file's layout and first cases, and where its records start. */
export interface PartPreset {
  sample: EvalCase[]
  layout: FileLayout
  /** Records written before this part (as far as the part can tell: its first source record's index). */
  index: number
  /**
   * Filled as the part is written: the group ids of its first and last cases, the ids it generated,
   * the ids it wrote that could be generated for a later record, and, where the target's ids are
   * unique, every id it wrote.
   */
  firstGroup?: string
  lastGroup?: string
  generatedIds: string[]
  writtenIds: string[]
  uniqueIds: string[]
}

/** What `writeFrom` takes beside the cases. */
type WriteArgs = Parameters<typeof writeFrom> extends [unknown, ...infer Rest] ? Rest : never

async function writeCases(cases: AsyncIterable<ReadCase>, ...args: WriteArgs): Promise<FileLayout> {
  const iterator = cases[Symbol.asyncIterator]()
  try {
    return await writeFrom(iterator, ...args)
  } catch (error) {
    // The source is closed now, not when its file handle is collected (a file written again reads it anew).
    await iterator.return?.()
    throw error
  }
}

/**
 * Opens the file the layout names for the records in place of the list (`tests: ./dataset.jsonl`),
 * beside the output, and writes the output: the file's keys, and that name under the list key.
 */
async function casesFileOf(layout: FileLayout, container: Container, output: { sink: Sink; path: string }, options: WriteFileOptions): Promise<{ file: AtomicFile; container: Container } | undefined> {
  if (layout.casesFile === undefined || container !== 'yaml' || output.path === STDIO) return undefined
  const relative = layout.casesFile.replace(/^file:\/\//, '')
  const path = resolvePath(dirname(output.path), relative)
  const named = containerOf(path)
  if (named !== 'jsonl' && named !== 'yaml') throw new UsageError(`${output.path} names ${layout.casesFile} for its cases, which is no JSON Lines or YAML file`)
  for (const input of options.inputs ?? []) {
    if (input !== STDIO && (path === resolvePath(input) || path === resolvePath(dirname(input), relative))) {
      throw new UsageError(`${output.path} would write its cases into ${path}, which ${path === resolvePath(input) ? 'is' : 'holds the cases of'} the input: name an output in another folder`)
    }
  }
  const { yamlMapping } = await import('./codecs/yaml-emit.ts')
  const keys = Object.fromEntries(Object.entries(layout.header ?? {}).filter(([k]) => k !== LIST_KEY && k !== CASES_FILE_KEY))
  await output.sink.write(yamlMapping({ ...keys, [layout.listKey ?? 'tests']: layout.casesFile }))
  const file = await AtomicFile.create(path)
  options.companions?.push(file)
  return { file, container: named }
}

async function writeFrom(
  iterator: AsyncIterator<ReadCase>,
  adapter: Adapter,
  container: Container,
  file: { sink: Sink; path: string },
  options: WriteFileOptions,
  report: ConversionReport,
  hasSidecar: boolean,
  preset?: PartPreset,
): Promise<FileLayout> {
  let taken = preset?.index ?? 0
  // A case a caller made, not one read here, may not have a case's shape: it is named by its place in the output.
  const checked = (c: ReadCase): ReadCase => {
    if (!c.from) {
      try {
        checkCaseShape(c.value, 'the case has')
      } catch (error) {
        throw locate(error, { file: file.path, record: taken })
      }
    }
    taken++
    return c
  }
  const sample: ReadCase[] = []
  let exhausted = false
  for (let bytes = 0; !preset && !sampleFull(sample.length, bytes); ) {
    const next = await iterator.next()
    if (next.done) {
      exhausted = true
      break
    }
    sample.push(checked(next.value))
    bytes += roughSize(next.value.value)
  }

  let index = preset?.index ?? 0
  // Where the case being written was read: its errors and warnings are told there.
  let at: Location | undefined
  const ectx: EncodeContext = {
    container,
    ...(options.dialect ? { dialect: options.dialect } : {}),
    ...(options.extras === false ? { extras: false as const } : {}),
    index: 0,
    warn: (message, field) => addWarning(report, message, { ...(at ?? { file: file.path, record: index }), ...(field ? { field } : {}) }),
  }
  // The layout is chosen from the cases as they are written (see `shownIn`).
  const sampled = shownIn(adapter, withAdoptedHeader(adapter, container, sample.map((c) => c.value)))
  // What the layout warns of is the file's (a column of it), not one case's.
  const layoutCtx: EncodeContext = { ...ectx, warn: (message, field) => addWarning(report, message, { file: file.path, ...(field ? { field } : {}) }) }
  const layout: FileLayout = preset?.layout ?? adapter.layout(container, options.layoutCases ? [...sampled, ...shownIn(adapter, options.layoutCases)] : sampled, layoutCtx)
  ectx.layout = layout
  // A `.tsv` file is written with tabs, as it is read.
  const delimiter = container === 'csv' ? namedDelimiter(file.path) : undefined
  const records = preset ? undefined : await casesFileOf(layout, container, file, options)
  const writer = records
    ? await recordWriter(records.container, records.file.sink, { header: {} }, ectx.warn)
    : await recordWriter(container, file.sink, delimiter ? { ...layout, delimiter } : layout, ectx.warn)
  const encoder = new CaseEncoder(adapter, container, layout, options, report, file.path, hasSidecar, preset?.sample ?? sampled, preset)
  // A file block's path relative to the dataset's folder: one the output's folder loses is told of.
  const relativeFiles = adapter.relativeFiles && file.path !== STDIO ? new RelativeFiles(file.path) : undefined

  // The cases of the record being written: one, or the consecutive cases of one group.
  let pending: EvalCase[] = []
  let pendingFrom: Location | undefined
  let pendingGroup: string | undefined
  // The cases the layout could not hold, gathered for the next pass (`gatherLate`), and the first one's error.
  const late: EvalCase[] = []
  let lateBytes = 0
  let lateError: LayoutError | undefined
  /** The error to stop with, if any: a case the layout could not hold, gathered while there is room, is left out and the pass goes on. */
  const stopWith = (error: unknown): unknown => {
    if (!(error instanceof LayoutError)) return error
    error.cases = pending
    if (!options.gatherLate) return error
    lateError ??= error
    for (const c of pending) {
      late.push(c)
      lateBytes += roughSize(c)
    }
    lateError.cases = late
    pending = []
    index++
    return late.length < LATE_CASES && lateBytes < LAYOUT_SAMPLE_BYTES ? undefined : lateError
  }
  // Writing a record waits only where the writer must (its sink's buffer is full): the others
  // take no promise, so a record of a few fields costs its fields, not the awaits between them.
  const failed = (error: unknown): unknown => {
    // A writer that holds records back (Parquet's row groups) names the one at fault by its place in the output.
    if (error instanceof DataError && !error.location.file) error.location = error.location.record === undefined ? { ...at, ...error.location } : { file: file.path, ...error.location }
    return stopWith(error)
  }
  const flushed = (): void => {
    report.records.written += pending.length
    pending = []
    index++
  }
  const flush = (): Promise<void> | undefined => {
    if (!pending.length) return undefined
    ectx.index = index
    at = pendingFrom ?? { file: file.path, record: index }
    let record: JsonObject
    try {
      record = encoder.encode(pending, ectx, index === 0, pendingGroup !== undefined)
    } catch (error) {
      const stop = stopWith(locate(error, at))
      if (stop) throw stop
      return undefined
    }
    let waiting: Promise<void> | undefined
    try {
      waiting = writer.write(record)
    } catch (error) {
      const stop = failed(error)
      if (stop) throw stop
      return undefined
    }
    if (waiting) {
      return waiting.then(flushed, (error: unknown) => {
        const stop = failed(error)
        if (stop) throw stop
      })
    }
    flushed()
    return undefined
  }
  const add = (c: ReadCase, group: string | undefined): Promise<void> | undefined => {
    if (!pending.length) pendingFrom = c.from
    pending.push(c.value)
    pendingGroup = group
    return group === undefined ? flush() : undefined
  }
  const writeOne = (c: ReadCase): Promise<void> | undefined => {
    relativeFiles?.check(c.value, c.from, (message, field) => addWarning(report, message, { ...c.from, field }))
    const group = adapter.group?.(c.value, container)
    if (preset) {
      if (index === preset.index && !pending.length) preset.firstGroup = group
      preset.lastGroup = group
    }
    if (group === undefined || group !== pendingGroup) {
      const waiting = flush()
      if (waiting) return waiting.then(() => add(c, group))
    }
    return add(c, group)
  }
  try {
    for (const c of sample) await writeOne(c)
    if (!exhausted) {
      for (;;) {
        const next = await iterator.next()
        if (next.done) break
        const waiting = writeOne(checked(next.value))
        if (waiting) await waiting
      }
    }
    await flush()
  } catch (error) {
    // After a case the layout could not hold, the next pass (its layout holding that case) tells whether this error is still one.
    throw lateError ?? error
  }
  if (lateError) throw lateError
  await writer.end()
  return layout
}

/**
 * A conversation (DeepEval's turns) of a case without input, as the input messages a format
 * without turns shows it in (LangSmith's chat, evalcase's input, a messages column); the turns
 * themselves, with what a message cannot hold, are carried.
 */
function withTurnsAsInput(c: EvalCase): EvalCase {
  if (c.input !== undefined || !c.turns?.length) return c
  return { ...c, input: c.turns.map((t) => ({ role: t.role, content: t.content, ...(t.tools_called?.length ? { tool_calls: t.tools_called } : {}) })) }
}

/**
 * The tool calls of an expected assistant message, as the expected tools of a format that holds
 * them apart (DeepEval's expected_tools): the message keeps its text, and one of tool calls alone
 * leaves none. What this changes is carried.
 */
function withExpectedTools(c: EvalCase): EvalCase {
  const expected = c.expected_output
  if (c.expected_tools !== undefined || !isMessageList(expected) || !expected.some((m) => m.tool_calls?.length)) return c
  const expected_tools = expected.flatMap((m) => m.tool_calls ?? [])
  const said = expected.filter((m) => m.content !== '').map(({ tool_calls: _calls, ...m }) => m)
  const { expected_output: _expected, ...rest } = c
  return { ...rest, ...(said.length ? { expected_output: said } : {}), expected_tools }
}

/** A file's first cases with the header another table format read as `adapter`'s own (see `Adapter.headerOf`). */
function withAdoptedHeader(adapter: Adapter, container: Container, cases: EvalCase[]): EvalCase[] {
  const first = cases[0]
  if (!adapter.headerOf || !first) return cases
  const adopted = withHeaderOf(first, adapter.name, adapter.headerOf)
  return withAdoptedCells(adapter, container, adopted === first ? cases : [adopted, ...cases.slice(1)])
}

/** Cases with the source cells another table format kept taken as `adapter`'s own, in `container` (see `withCellsOf`). */
function withAdoptedCells(adapter: Adapter, container: Container, cases: EvalCase[]): EvalCase[] {
  const from = adapter.headerOf
  if (!from) return cases
  const options = { format: adapter.name, text: container === 'csv' }
  let adopted: EvalCase[] | undefined
  for (let i = 0; i < cases.length; i++) {
    const c = withCellsOf(cases[i]!, from, options)
    if (c !== cases[i]) (adopted ??= [...cases])[i] = c
  }
  return adopted ?? cases
}

/** The cases as `adapter` is given them: in the fields it has for what they hold (see the two above). */
function shownIn(adapter: Adapter, cases: EvalCase[]): EvalCase[] {
  // Called for every record: the cases themselves when nothing changes, as for nearly all.
  let shown: EvalCase[] | undefined
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!
    const asTurns = adapter.holdsTurns ? c : withTurnsAsInput(c)
    const show = adapter.holdsExpectedTools ? withExpectedTools(asTurns) : asTurns
    if (show !== c) (shown ??= [...cases])[i] = show
  }
  return shown ?? cases
}

const GENERATED_ID_SHAPE = /^case-(\d+)(-\d+)?$/

/**
 * Whether an id that a case has, written as record `index`, could be generated for a later record.
 * The id generated for record i is `case-<i + 1>` (`case-<i + 1>-<k>` when that is taken), so only
 * ids of that shape whose number is past `index + 1` can be: ids a file numbers in order never are.
 * (A record of a format that needs ids holds one case: no such format writes groups.)
 */
function mayBeGeneratedLater(id: string, index: number): boolean {
  if (!id.startsWith('case-')) return false
  const match = GENERATED_ID_SHAPE.exec(id)
  return match !== null && Number(match[1]) > index + 1
}

/** Encodes one case and carries, under `evalferry`, whatever the record would not give back. */
class CaseEncoder {
  private readonly decodeContext: DecodeContext
  /**
   * The ids that cases written so far or sampled first really have, and that could be generated for
   * a later record (see `mayBeGeneratedLater`): only these can collide, so memory stays bounded.
   */
  private readonly takenIds = new Set<string>()
  /** The ids written so far, where the target's must be unique (a few bits each where they are numbered). */
  private readonly usedIds: IdSet
  /** Records of the dataset before this file's first (see `WriteOptions.firstRecord`). */
  private readonly idBase: number

  constructor(
    private readonly adapter: Adapter,
    container: Container,
    layout: FileLayout,
    private readonly options: WriteFileOptions,
    private readonly report: ConversionReport,
    file: string,
    hasSidecar: boolean,
    sample: EvalCase[],
    private readonly part?: PartPreset,
  ) {
    this.usedIds = new IdSet(options.idTable, WRITTEN)
    this.idBase = options.firstRecord ?? 0
    // A sampled case may come after the first records that get an id: its id counts from the start.
    for (const c of sample) if (c.id !== undefined && !c.generated?.includes('id') && mayBeGeneratedLater(c.id, this.idBase - 1)) this.takenIds.add(c.id)
    this.decodeContext = {
      file,
      container,
      header: headerReadBack(container, layout, hasSidecar),
      index: 0,
      columns: layout.columns ?? [],
      ...(layout.schemaMetadata ? { schemaMetadata: layout.schemaMetadata } : {}),
      state: {},
      warn: () => {},
    }
  }

  /**
   * The record of `originals` (one case, or with `grouped` the cases of one group). `first`: the
   * first record of the file, whose first case's `$file` the written header stands for.
   */
  encode(originals: EvalCase[], ctx: EncodeContext, first: boolean, grouped = false): JsonObject {
    const adapter = this.adapter
    const generated: string[][] = []
    const needsId = adapter.requires?.includes('id') === true
    const renamed: (string | undefined)[] = []
    const cases = (first ? withAdoptedHeader(adapter, ctx.container, originals) : withAdoptedCells(adapter, ctx.container, originals)).map((original) => {
      // A copy only where something changes: generated fields go, a missing id comes.
      let c = original.generated !== undefined || (needsId && original.id === undefined) ? withoutGenerated(original) : original
      const made: string[] = []
      if (needsId && c.id === undefined) {
        c.id = original.id ?? this.freshId(this.idBase + ctx.index)
        if (original.id === undefined) this.part?.generatedIds.push(c.id)
        made.push('id')
      } else if (c.id !== undefined && mayBeGeneratedLater(c.id, this.idBase + ctx.index)) {
        const id = ownString(c.id)
        this.takenIds.add(id)
        if (this.part && needsId) this.part.writtenIds.push(id)
      }
      // A target whose ids must be unique gets a fresh one for an id used before; the case's own travels.
      let was: string | undefined
      if (adapter.uniqueIds && c.id !== undefined) {
        if (!this.usedIds.add(c.id)) {
          was = c.id
          c = c === original ? { ...original } : c
          for (let k = 2; !this.usedIds.add(c.id!); k++) c.id = `${was}-${k}`
          ctx.warn(`the id "${was}" is an earlier case's, and ${adapter.name} ids are unique: written as "${c.id}", with "${was}" carried`, 'id')
        }
        this.part?.uniqueIds.push(ownString(c.id!))
      }
      renamed.push(was)
      generated.push(made)
      return c
    })
    const fileKeys = first ? cases[0]?.extras?.[adapter.name]?.$file : undefined
    // A table's layout has read its first row back: the file keys it did not find there ride on that row.
    const layoutCarry = ctx.layout?.fileCarry
    const layoutCarries = layoutCarry !== undefined && hasKeys(layoutCarry)
    if (fileKeys !== undefined && layoutCarries && ctx.extras !== false) countField(this.report.carried, `extras.${adapter.name}.$file`)
    // The record never repeats the file keys, which reach the header through `layout`.
    const own = cases.map((c, i) => (i === 0 && fileKeys !== undefined ? withoutFileKeys(c, adapter.name) : c))
    const encodeAll = (cs: EvalCase[], context = ctx): JsonObject => {
      const xs = shownIn(adapter, cs)
      return grouped && adapter.encodeGroup ? adapter.encodeGroup(xs, context) : adapter.encode(xs[0]!, context)
    }

    // A carry-shaped value at the carry's key would be taken for a carry: it is left out here, so
    // that the comparison carries the whole metadata, that value with it.
    const record = encodeAll(own.map(withoutCarrySlot))
    this.decodeContext.index = ctx.index
    let backs: EvalCase[]
    // File keys the written header gives back need no carry (keys it adds, like a dialect's list key, are the writer's); else all travel.
    const compared = [...own]
    try {
      const decoded = adapter.decode(record, this.decodeContext)
      backs = Array.isArray(decoded) ? decoded : [decoded]
      for (const back of backs) applyCarry(back)
      const givenBack =
        fileKeys === undefined ||
        (layoutCarry !== undefined ? !layoutCarries || ctx.extras !== false : givesBack(withoutRecordKeys(this.decodeContext.header, adapter.recordKeys), fileKeys))
      if (backs[0] && !givenBack) {
        compared[0] = cases[0]!
        attachFileKeys(backs[0], adapter, this.decodeContext.header)
      }
    } catch (error) {
      throw locate(error, {})
    }
    const carriedAll = compared.map((c, i) => {
      const carried = lostFields(c, backs[i] ?? {}, generated[i])
      if (renamed[i] !== undefined) carried.id = renamed[i]
      if (generated[i]!.length) carried.generated = generated[i]!
      // A carry takes the place of the case's own value at its key: the metadata travels in it, that value with it.
      if (this.options.extras !== false && hasKeys(carried) && !('metadata' in carried) && hasOwnSlot(c)) {
        carried.metadata = c.metadata!
        delete carried[METADATA_VALUES]
      }
      return carried
    })
    if (!carriedAll.some(hasKeys)) return record
    // A set: a wide table's row carries a field per column, thousands of them.
    const lostSet = new Set<string>()
    for (const [i, carried] of carriedAll.entries()) for (const name of fieldNames(carried, backs[i]?.extras)) lostSet.add(name)
    const lost = [...lostSet]

    if (this.options.extras === false) {
      // How the source spelled its data is no data: written in the target's own spelling, it is neither dropped nor lossy.
      const dropped = lost.filter((name) => !isSpelling(name))
      for (const field of dropped) countField(this.report.dropped, field)
      if (this.options.strict && dropped.length) {
        throw new DataError('E_LOSSY', `${adapter.name} cannot hold ${dropped.join(', ')}, and --strict forbids dropping it`, { field: dropped[0]! })
      }
      return record
    }
    for (const field of lost) countField(this.report.carried, field)
    // The same case again with its carry: its warnings were given the first time.
    const quiet = { ...ctx, warn: () => {} }
    return encodeAll(
      own.map((c, i) => (hasKeys(carriedAll[i]!) ? withCarry(c, carriedAll[i]!) : c)),
      quiet,
    )
  }

  /** `case-<n>`, unless a case written so far or among the first ones sampled already has that id. */
  private freshId(index: number): string {
    let id = `case-${index + 1}`
    for (let k = 2; this.takenIds.has(id); k++) id = `case-${index + 1}-${k}`
    return id
  }
}

/**
 * The fields a carry holds, as the report names them: extras down to each format's own keys that
 * `given` (the extras read back from the record) lacks or holds otherwise.
 */
/** Whether a carried field's name (`extras.deepeval.$keys`) is a spelling marker. */
function isSpelling(name: string): boolean {
  const parts = name.split('.')
  return parts.length === 3 && parts[0] === 'extras' && SPELLING_MARKERS.has(parts[2]!)
}

function fieldNames(carried: JsonObject, given: Extras = {}): string[] {
  const names: string[] = []
  for (const [field, value] of Object.entries(carried)) {
    if (field === 'generated') continue
    if (field === METADATA_VALUES && isJsonObject(value)) {
      for (const key of Object.keys(value)) names.push(`metadata.${key}`)
      continue
    }
    if (field !== 'extras' || !isJsonObject(value)) {
      names.push(field)
      continue
    }
    for (const [format, own] of Object.entries(value)) {
      if (!isJsonObject(own) || !Object.keys(own).length) {
        names.push(`extras.${format}`)
        continue
      }
      // A format's extras travel whole; the keys named are those the written record did not give back.
      const back = given[format] ?? {}
      for (const key of new Set([...Object.keys(own), ...Object.keys(back)])) if (!deepEqual(own[key], back[key])) names.push(`extras.${format}.${key}`)
    }
  }
  return names
}

/** The header a reader of the written file sees: what its container (or JSON Lines sidecar) keeps of the layout's. */
function headerReadBack(container: Container, layout: FileLayout, hasSidecar: boolean): JsonObject {
  const header = layout.header ?? {}
  switch (container) {
    case 'json':
      if (layout.single) return { [SINGLE_KEY]: true }
      return layout.listKey === undefined ? {} : { ...header }
    case 'yaml':
      return { ...header, [LIST_KEY]: layout.listKey ?? '' }
    case 'jsonl':
      return hasSidecar ? sidecarHeader(layout) : {}
    default:
      return {}
  }
}

/** True when `header` holds every key of `fileKeys` with its value. */
function givesBack(header: JsonObject, fileKeys: JsonValue): boolean {
  return isJsonObject(fileKeys) && Object.entries(fileKeys).every(([k, v]) => Object.hasOwn(header, k) && deepEqual(header[k], v))
}

/** The keys a JSON Lines sidecar holds: the layout's header without the `$` markers. */
function sidecarHeader(layout: FileLayout): JsonObject {
  return Object.fromEntries(Object.entries(layout.header ?? {}).filter(([k]) => !k.startsWith('$')))
}


/** Converts one file to another format; returns the conversion report. */
export async function convert(options: ConvertOptions): Promise<ConversionReport> {
  for (const key of ['input', 'output'] as const) requireText('convert()', `options.${key}`, options?.[key])
  // A service's records are staged as a file, converted as files are, then pushed (see services/convert.ts).
  if (isAddress(options.input) || isAddress(options.output)) return (await import('./services/convert.ts')).convertWithServices(options, convert)
  requireText('convert()', 'options.to', options.to)
  requireChoice('convert(): the option onError', options.onError, ON_ERROR)
  requireWriteOptions('convert()', options)
  requireMap('convert()', options.map)
  requireSignal('convert()', options.signal)
  // As the command line refuses --rejects without --on-error skip: no record would ever go there.
  if (options.rejects !== undefined && options.onError !== 'skip') throw new UsageError("convert(): the option rejects names where skipped records go: add onError: 'skip'")
  if (options.threads !== undefined && !(Number.isSafeInteger(options.threads) && options.threads >= 1)) {
    throw new UsageError(`convert(): the option threads takes a whole number of at least 1, not ${typeof options.threads === 'string' ? JSON.stringify(options.threads) : String(options.threads)}`)
  }
  requireDialectFor('convert()', options.dialect, (await getAdapter(options.to)).name)
  const inputContainer = requireContainer(options.input, options.inputContainer, 'input')
  await assertWritable(
    [...(await filesWritten(options.output, options.to, options.outputContainer)), ...(options.rejects ? [{ path: options.rejects, what: 'the rejects file' }] : [])],
    await filesRead([options.input]),
  )
  const to = (await getAdapter(options.to)).name
  let guess = options.from || options.input === STDIO ? options.guess : await detectGuess(options.input, { target: to, container: inputContainer })
  let from = options.from ?? guess?.format
  if (!from) throw new UsageError('reading standard input needs --from')
  if (guess) options = { ...options, guess }
  // The formats read so far, each once: a guess a later record refuses gives way to another (see `GuessRefused`).
  const reguess = !options.from && guess && options.input !== STDIO ? new Set<FormatName>([guess.format]) : undefined
  // The guess a later record refused, told in the report of the conversion that read the file otherwise.
  let refused: { format: FormatName; error: EvalferryError } | undefined
  // The report of the attempt under way: a failure carries it (`EvalferryError.report`).
  let report: ConversionReport | undefined
  const fresh = async () => {
    report = newReport((await getAdapter(from!)).name, to, [options.input], options.output === STDIO ? undefined : options.output)
    if (refused) addWarning(report, `detected as ${refused.format} from the first records, whose reader refuses this one (${refused.error.message}): the file is read as ${from}`, refused.error.location)
    return report
  }
  try {
    const threads = Math.min(options.threads ?? 1, availableParallelism())
    if (threads > 1) {
      const { canSplit, convertInParts } = await import('./parallel.ts')
      const container = await canSplit({ ...options, inputContainer }, threads)
      const progress = options.progress ? { ...options.progress } : undefined
      const done = container && (await convertInParts({ ...options, inputContainer, from, to }, container, threads, await fresh()))
      if (done) return done
      // Something only the whole file settles: convert it again in this thread.
      if (progress) Object.assign(options.progress!, progress)
    }
    // Later cases that need a column the first ones did not: the file is written again, its layout chosen with them too.
    const start = options.progress ? { ...options.progress } : undefined
    let layoutCases: EvalCase[] | undefined
    let fileKeys: JsonObject | undefined
    for (let attempt = 0; ; attempt++) {
      try {
        const gatherLate = options.input !== STDIO && attempt < LAYOUT_RETRIES
        return await convertOnce(options, inputContainer, from, to, await fresh(), layoutCases, fileKeys, gatherLate, reguess)
      } catch (error) {
        if (error instanceof LateKeys && fileKeys === undefined) fileKeys = error.header
        else if (error instanceof GuessRefused && guess && reguess) {
          refused = { format: guess.format, error: error.refusal }
          reguess.add(error.format)
          guess = { ...guess, format: error.format }
          from = error.format
          options = { ...options, guess }
          layoutCases = undefined
          fileKeys = undefined
        } else if (error instanceof LayoutError && error.cases && options.input !== STDIO) {
          if (attempt === LAYOUT_RETRIES) throw layoutGivenUp(error)
          layoutCases = [...(layoutCases ?? []), ...error.cases]
        } else throw error
        if (start) Object.assign(options.progress!, start)
      }
    }
  } catch (error) {
    if (error instanceof EvalferryError && report && !error.report) error.report = await reportWhenStopped(report, options.output)
    throw error
  }
}

/**
 * What a conversion that stopped had done: `report` as it stood, its records written counted only
 * where the output still holds them (standard output, a pipe, a device): a file is left as it was.
 */
async function reportWhenStopped(report: ConversionReport, output: string): Promise<ConversionReport> {
  const kept = output === STDIO || (await isSpecialFile(output))
  return { ...report, records: { ...report.records, written: kept ? report.records.written : 0 } }
}

async function convertOnce(
  options: ConvertOptions,
  inputContainer: Container,
  from: FormatOption,
  to: FormatName,
  report: ConversionReport,
  layoutCases: EvalCase[] | undefined,
  fileKeys: JsonObject | undefined,
  gatherLate: boolean,
  reguess?: Set<FormatName>,
): Promise<ConversionReport> {
  let rejects: AtomicFile | undefined
  const pendingRejects: Promise<void>[] = []
  // Where the source's ids and the target's must both be unique, both sides keep every id: in one table, each id once.
  const idTable = new StringTable()
  let output: AtomicFile | undefined
  const cases = await openCases(
    options.input,
    {
      from,
      container: inputContainer,
      // A file can be read again to give its first case the keys after its records; standard input cannot.
      ...(fileKeys ? { fileKeys } : options.input !== STDIO ? { lateKeys: 'retry' as const, canRetry: () => !output?.hasSent } : {}),
      comments: 'warn',
      includes: 'warn',
      target: to,
      ...(options.map ? { map: options.map } : {}),
      ...(options.guess ? { guess: options.guess } : {}),
      ...(reguess ? { reguess } : {}),
      onError: options.onError ?? 'fail',
      report,
      ...(options.recordRange ? { recordRange: options.recordRange } : {}),
      ...(options.recordBytes ? { recordBytes: options.recordBytes } : {}),
      ...(options.progress ? { progress: options.progress } : {}),
      onReject: (r) => {
        const written = rejects?.sink.write(JSON.stringify(r) + '\n')
        if (written) pendingRejects.push(written)
      },
    },
    idTable,
  )
  if (options.rejects) rejects = await AtomicFile.create(options.rejects)
  try {
    await writeFile(noneReadIsAnError(cases, report, options.input), options.output, {
      to,
      gatherLate,
      inputs: [options.input],
      idTable,
      opened: (file) => (output = file),
      ...(options.outputContainer ? { container: options.outputContainer } : {}),
      ...(options.dialect ? { dialect: options.dialect } : {}),
      ...(options.extras === undefined ? {} : { extras: options.extras }),
      ...(options.strict ? { strict: true } : {}),
      // A shard's generated ids are those the whole would have.
      ...(options.recordRange || options.firstRecord ? { firstRecord: options.firstRecord ?? options.recordRange![0] } : {}),
      ...(layoutCases ? { layoutCases } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      report,
    })
    await Promise.all(pendingRejects)
    await rejects?.commit()
  } catch (error) {
    await rejects?.abort()
    throw error
  }
  return report
}

/**
 * The cases, and then, when every record of the file was skipped, an error before the output is
 * written: an empty dataset is no conversion of a file whose records all failed.
 */
async function* noneReadIsAnError(cases: AsyncIterable<ReadCase>, report: ConversionReport, input: string): AsyncGenerator<ReadCase> {
  yield* cases
  const error = noCaseRead(report, input)
  if (error) throw error
}

/** A file's first cases and layout, as every part of it is written with, and the reader's state after them. */
export interface FileHead {
  sample: EvalCase[]
  layout: FileLayout
  state: Record<string, unknown>
  layoutWarnings: ConversionReport['warnings']
  /** What a JSON Lines sidecar of the output holds. */
  sidecar: JsonObject
}

/** Reads the first cases of `options.input` and chooses the layout, as a whole-file conversion does. */
export async function readFileHead(options: ConvertOptions & { from: string }): Promise<FileHead> {
  const inputContainer = requireContainer(options.input, options.inputContainer, 'input')
  const outputContainer = requireContainer(options.output, options.outputContainer, 'output')
  const source = await getAdapter(options.from)
  const target = await getAdapter(options.to)
  const probe: FilePart = {}
  const sample: EvalCase[] = []
  const quiet = newReport(source.name, target.name, [])
  const readOptions: ReadOptions = { from: options.from, onError: options.onError ?? 'fail', report: quiet, ...(options.map ? { map: options.map } : {}) }
  let bytes = 0
  for await (const c of readFile_(options.input, inputContainer, source, readOptions, new SeenIds(options.input), false, probe)) {
    sample.push(c.value)
    bytes += roughSize(c.value)
    if (sampleFull(sample.length, bytes)) break
  }
  const report = newReport(source.name, target.name, [])
  const ectx: EncodeContext = {
    container: outputContainer,
    ...(options.dialect ? { dialect: options.dialect } : {}),
    ...(options.extras === false ? { extras: false as const } : {}),
    index: 0,
    warn: (message, field) => addWarning(report, message, { file: options.output, ...(field ? { field } : {}) }),
  }
  const layout = target.layout(outputContainer, shownIn(target, withAdoptedHeader(target, outputContainer, sample)), ectx)
  return { sample, layout, state: probe.decodeState ?? {}, layoutWarnings: report.warnings, sidecar: sidecarHeader(layout) }
}


/**
 * Converts one part of a file (a run of whole records) to JSON Lines text, as the whole-file
 * conversion would convert those records: with the file's layout and first cases from `head`,
 * the reader's state after them, and `index` records written before it.
 */
export async function convertPart(
  options: ConvertOptions & { from: string },
  head: FileHead,
  part: FilePart,
  index: number,
  /** A buffer an earlier part's output was handed over in, given back for this part's. */
  spare?: ArrayBuffer,
): Promise<PartResult> {
  const inputContainer = requireContainer(options.input, options.inputContainer, 'input')
  const source = await getAdapter(options.from)
  const target = await getAdapter(options.to)
  const report = newReport(source.name, target.name, [options.input], options.output)
  const rejects: string[] = []
  // As in a whole file, the ids read and the ids written share one table.
  const idTable = new StringTable()
  const seenIds = new SeenIds(options.input, idTable)
  // The part that starts the file reads it from the start, as the whole file would be.
  const reading: FilePart = part.continuation ? { ...part, state: head.state } : { ...part }
  const cases = readFile_(
    options.input,
    inputContainer,
    source,
    {
      from: options.from,
      onError: options.onError ?? 'fail',
      report,
      target: target.name,
      ...(options.map ? { map: options.map } : {}),
      onReject: (r) => rejects.push(JSON.stringify(r)),
    },
    seenIds,
    false,
    reading,
  )
  // JSON Lines of a part take about as many bytes as its source, and a little more.
  const sink = new BytesSink(part.range ? (part.range.end - part.range.start) * 1.25 : 0, spare)
  const preset: PartPreset = { sample: head.sample, layout: head.layout, index, generatedIds: [], writtenIds: [], uniqueIds: [] }
  const hasSidecar = options.output !== STDIO && target.sidecar?.(options.output, 'jsonl') !== undefined
  await writeCases(
    cases,
    target,
    'jsonl',
    { sink, path: options.output },
    {
      to: options.to,
      idTable,
      ...(options.dialect ? { dialect: options.dialect } : {}),
      ...(options.extras === undefined ? {} : { extras: options.extras }),
      ...(options.strict ? { strict: true } : {}),
    },
    report,
    hasSidecar,
    preset,
  )
  return {
    bytes: sink.bytes(),
    report,
    rejects,
    firstPending: reading.firstPending ?? !part.continuation,
    seenIds: seenIds.ids(),
    ...(preset.firstGroup === undefined ? {} : { firstGroup: preset.firstGroup }),
    ...(preset.lastGroup === undefined ? {} : { lastGroup: preset.lastGroup }),
    generatedIds: preset.generatedIds,
    writtenIds: preset.writtenIds,
    uniqueIds: preset.uniqueIds,
    reusedBuffer: sink.reusedSpare,
  }
}
