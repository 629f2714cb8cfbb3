import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { withOffsetIndex, type ByteSource } from '../../src/codecs/parquet-index.ts'
import { readParquet } from '../../src/codecs/parquet.ts'
import { ParquetFile } from 'parquet-wasm'
import { parquetMetadata } from 'hyparquet'
import { ThriftReader, intOf, listOf, structAt } from '../../src/codecs/thrift.ts'
import type { ReadOptions, SourceRecord } from '../../src/codecs/types.ts'
import { tempDir } from '../helpers/temp.ts'

// Written by pyarrow (make.py beside them): each file as pyarrow writes it by default, with no
// offset index, and its twin written with one.
const fixtures = join(import.meta.dirname, '../fixtures/parquet-index')
const dir = tempDir('evalferry-parquet-index-')
test.after(() => rm(dir, { recursive: true, force: true }))

function sourceOf(bytes: Uint8Array): ByteSource {
  return { size: bytes.length, read: (start, end) => bytes.subarray(start, end) }
}

/** The file with the index made for it, or undefined where none was made (it is read as it is). */
function madeFor(source: ByteSource, sliceBytes = 0): ByteSource | undefined {
  const { source: made } = withOffsetIndex(source, sliceBytes)
  return made === source ? undefined : made
}

function fixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(fixtures, name)))
}

interface Location {
  offset: number
  length: number
  firstRow: number
}

/** The offset index the footer names for each row group's column chunks (undefined for a chunk without one). */
function offsetIndexes(source: ByteSource): (Location[] | undefined)[][] {
  const tail = source.read(source.size - 8, source.size)
  const length = Buffer.from(tail).readUInt32LE(0)
  const footer = source.read(source.size - 8 - length, source.size - 8)
  const groups = listOf(footer, structAt(footer, 0).get(4))!
  return groups.items.map((at) => {
    const columns = listOf(footer, structAt(footer, at).get(1))!
    return columns.items.map((c) => {
      const chunk = structAt(footer, c)
      const offset = intOf(footer, chunk.get(4))
      const size = intOf(footer, chunk.get(5))
      if (offset === undefined || size === undefined) return undefined
      const index = source.read(offset, offset + size)
      const reader = new ThriftReader(index, 0)
      assert.equal(reader.fields().at(-1)!.to <= size, true)
      const pages = listOf(index, structAt(index, 0).get(1))!
      return pages.items.map((p) => {
        const page = structAt(index, p)
        return { offset: intOf(index, page.get(1))!, length: intOf(index, page.get(2))!, firstRow: intOf(index, page.get(3))! }
      })
    })
  })
}

function readOptions(file: string): ReadOptions {
  return { file, recordKeys: [], header: {}, columns: [], schemaMetadata: {} }
}

async function readAll(path: string, sliceBytes?: number): Promise<SourceRecord[]> {
  const records: SourceRecord[] = []
  for await (const record of readParquet(path, readOptions(path), sliceBytes)) records.push(record)
  return records
}

const twins = ['snappy', 'gzip', 'brotli', 'zstd', 'none', 'snappy-v2', 'groups', 'big-pages.snappy', 'big-pages.gzip', 'big-pages.brotli', 'big-pages.zstd']

for (const name of twins) {
  test(`${name}: the offset index made from the pages is the one pyarrow writes`, () => {
    const made = madeFor(sourceOf(fixture(`${name}.parquet`)))
    assert.ok(made, 'an index is made')
    const ours = offsetIndexes(made)
    const theirs = offsetIndexes(sourceOf(fixture(`${name}.indexed.parquet`)))
    assert.equal(ours.length, theirs.length)
    assert.ok(ours.flat().every((pages) => pages && pages.length > 0))
    assert.ok(ours.flat().some((pages) => pages!.length > 1), 'chunks of several pages')
    // The rows each page starts at. (The twin's pages are elsewhere: with an index, pyarrow puts
    // no statistics in the page headers.)
    const firstRows = (indexes: (Location[] | undefined)[][]) => indexes.map((chunks) => chunks.map((pages) => pages?.map((p) => p.firstRow)))
    assert.deepEqual(firstRows(ours), firstRows(theirs))
    // Each chunk's pages, one after the other, end where the chunk ends.
    const bytes = fixture(`${name}.parquet`)
    for (const pages of ours.flat()) {
      for (let i = 1; i < pages!.length; i++) assert.equal(pages![i]!.offset, pages![i - 1]!.offset + pages![i - 1]!.length)
      const last = pages!.at(-1)!
      const header = new ThriftReader(bytes, last.offset)
      const size = intOf(bytes, header.fields().find((f) => f.id === 3))!
      assert.equal(header.at - last.offset + size, last.length)
    }
    // The file's pages are where they were: only its footer was replaced.
    const footerStart = bytes.length - 8 - Buffer.from(bytes.subarray(-8)).readUInt32LE(0)
    assert.deepEqual(made.read(0, footerStart), bytes.subarray(0, footerStart))
  })
}

test('read in slices through the index made, every record comes as read whole, and as from the file pyarrow indexed', async () => {
  for (const name of ['snappy', 'snappy-v2', 'groups', 'big-pages.gzip', 'big-pages.zstd']) {
    const whole = await readAll(join(fixtures, `${name}.parquet`), 2 ** 40)
    const sliced = await readAll(join(fixtures, `${name}.parquet`), 1)
    const indexed = await readAll(join(fixtures, `${name}.indexed.parquet`), 1)
    assert.ok(whole.length >= 600)
    assert.deepEqual(sliced, whole, name)
    assert.deepEqual(indexed, whole, name)
  }
  const [first] = await readAll(join(fixtures, 'snappy.parquet'), 1)
  assert.deepEqual(first!.value, {
    id: 'case-0000',
    question: 'Question 0: what is 0 × 0? “”',
    contexts: [],
    nested: [],
    meta: { source: 'doc-0', pages: [] },
    score: 0,
  })
})

test("levels longer than a first look at a page's body are read from all of it", async () => {
  for (const codec of ['snappy', 'zstd']) {
    const name = `long-levels.${codec}.parquet`
    const bytes = fixture(name)
    const reads: number[] = []
    const made = madeFor({ size: bytes.length, read: (start, end) => (reads.push(end - start), bytes.subarray(start, end)) })
    assert.ok(made, codec)
    const [pages] = offsetIndexes(made)[0]!
    assert.deepEqual(
      pages!.map((p) => p.firstRow),
      [0, 20_000, 40_000],
    )
    // Each page: its header, its body's first 4 KiB, then all of it.
    assert.deepEqual(
      reads.slice(-3 * 3).map((n, i) => (i % 3 === 2 ? n > 4096 : n)),
      [256, 4096, true, 256, 4096, true, 256, 4096, true],
    )
    const path = join(fixtures, name)
    const sliced = await readAll(path, 1)
    assert.equal(sliced.length, 60_000)
    assert.deepEqual(sliced, await readAll(path, 2 ** 40))
  }
})

test('a page whose size runs past its column chunk gets no index, and its body is never read', () => {
  const bytes = fixture('none.parquet')
  // A chunk's last page whose size takes two bytes.
  const size = offsetIndexes(madeFor(sourceOf(bytes))!)[0]!
    .map((pages) => new ThriftReader(bytes, pages!.at(-1)!.offset).fields().find((f) => f.id === 3)!)
    .find((f) => f.to - f.from === 2)!
  assert.ok(size)
  const changed = bytes.slice()
  // 8191, the largest size two bytes hold: past the chunk's end.
  changed.set([0xfe, 0x7f], size.from)
  const reads: number[] = []
  assert.equal(madeFor({ size: changed.length, read: (start, end) => (reads.push(end - start), changed.subarray(start, end)) }), undefined)
  assert.ok(Math.max(...reads) < 8191, `reads of ${Math.max(...reads)} bytes`)
})

test('no index is made for a file that has one, whose groups are read whole, or whose pages are not read here', () => {
  assert.equal(madeFor(sourceOf(fixture('snappy.indexed.parquet'))), undefined, 'it has one')
  assert.equal(madeFor(sourceOf(fixture('snappy.parquet')), 1 << 30), undefined, 'its one group is read whole')
  assert.equal(madeFor(sourceOf(fixture('lz4.parquet'))), undefined, "LZ4's repeated pages are not decompressed here")
  const bytes = fixture('snappy.parquet')
  assert.equal(madeFor(sourceOf(bytes.subarray(0, bytes.length - 100))), undefined, 'a cut file')
  assert.equal(madeFor(sourceOf(new Uint8Array(64))), undefined, 'not Parquet')
  const garbled = bytes.slice()
  garbled.fill(0xff, garbled.length - 400, garbled.length - 8)
  assert.equal(madeFor(sourceOf(garbled)), undefined, 'a garbled footer')
})

test("a repeated column's page that starts inside a row gets no index: the reader would start a row there", () => {
  const bytes = fixture('none.parquet')
  const pages = offsetIndexes(madeFor(sourceOf(bytes))!)[0]![2]!
  assert.ok(pages.length > 1)
  // The contexts column's second page: its header, then (uncompressed) its repetition levels' length and levels.
  const page = pages[1]!
  const reader = new ThriftReader(bytes, page.offset)
  reader.fields()
  const levels = reader.at + 4
  const run = new ThriftReader(bytes, levels)
  const header = run.varint()
  const changed = bytes.slice()
  // The first level set to 1: in a run, its value; bit-packed, the first value's lowest bit.
  if (header % 2) changed[run.at]! |= 1
  else changed[run.at] = 1
  assert.equal(madeFor(sourceOf(changed)), undefined)
  assert.ok(madeFor(sourceOf(bytes)), 'the file as pyarrow wrote it gets one')
})

test("a large row group's slices start where its largest column chunk's pages start, and are no more than its pages", async () => {
  let sliced = 0
  let wholes = 0
  // Without an index, with one pyarrow wrote, in three groups, and with pages larger than the first look at them.
  for (const name of ['snappy', 'snappy.indexed', 'groups', 'big-pages.zstd']) {
    const bytes = fixture(`${name}.parquet`)
    const { source, pageStarts } = withOffsetIndex(sourceOf(bytes), 0)
    const indexes = offsetIndexes(source)
    const { row_groups: groups } = parquetMetadata(bytes)
    assert.equal(pageStarts.length, groups.length)
    for (const [g, group] of groups.entries()) {
      const sizes = group.columns.map((c) => Number(c.meta_data!.total_uncompressed_size))
      const largest = indexes[g]![sizes.indexOf(Math.max(...sizes))]!
      assert.deepEqual(pageStarts[g], largest.map((page) => page.firstRow), `${name}, group ${g}`)
    }
    // Slices of one byte: no more than the largest chunk's pages, each starting at one.
    const streamed: { rowGroups?: number[]; offset?: number; limit?: number }[] = []
    const original = ParquetFile.prototype.stream
    ParquetFile.prototype.stream = function (this: ParquetFile, options) {
      streamed.push({ rowGroups: options?.rowGroups, offset: options?.offset, limit: options?.limit })
      return original.call(this, options)
    }
    let records: SourceRecord[]
    try {
      records = await readAll(join(fixtures, `${name}.parquet`), 1)
    } finally {
      ParquetFile.prototype.stream = original
    }
    assert.deepEqual(records, await readAll(join(fixtures, `${name}.parquet`), 2 ** 40))
    for (const [g, group] of groups.entries()) {
      const slices = streamed.filter((s) => s.rowGroups?.[0] === g)
      const offsets = slices.map((s) => s.offset)
      if (pageStarts[g]!.length === 1) {
        // One page (as DuckDB writes a column): each slice would decode it whole, so the group is read once.
        assert.deepEqual(offsets, [undefined], `${name}, group ${g}`)
        wholes++
        continue
      }
      assert.ok(offsets.length >= 2 && offsets.length <= pageStarts[g]!.length, `${name}, group ${g}: ${offsets.length} slices`)
      assert.ok(offsets.every((offset) => pageStarts[g]!.includes(offset!)), `${name}, group ${g}: ${offsets}`)
      sliced++
      assert.equal(slices.reduce((rows, s) => rows + s.limit!, 0), Number(group.num_rows))
    }
  }
  assert.ok(sliced >= 4 && wholes >= 1, `${sliced} groups sliced, ${wholes} read whole`)
})

test('a group whose pages cannot be told is read in slices of five times the size, evenly', async () => {
  const bytes = fixture('lz4.parquet')
  assert.deepEqual(withOffsetIndex(sourceOf(bytes), 0).pageStarts, [])
  const { row_groups: groups } = parquetMetadata(bytes)
  const size = Number(groups[0]!.total_byte_size)
  const streamed: { offset?: number; limit?: number }[] = []
  const original = ParquetFile.prototype.stream
  ParquetFile.prototype.stream = function (this: ParquetFile, options) {
    streamed.push({ offset: options?.offset, limit: options?.limit })
    return original.call(this, options)
  }
  try {
    // Slices of a quarter of the group, five times as large: one piece. Of an eighth: two.
    await readAll(join(fixtures, 'lz4.parquet'), Math.ceil(size / 4))
    assert.deepEqual(streamed, [{ offset: undefined, limit: undefined }])
    streamed.length = 0
    await readAll(join(fixtures, 'lz4.parquet'), Math.ceil(size / 8))
    assert.deepEqual(streamed, [
      { offset: 0, limit: 300 },
      { offset: 300, limit: 300 },
    ])
  } finally {
    ParquetFile.prototype.stream = original
  }
})
