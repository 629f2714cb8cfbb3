import { test } from 'node:test'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import assert from 'node:assert/strict'
import { appendFile, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { openAsBlob, readdirSync } from 'node:fs'
import fc from 'fast-check'
import { join } from 'node:path'
import {
  Binary,
  type Data,
  DateDay,
  type FixedSizeList,
  Field,
  Float16,
  Float64,
  Int32,
  Int64,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableFromIPC,
  tableToIPC,
  type Timestamp,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Utf8,
  vectorFromArray,
} from 'apache-arrow'
import { ParquetFile, readParquet as readWasm, Table as WasmTable, writeParquet, WriterPropertiesBuilder } from 'parquet-wasm'
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet'
import { DataError, EvalferryError, UsageError } from '../../src/errors.ts'
import type { JsonObject, JsonValue } from '../../src/model.ts'
import { openRanges, parquetWriter, readParquet, splitParquet, type ParquetWriteOptions } from '../../src/codecs/parquet.ts'
import { writerParquet } from '../helpers/parquet.ts'
import type { ColumnType, ReadOptions, Sink, SourceRecord } from '../../src/codecs/types.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('evalferry-parquet-')
test.after(() => rm(dir, { recursive: true, force: true }))

let fileCount = 0
function writeRecords(
  records: JsonObject[],
  layout: { columns?: string[]; schemaMetadata?: Record<string, string>; columnTypes?: Record<string, ColumnType> } = {},
  options: ParquetWriteOptions = {},
): Promise<string> {
  return writerParquet(join(dir, `f${fileCount++}.parquet`), records, layout, options)
}

function readOptions(file: string): ReadOptions {
  return { file, recordKeys: [], header: {}, columns: [], schemaMetadata: {} }
}

async function readAll(path: string, options = readOptions(path)): Promise<SourceRecord[]> {
  const out: SourceRecord[] = []
  for await (const r of readParquet(path, options)) out.push(r)
  return out
}

const HF = JSON.stringify({ info: { features: { question: { dtype: 'string', _type: 'Value' }, answer: { dtype: 'int64', _type: 'Value' } } } })

const records: JsonObject[] = [
  { question: 'What is 2+2?', answer: 4, score: 0.5, ok: true, tags: ['math', 'easy'], meta: { source: 'gsm8k', n: [1, 2] }, note: null },
  { question: 'Ünïcödé ✓ and "quotes"\nnewline', answer: -9007199254740991, score: 3, ok: false, tags: [], meta: 'a string among objects', note: null },
  { question: '', answer: null, score: null, ok: null, tags: null, meta: null, note: null },
]

test('records written and read back are equal, with columns, metadata and indexes', async () => {
  const path = await writeRecords(records, { schemaMetadata: { huggingface: HF } })
  const options = readOptions(path)
  const read = await readAll(path, options)
  assert.deepEqual(
    read.map((r) => r.value),
    records,
  )
  assert.deepEqual(
    read.map((r) => r.index),
    [0, 1, 2],
  )
  assert.equal(read[0]!.line, undefined)
  assert.deepEqual(options.columns, ['question', 'answer', 'score', 'ok', 'tags', 'meta', 'note'])
  assert.deepEqual(options.schemaMetadata, { huggingface: HF })
})

test('lists name their items `element`, as pyarrow and `datasets` write them, in the Parquet schema and in the Arrow schema it carries', async () => {
  const path = await writeRecords([{ tags: ['a', 'b'], scores: [1, 2], chats: [{ role: 'user', content: 'hi' }] }], {
    columnTypes: { scores: { list: 'int64' }, chats: { list: { struct: { role: 'string', content: 'string' } } } },
  })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  const names = metadata.schema.slice(1).map((s) => s.name)
  assert.deepEqual(names, ['tags', 'list', 'element', 'scores', 'list', 'element', 'chats', 'list', 'element', 'role', 'content'])
  const arrow = tableFromIPC(readWasm(await readFile(path)).intoIPCStream()).schema
  assert.deepEqual(arrow.fields.map((f) => f.type.children[0]?.name), ['element', 'element', 'element'])
})

test('columns and metadata are known before the first record', async () => {
  const path = await writeRecords(records, { schemaMetadata: { huggingface: HF } })
  const options = readOptions(path)
  for await (const _ of readParquet(path, options)) {
    assert.equal(options.columns?.length, 7)
    assert.equal(options.schemaMetadata?.huggingface, HF)
    break
  }
})

test('an independent reader (hyparquet) sees the same rows, types and the huggingface key-value metadata', async () => {
  const path = await writeRecords(records, { schemaMetadata: { huggingface: HF } }, { compression: 'snappy' })
  const file = await asyncBufferFromFile(path)
  const metadata = await parquetMetadataAsync(file)
  const kv = Object.fromEntries((metadata.key_value_metadata ?? []).map((e) => [e.key, e.value]))
  assert.equal(kv.huggingface, HF)
  assert.ok(kv['ARROW:schema'], 'the Arrow schema travels for pyarrow')
  const types = Object.fromEntries(metadata.schema.slice(1).filter((s) => s.name !== 'list' && s.name !== 'element').map((s) => [s.name, s.converted_type ?? s.type]))
  assert.equal(types.question, 'UTF8')
  assert.equal(types.answer, 'INT64')
  assert.equal(types.score, 'DOUBLE')
  assert.equal(types.ok, 'BOOLEAN')
  assert.equal(types.meta, 'UTF8')
  const rows = await parquetReadObjects({ file })
  assert.equal(rows.length, 3)
  assert.equal(rows[0]!.question, 'What is 2+2?')
  assert.equal(rows[1]!.question, records[1]!.question)
  assert.equal(rows[0]!.answer, 4n)
  assert.equal(rows[1]!.answer, -9007199254740991n)
  assert.equal(rows[2]!.answer, null)
  assert.equal(rows[1]!.score, 3)
  assert.deepEqual(rows[0]!.tags, ['math', 'easy'])
  assert.deepEqual(rows[1]!.tags, [])
  // Mixed columns are JSON text to every other reader.
  assert.equal(rows[0]!.meta, JSON.stringify(records[0]!.meta))
  assert.equal(rows[1]!.meta, JSON.stringify('a string among objects'))
})

test('more records than a batch become several row groups, read back in order', async () => {
  const many: JsonObject[] = Array.from({ length: 2500 }, (_, i) => ({ id: `case-${i}`, n: i, text: 'x'.repeat(i % 50) }))
  const path = await writeRecords(many, {}, { batchRows: 1000, compression: 'snappy' })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  assert.deepEqual(
    metadata.row_groups.map((g) => Number(g.num_rows)),
    [1000, 1000, 500],
  )
  const read = await readAll(path)
  assert.equal(read.length, 2500)
  assert.deepEqual(read.map((r) => r.value), many)
  assert.deepEqual(read.map((r) => r.index), many.map((_, i) => i))
})

test('rows of long text close their row groups at the byte limit, not at the row count', async () => {
  // Text that compresses little, so that the encoded row group is about as large as the rows.
  const long: JsonObject[] = Array.from({ length: 100 }, (_, i) => ({ n: i, text: randomBytes(10_000).toString('base64') }))
  const limit = 200_000
  const path = await writeRecords(long, {}, { batchRows: 1000, batchBytes: limit, compression: 'zstd' })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  const groups = metadata.row_groups.map((g) => ({
    rows: Number(g.num_rows),
    bytes: g.columns.reduce((sum, c) => sum + Number(c.meta_data!.total_compressed_size), 0),
  }))
  // About 1.3 MB in all: a single group of 100 rows held all of it in the writer's memory at once.
  assert.ok(groups.length >= 5, `row groups ${JSON.stringify(groups)}`)
  for (const group of groups) assert.ok(group.bytes <= 2 * limit, `a row group of ${group.bytes} bytes: ${JSON.stringify(groups)}`)
  assert.equal(groups.reduce((sum, g) => sum + g.rows, 0), 100)
  assert.deepEqual((await readAll(path)).map((r) => r.value), long)
})

test('rows of about 100 KB are read in batches of about 1 MB: in order, and a record range across batches exactly', async () => {
  const long: JsonObject[] = Array.from({ length: 60 }, (_, i) => ({ n: i, text: `${i} ${randomBytes(50_000).toString('hex')}` }))
  // One row group of 6 MB: parquet-wasm hands it over in batches of about 10 rows.
  const path = await writeRecords(long, {}, { batchRows: 1000, compression: 'none' })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  assert.deepEqual(metadata.row_groups.map((g) => Number(g.num_rows)), [60])
  const read = await readAll(path)
  assert.deepEqual(read.map((r) => r.value), long)
  const range = await readAll(path, { ...readOptions(path), recordRange: [7, 43] })
  assert.deepEqual(range.map((r) => r.index), Array.from({ length: 36 }, (_, i) => 7 + i))
  assert.deepEqual(range.map((r) => r.value), long.slice(7, 43))
})

test('a large row group is read in slices of its rows: the same records and indexes, whole and in a record range', async () => {
  const mixed: JsonObject[] = Array.from({ length: 2500 }, (_, i) => ({
    id: `case-${i}`,
    n: i % 7 === 0 ? null : i,
    text: `${i} ${'ü'.repeat(i % 40)}`,
    tags: i % 5 === 0 ? null : Array.from({ length: i % 4 }, (_, k) => `t${k}`),
    meta: { page: i, spans: [i, i + 1] },
  }))
  // Written again in pages of about 2 KB, so that each group can be read in slices (see SLICE_BYTES).
  const written = await readFile(await writeRecords(mixed, {}, { batchRows: 1000, compression: 'snappy' }))
  const pages = new WriterPropertiesBuilder().setDictionaryEnabled(false).setDataPageSizeLimit(2048).setWriteBatchSize(50).setMaxRowGroupSize(1000).build()
  const path = join(dir, 'pages.parquet')
  await writeFile(path, writeParquet(readWasm(written), pages))
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  assert.deepEqual(metadata.row_groups.map((g) => Number(g.num_rows)), [1000, 1000, 500])
  const sizes = metadata.row_groups.map((g) => Number(g.total_byte_size))
  // Slices of a third of the largest group: each full group is read in two or three, cut where pages start.
  const sliceBytes = Math.ceil(Math.max(...sizes) / 3)
  const streamed: { rowGroups?: number[]; offset?: number; limit?: number }[] = []
  const original = ParquetFile.prototype.stream
  ParquetFile.prototype.stream = function (this: ParquetFile, options) {
    streamed.push({ rowGroups: options?.rowGroups, offset: options?.offset, limit: options?.limit })
    return original.call(this, options)
  }
  try {
    const read: SourceRecord[] = []
    for await (const r of readParquet(path, readOptions(path), sliceBytes)) read.push(r)
    assert.deepEqual(read.map((r) => r.value), mixed)
    assert.deepEqual(read.map((r) => r.index), mixed.map((_, i) => i))
    // Every group in slices that cover its rows once, in order.
    for (const [g, group] of metadata.row_groups.entries()) {
      const slices = streamed.filter((s) => s.rowGroups?.length === 1 && s.rowGroups[0] === g)
      assert.ok(slices.length >= 2, `group ${g} is read in slices`)
      assert.equal(slices.reduce((sum, s) => (assert.equal(s.offset, sum), sum + s.limit!), 0), Number(group.num_rows))
    }

    streamed.length = 0
    const range: SourceRecord[] = []
    for await (const r of readParquet(path, { ...readOptions(path), recordRange: [410, 1620] }, sliceBytes)) range.push(r)
    assert.deepEqual(range.map((r) => r.index), Array.from({ length: 1210 }, (_, i) => 410 + i))
    assert.deepEqual(range.map((r) => r.value), mixed.slice(410, 1620))
    // Only the slices that hold the range are read: none of the last group.
    assert.ok(streamed.every((s) => s.rowGroups?.[0] !== 2))
    assert.ok(streamed.every((s) => s.offset! + s.limit! > (s.rowGroups![0] === 0 ? 410 : 0)))
  } finally {
    ParquetFile.prototype.stream = original
  }
})

test('the writer emits bytes as row groups complete, not only at the end', async () => {
  const sizes: number[] = []
  const sink: Sink = {
    async write(chunk) {
      sizes.push(chunk.length)
    },
  }
  const writer = parquetWriter(sink, {}, { batchRows: 100 })
  // Random text does not compress, so each row group is large enough to leave the writer's buffer.
  for (let i = 0; i < 1000; i++) await writer.write({ id: `r${i}`, text: randomBytes(600).toString('base64') })
  assert.ok(sizes.length >= 5, `expected output before end(), got ${sizes.length} chunks`)
  await writer.end()
})

for (const compression of ['zstd', 'snappy', 'none'] as const) {
  test(`reads a ${compression}-compressed file`, async () => {
    const many: JsonObject[] = Array.from({ length: 300 }, (_, i) => ({ q: `question ${i} `.repeat(5), a: i % 7 === 0 ? null : `answer ${i}` }))
    const path = await writeRecords(many, {}, { compression, batchRows: 128 })
    const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
    const codec = { zstd: 'ZSTD', snappy: 'SNAPPY', none: 'UNCOMPRESSED' }[compression]
    assert.equal(metadata.row_groups[0]!.columns[0]!.meta_data?.codec, codec)
    assert.deepEqual((await readAll(path)).map((r) => r.value), many)
  })
}

test('written snappy by default; a column of mostly distinct texts has no dictionary, a column of few values keeps one', async () => {
  const records: JsonObject[] = Array.from({ length: 200 }, (_, i) => ({ question: `question ${i}: ${'why '.repeat(i % 9)}?`, split: i % 3 ? 'train' : 'test', score: i / 4, tags: [`t${i}`, 'x'] }))
  const path = await writeRecords(records)
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  const chunks = new Map(metadata.row_groups[0]!.columns.map((c) => [c.meta_data!.path_in_schema.join('.'), c.meta_data!]))
  assert.deepEqual([...new Set([...chunks.values()].map((c) => c.codec))], ['SNAPPY'])
  assert.equal(chunks.get('question')!.dictionary_page_offset, undefined)
  assert.ok(!chunks.get('question')!.encodings.includes('RLE_DICTIONARY'))
  assert.ok(chunks.get('split')!.encodings.includes('RLE_DICTIONARY'))
  assert.deepEqual((await readAll(path)).map((r) => r.value), records)
})

test('the layout fixes column order; missing keys are null', async () => {
  const path = await writeRecords([{ b: 'x' }, { a: 'y', b: 'z' }], { columns: ['a', 'b'] })
  const options = readOptions(path)
  assert.deepEqual((await readAll(path, options)).map((r) => r.value), [{ a: null, b: 'x' }, { a: 'y', b: 'z' }])
  assert.deepEqual(options.columns, ['a', 'b'])
})

test('no records: a valid file with the layout columns and no rows', async () => {
  const path = await writeRecords([], { columns: ['input', 'expected_output'], schemaMetadata: { huggingface: HF } })
  const options = readOptions(path)
  assert.deepEqual(await readAll(path, options), [])
  assert.deepEqual(options.columns, ['input', 'expected_output'])
  assert.equal(options.schemaMetadata?.huggingface, HF)
})

test('a value that does not fit its column in a later batch is a field error', async () => {
  const rows: JsonObject[] = [{ n: 1 }, { n: 2 }, { n: 'three' }]
  await assert.rejects(writeRecords(rows, {}, { batchRows: 2 }), (e: unknown) => {
    assert.ok(e instanceof DataError)
    assert.equal(e.code, 'E_FIELD')
    assert.equal(e.location.field, 'n')
    assert.equal(e.location.record, 2)
    return true
  })
  await assert.rejects(writeRecords([{ a: 'x' }, { a: 'y' }, { b: 'z' }], {}, { batchRows: 2 }), /column "b"/)
  // A record refused in a later batch adds none of its values: the records after it are written as they are.
  const chunks: Uint8Array[] = []
  const writer = parquetWriter({ write: async (chunk) => void chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk) }, {}, { batchRows: 2 })
  const good: JsonObject[] = [{ t: 'a', n: 1 }, { t: 'b', n: 2 }, { t: 'c', n: 3 }, { t: 'e', n: 5 }]
  for (const record of good.slice(0, 3)) await writer.write(record)
  await assert.rejects(async () => writer.write({ t: 'd', n: 'four' }), /column "n"/)
  await assert.rejects(async () => writer.write({ t: 'd', n: 4, extra: true }), /column "extra"/)
  await writer.write(good[3]!)
  await writer.end()
  const path = join(dir, 'refused-in-a-batch.parquet')
  await writeFile(path, Buffer.concat(chunks))
  assert.deepEqual((await readAll(path)).map((r) => r.value), good)
})

test('columns gathered a record at a time give every batch its own values: nulls where the batch before had text, lists, JSON and large text past the first buffers', async () => {
  // Batches of 1 500 rows outgrow the first room for 1 024 offsets and 64 KB of text; each batch
  // has its nulls where the batch before had values, and the other way round.
  const rows: JsonObject[] = Array.from({ length: 4000 }, (_, i) => {
    const batch = Math.floor(i / 1500)
    const gap = (i + batch) % 3 === 0
    return {
      text: gap ? null : `row ${i} ✓ ${'ü'.repeat(i % 200)}`,
      big: gap ? `only in gaps ${i}` : null,
      tags: (i + batch) % 4 === 0 ? null : i % 5 === 0 ? [] : [`t${i}`, null, '日本'],
      meta: gap ? { i, nested: [i, null] } : null,
      n: i % 11 === 0 ? null : i,
    }
  })
  const path = await writeRecords(rows, { columnTypes: { big: 'large_string' } }, { batchRows: 1500 })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  assert.deepEqual(
    metadata.row_groups.map((g) => Number(g.num_rows)),
    [1500, 1500, 1000],
  )
  assert.deepEqual((await readAll(path)).map((r) => r.value), rows)
  // Another reader sees the same values (the JSON column as the text it holds, a null list as none).
  const other = (await parquetReadObjects({ file: await asyncBufferFromFile(path) })) as JsonObject[]
  assert.deepEqual(
    other.map((r) => ({ ...r, tags: r.tags ?? null, meta: r.meta === null ? null : JSON.parse(r.meta as string), n: r.n === null ? null : Number(r.n) })),
    rows,
  )
})

test('a file cut short, a file that is not Parquet and an empty file are parse errors naming the file', async () => {
  const good = await writeRecords(Array.from({ length: 500 }, (_, i) => ({ text: `row ${i}`.repeat(20) })))
  const bytes = await readFile(good)
  const cut = join(dir, 'cut.parquet')
  await writeFile(cut, bytes.subarray(0, Math.floor(bytes.length / 2)))
  const text = join(dir, 'text.parquet')
  await writeFile(text, 'id,question\n1,what?\n')
  const empty = join(dir, 'empty.parquet')
  await writeFile(empty, '')
  const lastByteGone = join(dir, 'last-byte-gone.parquet')
  await writeFile(lastByteGone, bytes.subarray(0, bytes.length - 1))
  for (const path of [cut, text, empty, lastByteGone]) {
    await assert.rejects(readAll(path), (e: unknown) => {
      assert.ok(e instanceof DataError, String(e))
      assert.equal(e.code, 'E_PARSE')
      assert.equal(e.location.file, path)
      assert.match(e.message, /^not a Parquet file or cut short: /)
      assert.doesNotMatch(e.message, /\n|at .*\.js/)
      return true
    })
  }
})

/** Spoils the column data of a file's second row group (rows 40 to 79 in groups of 40); the footer stays whole. */
async function spoilSecondGroup(path: string): Promise<void> {
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  const column = metadata.row_groups[1]!.columns[0]!.meta_data!
  const bytes = await readFile(path)
  bytes.fill(0xab, Number(column.data_page_offset), Number(column.data_page_offset) + 24)
  await writeFile(path, bytes)
}

test('a file cut into shards: a row group that cannot be decoded is a parse error naming the file and its first row; more shards than rows are refused before any is written', async () => {
  const rows = Array.from({ length: 120 }, (_, i) => ({ question: `question ${i} ${'x'.repeat(50)}`, answer: `answer ${i}` }))
  const path = await writeRecords(rows, {}, { batchRows: 40, compression: 'snappy' })
  const written: number[] = []
  const sinkFor = (i: number): Sink => ({ write: async () => void written.push(i) })
  assert.deepEqual(await splitParquet(path, 3, sinkFor), [40, 40, 40])

  written.length = 0
  await assert.rejects(splitParquet(path, 121, sinkFor), (e: unknown) => {
    assert.ok(e instanceof UsageError, String(e))
    assert.equal(e.message, `${path} holds 120 rows: it cannot be cut into 121 files that each hold a row`)
    return true
  })
  assert.deepEqual(written, [])

  await spoilSecondGroup(path)
  // Its decoder traps, which the test runner takes for an error of its own: it is cut in a process of its own.
  const script = `
    const { splitParquet } = await import(${JSON.stringify(new URL('../../src/codecs/parquet.ts', import.meta.url).href)})
    try {
      await splitParquet(${JSON.stringify(path)}, 3, () => ({ write: async () => {} }))
    } catch (e) {
      console.log(JSON.stringify({ name: e.name, code: e.code, location: e.location, message: e.message }))
    }
  `
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(run.status, 0, run.stderr)
  assert.deepEqual(JSON.parse(run.stdout), { name: 'DataError', code: 'E_PARSE', location: { file: path, record: 40 }, message: 'corrupt Parquet data: the reader stopped on it' })
})

test('a row group that cannot be decoded, after records taken one at a time, is a parse error naming the file and its first row, and no trap is left heard', async () => {
  const rows = Array.from({ length: 120 }, (_, i) => ({ question: `question ${i} ${'x'.repeat(50)}`, answer: `answer ${i}` }))
  const path = await writeRecords(rows, {}, { batchRows: 40, compression: 'snappy' })
  await spoilSecondGroup(path)
  // Each record is taken with a wait of its own, as a conversion takes them. The decoder's trap
  // would be the test runner's, so the read runs in a process of its own.
  const script = `
    const { readParquet } = await import(${JSON.stringify(new URL('../../src/codecs/parquet.ts', import.meta.url).href)})
    const path = ${JSON.stringify(path)}
    let taken = 0
    try {
      for await (const record of readParquet(path, { file: path, recordKeys: [], header: {}, columns: [], schemaMetadata: {} })) {
        await new Promise((resolve) => setImmediate(resolve))
        taken++
      }
    } catch (e) {
      console.log(JSON.stringify({ taken, name: e.name, code: e.code, location: e.location, message: e.message, listeners: process.listenerCount('uncaughtException') }))
    }
  `
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(run.status, 0, run.stderr)
  assert.deepEqual(JSON.parse(run.stdout), { taken: 40, name: 'DataError', code: 'E_PARSE', location: { file: path, record: 40 }, message: 'corrupt Parquet data: the reader stopped on it', listeners: 0 })
})

test('a batch of more text than a column holds is refused as that, before room is made for its text', async () => {
  // 1400 rows of one text of 2^20 characters: 1.4 Gi UTF-16 units, 2.9 GB of UTF-8, in the 1 MB the one string takes.
  const text = 'é'.repeat(2 ** 20)
  const written: unknown[] = []
  const writer = parquetWriter({ write: async (c) => void written.push(c) }, {}, { batchRows: 2000, batchBytes: 2 ** 40 })
  for (let i = 0; i < 1400; i++) await writer.write({ text })
  await assert.rejects(writer.end(), (e: unknown) => {
    assert.ok(e instanceof DataError, String(e))
    assert.equal(e.message, 'a column holds more than 2 GiB of text in one batch; write smaller batches')
    return true
  })
  assert.deepEqual(written, [])
})

test('a missing file is an I/O error', async () => {
  await assert.rejects(readAll(join(dir, 'nope.parquet')), (e: unknown) => e instanceof Error && (e as DataError).code === 'E_IO')
})

/** The descriptors this process holds open. */
function openFiles(): number {
  return readdirSync('/proc/self/fd').length
}

test('stopping early releases the file', async () => {
  const path = await writeRecords(Array.from({ length: 5000 }, (_, i) => ({ i })), {}, { batchRows: 1000 })
  const before = openFiles()
  let seen = 0
  for await (const _ of readParquet(path, readOptions(path))) if (++seen === 10) break
  assert.equal(seen, 10)
  assert.equal(openFiles(), before, 'its descriptor is closed')
  assert.ok((await stat(path)).size > 0)
})

test("the file's ranges read as a Blob of the file reads them: any slice, from either end, slices of slices", async () => {
  const path = join(dir, 'ranges.bin')
  const bytes = randomBytes(5000)
  await writeFile(path, bytes)
  const ranges = openRanges(path)
  const blob = await openAsBlob(path)
  const offset = fc.integer({ min: -6000, max: 6000 })
  try {
    await fc.assert(
      fc.asyncProperty(fc.option(offset, { nil: undefined }), fc.option(offset, { nil: undefined }), offset, offset, async (from, to, innerFrom, innerTo) => {
        const [ours, theirs] = [ranges.blob.slice(from, to), blob.slice(from, to)]
        assert.equal(ours.size, theirs.size)
        assert.deepEqual(Buffer.from(await ours.arrayBuffer()), Buffer.from(await theirs.arrayBuffer()))
        const [inner, theirInner] = [ours.slice(innerFrom, innerTo), theirs.slice(innerFrom, innerTo)]
        assert.equal(inner.size, theirInner.size)
        assert.deepEqual(Buffer.from(await inner.arrayBuffer()), Buffer.from(await theirInner.arrayBuffer()))
      }),
      { seed: 48, numRuns: 300 },
    )
    assert.equal(ranges.blob.size, 5000)
    assert.equal(ranges.failure(), undefined)
    // Resizable, so its memory is mapped for it alone rather than taken from the C allocator's heap,
    // which would keep what it grew to (see rangeBuffer).
    const range = await ranges.blob.slice(100, 4100).arrayBuffer()
    assert.equal(range.resizable, true)
    assert.equal(range.byteLength, 4000)
    assert.deepEqual(Buffer.from(range), bytes.subarray(100, 4100))
  } finally {
    ranges.close()
  }
  ranges.close()
})

test('a Parquet file that changes while it is read is an I/O error naming it, not a corrupt file, and its descriptor is closed', async () => {
  const path = await writeRecords(Array.from({ length: 2500 }, (_, i) => ({ id: `case-${i}`, text: 'x'.repeat(i % 50) })), {}, { batchRows: 1000, compression: 'snappy' })
  const before = openFiles()
  const read: SourceRecord[] = []
  await assert.rejects(
    (async () => {
      for await (const record of readParquet(path, readOptions(path))) {
        read.push(record)
        // The first row group is read; the file grows before the next is.
        if (read.length === 1) await appendFile(path, 'more')
      }
    })(),
    (e: unknown) => e instanceof EvalferryError && e.code === 'E_IO' && e.location.file === path && /changed while it was read/.test(e.message),
  )
  assert.ok(read.length >= 1 && read.length < 2500, `${read.length} records read before the change was found`)
  assert.equal(openFiles(), before)
})

test('timestamps keep every digit of their unit, and a time zone only when the column has one', async () => {
  // pandas and pyarrow write microsecond and nanosecond timestamps; naive ones carry no zone.
  const stamp = <T extends Timestamp>(type: T, values: bigint[]) =>
    makeData({ type, length: values.length + 1, nullCount: 1, nullBitmap: new Uint8Array([0b011]), data: new BigInt64Array([...values, 0n]) })
  const children = [
    stamp(new TimestampMicrosecond('UTC'), [1_700_000_000_123_456n, -1n]),
    stamp(new TimestampNanosecond(), [1_700_000_000_123_456_789n, 5n]),
    stamp(new TimestampSecond('+02:00'), [1_700_000_000n, -86_401n]),
    stamp(new TimestampMillisecond(), [1_700_000_000_120n, 0n]),
  ]
  const fields = children.map((data, i) => new Field(['us', 'ns', 's', 'ms'][i]!, data.type, true))
  const listType = new List(new Field('item', new TimestampMicrosecond('UTC'), true))
  const used = new Field('used', listType, true)
  const usedValues = stamp(new TimestampMicrosecond('UTC'), [1_700_000_000_000_001n, 1_700_000_000_999_999n])
  const lists = makeData({ type: listType, length: 3, nullCount: 0, valueOffsets: new Int32Array([0, 2, 3, 3]), child: usedValues })
  const schema = new Schema([...fields, used])
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 3, nullCount: 0, children: [...children, lists] }))
  const path = join(dir, 'stamps.parquet')
  await writeFile(path, writeParquet(WasmTable.fromIPCStream(tableToIPC(new Table([batch]), 'stream'))))
  assert.deepEqual((await readAll(path)).map((r) => r.value), [
    { us: '2023-11-14T22:13:20.123456Z', ns: '2023-11-14T22:13:20.123456789', s: '2023-11-14T22:13:20Z', ms: '2023-11-14T22:13:20.120', used: ['2023-11-14T22:13:20.000001Z', '2023-11-14T22:13:20.999999Z'] },
    { us: '1969-12-31T23:59:59.999999Z', ns: '1970-01-01T00:00:00.000000005', s: '1969-12-30T23:59:59Z', ms: '1970-01-01T00:00:00.000', used: [null] },
    { us: null, ns: null, s: null, ms: null, used: [] },
  ])
})

test('timestamps in lists and structs keep every digit too; nested lists and structs read as JSON', async () => {
  const ns = new TimestampNanosecond()
  const stamps = makeData({ type: ns, length: 3, nullCount: 1, nullBitmap: new Uint8Array([0b101]), data: new BigInt64Array([1_700_000_000_123_456_789n, 0n, -1n]) })
  const listType = new List(new Field('item', ns, true))
  const lists = makeData({ type: listType, length: 2, nullCount: 0, valueOffsets: new Int32Array([0, 3, 3]), child: stamps })
  const when = makeData({ type: ns, length: 2, nullCount: 0, data: new BigInt64Array([5n, 1_700_000_000_000_000_001n]) })
  const answers = vectorFromArray(
    [{ text: ['Paris'], start: [7] }, { text: [], start: [] }],
    new Struct([new Field('text', new List(new Field('item', new Utf8(), true)), true), new Field('start', new List(new Field('item', new Int32(), true)), true)]),
  ).data[0]!
  const event = makeData({ type: new Struct([new Field('when', ns, true), new Field('answers', answers.type, true)]), length: 2, nullCount: 1, nullBitmap: new Uint8Array([0b01]), children: [when, answers] })
  const fields = [new Field('times', listType, true), new Field('event', event.type, true)]
  const batch = new RecordBatch(new Schema(fields), makeData({ type: new Struct(fields), length: 2, nullCount: 0, children: [lists, event] }))
  const path = join(dir, 'nested-stamps.parquet')
  await writeFile(path, writeParquet(WasmTable.fromIPCStream(tableToIPC(new Table([batch]), 'stream'))))
  assert.deepEqual((await readAll(path)).map((r) => r.value), [
    {
      times: ['2023-11-14T22:13:20.123456789', null, '1969-12-31T23:59:59.999999999'],
      event: { when: '1970-01-01T00:00:00.000000005', answers: { text: ['Paris'], start: [7] } },
    },
    { times: [], event: null },
  ])
})

test('a column or struct field named __proto__, or a column named twice, is refused naming it: a record cannot hold its values', async () => {
  const text = (values: string[]) => vectorFromArray(values, new Utf8()).data[0]!
  const write = async (name: string, fields: Field[], children: Data[]) => {
    const batch = new RecordBatch(new Schema(fields), makeData({ type: new Struct(fields), length: 1, nullCount: 0, children }))
    const path = join(dir, name)
    await writeFile(path, writeParquet(WasmTable.fromIPCStream(tableToIPC(new Table([batch]), 'stream'))))
    return path
  }
  const proto = await write('proto.parquet', [new Field('question', new Utf8(), true), new Field('__proto__', new Utf8(), true)], [text(['q']), text(['lost'])])
  const inner = makeData({ type: new Struct([new Field('__proto__', new Utf8(), true)]), length: 1, nullCount: 0, children: [text(['lost'])] })
  const nested = await write('proto-nested.parquet', [new Field('meta', inner.type, true)], [inner])
  const twice = await write('twice.parquet', [new Field('a', new Utf8(), true), new Field('a', new Utf8(), true)], [text(['x']), text(['y'])])
  for (const [path, code, field, message] of [
    [proto, 'E_FIELD', '__proto__', /__proto__/],
    [nested, 'E_FIELD', 'meta.__proto__', /__proto__/],
    [twice, 'E_PARSE', 'a', /names the column "a" twice/],
  ] as const) {
    await assert.rejects(readAll(path), (e: DataError) => {
      assert.equal(e.code, code)
      assert.deepEqual(e.location, { file: path, field })
      assert.match(e.message, message)
      return true
    })
  }
})

test('declared column types: each width and nesting is written as named; a value that does not fit is an error naming it', async () => {
  const columnTypes: Record<string, ColumnType> = {
    small: 'int8',
    big: 'uint64',
    ratio: 'float32',
    spans: { list: { struct: { start: 'int32', label: 'string' } } },
    when: { timestamp: 3, zone: 'UTC' },
    xyz: { list: 'float32', size: 3 },
  }
  const rows: JsonObject[] = [
    { small: -128, big: '18446744073709551615', ratio: 0.5, spans: [{ start: 3, label: 'x' }, { start: 9, label: null }], when: '2023-11-14T22:13:20.123456789Z', xyz: [1, 0.5, null] },
    { small: null, big: 7, ratio: null, spans: [], when: null, xyz: null },
  ]
  const path = await writeRecords(rows, { columns: Object.keys(columnTypes), columnTypes })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  const types = Object.fromEntries(
    metadata.schema.slice(1).map((s) => {
      const logical = s.logical_type as { type?: string; bitWidth?: number; isSigned?: boolean } | undefined
      return [s.name, [s.type, logical?.type, logical?.bitWidth, logical?.isSigned]]
    }),
  )
  assert.deepEqual(types.small, ['INT32', 'INTEGER', 8, true])
  assert.deepEqual(types.big, ['INT64', 'INTEGER', 64, false])
  assert.equal(types.ratio![0], 'FLOAT')
  assert.equal(types.start![0], 'INT32')
  assert.deepEqual((await readAll(path)).map((r) => r.value), [{ ...rows[0], big: '18446744073709551615' }, rows[1]])

  assert.deepEqual(types.when, ['INT64', 'TIMESTAMP', undefined, undefined])
  // A list of fixed size keeps its size in the Arrow schema, where pyarrow and datasets read it.
  const arrowSchema = tableFromIPC(Buffer.from(metadata.key_value_metadata!.find((kv) => kv.key === 'ARROW:schema')!.value!, 'base64')).schema
  const xyz = arrowSchema.fields.find((f) => f.name === 'xyz')!.type as FixedSizeList
  assert.equal(String(xyz), 'FixedSizeList[3]<Float32>')
  const bad = [['small', 128], ['ratio', 0.1], ['spans', [{ start: 1, label: 'x', extra: true }]], ['when', '2023-11-14T22:13:20.12Z'], ['when', '2023-11-14T22:13:20.123456789'], ['xyz', [1, 2]]] as const
  for (const [column, value] of bad) {
    await assert.rejects(
      writeRecords([{ [column]: value as JsonValue }], { columns: [column], columnTypes: { [column]: columnTypes[column]! } }),
      (e: DataError) => e.code === 'E_FIELD' && e.location.field === column && e.message.includes(`column "${column}" is `),
    )
  }
})

test('declared timestamps inside lists, fixed-size lists and structs are written from whole units and read back with every digit', async () => {
  const columnTypes: Record<string, ColumnType> = {
    times: { list: { timestamp: 3 } },
    pair: { list: { timestamp: 2, zone: 'UTC' }, size: 2 },
    turns: { list: { struct: { role: 'string', at: { timestamp: 2 } } } },
  }
  const rows: JsonObject[] = [
    {
      times: ['2023-11-14T22:13:20.123456789', null, '1969-12-31T23:59:59.999999999'],
      pair: ['2023-11-14T22:13:20.000001Z', null],
      turns: [{ role: 'user', at: '2023-11-14T22:13:20.123456' }, { role: 'assistant', at: null }],
    },
    { times: null, pair: null, turns: [] },
    { times: [], pair: ['1970-01-01T00:00:00.000000Z', '2262-04-11T23:47:16.854775Z'], turns: null },
  ]
  const path = await writeRecords(rows, { columns: Object.keys(columnTypes), columnTypes })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  const arrowSchema = tableFromIPC(Buffer.from(metadata.key_value_metadata!.find((kv) => kv.key === 'ARROW:schema')!.value!, 'base64')).schema
  assert.deepEqual(arrowSchema.fields.map((f) => String(f.type)), [
    'List<Timestamp<NANOSECOND>>',
    'FixedSizeList[2]<Timestamp<MICROSECOND, UTC>>',
    'List<Struct<{role:Utf8, at:Timestamp<MICROSECOND>}>>',
  ])
  assert.deepEqual((await readAll(path)).map((r) => r.value), rows)
})

test('list items may be null; strings keep their bytes', async () => {
  const rows: JsonObject[] = [
    { tags: ['a', null, 'ü✓'], s: 'x' },
    { tags: null, s: null },
    { tags: [], s: '' },
  ]
  const path = await writeRecords(rows)
  assert.deepEqual((await readAll(path)).map((r) => r.value), rows)
})

test('types other writers use read as JSON values', async () => {
  // A file as pyarrow would write it: nested structs, lists of numbers, dates, timestamps, binary, half floats.
  const fields = [
    new Field('i32', new Int32(), true),
    new Field('big', new Int64(), true),
    new Field('when', new TimestampMillisecond('UTC'), true),
    new Field('day', new DateDay(), true),
    new Field('bytes', new Binary(), true),
    new Field('nums', new List(new Field('item', new Float64(), true)), true),
    new Field('choices', new Struct([new Field('text', new List(new Field('item', new Utf8(), true))), new Field('label', new Utf8())]), true),
    new Field('half', new Float16(), true),
    new Field('halves', new List(new Field('item', new Float16(), true)), true),
  ]
  const columns = [
    vectorFromArray([1, null], fields[0]!.type),
    vectorFromArray([2n ** 60n, 5n], fields[1]!.type),
    vectorFromArray([new Date('2024-05-06T07:08:09.010Z'), null], fields[2]!.type),
    vectorFromArray([new Date('2024-05-06T00:00:00Z'), null], fields[3]!.type),
    vectorFromArray([new Uint8Array([104, 105]), null], fields[4]!.type),
    vectorFromArray([[1.5, null], []], fields[5]!.type),
    vectorFromArray([{ text: ['yes', 'no'], label: 'A' }, null], fields[6]!.type),
    vectorFromArray([1.5, null], fields[7]!.type),
    vectorFromArray([[-2, 0.25], null], fields[8]!.type),
  ]
  const schema = new Schema(fields)
  const batch = new RecordBatch(schema, makeData({ type: new Struct(fields), length: 2, nullCount: 0, children: columns.map((c) => c.data[0]!) }))
  const path = join(dir, 'typed.parquet')
  await writeFile(path, writeParquet(WasmTable.fromIPCStream(tableToIPC(new Table([batch]), 'stream'))))
  assert.deepEqual((await readAll(path)).map((r) => r.value), [
    { i32: 1, big: '1152921504606846976', when: '2024-05-06T07:08:09.010Z', day: '2024-05-06', bytes: 'aGk=', nums: [1.5, null], choices: { text: ['yes', 'no'], label: 'A' }, half: 1.5, halves: [-2, 0.25] },
    { i32: null, big: 5, when: null, day: null, bytes: null, nums: [], choices: null, half: null, halves: null },
  ])
})

test("the Parquet writer's own failure is told, not the closed stream it leaves behind", async () => {
  // A struct of no fields is a schema Parquet cannot hold: parquet-wasm fails, and stops reading the batches.
  await assert.rejects(
    writeRecords([{ empty: {} }], { columns: ['empty'], columnTypes: { empty: { struct: {} } } }),
    (e: Error) => /^writing Parquet failed: .*empty struct/i.test(e.message),
  )
})
