import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { withOffsetIndex, type ByteSource } from '../../src/codecs/parquet-index.ts'
import { readParquet } from '../../src/codecs/parquet.ts'
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
    const made = withOffsetIndex(sourceOf(fixture(`${name}.parquet`)), 0)
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
    const made = withOffsetIndex({ size: bytes.length, read: (start, end) => (reads.push(end - start), bytes.subarray(start, end)) }, 0)
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
  const size = offsetIndexes(withOffsetIndex(sourceOf(bytes), 0)!)[0]!
    .map((pages) => new ThriftReader(bytes, pages!.at(-1)!.offset).fields().find((f) => f.id === 3)!)
    .find((f) => f.to - f.from === 2)!
  assert.ok(size)
  const changed = bytes.slice()
  // 8191, the largest size two bytes hold: past the chunk's end.
  changed.set([0xfe, 0x7f], size.from)
  const reads: number[] = []
  assert.equal(withOffsetIndex({ size: changed.length, read: (start, end) => (reads.push(end - start), changed.subarray(start, end)) }, 0), undefined)
  assert.ok(Math.max(...reads) < 8191, `reads of ${Math.max(...reads)} bytes`)
})

test('no index is made for a file that has one, whose groups are read whole, or whose pages are not read here', () => {
  assert.equal(withOffsetIndex(sourceOf(fixture('snappy.indexed.parquet')), 0), undefined)
  assert.equal(withOffsetIndex(sourceOf(fixture('snappy.parquet')), 1 << 30), undefined, 'its one group is read whole')
  assert.equal(withOffsetIndex(sourceOf(fixture('lz4.parquet')), 0), undefined, "LZ4's repeated pages are not decompressed here")
  const bytes = fixture('snappy.parquet')
  assert.equal(withOffsetIndex(sourceOf(bytes.subarray(0, bytes.length - 100)), 0), undefined, 'a cut file')
  assert.equal(withOffsetIndex(sourceOf(new Uint8Array(64)), 0), undefined, 'not Parquet')
  const garbled = bytes.slice()
  garbled.fill(0xff, garbled.length - 400, garbled.length - 8)
  assert.equal(withOffsetIndex(sourceOf(garbled), 0), undefined, 'a garbled footer')
})

test("a repeated column's page that starts inside a row gets no index: the reader would start a row there", () => {
  const bytes = fixture('none.parquet')
  const pages = offsetIndexes(withOffsetIndex(sourceOf(bytes), 0)!)[0]![2]!
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
  assert.equal(withOffsetIndex(sourceOf(changed), 0), undefined)
  assert.ok(withOffsetIndex(sourceOf(bytes), 0), 'the file as pyarrow wrote it gets one')
})
