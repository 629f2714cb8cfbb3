/**
 * Eval-like datasets for the bench, generated from a seeded PRNG so that every run on every machine
 * measures the same bytes: long texts with quotes, commas, newlines and non-ASCII text, lists of
 * retrieved contexts and nested metadata, rendered as each format writes them.
 */
import { createWriteStream, type WriteStream } from 'node:fs'
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises'
import { once } from 'node:events'
import { dirname } from 'node:path'
import { Field, Float64, Int32, List, RecordBatch, Schema, Struct, Table, tableToIPC, Utf8, vectorFromArray, makeData } from 'apache-arrow'
import { Compression, Table as WasmTable, transformParquetStream, WriterPropertiesBuilder, type RecordBatch as WasmRecordBatch } from 'parquet-wasm'
import { stringify as stringifyYaml } from 'yaml'
import { writeFooter } from '../src/codecs/parquet-index.ts'
import { ThriftWriter } from '../src/codecs/thrift.ts'

/** Bumped whenever a generator changes, so cached files are regenerated. */
export const DATA_VERSION = 1

/** mulberry32: tiny, fast and good enough to make varied text deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = (
  'the a of to and in is that for it as with was on be by this are or from at which an have not but they ' +
  'model answer question context retrieval policy refund customer agent tool call function evaluate score ' +
  'latency token prompt response expected output input document section page chunk dataset golden case ' +
  'rubric criterion outcome system user assistant message reasoning summary invoice shipping warranty order'
).split(' ')
/** Non-ASCII words (accents, CJK, RTL, emoji) so that UTF-8 decoding and escaping are exercised. */
const UNICODE_WORDS = ['naïve', 'Zürich', 'café', '東京', 'データ', 'Ελληνικά', 'العربية', 'привет', 'ñandú', '🚀', 'ß', '✓', '日本語の文']
const DOMAINS = ['billing', 'shipping', 'support', 'legal', 'medical', 'code', 'math', 'travel']
const DIFFICULTIES = ['easy', 'medium', 'hard']

export interface Sample {
  id: string
  question: string
  answer: string
  contexts: string[]
  outcome: string
  difficulty: string
  domain: string
  tags: string[]
  source: { doc: string; page: number; section: string }
  score: number
  turns: number
  createdAt: string
}

/** Generates samples; `text` never holds `|`, which DeepEval uses to join list items. */
export class SampleGenerator {
  private readonly random: () => number
  private count = 0

  constructor(seed: number) {
    this.random = prng(seed)
  }

  private int(n: number): number {
    return Math.floor(this.random() * n)
  }

  private pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!
  }

  /** About `chars` characters of sentences with commas, quotes, apostrophes and line breaks. */
  text(chars: number): string {
    let out = ''
    let sentence = 0
    while (out.length < chars) {
      const r = this.random()
      let word = r < 0.06 ? this.pick(UNICODE_WORDS) : this.pick(WORDS)
      if (sentence === 0) word = word[0]!.toUpperCase() + word.slice(1)
      if (r > 0.97) word = `"${word}"`
      else if (r > 0.955) word = `'${word}'`
      out += word
      sentence++
      const end = this.random()
      if (sentence > 6 && end < 0.12) {
        out += end < 0.02 ? '?' : '.'
        sentence = 0
        out += end < 0.03 ? '\n' : end < 0.035 ? '\n\n' : ' '
      } else out += end < 0.2 ? ', ' : ' '
    }
    return out.trimEnd()
  }

  /** A short labelled example, as classification and short-answer datasets hold. */
  short(): { id: string; question: string; answer: string; label: string } {
    const n = this.count++
    return { id: `ex-${n + 1}`, question: this.text(20 + this.int(80)), answer: this.text(3 + this.int(30)), label: this.pick(DIFFICULTIES) }
  }

  /** The cells of a wide table's row: an id, a question, an answer, then `columns` short values. */
  wide(columns: number): string[] {
    const { id, question, answer } = this.short()
    const cells = [id, question, answer]
    for (let i = 0; i < columns; i++) cells.push(this.int(4) === 0 ? String(this.int(1000)) : this.text(4 + this.int(12)))
    return cells
  }

  next(): Sample {
    const n = this.count++
    const contexts: string[] = []
    for (let i = 1 + this.int(4); i > 0; i--) contexts.push(this.text(150 + this.int(600)))
    const tags: string[] = []
    for (let i = this.int(4); i > 0; i--) tags.push(this.pick(WORDS))
    return {
      id: `case-${n + 1}`,
      question: this.text(60 + this.int(400)),
      answer: this.text(80 + this.int(900)),
      contexts,
      outcome: this.text(40 + this.int(120)),
      difficulty: this.pick(DIFFICULTIES),
      domain: this.pick(DOMAINS),
      tags,
      source: { doc: `${this.pick(DOMAINS)}/${this.pick(WORDS)}-${this.int(1000)}.pdf`, page: 1 + this.int(300), section: this.text(20) },
      score: Math.round(this.random() * 1000) / 100,
      turns: 1 + this.int(6),
      createdAt: new Date(Date.UTC(2024, 0, 1) + this.int(365 * 86400) * 1000).toISOString(),
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Renderings, one record per sample

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value
}

/** Python's `json.dumps` spacing, as DeepEval writes JSON text into CSV cells. */
function pythonJson(value: unknown): string {
  return JSON.stringify(value).replace(/("(?:[^"\\]|\\.)*")|([,:])/g, (_, str: string | undefined, sep: string) => str ?? `${sep} `)
}

export const TABLE_COLUMNS = ['id', 'question', 'answer', 'contexts', 'difficulty', 'domain', 'tags', 'source', 'score']

/** A plain table: well-known column names, lists and objects as JSON text. */
export function tableRow(s: Sample): string {
  return [s.id, s.question, s.answer, JSON.stringify(s.contexts), s.difficulty, s.domain, JSON.stringify(s.tags), JSON.stringify(s.source), String(s.score)]
    .map(csvCell)
    .join(',') + '\n'
}

export const SHORT_COLUMNS = ['id', 'question', 'answer', 'label']

/** The columns of a wide table beside its id, question and answer: features, as a spreadsheet export has them. */
export const WIDE_COLUMNS = 997

/** A table of many short rows: what a conversion spends per record, rather than per byte, shows. */
export function shortRow(s: ReturnType<SampleGenerator['short']>): string {
  return [s.id, s.question, s.answer, s.label].map(csvCell).join(',') + '\n'
}

export const DEEPEVAL_COLUMNS = [
  'input', 'actual_output', 'expected_output', 'retrieval_context', 'context', 'name', 'comments',
  'source_file', 'tools_called', 'expected_tools', 'additional_metadata', 'custom_column_key_values',
]

/** DeepEval `save_as('csv')`: `|`-joined lists, JSON text with Python spacing, `\r\n` rows. */
export function deepevalRow(s: Sample): string {
  const tool = { name: 'search', type: 'FUNCTION', inputParameters: { query: s.question.slice(0, 40) }, output: { hits: s.turns } }
  const cells = [
    s.question,
    '',
    s.answer,
    s.contexts.slice(1).join('|'),
    s.contexts[0] ?? '',
    s.id,
    s.outcome,
    s.source.doc,
    pythonJson([tool]),
    pythonJson([{ name: 'search', type: 'FUNCTION', description: 'knowledge-base search' }]),
    pythonJson({ difficulty: s.difficulty, domain: s.domain, tags: s.tags, source: s.source, score: s.score }),
    pythonJson({ team: s.domain, created: s.createdAt }),
  ]
  return cells.map(csvCell).join(',') + '\r\n'
}

/** A LangSmith example as the SDK exports it. */
export function langsmithLine(s: Sample, n: number): string {
  return (
    JSON.stringify({
      id: uuid(n),
      dataset_id: uuid(0),
      inputs: { question: s.question, context: s.contexts },
      outputs: { answer: s.answer },
      metadata: { dataset_split: ['test'], difficulty: s.difficulty, domain: s.domain, tags: s.tags, source: s.source, score: s.score },
      created_at: s.createdAt,
      modified_at: s.createdAt,
    }) + '\n'
  )
}

/**
 * LangSmith JSON Lines whose middle record holds almost all the bytes: one document as its
 * context, as an export of long-document examples has (at most 24 MB, under the record limit).
 */
async function writeLongJsonl(path: string, samples: SampleGenerator, bytes: number): Promise<number> {
  const file = new TextFile(path)
  await file.write(langsmithLine(samples.next(), 1))
  const s = samples.next()
  const paragraphs: string[] = []
  for (let size = 0; size < Math.min(bytes, 24e6); size += paragraphs[paragraphs.length - 1]!.length + 2) paragraphs.push(samples.next().answer)
  await file.write(langsmithLine({ ...s, contexts: [paragraphs.join('\n\n')] }, 2))
  await file.write(langsmithLine(samples.next(), 3))
  await file.close()
  return 3
}

function uuid(n: number): string {
  const hex = n.toString(16).padStart(12, '0')
  return `0b1e5a7c-3f2d-4e8a-9c1b-${hex}`
}

/** An evalcase case with a system message, a user message, rubrics and metadata. */
export function evalcaseCase(s: Sample): Record<string, unknown> {
  return {
    id: s.id,
    expected_outcome: s.outcome,
    input: [
      { role: 'system', content: 'You answer from the retrieved documents only.' },
      { role: 'user', content: [{ type: 'text', value: s.question }, { type: 'text', value: s.contexts[0] ?? '' }] },
    ],
    expected_output: s.answer,
    rubrics: s.tags.length ? s.tags.map((t, i) => ({ id: `r${i + 1}`, expected_outcome: `mentions ${t}`, weight: 1, required: i === 0 })) : undefined,
    metadata: { difficulty: s.difficulty, domain: s.domain, source: s.source, score: s.score },
  }
}

// ---------------------------------------------------------------------------------------------
// Files

/** Writes text chunks with back-pressure and counts the bytes. */
class TextFile {
  readonly stream: WriteStream
  bytes = 0
  private buffer = ''
  constructor(path: string) {
    this.stream = createWriteStream(path)
  }
  async write(text: string): Promise<void> {
    this.buffer += text
    this.bytes += Buffer.byteLength(text)
    if (this.buffer.length >= 1 << 20) await this.flush()
  }
  private async flush(): Promise<void> {
    const chunk = this.buffer
    this.buffer = ''
    if (!this.stream.write(chunk)) await once(this.stream, 'drain')
  }
  async close(): Promise<void> {
    await this.flush()
    this.stream.end()
    await once(this.stream, 'finish')
  }
}

export type DatasetKind = 'table-csv' | 'short-csv' | 'wide-csv' | 'deepeval-csv' | 'langsmith-jsonl' | 'long-jsonl' | 'hf-parquet' | 'hf-parquet-one-group' | 'hf-parquet-zstd' | 'hf-parquet-pandas' | 'evalcase-yaml'

export interface Dataset {
  path: string
  bytes: number
  records: number
}

/** Writes a dataset of about `bytes` bytes (for Parquet: of row text before compression) to `path`. */
export async function generate(kind: DatasetKind, path: string, bytes: number, seed: number): Promise<Dataset> {
  await mkdir(dirname(path), { recursive: true })
  const temp = `${path}.partial`
  const samples = new SampleGenerator(seed)
  let records = 0
  if (kind === 'hf-parquet' || kind === 'hf-parquet-one-group' || kind === 'hf-parquet-zstd' || kind === 'hf-parquet-pandas') {
    records = await writeHfParquet(temp, samples, bytes, kind !== 'hf-parquet', kind === 'hf-parquet-zstd' ? Compression.ZSTD : Compression.SNAPPY)
    if (kind === 'hf-parquet-pandas') await dropPageIndex(temp)
  } else if (kind === 'long-jsonl') {
    records = await writeLongJsonl(temp, samples, bytes)
  } else {
    const file = new TextFile(temp)
    if (kind === 'table-csv') await file.write(TABLE_COLUMNS.join(',') + '\n')
    if (kind === 'short-csv') await file.write(SHORT_COLUMNS.join(',') + '\n')
    if (kind === 'wide-csv') await file.write(['id', 'question', 'answer', ...Array.from({ length: WIDE_COLUMNS }, (_, i) => `feature_${i + 1}`)].join(',') + '\n')
    if (kind === 'deepeval-csv') await file.write(DEEPEVAL_COLUMNS.join(',') + '\r\n')
    if (kind === 'evalcase-yaml') await file.write('description: Generated retrieval QA cases for the evalferry bench\nexecution:\n  target: default\nevalcases:\n')
    while (file.bytes < bytes && kind === 'short-csv') {
      await file.write(shortRow(samples.short()))
      records++
    }
    while (file.bytes < bytes && kind === 'wide-csv') {
      await file.write(samples.wide(WIDE_COLUMNS).map(csvCell).join(',') + '\n')
      records++
    }
    while (file.bytes < bytes && kind !== 'short-csv' && kind !== 'wide-csv') {
      const s = samples.next()
      if (kind === 'table-csv') await file.write(tableRow(s))
      else if (kind === 'deepeval-csv') await file.write(deepevalRow(s))
      else if (kind === 'langsmith-jsonl') await file.write(langsmithLine(s, records + 1))
      else {
        const item = stringifyYaml([evalcaseCase(s)], { lineWidth: 0, minContentWidth: 0 })
        await file.write(item.replace(/^(?=.)/gm, '  '))
      }
      records++
    }
    await file.close()
  }
  await rename(temp, path)
  return { path, bytes: (await stat(path)).size, records }
}

const HF_FEATURES = {
  info: {
    features: {
      id: { dtype: 'string', _type: 'Value' },
      question: { dtype: 'string', _type: 'Value' },
      answer: { dtype: 'string', _type: 'Value' },
      contexts: { feature: { dtype: 'string', _type: 'Value' }, _type: 'List' },
      difficulty: { dtype: 'string', _type: 'Value' },
      score: { dtype: 'float64', _type: 'Value' },
      meta: {
        domain: { dtype: 'string', _type: 'Value' },
        doc: { dtype: 'string', _type: 'Value' },
        page: { dtype: 'int32', _type: 'Value' },
      },
    },
  },
}

/**
 * The Parquet file at `path` with no page index, as pyarrow (and so pandas and `datasets`) writes
 * by default: its footer written again without the column and offset indexes' places (what they
 * took before the footer stays, unread).
 */
async function dropPageIndex(path: string): Promise<void> {
  const bytes = await readFile(path)
  const footerStart = bytes.length - 8 - bytes.readUInt32LE(bytes.length - 8)
  const footer = new ThriftWriter()
  writeFooter(footer, bytes.subarray(footerStart, bytes.length - 8), (chunk) => ({ fields: [...chunk.values()].filter((f) => f.id < 4 || f.id > 7) }))
  const length = Buffer.alloc(4)
  length.writeUInt32LE(footer.length)
  await writeFile(path, Buffer.concat([bytes.subarray(0, footerStart), footer.done(), length, Buffer.from('PAR1')]))
}

/**
 * Hugging Face Parquet: string, list and struct columns, `huggingface` schema metadata, snappy row
 * groups of 5 000 rows, or with `oneGroup` a single row group, as pandas and pyarrow write a table
 * (and DuckDB and pyarrow compress it with zstd).
 */
async function writeHfParquet(path: string, samples: SampleGenerator, bytes: number, oneGroup = false, compression = Compression.SNAPPY): Promise<number> {
  const metaType = new Struct([new Field('domain', new Utf8(), true), new Field('doc', new Utf8(), true), new Field('page', new Int32(), true)])
  const schema = new Schema(
    [
      new Field('id', new Utf8(), true),
      new Field('question', new Utf8(), true),
      new Field('answer', new Utf8(), true),
      new Field('contexts', new List(new Field('item', new Utf8(), true)), true),
      new Field('difficulty', new Utf8(), true),
      new Field('score', new Float64(), true),
      new Field('meta', metaType, true),
    ],
    new Map([['huggingface', JSON.stringify(HF_FEATURES)]]),
  )
  const ROWS = 5000
  let records = 0
  let textBytes = 0
  function* batches(): Generator<WasmRecordBatch> {
    while (textBytes < bytes) {
      const rows: Sample[] = []
      while (rows.length < ROWS && textBytes < bytes) {
        const s = samples.next()
        textBytes += s.question.length + s.answer.length + s.contexts.reduce((n, c) => n + c.length, 0) + 40
        rows.push(s)
      }
      records += rows.length
      const children = [
        vectorFromArray(rows.map((s) => s.id), new Utf8()),
        vectorFromArray(rows.map((s) => s.question), new Utf8()),
        vectorFromArray(rows.map((s) => s.answer), new Utf8()),
        vectorFromArray(rows.map((s) => s.contexts), schema.fields[3]!.type),
        vectorFromArray(rows.map((s) => s.difficulty), new Utf8()),
        vectorFromArray(rows.map((s) => s.score), new Float64()),
        vectorFromArray(rows.map((s) => ({ domain: s.domain, doc: s.source.doc, page: s.source.page })), metaType),
      ].map((v) => v.data[0]!)
      const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children }))
      const wasm = WasmTable.fromIPCStream(tableToIPC(new Table([batch]), 'stream')).recordBatch(0)
      if (!wasm) throw new Error('Arrow IPC round trip lost the record batch')
      yield wasm
    }
  }
  const source = batches()
  const input = new ReadableStream<WasmRecordBatch>({
    pull(controller) {
      const next = source.next()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
  })
  const properties = new WriterPropertiesBuilder()
    .setCompression(compression)
    .setMaxRowGroupSize(oneGroup ? 2 ** 31 - 1 : ROWS)
    .setKeyValueMetadata(new Map([['huggingface', JSON.stringify(HF_FEATURES)]]))
    .build()
  const output = (await transformParquetStream(input, properties)) as ReadableStream<Uint8Array>
  const file = createWriteStream(path)
  for await (const chunk of output as unknown as AsyncIterable<Uint8Array>) {
    if (!file.write(chunk)) await once(file, 'drain')
  }
  file.end()
  await once(file, 'finish')
  return records
}
