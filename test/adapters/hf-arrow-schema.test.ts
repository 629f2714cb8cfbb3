import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  Binary,
  Bool,
  type Data,
  type DataType,
  DateDay,
  DateMillisecond,
  Decimal,
  Dictionary,
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
  Struct,
  tableFromIPC,
  TimeMillisecond,
  TimestampMicrosecond,
  TimestampMillisecond,
  Type,
  Uint64,
  Utf8,
  Vector,
  vectorFromArray,
} from 'apache-arrow'
import { readParquet } from 'parquet-wasm'
import { readRecords } from '../../src/codecs/index.ts'
import { convert, read, write } from '../../src/index.ts'
import { arrowParquet } from '../helpers/parquet.ts'
import type { EvalCase, JsonObject } from '../../src/model.ts'
import { tempDir } from '../helpers/temp.ts'

const work = tempDir('evalferry-hf-arrow-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

/** A Parquet file as pyarrow or pandas writes one: these columns, one row group, no `huggingface` metadata. */
function plainParquet(name: string, columns: Record<string, Data>): Promise<string> {
  return arrowParquet(join(work, name), columns)
}

const column = (type: DataType, values: unknown[]): Data => vectorFromArray(values as never, type).data[0]!

/** Timestamps from their stored integers (Arrow JS's builder takes float milliseconds); a null where `valid` says so. */
function timestamps(type: TimestampMillisecond | TimestampMicrosecond, units: bigint[], valid: boolean[]): Data {
  const nullBitmap = new Uint8Array(8)
  valid.forEach((v, i) => v && (nullBitmap[i >> 3]! |= 1 << (i & 7)))
  return makeData({ type, length: units.length, nullCount: valid.filter((v) => !v).length, nullBitmap, data: BigInt64Array.from(units) })
}

/** An Arrow cell as plain data: bytes as a list of numbers, lists as arrays, structs as objects. */
function plain(value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (value instanceof Uint8Array) return [...value]
  if (value instanceof Vector) return [...value].map(plain)
  if (typeof value === 'object') return Object.fromEntries(Object.entries((value as { toJSON(): object }).toJSON()).map(([k, v]) => [k, plain(v)]))
  return value
}

/**
 * A Parquet file read by parquet-wasm alone: each column's Arrow type and cells (timestamps and
 * dates as the integers stored), the features of its `huggingface` metadata, and its rows as
 * evalferry's reader gives them.
 */
async function parquetOf(path: string): Promise<{ types: Record<string, string>; cells: Record<string, unknown[]>; features: unknown; rows: JsonObject[] }> {
  const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(path))).intoIPCStream())
  const types: Record<string, string> = {}
  const cells: Record<string, unknown[]> = {}
  for (const field of table.schema.fields) {
    const vector = table.getChild(field.name)!
    types[field.name] = String(field.type)
    const raw = field.type.typeId === Type.Timestamp || field.type.typeId === Type.Date
    const out: unknown[] = []
    let row = 0
    for (const data of vector.data) {
      for (let i = 0; i < data.length; i++, row++) out.push(!vector.isValid(row) ? null : raw ? (data.values as BigInt64Array | Int32Array)[i] : plain(vector.get(row)))
    }
    cells[field.name] = out
  }
  const meta = table.schema.metadata.get('huggingface')
  const rows: JsonObject[] = []
  for await (const r of readRecords('parquet', path, { file: path, recordKeys: [], header: {}, columns: [] })) rows.push(r.value as JsonObject)
  return { types, cells, features: meta === undefined ? undefined : (JSON.parse(meta) as { info: { features: unknown } }).info.features, rows }
}

async function casesOf(path: string): Promise<EvalCase[]> {
  const out: EvalCase[] = []
  for await (const c of read(path, { from: 'hf' })) out.push(c)
  return out
}

/** The columns of every type the brief names, with nulls, as pyarrow writes them. */
async function everyType(name: string): Promise<string> {
  return plainParquet(name, {
    question: column(new Utf8(), ['What is 2+2?', 'Capital of France?', null, 'héllo?']),
    int8: column(new Int8(), [1, null, -128, 127]),
    int16: column(new Int16(), [-32768, 300, null, 32767]),
    int32: column(new Int32(), [2147483647, null, -2147483648, 0]),
    uint64: column(new Uint64(), [0n, 2n ** 64n - 1n, null, 2n ** 53n]),
    float32: column(new Float32(), [0.5, 0.1, null, -3.25]),
    float64: column(new Float64(), [0.1, 1, null, 2.5]),
    bool: column(new Bool(), [true, false, null, true]),
    binary: column(new Binary(), [Uint8Array.from([0, 1, 255]), new Uint8Array(0), null, Uint8Array.from([104, 105])]),
    date32: column(new DateDay(), [0, Date.UTC(2024, 1, 29), null, Date.UTC(1900, 0, 1)]),
    ts_ms: timestamps(new TimestampMillisecond(), [1_700_000_000_123n, 0n, 0n, -1n], [true, false, true, true]),
    ts_us_utc: timestamps(new TimestampMicrosecond('UTC'), [1_700_000_000_123_456n, 0n, 0n, 1n], [true, false, true, true]),
    list_int32: column(new List(new Field('item', new Int32(), true)), [[1, null, 3], [], null, [2147483647]]),
    fixed_list: column(new FixedSizeList(2, new Field('item', new Float32(), true)), [[0.5, 1], null, [null, 2], [0, -1]]),
    struct: column(new Struct([new Field('a', new Int8(), true), new Field('b', new Utf8(), true)]), [{ a: 1, b: 'x' }, { a: null, b: null }, null, { a: -1, b: 'z' }]),
  })
}

const TYPES = {
  question: 'Utf8',
  int8: 'Int8',
  int16: 'Int16',
  int32: 'Int32',
  uint64: 'Uint64',
  float32: 'Float32',
  float64: 'Float64',
  bool: 'Bool',
  binary: 'Binary',
  date32: 'Date32<DAY>',
  ts_ms: 'Timestamp<MILLISECOND>',
  ts_us_utc: 'Timestamp<MICROSECOND, UTC>',
  list_int32: 'List<Int32>',
  fixed_list: 'FixedSizeList[2]<Float32>',
  struct: 'Struct<{a:Int8, b:Utf8}>',
}

/** What `datasets` derives from that schema (`Features.from_arrow_schema`), serialized as it writes features. */
const FEATURES = {
  question: { dtype: 'string', _type: 'Value' },
  int8: { dtype: 'int8', _type: 'Value' },
  int16: { dtype: 'int16', _type: 'Value' },
  int32: { dtype: 'int32', _type: 'Value' },
  uint64: { dtype: 'uint64', _type: 'Value' },
  float32: { dtype: 'float32', _type: 'Value' },
  float64: { dtype: 'float64', _type: 'Value' },
  bool: { dtype: 'bool', _type: 'Value' },
  binary: { dtype: 'binary', _type: 'Value' },
  date32: { dtype: 'date32', _type: 'Value' },
  ts_ms: { dtype: 'timestamp[ms]', _type: 'Value' },
  ts_us_utc: { dtype: 'timestamp[us, tz=UTC]', _type: 'Value' },
  list_int32: { feature: { dtype: 'int32', _type: 'Value' }, _type: 'List' },
  fixed_list: { feature: { dtype: 'float32', _type: 'Value' }, length: 2, _type: 'List' },
  struct: { a: { dtype: 'int8', _type: 'Value' }, b: { dtype: 'string', _type: 'Value' } },
}

/** The rows as evalferry reads them: 64-bit integers past 2^53 as text, bytes as base64, dates and timestamps as ISO text. */
const ROWS = [
  {
    question: 'What is 2+2?', int8: 1, int16: -32768, int32: 2147483647, uint64: 0, float32: 0.5, float64: 0.1, bool: true, binary: 'AAH/',
    date32: '1970-01-01', ts_ms: '2023-11-14T22:13:20.123', ts_us_utc: '2023-11-14T22:13:20.123456Z', list_int32: [1, null, 3], fixed_list: [0.5, 1], struct: { a: 1, b: 'x' },
  },
  {
    question: 'Capital of France?', int8: null, int16: 300, int32: null, uint64: '18446744073709551615', float32: Math.fround(0.1), float64: 1, bool: false, binary: '',
    date32: '2024-02-29', ts_ms: null, ts_us_utc: null, list_int32: [], fixed_list: null, struct: { a: null, b: null },
  },
  {
    question: null, int8: -128, int16: null, int32: -2147483648, uint64: null, float32: null, float64: null, bool: null, binary: null,
    date32: null, ts_ms: '1970-01-01T00:00:00.000', ts_us_utc: '1970-01-01T00:00:00.000000Z', list_int32: null, fixed_list: [null, 2], struct: null,
  },
  {
    question: 'héllo?', int8: 127, int16: 32767, int32: 0, uint64: '9007199254740992', float32: -3.25, float64: 2.5, bool: true, binary: 'aGk=',
    date32: '1900-01-01', ts_ms: '1969-12-31T23:59:59.999', ts_us_utc: '1970-01-01T00:00:00.000001Z', list_int32: [2147483647], fixed_list: [0, -1], struct: { a: -1, b: 'z' },
  },
]

test('hf Parquet without huggingface metadata to hf Parquet: every column keeps its Arrow type and cells, and gets the features datasets derives', async () => {
  const source = await everyType('every-type.parquet')
  const before = await parquetOf(source)
  assert.deepEqual(before.types, TYPES)
  assert.equal(before.features, undefined)
  assert.deepEqual(before.rows, ROWS)

  // The features travel with the first case, as those of the metadata do.
  const cases = await casesOf(source)
  assert.deepEqual(cases[0]!.extras?.hf?.$file, { features: FEATURES, columns: Object.keys(TYPES) })

  const output = join(work, 'every-type-out.parquet')
  const report = await convert({ input: source, output, from: 'hf', to: 'hf' })
  assert.deepEqual(report.carried, {})
  const after = await parquetOf(output)
  // The same columns, in order, of the same types, holding the same cells: no evalferry column.
  assert.deepEqual(after.types, TYPES)
  assert.deepEqual(Object.keys(after.types), Object.keys(TYPES))
  assert.deepEqual(after.cells, before.cells)
  assert.deepEqual(after.rows, ROWS)
  // Written as `datasets` serializes them: key order too.
  assert.equal(JSON.stringify(after.features), JSON.stringify(FEATURES))
  // An integral float64 stays float64; the unsigned maximum and 2^53 keep every digit.
  assert.deepEqual(after.cells.float64, [0.1, 1, null, 2.5])
  assert.deepEqual(after.cells.uint64, [0n, 2n ** 64n - 1n, null, 2n ** 53n])
  assert.deepEqual(after.cells.date32, [0, 19782, null, -25567])
  assert.deepEqual(after.cells.ts_us_utc, [1_700_000_000_123_456n, null, 0n, 1n])
  assert.deepEqual(after.cells.binary, [[0, 1, 255], [], null, [104, 105]])

  // Read again, the output gives the cases the source gave.
  assert.deepEqual(JSON.parse(JSON.stringify(await casesOf(output))), JSON.parse(JSON.stringify(cases)))
})

test('hf Parquet → hf JSON Lines → hf Parquet: the features ride on the first line, and the Parquet written again has every type and cell back', async () => {
  // JSON Lines holds each row's values as JSON (what the reader gives: bytes as base64, dates and
  // timestamps as ISO text, 64-bit integers past 2^53 as text), a null cell as no key, and the
  // derived features under `evalferry.$file` of the first line: from them the Parquet written
  // again has each column's Arrow type, its cells and the features of the source.
  const source = await everyType('every-type-2.parquet')
  const jsonl = join(work, 'every-type.jsonl')
  await convert({ input: source, output: jsonl, from: 'hf', to: 'hf' })
  const lines = readFileSync(jsonl, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as JsonObject)
  const { evalferry, ...first } = lines[0]!
  assert.deepEqual((evalferry as { $file: { features: unknown } }).$file.features, FEATURES)
  const withoutNulls = (row: JsonObject) => Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null))
  assert.deepEqual([first, ...lines.slice(1)], ROWS.map(withoutNulls))

  const again = join(work, 'every-type-again.parquet')
  const report = await convert({ input: jsonl, output: again, from: 'hf', to: 'hf' })
  assert.deepEqual(report.carried, {})
  const [before, after] = [await parquetOf(source), await parquetOf(again)]
  assert.deepEqual(after.types, TYPES)
  assert.deepEqual(after.cells, before.cells)
  assert.deepEqual(after.rows, ROWS)
  assert.equal(JSON.stringify(after.features), JSON.stringify(FEATURES))
})

test('a value its derived column type cannot hold is written as null and carried; the column keeps its type', async () => {
  const cases = await casesOf(await everyType('every-type-3.parquet'))
  cases[0]!.metadata = { ...cases[0]!.metadata, int8: 1000 }
  cases[1]!.metadata = { ...cases[1]!.metadata, date32: '2024-02-30' }
  cases[3]!.metadata = { ...cases[3]!.metadata, struct: { a: -1, b: 'z', c: 'more' } }
  const output = join(work, 'every-type-changed.parquet')
  await write(cases, output, { to: 'hf' })
  const after = await parquetOf(output)
  assert.deepEqual(after.types, { ...TYPES, evalferry: 'Utf8' })
  assert.deepEqual(after.cells.int8, [null, null, -128, 127])
  assert.deepEqual(after.cells.date32, [0, null, null, -25567])
  assert.deepEqual(after.cells.struct, [{ a: 1, b: 'x' }, { a: null, b: null }, null, null])
  assert.deepEqual(JSON.parse(JSON.stringify(await casesOf(output))), JSON.parse(JSON.stringify(cases)))
})

test('Arrow types the writer cannot write back keep today\'s inferred column and every value; large, half-float, date64, null and dictionary columns keep theirs', async () => {
  // decimal128(10, 2): 123.45, null, -0.01 as the 128-bit integers stored.
  const words = new Uint32Array([12345, 0, 0, 0, 0, 0, 0, 0, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff])
  const source = await plainParquet('other-types.parquet', {
    question: column(new Utf8(), ['a?', 'b?', 'c?']),
    price: makeData({ type: new Decimal(2, 10, 128), length: 3, nullCount: 1, nullBitmap: Uint8Array.from([0b101]), data: words }),
    took: column(new TimeMillisecond(), [1000, null, 5]),
    category: column(new Dictionary(new Utf8(), new Int8()), ['x', null, 'y']),
    nothing: makeData({ type: new Null(), length: 3, nullCount: 3 }),
    text: column(new LargeUtf8(), ['long', null, 'héllo']),
    blob: column(new LargeBinary(), [Uint8Array.from([1]), null, new Uint8Array(0)]),
    ids: column(new LargeList(new Field('item', new Int64(), true)), [[1n, 2n], null, []]),
    half: column(new Float16(), [1.5, null, 65504]),
    day: column(new DateMillisecond(), [0, Date.UTC(2024, 1, 29), null]),
  })
  const rows = [
    { question: 'a?', price: '123.45', took: 1000, category: 'x', nothing: null, text: 'long', blob: 'AQ==', ids: [1, 2], half: 1.5, day: '1970-01-01' },
    { question: 'b?', price: null, took: null, category: null, nothing: null, text: null, blob: null, ids: null, half: null, day: '2024-02-29' },
    { question: 'c?', price: '-0.01', took: 5, category: 'y', nothing: null, text: 'héllo', blob: '', ids: [], half: 65504, day: null },
  ]
  assert.deepEqual((await parquetOf(source)).rows, rows)
  const features = {
    question: { dtype: 'string', _type: 'Value' },
    // A dictionary-encoded column is read as its values, as `datasets` reads it.
    category: { dtype: 'string', _type: 'Value' },
    nothing: { dtype: 'null', _type: 'Value' },
    text: { dtype: 'large_string', _type: 'Value' },
    blob: { dtype: 'large_binary', _type: 'Value' },
    ids: { feature: { dtype: 'int64', _type: 'Value' }, _type: 'LargeList' },
    half: { dtype: 'float16', _type: 'Value' },
    day: { dtype: 'date64', _type: 'Value' },
  }
  // The decimal and the time have no feature evalferry writes back: null, for writing to infer.
  const cases = await casesOf(source)
  assert.deepEqual((cases[0]!.extras?.hf?.$file as { features: unknown }).features, { ...features, price: null, took: null })

  const output = join(work, 'other-types-out.parquet')
  const report = await convert({ input: source, output, from: 'hf', to: 'hf' })
  assert.deepEqual(report.carried, {})
  const after = await parquetOf(output)
  assert.deepEqual(after.types, {
    question: 'Utf8',
    price: 'Utf8',
    took: 'Int64',
    category: 'Utf8',
    nothing: 'Null',
    text: 'LargeUtf8',
    blob: 'LargeBinary',
    ids: 'LargeList<Int64>',
    half: 'Float16',
    // Written as pyarrow writes date64: Parquet's DATE, which reads as date32; the feature stays date64.
    day: 'Date32<DAY>',
  })
  assert.deepEqual(after.rows, rows)
  // The inferred columns have no feature in the metadata: `datasets` derives theirs from the type written.
  assert.deepEqual(after.features, features)
  assert.deepEqual(JSON.parse(JSON.stringify(await casesOf(output))).map((c: EvalCase) => c.metadata), cases.map((c) => c.metadata))
  // Read again, the output has the features of the types written, as `datasets` derives them.
  const again = (await casesOf(output))[0]!.extras?.hf?.$file as { features: Record<string, unknown> }
  assert.deepEqual([again.features.price, again.features.took], [{ dtype: 'string', _type: 'Value' }, { dtype: 'int64', _type: 'Value' }])
})

test('columns whose types writing infers anyway (text, int64, bool) carry no features with the first case; a float64 column whose first value is whole does, so that its whole numbers stay floats', async () => {
  const source = await plainParquet('inferable.parquet', {
    question: column(new Utf8(), ['a?', 'b?']),
    count: column(new Int64(), [1n, null]),
    ok: column(new Bool(), [true, false]),
  })
  const cases = await casesOf(source)
  assert.equal((cases[0]!.extras?.hf?.$file as { features?: unknown } | undefined)?.features, undefined)
  const output = join(work, 'inferable-out.parquet')
  await convert({ input: source, output, from: 'hf', to: 'hf' })
  const after = await parquetOf(output)
  assert.deepEqual(after.types, { question: 'Utf8', count: 'Int64', ok: 'Bool' })
  assert.deepEqual(after.rows, [
    { question: 'a?', count: 1, ok: true },
    { question: 'b?', count: null, ok: false },
  ])
  // JavaScript holds 1.0 as 1: a float64 column of whole numbers would be written as int64 from its values alone.
  const floats = await plainParquet('whole-floats.parquet', { question: column(new Utf8(), ['a?', 'b?']), score: column(new Float64(), [1, 0]) })
  const floatsOut = join(work, 'whole-floats-out.parquet')
  const report = await convert({ input: floats, output: floatsOut, from: 'hf', to: 'hf' })
  assert.deepEqual(report.carried, {})
  const written = await parquetOf(floatsOut)
  assert.deepEqual(written.types, { question: 'Utf8', score: 'Float64' })
  assert.deepEqual(written.cells.score, [1, 0])
})

test('NaN in a float32 or float16 column and timestamps before the year 100 are written back as they were, not as null', async () => {
  // 0001-01-01 (Python's datetime.min) and 0099-11-24 in microseconds since the epoch.
  const micros = (year: number, month: number, day: number) => BigInt(new Date(0).setUTCFullYear(year, month - 1, day)) * 1000n
  const early = [micros(1, 1, 1), micros(99, 11, 24)]
  assert.equal(early[0], -62_135_596_800_000_000n)
  const source = await plainParquet('nan-and-early.parquet', {
    question: column(new Utf8(), ['a?', 'b?']),
    f32: column(new Float32(), [Number.NaN, 1.5]),
    f16: column(new Float16(), [0.5, Number.NaN]),
    at: timestamps(new TimestampMicrosecond(), early, [true, true]),
  })
  const cases = await casesOf(source)
  assert.deepEqual(cases.map((c) => c.metadata?.at), ['0001-01-01T00:00:00.000000', '0099-11-24T00:00:00.000000'])
  const output = join(work, 'nan-and-early-out.parquet')
  const report = await convert({ input: source, output, from: 'hf', to: 'hf' })
  assert.deepEqual(report.carried, {})
  const after = await parquetOf(output)
  assert.deepEqual(after.types, { question: 'Utf8', f32: 'Float32', f16: 'Float16', at: 'Timestamp<MICROSECOND>' })
  assert.deepEqual(after.cells.f32, [Number.NaN, 1.5])
  assert.deepEqual(after.cells.at, early)
})
