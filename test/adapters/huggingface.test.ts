import { test } from 'node:test'
import { randomBytes } from 'node:crypto'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Binary, type Data, Field, FixedSizeList, Float32, Float64, Int32, List, makeData, Struct, tableFromIPC, TimestampMicrosecond, TimestampNanosecond, TimestampSecond, Utf8, vectorFromArray } from 'apache-arrow'
import { readParquet } from 'parquet-wasm'
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet'
import { fromFeature, toFeature } from '../../adapters/huggingface.ts'
import { readRecords } from '../../src/codecs/index.ts'
import { EvalferryError } from '../../src/errors.ts'
import type { EvalCase, Message } from '../../src/model.ts'
import { newReport, type ConversionReport } from '../../src/report.ts'
import { arrowParquet } from '../helpers/parquet.ts'
import { convert } from '../../src/convert.ts'
import { read } from '../../src/read.ts'
import { write } from '../../src/write.ts'
import { tempDir } from '../helpers/temp.ts'
import { collect } from '../helpers/collect.ts'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'hf')
const REAL = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'real', 'hf')
const work = tempDir('evalferry-hf-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

function readAll(file: string, report?: ConversionReport): Promise<EvalCase[]> {
  return collect(read(file, { from: 'hf', ...(report ? { report } : {}) }))
}

async function rows(file: string): Promise<unknown[]> {
  const out: unknown[] = []
  const container = file.endsWith('.parquet') ? 'parquet' : file.endsWith('.csv') ? 'csv' : 'jsonl'
  for await (const r of readRecords(container, file, { file, recordKeys: [], header: {}, columns: [] })) out.push(r.value)
  return out
}

for (const name of readdirSync(FIXTURES).filter((n) => /\.(jsonl|csv|json|parquet)$/.test(n) && !n.endsWith('.cases.json'))) {
  test(`hf/${name}: reads as the expected cases, and writes back the same rows`, async () => {
    const path = join(FIXTURES, name)
    const cases = await readAll(path)
    assert.deepEqual(JSON.parse(JSON.stringify(cases)), JSON.parse(readFileSync(`${path}.cases.json`, 'utf8')))
    const out = join(work, name)
    await write(cases, out, { to: 'hf' })
    assert.deepEqual(await rows(out), await rows(path))
  })
}

const real = (name: string) => join(REAL, name)

/** A Parquet file as `datasets` writes one: these columns, and their features in the schema metadata. */
function featuresParquet(name: string, features: Record<string, unknown>, children: Data[]): Promise<string> {
  const columns = Object.fromEntries(children.map((data, i) => [Object.keys(features)[i]!, data]))
  return arrowParquet(join(work, name), columns, new Map([['huggingface', JSON.stringify({ info: { features } })]]))
}

/** Cases written as hf Parquet: the file's rows, its Arrow column types and its features. */
async function writtenParquet(cases: EvalCase[], name: string): Promise<{ path: string; rows: unknown[]; types: string[]; features: unknown }> {
  const path = join(work, name)
  await write(cases, path, { to: 'hf' })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  const value = (key: string) => metadata.key_value_metadata!.find((kv) => kv.key === key)!.value!
  const arrow = tableFromIPC(Buffer.from(value('ARROW:schema'), 'base64')).schema
  const features = (JSON.parse(value('huggingface')) as { info: { features: unknown } }).info.features
  return { path, rows: await rows(path), types: arrow.fields.map((f) => String(f.type)), features }
}

test('viewer /first-rows: ClassLabel names, row_idx, the response header on the first case', async () => {
  const cases = await readAll(real('viewer-first-rows-a-simple-dataset-stanfordnlp-stanfordnlp-imdb-with.json'))
  assert.equal(cases.length, 3)
  assert.deepEqual(cases.map((c) => [c.metadata?.label, c.metadata?.row_idx]), [['neg', 0], ['neg', 1], ['neg', 2]])
  assert.match(String(cases[0]!.metadata?.text), /^I rented I AM CURIOUS-YELLOW/)
  const file = cases[0]!.extras?.hf?.$file as { dataset: string; split: string }
  assert.equal(file.dataset, 'stanfordnlp/imdb')
  assert.equal(file.split, 'train')
})

test('viewer /rows: a slice keeps its row_idx', async () => {
  const cases = await readAll(real('viewer-rows-a-slice-of-a-simple-dataset-stanfordnlp-imdb.json'))
  assert.deepEqual(cases.map((c) => c.metadata?.row_idx), [234, 235, 236])
  assert.ok(cases.every((c) => c.metadata?.label === 'neg'))
})

test('Image cells keep their source', async () => {
  for (const [name, first] of [
    ['viewer-first-rows-image-column.json', 0],
    ['viewer-rows-a-slice-of-an-image-dataset-huggan-horse2zebra.json', 234],
  ] as const) {
    const cases = await readAll(real(name))
    assert.equal(cases.length, 3)
    const image = cases[0]!.metadata?.imageA as { src: string; height: number; width: number }
    assert.match(image.src, new RegExp(`^https://datasets-server\\.huggingface\\.co/(cached-)?assets/huggan/horse2zebra/.*/train/${first}/imageA/image\\.jpg\\?`))
    assert.equal(image.height, 256)
    assert.equal(image.width, 256)
    assert.equal(cases[0]!.metadata?.row_idx, first)
  }
})

test('Audio cells keep their source; ClassLabel language becomes its name', async () => {
  const cases = await readAll(real('viewer-first-rows-audio-column.json'))
  assert.equal(cases.length, 3)
  assert.deepEqual(cases.map((c) => c.metadata?.language), ['cs', 'cs', 'cs'])
  const audio = cases[0]!.metadata?.audio as { src: string; type: string }[]
  assert.equal(audio[0]!.type, 'audio/wav')
  assert.match(audio[0]!.src, /voxpopuli\/--\/cs\/train\/0\/audio\/audio\.wav/)
  assert.equal(cases[0]!.metadata?.is_gold_transcript, true)
})

test('truncated cells are reported as warnings naming the column', async () => {
  const report = newReport('hf', 'hf', [])
  const file = real('viewer-first-rows-truncated-cells.json')
  const cases = await readAll(file, report)
  assert.equal(cases.length, 10)
  // Twenty truncated cells, and the response's `truncated` key after its rows, which read() gives out before it is read.
  assert.equal(report.warnings.length, 21)
  assert.deepEqual(report.warnings.slice(0, 2).map((w) => w.location.field), ['row.target', 'row.feat_dynamic_real'])
  assert.deepEqual(report.warnings[20]!.location, { file, field: 'truncated' })
  assert.equal(report.warnings[0]!.location.file, file)
  assert.match(report.warnings[0]!.message, /truncated/)
  assert.deepEqual(cases[0]!.metadata?.feat_static_cat, [0])
})

test('Parquet written carries the huggingface features: ClassLabel back to integers, objects as JSON text every datasets loads', async () => {
  const cases = await readAll(real('viewer-first-rows-a-simple-dataset-stanfordnlp-stanfordnlp-imdb-with.json'))
  cases[1]!.metadata = { ...cases[1]!.metadata, extra: { varying: ['keys'] } }
  const out = join(work, 'imdb.parquet')
  await write(cases, out, { to: 'hf' })
  const schemaMetadata: Record<string, string> = {}
  const stored: unknown[] = []
  for await (const r of readRecords('parquet', out, { file: out, recordKeys: [], header: {}, columns: [], schemaMetadata })) stored.push(r.value)
  const features = JSON.parse(schemaMetadata.huggingface!).info.features
  assert.deepEqual(features.label, { names: ['neg', 'pos'], _type: 'ClassLabel' })
  // datasets before 4.7 knows no Json feature and refuses a file that names one: the text is a string to it.
  assert.deepEqual(features.extra, { dtype: 'string', _type: 'Value' })
  assert.ok(!schemaMetadata.huggingface!.includes('"Json"'))
  assert.deepEqual(JSON.parse(schemaMetadata.evalferry!), { json_columns: ['extra', 'evalferry'] })
  assert.deepEqual((stored as { label: number }[]).map((r) => r.label), [0, 0, 0])
  assert.equal((stored[1] as { extra: string }).extra, '{"varying":["keys"]}')
  assert.deepEqual(JSON.parse(JSON.stringify(await readAll(out))), JSON.parse(JSON.stringify(cases)))
})

test('Parquet with features keeps its column names: question and answer stay question and answer', async () => {
  // As `datasets` writes a QA split: well-known names that are not the canonical ones, and a timestamp.
  const features = {
    question: { dtype: 'string', _type: 'Value' },
    answer: { dtype: 'string', _type: 'Value' },
    created: { dtype: 'timestamp[us]', _type: 'Value' },
  }
  const created = makeData({ type: new TimestampMicrosecond(), length: 2, nullCount: 0, data: new BigInt64Array([1_700_000_000_123_456n, 0n]) })
  const text = (values: string[]) => vectorFromArray(values, new Utf8()).data[0]!
  const children = [text(['What is 2+2?', 'Capital of France?']), text(['4', 'Paris']), created]
  const source = await featuresParquet('qa.parquet', features, children)

  const cases = await readAll(source)
  assert.deepEqual(cases.map((c) => [c.input, c.expected_output]), [
    [[{ role: 'user', content: 'What is 2+2?' }], [{ role: 'assistant', content: '4' }]],
    [[{ role: 'user', content: 'Capital of France?' }], [{ role: 'assistant', content: 'Paris' }]],
  ])
  const expected = [
    { question: 'What is 2+2?', answer: '4', created: '2023-11-14T22:13:20.123456' },
    { question: 'Capital of France?', answer: 'Paris', created: '1970-01-01T00:00:00.000000' },
  ]
  // Parquet holds the features and the timestamp column as they were: nothing to carry.
  const parquet = join(work, 'qa-out.parquet')
  await write(cases, parquet, { to: 'hf' })
  assert.deepEqual(await rows(parquet), expected)
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(parquet))
  const column = metadata.schema.find((s) => s.name === 'created')!
  const logical = column.logical_type as { type?: string; unit?: string } | undefined
  assert.deepEqual([column.type, logical?.type, logical?.unit], ['INT64', 'TIMESTAMP', 'MICROS'])
  const stored = JSON.parse(metadata.key_value_metadata!.find((kv) => kv.key === 'huggingface')!.value!) as { info: { features: unknown } }
  assert.deepEqual(stored.info.features, features)
  // JSON Lines has no place for features: they ride on the first row.
  const jsonl = join(work, 'qa-out.jsonl')
  await write(cases, jsonl, { to: 'hf' })
  const written = (await rows(jsonl)) as Record<string, unknown>[]
  assert.deepEqual(written.map(({ evalferry: _, ...row }) => row), expected)
  assert.deepEqual((written[0]!.evalferry as { $file: { features: unknown } }).$file.features, features)
})

test('Parquet columns keep their features\' types; a value its column cannot hold is written as null and carried', async () => {
  const cases = await readAll(join(FIXTURES, 'squad.parquet'))
  cases[0]!.metadata = { ...cases[0]!.metadata, answerable: 'maybe' }
  cases[1]!.metadata = { ...cases[1]!.metadata, answers: { text: ['a copper statue'], answer_start: [2 ** 40] } }
  const out = join(work, 'squad-changed.parquet')
  await write(cases, out, { to: 'hf' })
  const stored = (await rows(out)) as Record<string, unknown>[]
  assert.deepEqual(stored.map((r) => [r.answerable, r.answers]), [
    [null, { text: ['Saint Bernadette Soubirous'], answer_start: [230] }],
    [1, null],
    [0, { text: [], answer_start: [] }],
  ])
  assert.deepEqual(JSON.parse(JSON.stringify(await readAll(out))), JSON.parse(JSON.stringify(cases)))
})

test('a List or Sequence of fixed length stays a fixed-size list; a list of another length is written as null and carried', async () => {
  // As `datasets` writes embeddings, List(Value("float32"), length=3), and a Sequence of a dict of length 2.
  const features = {
    question: { dtype: 'string', _type: 'Value' },
    embedding: { feature: { dtype: 'float32', _type: 'Value' }, length: 3, _type: 'List' },
    pair: { feature: { score: { dtype: 'int32', _type: 'Value' } }, length: 2, _type: 'Sequence' },
  }
  const float3 = new FixedSizeList(3, new Field('item', new Float32(), true))
  const int2 = new FixedSizeList(2, new Field('item', new Int32(), true))
  const children = [
    vectorFromArray(['a?', 'b?'], new Utf8()).data[0]!,
    vectorFromArray([[0.5, 1, -2], [0, 0, 0.25]], float3).data[0]!,
    vectorFromArray([{ score: [1, 2] }, { score: [3, 4] }], new Struct([new Field('score', int2, true)])).data[0]!,
  ]
  const source = await featuresParquet('fixed.parquet', features, children)
  const expected = [
    { question: 'a?', embedding: [0.5, 1, -2], pair: { score: [1, 2] } },
    { question: 'b?', embedding: [0, 0, 0.25], pair: { score: [3, 4] } },
  ]
  assert.deepEqual(await rows(source), expected)

  const cases = await readAll(source)
  const written = await writtenParquet(cases, 'fixed-out.parquet')
  assert.deepEqual(written.rows, expected)
  assert.deepEqual(written.types, ['Utf8', 'FixedSizeList[3]<Float32>', 'Struct<{score:FixedSizeList[2]<Int32>}>'])
  // Written as `datasets` gives it back: the Sequence of a dict as the dict of Lists it is stored as.
  assert.deepEqual(written.features, { ...features, pair: { score: { feature: { dtype: 'int32', _type: 'Value' }, length: 2, _type: 'List' } } })

  // A list of another length does not fit the column: null there, and the case reads back whole.
  cases[1]!.metadata = { ...cases[1]!.metadata, embedding: [1, 2] }
  const changed = join(work, 'fixed-changed.parquet')
  await write(cases, changed, { to: 'hf' })
  assert.deepEqual(((await rows(changed)) as Record<string, unknown>[]).map((r) => r.embedding), [[0.5, 1, -2], null])
  assert.deepEqual(JSON.parse(JSON.stringify(await readAll(changed))), JSON.parse(JSON.stringify(cases)))
})

test('Translation and TranslationVariableLanguages are written as datasets stores them: their structs, not JSON text', async () => {
  const features = {
    translation: { languages: ['fr', 'de', 'en'], _type: 'Translation' },
    variable: { languages: ['en', 'fr'], _type: 'TranslationVariableLanguages' },
  }
  const fixed = new Struct(['de', 'en', 'fr'].map((language) => new Field(language, new Utf8(), true)))
  const text = new Field('item', new Utf8(), true)
  const aligned = new Struct([new Field('language', new List(text), true), new Field('translation', new List(text), true)])
  const children = [
    vectorFromArray([{ de: 'die Katze', en: 'the cat', fr: 'le chat' }], fixed).data[0]!,
    vectorFromArray([{ language: ['en', 'fr', 'fr'], translation: ['the cat', 'la chatte', 'le chat'] }], aligned).data[0]!,
  ]
  const source = await featuresParquet('translation.parquet', features, children)
  const cases = await readAll(source)
  const written = await writtenParquet(cases, 'translation-out.parquet')
  assert.deepEqual(written.rows, await rows(source))
  assert.deepEqual(written.types, ['Struct<{de:Utf8, en:Utf8, fr:Utf8}>', 'Struct<{language:List<Utf8>, translation:List<Utf8>}>'])
  assert.deepEqual(written.features, features)
  assert.deepEqual(await readAll(written.path), cases)
})

test('Image, Audio and binary Values are written as datasets stores them: bytes and path, read back byte for byte', async () => {
  const features = {
    question: { dtype: 'string', _type: 'Value' },
    image: { _type: 'Image' },
    audio: { sampling_rate: 16000, _type: 'Audio' },
    raw: { dtype: 'binary', _type: 'Value' },
  }
  const media = new Struct([new Field('bytes', new Binary(), true), new Field('path', new Utf8(), true)])
  const png = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0xff, 0xfe])
  const wav = new Uint8Array(randomBytes(300))
  const children = [
    vectorFromArray(['what is shown?', 'and here?'], new Utf8()).data[0]!,
    vectorFromArray([{ bytes: png, path: 'cat.png' }, { bytes: null, path: 'https://example.com/dog.png' }], media).data[0]!,
    vectorFromArray([{ bytes: wav, path: null }, null], media).data[0]!,
    vectorFromArray([Uint8Array.from([0, 1, 2, 255]), new Uint8Array(0)], new Binary()).data[0]!,
  ]
  const source = await featuresParquet('media.parquet', features, children)
  const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64')
  const expected = [
    { question: 'what is shown?', image: { bytes: b64(png), path: 'cat.png' }, audio: { bytes: b64(wav), path: null }, raw: 'AAEC/w==' },
    { question: 'and here?', image: { bytes: null, path: 'https://example.com/dog.png' }, audio: null, raw: '' },
  ]
  assert.deepEqual(await rows(source), expected)

  const cases = await readAll(source)
  const written = await writtenParquet(cases, 'media-out.parquet')
  assert.deepEqual(written.rows, expected)
  assert.deepEqual(written.types, ['Utf8', 'Struct<{bytes:Binary, path:Utf8}>', 'Struct<{bytes:Binary, path:Utf8}>', 'Binary'])
  assert.deepEqual(written.features, features)
  // Read as Arrow by parquet-wasm alone, the image's own bytes.
  const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(written.path))).intoIPCStream())
  assert.deepEqual(Uint8Array.from((table.getChild('image')!.get(0) as { bytes: Uint8Array }).bytes), png)

  // Text that is not canonical base64 does not fit the bytes: null there, and the case reads back whole.
  cases[0]!.metadata = { ...cases[0]!.metadata, image: { bytes: 'not base64!', path: 'cat.png' } }
  const changed = join(work, 'media-changed.parquet')
  await write(cases, changed, { to: 'hf' })
  assert.equal(((await rows(changed)) as { image: unknown }[])[0]!.image, null)
  assert.deepEqual(JSON.parse(JSON.stringify(await readAll(changed))), JSON.parse(JSON.stringify(cases)))
})

test('messages with a timestamp per turn stay a list of structs, every digit kept', async () => {
  const features = {
    id: { dtype: 'string', _type: 'Value' },
    messages: { feature: { role: { dtype: 'string', _type: 'Value' }, content: { dtype: 'string', _type: 'Value' }, sent: { dtype: 'timestamp[ns]', _type: 'Value' } }, _type: 'List' },
  }
  const ns = new TimestampNanosecond()
  const turn = new Struct([new Field('role', new Utf8(), true), new Field('content', new Utf8(), true), new Field('sent', ns, true)])
  const sent = makeData({ type: ns, length: 3, nullCount: 0, data: new BigInt64Array([1_700_000_000_123_456_789n, 1_700_000_001_000_000_001n, 5n]) })
  const turns = makeData({
    type: turn,
    length: 3,
    nullCount: 0,
    children: [vectorFromArray(['user', 'assistant', 'user'], new Utf8()).data[0]!, vectorFromArray(['hi', 'hello', 'bye'], new Utf8()).data[0]!, sent],
  })
  const listType = new List(new Field('item', turn, true))
  const children = [vectorFromArray(['c1', 'c2'], new Utf8()).data[0]!, makeData({ type: listType, length: 2, nullCount: 0, valueOffsets: new Int32Array([0, 2, 3]), child: turns })]
  const source = await featuresParquet('chat-times.parquet', features, children)
  const expected = [
    { id: 'c1', messages: [{ role: 'user', content: 'hi', sent: '2023-11-14T22:13:20.123456789' }, { role: 'assistant', content: 'hello', sent: '2023-11-14T22:13:21.000000001' }] },
    { id: 'c2', messages: [{ role: 'user', content: 'bye', sent: '1970-01-01T00:00:00.000000005' }] },
  ]
  assert.deepEqual(await rows(source), expected)
  const written = await writtenParquet(await readAll(source), 'chat-times-out.parquet')
  assert.deepEqual(written.rows, expected)
  assert.deepEqual(written.types, ['Utf8', 'List<Struct<{role:Utf8, content:Utf8, sent:Timestamp<NANOSECOND>}>>'])
  assert.deepEqual(written.features, features)
})

test("a Json feature, as datasets 4.7 writes it, is read as JSON text parsed; a listing evalferry cannot read is warned of", async () => {
  const text = (values: string[]) => vectorFromArray(values, new Utf8()).data[0]!
  const json = await featuresParquet('json-feature.parquet', { question: { dtype: 'string', _type: 'Value' }, extra: { _type: 'Json' } }, [text(['q']), text(['{"a": [1, 2]}'])])
  assert.deepEqual((await readAll(json))[0]!.metadata, { extra: { a: [1, 2] } })
  const columns = { question: text(['q']), extra: text(['{"a": 1}']) }
  const listed = await arrowParquet(join(work, 'json-listed.parquet'), columns, new Map([['evalferry', '{"json_columns": ["extra"]}']]))
  assert.deepEqual((await readAll(listed))[0]!.metadata, { extra: { a: 1 } })
  const unreadable = await arrowParquet(join(work, 'json-unreadable.parquet'), columns, new Map([['evalferry', '["extra"]']]))
  const report = newReport('hf', 'hf', [unreadable])
  const cases: EvalCase[] = []
  for await (const c of read(unreadable, { from: 'hf', report })) cases.push(c)
  assert.deepEqual(cases[0]!.metadata, { extra: '{"a": 1}' })
  assert.deepEqual(report.warnings.map((w) => w.message), ['the Parquet "evalferry" metadata is not {"json_columns": [...]}; its columns are read as the features say'])
})

test('a timestamp of seconds is stored as Parquet milliseconds, named timestamp[ms] as datasets loads it, and reads back as seconds', async () => {
  const cases = await readAll(real('viewer-first-rows-truncated-cells.json'))
  const { path, types, features } = await writtenParquet(cases, 'seconds.parquet')
  assert.equal(types[0], 'Timestamp<MILLISECOND>')
  // pyarrow reads stored milliseconds as such, and datasets gives timestamp[ms] even for a file it wrote with seconds.
  assert.deepEqual((features as Record<string, unknown>).start, { dtype: 'timestamp[ms]', _type: 'Value' })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  const own = JSON.parse(metadata.key_value_metadata!.find((kv) => kv.key === 'evalferry')!.value!) as { features: unknown }
  assert.deepEqual(own.features, { start: { dtype: 'timestamp[s]', _type: 'Value' } })
  assert.deepEqual(metadata.schema.find((s) => s.name === 'start')!.logical_type, { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' })
  const back = await readAll(path)
  assert.deepEqual(back.map((c) => c.metadata?.start), cases.map((c) => c.metadata?.start))
  assert.equal(back[0]!.metadata?.start, '2016-07-01T00:00:00')
  assert.deepEqual(JSON.parse(JSON.stringify(back)), JSON.parse(JSON.stringify(cases)))
  // As datasets writes a column of seconds: it reads back as its seconds, with nothing carried.
  const seconds = makeData({ type: new TimestampSecond(), length: 2, nullCount: 0, data: new BigInt64Array([1_467_331_205n, 0n]) })
  const source = await featuresParquet('seconds-source.parquet', { question: { dtype: 'string', _type: 'Value' }, at: { dtype: 'timestamp[s]', _type: 'Value' } }, [vectorFromArray(['q1', 'q2'], new Utf8()).data[0]!, seconds])
  const read = await readAll(source)
  assert.deepEqual(read.map((c) => c.metadata?.at), ['2016-07-01T00:00:05', '1970-01-01T00:00:00'])
  const again = await writtenParquet(read, 'seconds-again.parquet')
  assert.deepEqual(again.rows, [{ question: 'q1', at: '2016-07-01T00:00:05.000' }, { question: 'q2', at: '1970-01-01T00:00:00.000' }])
  assert.deepEqual(await readAll(again.path), read)
})

test('images the viewer gives as links are written as JSON text, the Image feature carried', async () => {
  const cases = await readAll(real('viewer-first-rows-image-column.json'))
  const out = join(work, 'viewer-images.parquet')
  await write(cases, out, { to: 'hf' })
  const schemaMetadata: Record<string, string> = {}
  const stored: { imageA: string }[] = []
  for await (const r of readRecords('parquet', out, { file: out, recordKeys: [], header: {}, columns: [], schemaMetadata })) stored.push(r.value as { imageA: string })
  assert.deepEqual(JSON.parse(schemaMetadata.huggingface!).info.features.imageA, { dtype: 'string', _type: 'Value' })
  assert.deepEqual(JSON.parse(schemaMetadata.evalferry!).json_columns, ['imageA', 'imageB', 'evalferry'])
  assert.match(JSON.parse(stored[0]!.imageA).src, /^https:\/\/datasets-server\.huggingface\.co\//)
  assert.deepEqual(JSON.parse(JSON.stringify(await readAll(out))), JSON.parse(JSON.stringify(cases)))
})

test('features: ClassLabel -1 and null stay as they are, Json text is parsed, lists map their items', () => {
  const label = { names: ['a', 'b'], _type: 'ClassLabel' }
  assert.equal(fromFeature(-1, label), -1)
  assert.equal(toFeature(-1, label), -1)
  assert.equal(fromFeature(null, label), null)
  assert.equal(toFeature(null, label), null)
  assert.equal(toFeature('b', label), 1)
  assert.deepEqual(fromFeature([1, 0], { feature: label, _type: 'List' }), ['b', 'a'])
  assert.deepEqual(fromFeature([1], [label]), ['b'])
  assert.deepEqual(fromFeature('{"x":1}', { _type: 'Json' }), { x: 1 })
})

test('a viewer response without rows: an error naming the file and the field rows', async () => {
  const file = join(FIXTURES, 'bad', 'no-rows.json')
  await assert.rejects(readAll(file), (e: EvalferryError) => {
    assert.equal(e.code, 'E_FIELD')
    assert.equal(e.exitCode, 1)
    assert.equal(e.location.file, file)
    assert.equal(e.location.field, 'rows')
    return true
  })
})

test('the older list feature [feature] is written as a list, not as a list of fixed size 1, and named List as datasets gives it back', async () => {
  const features = { question: { dtype: 'string', _type: 'Value' }, tags: [{ dtype: 'string', _type: 'Value' }] }
  const tags = vectorFromArray([['t1'], ['t2', 't3'], []], new List(new Field('item', new Utf8(), true))).data[0]!
  const source = await featuresParquet('bare-list.parquet', features, [vectorFromArray(['a', 'b', 'c'], new Utf8()).data[0]!, tags])
  const report = newReport('hf', 'hf', [source])
  const out = await writtenParquet(await readAll(source, report), 'bare-list-out.parquet')
  assert.deepEqual(out.types, ['Utf8', 'List<Utf8>'])
  assert.deepEqual(out.rows, [
    { question: 'a', tags: ['t1'] },
    { question: 'b', tags: ['t2', 't3'] },
    { question: 'c', tags: [] },
  ])
  assert.deepEqual(out.features, { ...features, tags: { feature: { dtype: 'string', _type: 'Value' }, _type: 'List' } })
})

test('NaN and the infinities survive a carry: hf Parquet → hf CSV, whose cells and evalferry column hold them, → hf Parquet', async () => {
  const features = { question: { dtype: 'string', _type: 'Value' }, score: { dtype: 'float64', _type: 'Value' } }
  const source = await featuresParquet('non-finite.parquet', features, [vectorFromArray(['a', 'b', 'c'], new Utf8()).data[0]!, vectorFromArray([Number.NaN, Number.POSITIVE_INFINITY, 0.5], new Float64()).data[0]!])
  const csv = join(work, 'non-finite.csv')
  await write(await readAll(source), csv, { to: 'hf' })
  assert.equal(readFileSync(csv, 'utf8'), 'question,score,evalferry\na,NaN,"{""$metadata"":{""score"":NaN}}"\nb,Infinity,"{""$metadata"":{""score"":Infinity}}"\nc,0.5,"{""$metadata"":{""score"":0.5}}"\n')
  const back = await writtenParquet(await readAll(csv), 'non-finite-back.parquet')
  assert.deepEqual(back.types, ['Utf8', 'Float64'])
  assert.deepEqual(back.rows, [
    { question: 'a', score: Number.NaN },
    { question: 'b', score: Number.POSITIVE_INFINITY },
    { question: 'c', score: 0.5 },
  ])
})

test('JSON Lines rows with keys the first row lacks keep them as columns through JSON Lines, CSV and Parquet, none of them carried', async () => {
  const source = join(work, 'sparse.jsonl')
  const text = '{"question": "q1", "answer": "a1", "score": 0.5}\n{"question": "q2", "answer": "a2", "source": "web"}\n{"question": "q3", "source": "book", "score": 1.5}\n'
  writeFileSync(source, text)
  const expected = text.trim().split('\n').map((l) => JSON.parse(l) as unknown)
  for (const via of ['jsonl', 'csv', 'parquet']) {
    const report = newReport('hf', 'hf', [source])
    const middle = join(work, `sparse-via.${via}`)
    await write(await readAll(source), middle, { to: 'hf', report })
    // CSV cells are text: only the numbers ride in the carry, never a key of a later row (the first
    // row's score alone; the third's metadata whole, its keys read back in the header's order).
    assert.deepEqual(report.carried, via === 'csv' ? { 'metadata.score': 1, metadata: 1 } : {}, via)
    const back = join(work, `sparse-back-${via}.jsonl`)
    await write(await readAll(middle), back, { to: 'hf' })
    if (via === 'jsonl') assert.equal(readFileSync(middle, 'utf8'), readFileSync(back, 'utf8'))
    else assert.deepEqual(((await rows(middle)) as Record<string, unknown>[]).map((r) => Object.keys(r)), Array(3).fill(['question', 'answer', 'score', 'source', ...(via === 'csv' ? ['evalferry'] : [])]), via)
    assert.deepEqual(await rows(back), expected, via)
  }
})

test('a Parquet column named like a number ("1") keeps its place among the columns: no header carried for it', async () => {
  // A JavaScript object lists such keys first, wherever they were put; the file's own order is the one read.
  const cases: EvalCase[] = [{ input: [{ role: 'user', content: 'q' }], expected_output: [{ role: 'assistant', content: 'a' }], metadata: { '1': 'one', topic: 'x' } }]
  const parquet = join(work, 'numbered.parquet')
  await write(cases, parquet, { to: 'hf' })
  const back = await readAll(parquet)
  assert.deepEqual(back, cases)
  const table = tableFromIPC(readParquet(readFileSync(parquet)).intoIPCStream())
  assert.deepEqual(table.schema.fields.map((f) => f.name), ['input', 'expected_output', '1', 'topic'])
})

test('an hf CSV cell that pandas reads as missing (the `datasets` CSV reader) is warned of once, by column; the text is kept', async () => {
  const source = join(work, 'missing-like.jsonl')
  writeFileSync(source, '{"question": "Is it known?", "answer": "N/A"}\n{"question": "null", "answer": "nan and more"}\n')
  const output = join(work, 'missing-like.csv')
  const report = newReport('hf', 'hf', [source], output)
  await write(read(source, { from: 'hf' }), output, { to: 'hf', report })
  assert.deepEqual(
    report.warnings.map((w) => [w.location.line, w.location.field]),
    [
      [1, 'answer'],
      [2, 'question'],
    ],
  )
  assert.match(report.warnings[0]!.message, /"N\/A" is read by pandas \(the CSV reader of datasets\) as a missing value/)
  assert.equal(readFileSync(output, 'utf8'), 'question,answer\nIs it known?,N/A\nnull,nan and more\n')
})

test('Parquet to Parquet: a list cell a well-known field cannot take stays in its column, and ClassLabel -1 and null stay apart', async () => {
  const features = {
    question: { dtype: 'string', _type: 'Value' },
    tags: { feature: { dtype: 'string', _type: 'Value' }, _type: 'List' },
    label: { names: ['neg', 'pos'], _type: 'ClassLabel' },
  }
  const children = [
    vectorFromArray(['q1', 'q2', 'q3'], new Utf8()).data[0]!,
    vectorFromArray([['x', null], ['y'], null], new List(new Field('item', new Utf8(), true))).data[0]!,
    vectorFromArray([1, -1, null], new Int32()).data[0]!,
  ]
  const source = await featuresParquet('misfit.parquet', features, children)
  const cases = await readAll(source)
  assert.deepEqual(cases.map((c) => [c.tags, c.metadata]), [
    [undefined, { tags: ['x', null], label: 'pos' }],
    [['y'], { label: -1 }],
    // A null cell in a Parquet row is no value, and is written back as null.
    [undefined, undefined],
  ])
  const out = join(work, 'misfit-out.parquet')
  const report = newReport('hf', 'hf', [source], out)
  await write(cases, out, { to: 'hf', report })
  assert.deepEqual(report.carried, {})
  assert.deepEqual(await rows(out), [
    { question: 'q1', tags: ['x', null], label: 1 },
    { question: 'q2', tags: ['y'], label: -1 },
    { question: 'q3', tags: null, label: null },
  ])
})

test('chat rows as datasets writes them (a null for each key a message lacks, OpenAI text parts) are messages to every format, and come back as they were', async () => {
  const rows = [
    { id: 'c1', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is 2+2?' }], name: null, tool_calls: null }, { role: 'assistant', content: '4', name: null, tool_calls: null }] },
    { id: 'c2', messages: [{ role: 'system', content: null, name: null, tool_calls: null }, { role: 'user', content: 'Hi', name: 'ann', tool_calls: null }] },
  ]
  const input = join(work, 'chat-nulls.jsonl')
  writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n')
  const cases: EvalCase[] = []
  for await (const c of read(input, { from: 'hf' })) cases.push(c)
  assert.deepEqual(cases.map((c) => [c.input, c.expected_output]), [
    [[{ role: 'user', content: [{ type: 'text', value: 'What is 2+2?' }] }], [{ role: 'assistant', content: '4' }]],
    [[{ role: 'system', content: '' }, { role: 'user', content: 'Hi', name: 'ann' }], undefined],
  ])
  const { convert } = await import('../../src/convert.ts')
  for (const to of ['langsmith', 'evalcase', 'deepeval', 'evals'] as const) {
    const output = join(work, `chat-nulls-${to}.jsonl`)
    await convert({ input, output, from: 'hf', to })
    const back = join(work, `chat-nulls-${to}-back.jsonl`)
    await convert({ input: output, output: back, from: to, to: 'hf' })
    assert.deepEqual(readFileSync(back, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown), rows, to)
  }
  const langsmith = JSON.parse(readFileSync(join(work, 'chat-nulls-langsmith.jsonl'), 'utf8').split('\n')[0]!) as { inputs: unknown; outputs: unknown }
  assert.deepEqual([langsmith.inputs, langsmith.outputs], [{ messages: [{ role: 'user', content: [{ type: 'text', text: 'What is 2+2?' }] }] }, { message: { role: 'assistant', content: '4' } }])
})

test('a Parquet chat column stays the one column of a table written from it, when every chat is one question and one answer', async () => {
  const S = { dtype: 'string', _type: 'Value' }
  const message = new Struct([new Field('role', new Utf8(), true), new Field('content', new Utf8(), true)])
  const chats = [
    [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'ok' }],
    [{ role: 'user', content: null }, { role: 'assistant', content: 'fine' }],
  ]
  const source = await featuresParquet('plain-chats.parquet', { messages: { feature: { role: S, content: S }, _type: 'List' } }, [vectorFromArray(chats, new List(new Field('item', message, true))).data[0]!])
  for (const extension of ['csv', 'jsonl']) {
    const output = join(work, `plain-chats.${extension}`)
    const { convert } = await import('../../src/convert.ts')
    await convert({ input: source, output, from: 'hf', to: 'hf' })
    const written = (await rows(output)) as Record<string, unknown>[]
    assert.deepEqual(written.map((r) => Object.keys(r).filter((k) => k !== 'evalferry')), [['messages'], ['messages']], extension)
    const back = join(work, `plain-chats-back-${extension}.parquet`)
    await convert({ input: output, output: back, from: 'hf', to: 'hf' })
    assert.deepEqual(await rows(back), chats.map((messages) => ({ messages })), extension)
  }
})

test('a column named evalferry in a dataset with features is written in the carry column of a table, and read back as it was', async () => {
  // A viewer response whose features name text and label, and whose first row has only a column "evalferry".
  const source = join(work, 'evalferry-column.json')
  const features = [
    { feature_idx: 0, name: 'text', type: { dtype: 'string', _type: 'Value' } },
    { feature_idx: 1, name: 'label', type: { names: ['neg', 'pos'], _type: 'ClassLabel' } },
  ]
  const rows = [
    { row_idx: 0, row: { evalferry: { reviewer: 'a' } }, truncated_cells: [] },
    { row_idx: 1, row: { text: 'Great film', label: 1 }, truncated_cells: [] },
  ]
  writeFileSync(source, JSON.stringify({ features, rows, num_rows_total: 2, num_rows_per_page: 100, partial: false }))
  const cases = await readAll(source)
  assert.deepEqual(cases[0]!.metadata, { evalferry: { reviewer: 'a' }, row_idx: 0 })
  for (const [to, name] of [['hf', 'rows.csv'], ['csv', 'table.csv'], ['hf', 'rows.parquet']] as const) {
    const output = join(work, name)
    await write(cases, output, { to })
    const back: EvalCase[] = []
    for await (const c of read(output, { from: to })) back.push(c)
    assert.deepEqual(back.map((c) => c.metadata), cases.map((c) => c.metadata), `${to} ${name}`)
  }
})

test('a feature whose dtype is named as a property every object has (constructor) is no known type: the column is written from its values', async () => {
  const source = join(work, 'dtype-constructor.json')
  const features = [{ feature_idx: 0, name: 'text', type: { dtype: 'constructor', _type: 'Value' } }]
  writeFileSync(source, JSON.stringify({ features, rows: [{ row_idx: 0, row: { text: 'hello' }, truncated_cells: [] }], num_rows_total: 1, num_rows_per_page: 100, partial: false }))
  const cases = await readAll(source)
  const output = join(work, 'dtype-constructor.parquet')
  await write(cases, output, { to: 'hf' })
  const back: EvalCase[] = []
  for await (const c of read(output, { from: 'hf' })) back.push(c)
  assert.deepEqual(back.map((c) => c.metadata), [{ text: 'hello', row_idx: 0 }])
  assert.deepEqual(back[0]!.extras?.hf?.$file, cases[0]!.extras?.hf?.$file)
})

test('a dict feature of no keys, which Parquet cannot hold as a struct, has its column written as JSON text and read back as it was', async () => {
  const viewer = JSON.parse(readFileSync(real('viewer-first-rows-image-column.json'), 'utf8')) as { features: { name: string; type: unknown }[] }
  for (const f of viewer.features) f.type = {}
  const source = join(work, 'empty-dict-feature.json')
  writeFileSync(source, JSON.stringify(viewer))
  const cases = await readAll(source)
  const output = join(work, 'empty-dict-feature.parquet')
  await write(cases, output, { to: 'hf' })
  const back = await readAll(output)
  assert.deepEqual(back.map((c) => c.metadata), cases.map((c) => c.metadata))
})

test("chat messages written to hf Parquet are datasets' List({role, content}), not a JSON-text column; content blocks stay JSON text", async () => {
  const S = { dtype: 'string', _type: 'Value' }
  const chat = (id: string): EvalCase => ({
    id,
    input: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: `Question ${id}?` },
      { role: 'assistant', content: 'Which one?' },
      { role: 'user', content: 'The first.' },
    ],
    expected_output: [{ role: 'assistant', content: 'Yes.' }],
  })
  const written = await writtenParquet([chat('a'), chat('b')], 'chat-list.parquet')
  assert.deepEqual(written.features, { id: S, messages: { feature: { role: S, content: S }, _type: 'List' } })
  assert.deepEqual(written.types, ['Utf8', 'List<Struct<{role:Utf8, content:Utf8}>>'])
  const messages = (id: string) => [...chat(id).input!, ...(chat(id).expected_output as Message[])]
  assert.deepEqual(written.rows, [{ id: 'a', messages: messages('a') }, { id: 'b', messages: messages('b') }])
  // Features that writing gives again from the cases need not travel with them.
  assert.deepEqual(await readAll(written.path), [chat('a'), chat('b')])

  // Content blocks are no text: a struct of role and text would not hold them.
  const blocks: EvalCase = { id: 'c', input: [{ role: 'user', content: [{ type: 'text', value: 'See' }, { type: 'file', value: 'a.md' }] }] }
  const mixed = await writtenParquet([chat('a'), blocks], 'chat-blocks.parquet')
  assert.deepEqual(mixed.types, ['Utf8', 'Utf8'])
  assert.deepEqual(await readAll(mixed.path), [chat('a'), blocks])
})

test("a CSV's text cells of a list field (a context of one passage) are a text column in hf Parquet and JSON Lines, as datasets reads the CSV; a column that also holds lists stays a list", async () => {
  const S = { dtype: 'string', _type: 'Value' }
  const csv = join(work, 'one-passage.csv')
  const table = 'question,context,answer,retrieval_context\nWhat is the capital of France?,Paris is the capital of France.,Paris,"[""Paris is big"",""Paris is old""]"\nWhere is Rome?,"Rome is in Italy, on the Tiber.",Italy,Rome is old\nWhy?,,Because,\n'
  writeFileSync(csv, table)
  const parquet = join(work, 'one-passage.parquet')
  await convert({ input: csv, output: parquet, from: 'csv', to: 'hf' })
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(parquet))
  const features = (JSON.parse(metadata.key_value_metadata!.find((kv) => kv.key === 'huggingface')!.value!) as { info: { features: Record<string, unknown> } }).info.features
  assert.deepEqual(features, { question: S, context: S, answer: S, retrieval_context: { feature: S, _type: 'List' } })
  const expectedRows = [
    { question: 'What is the capital of France?', context: 'Paris is the capital of France.', answer: 'Paris', retrieval_context: ['Paris is big', 'Paris is old'] },
    { question: 'Where is Rome?', context: 'Rome is in Italy, on the Tiber.', answer: 'Italy', retrieval_context: ['Rome is old'] },
    { question: 'Why?', context: null, answer: 'Because', retrieval_context: null },
  ]
  assert.deepEqual(await rows(parquet), expectedRows)

  const jsonl = join(work, 'one-passage.jsonl')
  await convert({ input: csv, output: jsonl, from: 'csv', to: 'hf' })
  assert.deepEqual(await rows(jsonl), [expectedRows[0], expectedRows[1], { question: 'Why?', answer: 'Because' }])

  // The same cases, and the same cells back in a CSV, with no column added.
  const source: EvalCase[] = []
  for await (const c of read(csv, { from: 'csv' })) source.push(c)
  assert.deepEqual((await readAll(parquet)).map((c) => c.context), source.map((c) => c.context))
  const back = join(work, 'one-passage.back.csv')
  await convert({ input: parquet, output: back, from: 'hf', to: 'csv' })
  assert.equal(readFileSync(back, 'utf8'), table)
})
