import type { EvalferryError } from '../errors.ts'
import type { JsonObject, JsonValue } from '../model.ts'

/** Longer records are refused, so that memory stays bounded whatever a file holds. */
export const MAX_RECORD_CHARS = 32 * 1024 * 1024

/** The message for a record, value or cell over `MAX_RECORD_CHARS`. */
export function tooLong(what: string): string {
  return `the ${what} is longer than ${MAX_RECORD_CHARS / (1024 * 1024)} MiB; evalferry holds one record in memory at a time and refuses larger ones`
}

/** The line breaks (LF) in `text`, or in its [from, to). */
export function countNewlines(text: string, from = 0, to = text.length): number {
  let n = 0
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) n++
  return n
}

/**
 * The unfinished last line of a text that comes in chunks, kept in the pieces it came in and
 * joined once, when its newline comes: appending each chunk and searching the whole again would
 * copy a long line once per chunk.
 */
export class PendingLine {
  private pieces: string[] = []
  /** Characters held. */
  length = 0

  add(piece: string): void {
    if (!piece) return
    this.pieces.push(piece)
    this.length += piece.length
  }

  /** The line: the pieces held, then `end`; nothing is held after. */
  take(end = ''): string {
    if (!this.length) return end
    const line = this.pieces.join('') + end
    this.pieces = []
    this.length = 0
    return line
  }

  startsWith(prefix: string): boolean {
    let start = ''
    for (const piece of this.pieces) {
      start += piece
      if (start.length >= prefix.length) break
    }
    return start.startsWith(prefix)
  }
}

/** One parsed record and where it came from. */
export interface SourceRecord {
  value: unknown
  /** 1-based line where the record starts, where the container has lines. */
  line?: number
  /** 1-based column where the record starts, given where an earlier record starts on its line. */
  column?: number
  /** 0-based index of the record in the file. */
  index: number
  /** The record's own text, where the codec has it cheaply (for `--rejects`). */
  raw?: string
  /**
   * Why the codec could not read this record, when the rest of the file still reads (a line of
   * JSON Lines that is not JSON, a CSV row of too many cells): decoding it fails with this error,
   * so `--on-error skip` passes it by and `validate` lists it.
   */
  error?: EvalferryError
  /** What the codec changed to read the record (an integer too long for a number, kept as text). */
  warnings?: string[]
  /** The line where a field of a record of several lines is written (`input[1].content`), where the codec can tell; called on the record. */
  fieldLine?: (field: string) => number | undefined
}

/** A field's path as errors name it (`turns[2].role`), as keys and list indexes. */
export function fieldPath(field: string): (string | number)[] {
  const path: (string | number)[] = []
  for (const [, key, index] of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) path.push(index === undefined ? key! : Number(index))
  return path
}

/** What a JSON file that Python's json does not write says of NaN and the infinities in it. */
export const NON_FINITE_WRITTEN = "NaN and Infinity are written by name, as Python's json writes and reads them; JSON.parse (AgentV, LangSmith's JavaScript SDK) and pyarrow refuse them"

/** What becomes of text UTF-8 cannot hold, in CSV and Parquet (JSON and YAML escape it instead). */
export const LONE_SURROGATE = 'a lone UTF-16 surrogate (half of a character) cannot be written in UTF-8: written as U+FFFD'

/** Whether a cell holds text UTF-8 cannot hold: a string, or a list of strings, with a lone surrogate. */
export function illFormedCell(value: unknown): boolean {
  if (typeof value === 'string') return !value.isWellFormed()
  return Array.isArray(value) && value.some((item) => typeof item === 'string' && !item.isWellFormed())
}

/** A warning about a document's header key: what reading it changed, at its line. */
export interface HeaderWarning {
  message: string
  line: number
  field: string
}

export interface ReadOptions {
  /** The file name, for error messages. */
  file: string
  /** Keys of a JSON or YAML document that hold the record list. */
  recordKeys: string[]
  /** A record key holding text names a file of the records (AgentV's `tests: ./dataset.jsonl`): see `CASES_FILE_KEY`. */
  casesFiles?: boolean
  /** Filled with the document's other top-level keys as the reader meets them. */
  header: JsonObject
  /** Filled with what reading those keys changed (an integer past 2^53 kept as text), each at its line. */
  headerWarnings?: HeaderWarning[]
  /** YAML: filled with the line of the file's first comment, which no format carries. */
  comments?: { line?: number }
  /** Filled with the table's columns (CSV, Parquet) once known. */
  columns?: string[]
  /** CSV delimiter; sniffed from the header line when absent. */
  delimiter?: string
  /** CSV: the file's text is read and parsed in a worker thread beside this one, where that pays (see `readCsvBeside`); `free`: where a core is free. */
  parseThread?: boolean | 'free'
  /** Updated with the bytes read so far, for a progress bar. */
  progress?: { bytes: number }
  /** Parquet: what the file's schema metadata holds (the `huggingface` key, say). */
  schemaMetadata?: Record<string, string>
  /**
   * Parquet: filled with the type of each column whose Arrow type the writer writes back as it
   * was (a dictionary-encoded column as its values' type); other columns are left out.
   */
  columnTypes?: Record<string, ColumnType>
  /**
   * CSV and JSON Lines: the text is a later part of the file (after a CSV's header row), whose
   * first record starts on `line` and has the 0-based `index`.
   */
  continuation?: { line: number; index: number }
  /**
   * Only the records whose 0-based index is in [start, end) are needed. Parquet reads only the
   * row groups that hold them; JSON gives the records before them unparsed (their value null);
   * other containers give every record. The caller chooses among what it is given.
   */
  recordRange?: [number, number]
}

/**
 * A Parquet column's type when the writer is told it instead of inferring it from the values (a
 * `datasets` feature, or the type the column had in the file read, say): a primitive, a list of
 * one type (of `size` items in every row when given; with 64-bit offsets when `large`), or a
 * struct of named types.
 */
export type ColumnType =
  | PrimitiveColumnType
  | { list: ColumnType; size?: number; large?: true }
  | { struct: Record<string, ColumnType> }
  /** Arrow's time unit (0 seconds … 3 nanoseconds), and the zone of a zoned column; values are `timestampText`'s. */
  | { timestamp: 0 | 1 | 2 | 3; zone?: string }
/**
 * Arrow's primitive types, by pyarrow's names. `binary` values are base64 text and dates
 * `YYYY-MM-DD` (a `date64` at midnight UTC), as the Parquet reader gives them; a `null` column
 * holds only nulls.
 */
export type PrimitiveColumnType =
  | 'string'
  | 'large_string'
  | 'binary'
  | 'large_binary'
  | 'bool'
  | 'float16'
  | 'float32'
  | 'float64'
  | 'date32'
  | 'date64'
  | 'null'
  | keyof typeof INT_RANGES

const INT_RANGES = {
  int8: [-(2n ** 7n), 2n ** 7n - 1n],
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint8: [0n, 2n ** 8n - 1n],
  uint16: [0n, 2n ** 16n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
} as const

export function isIntColumnType(type: ColumnType): type is keyof typeof INT_RANGES {
  return typeof type === 'string' && type in INT_RANGES
}

/** An integer cell as a BigInt: a safe integer, or the decimal text the reader gives larger ones as. */
export function integerOf(value: JsonValue): bigint | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? BigInt(value) : undefined
  return typeof value === 'string' && /^-?\d{1,20}$/.test(value) ? BigInt(value) : undefined
}

/** Whether a column of `type` holds `value` exactly (null fits every type; a struct takes no other keys). */
export function fitsColumnType(type: ColumnType, value: JsonValue | undefined): boolean {
  if (value === null || value === undefined) return true
  if (typeof type === 'object') {
    if ('timestamp' in type) {
      const units = typeof value === 'string' ? parseTimestamp(value, type.timestamp) : undefined
      return units !== undefined && timestampText(units, type.timestamp, type.zone !== undefined) === value
    }
    if ('list' in type) {
      return Array.isArray(value) && (type.size === undefined || value.length === type.size) && value.every((item) => fitsColumnType(type.list, item))
    }
    if (typeof value !== 'object' || Array.isArray(value)) return false
    return Object.keys(value).every((key) => Object.hasOwn(type.struct, key)) && Object.entries(type.struct).every(([key, t]) => fitsColumnType(t, value[key]))
  }
  switch (type) {
    case 'string':
    case 'large_string':
      return typeof value === 'string'
    case 'binary':
    case 'large_binary':
      // Canonical base64 only, so that the bytes written read back as the same text.
      return typeof value === 'string' && Buffer.from(value, 'base64').toString('base64') === value
    case 'bool':
      return typeof value === 'boolean'
    case 'float64':
      return typeof value === 'number'
    case 'float32':
      // NaN is a float32, though it equals nothing.
      return typeof value === 'number' && (Math.fround(value) === value || Number.isNaN(value))
    case 'float16':
      return typeof value === 'number' && (isHalf(value) || Number.isNaN(value))
    case 'date32':
    case 'date64':
      return typeof value === 'string' && parseDate(value) !== undefined
    case 'null':
      return false
    default: {
      const n = integerOf(value)
      const [min, max] = INT_RANGES[type]
      return n !== undefined && n >= min && n <= max
    }
  }
}

/** Whether a half-precision float holds `value` exactly: 11 significant bits, exponents from -14 (below: steps of 2^-24) to 15. */
function isHalf(value: number): boolean {
  if (!Number.isFinite(value)) return !Number.isNaN(value)
  const size = Math.abs(value)
  if (size === 0) return true
  if (size > 65504) return false
  let exponent = Math.floor(Math.log2(size))
  if (2 ** exponent > size) exponent--
  return Number.isInteger(size / 2 ** (Math.max(exponent, -14) - 10))
}

const DATE = /^(\d{4})-(\d\d)-(\d\d)$/

/** The milliseconds since the epoch of a `YYYY-MM-DD` date at midnight UTC; undefined if it is not one (`2023-02-30`). */
export function parseDate(text: string): number | undefined {
  const m = DATE.exec(text)
  if (!m) return undefined
  // setUTCFullYear keeps years 0 to 99, which Date.UTC takes for 1900 to 1999; a day past the
  // month's end rolls over, and the text then differs.
  const date = new Date(0)
  const ms = date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  return date.toISOString().slice(0, 10) === text ? ms : undefined
}

const UNITS_PER_SECOND = [1n, 1_000n, 1_000_000n, 1_000_000_000n]

/**
 * A timestamp of `units` since the epoch in Arrow's time unit `unit` (0 seconds … 3 nanoseconds),
 * as ISO 8601 with the unit's fraction digits and `Z` when `zoned`; undefined beyond a Date's range.
 */
export function timestampText(units: bigint, unit: number, zoned: boolean): string | undefined {
  const perSecond = UNITS_PER_SECOND[unit] ?? 1n
  let seconds = units / perSecond
  let fraction = units % perSecond
  if (fraction < 0n) {
    fraction += perSecond
    seconds -= 1n
  }
  const date = new Date(Number(seconds) * 1000)
  if (Number.isNaN(date.getTime())) return undefined
  const iso = date.toISOString()
  const digits = unit > 0 ? '.' + fraction.toString().padStart(3 * unit, '0') : ''
  return iso.slice(0, iso.length - 5) + digits + (zoned ? 'Z' : '')
}

const TIMESTAMP = /^([+-]\d{6}|\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z?$/

/** The units since the epoch of an ISO 8601 timestamp (UTC or naive), in Arrow's time unit `unit`; undefined if it is not one. */
export function parseTimestamp(text: string, unit: number): bigint | undefined {
  const m = TIMESTAMP.exec(text)
  if (!m) return undefined
  // As in parseDate: setUTCFullYear keeps years 0 to 99 (Python's datetime.min is 0001-01-01), which Date.UTC moves to the 1900s.
  const date = new Date(0)
  date.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]))
  const ms = date.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]))
  if (Number.isNaN(ms)) return undefined
  const digits = 3 * unit
  const fraction = (m[7] ?? '').padEnd(digits, '0')
  if (fraction.length > digits) return undefined
  return BigInt(ms / 1000) * (UNITS_PER_SECOND[unit] ?? 1n) + BigInt(fraction || '0')
}

export type ByteSource = AsyncIterable<Buffer | string> | Iterable<Buffer | string>

/** Writes records of one container to a byte sink, in order, with back-pressure. */
export interface RecordWriter {
  /** A promise only where the record's text had to wait (see `Sink`). */
  write(record: JsonObject): Promise<void> | undefined
  /** Writes whatever closes the document; does not close the sink. */
  end(): Promise<void>
}

/** True when `value` nests more than `limit` arrays and objects deep. */
export function depthOver(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (limit === 0) return true
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (depthOver(item, limit - 1)) return true
  return false
}

/** Where a writer's text goes. A write that need not wait returns nothing: no promise to await per record. */
export interface Sink {
  write(chunk: string | Uint8Array): Promise<void> | undefined
}

/**
 * The header key under which the YAML reader reports which of `recordKeys` held the record list
 * (evalcase's `evalcases` or `tests` dialect), and which the YAML writer never writes.
 */
export const LIST_KEY = '$list'

/**
 * The header key under which the YAML reader reports a record key that names a file of the
 * records instead of holding them (AgentV's `tests: ./dataset.jsonl`), with `casesFiles`: that
 * path is then the one record, as an include.
 */
export const CASES_FILE_KEY = '$cases'

/**
 * The header key under which the JSON reader tells that the file was one object, read as one
 * record; a layout with `single` writes one record so.
 */
export const SINGLE_KEY = '$single'

/** Why a key (or column) `__proto__` is refused where it is read: copying it into an object sets that object's prototype instead. */
export function protoRefused(what: 'key' | 'column' = 'key'): string {
  return `the ${what} "__proto__" cannot be kept: a JavaScript object takes it for its prototype; rename it`
}

/** Whether `value` holds an own key `__proto__` at any depth. */
export function hasProtoKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return value.some(hasProtoKey)
  return Object.hasOwn(value, '__proto__') || Object.values(value).some(hasProtoKey)
}
