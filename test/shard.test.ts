import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openSync, readFileSync, rmSync, writeFileSync, writeSync, closeSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet'
import { convert } from '../src/index.ts'
import { locateRecords } from '../src/parallel.ts'
import { parquetWriter } from '../src/codecs/parquet.ts'
import { runCli } from './helpers/cli.ts'
import { tempDir } from './helpers/temp.ts'

const dir = tempDir('evalferry-shard-')
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

const shardOf = (index: number, count: number) => (total: number): [number, number] => [
  Math.floor((total * (index - 1)) / count),
  Math.floor((total * index) / count),
]

interface Written {
  path: string
  /** Per record: the byte offset just after its row ends, and the line the next row starts on. */
  ends: { offset: number; line: number }[]
  size: number
  header: string
}

const cell = (value: string) => (/[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value)

/**
 * A CSV table of `rows` records whose cells hold quotes, delimiters and line breaks, with blank
 * lines between some rows and, unless `lastNewline`, a last row without a line ending.
 */
function writeCsv(name: string, rows: number, eol: '\n' | '\r\n', lastNewline = true, pad = 0): Written {
  const header = `id,question,answer${eol}`
  let text = header
  const ends: Written['ends'] = []
  let line = 2
  for (let i = 0; i < rows; i++) {
    const question = (i % 3 === 0 ? `line one\nline "two", ünï ${i}` : `plain ${i}`) + 'x'.repeat(pad)
    const row = [`r${i}`, question, i % 4 === 0 ? '' : `a, ${i}`].map(cell).join(',')
    text += row
    line += (row.match(/\n/g) ?? []).length
    if (i < rows - 1 || lastNewline) {
      text += eol
      line++
    }
    ends.push({ offset: Buffer.byteLength(text), line })
    if (i % 5 === 2 && i < rows - 1) {
      text += eol
      line++
    }
  }
  const path = join(dir, name)
  writeFileSync(path, text)
  return { path, ends, size: Buffer.byteLength(text), header }
}

test('locateRecords finds where each shard of a CSV file starts and ends, in bytes, lines and records', async () => {
  // Small files, and one of several 1 MiB chunks, where a shard is found again from the chunk before it.
  for (const [eol, lastNewline, rows, pad] of [
    ['\n', true, 23, 0],
    ['\r\n', true, 23, 0],
    ['\n', false, 23, 0],
    ['\r\n', false, 9001, 400],
  ] as const) {
    const file = writeCsv(`t-${eol.length}-${lastNewline}-${rows}.csv`, rows, eol, lastNewline, pad)
    for (const count of [1, 2, 3, 7, 30]) {
      for (let index = 1; index <= count; index++) {
        const located = await locateRecords(file.path, 'csv', shardOf(index, count))
        assert.ok(located, 'a plain CSV file is located by its bytes')
        const [from, to] = shardOf(index, count)(rows)
        assert.equal(located.total, rows)
        assert.deepEqual(located.range, [from, to])
        const at = `shard ${index}/${count}, eol ${JSON.stringify(eol)}, last newline ${lastNewline}`
        // A shard starts after the previous record's row (blank lines after it are the shard's,
        // and its reader skips them), or after the header row, which goes before its text.
        const start = from === 0 ? { offset: Buffer.byteLength(file.header), line: 2 } : file.ends[from - 1]!
        assert.equal(located.bytes.start, start.offset, at)
        assert.equal(located.bytes.line, start.line, at)
        assert.equal(located.bytes.prefix, file.header, at)
        const end = from === to ? start.offset : to === rows ? file.size : file.ends[to - 1]!.offset
        assert.equal(located.bytes.end, end, at)
      }
    }
  }
})

test('a shard read from its bytes gives the same output as one read from the start of the file', async () => {
  const csv = writeCsv('same.csv', 400, '\r\n')
  const jsonl = join(dir, 'same.jsonl')
  writeFileSync(
    jsonl,
    Array.from({ length: 300 }, (_, i) => JSON.stringify({ input: `q ${i}\n"ü"`, expected_output: `a ${i}`, context: ['c'] }) + (i % 7 === 3 ? '\n  \n' : '\n')).join(''),
  )
  for (const [input, from, to] of [
    [csv.path, 'csv', 'evalcase'],
    [jsonl, 'deepeval', 'langsmith'],
  ] as const) {
    for (const [index, count] of [
      [1, 3],
      [2, 3],
      [3, 3],
      [4, 5],
      // More shards than records: the first is empty.
      [1, 401],
    ] as const) {
      const located = await locateRecords(input, input.endsWith('.csv') ? 'csv' : 'jsonl', shardOf(index, count))
      assert.ok(located)
      const seek = join(dir, 'seek.jsonl')
      const scan = join(dir, 'scan.jsonl')
      const bySeek = await convert({ input, from, to, output: seek, recordRange: located.range, recordBytes: located.bytes })
      const byScan = await convert({ input, from, to, output: scan, recordRange: located.range })
      assert.equal(bySeek.records.read, located.range[1] - located.range[0])
      if (count === 401) assert.equal(bySeek.records.read, 0)
      assert.deepEqual(bySeek.records, byScan.records)
      assert.deepEqual(bySeek.carried, byScan.carried)
      assert.equal(readFileSync(seek, 'utf8'), readFileSync(scan, 'utf8'), `${input} shard ${index}/${count}`)
    }
  }
})

test('a CSV with rows that end in a lone CR is counted by its reader, and its shards are still the whole', async () => {
  const path = join(dir, 'mac.csv')
  writeFileSync(path, 'question,answer\r' + Array.from({ length: 9 }, (_, i) => `q${i},"a${i}\r\nmore"\r`).join(''))
  assert.equal(await locateRecords(path, 'csv', shardOf(1, 2)), undefined)
  const cases = await casesOfThreeShards(path, 'mac-out')
  assert.deepEqual(
    cases.map((c) => c.expected_output),
    Array.from({ length: 9 }, (_, i) => `a${i}\r\nmore`),
  )
})

test("a CSV whose first line is Excel's sep= line is read by its reader alone, and its shards are still the whole", async () => {
  const path = join(dir, 'excel.csv')
  writeFileSync(path, 'sep=;\r\nquestion;answer\r\n' + Array.from({ length: 9 }, (_, i) => `q${i};a${i}\r\n`).join(''))
  assert.equal(await locateRecords(path, 'csv', shardOf(1, 2)), undefined)
  const cases = await casesOfThreeShards(path, 'excel-out')
  assert.deepEqual(
    cases.map((c) => c.input),
    Array.from({ length: 9 }, (_, i) => `q${i}`),
  )
})

/** The evalcase JSON Lines records of `--shard 1/3` … `3/3` of a CSV file, converted by the CLI into `<stem>.part-i-of-3.jsonl`, in order. */
async function casesOfThreeShards(path: string, stem: string): Promise<{ input?: string; expected_output?: string }[]> {
  const cases: { input?: string; expected_output?: string }[] = []
  for (const index of [1, 2, 3]) {
    const run = await runCli(['convert', path, '--from', 'csv', '--to', 'evalcase', '-o', join(dir, `${stem}.jsonl`), '--shard', `${index}/3`, '--quiet'])
    assert.equal(run.code, 0, run.stderr)
    const lines = readFileSync(join(dir, `${stem}.part-${index}-of-3.jsonl`), 'utf8').trim().split('\n')
    cases.push(...lines.map((l) => JSON.parse(l) as { input?: string; expected_output?: string }))
  }
  return cases
}

test('--shard reads only its own bytes of a JSON Lines file, and names lines as the whole file numbers them', async () => {
  // Record 70 of 100 (line 71) holds a byte that is not UTF-8: only the shard that holds it reads it.
  const path = join(dir, 'bad-byte.jsonl')
  const lines = Array.from({ length: 100 }, (_, i) => JSON.stringify({ input: `question ${i}`, expected_output: `answer ${i}` }))
  const bytes = Buffer.from(lines.join('\n') + '\n')
  const at = bytes.indexOf('question 70') + 'question 7'.length
  bytes[at] = 0xff
  writeFileSync(path, bytes)
  const out = join(dir, 'bad-byte-out.jsonl')

  const whole = await runCli(['convert', path, '--from', 'deepeval', '--to', 'langsmith', '-o', out, '--quiet'])
  assert.equal(whole.code, 1)
  assert.match(whole.stderr, new RegExp(`bad-byte\\.jsonl:71(:\\d+)?: invalid UTF-8: byte 0xff at byte offset ${at}`))

  const first = await runCli(['convert', path, '--from', 'deepeval', '--to', 'langsmith', '-o', out, '--shard', '1/2', '--quiet'])
  assert.equal(first.code, 0, first.stderr)
  const written = readFileSync(join(dir, 'bad-byte-out.part-1-of-2.jsonl'), 'utf8').trim().split('\n')
  assert.deepEqual(
    written.map((l) => (JSON.parse(l) as { inputs: { question: string } }).inputs.question),
    Array.from({ length: 50 }, (_, i) => `question ${i}`),
  )

  const second = await runCli(['convert', path, '--from', 'deepeval', '--to', 'langsmith', '-o', out, '--shard', '2/2', '--quiet'])
  assert.equal(second.code, 1)
  assert.match(second.stderr, new RegExp(`bad-byte\\.jsonl:71(:\\d+)?: invalid UTF-8: byte 0xff at byte offset ${at}`))
})

test('--shard of a JSON file parses only its own records: the shards are the whole, and a bad record fails only its shard', async () => {
  // DeepEval goldens as a JSON array, record 70 of 100 not JSON (on line 72); the scan still finds where it ends.
  const goldens = Array.from({ length: 100 }, (_, i) => (i === 70 ? '  {"input": tru, "expected_output": "x"}' : `  ${JSON.stringify({ input: `question ${i}`, expected_output: `answer ${i}` })}`))
  const path = join(dir, 'goldens.json')
  writeFileSync(path, `[\n${goldens.join(',\n')}\n]\n`)
  const out = join(dir, 'goldens-out.jsonl')
  const shard = (i: number) => runCli(['convert', path, '--from', 'deepeval', '--to', 'langsmith', '-o', out, '--shard', `${i}/4`, '--quiet'])
  const questions: string[] = []
  for (const i of [1, 2, 4]) {
    const result = await shard(i)
    assert.equal(result.code, 0, result.stderr)
    const written = readFileSync(join(dir, `goldens-out.part-${i}-of-4.jsonl`), 'utf8').trim().split('\n')
    questions.push(...written.map((l) => (JSON.parse(l) as { inputs: { question: string } }).inputs.question))
  }
  assert.deepEqual(questions, [...Array.from({ length: 50 }, (_, i) => `question ${i}`), ...Array.from({ length: 25 }, (_, i) => `question ${75 + i}`)])
  const third = await shard(3)
  assert.equal(third.code, 1)
  assert.match(third.stderr, /goldens\.json:72(:\d+)?: invalid JSON/)
})

test('--shard of a Parquet file decodes only the row groups that hold its records', async () => {
  const path = join(dir, 'groups.parquet')
  const chunks: Uint8Array[] = []
  const writer = parquetWriter({ write: async (c) => void chunks.push(typeof c === 'string' ? Buffer.from(c) : c) }, {}, { batchRows: 40, compression: 'snappy' })
  for (let i = 0; i < 120; i++) await writer.write({ question: `question ${i} ${'x'.repeat(50)}`, answer: `answer ${i}` })
  await writer.end()
  writeFileSync(path, Buffer.concat(chunks))

  // Spoil the first row group's column data; the footer stays whole.
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path))
  assert.equal(metadata.row_groups.length, 3)
  const column = metadata.row_groups[0]!.columns[0]!.meta_data!
  const fd = openSync(path, 'r+')
  writeSync(fd, Buffer.alloc(24, 0xab), 0, 24, Number(column.data_page_offset))
  closeSync(fd)

  const out = join(dir, 'groups-out.jsonl')
  const whole = await runCli(['convert', path, '--from', 'hf', '--to', 'hf', '-o', out, '--quiet'])
  assert.equal(whole.code, 1, 'the spoiled row group fails a whole read')

  // 120 rows in 3 shards: rows 40..79 and 80..119 are the second and third row groups.
  for (const index of [2, 3]) {
    const shard = await runCli(['convert', path, '--from', 'hf', '--to', 'hf', '-o', out, '--shard', `${index}/3`, '--quiet'])
    assert.equal(shard.code, 0, shard.stderr)
    const rows = readFileSync(join(dir, `groups-out.part-${index}-of-3.jsonl`), 'utf8').trim().split('\n')
    assert.deepEqual(
      rows.map((l) => (JSON.parse(l) as { answer: string }).answer),
      Array.from({ length: 40 }, (_, i) => `answer ${(index - 1) * 40 + i}`),
    )
  }
})

test('the shards of a file without ids generate the ids the whole does: joined, they are the whole output', async () => {
  const path = join(dir, 'no-ids.csv')
  // A blank line is counted as no row.
  const rows = Array.from({ length: 10 }, (_, i) => `q${i},a${i}\n`)
  rows.splice(4, 0, '\n')
  writeFileSync(path, 'input,expected_output\n' + rows.join(''))
  const whole = join(dir, 'no-ids-whole.jsonl')
  assert.equal((await runCli(['convert', path, '--from', 'csv', '--to', 'evalcase', '-o', whole, '--quiet'])).code, 0)
  const parts: string[] = []
  for (let index = 1; index <= 3; index++) {
    const out = join(dir, 'no-ids.jsonl')
    const run = await runCli(['convert', path, '--from', 'csv', '--to', 'evalcase', '-o', out, '--shard', `${index}/3`, '--quiet'])
    assert.equal(run.code, 0, run.stderr)
    parts.push(readFileSync(join(dir, `no-ids.part-${index}-of-3.jsonl`), 'utf8'))
  }
  assert.equal(parts.join(''), readFileSync(whole, 'utf8'))
  assert.deepEqual(parts.join('').match(/"id":"[^"]+"/g), Array.from({ length: 10 }, (_, i) => `"id":"case-${i + 1}"`))
  // With CRLF too, the byte scan counts the rows the reader reads.
  const crlf = join(dir, 'no-ids-crlf.csv')
  writeFileSync(crlf, 'input,expected_output\r\n' + rows.join('').replace(/\n/g, '\r\n'))
  assert.equal((await locateRecords(crlf, 'csv', (total) => [0, total]))?.total, 10)
  // Rows of three bytes cross the scan's 1 MiB chunks and are counted by the scan, `""` among them: a row of one empty cell, as the reader reads it.
  const tiny = join(dir, 'tiny-rows.csv')
  writeFileSync(tiny, 'v\n' + 'ab\n'.repeat(400_000) + '""\n'.repeat(400_000))
  assert.equal((await locateRecords(tiny, 'csv', (total) => [0, total]))?.total, 800_000)
})

test('--shard of a pipe, which gives its bytes once, is refused with a usage error rather than failing inside', async () => {
  const dir = tempDir('evalferry-shard-pipe-')
  const fifo = join(dir, 'cases.csv')
  execFileSync('mkfifo', [fifo])
  const run = await runCli(['convert', fifo, '--from', 'csv', '--to', 'evals', '-o', join(dir, 'out.jsonl'), '--shard', '1/2'])
  assert.equal(run.code, 2, run.stderr)
  assert.equal(run.stderr, `evalferry: --shard needs files: ${fifo} is a pipe, whose bytes can be read only once; write them to a file first\n`)
})

test('--shard of a file whose name tells no container counts its records in the --from-container given: the shards hold every record once', async () => {
  const records = Array.from({ length: 7 }, (_, i) => ({ input: `question ${i}`, expected_output: `answer ${i}` }))
  // JSON Lines is located by its bytes; JSON, and a CSV with a sep= line, are counted by their readers.
  for (const [container, from, text] of [
    ['jsonl', 'deepeval', records.map((r) => JSON.stringify(r) + '\n').join('')],
    ['json', 'deepeval', JSON.stringify(records)],
    ['csv', 'csv', 'sep=;\ninput;expected_output\n' + records.map((r) => `${r.input};${r.expected_output}\n`).join('')],
  ] as const) {
    const path = join(dir, `untold-${container}.txt`)
    writeFileSync(path, text)
    const inputs: string[] = []
    for (const index of [1, 2]) {
      const run = await runCli(['convert', path, '--from-container', container, '--from', from, '--to', 'evalcase', '-o', join(dir, `untold-${container}-out.jsonl`), '--shard', `${index}/2`, '--quiet'])
      assert.equal(run.code, 0, `${container}: ${run.stderr}`)
      const lines = readFileSync(join(dir, `untold-${container}-out.part-${index}-of-2.jsonl`), 'utf8').trim().split('\n')
      inputs.push(...lines.map((l) => (JSON.parse(l) as { input: string }).input))
    }
    assert.deepEqual(inputs, records.map((r) => r.input), container)
  }
})
