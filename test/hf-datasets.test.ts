/**
 * Hugging Face `datasets` is the judge of the hf files evalferry writes: `load_dataset` (the parquet
 * and json builders, on local files) of every Parquet and JSON Lines file written from each real
 * fixture and each of the repository's own gives the rows evalferry wrote, under the features the
 * file names; and where `datasets` reads the source itself, the same rows and features as the source.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { FormatOption } from '../adapters/types.ts'
import { readRecords } from '../src/codecs/index.ts'
import { CARRY_KEY, isJsonObject, type JsonValue } from '../src/model.ts'
import { convert } from '../src/convert.ts'
import { ROOT, SHARED_FIXTURES } from './helpers/cli.ts'
import { compatPython, judgedBy } from './helpers/compat.ts'
import { tempDir } from './helpers/temp.ts'

const work = tempDir('evalferry-hf-datasets-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

/** Every file under `dir` that holds data (not the notes beside it, nor the expected outputs of tests). */
function dataFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) {
      // Files made to fail, and files of other kinds of test (spreadsheets, YAML codec cases).
      if (!['bad', 'excel', 'yaml'].includes(name)) out.push(...dataFiles(path))
    } else if (/\.(jsonl?|csv|tsv|yaml|yml|parquet)(\.gz)?$/.test(name) && !/\.(cases|expect)\.json$/.test(name) && !name.includes('schema')) out.push(path)
  }
  return out
}

const OWN = join(ROOT, 'test', 'fixtures')
const sources = [...dataFiles(SHARED_FIXTURES), ...dataFiles(OWN)]

/** The format of a repository fixture is its folder's name; a real file's is what detection names. */
function formatOf(source: string): FormatOption | undefined {
  if (!source.startsWith(OWN)) return undefined
  return relative(OWN, source).split('/')[0] as FormatOption
}

/** What `datasets` gives for each file: its features as JSON and its rows, media undecoded, bytes as base64. */
const LOAD = `
import base64, datetime, decimal, json, sys
import datasets
datasets.disable_progress_bars()
datasets.logging.set_verbosity_error()

def plain(v):
    if isinstance(v, bytes): return base64.b64encode(v).decode()
    if isinstance(v, (datetime.datetime, datetime.date, datetime.time)): return v.isoformat()
    if isinstance(v, decimal.Decimal): return str(v)
    raise TypeError(type(v).__name__)

out = []
for job in json.load(sys.stdin):
    try:
        d = datasets.load_dataset(job['builder'], data_files=job['path'], split='train', cache_dir=job['cache'])
        for name, feature in d.features.items():
            if type(feature).__name__ in ('Image', 'Audio', 'Video', 'Pdf'):
                d = d.cast_column(name, type(feature)(decode=False))
        out.append({'features': d.features.to_dict(), 'rows': d.to_list()})
    except Exception as e:
        out.append({'error': type(e).__name__ + ': ' + str(e)})
sys.stdout.write(json.dumps(out, default=plain, ensure_ascii=True))
`

interface Loaded {
  features?: Record<string, JsonValue>
  rows?: Record<string, JsonValue>[]
  error?: string
}

/** The records of a written file as evalferry's codec reads them, and the features a Parquet file names. */
async function recordsOf(path: string): Promise<{ records: Record<string, JsonValue>[]; features: Record<string, JsonValue> }> {
  const records: Record<string, JsonValue>[] = []
  const parquet = path.endsWith('.parquet')
  const options = { file: path, recordKeys: [], header: {}, columns: [] as string[], schemaMetadata: {} as Record<string, string> }
  for await (const r of readRecords(parquet ? 'parquet' : 'jsonl', path, options)) records.push(r.value as Record<string, JsonValue>)
  const meta = options.schemaMetadata.huggingface
  const features = meta ? (JSON.parse(meta) as { info: { features: Record<string, JsonValue> } }).info.features : {}
  return { records, features }
}

/** A row as `datasets` gives it: every column, null where the record has no value. */
function asDatasetRow(record: Record<string, JsonValue>, columns: string[]): Record<string, JsonValue> {
  return Object.fromEntries(columns.map((c) => [c, Object.hasOwn(record, c) ? record[c]! : null]))
}

const INT64_MAX = 2n ** 63n - 1n

const TIMESTAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)?$/

/**
 * Values in one spelling where two spell one value: a timestamp's fraction without its trailing
 * zeros and UTC as +00:00 (Python's isoformat), a float to 15 digits (`datasets` reads a float of
 * a JSON Lines column of mixed kinds through text: 0.95 comes back 0.9500000000000001).
 */
function spelled(value: JsonValue): JsonValue {
  if (typeof value === 'string') {
    const t = TIMESTAMP.exec(value)
    if (!t) return value
    const fraction = (t[2] ?? '').replace(/0+$/, '')
    return `${t[1]}${fraction ? `.${fraction}` : ''}${t[3] === 'Z' ? '+00:00' : (t[3] ?? '')}`
  }
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(15))
  if (Array.isArray(value)) return value.map(spelled)
  if (isJsonObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, spelled(v)]))
  return value
}

/**
 * A written value as `datasets` gives it under `feature`. In a JSON Lines column of values of mixed
 * kinds, which `datasets` 5 reads as a Json feature, a text that is itself JSON ("2") comes back as
 * the value it spells (2): its loader stores the text as it is, not as JSON text.
 */
function underFeature(value: JsonValue, feature: JsonValue | undefined): JsonValue {
  if (value === null || !isJsonObject(feature)) return value
  if (feature._type === 'Json') {
    if (typeof value !== 'string') return value
    // An integer past 64 bits stays text.
    if (/^-?\d+$/.test(value) && (BigInt(value) > INT64_MAX || BigInt(value) < -INT64_MAX - 1n)) return value
    try {
      return JSON.parse(value) as JsonValue
    } catch {
      return value
    }
  }
  if (feature._type === 'List' || feature._type === 'LargeList') return Array.isArray(value) ? value.map((v) => underFeature(v, feature.feature)) : value
  if (feature._type === undefined && isJsonObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, underFeature(v, feature[k])]))
  return value
}

/** A row without the carry column that `exceptCarry` says the source had none of. */
function withoutCarry(row: Record<string, JsonValue>): Record<string, JsonValue> {
  const { [CARRY_KEY]: _carry, ...rest } = row
  return rest
}

interface Written {
  source: string
  path: string
  builder: 'parquet' | 'json'
}

/** Sources `datasets` reads as they are: Hugging Face rows in JSON Lines or Parquet. */
function datasetsReads(source: string): 'parquet' | 'json' | undefined {
  if (!/\/hf\//.test(source)) return undefined
  if (source.endsWith('.parquet')) return 'parquet'
  return /\.jsonl(\.gz)?$/.test(source) ? 'json' : undefined
}

test('datasets loads every hf file evalferry writes from each fixture, with the rows written and the features the file names, and those of an hf source', judgedBy('python'), async (t) => {
  const written: Written[] = []
  const failed: string[] = []
  for (const [i, source] of sources.entries()) {
    for (const [extension, builder] of [['parquet', 'parquet'], ['jsonl', 'json']] as const) {
      const output = join(work, `${i}.${extension}`)
      const from = formatOf(source)
      try {
        await convert({ input: source, output, to: 'hf', ...(from ? { from } : {}) })
        written.push({ source, path: output, builder })
      } catch (error) {
        failed.push(`${relative(ROOT, source)} → ${extension}: ${(error as Error).message}`)
      }
    }
  }
  const readable = sources.filter((s) => datasetsReads(s) !== undefined)
  const jobs = [...written.map((w) => ({ path: w.path, builder: w.builder })), ...readable.map((s) => ({ path: s, builder: datasetsReads(s)! }))]
  const loaded = JSON.parse(compatPython(LOAD, [], JSON.stringify(jobs.map((j) => ({ ...j, cache: join(work, 'cache') }))))) as Loaded[]
  const ofSource = new Map(readable.map((s, k) => [s, loaded[written.length + k]!]))

  let rows = 0
  let sameAsSource = 0
  for (const [k, w] of written.entries()) {
    const name = `${relative(ROOT, w.source)} → ${w.builder}`
    await t.test(name, async () => {
      const got = loaded[k]!
      assert.equal(got.error, undefined, name)
      const features = got.features!
      const { records, features: named } = await recordsOf(w.path)
      const columns = Object.keys(features)
      assert.deepEqual(columns.toSorted(), [...new Set(records.flatMap((r) => Object.keys(r)))].sort(), `${name}: the columns`)
      const expected = records.map((r) => spelled(Object.fromEntries(Object.entries(asDatasetRow(r, columns)).map(([c, v]) => [c, underFeature(v, features[c])]))))
      assert.deepEqual(spelled(got.rows!), expected, name)
      // A Parquet file loads with the features it names, in the spelling datasets gives back.
      for (const [column, feature] of Object.entries(named)) assert.deepEqual(features[column], feature, `${name}: ${column}`)
      rows += records.length

      const source = ofSource.get(w.source)
      // JSON Lines has no features: a Parquet source's ClassLabel is its name there, its Json the value.
      if (source && !(datasetsReads(w.source) === 'parquet' && w.builder === 'json')) {
        assert.equal(source.error, undefined)
        // The carry column is evalferry's own, where a row holds what the file cannot (a null it tells from no value).
        const carried = !(CARRY_KEY in source.features!)
        const ownFeatures = carried ? withoutCarry(features) : features
        assert.deepEqual(ownFeatures, source.features, `${name}: the source's features`)
        assert.deepEqual(spelled(got.rows!.map((r) => (carried ? withoutCarry(r) : r))), spelled(source.rows!), `${name}: the source's rows`)
        sameAsSource++
      }
    })
  }
  t.diagnostic(`${written.length} files written from ${sources.length} fixtures, loaded by datasets: ${rows} rows as written; ${sameAsSource} files as their source; not converted: ${failed.length ? failed.join('; ') : 'none'}`)
})

test("a CSV's list column of one text a row (a context passage) is, written as hf Parquet and JSON Lines, the text column datasets reads the CSV as", judgedBy('python'), async () => {
  const csv = join(work, 'passages.csv')
  writeFileSync(
    csv,
    'question,context,answer\nWhat is the capital of France?,"Paris is the capital of France, on the Seine.",Paris\nWho wrote Dune?,Dune is a 1965 novel by Frank Herbert.,Frank Herbert\nWhy?,,Because\n',
  )
  const parquet = join(work, 'passages.parquet')
  const jsonl = join(work, 'passages.jsonl')
  await convert({ input: csv, output: parquet, from: 'csv', to: 'hf' })
  await convert({ input: csv, output: jsonl, from: 'csv', to: 'hf' })
  const cache = join(work, 'cache')
  const [source, fromParquet, fromJsonl] = JSON.parse(
    compatPython(LOAD, [], JSON.stringify([{ path: csv, builder: 'csv', cache }, { path: parquet, builder: 'parquet', cache }, { path: jsonl, builder: 'json', cache }])),
  ) as Loaded[]
  assert.equal(source!.error, undefined)
  // The CSV builder reads text through pandas 3, whose strings Arrow holds as large_string: a text column all the same.
  const asText = (features: Record<string, JsonValue>) => JSON.parse(JSON.stringify(features).replaceAll('"large_string"', '"string"')) as Record<string, JsonValue>
  const S = { dtype: 'string', _type: 'Value' }
  assert.deepEqual(asText(source!.features!), { question: S, context: S, answer: S })
  for (const written of [fromParquet!, fromJsonl!]) {
    assert.equal(written.error, undefined)
    assert.deepEqual(written.features, asText(source!.features!))
    assert.deepEqual(written.rows, source!.rows)
  }
})
