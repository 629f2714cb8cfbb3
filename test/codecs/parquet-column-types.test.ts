import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  Binary,
  Bool,
  type Data,
  type DataType,
  DateDay,
  Decimal,
  Dictionary,
  Field,
  FixedSizeBinary,
  Float16,
  Float64,
  Int8,
  Int64,
  LargeList,
  LargeUtf8,
  List,
  makeData,
  Map_,
  Struct,
  tableFromIPC,
  TimeMillisecond,
  TimestampNanosecond,
  Uint16,
  Utf8,
  vectorFromArray,
} from 'apache-arrow'
import { readParquet as readArrow, WriterPropertiesBuilder } from 'parquet-wasm'
import { DataError } from '../../src/errors.ts'
import type { JsonObject, JsonValue } from '../../src/model.ts'
import { decodeInPlace, readingInPlace, readParquet, type Decode } from '../../src/codecs/parquet.ts'
import { arrowParquet, writerParquet } from '../helpers/parquet.ts'
import { fitsColumnType, parseDate, type ColumnType, type ReadOptions } from '../../src/codecs/types.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('evalferry-parquet-types-')
test.after(() => rm(dir, { recursive: true, force: true }))

let fileCount = 0
const arrowFile = (columns: Record<string, Data>): Promise<string> => arrowParquet(join(dir, `a${fileCount++}.parquet`), columns)

const written = (records: JsonObject[], columnTypes: Record<string, ColumnType>): Promise<string> => writerParquet(join(dir, `w${fileCount++}.parquet`), records, { columnTypes })

async function read(path: string, options: Partial<ReadOptions> = {}, sliceBytes?: number): Promise<{ rows: JsonObject[]; options: ReadOptions }> {
  const all: ReadOptions = { file: path, recordKeys: [], header: {}, ...options }
  const rows: JsonObject[] = []
  for await (const r of readParquet(path, all, sliceBytes)) rows.push(r.value as JsonObject)
  return { rows, options: all }
}

async function arrowTypes(path: string): Promise<string[]> {
  return tableFromIPC(readArrow(new Uint8Array(await readFile(path))).intoIPCStream()).schema.fields.map((f) => String(f.type))
}

const v = (type: DataType, values: unknown[]): Data => vectorFromArray(values as never, type).data[0]!

test('the reader gives the type of each column the writer writes back, into the object passed; others are left out', async () => {
  const path = await arrowFile({
    small: v(new Uint16(), [1, null]),
    day: v(new DateDay(), [0, null]),
    stamps: v(new LargeList(new Field('item', new TimestampNanosecond('Europe/Paris'), true)), [[0], null]),
    pair: v(new Struct([new Field('a', new Int8(), true), new Field('b', new Utf8(), true)]), [{ a: 1, b: 'x' }, null]),
    category: v(new Dictionary(new Utf8(), new Int8()), ['x', null]),
    price: makeData({ type: new Decimal(2, 10, 128), length: 2, nullCount: 0, data: new Uint32Array(8) }),
    took: v(new TimeMillisecond(), [1, null]),
    code: v(new FixedSizeBinary(2), [Uint8Array.from([1, 2]), null]),
    // A struct that holds a type the writer cannot write back has no type as a whole.
    timed: v(new Struct([new Field('t', new TimeMillisecond(), true)]), [{ t: 1 }, null]),
    counts: v(new Map_<Utf8, Int8>(new Field('entries', new Struct<{ key: Utf8; value: Int8 }>([new Field('key', new Utf8(), false), new Field('value', new Int8(), true)]), false)), [new Map([['a', 1]]), null]),
  })
  const columnTypes: Record<string, ColumnType> = { stale: 'string' }
  const { options } = await read(path, { columnTypes })
  assert.equal(options.columnTypes, columnTypes)
  assert.deepEqual(columnTypes, {
    small: 'uint16',
    day: 'date32',
    stamps: { list: { timestamp: 3, zone: 'Europe/Paris' }, large: true },
    pair: { struct: { a: 'int8', b: 'string' } },
    category: 'string',
  })
})

test('a JSON-text column evalferry wrote reads as its values, whose type the writer infers: it has no column type', async () => {
  const path = await written([{ obj: { a: [1, 'x'] }, text: 'plain' }], {})
  const { rows, options } = await read(path)
  assert.deepEqual(rows, [{ obj: { a: [1, 'x'] }, text: 'plain' }])
  assert.deepEqual(options.columnTypes, { text: 'string' })
})

test('the writer writes back the types the reader gives: large strings, binary and lists, float16, dates, null columns, nested timestamps', async () => {
  const columnTypes: Record<string, ColumnType> = {
    text: 'large_string',
    blob: 'large_binary',
    half: 'float16',
    day: 'date32',
    instant: 'date64',
    nothing: 'null',
    stamps: { list: { timestamp: 3 }, large: true },
    nulls: { list: 'null' },
    nested: { struct: { n: 'null', d: 'date32' } },
  }
  const records = [
    { text: 'héllo', blob: 'AAH/', half: 0.5, day: '0050-01-01', instant: '2024-02-29', nothing: null, stamps: ['2023-11-14T22:13:20.123456789', null], nulls: [null, null], nested: { n: null, d: '1969-12-31' } },
    { text: null, blob: null, half: -65504, day: null, instant: null, nothing: null, stamps: null, nulls: [], nested: null },
  ]
  const path = await written(records, columnTypes)
  assert.deepEqual(await arrowTypes(path), [
    'LargeUtf8',
    'LargeBinary',
    'Float16',
    'Date32<DAY>',
    // date64 as pyarrow writes it, Parquet's DATE: pyarrow would read Arrow's Date64 as plain integers.
    'Date32<DAY>',
    'Null',
    'LargeList<Timestamp<NANOSECOND>>',
    'List<Null>',
    'Struct<{n:Null, d:Date32<DAY>}>',
  ])
  const { rows, options } = await read(path)
  assert.deepEqual(rows, records)
  assert.deepEqual(options.columnTypes, { ...columnTypes, instant: 'date32' })
})

test('a value a new column type cannot hold is refused naming the column, as any other', async () => {
  for (const [type, value] of [
    ['date32', '2023-02-30'],
    ['date64', '2023-02-28T00:00:00'],
    ['float16', 0.1],
    ['null', 'x'],
    ['large_binary', 'not base64!'],
  ] as [ColumnType, string | number][]) {
    await assert.rejects(written([{ c: value }], { c: type }), (error: Error) => error instanceof DataError && error.code === 'E_FIELD' && /column "c"/.test(error.message))
  }
})

test('dates and half floats fit their column types exactly', () => {
  assert.equal(parseDate('1970-01-02'), 86_400_000)
  // Date.UTC would take year 50 for 1950.
  assert.equal(parseDate('0050-01-01'), Date.parse('0050-01-01T00:00:00Z'))
  assert.equal(parseDate('2024-02-30'), undefined)
  assert.equal(parseDate('2024-2-3'), undefined)
  for (const fits of [0, -0, 1.5, 65504, -65504, 2 ** -14, 2 ** -24, 3 * 2 ** -24, 1 + 2 ** -10, 2048, 2050]) assert.ok(fitsColumnType('float16', fits), String(fits))
  for (const misfits of [0.1, 65505, 2 ** -25, 1 + 2 ** -11, 2049, 'x']) assert.ok(!fitsColumnType('float16', misfits), String(misfits))
  assert.ok(fitsColumnType({ list: 'null', large: true }, [null]))
  assert.ok(!fitsColumnType({ list: 'null', large: true }, [0]))
})

test('batches read in place in parquet-wasm\'s memory give the values Arrow IPC gives, in slices of a row group too; a file with a type arrow-js-ffi does not read goes through IPC', async () => {
  const count = 3000
  const each = <T>(value: (i: number) => T): (T | null)[] => Array.from({ length: count }, (_, i) => (i % 7 === 3 ? null : value(i)))
  // Pages of 1 KB, so that the group can be read in slices (see SLICE_BYTES).
  const pages = new WriterPropertiesBuilder().setDictionaryEnabled(false).setDataPageSizeLimit(1024).setWriteBatchSize(50).build()
  const path = await arrowParquet(join(dir, `a${fileCount++}.parquet`), {
    text: v(new Utf8(), each((i) => `ü ${i} ${'x'.repeat(i % 50)}`)),
    large: v(new LargeUtf8(), each((i) => `large ${i}`)),
    blob: v(new Binary(), each((i) => Uint8Array.from([i & 255, 1, 2]))),
    code: v(new FixedSizeBinary(2), each((i) => Uint8Array.from([i & 255, 9]))),
    flag: v(new Bool(), each((i) => i % 2 === 0)),
    small: v(new Int8(), each((i) => (i % 200) - 100)),
    big: v(new Int64(), each((i) => BigInt(i) * 10_000_000_000n)),
    half: v(new Float16(), each((i) => i / 4)),
    real: v(new Float64(), each((i) => i / 3)),
    day: v(new DateDay(), each((i) => new Date(i * 86_400_000))),
    took: v(new TimeMillisecond(), each((i) => i)),
    tags: v(new List(new Field('item', new Utf8(), true)), each((i) => (i % 5 === 0 ? [] : ['a', `t${i}`, null]))),
    pair: v(new Struct([new Field('a', new Int8(), true), new Field('b', new Utf8(), true)]), each((i) => ({ a: i % 100, b: `b${i}` }))),
    category: v(new Dictionary(new Utf8(), new Int8()), each((i) => ['x', 'y', 'z'][i % 3]!)),
  }, undefined, pages)
  // Slices of a few KB: the row group is read in at least 32 pieces, each from a page's first row.
  for (const sliceBytes of [undefined, 4096]) {
    const before = readingInPlace.batches
    const inPlace = await read(path, {}, sliceBytes)
    assert.ok(readingInPlace.batches - before >= (sliceBytes ? 32 : 1), `${readingInPlace.batches - before} batches read in place`)
    readingInPlace.on = false
    let viaIpc: JsonObject[]
    try {
      viaIpc = (await read(path, {}, sliceBytes)).rows
    } finally {
      readingInPlace.on = true
    }
    assert.equal(inPlace.rows.length, count)
    assert.deepEqual(inPlace.rows, viaIpc)
    assert.deepEqual(inPlace.rows[2998], { text: `ü 2998 ${'x'.repeat(48)}`, large: 'large 2998', blob: 'tgEC', code: 'tgk=', flag: true, small: 98, big: 29_980_000_000_000, half: 749.5, real: 999.3333333333334, day: '1978-03-18', took: 2998, tags: ['a', 't2998', null], pair: { a: 98, b: 'b2998' }, category: 'y' })
    assert.deepEqual(Object.values(inPlace.rows[2999]!), new Array(14).fill(null))
  }
  // Decimals and maps are read through IPC, the file's other columns with them.
  const other = await arrowFile({
    text: v(new Utf8(), ['a', null]),
    price: makeData({ type: new Decimal(2, 10, 128), length: 2, nullCount: 0, data: new Uint32Array(8) }),
    counts: v(new Map_<Utf8, Int8>(new Field('entries', new Struct<{ key: Utf8; value: Int8 }>([new Field('key', new Utf8(), false), new Field('value', new Int8(), true)]), false)), [new Map([['a', 1]]), null]),
  })
  const before = readingInPlace.batches
  const { rows } = await read(other)
  assert.equal(readingInPlace.batches, before)
  assert.deepEqual(rows, [
    { text: 'a', price: '0.00', counts: { a: 1 } },
    { text: null, price: '0.00', counts: null },
  ])
})

test('a batch sliced at an offset, nulls and all, reads in place as it does through IPC', async () => {
  const path = await arrowFile({ text: v(new Utf8(), ['a', null, 'c', 'd', 'e']), n: v(new Int8(), [1, null, 3, 4, 5]), tags: v(new List(new Field('item', new Utf8(), true)), [['x'], null, [], ['y', null], ['z']]) })
  const table = readArrow(new Uint8Array(await readFile(path)))
  const decode: Decode = (batch) => [0, 1, 2].map((c) => [...batch.getChildAt(c)!].map((x) => (x === null ? null : typeof x === 'object' ? [...(x as Iterable<unknown>)] : x)) as JsonValue[])
  for (const [offset, length] of [[1, 2], [2, 3], [3, 1]] as const) {
    const viaIpc = decode(tableFromIPC(table.recordBatch(0)!.slice(offset, length).intoIPCStream()))
    assert.deepEqual(decodeInPlace(table.recordBatch(0)!.slice(offset, length), decode), viaIpc)
    assert.equal(viaIpc[0]!.length, length)
  }
  assert.deepEqual(decodeInPlace(table.recordBatch(0)!.slice(1, 2), decode), [[null, 'c'], [null, 3], [null, []]])
})
