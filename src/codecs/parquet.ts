/**
 * Parquet through parquet-wasm, with Arrow JS as the in-memory form. Reading hands parquet-wasm
 * the file as a Blob whose ranges are read when asked, so it fetches the footer and then the pages
 * each read needs; each record batch is read by Arrow JS where parquet-wasm holds it (or crosses as
 * an IPC stream) and becomes plain JSON-able rows.
 * Writing holds the first batch of records, whose values choose the columns' types, then gathers
 * each record into the columns of an Arrow record batch as it comes, and feeds the batches to
 * parquet-wasm's streaming writer, which emits one row group per batch as it goes.
 *
 * Values read: strings, booleans and floats as they are; 64-bit integers as numbers when safe,
 * else as decimal strings; lists as arrays; structs and maps as objects; binary as base64; dates
 * as `YYYY-MM-DD`; decimals as strings. Timestamps are ISO 8601 strings with as many fraction
 * digits as their unit has (none for seconds, 3, 6 or 9), ending in `Z` when the column has a time
 * zone (Arrow stores the UTC instant) and without one when it is naive, as Python prints it. They
 * keep every digit, in lists and structs too; only inside maps, where Arrow JS hands them over as
 * float milliseconds, does a nanosecond keep microsecond precision. The reader also gives the type
 * of each column the writer writes back as it was (`ReadOptions.columnTypes`), so that a table can
 * be written again with its own types rather than ones inferred from its values.
 *
 * Column types written, from the layout's columns and the first batch of records:
 * - every non-null value a string → Utf8; a boolean → Bool;
 * - a number: Int64 when every one is a safe integer, else Float64;
 * - an array of strings (or nulls) → List<Utf8>;
 * - anything else (objects, mixed types, empty lists only, nulls only) → Utf8 holding JSON text,
 *   marked with field metadata `evalferry: json` so that this reader parses it back.
 * A layout's `columnTypes` name a column's type instead (integers of each width, float16 and
 * float32, binary from base64 text, large strings and binary, dates, null columns, lists of each
 * kind, structs), as `datasets` features do. A later value that does not fit
 * its column's type is an E_FIELD error, since a streamed schema cannot change. A missing key is
 * written as null.
 */
import { constants } from 'node:buffer'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import {
  Binary,
  Bool,
  BufferType,
  Data,
  DataType,
  DateDay,
  DateUnit,
  Field,
  FixedSizeList,
  Float16,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  LargeBinary,
  LargeList,
  LargeUtf8,
  List,
  makeData,
  Null,
  Precision,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableFromIPC,
  Timestamp,
  tableToIPC,
  Type,
  Uint8,
  Uint16,
  Uint32,
  Uint64,
  Utf8,
  util,
  vectorFromArray,
  type Vector,
} from 'apache-arrow'
import { parseRecordBatch } from 'arrow-js-ffi'
import type * as ParquetWasm from 'parquet-wasm'
import type { ParquetFile, RecordBatch as WasmRecordBatch, WriterPropertiesBuilder } from 'parquet-wasm'
import { DataError, EvalferryError, UsageError } from '../errors.ts'
import { fileStartsAsGzip, ioError, isPipe, spool as spoolCopy, STDIO } from '../io.ts'
import { own, roughSize, type JsonObject, type JsonValue } from '../model.ts'
import { bigintToJson, parseExact, stringifyJson } from './json.ts'
import { orderFooterMetadata } from './parquet-footer.ts'
import { withOffsetIndex, type ByteSource, type IndexedFile } from './parquet-index.ts'
import {
  fitsColumnType,
  illFormedCell,
  integerOf,
  isIntColumnType,
  LONE_SURROGATE,
  parseDate,
  protoRefused,
  parseTimestamp,
  timestampText,
  type ColumnType,
  type ReadOptions,
  type RecordWriter,
  type Sink,
  type SourceRecord,
} from './types.ts'

// Required, not imported: as an ES module import, parquet-wasm's 100 KB of CommonJS glue went
// through Node's scan for its named exports, whose compilation took 0.08 s of each thread.
const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof ParquetWasm

/** Field metadata that marks a Utf8 column as JSON text written by evalferry. */
export const JSON_COLUMN_KEY = 'evalferry'
const JSON_COLUMN_VALUE = 'json'
/** The key pyarrow keeps the serialized Arrow schema under; it is not user metadata. */
const ARROW_SCHEMA_KEY = 'ARROW:schema'

/**
 * About how many bytes of (uncompressed) data each record batch handed from parquet-wasm to Arrow
 * JS holds when reading: a batch is copied whole into JavaScript and its rows made at once, so
 * its size sets much of the peak memory. 100 MB of text in rows of 2 KB took 330 MB at batches of
 * 4096 rows (8 MB), 270 MB at 1024 and 215 MB at 256, in about the same time.
 */
const READ_BATCH_BYTES = 1 << 20

export interface ParquetWriteOptions {
  /** Rows per row group; also how many records the writer holds at once. */
  batchRows?: number
  /**
   * Bytes that close a row group early: of records held before they go to the writer (their
   * rough size in memory), and of encoded data in the row group the writer is building.
   */
  batchBytes?: number
  compression?: 'zstd' | 'snappy' | 'none'
}

/**
 * Row groups of 1 000 rows, as `datasets` writes them (its `writer_batch_size`), so that reading
 * one row reads little around it; fewer when they pass 16 MB, as rows of long documents do. The
 * writer holds a row group several times over on its way into parquet-wasm: 100 MB of text in
 * rows of 2 KB took 348 MB at groups of 10 000 rows, 179 MB at 1 000, for a file 2% larger.
 * parquet-wasm gathers the batches it is given into row groups of its own, so the byte limit is
 * its setting too: 2 000 rows of 100 KB of text each were two groups of 1 000 held whole in
 * WebAssembly memory (237 MB), and are now groups of about 16 MB encoded (78 MB).
 */
const DEFAULT_BATCH_ROWS = 1000
/**
 * Snappy, as pyarrow, pandas, `datasets` and DuckDB write Parquet by default, and as every reader
 * decodes: zstd, whose files are a quarter smaller, took 3 times as long to write in WebAssembly
 * (100 MB of text: 1.9 s against 0.6 s).
 */
const DEFAULT_COMPRESSION = 'snappy'
const DEFAULT_BATCH_BYTES = 16 << 20

// ---------------------------------------------------------------------------------------------
// Reading

/** `sliceBytes`: see `SLICE_BYTES` (tests pass less). */
export async function* readParquet(path: string, options: ReadOptions, sliceBytes = SLICE_BYTES): AsyncGenerator<SourceRecord> {
  const { file } = options
  const { parquet, opened } = await openParquet(path, file, sliceBytes)
  let batches: AsyncGenerator<TakenBatch<JsonValue[][]>> | undefined
  let index = 0
  const range = options.recordRange
  try {
    let schema: Schema
    try {
      schema = tableFromIPC(parquet.schema().intoIPCStream()).schema
    } catch (error) {
      throw parseError(file, error)
    }
    const columns = schema.fields.map((f) => f.name)
    refuseUnreadableNames(file, schema.fields)
    if (options.columns) options.columns.splice(0, options.columns.length, ...columns)
    else options.columns = columns
    const metadata: Record<string, string> = {}
    for (const [key, value] of schema.metadata) if (key !== ARROW_SCHEMA_KEY) metadata[key] = value
    options.schemaMetadata = refill(options.schemaMetadata, metadata)
    const types: Record<string, ColumnType> = {}
    for (const field of schema.fields) {
      // A JSON-text column reads as the values it holds, whose type the writer infers.
      const type = isJsonColumn(field) ? undefined : columnTypeOfArrow(field.type)
      if (type) types[field.name] = type
    }
    options.columnTypes = refill(options.columnTypes, types)
    const converters = schema.fields.map((f) => (isJsonColumn(f) ? parseJsonText : converterFor(f.type)))
    const decode: Decode = (batch) => columns.map((_, c) => columnValues(batch.getChildAt(c), batch.numRows, converters[c]!))
    const inPlace = schema.fields.length > 0 && schema.fields.every((f) => readsInPlace(f.type))

    let pieces: ReadPiece[]
    let batchSize: number
    let rows = 0
    try {
      const groups = rowGroupsOf(parquet, opened)
      pieces = piecesOf(groups, range, sliceBytes)
      batchSize = batchRowsOf(groups)
      for (const group of groups) rows += group.rows
    } catch (error) {
      throw parseError(file, error)
    }
    // A progress bar's bytes: the file's (compressed, for a .parquet.gz) in the share of its rows (or of the shard's) read.
    const progress = options.progress
    const size = progress ? (path === STDIO ? opened.blob.size : (await stat(path)).size) : 0
    const [from, to] = range ?? [0, rows]
    const share = (): void => {
      if (progress && to > from) progress.bytes = Math.round((size * Math.min(Math.max(index - from, 0), to - from)) / (to - from))
    }
    // Each batch's values, read in place where its types allow (see `decodeInPlace`).
    const take = (batch: WasmRecordBatch): JsonValue[][] => {
      if (!inPlace || !readingInPlace.on) return decode(tableFromIPC(batch.intoIPCStream()))
      readingInPlace.batches++
      return decodeInPlace(batch, decode)
    }
    batches = batchesOf(parquet, pieces, batchSize, file, take, opened)
    for await (const { value: cells, rows: n, first } of batches) {
      index = first
      for (let r = 0; r < n; r++) {
        if (range && index < range[0]) {
          index++
          continue
        }
        if (range && index >= range[1]) return
        const record: JsonObject = {}
        for (let c = 0; c < columns.length; c++) record[columns[c]!] = cells[c]![r]!
        yield { value: record, index: index++ }
      }
      share()
    }
  } finally {
    await batches?.return(undefined).catch(() => {})
    try {
      parquet.free()
    } catch {
      // after a trap the reader's memory is beyond use; the file is closed all the same
    }
    await opened.close()
  }
}

/** A record batch's values, column by column: `cells[c][r]`. */
export type Decode = (batch: { numRows: number; getChildAt(index: number): Vector | null }) => JsonValue[][]

/** What was taken of a record batch, its rows, and the index in the file of its first row. */
interface TakenBatch<T> {
  value: T
  rows: number
  first: number
}

/**
 * The pieces' record batches, each as `take` makes it of parquet-wasm's batch (which it consumes or
 * frees); one that cannot be decoded is a parse error naming `file` and the row it was to start at,
 * unless reading the file failed (`opened.failure`).
 */
async function* batchesOf<T>(
  parquet: ParquetFile,
  pieces: ReadPiece[],
  batchSize: number,
  file: string,
  take: (batch: WasmRecordBatch) => T,
  opened: Pick<OpenedParquet, 'failure'>,
): AsyncGenerator<TakenBatch<T>> {
  for (const { rowGroups, offset, limit, first } of pieces) {
    let index = first
    let reader: ReadableStreamDefaultReader<WasmRecordBatch> | undefined
    try {
      for (;;) {
        let taken: TakenBatch<T>
        try {
          reader ??= ((await trapsFail(parquet.stream({ batchSize, rowGroups, ...(limit === undefined ? {} : { offset, limit }) }))) as ReadableStream<WasmRecordBatch>).getReader()
          const next = await trapsFail(reader.read())
          // What was read after the file failed to read is not the file's (the catch below tells the failure).
          if (opened.failure()) {
            if (!next.done) next.value.free()
            throw opened.failure()
          }
          if (next.done) break
          const rows = next.value.numRows
          taken = { value: take(next.value), rows, first: index }
        } catch (error) {
          throw opened.failure() ?? parseError(file, error, index)
        }
        yield taken
        index += taken.rows
      }
    } finally {
      await reader?.cancel().catch(() => {})
    }
  }
}

/** Record batches read in place (see `decodeInPlace`); `on` is turned off by tests that compare the values both ways give. */
export const readingInPlace = { on: true, batches: 0 }

/**
 * The values of `batch`, read where parquet-wasm holds them, through the Arrow C data interface
 * (arrow-js-ffi's views on WebAssembly memory), and the batch freed at once: no copy through Arrow
 * IPC. 100 MB of text in one zstd row group to JSON Lines took 3.36 to 3.69 s with a peak of 230 to
 * 241 MB, against 3.54 to 3.76 s and 251 to 282 MB through IPC. Nothing may call into parquet-wasm
 * between the views' making and `decode`'s end: its memory may grow, which leaves them empty.
 */
export function decodeInPlace(batch: WasmRecordBatch, decode: Decode): JsonValue[][] {
  const exported = batch.intoFFI()
  try {
    return decode(parseRecordBatch(wasm.wasmMemory().buffer, exported.arrayAddr(), exported.schemaAddr(), false))
  } finally {
    exported.free()
  }
}

/**
 * Whether arrow-js-ffi reads `type` as Arrow JS does from IPC: not decimals, intervals, maps, unions
 * or large lists (which it reads as lists), nor what holds them.
 */
function readsInPlace(type: DataType): boolean {
  switch (type.typeId) {
    case Type.Null:
    case Type.Bool:
    case Type.Int:
    case Type.Float:
    case Type.Utf8:
    case Type.LargeUtf8:
    case Type.Binary:
    case Type.LargeBinary:
    case Type.FixedSizeBinary:
    case Type.Date:
    case Type.Time:
    case Type.Timestamp:
    case Type.Duration:
      return true
    case Type.List:
    case Type.FixedSizeList:
    case Type.Struct:
      return (type.children as Field[]).every((f) => readsInPlace(f.type))
    case Type.Dictionary:
      return readsInPlace((type as DataType & { dictionary: DataType }).dictionary)
    default:
      return false
  }
}

/** `values` in `target`, the caller's object that it may hold on to already, else `values` itself. */
function refill<T>(target: Record<string, T> | undefined, values: Record<string, T>): Record<string, T> {
  if (!target) return values
  for (const key of Object.keys(target)) delete target[key]
  return Object.assign(target, values)
}

/**
 * The column type of an Arrow type that the writer writes back as it was, or undefined for one it
 * does not (decimals, times, durations, intervals, maps, unions, fixed-size binary, views, empty
 * structs, and what holds them). A dictionary-encoded column reads as its values: their type.
 */
function columnTypeOfArrow(type: DataType): ColumnType | undefined {
  switch (type.typeId) {
    case Type.Utf8:
      return 'string'
    case Type.LargeUtf8:
      return 'large_string'
    case Type.Binary:
      return 'binary'
    case Type.LargeBinary:
      return 'large_binary'
    case Type.Bool:
      return 'bool'
    case Type.Null:
      return 'null'
    case Type.Int: {
      const { bitWidth, isSigned } = type as DataType & { bitWidth: 8 | 16 | 32 | 64; isSigned: boolean }
      return `${isSigned ? 'int' : 'uint'}${bitWidth}`
    }
    case Type.Float:
      return (['float16', 'float32', 'float64'] as const)[(type as DataType & { precision: Precision }).precision]
    case Type.Date:
      return (type as DataType & { unit: DateUnit }).unit === DateUnit.DAY ? 'date32' : 'date64'
    case Type.Timestamp: {
      const { unit, timezone } = type as DataType & { unit: 0 | 1 | 2 | 3; timezone: string | null }
      return { timestamp: unit, ...(timezone ? { zone: timezone } : {}) }
    }
    case Type.List:
    case Type.LargeList:
    case Type.FixedSizeList: {
      const item = columnTypeOfArrow((type.children[0] as Field).type)
      if (!item) return undefined
      if (type.typeId === Type.FixedSizeList) return { list: item, size: (type as FixedSizeList).listSize }
      return type.typeId === Type.LargeList ? { list: item, large: true } : { list: item }
    }
    case Type.Struct: {
      const fields = type.children as Field[]
      // Parquet has no empty group, and a struct's value is an object of one value per name.
      if (!fields.length || new Set(fields.map((f) => f.name)).size < fields.length) return undefined
      const struct: Record<string, ColumnType> = {}
      for (const field of fields) {
        const t = columnTypeOfArrow(field.type)
        if (!t) return undefined
        struct[field.name] = t
      }
      return { struct }
    }
    case Type.Dictionary:
      return columnTypeOfArrow((type as DataType & { dictionary: DataType }).dictionary)
    default:
      return undefined
  }
}

/**
 * A Parquet file opened through its Blob; one that cannot be opened is an error naming `file`.
 * Given `sliceBytes`, a file whose row groups are read in slices of that size is given an offset
 * index where it has none (see parquet-index.ts).
 */
async function openParquet(path: string, file: string, sliceBytes?: number): Promise<{ parquet: ParquetFile; opened: OpenedParquet }> {
  const opened = await openBlob(path, sliceBytes)
  try {
    return { parquet: await trapsFail(wasm.ParquetFile.fromFile(opened.blob)), opened }
  } catch (error) {
    await opened.close()
    throw opened.failure() ?? parseError(file, error)
  }
}

/** The number of rows in a Parquet file, from its footer alone. */
export async function countParquetRows(path: string): Promise<number> {
  const { parquet, opened } = await openParquet(path, path)
  try {
    const metadata = parquet.metadata()
    const fileMetadata = metadata.fileMetadata()
    const rows = fileMetadata.numRows()
    fileMetadata.free()
    metadata.free()
    return rows
  } finally {
    parquet.free()
    await opened.close()
  }
}

/** A row group's rows, bytes of (uncompressed) data, and where its largest chunk's pages start (see `IndexedFile`). */
interface RowGroup {
  rows: number
  bytes: number
  pageStarts?: number[]
}

/** Each row group, from the footer and from `opened`'s offset indexes. */
function rowGroupsOf(parquet: ParquetFile, opened: Pick<OpenedParquet, 'pageStarts'>): RowGroup[] {
  const metadata = parquet.metadata()
  const groups = metadata.rowGroups().map((group, i) => {
    const sizes = { rows: group.numRows(), bytes: group.totalByteSize(), pageStarts: opened.pageStarts[i] }
    group.free()
    return sizes
  })
  metadata.free()
  return groups
}

/** Rows per record batch: about `READ_BATCH_BYTES` of the file's data, from 16 to 16 384 rows. */
function batchRowsOf(groups: RowGroup[]): number {
  let bytes = 0
  let rows = 0
  for (const group of groups) {
    bytes += group.bytes
    rows += group.rows
  }
  const perRow = rows > 0 ? bytes / rows : 0
  return perRow > 0 ? Math.min(16_384, Math.max(16, Math.round(READ_BATCH_BYTES / perRow))) : 1024
}

/**
 * parquet-wasm decodes a whole row group before handing over its first batch, so one large group
 * (pandas and pyarrow write a table of up to a million rows as one) would sit decoded in wasm
 * memory, which never shrinks. A group of more than this many bytes of data is read as slices of
 * its rows instead, each decoded alone. Where the group's column chunks have an offset index, a
 * slice reads only the pages that hold its rows: it is cut where a page of the group's largest
 * chunk starts, and no group is cut into more slices than that chunk has pages (DuckDB writes a
 * column of up to 100,000 rows as one page, which every slice would decode whole). 100 MB of text
 * in one zstd row group to JSON Lines peaked at 199 to 206 MB in slices of 32 MB, 178 to 188 MB
 * in slices of 16 MB, 164 to 180 MB in slices of 8 MB and 159 to 172 MB in slices of 6 MB, which
 * took 0.2 to 0.3 s more than 16 MB (3.4 s): a slice decodes again its columns' dictionaries, and
 * in each column but the largest the page it shares with the slice before. Written by pyarrow in
 * one group, 400 MB of text converted in 9.6 s with a peak of 201 MB (11.0 s and 283 MB in slices
 * of 32 MB, in the same run), and 1.2 GB in 27.6 s with 219 MB (24.2 s and 274 MB).
 */
const SLICE_BYTES = 6 << 20
/**
 * A group without an offset index (one was not made: see parquet-index.ts) is read in slices this
 * many times as large, and in at most `MAX_SLICES`: each slice decodes its columns from the group's
 * first row, so the time grows with the square of their number.
 */
const UNINDEXED_SLICE_FACTOR = 5
const MAX_SLICES = 32

/** One stream read: whole row groups in a row, or the rows [offset, offset + limit) of one group. */
interface ReadPiece {
  rowGroups: number[]
  offset?: number
  limit?: number
  /** The index in the file of the piece's first row. */
  first: number
}

/**
 * What to read of the file for rows [start, end) (every row without a range): the row groups that
 * hold them, so that the groups before and after are never decoded, and large groups in slices.
 */
function piecesOf(groups: RowGroup[], range: [number, number] | undefined, sliceBytes: number): ReadPiece[] {
  const [start, end] = range ?? [0, Infinity]
  const pieces: ReadPiece[] = []
  if (start >= end) return pieces
  let row = 0
  for (const [i, group] of groups.entries()) {
    const { rows } = group
    const cuts = sliceStarts(group, sliceBytes)
    if (cuts.length <= 1) {
      if (row + rows > start && row < end) {
        const last = pieces.at(-1)
        // parquet-wasm applies an offset to each of a read's groups, so only whole groups share a read.
        if (last && last.limit === undefined && last.rowGroups.at(-1) === i - 1) last.rowGroups.push(i)
        else pieces.push({ rowGroups: [i], first: row })
      }
    } else {
      for (const [k, offset] of cuts.entries()) {
        const first = row + offset
        const limit = (cuts[k + 1] ?? rows) - offset
        if (first + limit > start && first < end) pieces.push({ rowGroups: [i], offset, limit, first })
      }
    }
    row += rows
  }
  return pieces
}

/** The rows, from a group's first, at which its slices start (see `SLICE_BYTES`): `[0]` for a group read whole. */
function sliceStarts({ rows, bytes, pageStarts }: RowGroup, sliceBytes: number): number[] {
  if (!pageStarts) {
    const slices = Math.min(MAX_SLICES, Math.ceil(bytes / (UNINDEXED_SLICE_FACTOR * sliceBytes)))
    if (slices <= 1) return [0]
    const per = Math.ceil(rows / slices)
    const starts: number[] = []
    for (let offset = 0; offset < rows; offset += per) starts.push(offset)
    return starts
  }
  // A slice ends at the first page that starts at least its share of the rows after its own start.
  const share = rows / Math.min(pageStarts.length, Math.ceil(bytes / sliceBytes))
  const starts = [0]
  for (const row of pageStarts) if (row - starts.at(-1)! >= share) starts.push(row)
  return starts
}

/** A file opened for parquet-wasm (see `openRanges`), the path it is read from, and what to do once it is read. */
interface OpenedParquet {
  blob: Blob
  path: string
  /** Why a read of the file failed, where the reader would tell only its own words for it. */
  failure(): EvalferryError | undefined
  /** See `IndexedFile`. */
  pageStarts: IndexedFile['pageStarts']
  close: () => Promise<void>
}

/**
 * A file opened for parquet-wasm, whose bytes are read only when sliced. Parquet is read from its
 * footer backwards, so standard input (or a named pipe) is first copied to a temporary file, which
 * `close` removes: memory stays bounded however large the piped file is.
 */
async function openBlob(path: string, sliceBytes?: number): Promise<OpenedParquet> {
  try {
    // A named pipe, as standard input, is read once, from its start: it is spooled too.
    const pipe = path !== STDIO && (await isPipe(path))
    let spool = path !== STDIO && !pipe ? undefined : await spoolCopy('input.parquet', pipe ? path : undefined)
    try {
      // A gzip-compressed file (`data.parquet.gz`) is inflated into a temporary file of its own, read from there.
      if (await fileStartsAsGzip(spool?.path ?? path)) {
        const inflated = await spoolCopy('input.parquet', spool?.path ?? path, { file: path })
        await spool?.remove()
        spool = inflated
      }
      const read = spool?.path ?? path
      const ranges = openRanges(read, path, sliceBytes)
      const close = async (): Promise<void> => {
        ranges.close()
        await spool?.remove()
      }
      return { blob: ranges.blob, path: read, failure: ranges.failure, pageStarts: ranges.pageStarts, close }
    } catch (error) {
      await spool?.remove()
      throw error
    }
  } catch (error) {
    if (error instanceof EvalferryError) throw error
    throw ioError(path, error)
  }
}

/**
 * The file at `path` as parquet-wasm reads a Blob: its size, its slices, and a slice's bytes. The
 * reader asks for the footer, then for the pages each read needs, one range at a time, and waits
 * for each. A range is read here at once from the file's descriptor, rather than by a Blob of the
 * file, which reads it on the thread pool (this thread sat idle meanwhile) in pieces it then joins:
 * 100 MB of text in one zstd row group to JSON Lines took 3.39 to 3.50 s in four runs of five (3.87
 * s in the fifth) with a peak of 203 to 220 MB, against 3.52 to 3.66 s and 215 to 240 MB in five
 * runs between them. As a Blob of a file does, it tells a file that
 * changed after it was opened: `failure` tells that, or any other fault in reading, as `file`'s.
 */
export function openRanges(path: string, file = path, sliceBytes?: number): { blob: Blob; failure: () => EvalferryError | undefined; pageStarts: IndexedFile['pageStarts']; close: () => void } {
  const fd = openSync(path, 'r')
  let failed: EvalferryError | undefined
  let closed = false
  try {
    const opened = fstatSync(fd)
    if (opened.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' })
    const changed = (): EvalferryError => new EvalferryError('E_IO', 'the file changed while it was read', { file })
    // A fault is told by `failure`, not by a read that rejects: parquet-wasm panics once its read
    // has failed, where no read waits to hear the trap, which then ends the process. The bytes
    // there are still given, so that a file that only grew reads on until the fault is told.
    const read = (start: number, end: number): ArrayBuffer => {
      const bytes = new Uint8Array(rangeBuffer(end - start))
      try {
        const now = fstatSync(fd)
        if (now.size !== opened.size || now.mtimeMs !== opened.mtimeMs) failed ??= changed()
        for (let done = 0; done < bytes.length; ) {
          const n = readSync(fd, bytes, done, bytes.length - done, start + done)
          if (n === 0) {
            failed ??= changed()
            break
          }
          done += n
        }
      } catch (error) {
        failed ??= ioError(file, error)
      }
      return bytes.buffer
    }
    const bytes: ByteSource = { size: opened.size, read: (start, end) => new Uint8Array(read(start, end)) }
    const { source, pageStarts } = sliceBytes === undefined ? { source: bytes, pageStarts: [] } : withOffsetIndex(bytes, sliceBytes)
    const blob = source === bytes ? new FileRange(read, 0, opened.size) : new FileRange((start, end) => wholeBuffer(source.read(start, end)), 0, source.size)
    return {
      blob: blob as unknown as Blob,
      failure: () => failed,
      pageStarts,
      close: () => {
        if (closed) return
        closed = true
        closeSync(fd)
      },
    }
  } catch (error) {
    closeSync(fd)
    throw error
  }
}

/**
 * A zeroed buffer for one range, which parquet-wasm copies into its own memory at once. A resizable
 * buffer's memory is mapped for it alone and given back when it is collected. A plain one of these
 * sizes (up to a few MB) comes from the C allocator, which then serves the next ranges from its
 * heap and keeps what that heap grew to: 100 MB of text in one zstd row group to JSON Lines peaked
 * at 201 to 221 MB in eight runs, against 221 to 239 MB in eight runs between them, in the same time.
 */
function rangeBuffer(length: number): ArrayBuffer {
  return new ArrayBuffer(length, { maxByteLength: length })
}

/** The buffer of `bytes`, which is theirs alone where they are the whole of it. */
function wholeBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer
}

/** Bytes `[start, end)` of a file, sliced and read as a Blob's are. */
class FileRange {
  constructor(
    private readonly read: (start: number, end: number) => ArrayBuffer,
    private readonly start: number,
    private readonly end: number,
  ) {}

  get size(): number {
    return this.end - this.start
  }

  /** As Blob's `slice`: an offset below zero counts from the end, and both are kept within the range. */
  slice(from = 0, to = this.size): FileRange {
    const within = (offset: number): number => Math.min(Math.max(offset < 0 ? this.size + offset : offset, 0), this.size)
    const first = within(from)
    return new FileRange(this.read, this.start + first, this.start + Math.max(within(to), first))
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.read(this.start, this.end)
  }
}

/** What a WebAssembly trap throws (Node's types leave WebAssembly out). */
const WasmTrap = (globalThis as unknown as { WebAssembly: { RuntimeError: ErrorConstructor } }).WebAssembly.RuntimeError

/** Reads waiting on parquet-wasm, each failed by a trap (see `trapsFail`). */
const waiting = new Set<(error: Error) => void>()

function onTrap(error: Error): void {
  if (error instanceof WasmTrap && waiting.size) {
    for (const fail of waiting) fail(error)
    return
  }
  // Not a trap of a read: uncaught, as it would have been without this listener.
  process.removeListener('uncaughtException', onTrap)
  process.nextTick(() => {
    throw error
  })
}

/**
 * `promise`, failed by a trap of parquet-wasm while it waits. A corrupt page, or a footer corrupt
 * in some ways, makes its Rust code panic inside a task it runs in a microtask, where no promise
 * hears it: uncaught, it would end the process with a wasm stack trace. The reader's memory is
 * then beyond use, so the read fails.
 */
function trapsFail<T>(promise: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fail = (error: Error) => reject(error)
    if (!waiting.size) process.on('uncaughtException', onTrap)
    waiting.add(fail)
    promise.then(resolve, reject).finally(() => {
      waiting.delete(fail)
      if (!waiting.size) process.removeListener('uncaughtException', onTrap)
    })
  })
}

/**
 * Refuses a column, or a field of a struct column, that a record cannot hold: `__proto__`, or a
 * name given twice (one would hide the other's values).
 */
function refuseUnreadableNames(file: string, fields: readonly Field[], path = ''): void {
  const seen = new Set<string>()
  for (const field of fields) {
    const name = path + field.name
    if (field.name === '__proto__') throw new DataError('E_FIELD', protoRefused('column'), { file, field: name })
    if (seen.has(field.name)) throw new DataError('E_PARSE', `the schema names the column "${name}" twice`, { file, field: name })
    seen.add(field.name)
    refuseInType(file, field.type as DataType, name)
  }
}

/** Refuses as above the fields of the structs in a column's type (in its lists' items too). */
function refuseInType(file: string, type: DataType, name: string): void {
  const children = (type.children ?? []) as Field[]
  if (type.typeId === Type.Struct) refuseUnreadableNames(file, children, `${name}.`)
  else for (const child of children) refuseInType(file, child.type as DataType, name)
}

function parseError(file: string, error: unknown, record?: number): EvalferryError {
  if (error instanceof EvalferryError) return error
  const location = record === undefined ? { file } : { file, record }
  // A trap of the WebAssembly reader ("unreachable", "memory access out of bounds") says nothing to a user beyond that;
  // one in the reader's own thread comes as its name.
  if (error instanceof WasmTrap || (error instanceof Error && error.name === 'RuntimeError')) return new DataError('E_PARSE', 'corrupt Parquet data: the reader stopped on it', location, { cause: error })
  const why = (error instanceof Error ? error.message : String(error)).replace(/^(Error|Parquet error): /, '').split('\n')[0]
  return new DataError('E_PARSE', `not a Parquet file or cut short: ${why}`, location, { cause: error })
}

function isJsonColumn(field: Field): boolean {
  return field.metadata.get(JSON_COLUMN_KEY) === JSON_COLUMN_VALUE && field.type.typeId === Type.Utf8
}

type Convert = ((value: any) => JsonValue) | undefined // eslint-disable-line @typescript-eslint/no-explicit-any

function parseJsonText(value: string): JsonValue {
  return parseExact(value).value as JsonValue
}

/** Cells of one column of a batch; `undefined` as the converter means the value is already JSON. */
function columnValues(vector: Vector | null, n: number, convert: Convert): JsonValue[] {
  if (!vector) return new Array<JsonValue>(n).fill(null)
  if (vector.data.length === 1 && convert !== parseJsonText) {
    const fast = plainValues(vector.data[0]!)
    if (fast) return fast
  }
  const out = new Array<JsonValue>(n)
  let i = 0
  if (convert) for (const v of vector) out[i++] = v === null || v === undefined ? null : convert(v)
  else for (const v of vector) out[i++] = v === undefined ? null : (v as JsonValue)
  return out
}

/**
 * The common column types decoded straight from Arrow buffers, lists and structs of them too:
 * Arrow JS's per-value accessors build a Vector per list cell, decode strings one TextDecoder call
 * at a time, several times slower than reading the offsets, and give timestamps as float
 * milliseconds. Undefined for a type not among them: Arrow JS's accessors read it.
 */
function plainValues(data: Data): JsonValue[] | undefined {
  const type = data.type as DataType
  switch (type.typeId) {
    case Type.Utf8:
      return utf8Values(data)
    case Type.Bool: {
      const bits = data.values as Uint8Array
      return mapValid(data, (_, j) => (bits[j >> 3]! & (1 << (j & 7))) !== 0)
    }
    case Type.Float: {
      // Half floats are stored as their 16 bits: Arrow JS's accessor decodes them.
      if ((type as DataType & { precision: Precision }).precision === Precision.HALF) return undefined
      const values = data.values as Float64Array | Float32Array
      return mapValid(data, (i) => values[i]!)
    }
    case Type.Timestamp: {
      const values = data.values as BigInt64Array
      const { unit, timezone } = type as DataType & { unit: number; timezone: string | null }
      return mapValid(data, (i) => timestampText(values[i]!, unit, !!timezone) ?? bigintToJson(values[i]!))
    }
    case Type.Int: {
      if ((type as DataType & { bitWidth: number }).bitWidth === 64) {
        const values = data.values as BigInt64Array | BigUint64Array
        return mapValid(data, (i) => bigintToJson(values[i]!))
      }
      const values = data.values as Int32Array
      return mapValid(data, (i) => values[i]!)
    }
    case Type.List: {
      const child = data.children[0]
      if (!child) return undefined
      const offsets = data.valueOffsets as Int32Array
      const items = plainValues(child)
      return items && mapValid(data, (i) => items.slice(offsets[i]!, offsets[i + 1]!))
    }
    case Type.LargeList: {
      const child = data.children[0]
      if (!child) return undefined
      const offsets = data.valueOffsets as unknown as BigInt64Array
      const items = plainValues(child)
      return items && mapValid(data, (i) => items.slice(Number(offsets[i]!), Number(offsets[i + 1]!)))
    }
    case Type.FixedSizeList: {
      const size = (type as FixedSizeList).listSize
      const items = data.children[0] && plainValues(data.children[0])
      return items && mapValid(data, (i) => items.slice(i * size, (i + 1) * size))
    }
    case Type.Struct: {
      const names = (type.children as Field[]).map((f) => f.name)
      const columns: JsonValue[][] = []
      for (const child of data.children) {
        const values = plainValues(child)
        if (!values) return undefined
        columns.push(values)
      }
      return mapValid(data, (i) => {
        const out: JsonObject = {}
        for (let k = 0; k < names.length; k++) out[names[k]!] = columns[k]![i]!
        return out
      })
    }
    default:
      return undefined
  }
}

/**
 * Each row's value, or null where the validity bitmap says so. Arrow JS slices offsets and
 * fixed-width values to the data's offset (`i`) but not bitmaps (`j`, offset included).
 */
function mapValid(data: Data, at: (i: number, j: number) => JsonValue): JsonValue[] {
  const out = new Array<JsonValue>(data.length)
  const bitmap = data.nullCount > 0 ? data.nullBitmap : undefined
  for (let i = 0, j = data.offset; i < data.length; i++, j++) {
    out[i] = bitmap && (bitmap[j >> 3]! & (1 << (j & 7))) === 0 ? null : at(i, j)
  }
  return out
}

/** The strings of Utf8 data, decoded from its one buffer: `Buffer#toString` is faster than TextDecoder. */
function utf8Values(data: Data): JsonValue[] {
  const offsets = data.valueOffsets as Int32Array
  const values = data.values as Uint8Array
  const bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength)
  const bitmap = data.nullCount > 0 ? data.nullBitmap : undefined
  const out = new Array<JsonValue>(data.length)
  for (let i = 0, j = data.offset; i < data.length; i++, j++) {
    out[i] = bitmap && (bitmap[j >> 3]! & (1 << (j & 7))) === 0 ? null : bytes.toString('utf8', offsets[i]!, offsets[i + 1]!)
  }
  return out
}

/** How to turn an Arrow JS value of a type into a JSON value. */
function converterFor(type: DataType): Convert {
  switch (type.typeId) {
    case Type.Null:
      return () => null
    case Type.Utf8:
    case Type.LargeUtf8:
    case Type.Bool:
    case Type.Float:
      return undefined
    case Type.Int:
      return (type as DataType<Type.Int> & { bitWidth: number }).bitWidth === 64 ? bigintToJson : undefined
    case Type.Binary:
    case Type.LargeBinary:
    case Type.FixedSizeBinary:
      return (v: Uint8Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')
    case Type.Date:
      return (v: number | Date) => new Date(typeof v === 'number' ? v : v.getTime()).toISOString().slice(0, 10)
    case Type.Timestamp: {
      // Arrow JS gives milliseconds, fractional below that: back to whole units, as far as a float holds them.
      const { unit, timezone } = type as DataType & { unit: number; timezone: string | null }
      const exact = Math.min(unit, 2)
      const scale = 10 ** (3 * exact - 3)
      const pad = 10n ** BigInt(3 * (unit - exact))
      return (v: number | Date) => {
        const units = BigInt(Math.round((typeof v === 'number' ? v : v.getTime()) * scale)) * pad
        return timestampText(units, unit, !!timezone) ?? bigintToJson(units)
      }
    }
    case Type.Time:
    case Type.Duration:
      return (v: number | bigint) => (typeof v === 'bigint' ? bigintToJson(v) : v)
    case Type.Decimal: {
      const scale = (type as DataType & { scale: number }).scale
      return (v: Uint32Array) => decimalToString(util.bigNumToBigInt(v as never), scale)
    }
    case Type.Dictionary:
      return converterFor((type as DataType & { dictionary: DataType }).dictionary)
    case Type.List:
    case Type.LargeList:
    case Type.FixedSizeList: {
      const child = converterFor((type.children[0] as Field).type)
      return (v: Vector) => {
        const out: JsonValue[] = []
        for (const item of v) out.push(item === null || item === undefined ? null : child ? child(item) : (item as JsonValue))
        return out
      }
    }
    case Type.Struct: {
      const fields = (type.children as Field[]).map((f) => [f.name, converterFor(f.type)] as const)
      return (row: Record<string, unknown>) => {
        const out: JsonObject = {}
        for (const [name, convert] of fields) {
          const item = row[name]
          out[name] = item === null || item === undefined ? null : convert ? convert(item) : (item as JsonValue)
        }
        return out
      }
    }
    case Type.Map: {
      const entry = (type.children[0] as Field).type as Struct
      const [keyField, valueField] = entry.children as [Field, Field]
      const key = converterFor(keyField.type)
      const value = converterFor(valueField.type)
      return (map: Iterable<[unknown, unknown]>) => {
        const out: JsonObject = {}
        for (const [k, v] of map) out[String(key ? key(k) : k)] = v === null || v === undefined ? null : value ? value(v) : (v as JsonValue)
        return out
      }
    }
    default:
      return (v: unknown) => (typeof v === 'bigint' ? bigintToJson(v) : v === null || typeof v !== 'object' ? (v as JsonValue) : String(v))
  }
}

function decimalToString(unscaled: bigint, scale: number): string {
  if (scale <= 0) return (unscaled * 10n ** BigInt(-scale)).toString()
  const negative = unscaled < 0n
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0')
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`
}

// ---------------------------------------------------------------------------------------------
// Writing

type ColumnKind = 'string' | 'bool' | 'int' | 'float' | 'strings' | 'json' | 'typed'

/** The kind of column that holds every value of a sample losslessly. */
function inferKind(values: Iterable<unknown>): ColumnKind {
  let kind: ColumnKind | undefined
  let emptyList = false
  for (const v of values) {
    if (v === null || v === undefined) continue
    // An empty list fits a list of strings but says nothing about the items on its own.
    if (Array.isArray(v) && v.length === 0) {
      emptyList = true
      continue
    }
    let k: ColumnKind
    if (typeof v === 'string') k = 'string'
    else if (typeof v === 'boolean') k = 'bool'
    else if (typeof v === 'number') k = Number.isSafeInteger(v) ? 'int' : 'float'
    else if (Array.isArray(v) && v.every((x) => x === null || typeof x === 'string')) k = 'strings'
    else return 'json'
    if (kind === undefined || kind === k) kind = k
    else if ((kind === 'int' && k === 'float') || (kind === 'float' && k === 'int')) kind = 'float'
    else return 'json'
  }
  if (emptyList && kind !== 'strings') return 'json'
  return kind ?? 'json'
}

function arrowType(kind: ColumnKind): DataType {
  switch (kind) {
    case 'string':
    case 'json':
      return new Utf8()
    case 'bool':
      return new Bool()
    case 'int':
      return new Int64()
    case 'float':
      return new Float64()
    case 'strings':
      return new List(new Field('element', new Utf8(), true))
    case 'typed':
      throw new Error('a typed column takes its type from the layout')
  }
}

/**
 * The unit a timestamp is stored in: Parquet has no seconds, and a column of seconds written as
 * plain integers (as the Parquet writer does) is read by pyarrow as int64, so seconds are stored
 * as milliseconds, as pyarrow stores them (the file's features still name seconds).
 */
function storedUnit(unit: 0 | 1 | 2 | 3): 1 | 2 | 3 {
  return unit === 0 ? 1 : unit
}

/** The Arrow type of a column type the layout names. */
function arrowTypeOf(type: ColumnType): DataType {
  if (typeof type === 'object') {
    if ('timestamp' in type) return new Timestamp(storedUnit(type.timestamp), type.zone ?? null)
    if ('list' in type) {
      const item = new Field('element', arrowTypeOf(type.list), true)
      if (type.size !== undefined) return new FixedSizeList(type.size, item)
      return type.large ? new LargeList(item) : new List(item)
    }
    return new Struct(Object.entries(type.struct).map(([name, t]) => new Field(name, arrowTypeOf(t), true)))
  }
  switch (type) {
    case 'string':
      return new Utf8()
    case 'large_string':
      return new LargeUtf8()
    case 'binary':
      return new Binary()
    case 'large_binary':
      return new LargeBinary()
    case 'bool':
      return new Bool()
    case 'null':
      return new Null()
    case 'date32':
      return new DateDay()
    case 'date64':
      // As pyarrow writes it: Parquet's DATE (days), which every reader takes as a date; Arrow's
      // Date64 would be stored as a plain INT64 that pyarrow and `datasets` read as integers.
      return new DateDay()
    case 'float16':
      return new Float16()
    case 'float32':
      return new Float32()
    case 'float64':
      return new Float64()
    case 'int8':
      return new Int8()
    case 'int16':
      return new Int16()
    case 'int32':
      return new Int32()
    case 'int64':
      return new Int64()
    case 'uint8':
      return new Uint8()
    case 'uint16':
      return new Uint16()
    case 'uint32':
      return new Uint32()
    case 'uint64':
      return new Uint64()
  }
}

/** A value that fits `type` as Arrow JS builds it: 64-bit integers as BigInt, dates as milliseconds, struct keys all present. */
function arrowValue(type: ColumnType, value: JsonValue | undefined): unknown {
  if (value === null || value === undefined) return null
  if (typeof type === 'object') {
    if ('timestamp' in type) return parseTimestamp(value as string, storedUnit(type.timestamp))
    if ('list' in type) return (value as JsonValue[]).map((item) => arrowValue(type.list, item))
    const out: Record<string, unknown> = {}
    for (const [key, t] of Object.entries(type.struct)) out[key] = arrowValue(t, (value as JsonObject)[key])
    return out
  }
  if (type === 'int64' || type === 'uint64') return integerOf(value)
  if (type === 'binary' || type === 'large_binary') return Buffer.from(value as string, 'base64')
  if (type === 'date32' || type === 'date64') return parseDate(value as string)
  return isIntColumnType(type) ? Number(value) : value
}

function describeColumnType(type: ColumnType): string {
  if (typeof type === 'string') return type
  if ('timestamp' in type) return `timestamp[${['s', 'ms', 'us', 'ns'][type.timestamp]}${type.zone ? `, tz=${type.zone}` : ''}]`
  if ('list' in type) return `${type.large ? 'large_list' : 'list'}<${describeColumnType(type.list)}>${type.size === undefined ? '' : ` of ${type.size}`}`
  return `struct<${Object.entries(type.struct).map(([k, t]) => `${k}: ${describeColumnType(t)}`).join(', ')}>`
}

const KIND_NAMES: Record<ColumnKind, string> = {
  string: 'strings',
  bool: 'booleans',
  int: 'integers',
  float: 'numbers',
  strings: 'lists of strings',
  json: 'JSON',
  typed: 'values of its type',
}

/** A value as its column stores it, or undefined when it does not fit. */
function cell(kind: ColumnKind, v: unknown): unknown {
  if (v === null || v === undefined) return null
  switch (kind) {
    case 'string':
      return typeof v === 'string' ? v : undefined
    case 'bool':
      return typeof v === 'boolean' ? v : undefined
    case 'int':
      return typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : undefined
    case 'float':
      return typeof v === 'number' ? v : undefined
    case 'strings':
      return Array.isArray(v) && v.every((x) => x === null || typeof x === 'string') ? v : undefined
    case 'json':
      return stringifyJson(v)
    case 'typed':
      throw new Error('a typed column is checked against its type')
  }
}

/**
 * Writes records as Parquet, in row groups of `batchRows` records (or fewer when they exceed
 * `batchBytes`), snappy-compressed unless told otherwise. The layout's `schemaMetadata` becomes both the Arrow
 * schema metadata and top-level Parquet key-value metadata, where pyarrow and `datasets` read it.
 */
export function parquetWriter(
  sink: Sink,
  layout: { columns?: string[]; schemaMetadata?: Record<string, string>; columnTypes?: Record<string, ColumnType> },
  options: ParquetWriteOptions = {},
  warn?: (message: string, field: string) => void,
): RecordWriter {
  const settings = writeSettings(options)
  const { batchRows, batchBytes } = settings
  const metadata = new Map(Object.entries(layout.schemaMetadata ?? {}).filter(([k]) => k !== ARROW_SCHEMA_KEY))
  /** `plain`: the top-level columns written without a dictionary (see `distinctTextColumns`). */
  const properties = (plain: readonly string[] = []) => writerProperties(metadata, settings, plain)

  let pending: JsonObject[] = []
  let pendingBytes = 0
  /** The batch being gathered, once the first has fixed the columns, and the records' rough size in it. */
  let gathered: BatchColumns | undefined
  let gatheredBytes = 0
  let written = 0
  let columns: string[] | undefined
  let kinds: ColumnKind[] = []
  let schema: Schema | undefined
  let output: ParquetOutput | undefined

  function chooseSchema(sample: JsonObject[]): void {
    const names = [...(layout.columns ?? [])]
    const seen = new Set(names)
    for (const record of sample) for (const key of Object.keys(record)) if (!seen.has(key)) seen.add(key), names.push(key)
    columns = names
    const declared = layout.columnTypes ?? {}
    kinds = names.map((name) => (own(declared, name) ? 'typed' : inferKind(sample.map((r) => own(r, name)))))
    const fields = names.map((name, i) => {
      const kind = kinds[i]!
      if (kind === 'typed') return new Field(name, arrowTypeOf(own(declared, name)!), true)
      return new Field(name, arrowType(kind), true, kind === 'json' ? new Map([[JSON_COLUMN_KEY, JSON_COLUMN_VALUE]]) : undefined)
    })
    schema = new Schema(fields, metadata)
  }

  async function flush(): Promise<void> {
    if (!schema) {
      if (!pending.length) return
      chooseSchema(pending)
      gathered = new BatchColumns(columns!, kinds, layout.columnTypes ?? {}, schema!)
      for (const [r, record] of pending.entries()) gathered.add(record, written + r)
      pending = []
    }
    if (!gathered?.length) return
    const batch = gathered.batch()
    written += batch.numRows
    gatheredBytes = 0
    output ??= new ParquetOutput(sink, properties(distinctTextColumns(batch)), [...metadata.keys(), ARROW_SCHEMA_KEY])
    const copied = toWasm(new Table([batch]))
    // The batch is in WebAssembly memory now: its buffers take the next batch's rows.
    gathered.clear()
    await output.push(copied)
  }

  return {
    async write(record: JsonObject) {
      if (warn) for (const key in record) if (illFormedCell(record[key])) warn(LONE_SURROGATE, key)
      const bytes = roughSize(record)
      if (gathered) {
        gathered.add(record, written + gathered.length)
        gatheredBytes += bytes
        if (gathered.length >= batchRows || gatheredBytes >= batchBytes) await flush()
        return
      }
      // The first batch is held as records: their values choose the columns' types.
      pending.push(record)
      pendingBytes += bytes
      if (pending.length >= batchRows || pendingBytes >= batchBytes) await flush()
    },
    async end() {
      await flush()
      if (output) return output.end()
      // No records: a file with the layout's columns as text and no row groups.
      if (!schema) chooseSchema([])
      await sink.write(wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(new Table(schema!), 'stream')), properties()))
    },
  }
}

/**
 * The top-level text columns of `batch` (the first) whose values are mostly distinct: a dictionary
 * of long texts is built, outgrows its page and is dropped for every row group, and building it
 * took half of a snappy write's time. A column with few distinct values (a split, a label) keeps one.
 */
function distinctTextColumns(batch: RecordBatch): string[] {
  const plain: string[] = []
  for (const [c, field] of batch.schema.fields.entries()) {
    const data = batch.getChildAt(c)?.data[0]
    if (!data || (field.type.typeId !== Type.Utf8 && field.type.typeId !== Type.LargeUtf8) || data.length - data.nullCount < 16) continue
    const seen = new Set<string>()
    const offsets = data.valueOffsets as Int32Array | BigInt64Array
    const bytes = Buffer.from(data.values.buffer, data.values.byteOffset, data.values.byteLength)
    let values = 0
    for (let i = 0; i < data.length; i++) {
      const start = Number(offsets[i]!)
      const end = Number(offsets[i + 1]!)
      if (end === start && !data.getValid(i)) continue
      values++
      // The first 64 bytes tell texts apart well enough to choose an encoding.
      seen.add(bytes.toString('latin1', start, Math.min(end, start + 64)))
    }
    if (seen.size * 2 > values) plain.push(field.name)
  }
  return plain
}

/** `options`, each one left out given its default, once: the records held and the row groups written go by the same numbers. */
function writeSettings(options: ParquetWriteOptions): Required<ParquetWriteOptions> {
  return { batchRows: options.batchRows ?? DEFAULT_BATCH_ROWS, batchBytes: options.batchBytes ?? DEFAULT_BATCH_BYTES, compression: options.compression ?? DEFAULT_COMPRESSION }
}

/** The writer's properties: row groups of `batchRows` rows or `batchBytes` bytes, the compression, `metadata` in the footer, and no dictionary for the `plain` columns. */
function writerProperties(metadata: Map<string, string>, settings: Required<ParquetWriteOptions>, plain: readonly string[] = []) {
  const compression = { zstd: wasm.Compression.ZSTD, snappy: wasm.Compression.SNAPPY, none: wasm.Compression.UNCOMPRESSED }[settings.compression]
  let builder = new wasm.WriterPropertiesBuilder()
  for (const name of plain) builder = builder.setColumnDictionaryEnabled(name, false)
  return builder
    .setStatisticsEnabled(wasm.EnabledStatistics.Chunk)
    .setCompression(compression)
    .setMaxRowGroupSize(settings.batchRows)
    .setMaxRowGroupBytes(settings.batchBytes)
    .setKeyValueMetadata(metadata)
    .setCreatedBy('evalferry')
    .build()
}

/**
 * A Parquet file cut into `count` files of contiguous rows, as many in each as can be (as
 * `push_to_hub` shards a split); `sinkFor(i)` takes the i-th. The record batches go from the
 * reader to the writer as Arrow data, never as rows: each file has the whole's schema and
 * metadata exactly. Gives the rows each file holds.
 */
export async function splitParquet(path: string, count: number, sinkFor: (index: number) => Sink): Promise<number[]> {
  const { parquet, opened } = await openParquet(path, path, SLICE_BYTES)
  try {
    let schema: Schema
    let groups: RowGroup[]
    try {
      schema = tableFromIPC(parquet.schema().intoIPCStream()).schema
      groups = rowGroupsOf(parquet, opened)
    } catch (error) {
      throw parseError(path, error)
    }
    const metadata = new Map([...schema.metadata].filter(([k]) => k !== ARROW_SCHEMA_KEY))
    const total = groups.reduce((sum, g) => sum + g.rows, 0)
    // Told before any file is written: with no more files than rows, every file's range holds a row.
    if (count > total) throw new UsageError(`${path} holds ${total} rows: it cannot be cut into ${count} files that each hold a row`)
    const batchSize = batchRowsOf(groups)
    const rows: number[] = []
    for (let i = 0; i < count; i++) {
      const [start, end] = [Math.floor((total * i) / count), Math.floor((total * (i + 1)) / count)]
      // Made at the shard's first batch, which tells the columns written without a dictionary.
      let output: ParquetOutput | undefined
      const pieces = piecesOf(groups, [start, end], SLICE_BYTES)
      for await (const { value: batch, first } of batchesOf(parquet, pieces, batchSize, path, (b) => tableFromIPC(b.intoIPCStream()), opened)) {
        const from = Math.max(start - first, 0)
        const to = Math.min(end - first, batch.numRows)
        // The batch as the file's schema, whose metadata the writer embeds (a batch read alone has none).
        const kept = from === 0 && to === batch.numRows ? batch : batch.slice(from, to)
        const batches = kept.batches.map((b) => new RecordBatch(schema, b.data))
        if (to > from) {
          output ??= new ParquetOutput(sinkFor(i), writerProperties(metadata, writeSettings({}), distinctTextColumns(batches[0]!)), [...metadata.keys(), ARROW_SCHEMA_KEY])
          await output.push(toWasm(new Table(batches)))
        }
        // The pieces hold the shard's rows in order: past its end, nothing later is of it.
        if (first + batch.numRows >= end) break
      }
      // Every file's range holds rows (see above): one that reads none, the row groups hold fewer rows than the footer counts.
      if (!output) throw new DataError('E_PARSE', 'corrupt Parquet data: its row groups hold fewer rows than its footer counts', { file: path, record: start })
      await output.end()
      rows.push(end - start)
    }
    return rows
  } finally {
    try {
      parquet.free()
    } catch {
      // after a trap the reader's memory is beyond use; the file is closed all the same
    }
    await opened.close()
  }
}

/** The validity bitmap of `values` (one bit per present value) and their null count; `each` sees every present value. */
function validity<T>(values: (T | null | undefined)[], each: (value: T, i: number) => void): { nullBitmap: Uint8Array; nullCount: number } {
  const n = values.length
  const nullBitmap = new Uint8Array(((n + 63) & ~63) >> 3)
  let nullCount = 0
  for (let i = 0; i < n; i++) {
    const v = values[i]
    if (v === null || v === undefined) nullCount++
    else {
      nullBitmap[i >> 3]! |= 1 << (i & 7)
      each(v, i)
    }
  }
  return { nullBitmap, nullCount }
}

/** The column type each kind of column is written as (JSON text is a string). */
const KIND_TYPES: Record<Exclude<ColumnKind, 'typed'>, ColumnType> = {
  string: 'string',
  json: 'string',
  bool: 'bool',
  int: 'int64',
  float: 'float64',
  strings: { list: 'string' },
}

/**
 * Data of a column type from values `arrowValue` (or `cell`) made. Text, floats, timestamps and
 * null columns, and the lists and structs of any type, are built here straight into their
 * buffers: Arrow JS's builders encode each string apart and grow their buffers value by value (a
 * third of a write's time in JavaScript), take timestamps as float milliseconds, and give Null
 * data a null count that parquet-wasm refuses.
 */
function typedData(type: ColumnType, arrowType: DataType, values: unknown[]): Data {
  if (type === 'null') return nullData(arrowType as Null, values.length)
  if (type === 'string' || type === 'large_string') return utf8Data(values as (string | null)[], type === 'large_string')
  if (type === 'float64') return floatData(arrowType as Float64, values as (number | null)[])
  if (typeof type !== 'object') return vectorFromArray(values, arrowType).data[0]!
  if ('timestamp' in type) return timestampData(arrowType as Timestamp, values as (bigint | null)[])
  const { nullBitmap, nullCount } = validity(values, () => {})
  if ('list' in type) {
    const itemType = (arrowType.children[0] as Field).type
    const items: unknown[] = []
    // Float64Array holds a large list's offsets exactly, as far as an array of items reaches.
    const ends = type.large ? new Float64Array(values.length + 1) : new Int32Array(values.length + 1)
    for (let i = 0; i < values.length; i++) {
      const list = values[i] as unknown[] | null
      // A fixed-size list holds its length of items even where it is null.
      if (list) for (const item of list) items.push(item)
      else if (type.size !== undefined) for (let k = 0; k < type.size; k++) items.push(null)
      ends[i + 1] = items.length
    }
    const child = typedData(type.list, itemType, items)
    const length = values.length
    if (type.size !== undefined) return makeData({ type: arrowType as FixedSizeList, length, nullCount, nullBitmap, child })
    if (type.large) return makeData({ type: arrowType as LargeList, length, nullCount, nullBitmap, valueOffsets: BigInt64Array.from(ends, BigInt), child })
    return makeData({ type: arrowType as List, length, nullCount, nullBitmap, valueOffsets: ends as Int32Array, child })
  }
  const fields = arrowType.children as Field[]
  const children = Object.entries(type.struct).map(([key, t], k) =>
    typedData(t, fields[k]!.type, values.map((v) => (v === null || v === undefined ? null : ((v as Record<string, unknown>)[key] ?? null)))),
  )
  return makeData({ type: arrowType as Struct, length: values.length, nullCount, nullBitmap, children })
}

/** Float64 data, one value per row (0 under a null). */
function floatData(type: Float64, values: (number | null)[]): Data<Float64> {
  const data = new Float64Array(values.length)
  const { nullBitmap, nullCount } = validity(values, (v, i) => (data[i] = v))
  return makeData({ type, length: values.length, nullCount, nullBitmap, data })
}

/**
 * Null data of `length`. It has a validity bitmap of no bits set, which Arrow JS never writes for
 * Null: without one, a list's slice of it would count its nulls as unknown (-1) in the IPC sent
 * to parquet-wasm, which refuses it.
 */
function nullData(type: Null, length: number): Data<Null> {
  return new Data(type, 0, length, length, { [BufferType.VALIDITY]: new Uint8Array((length + 7) >> 3) })
}

/** Timestamp data from whole units (Arrow JS's builder takes milliseconds, which would lose the rest). */
function timestampData(type: Timestamp, values: (bigint | null)[]): Data<Timestamp> {
  const data = new BigInt64Array(values.length)
  const { nullBitmap, nullCount } = validity(values, (v, i) => (data[i] = v))
  return makeData({ type, length: values.length, nullCount, nullBitmap, data })
}

/** The bytes of text a column holds in one batch: 2 GiB, or as much as a Buffer when `large`. */
function mostTextBytes(large: boolean): number {
  return large ? constants.MAX_LENGTH : 0x7fffffff
}

function textTooLarge(most: number): DataError {
  return new DataError('E_FIELD', `a column holds more than ${Math.round(most / 2 ** 30)} GiB of text in one batch; write smaller batches`)
}

/**
 * Utf8 data (LargeUtf8 when `large`) built with one Buffer for all strings, each encoded into it
 * once: Arrow JS's builder encodes each one apart, and measuring each first scanned the text twice.
 * The Buffer has room for the most bytes the text can take (in a batch too large for that, the
 * bytes it takes); its pages that no byte reaches are never touched, so they take no memory.
 */
function utf8Data(values: (string | null)[], large = false): Data<Utf8 | LargeUtf8> {
  const n = values.length
  let units = 0
  for (let i = 0; i < n; i++) units += values[i]?.length ?? 0
  // Told before any room is made for the text.
  const most = mostTextBytes(large)
  const tooLarge = () => textTooLarge(most)
  // A UTF-16 code unit takes at most 3 bytes of UTF-8, and at least one.
  if (units > most) throw tooLarge()
  let room = units * 3
  // Only a batch far above the default batchBytes gets here: its text is measured, not bounded.
  if (room > most) {
    room = 0
    for (const v of values) if (v && (room += Buffer.byteLength(v, 'utf8')) > most) throw tooLarge()
  }
  const data = Buffer.allocUnsafeSlow(room)
  // Float64Array holds large offsets exactly, as far as a Buffer reaches.
  const offsets = large ? new Float64Array(n + 1) : new Int32Array(n + 1)
  let bytes = 0
  let done = 0
  const { nullBitmap, nullCount } = validity(values, (v, i) => {
    // Rows before this one were null: they end where the text so far does.
    for (; done < i; done++) offsets[done + 1] = bytes
    bytes += data.write(v, bytes, 'utf8')
    offsets[i + 1] = bytes
    done = i + 1
  })
  for (; done < n; done++) offsets[done + 1] = bytes
  const text = data.subarray(0, bytes)
  if (large) return makeData({ type: new LargeUtf8(), length: n, nullCount, nullBitmap, valueOffsets: BigInt64Array.from(offsets, BigInt), data: text })
  return makeData({ type: new Utf8(), length: n, nullCount, nullBitmap, valueOffsets: offsets as Int32Array, data: text })
}

/**
 * The columns of the record batch being written, filled a record at a time once the first batch has
 * fixed their types. Text, JSON text and lists of text go into their UTF-8 buffers as each record
 * comes, so their strings die young: records held until their batch was full lived through the
 * young generation's collections, each of which copied them (a tenth of JSON Lines → Parquet's time).
 * Other values are held until the batch is made.
 */
class BatchColumns {
  length = 0
  private readonly texts: (TextData | undefined)[]
  private readonly lists: (TextListData | undefined)[]
  private values: (unknown[] | undefined)[]
  private readonly types: (ColumnType | undefined)[]
  private readonly known: Set<string>
  /** The record being added, a value per column, checked before any column takes one. */
  private readonly cells: unknown[]

  constructor(
    private readonly names: string[],
    private readonly kinds: ColumnKind[],
    columnTypes: Record<string, ColumnType>,
    private readonly schema: Schema,
  ) {
    this.known = new Set(names)
    this.cells = new Array<unknown>(names.length)
    this.types = names.map((name, c) => (kinds[c] === 'typed' ? own(columnTypes, name)! : undefined))
    this.texts = this.types.map((type, c) => (kinds[c] === 'string' || kinds[c] === 'json' || type === 'string' || type === 'large_string' ? new TextData(type === 'large_string') : undefined))
    this.lists = this.types.map((type, c) => (kinds[c] === 'strings' || isTextList(type) ? new TextListData() : undefined))
    this.values = this.freshValues()
  }

  /**
   * Adds `record`, the `index`-th of the file: a value that does not fit its column, or a column the
   * first records did not have, is an error naming the record and the column, and adds nothing.
   */
  add(record: JsonObject, index: number): void {
    const names = this.names
    const cells = this.cells
    for (let c = 0; c < names.length; c++) {
      const name = names[c]!
      const raw = own(record, name)
      const kind = this.kinds[c]!
      // Text, the most cells, is taken as it is (as `cell` and `arrowValue` take it).
      if (this.texts[c] && kind !== 'json' && (typeof raw === 'string' || raw === null || raw === undefined)) {
        cells[c] = raw ?? null
        continue
      }
      const type = this.types[c]
      const v = type ? (fitsColumnType(type, raw) ? arrowValue(type, raw) : undefined) : cell(kind, raw)
      if (v === undefined) {
        const holds = type ? `is ${describeColumnType(type)}` : `holds ${KIND_NAMES[kind]} in the first records`
        throw new DataError('E_FIELD', `column "${name}" ${holds}, but this record has ${JSON.stringify(raw)?.slice(0, 60)}; a Parquet column has one type`, {
          record: index,
          field: name,
        })
      }
      cells[c] = v
    }
    for (const key in record) {
      if (!this.known.has(key)) {
        throw new DataError('E_FIELD', `record ${index + 1} has a column "${key}" that the first records did not have`, { record: index, field: key })
      }
    }
    for (let c = 0; c < names.length; c++) {
      const v = cells[c]
      if (this.texts[c]) this.texts[c]!.add(v as string | null)
      else if (this.lists[c]) this.lists[c]!.add(v as (string | null)[] | null)
      else this.values[c]!.push(v)
    }
    this.length++
  }

  /** The batch of the records added since the last `clear`. */
  batch(): RecordBatch {
    const fields = this.schema.fields
    const children = this.names.map((_, c) => {
      const type = fields[c]!.type
      return this.texts[c]?.data() ?? this.lists[c]?.data(type as List) ?? typedData(this.types[c] ?? KIND_TYPES[this.kinds[c] as Exclude<ColumnKind, 'typed'>], type, this.values[c]!)
    })
    return new RecordBatch(this.schema, makeData({ type: new Struct(fields), length: this.length, nullCount: 0, children }))
  }

  /** Empties the columns for the next batch, keeping the text buffers: the batch made last must be copied out first. */
  clear(): void {
    this.length = 0
    for (const text of this.texts) text?.clear()
    for (const list of this.lists) list?.clear()
    this.values = this.freshValues()
  }

  private freshValues(): (unknown[] | undefined)[] {
    return this.names.map((_, c) => (this.texts[c] || this.lists[c] ? undefined : []))
  }
}

/** A declared list of text that `TextListData` builds: not of a fixed size, nor large. */
function isTextList(type: ColumnType | undefined): boolean {
  return typeof type === 'object' && 'list' in type && type.list === 'string' && type.size === undefined && !type.large
}

/** The validity bitmap of a column of `length` values: a bit per value, in whole 64-bit words as Arrow JS makes it. */
class Validity {
  bits = new Uint8Array(128)
  nullCount = 0

  set(i: number, valid: boolean): void {
    if (i >> 3 >= this.bits.length) {
      const more = new Uint8Array(this.bits.length * 2)
      more.set(this.bits)
      this.bits = more
    }
    if (valid) this.bits[i >> 3]! |= 1 << (i & 7)
    else this.nullCount++
  }

  of(length: number): Uint8Array {
    return this.bits.subarray(0, ((length + 63) & ~63) >> 3)
  }

  clear(length: number): void {
    this.bits.fill(0, 0, ((length + 63) & ~63) >> 3)
    this.nullCount = 0
  }
}

/**
 * Utf8 data (LargeUtf8 when `large`) built a value at a time into one Buffer, which grows by
 * doubling: each string is encoded once, as it comes, and Arrow JS's builder is not used.
 */
class TextData {
  length = 0
  private bytes = Buffer.allocUnsafeSlow(1 << 16)
  private used = 0
  private offsets: Int32Array | Float64Array
  private readonly validity = new Validity()

  constructor(private readonly large: boolean) {
    // Float64Array holds large offsets exactly, as far as a Buffer reaches.
    this.offsets = large ? new Float64Array(1025) : new Int32Array(1025)
  }

  add(v: string | null): void {
    const i = this.length
    if (i + 1 === this.offsets.length) {
      const more = this.large ? new Float64Array(i * 2 + 1) : new Int32Array(i * 2 + 1)
      more.set(this.offsets)
      this.offsets = more
    }
    this.validity.set(i, v !== null)
    if (v !== null) {
      // A UTF-16 code unit takes at most 3 bytes of UTF-8.
      if (this.used + v.length * 3 > this.bytes.length) this.makeRoom(v)
      this.used += this.bytes.write(v, this.used, 'utf8')
    }
    this.offsets[i + 1] = this.used
    this.length = i + 1
  }

  private makeRoom(v: string): void {
    const most = mostTextBytes(this.large)
    let need = this.used + v.length * 3
    if (need > most) {
      need = this.used + Buffer.byteLength(v, 'utf8')
      if (need > most) throw textTooLarge(most)
    }
    const bytes = Buffer.allocUnsafeSlow(Math.min(most, Math.max(need, this.bytes.length * 2)))
    this.bytes.copy(bytes, 0, 0, this.used)
    this.bytes = bytes
  }

  data(): Data<Utf8 | LargeUtf8> {
    const n = this.length
    const shared = { length: n, nullCount: this.validity.nullCount, nullBitmap: this.validity.of(n), data: this.bytes.subarray(0, this.used) }
    const offsets = this.offsets.subarray(0, n + 1)
    if (this.large) return makeData({ type: new LargeUtf8(), ...shared, valueOffsets: BigInt64Array.from(offsets, BigInt) })
    return makeData({ type: new Utf8(), ...shared, valueOffsets: offsets as Int32Array })
  }

  clear(): void {
    this.validity.clear(this.length)
    this.length = 0
    this.used = 0
  }
}

/** List<Utf8> data built a list at a time, its items into one `TextData`. */
class TextListData {
  length = 0
  private ends = new Int32Array(1025)
  private readonly validity = new Validity()
  private readonly items = new TextData(false)

  add(list: readonly (string | null | undefined)[] | null): void {
    const i = this.length
    if (i + 1 === this.ends.length) {
      const more = new Int32Array(i * 2 + 1)
      more.set(this.ends)
      this.ends = more
    }
    this.validity.set(i, list !== null)
    if (list) for (const item of list) this.items.add(item ?? null)
    this.ends[i + 1] = this.items.length
    this.length = i + 1
  }

  data(type: List): Data<List> {
    const n = this.length
    return makeData({ type, length: n, nullCount: this.validity.nullCount, nullBitmap: this.validity.of(n), valueOffsets: this.ends.subarray(0, n + 1), child: this.items.data() })
  }

  clear(): void {
    this.validity.clear(this.length)
    this.length = 0
    this.items.clear()
  }
}

/**
 * `table`'s one batch in WebAssembly memory, for the writer. The WebAssembly table it comes through
 * is freed at once: left to JavaScript's garbage collector, which does not see the WebAssembly
 * memory it holds, every batch stayed there (a 3-million-row write grew it to 680 MB).
 */
function toWasm(table: Table): WasmRecordBatch {
  const wasmTable = wasm.Table.fromIPCStream(tableToIPC(table, 'stream'))
  try {
    const batch = wasmTable.recordBatch(0)
    if (!batch) throw new Error('Arrow IPC round trip lost the record batch')
    return batch
  } finally {
    wasmTable.free()
  }
}

/**
 * Feeds record batches to parquet-wasm's streaming writer and pumps the bytes it emits to the
 * sink. At most one batch waits for the writer, so a slow sink slows the producer down.
 */
class ParquetOutput {
  private controller!: ReadableStreamDefaultController<WasmRecordBatch>
  private onPull: (() => void) | undefined
  private failure: unknown
  private readonly pump: Promise<void>

  /** `order`: the footer's key-value metadata keys in the order they are written (see `orderFooterMetadata`). */
  constructor(sink: Sink, properties: ReturnType<WriterPropertiesBuilder['build']>, order: readonly string[]) {
    const input = new ReadableStream<WasmRecordBatch>(
      {
        start: (controller) => {
          this.controller = controller
        },
        pull: () => {
          this.onPull?.()
          this.onPull = undefined
        },
      },
      { highWaterMark: 1 },
    )
    this.pump = (async () => {
      const bytes = (await wasm.transformParquetStream(input, properties)) as ReadableStream<Uint8Array>
      // Each chunk waits for the next: the last holds the footer, whose metadata is put in order first.
      let held: Uint8Array | undefined
      for await (const chunk of bytes as unknown as AsyncIterable<Uint8Array>) {
        if (held) await sink.write(held)
        held = chunk
      }
      if (held) {
        const tail = held.slice()
        await sink.write(orderFooterMetadata(tail, order) ? tail : held)
      }
    })().catch((error: unknown) => {
      this.failure = error
      this.onPull?.()
      this.onPull = undefined
    })
  }

  async push(batch: WasmRecordBatch): Promise<void> {
    this.check()
    await this.guarded(() => this.controller.enqueue(batch))
    while ((this.controller.desiredSize ?? 1) <= 0 && this.failure === undefined) await new Promise<void>((resolve) => (this.onPull = resolve))
    this.check()
  }

  async end(): Promise<void> {
    this.check()
    await this.guarded(() => this.controller.close())
    await this.pump
    this.check()
  }

  /** `step` on the input stream, which the writer cancels when it fails: then its own failure, once the pump has it, says why. */
  private async guarded(step: () => void): Promise<void> {
    try {
      step()
    } catch (error) {
      await this.pump
      this.check()
      throw error
    }
  }

  private check(): void {
    if (this.failure === undefined) return
    const error = this.failure
    if (error instanceof EvalferryError) throw error
    throw new Error(`writing Parquet failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
}
