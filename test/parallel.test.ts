import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { availableParallelism } from 'node:os'
import { gunzipSync } from 'node:zlib'
import { convert, EvalferryError, type FileConvertOptions } from '../src/index.ts'
import { cutFile, partStats, partWorkers, SPLIT_MIN_BYTES, trimPartWorkers, warmPartWorkers } from '../src/parallel.ts'
import type { ConversionReport } from '../src/report.ts'
import { tempDir } from './helpers/temp.ts'

const dir = tempDir('evalferry-parallel-')
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

/** Text of about `chars` characters with quotes, delimiters, CRLF and LF line breaks and non-ASCII. */
function text(i: number, chars: number): string {
  const words = ['the', 'refund "policy"', 'naïve, café', 'line\nbreak', '東京', 'a;b|c', 'crlf\r\nhere', '""', 'end']
  let out = ''
  for (let k = 0; out.length < chars; k++) out += words[(i * 7 + k) % words.length] + ' '
  return out
}

const cell = (value: string) => (/[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value)

/**
 * A CSV table a little over the split size: multiline quoted cells, blank lines, a bad row at
 * `badRow`; with `mixed`, rows end in CRLF and every fifth in a lone LF, and a last column `tail`
 * holds `n<i>`, unquoted. Row i's id is `q<i>`, or what `idOf` gives. Returns the number of data rows.
 */
function writeTable(path: string, badRow?: number, mixed = false, idOf?: (i: number) => string | undefined): number {
  let out = mixed ? 'id,question,answer,contexts,difficulty,tail\r\n' : 'id,question,answer,contexts,difficulty\n'
  let i = 0
  for (; out.length < SPLIT_MIN_BYTES * 1.3; i++) {
    const row = [idOf?.(i) ?? `q${i}`, text(i, 300), text(i + 1, 200), JSON.stringify([text(i + 2, 80), text(i + 3, 60)]), i % 3 ? 'easy' : '']
    if (mixed) row.push(`n${i}`)
    const line = i === badRow ? row.map(cell).join(',') + ',extra,cells' : row.map(cell).join(',')
    const eol = mixed && i % 5 !== 0 ? '\r\n' : '\n'
    out += line + eol
    if (i % 997 === 5) out += eol
  }
  writeFileSync(path, out)
  return i
}

/** Lines made by `line` until they pass the size from which a file converts in parts, with some to spare. */
function linesPastSplit(line: (i: number) => string): string[] {
  const lines: string[] = []
  for (let i = 0, size = 0; size < SPLIT_MIN_BYTES * 1.3; i++) {
    lines.push(line(i))
    size += lines[i]!.length
  }
  return lines
}

/**
 * The same conversion in one thread and in parts on two, to one output path; whether their bytes
 * are the same. `inParts`: whether the second must have run in parts (else it fell back to one thread).
 */
async function both(options: FileConvertOptions, inParts = true): Promise<{ one: ConversionReport | Error; parts: ConversionReport | Error; same: boolean }> {
  const output = join(dir, 'out.jsonl')
  const run = async (threads: number) => {
    const report = await convert({ ...options, output, threads }).catch((error: Error) => error)
    let bytes: Buffer | undefined
    try {
      bytes = readFileSync(output)
    } catch {
      bytes = undefined
    }
    rmSync(output, { force: true })
    return { report, bytes }
  }
  const one = await run(1)
  const before = { ...partStats }
  const parts = await run(2)
  const expected = inParts ? { inParts: before.inParts + 1, inOneThread: before.inOneThread } : { inParts: before.inParts, inOneThread: before.inOneThread + 1 }
  if (!(one.report instanceof Error)) assert.deepEqual({ inParts: partStats.inParts, inOneThread: partStats.inOneThread }, expected)
  const same = one.bytes === undefined ? parts.bytes === undefined : parts.bytes !== undefined && one.bytes.equals(parts.bytes)
  return { one: one.report, parts: parts.report, same }
}

test('a large CSV converted in parts on two threads gives the bytes and the report of one thread', async () => {
  const input = join(dir, 'table.csv')
  writeTable(input)
  for (const [from, to] of [
    ['csv', 'evalcase'],
    ['csv', 'langsmith'],
    ['csv', 'hf'],
  ] as const) {
    const { one, parts, same } = await both({ input, output: '', from: from!, to: to! })
    assert.ok(same, `${from} → ${to}: the outputs differ`)
    assert.deepEqual(parts, one)
  }
  // hf rows are under the table's own column names (the first row's difficulty is empty: absent).
  await convert({ input, output: join(dir, 'rows.jsonl'), from: 'csv', to: 'hf', threads: 2 })
  const [first, second] = readFileSync(join(dir, 'rows.jsonl'), 'utf8').split('\n', 2).map((line) => Object.keys(JSON.parse(line)))
  assert.deepEqual(first, ['id', 'question', 'answer', 'contexts'])
  assert.deepEqual(second, ['id', 'question', 'answer', 'contexts', 'difficulty'])
})

test('an id a table repeats is written unique in parts as in one thread: within a part, and across parts in one thread', async () => {
  const input = join(dir, 'repeated-ids.csv')
  // Row 4 repeats q3 (in one part); then the second last row repeats q5 (in a later part).
  writeTable(input, undefined, false, (i) => (i === 4 ? 'q3' : undefined))
  const within = await both({ input, output: '', from: 'csv', to: 'evalcase' })
  assert.ok(within.same)
  assert.deepEqual(within.parts, within.one)
  assert.deepEqual((within.one as ConversionReport).warnings.map((w) => w.message), ['the id "q3" is an earlier case\'s, and evalcase ids are unique: written as "q3-2", with "q3" carried'])

  const rows = writeTable(input)
  writeTable(input, undefined, false, (i) => (i === 4 ? 'q3' : i === rows - 2 ? 'q5' : undefined))
  const across = await both({ input, output: '', from: 'csv', to: 'evalcase' }, false)
  assert.ok(across.same)
  assert.deepEqual(across.parts, across.one)
  const output = join(dir, 'repeated-ids.jsonl')
  await convert({ input, output, from: 'csv', to: 'evalcase', threads: 2 })
  const ids = readFileSync(output, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)
  assert.equal(ids.length, rows)
  assert.equal(new Set(ids).size, rows)
  assert.deepEqual([ids[3], ids[4], ids[5], ids.at(-2)], ['q3', 'q3-2', 'q5', 'q5-2'])
})

test('a CSV whose rows end in CRLF or a lone LF, in any mix, is cut at row ends only and reads every row whole', async () => {
  const input = join(dir, 'mixed.csv')
  const rows = writeTable(input, undefined, true)
  const bytes = readFileSync(input)
  const parts = (await cutFile(input, 'csv', 24)).map(({ part, index }) => ({ ...part.range!, index, line: part.continuation?.line, prefix: part.prefix }))
  assert.equal(parts.length, 24)
  assert.equal(parts[0]!.start, 0)
  assert.equal(parts.at(-1)!.end, bytes.length)
  const header = 'id,question,answer,contexts,difficulty,tail\r\n'
  for (const [k, p] of parts.entries()) {
    // Each range holds about a 24th of the file, and every one after the first is read after the header row.
    assert.ok(p.end - p.start < bytes.length / 20, `range ${k} holds ${p.end - p.start} bytes`)
    if (k > 0) {
      assert.equal(p.start, parts[k - 1]!.end)
      assert.equal(bytes[p.start - 1], 0x0a)
      assert.equal(p.prefix, header)
      // The line a part starts at is one more than the newlines before it, and its index the rows before it.
      assert.equal(p.line, bytes.subarray(0, p.start).toString().split('\n').length)
      assert.equal(bytes.subarray(p.start, p.start + 100).toString().replace(/^[\r\n]+/, '').split(',', 1)[0], `q${p.index}`)
    }
  }
  assert.ok(new Set(parts.map((p) => bytes[p.start - 2])).size > 1, 'parts start after both kinds of row end')
  const { one, parts: inParts, same } = await both({ input, output: '', from: 'csv', to: 'evalcase' })
  assert.ok(same)
  assert.deepEqual(inParts, one)
  assert.ok(!(one instanceof Error))
  assert.equal(one.records.written, rows)

  // Every row's last cell arrives without the CR of its row end; quoted cells keep theirs.
  const output = join(dir, 'mixed.jsonl')
  await convert({ input, output, from: 'csv', to: 'evalcase' })
  const cases = readFileSync(output, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { metadata: { tail: string }; input: string })
  assert.deepEqual(
    cases.map((c) => c.metadata.tail),
    Array.from({ length: rows }, (_, i) => `n${i}`),
  )
  assert.equal(cases[6]!.input, text(6, 300))
  assert.ok(text(6, 300).includes('\r\n'))
})

test('a CSV whose quoted cells have text after their closing quote splits at row ends only and reads each cell as Python does, in parts as in one thread', async () => {
  const input = join(dir, 'tails.csv')
  // Python's csv reads the second cell as `a "b"` + newline + `c<i>d "e"`: quotes after the closing one are the cell's.
  const lines = linesPastSplit((i) => `q${i},"a ""b""\nc"${i}d "e",plain ${'x'.repeat(i % 50)}\n`)
  writeFileSync(input, 'id,question,note\n' + lines.join(''))
  const { one, parts, same } = await both({ input, output: '', from: 'csv', to: 'evalcase' })
  assert.ok(same)
  assert.deepEqual(parts, one)
  const output = join(dir, 'tails.jsonl')
  await convert({ input, output, from: 'csv', to: 'evalcase' })
  const cases = readFileSync(output, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; input: string })
  assert.equal(cases.length, lines.length)
  assert.deepEqual(cases[7], { ...cases[7], id: 'q7', input: 'a "b"\nc7d "e"' })
})

test('a CSV with rows that end in a lone CR converts in one thread, every row whole', async () => {
  // Only the reader can tell where a lone CR ends a row, so the byte scan leaves such files whole.
  const input = join(dir, 'lone-cr.csv')
  let out = 'id,question,tail\n'
  let rows = 0
  for (; out.length < SPLIT_MIN_BYTES * 1.2; rows++) out += `q${rows},${cell(text(rows, 300))},t${rows}` + (rows % 7 === 3 ? '\r' : '\r\n')
  writeFileSync(input, out)
  const { one, parts, same } = await both({ input, output: '', from: 'csv', to: 'evalcase' }, false)
  assert.ok(same)
  assert.deepEqual(parts, one)
  assert.ok(!(one instanceof Error))
  assert.equal(one.records.written, rows)
})

test('a bad row in a later part fails at its own line, as in one thread', async () => {
  const input = join(dir, 'bad.csv')
  writeTable(input, 11000)
  const failed = await both({ input, output: '', from: 'csv', to: 'evalcase' })
  assert.ok(failed.one instanceof Error && failed.parts instanceof Error)
  assert.equal(failed.parts.message, failed.one.message)
  assert.deepEqual((failed.parts as { location?: unknown }).location, (failed.one as { location?: unknown }).location)
  assert.ok(failed.same)
})

test('a large JSON Lines file in parts: same bytes, same report, and an id used in two parts is the same error', async () => {
  const input = join(dir, 'cases.jsonl')
  const lines = linesPastSplit((i) => (i % 1000 === 3 ? '   ' : JSON.stringify({ id: `c${i}`, input: text(i, 400), expected_output: text(i + 1, 200), metadata: { n: i } })))
  writeFileSync(input, lines.join('\n') + '\n')
  const ok = await both({ input, output: '', from: 'evalcase', to: 'deepeval' })
  assert.ok(ok.same)
  assert.deepEqual(ok.parts, ok.one)

  // A record that is not a case, in a later part: skipped, and reported at its own line.
  lines[lines.length - 40] = '[1, 2]'
  writeFileSync(input, lines.join('\n') + '\n')
  const skippedOne = await both({ input, output: '', from: 'evalcase', to: 'deepeval', onError: 'skip' })
  assert.ok(skippedOne.same)
  assert.equal((skippedOne.parts as ConversionReport).errors[0]?.location.line, lines.length - 39)
  assert.deepEqual(skippedOne.parts, skippedOne.one)

  // Ids that are not numbered, where the source's and the target's must both be unique: the two
  // sets of ids the parts report share one table, and neither takes the other's for a repeat.
  const named = lines.map((line) => line.replace(/"id":"c(\d+)"/, (_, n: string) => `"id":"case ${Number(n).toString(36)}."`))
  writeFileSync(join(dir, 'named.jsonl'), named.join('\n') + '\n')
  const unique = await both({ input: join(dir, 'named.jsonl'), output: '', from: 'evalcase', to: 'evalcase', onError: 'skip' })
  assert.ok(unique.same)
  assert.deepEqual(unique.parts, unique.one)
  assert.deepEqual((unique.one as ConversionReport).records, { read: named.filter((l) => l.startsWith('{')).length, written: named.filter((l) => l.startsWith('{')).length, skipped: 1 })

  lines[lines.length - 5] = lines[7]!
  writeFileSync(input, lines.join('\n') + '\n')
  const dup = await both({ input, output: '', from: 'evalcase', to: 'deepeval' })
  assert.ok(dup.one instanceof Error && dup.parts instanceof Error)
  assert.equal(dup.parts.message, dup.one.message)
  // Skipping the second use of the id needs the part before: the file converts in one thread.
  const skipped = await both({ input, output: '', from: 'evalcase', to: 'deepeval', onError: 'skip' }, false)
  assert.ok(skipped.same)
  assert.deepEqual(skipped.parts, skipped.one)
})

// Split, the file went back to one thread after its first parts had reached the pipe, whose reader had then left: the second open waited for ever.
test('a conversion to a stream (a named pipe, standard output) is not split: each record reaches it once, a bad one ends it after those before', { timeout: 120_000 }, async () => {
  const fifo = join(dir, 'out.fifo')
  spawnSync('mkfifo', [fifo])
  /** Converts `options` with two threads into the pipe; what its reader got, and the conversion's result. */
  const intoPipe = async (options: Omit<FileConvertOptions, 'output'>) => {
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] })
    const chunks: Buffer[] = []
    reader.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    const closed = new Promise((done) => reader.on('close', done))
    const before = { ...partStats }
    const result = await convert({ ...options, output: fifo, outputContainer: 'jsonl', threads: 2 }).catch((error: Error) => error)
    await closed
    assert.deepEqual(partStats, before)
    return { result, lines: Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean) }
  }
  // An id used in two parts, skipped: in parts the file would have gone back to one thread after the first parts reached the pipe.
  const lines = linesPastSplit((i) => JSON.stringify({ id: `c${i}`, input: text(i, 400), expected_output: 'ok' }))
  lines[lines.length - 5] = lines[7]!
  const input = join(dir, 'to-pipe.jsonl')
  writeFileSync(input, lines.join('\n') + '\n')
  const skipped = await intoPipe({ input, from: 'evalcase', to: 'deepeval', onError: 'skip' })
  assert.ok(!(skipped.result instanceof Error), String(skipped.result))
  assert.deepEqual(skipped.result.records, { read: lines.length - 1, written: lines.length - 1, skipped: 1 })
  assert.equal(skipped.lines.length, lines.length - 1)
  assert.equal(new Set(skipped.lines).size, lines.length - 1)

  const bad = join(dir, 'to-pipe-bad.csv')
  writeTable(bad, 11000)
  const failed = await intoPipe({ input: bad, from: 'csv', to: 'evalcase' })
  assert.ok(failed.result instanceof EvalferryError)
  assert.equal(failed.result.code, 'E_PARSE')
  assert.deepEqual(failed.result.report?.records, { read: 11000, written: 11000, skipped: 0 })
  assert.equal(failed.lines.length, 11000)
  assert.deepEqual([JSON.parse(failed.lines[0]!).id, JSON.parse(failed.lines.at(-1)!).id], ['q0', 'q10999'])
})

test('a record of 12 MB in the range a worker converts is converted in parts, whole', async () => {
  // A record of 30 MB once ran a part worker out of its capped heap, and that took the whole process with it.
  const input = join(dir, 'long.jsonl')
  const lines = linesPastSplit((i) => JSON.stringify({ input: text(i, 400), expected_output: text(i + 1, 200) }))
  // Past the middle of the file: in the range a worker converts.
  lines.splice(lines.length - 10, 0, JSON.stringify({ input: 'the long one', expected_output: 'ü'.repeat(6 << 20) }))
  writeFileSync(input, lines.join('\n') + '\n')
  const long = await both({ input, output: '', from: 'deepeval', to: 'evalcase' })
  assert.ok(long.same)
  assert.deepEqual(long.parts, long.one)
  assert.equal((long.one as ConversionReport).records.written, lines.length)
})

test('a batch of one large file converts it in parts, and in one thread below the threshold, asked for threads or not', async () => {
  const { partThreads, runBatch } = await import('../src/batch.ts')
  // Unasked, a large file takes every free core; asked, the threads asked for, at most one per core.
  assert.equal(partThreads(undefined, 2, 2), 2)
  assert.equal(partThreads(undefined, 2, 1), 1)
  assert.equal(partThreads(undefined, 8, 0), 1)
  assert.equal(partThreads(2, 2, 0), 2)
  assert.equal(partThreads(6, 4, 1), 4)
  const input = join(dir, 'default.csv')
  writeTable(input)
  const output = join(dir, 'default.jsonl')
  const job = { input, output, from: 'csv', to: 'evalcase' } as const
  const before = { ...partStats }
  // The threshold for splitting, lowered here to the file's size; threads asked for, as a busy machine gives none unasked.
  const [split] = await runBatch([job], { jobs: 2, splitFromBytes: SPLIT_MIN_BYTES })
  assert.equal(partStats.inParts, before.inParts + 1)
  const inParts = readFileSync(output)
  rmSync(output)
  const [whole] = await runBatch([job], { splitFromBytes: SPLIT_MIN_BYTES * 100 })
  assert.equal(partStats.inParts, before.inParts + 1)
  assert.ok(inParts.equals(readFileSync(output)))
  assert.deepEqual(split, whole)
  assert.ok(whole!.records.written > 10000)
  // Asking for threads does not lower the threshold: below it, parts would cost more than they give.
  rmSync(output)
  const [asked] = await runBatch([job], { jobs: 2, splitFromBytes: SPLIT_MIN_BYTES * 100 })
  assert.equal(partStats.inParts, before.inParts + 1)
  assert.deepEqual(asked, whole)
  // One thread asked for: no parts, whatever the size.
  await runBatch([job], { jobs: 1, splitFromBytes: SPLIT_MIN_BYTES })
  assert.equal(partStats.inParts, before.inParts + 1)
  assert.ok(inParts.equals(readFileSync(output)))
  // Unasked, the cores the look finds free: the same bytes either way, and no worker started for a
  // thread that was not taken is left.
  for (const w of partWorkers()) await w.terminate()
  rmSync(output)
  await runBatch([job], { splitFromBytes: SPLIT_MIN_BYTES })
  assert.ok(inParts.equals(readFileSync(output)))
  if (partStats.inParts === before.inParts + 1) assert.deepEqual(partWorkers(), [])
  else assert.ok(partWorkers().length >= 1 && partWorkers().length < availableParallelism())
})

test('a part worker that exits leaves the pool: the next conversion starts new ones and still converts in parts', async () => {
  const input = join(dir, 'pool.csv')
  writeTable(input)
  const options = { input, output: '', from: 'csv', to: 'evalcase' } as const
  assert.ok((await both(options)).same)
  const dead = [...partWorkers()]
  // This thread converts the first part, one worker the second.
  assert.equal(dead.length, 1)
  await Promise.all(dead.map((w) => w.terminate()))
  assert.deepEqual(partWorkers(), [])
  const { one, parts, same } = await both(options)
  assert.ok(same, 'the outputs differ')
  assert.deepEqual(parts, one)
  assert.equal(partWorkers().length, 1)
  assert.ok(partWorkers().every((w) => !dead.includes(w)))
})

test('part workers warmed before a conversion are the ones it takes, and those it does not take are ended', async () => {
  const input = join(dir, 'warmed.csv')
  writeTable(input)
  for (const w of partWorkers()) await w.terminate()
  warmPartWorkers(2)
  const warmed = [...partWorkers()]
  assert.equal(warmed.length, 2)
  await trimPartWorkers(1)
  assert.equal(partWorkers().length, 1)
  const kept = partWorkers()[0]!
  assert.ok(warmed.includes(kept))
  // Two threads: this one and the worker kept, not a new one.
  const { same } = await both({ input, output: '', from: 'csv', to: 'evalcase' })
  assert.ok(same, 'the outputs differ')
  assert.deepEqual(partWorkers(), [kept])
  await trimPartWorkers(0)
  assert.deepEqual(partWorkers(), [])
})

test('a part worker that exits in the middle of a part makes the file convert in one thread, whole', async () => {
  const input = join(dir, 'dies.csv')
  writeTable(input)
  for (const w of partWorkers()) await w.terminate()
  // The first worker started is ended while its part is in flight (starting one takes far longer than a turn of the loop).
  let ended = false
  const watch = (): void => {
    const worker = partWorkers()[0]
    if (worker) {
      ended = true
      void worker.terminate()
    } else setImmediate(watch)
  }
  setImmediate(watch)
  const { one, parts, same } = await both({ input, output: '', from: 'csv', to: 'evalcase' }, false)
  assert.ok(ended)
  assert.ok(same, 'the outputs differ')
  assert.deepEqual(parts, one)
})

test('DeepEval arenas, where a record holds no case or several: parts give the one-thread bytes, by converting in one thread', async () => {
  const input = join(dir, 'arenas.jsonl')
  // An arena with no contestant writes no record, so every later record is written one place earlier than it was read.
  const lines = ['{"contestants": []}']
  let size = 0
  for (let i = 0; size < SPLIT_MIN_BYTES * 1.3; i++) {
    const line =
      i % 100 === 0
        ? JSON.stringify({ contestants: ['a', 'b'].map((name) => ({ name, test_case: { input: `p${i}`, actual_output: `${name}${i}` } })) })
        : JSON.stringify({ input: text(i, 300), actual_output: text(i + 1, 100) })
    lines.push(line)
    size += line.length
  }
  writeFileSync(input, lines.join('\n') + '\n')
  const result = await both({ input, output: '', from: 'deepeval', to: 'deepeval' }, false)
  assert.ok(result.same)
  assert.deepEqual(result.parts, result.one)
})

test('a group whose cases the cut parts (with blank lines between them) is one record, as in one thread', async () => {
  const input = join(dir, 'group-gap.jsonl')
  const line = (i: number, contestant?: string) =>
    JSON.stringify({ id: `r${i}`, input: text(i, 300), ...(contestant ? { metadata: { arena: { group: 'g1', contestant } } } : {}) })
  const lines: string[] = []
  let i = 0
  for (let size = 0; size < SPLIT_MIN_BYTES * 0.6; i++) size += (lines[lines.push(line(i)) - 1] ?? '').length
  // The file's middle falls in the 2.4 MB of blank lines between the two contestants of one arena.
  lines.push(line(i++, 'a'))
  for (let k = 0; k < 600_000; k++) lines.push('   ')
  lines.push(line(i++, 'b'))
  for (let size = 0; size < SPLIT_MIN_BYTES * 0.6; i++) size += (lines[lines.push(line(i)) - 1] ?? '').length
  writeFileSync(input, lines.join('\n') + '\n')
  const result = await both({ input, output: '', from: 'evalcase', to: 'deepeval' }, false)
  assert.ok(result.same)
  assert.deepEqual(result.parts, result.one)
  // The two contestants are one record.
  const output = join(dir, 'group-gap-out.jsonl')
  await convert({ input, output, from: 'evalcase', to: 'deepeval', threads: 2 })
  assert.equal(readFileSync(output, 'utf8').split('\n').filter(Boolean).length, i - 1)
})

test('DeepEval conversations in parts are shown as chat messages in hf JSON Lines, as in one thread', async () => {
  const input = join(dir, 'conversations.jsonl')
  const lines = linesPastSplit((i) => JSON.stringify({ scenario: text(i, 200), turns: [{ role: 'user', content: text(i + 1, 300) }, { role: 'assistant', content: text(i + 2, 300) }], expected_outcome: 'ok' }))
  writeFileSync(input, lines.join('\n') + '\n')
  const result = await both({ input, output: '', from: 'deepeval', to: 'hf' })
  assert.ok(result.same)
  assert.deepEqual(result.parts, result.one)
  assert.equal((result.one as ConversionReport).carried.turns, lines.length)
})

test('a conversion in parts stops when its AbortSignal aborts: no output, and the next conversion in parts still converts', async () => {
  const input = join(dir, 'abort.csv')
  const rows = writeTable(input)
  const output = join(dir, 'abort.jsonl')
  const controller = new AbortController()
  const progress = { records: 0, bytes: 0 }
  const watching = setInterval(() => {
    // This thread counts the records of its range as it reads them.
    if (progress.records > 0) controller.abort()
  }, 1)
  const before = { ...partStats }
  let readWhenStopped = 0
  try {
    await assert.rejects(
      convert({ input, output, from: 'csv', to: 'evalcase', threads: 2, progress, signal: controller.signal }).finally(() => (readWhenStopped = progress.records)),
      { name: 'AbortError' },
    )
  } finally {
    clearInterval(watching)
  }
  assert.ok(progress.records > 0, 'aborted once records were read')
  // It stopped within this thread's range, not at its end.
  assert.ok(readWhenStopped < rows / 4, `${readWhenStopped} of ${rows} records read before it stopped`)
  assert.deepEqual({ inParts: partStats.inParts, inOneThread: partStats.inOneThread }, { inParts: before.inParts, inOneThread: before.inOneThread })
  assert.equal(existsSync(output), false)
  assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith('abort.jsonl')), [])
  const report = await convert({ input, output, from: 'csv', to: 'evalcase', threads: 2 })
  assert.equal(partStats.inParts, before.inParts + 1)
  assert.equal(readFileSync(output, 'utf8').trimEnd().split('\n').length, report.records.written)
})

test('a file converted on several threads that skipped every record fails, and writes nothing, as one thread does', async () => {
  const dir = tempDir('evalferry-parallel-')
  const input = join(dir, 'runs.jsonl')
  const line = JSON.stringify({ input: { question: 'What is 2+2?', padding: 'x'.repeat(200) }, actual_output: '4' }) + '\n'
  writeFileSync(input, line.repeat(Math.ceil((SPLIT_MIN_BYTES * 2) / line.length)))
  const output = join(dir, 'out.jsonl')
  const before = partStats.inParts + partStats.inOneThread
  await assert.rejects(convert({ input, output, from: 'deepeval', to: 'evalcase', onError: 'skip', threads: 2 }), (error: EvalferryError) => error.exitCode === 1 && /^no case was read: all \d+ of its records were skipped, so nothing is written; the first: .*runs\.jsonl:1: input: /.test(error.message))
  assert.ok(partStats.inParts + partStats.inOneThread > before, 'the file was tried in parts')
  assert.equal(existsSync(output), false)
})

test('a file converted in parts to a gzip output with a rejects file gives the one-thread output and rejects', async () => {
  const input = join(dir, 'rejects.jsonl')
  const lines = linesPastSplit((i) => JSON.stringify({ id: `c${i}`, input: text(i, 400), expected_output: 'ok' }))
  // Records that are not cases, in the range a worker converts: skipped, and told in the rejects file.
  for (const at of [lines.length - 30, lines.length - 7]) lines[at] = '[1, 2]'
  writeFileSync(input, lines.join('\n') + '\n')
  const run = async (threads: number) => {
    const output = join(dir, `rejects-${threads}.jsonl.gz`)
    const rejects = join(dir, `rejects-${threads}.rejects.jsonl`)
    const report = await convert({ input, output, from: 'evalcase', to: 'deepeval', onError: 'skip', rejects, threads })
    return { report, output: gunzipSync(readFileSync(output)), rejects: readFileSync(rejects, 'utf8') }
  }
  const one = await run(1)
  const before = { ...partStats }
  const parts = await run(2)
  assert.equal(partStats.inParts, before.inParts + 1)
  assert.ok(parts.output.equals(one.output))
  assert.equal(parts.rejects, one.rejects)
  assert.equal(parts.rejects.trim().split('\n').length, 2)
  assert.deepEqual({ ...parts.report, output: one.report.output }, one.report)
  assert.deepEqual(parts.report.records, { read: lines.length - 2, written: lines.length - 2, skipped: 2 })
})

test('a file whose last record holds its middle, so no row ends after it, converts in one thread, whole', async () => {
  const input = join(dir, 'long-last.jsonl')
  const lines: string[] = []
  for (let i = 0, size = 0; size < SPLIT_MIN_BYTES * 0.3; i++) size += (lines[lines.push(JSON.stringify({ input: text(i, 400), expected_output: 'ok' })) - 1] ?? '').length
  lines.push(JSON.stringify({ input: 'the long last one', expected_output: 'ü'.repeat(5 << 20) }))
  // No newline after the last record: the file ends inside it.
  writeFileSync(input, lines.join('\n'))
  assert.equal((await cutFile(input, 'jsonl', 2)).length, 1)
  const result = await both({ input, output: '', from: 'deepeval', to: 'evalcase' }, false)
  assert.ok(result.same)
  assert.deepEqual(result.parts, result.one)
  assert.equal((result.one as ConversionReport).records.written, lines.length)
})
