import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createWriteStream, existsSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { convert } from '../src/convert.ts'
import { read } from '../src/read.ts'
import { write } from '../src/write.ts'
import { partStats } from '../src/parallel.ts'
import type { EvalCase } from '../src/model.ts'
import type { FormatName } from '../adapters/types.ts'
import { detect, LayoutError, newReport } from '../src/index.ts'
import { tempDir } from './helpers/temp.ts'
import { collect } from './helpers/collect.ts'

const dir = tempDir('evalferry-pipeline-')
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

function readAll(path: string, from: FormatName): Promise<EvalCase[]> {
  return collect(read(path, { from }))
}

test('generated ids avoid the ids that cases already have', async () => {
  const cases: EvalCase[] = [
    { input: [{ role: 'user', content: 'first, without an id' }] },
    { id: 'case-1', input: [{ role: 'user', content: 'second, whose id looks generated' }] },
  ]
  for (const [format, ext] of [['evalcase', '.yaml'], ['evals', '.jsonl']] as const) {
    const out = join(dir, `ids-${format}${ext}`)
    await write(cases, out, { to: format })
    const back = await readAll(out, format)
    assert.deepEqual(back.map((c) => [c.id, c.generated]), [['case-1-2', ['id']], ['case-1', undefined]], format)
    // Converting on drops the generated id again.
    const again = join(dir, `ids-${format}.json`)
    await write(back, again, { to: 'deepeval' })
    assert.deepEqual((await readAll(again, 'deepeval')).map((c) => c.id), [undefined, 'case-1'])
  }
})

test('past the sampled first cases, a generated id still avoids an id written earlier for a later record, in one thread and in parts', async () => {
  // 300 records: in-order ids case-1 … case-150, then record 150 names `late`, then records without
  // ids, long enough (9 MB) for the file to convert in parts of about 17 records.
  const table = (late: string): string => {
    const rows = ['id,input']
    for (let i = 0; i < 300; i++) rows.push(`${i < 150 ? `case-${i + 1}` : i === 150 ? late : ''},question ${i} ${'x'.repeat(i < 150 ? 0 : 60_000)}`)
    return rows.join('\n') + '\n'
  }
  const convertIds = async (name: string, text: string, threads: number): Promise<string[]> => {
    const input = join(dir, `${name}.csv`)
    writeFileSync(input, text)
    const output = join(dir, `${name}-${threads}.jsonl`)
    await convert({ input, output, from: 'csv', to: 'evalcase', threads })
    return readFileSync(output, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id)
  }
  for (const threads of [1, 2]) {
    const before = { ...partStats }
    const ids = await convertIds('late-id', table('case-290'), threads)
    assert.equal(ids.length, 300)
    assert.deepEqual(ids.slice(148, 152), ['case-149', 'case-150', 'case-290', 'case-152'], `threads ${threads}`)
    assert.equal(ids[289], 'case-290-2', `threads ${threads}`)
    assert.equal(new Set(ids).size, 300, `threads ${threads}`)
    // In parts, the part that generates case-290 cannot know of it: the file converts again in one thread.
    if (threads === 2) assert.deepEqual([partStats.inParts - before.inParts, partStats.inOneThread - before.inOneThread], [0, 1])
  }
  // Ids numbered in order are never remembered, and never send the file back to one thread.
  const before = { ...partStats }
  const ids = await convertIds('in-order', table('case-151'), 2)
  assert.deepEqual(ids, Array.from({ length: 300 }, (_, i) => `case-${i + 1}`))
  assert.deepEqual([partStats.inParts - before.inParts, partStats.inOneThread - before.inOneThread], [1, 0])
})

test('a named pipe reads as a file: chunks arrive in order, whatever size each read returns', async () => {
  const fifo = join(dir, 'rows.csv')
  execFileSync('mkfifo', [fifo])
  const rows = Array.from({ length: 3000 }, (_, i) => `question ${i} ${'x'.repeat(500)},answer ${i}`)
  // Written in small pieces, so that reads return short chunks; the file has no size to read up to.
  const writer = createWriteStream(fifo)
  const writing = (async () => {
    const text = 'input,expected_output\n' + rows.join('\n') + '\n'
    for (let at = 0; at < text.length; at += 7000) if (!writer.write(text.slice(at, at + 7000))) await new Promise<void>((r) => writer.once('drain', () => r()))
    writer.end()
  })()
  const inputs: unknown[] = []
  for await (const c of read(fifo, { from: 'csv' })) inputs.push(c.input?.[0]?.content)
  await writing
  assert.deepEqual(
    inputs,
    rows.map((r) => r.slice(0, r.indexOf(','))),
  )
  // Its format cannot be detected and the pipe read again: the conversion asks for --from instead of waiting.
  await assert.rejects(convert({ input: fifo, output: join(dir, 'from-pipe.jsonl'), to: 'evals' }), (error: Error & { code?: string }) => {
    assert.equal(error.code, 'E_USAGE')
    assert.equal(error.message, `${fifo} is a named pipe, which can be read only once: name its format with --from`)
    return true
  })
  await assert.rejects(read(fifo).next(), /is a named pipe, which can be read only once/)
})

test('cases past the first hundred that each need a new column are gathered in one pass: the file is written once more, not once per case', async () => {
  // Nineteen late metadata keys, each on one example, as a LangSmith export whose metadata grew over time has.
  const examples = Array.from({ length: 2000 }, (_, i) => ({ inputs: { question: `q${i}` }, outputs: { answer: `a${i}` }, metadata: { n: i, ...(i % 100 === 99 && i > 99 ? { [`k${i}`]: i } : {}) } }))
  const source = join(dir, 'late-keys.jsonl')
  writeFileSync(source, examples.map((r) => JSON.stringify(r)).join('\n') + '\n')
  const lateKeys = examples.flatMap((e) => Object.keys(e.metadata).filter((k) => k !== 'n'))
  assert.equal(lateKeys.length, 19)
  // Hugging Face Parquet has a column of each key.
  const report = await convert({ input: source, output: join(dir, 'late-keys.parquet'), from: 'langsmith', to: 'hf' })
  assert.deepEqual([report.records, report.carried], [{ read: 2000, written: 2000, skipped: 0 }, {}])
  const back: EvalCase[] = []
  for await (const c of read(join(dir, 'late-keys.parquet'), { from: 'hf' })) back.push(c)
  assert.deepEqual(
    back.map((c) => c.metadata),
    examples.map((e) => e.metadata),
  )
  // The library's write of an array gathers them alike: text metadata, each key a column of the table.
  const made = examples.map((e): EvalCase => ({ input: [{ role: 'user', content: e.inputs.question }], metadata: Object.fromEntries(Object.entries(e.metadata).map(([k, v]) => [k, String(v)])) }))
  const written = await write(made, join(dir, 'late-made.csv'), { to: 'hf' })
  assert.deepEqual([written.records.written, written.carried], [2000, {}])
  assert.deepEqual(readFileSync(join(dir, 'late-made.csv'), 'utf8').split('\n')[0], ['input', 'n', ...lateKeys].join(','))

  // A file whose every case needs a column none before had is given up after a bounded number of passes, saying so.
  const growing = Array.from({ length: 1200 }, (_, i) => JSON.stringify({ question: `q${i}`, [`k${i}`]: 'x' }))
  writeFileSync(join(dir, 'growing.jsonl'), growing.join('\n') + '\n')
  await assert.rejects(convert({ input: join(dir, 'growing.jsonl'), output: join(dir, 'growing.csv'), from: 'hf', to: 'hf' }), (error: LayoutError) => {
    assert.equal(error.code, 'E_LAYOUT')
    // Nine passes: the first hundred cases chose the first layout, each of eight more took a hundred more cases.
    assert.deepEqual(error.location, { file: join(dir, 'growing.jsonl'), line: 901, field: 'evalferry' })
    assert.match(error.message, / \(the file was written 9 times, each time with up to 100 more such cases among those its layout is chosen from, and cases kept needing columns none before had\); JSON Lines, whose records each have their own keys, holds such a dataset$/)
    return true
  })
  assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith('growing.csv')), [])
})

test('a case past the first hundred that needs a column they did not is written: the file is written again with its layout chosen with that case', async () => {
  const rows = Array.from({ length: 300 }, (_, i) => ({ question: `q${i}`, answer: i === 250 ? null : 'a', ...(i === 270 ? { extra: 'x' } : {}) }))
  const source = join(dir, 'late-columns.jsonl')
  writeFileSync(source, rows.map((r) => JSON.stringify(r)).join('\n') + '\n')
  for (const output of ['late-columns.csv', 'late-columns.parquet']) {
    const report = await convert({ input: source, output: join(dir, output), from: 'hf', to: 'hf' })
    assert.deepEqual([report.records, report.carried], [{ read: 300, written: 300, skipped: 0 }, { 'extras.hf.$raw': 1 }], output)
    await convert({ input: join(dir, output), output: join(dir, `${output}.jsonl`), from: 'hf', to: 'hf' })
    // The table's columns, which JSON Lines rows without the late key do not show, ride on the first row.
    const first = { ...rows[0], evalferry: { $file: { columns: ['question', 'answer', 'extra'] } } }
    assert.deepEqual(readFileSync(join(dir, `${output}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown), [first, ...rows.slice(1)], output)
  }
  // The first pass's reading (its format detected, here) is closed when the file is written again, not left to the collector.
  await convert({ input: source, output: join(dir, 'late-detected.csv'), to: 'hf' })
  const open = readdirSync('/proc/self/fd').map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`)
    } catch {
      return ''
    }
  })
  assert.deepEqual(open.filter((path) => path === source), [])
  // The pass that met the null answer (which needs the carry column) went on, and met the later key too: both are in the header.
  assert.equal(readFileSync(join(dir, 'late-columns.csv'), 'utf8').split('\n')[0], 'question,answer,extra,evalferry')

  // LangSmith's own CSV: a metadata key first met at example 151 gets its column.
  const examples = Array.from({ length: 200 }, (_, i) => ({ inputs: { question: `q${i}` }, outputs: { answer: 'a' }, ...(i === 150 ? { metadata: { source: 'web' } } : {}) }))
  writeFileSync(join(dir, 'late-examples.jsonl'), examples.map((r) => JSON.stringify(r)).join('\n') + '\n')
  await convert({ input: join(dir, 'late-examples.jsonl'), output: join(dir, 'late-examples.csv'), from: 'langsmith', to: 'langsmith' })
  assert.equal(readFileSync(join(dir, 'late-examples.csv'), 'utf8').split('\n')[0], 'inputs.question,outputs.answer,metadata.source')
  await convert({ input: join(dir, 'late-examples.csv'), output: join(dir, 'late-examples-back.jsonl'), from: 'langsmith', to: 'langsmith' })
  assert.deepEqual(readFileSync(join(dir, 'late-examples-back.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown), examples)

  const CARRY = 'evalferry'
  const made = rows.map((r): EvalCase => ({ input: [{ role: 'user', content: r.question }], ...(r.extra ? { metadata: { [CARRY]: { name: 'n' } } } : {}) }))
  // Cases a caller gives as a generator cannot be gone through again: the error stands, naming the case.
  async function* generated() {
    yield* made
  }
  await assert.rejects(write(generated(), join(dir, 'made.csv'), { to: 'hf' }), (error: Error & { location?: unknown }) => {
    assert.ok(error instanceof LayoutError)
    assert.equal(error.code, 'E_LAYOUT')
    assert.equal(error.cases?.length, 1)
    assert.match(error.message, /^this case needs an "evalferry" column to carry metadata, but none of the first cases did/)
    assert.deepEqual(error.location, { file: join(dir, 'made.csv'), record: 270, field: 'evalferry' })
    return true
  })
  // An array can: it is written again with that case among those the columns are chosen from.
  const report = await write(made, join(dir, 'made.csv'), { to: 'hf' })
  assert.deepEqual([report.records.written, report.carried], [300, { metadata: 1 }])
  assert.equal(readFileSync(join(dir, 'made.csv'), 'utf8').split('\n')[0], 'input,evalferry')
  const back: EvalCase[] = []
  for await (const c of read(join(dir, 'made.csv'), { from: 'hf' })) back.push(c)
  assert.deepEqual([back[270]!.name, back[270]!.metadata], [undefined, { [CARRY]: { name: 'n' } }])
})

test('the layout is chosen from at most 32 MB of cases: a case of a new column after records that fill it is written by writing the file again', async () => {
  // Four cases of about 10 MB each in memory fill the sample; the fifth holds a key the others lack.
  const big = 'x'.repeat(5 << 20)
  const cases = [0, 1, 2, 3, 4].map((i): EvalCase => ({ input: [{ role: 'user', content: `q${i} ${big}` }], metadata: i === 4 ? { late: 'yes' } : { n: String(i) } }))
  // Cases given to write() as a generator cannot be gone through twice: the fifth is past the sample, and named.
  async function* generated() {
    yield* cases
  }
  await assert.rejects(write(generated(), join(dir, 'large.csv'), { to: 'csv' }), (error: Error & { location?: { record?: number } }) => {
    assert.match(error.message, /needs an "evalferry" column/)
    assert.equal(error.location?.record, 4)
    return true
  })
  // A file can: convert writes it again with that case among those the columns are chosen from.
  const input = join(dir, 'large.jsonl')
  await write(cases, input, { to: 'evalcase' })
  const output = join(dir, 'large-out.csv')
  await convert({ input, output, from: 'evalcase', to: 'csv' })
  const back: EvalCase[] = []
  for await (const c of read(output, { from: 'csv' })) back.push(c)
  assert.deepEqual(
    back.map((c) => c.metadata),
    cases.map((c) => c.metadata),
  )
})

test('a bad record in a JSON list written on one line is named by its column, in the error and in the rejects', async () => {
  const records = Array.from({ length: 500 }, (_, i) => ({ input: `q${i}`, expected_output: 'a' }))
  ;(records[377] as { input: unknown }).input = 5
  const text = JSON.stringify(records)
  const input = join(dir, 'minified.json')
  writeFileSync(input, text)
  const column = text.indexOf('{"input":5') + 1
  await assert.rejects(convert({ input, output: join(dir, 'minified-out.jsonl'), from: 'deepeval', to: 'langsmith' }), (error: Error & { location?: unknown }) => {
    assert.deepEqual(error.location, { file: input, line: 1, column, field: 'input' })
    assert.match(error.message, /expected a string/)
    return true
  })
  const rejects = join(dir, 'minified-rejects.jsonl')
  const report = await convert({ input, output: join(dir, 'minified-out.jsonl'), from: 'deepeval', to: 'langsmith', onError: 'skip', rejects })
  assert.deepEqual(report.errors.map((e) => e.location), [{ file: input, line: 1, column, field: 'input' }])
  assert.deepEqual(JSON.parse(readFileSync(rejects, 'utf8')).location, { file: input, line: 1, column, field: 'input' })
  // A field on a line of its own is named by that line, without the record's column.
  const split = join(dir, 'split-record.json')
  writeFileSync(split, '[{"input": "a", "expected_output": "x"}, {"input": "b",\n"expected_output": 5}]\n')
  await assert.rejects(convert({ input: split, output: join(dir, 'split-out.jsonl'), from: 'deepeval', to: 'langsmith' }), (error: Error & { location?: unknown }) => {
    assert.deepEqual(error.location, { file: split, line: 2, field: 'expected_output' })
    return true
  })
})

test('a library call missing its input, output or target is a usage error naming it', async () => {
  const usage = (message: string) => (error: Error & { code?: string }) => error.code === 'E_USAGE' && error.message === message
  await assert.rejects(convert({ input: 'in.json', output: 'out.yaml' } as Parameters<typeof convert>[0]), usage('convert() needs options.to, a string; got undefined'))
  await assert.rejects(convert({ input: 'in.json', to: 'evals' } as Parameters<typeof convert>[0]), usage('convert() needs options.output, a string; got undefined'))
  await assert.rejects(convert(undefined as unknown as Parameters<typeof convert>[0]), usage('convert() needs options.input, a string; got undefined'))
  await assert.rejects(write([], 'out.json', undefined as unknown as Parameters<typeof write>[2]), usage('write() needs options.to, a string; got undefined'))
  await assert.rejects(read(undefined as unknown as string).next(), usage('read() needs the input path, a string; got undefined'))
})

test('a library option the command line would refuse is refused too, before anything is read or written', async () => {
  const usage = (message: string) => (error: Error & { code?: string }) => error.code === 'E_USAGE' && error.message === message
  const input = join(dir, 'choices.jsonl')
  writeFileSync(input, '{"input": "q", "expected_output": "a"}\n')
  const output = join(dir, 'choices-out.yaml')
  type Options = Parameters<typeof convert>[0]
  await assert.rejects(convert({ input, output, to: 'evalcase', dialect: 'AgentV' } as unknown as Options), usage('convert(): the option dialect takes agentv or evalcase, not "AgentV"'))
  await assert.rejects(convert({ input, output: join(dir, 'choices-out.json'), to: 'deepeval', dialect: 'agentv' }), usage('convert(): the option dialect chooses how evalcase is written; the target here is deepeval'))
  await assert.rejects(convert({ input, output, to: 'evalcase', onError: 'explode' } as unknown as Options), usage('convert(): the option onError takes fail or skip, not "explode"'))
  await assert.rejects(write([], output, { to: 'agentv', dialect: 'tests' } as unknown as Parameters<typeof write>[2]), usage('write(): the option dialect takes agentv or evalcase, not "tests"'))
  await assert.rejects(read(input, { onError: 'ignore' } as unknown as Parameters<typeof read>[1]).next(), usage('read(): the option onError takes fail or skip, not "ignore"'))
  await assert.rejects(read(input, { comments: true } as unknown as Parameters<typeof read>[1]).next(), usage('read(): the option comments takes warn, not true'))
  await assert.rejects(read(input, 'deepeval' as unknown as Parameters<typeof read>[1]).next(), usage(`read() takes its options as an object (read(file, { from: 'deepeval' })), not "deepeval"`))
  await assert.rejects(read(input, { includes: 'keep' } as unknown as Parameters<typeof read>[1]).next(), usage('read(): the option includes takes warn, not "keep"'))
  for (const [threads, shown] of [[0, '0'], [-3, '-3'], [2.5, '2.5'], [Number.NaN, 'NaN'], ['4', '"4"']] as const) {
    await assert.rejects(
      convert({ input, output, to: 'evalcase', threads } as unknown as Options),
      usage(`convert(): the option threads takes a whole number of at least 1, not ${shown}`),
    )
  }
  assert.deepEqual(readdirSync(dir).filter((f) => f.startsWith('choices-out')), [])
  // The alias agentv is evalcase: its dialect is taken.
  await write([{ input: [{ role: 'user', content: 'q' }] }], output, { to: 'agentv', dialect: 'agentv' })
  assert.match(readFileSync(output, 'utf8'), /^tests:/m)
})

test('read() warns of a YAML file\'s comments in its report when asked, as convert does, and says nothing of them otherwise', async () => {
  const input = join(dir, 'commented.yaml')
  writeFileSync(input, 'tests:\n  - id: a\n    input: q # asked\n    criteria: c\n')
  const ids = async (report: ReturnType<typeof newReport>, comments?: 'warn') => {
    const read_: string[] = []
    for await (const c of read(input, { report, ...(comments ? { comments } : {}) })) read_.push(c.id!)
    return read_
  }
  const asked = newReport()
  assert.deepEqual(await ids(asked, 'warn'), ['a'])
  assert.deepEqual(asked.warnings, [{ message: "comments are not carried (YAML comments are not data); this is the file's first", location: { file: input, line: 3 } }])
  const quiet = newReport()
  assert.deepEqual(await ids(quiet), ['a'])
  assert.deepEqual(quiet.warnings, [])
})

test('an evalcase file\'s includes are warned of as not kept, at their lines, by convert and by read() when asked', async () => {
  const folder = join(dir, 'includes')
  execFileSync('mkdir', ['-p', join(folder, 'cases')])
  writeFileSync(join(folder, 'cases', 'more.yaml'), 'tests:\n  - id: b\n    input: q2\n    criteria: c\n  - file://deeper.jsonl\n')
  writeFileSync(join(folder, 'cases', 'deeper.jsonl'), '{"id": "c", "input": "q3", "criteria": "c"}\n')
  const input = join(folder, 'suite.yaml')
  writeFileSync(input, 'tests:\n  - id: a\n    input: q\n    criteria: c\n  - file://cases/more.yaml\n')
  const message = "the include is not kept: its file's cases are written in its place"
  const expected = [
    { message, location: { file: input, line: 5, field: 'file://cases/more.yaml' } },
    { message, location: { file: join(folder, 'cases', 'more.yaml'), line: 5, field: 'file://deeper.jsonl' } },
  ]
  const report = await convert({ input, output: join(folder, 'out.yaml'), to: 'evalcase' })
  assert.deepEqual(report.warnings, expected)
  const written: string[] = []
  for await (const c of read(join(folder, 'out.yaml'))) written.push(c.id!)
  assert.deepEqual(written, ['a', 'b', 'c'])
  const asked = newReport()
  for await (const _ of read(input, { report: asked, includes: 'warn' })) void _
  assert.deepEqual(asked.warnings, expected)
  const quiet = newReport()
  for await (const _ of read(input, { report: quiet })) void _
  assert.deepEqual(quiet.warnings, [])
})

test('an empty dataset is written as a table with a header, which reads back as empty', async () => {
  const input = join(dir, 'empty.jsonl')
  writeFileSync(input, '')
  const headers: Record<string, string> = { csv: 'input,expected_output', hf: 'input,expected_output', langsmith: 'inputs.question,outputs.answer' }
  for (const [to, extension] of [['csv', 'csv'], ['hf', 'csv'], ['langsmith', 'csv'], ['deepeval', 'csv'], ['hf', 'parquet']] as const) {
    const output = join(dir, `empty-${to}.${extension}`)
    const report = await convert({ input, output, from: 'langsmith', to })
    assert.equal(report.records.written, 0)
    if (headers[to] && extension === 'csv') assert.equal(readFileSync(output, 'utf8'), `${headers[to]}\n`, to)
    assert.deepEqual(await readAll(output, to), [], `${to} ${extension}`)
  }
})

test('a case without an input written where one is required (a DeepEval golden, an EvalCase) is warned of, naming the case', async () => {
  const cases: EvalCase[] = [{ expected_output: 'a' }, { input: [{ role: 'user', content: 'q' }] }]
  for (const [to, extension, message] of [
    ['deepeval', 'json', 'the case has no input, which a DeepEval golden requires: written as ""'],
    ['deepeval', 'csv', 'the case has no input, which a DeepEval golden requires: written as an empty cell, which DeepEval\'s CSV loader reads as a missing input, and so refuses the whole file'],
    ['evals', 'jsonl', 'the case has no input, which the EvalCase schema requires: written as ""'],
  ] as const) {
    const output = join(dir, `no-input.${to}.${extension}`)
    const report = await write(cases, output, { to })
    assert.deepEqual(report.warnings, [{ message, location: { file: output, record: 0, field: 'input' } }], `${to} ${extension}`)
  }
})

test('a DeepEval CSV input that pandas reads as missing, which makes DeepEval refuse the whole file, is warned of as such; JSON keeps an empty input', async () => {
  const cases: EvalCase[] = [
    { input: [{ role: 'user', content: '' }], expected_output: 'a' },
    { input: [{ role: 'user', content: 'NA' }], expected_output: 'b' },
    { input: [{ role: 'user', content: 'N/A is the answer' }], expected_output: 'c' },
  ]
  const csv = join(dir, 'empty-input.deepeval.csv')
  const report = await write(cases, csv, { to: 'deepeval' })
  assert.deepEqual(
    report.warnings.map((w) => [w.location.record, w.location.field, w.message]),
    [
      [0, 'input', "the input is empty: written as an empty cell, which DeepEval's CSV loader reads as a missing input, and so refuses the whole file"],
      [1, 'input', `the cell "NA" is read by pandas (DeepEval's CSV reader) as a missing value, not as this text; DeepEval's CSV loader refuses the whole file over a missing input`],
    ],
  )
  // evalferry itself reads the cells back as they were written.
  const back: EvalCase[] = []
  for await (const c of read(csv)) back.push(c)
  assert.deepEqual(back.map((c) => c.input?.[0]?.content), ['', 'NA', 'N/A is the answer'])
  const json = join(dir, 'empty-input.deepeval.json')
  assert.deepEqual((await write(cases, json, { to: 'deepeval' })).warnings, [])
})

test('library options are checked as the command line checks its flags: booleans, map, rejects without skip, a container detect does not know, cases that are no iterable', async () => {
  const dir = tempDir('evalferry-options-')
  const input = join(dir, 'plain.json')
  writeFileSync(input, '[{"input": "a", "expected_output": "b"}]')
  const usage = (message: string) => (error: Error & { code?: string }) => error.code === 'E_USAGE' && error.message === message
  const output = join(dir, 'out.yaml')
  await assert.rejects(convert({ input, output, to: 'evalcase', extras: 'false' as unknown as boolean }), usage('convert(): the option extras takes true or false, not "false"'))
  await assert.rejects(convert({ input, output, to: 'evalcase', strict: 0 as unknown as boolean }), usage('convert(): the option strict takes true or false, not 0'))
  await assert.rejects(convert({ input, output, to: 'evalcase', rejects: join(dir, 'rj.jsonl') }), usage("convert(): the option rejects names where skipped records go: add onError: 'skip'"))
  assert.equal(existsSync(join(dir, 'rj.jsonl')), false)
  await assert.rejects(read(input, { map: 'input=question' as unknown as undefined }).next(), usage(`read(): the option map takes an object of --map's pairs ({ input: 'question' }) or a function of the row, not "input=question"`))
  await assert.rejects(write(42 as unknown as EvalCase[], output, { to: 'evalcase' }), usage('write() takes the cases as an array, an iterable or an async iterable, not number'))
  await assert.rejects(write(null as unknown as EvalCase[], output, { to: 'evalcase' }), usage('write() takes the cases as an array, an iterable or an async iterable, not null'))
  await assert.rejects(detect(input, { container: 'xml' as unknown as 'json' }), usage('detect(): the option container takes json or jsonl or csv or yaml or parquet, not "xml"'))
  assert.equal(existsSync(output), false)
})

test('--strict with --no-extras: how the source spelled its data (its keys in order) is no dropped field', async () => {
  const dir = tempDir('evalferry-strict-spelling-')
  const input = join(dir, 'plain.json')
  writeFileSync(input, '[{"input": "a", "expected_output": "b"}]')
  for (const to of ['csv', 'langsmith', 'evalcase'] as const) {
    const report = await convert({ input, output: join(dir, `out-${to}.jsonl`), to: to === 'csv' ? 'hf' : to, extras: false, strict: true })
    assert.deepEqual(report.dropped, {}, to)
  }
  // A field no target slot can hold still fails --strict.
  writeFileSync(input, '[{"input": "a", "expected_output": "b", "source_file": "x.pdf"}]')
  await assert.rejects(convert({ input, output: join(dir, 'lossy.jsonl'), to: 'evalcase', extras: false, strict: true }), (e: Error & { code?: string }) => e.code === 'E_LOSSY' && /source_file/.test(e.message))
})

test('a conversion or a write given an AbortSignal stops when it aborts: it rejects with the reason, and the output, never put in place, is left as it was', async () => {
  const dir = tempDir('evalferry-abort-')
  const output = join(dir, 'cases.jsonl')
  writeFileSync(output, 'the user\'s own file\n')
  const leftovers = () => readdirSync(dir).filter((name) => name !== 'cases.jsonl' && name !== 'big.csv').sort()
  const cases = (n: number): EvalCase[] => Array.from({ length: n }, (_, i) => ({ id: `c${i}`, input: [{ role: 'user', content: `question ${i}` }] }))

  // Aborted before it began: nothing is read or written.
  const before = new AbortController()
  before.abort()
  await assert.rejects(write(cases(3), output, { to: 'evals', signal: before.signal }), { name: 'AbortError' })
  await assert.rejects(convert({ input: 'examples/goldens.json', output, to: 'evals', signal: before.signal }), { name: 'AbortError' })

  // Aborted half-way through the cases, with the caller's own reason.
  const midway = new AbortController()
  const reason = new Error('the user closed the page')
  async function* aborting(): AsyncGenerator<EvalCase> {
    for (const [i, c] of cases(400).entries()) {
      if (i === 250) midway.abort(reason)
      yield c
    }
  }
  await assert.rejects(write(aborting(), output, { to: 'evals', signal: midway.signal }), (error) => error === reason)

  // A source that sends nothing more is not waited for.
  const stalled = new AbortController()
  async function* stalling(): AsyncGenerator<EvalCase> {
    yield cases(1)[0]!
    await new Promise(() => {})
  }
  setTimeout(() => stalled.abort(), 50)
  await assert.rejects(write(stalling(), output, { to: 'evals', signal: stalled.signal }), { name: 'AbortError' })

  // A conversion of a file, aborted as it reads it: rows enough that it is still reading when the abort comes.
  const big = join(dir, 'big.csv')
  writeFileSync(big, 'question,answer\n' + Array.from({ length: 20000 }, (_, i) => `"question ${i}, long enough","answer ${i}"\n`).join(''))
  const reading = new AbortController()
  const progress = { records: 0, bytes: 0 }
  const watching = setInterval(() => {
    if (progress.records > 0) reading.abort()
  }, 1)
  try {
    await assert.rejects(convert({ input: big, output, to: 'evals', from: 'csv', signal: reading.signal, progress }), { name: 'AbortError' })
    assert.ok(progress.records > 0 && progress.records < 20000, `aborted after ${progress.records} records`)
  } finally {
    clearInterval(watching)
  }
  assert.equal(readFileSync(output, 'utf8'), 'the user\'s own file\n')
  assert.deepEqual(leftovers(), [])

  // A read ends with the reason, even while it waits for a source that sends nothing more (a pipe left open).
  const fifo = join(dir, 'pipe.jsonl')
  execFileSync('mkfifo', [fifo])
  const { open: openFile } = await import('node:fs/promises')
  const writer = openFile(fifo, 'w')
  const reading2 = new AbortController()
  const cases2: EvalCase[] = []
  const done = (async () => {
    for await (const c of read(fifo, { from: 'evals', signal: reading2.signal })) {
      cases2.push(c)
      reading2.abort()
    }
  })()
  done.catch(() => {})
  const handle = await writer
  await handle.write('{"id": "p1", "input": "first"}\n')
  await assert.rejects(done, { name: 'AbortError' })
  assert.deepEqual(cases2.map((c) => c.id), ['p1'])
  await handle.close()

  // An output nobody reads (a pipe whose reader has stopped) holds the write up: the abort does not wait for it.
  const outPipe = join(dir, 'out-pipe.jsonl')
  execFileSync('mkfifo', [outPipe])
  const reader = openFile(outPipe, 'r')
  const blocked = new AbortController()
  const many = Array.from({ length: 5000 }, (_, i) => ({ id: `b${i}`, input: [{ role: 'user' as const, content: 'x'.repeat(200) }] }))
  let given = 0
  async function* slowly(): AsyncGenerator<EvalCase> {
    for (const c of many) {
      given++
      yield c
    }
  }
  const writing = write(slowly(), outPipe, { to: 'evals', signal: blocked.signal })
  writing.catch(() => {})
  const readEnd = await reader
  // The pipe holds 64 KiB: the write stops on it long before its 5000 cases are given.
  for (let last = -1; given !== last; ) {
    last = given
    await new Promise((r) => setTimeout(r, 100))
  }
  assert.ok(given > 0 && given < many.length, `${given} cases given`)
  blocked.abort()
  await assert.rejects(writing, { name: 'AbortError' })
  await readEnd.close()

  // Not aborted, the signal changes nothing; and a signal that is no AbortSignal is refused as the CLI refuses a bad flag.
  const report2 = await write(cases(3), output, { to: 'evals', signal: new AbortController().signal })
  assert.equal(report2.records.written, 3)
  assert.equal(readFileSync(output, 'utf8').trim().split('\n').length, 3)
  await assert.rejects(convert({ input: big, output, to: 'evals', signal: 'stop' as unknown as AbortSignal }), { code: 'E_USAGE', message: 'convert(): the option signal takes an AbortSignal, not string' })
})
