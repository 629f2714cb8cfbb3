import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { MESSAGES_AHEAD, parsedBeside, readCsv, readCsvBeside, type BesideRequest } from '../../src/codecs/csv.ts'
import { readRecords } from '../../src/codecs/index.ts'
import type { ReadOptions, SourceRecord } from '../../src/codecs/types.ts'
import { convert } from '../../src/convert.ts'
import { runBatch } from '../../src/batch.ts'
import { fileText } from '../../src/io.ts'
import { repliesBeside, workersRunning, workersStarted } from '../../src/workers.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('csv-beside')
// Where a worker can run beside this thread, one does for files of any size here.
const beside = availableParallelism() >= 2
parsedBeside.fromBytes = 0

function options(progress?: { bytes: number }): ReadOptions {
  return { file: 'in.csv', recordKeys: [], header: {}, columns: [], ...(progress ? { progress } : {}) }
}

/** A seeded generator of numbers in [0, 1), so that a failure names a text that can be made again. */
function random(seed: number): () => number {
  let state = seed
  return () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
}

/**
 * A CSV of `rows` rows under a header: plain and quoted cells with doubled quotes, delimiters and
 * newlines of each kind inside, rows ending in LF, CRLF or CR, blank lines, `""` rows, rows of
 * extra cells; now and then a `sep=` line, a byte-order mark, a column without a name, a quote
 * left open at the end.
 */
function csvText(rows: number, seed: number): string {
  const rnd = random(seed)
  const pick = <T>(items: T[]): T => items[Math.floor(rnd() * items.length)]!
  const delimiter = pick([',', ';', '\t'])
  const quotedChars = ['a', 'b', delimiter, '"', '\n', '\r\n', ' ', 'é', '🚀']
  const plainChars = ['a', 'b', ' ', 'é', '🚀', '1']
  const cell = (): string => {
    const length = Math.floor(rnd() * 12)
    if (rnd() < 0.4) return '"' + Array.from({ length }, () => pick(quotedChars).replace('"', '""')).join('') + '"'
    return Array.from({ length }, () => pick(plainChars)).join('')
  }
  const columns = 1 + Math.floor(rnd() * 4)
  let text = rnd() < 0.1 ? '\ufeff' : ''
  if (rnd() < 0.1) text += `sep=${delimiter}\n`
  text += Array.from({ length: columns }, (_, i) => (rnd() < 0.05 ? '' : `c${i}`)).join(delimiter) + '\n'
  for (let r = 0; r < rows; r++) {
    const roll = rnd()
    if (roll < 0.03) text += '\n'
    else if (roll < 0.05) text += '""'
    else text += Array.from({ length: columns + (rnd() < 0.02 ? 1 : 0) }, cell).join(delimiter)
    text += pick(['\n', '\n', '\r\n', '\r'])
  }
  if (rnd() < 0.05) text += '"open'
  return text
}

/** What reading gives, records and the fault that ended it, in a form to compare. */
async function outcome(records: AsyncIterable<SourceRecord>, opts: ReadOptions) {
  const read: unknown[] = []
  let fault: unknown
  try {
    for await (const r of records) read.push([r.value, r.line, r.index, r.error?.message, r.error?.location])
  } catch (error) {
    const e = error as { name: string; code?: string; message: string; location?: unknown }
    fault = { name: e.name, code: e.code, message: e.message, location: e.location }
  }
  return { read, fault, columns: opts.columns }
}

test('a CSV read and parsed beside this thread gives the records, lines and faults of one read in this thread', async () => {
  const before = workersStarted()
  let files = 0
  for (let seed = 1; seed <= 40; seed++) {
    const path = join(dir, `t${seed}.csv`)
    writeFileSync(path, csvText(seed === 40 ? 40_000 : 30 + seed * 5, seed))
    const [here, there] = [options(), options()]
    const expected = await outcome(readCsv(fileText({ path }), here), here)
    const got = await outcome(readCsvBeside({ path }, there), there)
    assert.deepEqual(got, expected, `seed ${seed}`)
    files++
  }
  // The largest file spans more messages than the worker may post ahead (32): it waits for room.
  assert.ok(readFileSync(join(dir, 't40.csv'), 'utf8').length > 40 * (16 << 10), `${readFileSync(join(dir, 't40.csv')).length} bytes`)
  assert.equal(workersStarted(), before + (beside ? files : 0))
  assert.equal(workersRunning(), 0)
})

test('a range of a CSV after its header (a shard, a part) reads beside as in this thread, its lines counted from where it starts', async () => {
  const path = join(dir, 'ranged.csv')
  const text = csvText(3000, 99)
  writeFileSync(path, text)
  const bytes = Buffer.from(text)
  // A range that starts at a row: after the header and 100 more rows of the in-thread read.
  const rows = await outcome(readCsv(fileText({ path }), options()), options())
  const line = (rows.read[100] as [unknown, number])[1]
  let start = 0
  for (let seen = 1; seen < line; start++) if (bytes[start] === 0x0a || (bytes[start] === 0x0d && bytes[start + 1] !== 0x0a)) seen++
  const header = text.slice(0, text.search(/\r\n|\n|\r/) + 1)
  const part = { range: { start, end: bytes.length }, prefix: header }
  const read = (parseThread: boolean) => {
    const opts: ReadOptions = { ...options(), continuation: { line, index: 100 }, parseThread }
    return outcome(readRecords('csv', path, opts, part), opts)
  }
  const [here, there] = [await read(false), await read(true)]
  assert.ok(here.read.length > 2000)
  assert.deepEqual(there, here)
  assert.deepEqual(here.read[0], rows.read[100])
})

test('a gzip-compressed CSV is inflated by the worker that parses it, as in this thread', async () => {
  const path = join(dir, 'packed.csv.gz')
  writeFileSync(path, gzipSync(csvText(5000, 21)))
  const read = (parseThread: boolean) => {
    const opts: ReadOptions = { ...options({ bytes: 0 }), parseThread }
    return outcome(readRecords('csv', path, opts), opts).then((o) => ({ ...o, bytes: opts.progress!.bytes }))
  }
  const here = await read(false)
  assert.ok(here.read.length > 4000)
  assert.equal(here.bytes, readFileSync(path).length)
  assert.deepEqual(await read(true), here)
})

test('beside, a fault in reading the file comes after the records before it, as in this thread, and the worker is gone', async () => {
  const path = join(dir, 'bad-utf8.csv')
  const text = csvText(20_000, 7)
  const cut = Buffer.from(text.slice(0, Math.floor(text.length * 0.6)))
  writeFileSync(path, Buffer.concat([cut, Buffer.from([0xff, 0xfe, 0x41]), Buffer.from(text.slice(Math.floor(text.length * 0.6)))]))
  const [here, there] = [options(), options()]
  const expected = await outcome(readCsv(fileText({ path }), here), here)
  assert.equal((expected.fault as { code: string }).code, 'E_PARSE')
  assert.match((expected.fault as { message: string }).message, /UTF-8/)
  assert.ok(expected.read.length > 1000)
  assert.deepEqual(await outcome(readCsvBeside({ path }, there), there), expected)
  assert.equal(workersRunning(), 0)
})

test('beside, a row past the record limit is refused at its line, as in this thread', async () => {
  const path = join(dir, 'long-row.csv')
  writeFileSync(path, `q,a\n1,x\n2,"${'y'.repeat(33 << 20)}"\n`)
  const [here, there] = [options(), options()]
  const expected = await outcome(readCsv(fileText({ path }), here), here)
  assert.deepEqual(expected.read, [[{ q: '1', a: 'x' }, 2, 0, undefined, undefined]])
  assert.match((expected.fault as { message: string }).message, /longer than/)
  assert.deepEqual(await outcome(readCsvBeside({ path }, there), there), expected)
})

test('a reader stopped early ends its worker; the bytes read are counted as they are parsed, all of them at the end', async () => {
  const path = join(dir, 'stopped.csv')
  writeFileSync(path, csvText(20_000, 3))
  let taken = 0
  for await (const _ of readCsvBeside({ path }, options())) if (++taken === 10) break
  assert.equal(taken, 10)
  assert.equal(workersRunning(), 0)
  const progress = { bytes: 0 }
  const seen: number[] = []
  for await (const _ of readCsvBeside({ path }, options(progress))) seen.push(progress.bytes)
  assert.equal(progress.bytes, readFileSync(path).length)
  assert.ok(seen[0]! < progress.bytes, 'counted as the file is read, not only at its end')
})

test('a file smaller than the bytes it takes is parsed in this thread', async () => {
  const path = join(dir, 'small.csv')
  writeFileSync(path, 'q,a\n1,2\n')
  const before = workersStarted()
  parsedBeside.fromBytes = 64 << 20
  try {
    assert.deepEqual((await outcome(readCsvBeside({ path }, options()), options())).read, [[{ q: '1', a: '2' }, 2, 0, undefined, undefined]])
  } finally {
    parsedBeside.fromBytes = 0
  }
  assert.equal(workersStarted(), before)
})

test('a conversion parsed beside writes the bytes of one parsed in this thread; a batch asked for one job parses in its own thread, asked for two beside it', async () => {
  const input = join(dir, 'table.csv')
  const rnd = random(5)
  let text = 'id,question,contexts\n'
  for (let i = 0; i < 3000; i++) text += `q${i},"What is ""${i}""?\n${'é'.repeat(Math.floor(rnd() * 40))}","[""a${i}"", ""b""]"\n`
  writeFileSync(input, text)
  const out = (name: string) => join(dir, `${name}.jsonl`)
  const before = workersStarted()
  const alone = await convert({ input, output: out('here'), from: 'table', to: 'evalcase' })
  const besideReport = await convert({ input, output: out('beside'), from: 'table', to: 'evalcase', parseThread: true })
  assert.equal(workersStarted(), before + (beside ? 1 : 0))
  assert.equal(besideReport.records.written, 3000)
  assert.deepEqual(besideReport.records, alone.records)
  assert.equal(readFileSync(out('beside'), 'utf8'), readFileSync(out('here'), 'utf8'))
  const job = { input, output: out('batch'), from: 'table' as const, to: 'evalcase' as const }
  await runBatch([job], { jobs: 1 })
  assert.equal(workersStarted(), before + (beside ? 1 : 0))
  await runBatch([job], { jobs: 2 })
  assert.equal(workersStarted(), before + (beside ? 2 : 0))
  assert.equal(readFileSync(out('batch'), 'utf8'), readFileSync(out('here'), 'utf8'))
  assert.equal(workersRunning(), 0)
})

test('what a worker posts before its replies are read, while the cores are looked at say, is kept', { timeout: 60_000 }, async () => {
  const path = join(dir, 'early.csv')
  writeFileSync(path, csvText(3000, 11))
  const rows = (await outcome(readCsv(fileText({ path }), options()), options())).read.length
  const request: BesideRequest = { text: { path }, delimiter: undefined, counted: false }
  const replies = await repliesBeside<{ parses: { widths: Int32Array }[]; last?: true }>('csv-worker', {}, true, request, MESSAGES_AHEAD, (m) => m.last === true)
  assert.ok(replies)
  // Long enough for the worker to start and post its first messages before anyone reads them.
  await new Promise((resolve) => setTimeout(resolve, 3000))
  let parsed = 0
  for await (const message of replies) for (const parse of message.parses) parsed += parse.widths.length
  // The header row, and any blank lines, are rows parsed that are not records.
  assert.ok(parsed > rows && parsed < rows + 200, `${parsed} rows parsed, ${rows} records`)
  assert.equal(workersRunning(), 0)
})
