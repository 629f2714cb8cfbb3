/**
 * An offset index for a Parquet file written without one, as pyarrow, pandas and `datasets` write
 * by default. parquet-wasm reads a slice of a row group's rows (see `SLICE_BYTES` in parquet.ts)
 * by the pages that hold them only where the file says where each page starts and which row is its
 * first; without that, each slice fetched its columns whole and decoded every row before it. 400 MB
 * of text in one pyarrow row group to JSON Lines took 22 s and peaked at 575 MB, against 9 s and
 * 222 MB for the same file written with its index.
 *
 * The index is made from the page headers alone, each read where the one before it ends, except in
 * a repeated column's version 1 data pages, whose header counts values, not rows: there the page's
 * repetition levels, at the start of its (compressed) body, are decoded far enough to count the
 * rows that start in it (not in LZO or LZ4, whose file is then read as it is). parquet-wasm is
 * then given the file with a footer of its own, which names the index, appended after the file's
 * pages in place of the file's footer.
 */

import { brotliDecompressSync, constants, unzipSync } from 'node:zlib'
import { Decompress } from 'fzstd'
import { I32, I64, LIST, STRUCT, ThriftReader, ThriftWriter, intOf, listOf, structAt, type FieldSpan } from './thrift.ts'

/** A file's bytes: its size, and `[start, end)` of them. */
export interface ByteSource {
  size: number
  read(start: number, end: number): Uint8Array
}

// Field ids (parquet.thrift).
const FILE_SCHEMA = 2
const FILE_ROW_GROUPS = 4
const SCHEMA_REPETITION = 3
const SCHEMA_CHILDREN = 5
const GROUP_COLUMNS = 1
const GROUP_BYTES = 2
const GROUP_ROWS = 3
const CHUNK_PATH = 1
const CHUNK_META = 3
const CHUNK_OFFSET_INDEX = 4
const CHUNK_OFFSET_INDEX_LENGTH = 5
const CHUNK_CRYPTO = 8
const META_CODEC = 4
const META_UNCOMPRESSED = 6
const META_COMPRESSED = 7
const META_DATA_PAGE = 9
const META_DICTIONARY_PAGE = 11
const PAGE_TYPE = 1
const PAGE_COMPRESSED = 3
const PAGE_V1 = 5
const PAGE_V2 = 8
const V1_VALUES = 1
const V1_REPETITION_ENCODING = 4
const V2_ROWS = 3

const REPEATED = 2
const DATA_PAGE = 0
const DICTIONARY_PAGE = 2
const DATA_PAGE_V2 = 3
const RLE = 3
const INDEX_PAGES = 1
const LOCATION_FIRST_ROW = 3

/** Where one data page starts, its length with its header, and the index in its row group of its first row. */
interface PageLocation {
  offset: number
  length: number
  firstRow: number
}

/** A file as parquet-wasm is to read it, with where the pages of its large row groups start. */
export interface IndexedFile {
  /** The file's bytes, with offset indexes and a footer naming them appended where some were made. */
  source: ByteSource
  /**
   * By row group, for each group of more than `sliceBytes` of data whose every column chunk has an
   * offset index (the file's or one made here): the rows, counted from the group's first, at which
   * the pages of its largest column chunk start. A slice of the group's rows that starts at one of
   * them decodes no rows of that chunk before its own.
   */
  pageStarts: (number[] | undefined)[]
}

/**
 * `source` with an offset index for each of its column chunks, where a row group holds more than
 * `sliceBytes` of data (and so is read in slices) and some chunk has none. The file is left as it
 * is where it needs none, or one cannot be made (a codec or page layout this does not read, or a
 * footer or page header it cannot): whatever is wrong with it is then told by the reader.
 */
export function withOffsetIndex(source: ByteSource, sliceBytes: number): IndexedFile {
  try {
    return indexed(source, sliceBytes) ?? { source, pageStarts: [] }
  } catch (error) {
    if (error instanceof RangeError) return { source, pageStarts: [] }
    throw error
  }
}

function indexed(source: ByteSource, sliceBytes: number): IndexedFile | undefined {
  if (source.size < 12) return undefined
  const tail = source.read(source.size - 8, source.size)
  if (Buffer.from(tail.buffer, tail.byteOffset + 4, 4).toString('latin1') !== 'PAR1') return undefined
  const footerStart = source.size - 8 - uint32At(tail, 0)
  if (footerStart < 4) return undefined
  const footer = source.read(footerStart, source.size - 8)
  const file = structAt(footer, 0)
  const groups = listOf(footer, file.get(FILE_ROW_GROUPS))
  if (!groups || (groups.items.length && groups.type !== STRUCT)) return undefined
  const rowGroups = groups.items.map((at) => structAt(footer, at))
  const sliced = rowGroups.map((group) => (intOf(footer, group.get(GROUP_BYTES)) ?? 0) > sliceBytes)
  // Most files have no group read in slices: their columns are not looked at.
  if (!sliced.includes(true)) return undefined

  const levels = repetitionLevels(footer, file.get(FILE_SCHEMA))
  if (!levels) return undefined
  const chunksOf = rowGroups.map((group) => {
    const columns = listOf(footer, group.get(GROUP_COLUMNS))
    if (!columns || columns.type !== STRUCT || columns.items.length !== levels.length) throw new RangeError('a row group without its columns')
    return columns.items.map((at) => ({ at, fields: structAt(footer, at) }))
  })
  // The first rows of the pages of each sliced group's largest chunk, from the index made or the file's.
  const sizeOf = (chunk: Map<number, FieldSpan>): number => intOf(footer, metaOf(footer, chunk)?.get(META_UNCOMPRESSED)) ?? 0
  const pageStarts = (made: Map<number, PageLocation[]>): (number[] | undefined)[] =>
    chunksOf.map((chunks, g) => {
      const rows = intOf(footer, rowGroups[g]!.get(GROUP_ROWS))
      if (!sliced[g] || rows === undefined || !chunks.length) return undefined
      const { at, fields } = chunks.reduce((most, chunk) => (sizeOf(chunk.fields) > sizeOf(most.fields) ? chunk : most))
      const starts = made.get(at)?.map((page) => page.firstRow) ?? indexedStarts(source, footer, fields)
      return starts && starts[0] === 0 && starts.every((row, i) => i === 0 || (row > starts[i - 1]! && row < rows)) ? starts : undefined
    })
  if (chunksOf.every((chunks) => chunks.every(({ fields }) => fields.has(CHUNK_OFFSET_INDEX)))) return { source, pageStarts: pageStarts(new Map()) }

  // The offset indexes, then the footer that names them, then its length and the magic.
  const appendix = new ThriftWriter()
  // Each chunk's pages and the index made of them, by where the chunk starts in the footer.
  const madeAt = new Map<number, PageLocation[]>()
  const indexAt = new Map<number, { offset: number; length: number }>()
  for (const [g, chunks] of chunksOf.entries()) {
    const rows = intOf(footer, rowGroups[g]!.get(GROUP_ROWS))
    if (rows === undefined) return undefined
    for (const [c, { at, fields: chunk }] of chunks.entries()) {
      if (chunk.has(CHUNK_OFFSET_INDEX)) continue
      if (chunk.has(CHUNK_PATH) || chunk.has(CHUNK_CRYPTO)) return undefined
      const pages = pagesOf(source, footer, metaOf(footer, chunk), levels[c]!, rows, footerStart)
      if (!pages) return undefined
      const start = appendix.length
      writeOffsetIndex(appendix, pages)
      madeAt.set(at, pages)
      indexAt.set(at, { offset: footerStart + start, length: appendix.length - start })
    }
  }
  const footerAt = appendix.length
  writeFooter(appendix, footer, (chunk, at) => {
    const index = indexAt.get(at)
    return {
      fields: chunk.values(),
      replace:
        index &&
        new Map([
          [CHUNK_OFFSET_INDEX, { type: I64, write: () => appendix.int(index.offset) }],
          [CHUNK_OFFSET_INDEX_LENGTH, { type: I32, write: () => appendix.int(index.length) }],
        ]),
    }
  })
  const footerLength = appendix.length - footerAt
  appendix.bytes(Uint8Array.of(footerLength & 0xff, (footerLength >>> 8) & 0xff, (footerLength >>> 16) & 0xff, footerLength >>> 24))
  appendix.bytes(Buffer.from('PAR1', 'latin1'))
  const added = appendix.done()
  return {
    source: {
      size: footerStart + added.length,
      read(start, end) {
        if (end <= footerStart) return source.read(start, end)
        const bytes = new Uint8Array(end - start)
        if (start < footerStart) bytes.set(source.read(start, footerStart), 0)
        const from = Math.max(start, footerStart)
        bytes.set(added.subarray(from - footerStart, end - footerStart), from - start)
        return bytes
      },
    },
    pageStarts: pageStarts(madeAt),
  }
}

/** A column chunk's `ColumnMetaData`. */
function metaOf(footer: Uint8Array, chunk: Map<number, FieldSpan>): Map<number, FieldSpan> | undefined {
  const field = chunk.get(CHUNK_META)
  return field?.type === STRUCT ? structAt(footer, field.from) : undefined
}

/** The first rows of a column chunk's pages, from the offset index the file has for it. */
function indexedStarts(source: ByteSource, footer: Uint8Array, chunk: Map<number, FieldSpan>): number[] | undefined {
  const offset = intOf(footer, chunk.get(CHUNK_OFFSET_INDEX))
  const length = intOf(footer, chunk.get(CHUNK_OFFSET_INDEX_LENGTH))
  if (offset === undefined || length === undefined || offset < 4 || length <= 0 || length > 16 << 20 || offset + length > source.size) return undefined
  const bytes = source.read(offset, offset + length)
  const pages = listOf(bytes, structAt(bytes, 0).get(INDEX_PAGES))
  if (!pages || pages.type !== STRUCT) return undefined
  const starts: number[] = []
  for (const at of pages.items) {
    const row = intOf(bytes, structAt(bytes, at).get(LOCATION_FIRST_ROW))
    if (row === undefined) return undefined
    starts.push(row)
  }
  return starts
}

/** A struct's fields to write, and those of them to write otherwise (see `ThriftWriter.struct`). */
interface Rewrite {
  fields: Iterable<FieldSpan>
  replace?: Map<number, { type: number; write: () => void }>
}

/**
 * The `FileMetaData` in `footer` written to `out`, each column chunk as `chunk` gives it from its
 * fields and where in `footer` it starts, and the rest as it was.
 */
export function writeFooter(out: ThriftWriter, footer: Uint8Array, chunk: (fields: Map<number, FieldSpan>, at: number) => Rewrite): void {
  const file = structAt(footer, 0)
  const groups = listOf(footer, file.get(FILE_ROW_GROUPS))
  if (!groups || (groups.items.length && groups.type !== STRUCT)) throw new RangeError('a footer without its row groups')
  const list = (items: number[], write: (fields: Map<number, FieldSpan>, at: number) => void) => ({
    type: LIST,
    write: () => {
      out.list(STRUCT, items.length)
      for (const at of items) write(structAt(footer, at), at)
    },
  })
  out.struct(
    footer,
    file.values(),
    new Map([
      [
        FILE_ROW_GROUPS,
        list(groups.items, (group) => {
          const columns = listOf(footer, group.get(GROUP_COLUMNS))
          if (!columns || (columns.items.length && columns.type !== STRUCT)) throw new RangeError('a row group without its columns')
          out.struct(
            footer,
            group.values(),
            new Map([
              [
                GROUP_COLUMNS,
                list(columns.items, (fields, at) => {
                  const { fields: kept, replace } = chunk(fields, at)
                  out.struct(footer, kept, replace)
                }),
              ],
            ]),
          )
        }),
      ],
    ]),
  )
}

/**
 * Each leaf column's largest repetition level, from the schema (a list of `SchemaElement`s, depth
 * first): how many of it and what holds it are repeated. Above 0, a page's values may be more than
 * its rows.
 */
function repetitionLevels(footer: Uint8Array, schema: FieldSpan | undefined): number[] | undefined {
  const elements = listOf(footer, schema)
  if (!elements || elements.type !== STRUCT || !elements.items.length) return undefined
  const leaves: number[] = []
  let next = 0
  const walk = (above: number): void => {
    const at = elements.items[next++]
    if (at === undefined) throw new RangeError('the schema ends early')
    const element = structAt(footer, at)
    const level = above + (intOf(footer, element.get(SCHEMA_REPETITION)) === REPEATED ? 1 : 0)
    const children = intOf(footer, element.get(SCHEMA_CHILDREN)) ?? 0
    if (!children) leaves.push(level)
    for (let i = 0; i < children; i++) walk(level)
  }
  // The root is the schema's first element; its repetition, if any, is not a column's.
  const root = structAt(footer, elements.items[next++]!)
  const children = intOf(footer, root.get(SCHEMA_CHILDREN)) ?? 0
  for (let i = 0; i < children; i++) walk(0)
  return next === elements.items.length ? leaves : undefined
}

/**
 * The data pages of one column chunk, read from their headers; undefined where their rows cannot
 * be told, or do not add up to the group's `rows`.
 */
function pagesOf(source: ByteSource, footer: Uint8Array, meta: Map<number, FieldSpan> | undefined, maxLevel: number, rows: number, footerStart: number): PageLocation[] | undefined {
  if (!meta) return undefined
  const codec = intOf(footer, meta.get(META_CODEC))
  const size = intOf(footer, meta.get(META_COMPRESSED))
  const dataPage = intOf(footer, meta.get(META_DATA_PAGE))
  const dictionaryPage = intOf(footer, meta.get(META_DICTIONARY_PAGE))
  if (codec === undefined || size === undefined || dataPage === undefined) return undefined
  // As the reader takes a chunk's start: its dictionary page, where the footer names one.
  const start = dictionaryPage !== undefined && dictionaryPage > 0 && dictionaryPage < dataPage ? dictionaryPage : dataPage
  const end = start + size
  if (start < 4 || end > footerStart) return undefined
  const pages: PageLocation[] = []
  let row = 0
  for (let at = start; at < end; ) {
    const { header, length } = pageHeaderAt(source, at, end)
    const type = intOf(header.bytes, header.get(PAGE_TYPE))
    const body = intOf(header.bytes, header.get(PAGE_COMPRESSED))
    if (body === undefined || body < 0) return undefined
    const bodyAt = at + length
    if (bodyAt + body > end) return undefined
    if (type === DATA_PAGE || type === DATA_PAGE_V2) {
      const n = type === DATA_PAGE_V2 ? intOf(header.bytes, structOf(header, PAGE_V2)?.get(V2_ROWS)) : pageRowsV1(source, header, bodyAt, body, codec, maxLevel)
      if (n === undefined) return undefined
      pages.push({ offset: at, length: length + body, firstRow: row })
      row += n
    } else if (type !== DICTIONARY_PAGE || pages.length) return undefined
    at = bodyAt + body
  }
  return row === rows && pages.length ? pages : undefined
}

/** A page header's fields, and the bytes they are spans of. */
type Header = Map<number, FieldSpan> & { bytes: Uint8Array }

/**
 * The page header at `at`, read a little at a time (a header's statistics may be long), and its
 * length; a RangeError where it is not whole within 16 MiB, or before `end`.
 */
function pageHeaderAt(source: ByteSource, at: number, end: number): { header: Header; length: number } {
  for (let window = 256; ; window *= 16) {
    const bytes = source.read(at, Math.min(at + window, end))
    const reader = new ThriftReader(bytes, 0)
    try {
      const fields = new Map(reader.fields().map((f) => [f.id, f]))
      return { header: Object.assign(fields, { bytes }), length: reader.at }
    } catch (error) {
      if (!(error instanceof RangeError) || at + window >= end || window >= 16 << 20) throw error
    }
  }
}

/** The struct in `header`'s field `id`. */
function structOf(header: Header, id: number): Map<number, FieldSpan> | undefined {
  const field = header.get(id)
  return field?.type === STRUCT ? structAt(header.bytes, field.from) : undefined
}

/**
 * The rows of a version 1 data page: its values, unless its column is repeated; then the values
 * whose repetition level is 0 (each starts a row), which must include its first, since a page the
 * index points at must start a row.
 */
function pageRowsV1(source: ByteSource, header: Header, bodyAt: number, body: number, codec: number, maxLevel: number): number | undefined {
  const v1 = structOf(header, PAGE_V1)
  const values = v1 && intOf(header.bytes, v1.get(V1_VALUES))
  if (!v1 || values === undefined) return undefined
  if (!maxLevel) return values
  if (intOf(header.bytes, v1.get(V1_REPETITION_ENCODING)) !== RLE) return undefined
  // The levels come first: their length in 4 bytes, then the levels. A look at the body's first
  // 4 KiB, then 64 KiB, then all of it: a zstd block must be whole to be decompressed.
  const enough = (out: Uint8Array, length: number): boolean => length >= 4 && length >= 4 + uint32At(out, 0)
  for (const window of [4 << 10, 64 << 10, body]) {
    const whole = window >= body
    const start = decompressedStart(codec, source.read(bodyAt, bodyAt + Math.min(window, body)), whole, enough)
    if (start === undefined) return undefined
    if (enough(start, start.length)) return rowStarts(start.subarray(4, 4 + uint32At(start, 0)), values, 32 - Math.clz32(maxLevel))
    if (whole) return undefined
  }
  return undefined
}

/** The little-endian unsigned 32-bit integer at `at` of `bytes`: the footer's length, a page's levels' length. */
function uint32At(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! * 2 ** 24)
}

/**
 * The start of a page's body, decompressed from `bytes`, the start of its compressed body (all of
 * it where `whole`); undefined for a codec this does not read (LZO, and LZ4 in Hadoop's frames or raw).
 */
function decompressedStart(codec: number, bytes: Uint8Array, whole: boolean, enough: (out: Uint8Array, length: number) => boolean): Uint8Array | undefined {
  try {
    switch (codec) {
      case 0:
        return bytes
      case 1:
        return snappyStart(bytes, enough)
      case 2:
        return unzipSync(bytes, whole ? {} : { finishFlush: constants.Z_SYNC_FLUSH })
      case 4:
        return brotliDecompressSync(bytes, whole ? {} : { finishFlush: constants.BROTLI_OPERATION_FLUSH })
      case 6: {
        // Node 20's zlib has no zstd; fzstd's stream gives each block as soon as its input is there.
        const blocks: Uint8Array[] = []
        new Decompress((block) => blocks.push(block)).push(bytes, whole)
        return Buffer.concat(blocks)
      }
      default:
        return undefined
    }
  } catch {
    return undefined
  }
}

/**
 * What a snappy block decompresses to, as far as `bytes` (its start) reaches, or until it is
 * `enough`: its length varint, then literals and copies of what came before.
 */
function snappyStart(bytes: Uint8Array, enough: (out: Uint8Array, length: number) => boolean): Uint8Array {
  const reader = new ThriftReader(bytes, 0)
  // Never more than the block's first 16 MiB, whatever a corrupt length says.
  const out = new Uint8Array(Math.min(reader.varint(), 16 << 20))
  let o = 0
  let i = reader.at
  while (i < bytes.length && o < out.length && !enough(out, o)) {
    const tag = bytes[i++]!
    let length: number
    let offset: number
    switch (tag & 3) {
      case 0: {
        length = (tag >> 2) + 1
        if (length > 60) {
          const n = length - 60
          if (i + n > bytes.length) return out.subarray(0, o)
          length = 1
          for (let k = 0; k < n; k++) length += bytes[i + k]! * 2 ** (8 * k)
          i += n
        }
        const n = Math.min(length, bytes.length - i, out.length - o)
        out.set(bytes.subarray(i, i + n), o)
        o += n
        i += n
        continue
      }
      case 1:
        if (i >= bytes.length) return out.subarray(0, o)
        length = ((tag >> 2) & 7) + 4
        offset = ((tag >> 5) << 8) | bytes[i++]!
        break
      case 2:
        if (i + 2 > bytes.length) return out.subarray(0, o)
        length = (tag >> 2) + 1
        offset = bytes[i]! | (bytes[i + 1]! << 8)
        i += 2
        break
      default:
        if (i + 4 > bytes.length) return out.subarray(0, o)
        length = (tag >> 2) + 1
        offset = (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16)) + bytes[i + 3]! * 2 ** 24
        i += 4
    }
    if (offset === 0 || offset > o) throw new RangeError('a snappy copy from before the start')
    // A copy may overlap what it writes (a run): byte by byte.
    for (const stop = Math.min(o + length, out.length); o < stop; o++) out[o] = out[o - offset]!
  }
  return out.subarray(0, o)
}

/**
 * How many of the first `count` levels in `levels` (the RLE / bit-packed hybrid, `bitWidth` bits
 * each) are 0; undefined where the first is not, or the levels end early.
 */
function rowStarts(levels: Uint8Array, count: number, bitWidth: number): number | undefined {
  const reader = new ThriftReader(levels, 0)
  const byteWidth = (bitWidth + 7) >> 3
  const mask = (1 << bitWidth) - 1
  let seen = 0
  let zeros = 0
  while (seen < count) {
    if (reader.at >= levels.length) return undefined
    const header = reader.varint()
    const at = reader.at
    if (header % 2) {
      // Bit-packed: groups of 8 values, the first in the lowest bits.
      const n = Math.floor(header / 2) * 8
      reader.at += (n / 8) * bitWidth
      if (reader.at > levels.length) return undefined
      for (let k = 0; k < n && seen < count; k++, seen++) {
        const bit = k * bitWidth
        const value = ((levels[at + (bit >> 3)]! | ((levels[at + (bit >> 3) + 1] ?? 0) << 8)) >> (bit & 7)) & mask
        if (value === 0) zeros++
        else if (seen === 0) return undefined
      }
    } else {
      // A run of one value, in `byteWidth` bytes.
      const n = Math.min(Math.floor(header / 2), count - seen)
      reader.at += byteWidth
      if (reader.at > levels.length) return undefined
      let value = 0
      for (let b = 0; b < byteWidth; b++) value |= levels[at + b]! << (8 * b)
      if (n && value !== 0 && seen === 0) return undefined
      if (value === 0) zeros += n
      seen += n
    }
  }
  return zeros
}

/** The `OffsetIndex` of a chunk's pages. */
function writeOffsetIndex(out: ThriftWriter, pages: PageLocation[]): void {
  out.field(0, 1, LIST)
  out.list(STRUCT, pages.length)
  for (const page of pages) {
    out.field(0, 1, I64)
    out.int(page.offset)
    out.field(1, 2, I32)
    out.int(page.length)
    out.field(2, 3, I64)
    out.int(page.firstRow)
    out.stop()
  }
  out.stop()
}
