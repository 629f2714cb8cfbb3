import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tableFromIPC } from 'apache-arrow'
import { readParquet } from 'parquet-wasm'
import { parse as parseYaml } from 'yaml'
import { convert, type ConversionReport, type EvalCase, type EvalferryError, write } from '../src/index.ts'
import { MAIN, ROOT, runCli, SHARED_FIXTURES } from './helpers/cli.ts'
import { wasmTieringFlag } from '../src/cli/main.ts'
import { tempDir } from './helpers/temp.ts'

const dir = tempDir('evalferry-cli-')
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

/** The files in the scratch folder whose names start with `stem` (outputs and leftover temporaries). */
function outputsOf(stem: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith(stem) || n.startsWith(`.${stem}`))
}

test('convert: the bundled DeepEval example becomes evalcase YAML with ids, inputs and expectations', async () => {
  const out = join(dir, 'example.yaml')
  const result = await runCli(['convert', join(ROOT, 'examples', 'goldens.json'), '--to', 'evalcase', '-o', out])
  assert.equal(result.code, 0, result.stderr)
  assert.match(result.stderr, /deepeval → evalcase: 3 read, 3 written, 0 skipped/)
  // Written as AgentV 4 validates it: `tests:`, and the schema that names it an eval file whatever its name.
  const doc = parseYaml(readFileSync(out, 'utf8')) as { $schema: string; tests: { id: string; input: unknown; expected_output?: unknown }[] }
  assert.equal(doc.$schema, 'agentv-eval-v2')
  assert.deepEqual(
    doc.tests.map((c) => [c.id, c.input]),
    [
      ['case-1', 'What is the refund window for a damaged item?'],
      ['case-2', 'Summarise the onboarding guide in three bullet points.'],
      ['case-3', '¿Cuál es el horario de atención?'],
    ],
  )
  assert.equal(doc.tests[0]!.expected_output, '30 days from delivery for damaged items.')
})

test('convert: --json prints the report; --report writes it; detect names the format', async () => {
  const out = join(dir, 'report-out.jsonl')
  const reportPath = join(dir, 'report.json')
  const result = await runCli(['convert', join(ROOT, 'examples', 'goldens.json'), '--to', 'deepeval', '-o', out, '--json', '--report', reportPath])
  assert.equal(result.code, 0, result.stderr)
  const printed = JSON.parse(result.stdout)
  assert.deepEqual(printed.records, { read: 3, written: 3, skipped: 0 })
  assert.deepEqual(JSON.parse(readFileSync(reportPath, 'utf8')).records, printed.records)
  const detected = await runCli(['detect', join(ROOT, 'examples', 'goldens.json'), '--json'])
  assert.equal(detected.code, 0, detected.stderr)
  const [d] = JSON.parse(detected.stdout)
  assert.equal(d.format, 'deepeval')
  assert.equal(d.container, 'json')
  assert.equal(d.records, 3)
  assert.ok(d.fields.includes('additional_metadata'))
})

interface BadCase {
  name: string
  file: string
  text: string
  from: string
  to: string
  /** What the error line must hold: file:line and the field. */
  error: RegExp
}

const BAD: BadCase[] = [
  {
    name: 'broken YAML',
    file: 'broken.yaml',
    text: 'evalcases:\n  - id: a\n    input: x: y\n',
    from: 'evalcase',
    to: 'deepeval',
    error: /broken\.yaml:3:12: invalid YAML/,
  },
  {
    name: 'a CSV row with an open quote',
    file: 'open.csv',
    text: 'input,expected_output\r\nq1,a1\r\nq2,"never closed\r\n',
    from: 'deepeval',
    to: 'evalcase',
    error: /open\.csv:3: a quoted cell is never closed/,
  },
  {
    name: 'a JSON record missing input',
    file: 'noinput.json',
    text: '[\n  {"input": "ok"},\n  {"expected_output": "no input here"}\n]',
    from: 'deepeval',
    to: 'evalcase',
    error: /noinput\.json:3: input: /,
  },
  {
    name: 'a duplicate evalcase id',
    file: 'dup.yaml',
    text: 'evalcases:\n  - id: same\n    input: one\n  - id: other\n    input: two\n  - id: same\n    input: three\n',
    from: 'evalcase',
    to: 'deepeval',
    error: /dup\.yaml:6: id: duplicate id "same"/,
  },
]

for (const bad of BAD) {
  test(`convert: ${bad.name} exits 1, names file, line and field, and writes no output`, async () => {
    const input = file(bad.file, bad.text)
    const stem = `out-${bad.file.replace(/\W/g, '')}`
    const out = join(dir, `${stem}.${bad.to === 'evalcase' ? 'yaml' : 'json'}`)
    const result = await runCli(['convert', input, '--from', bad.from, '--to', bad.to, '-o', out])
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stderr, bad.error)
    assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace')
    assert.deepEqual(outputsOf(stem), [], 'no output file and no temporary left behind')
    assert.equal(readFileSync(input, 'utf8'), bad.text, 'the input is untouched')
  })
}

test('convert: a failed conversion leaves an existing output as it was', async () => {
  const out = file('existing.yaml', 'evalcases: []\n')
  const input = file('bad-for-existing.json', '[{"input": 1}]')
  const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', out])
  assert.equal(result.code, 1)
  assert.equal(readFileSync(out, 'utf8'), 'evalcases: []\n')
})

test('convert: an output that is the input is refused with exit 2', async () => {
  const input = file('same.json', readFileSync(join(SHARED_FIXTURES, 'deepeval', 'saveas-single_turn.json'), 'utf8'))
  const before = readFileSync(input, 'utf8')
  const result = await runCli(['convert', input, '--to', 'deepeval', '-o', input])
  assert.equal(result.code, 2)
  assert.match(result.stderr, /never overwrites an input/)
  assert.equal(readFileSync(input, 'utf8'), before)
})

test('convert and detect of a service refuse a --timeout of no seconds or past the longest a timer holds, by the rule prefetch and resolve use', async () => {
  // Offline, a request would be exit 3: the refusal comes first.
  const env = { EVALFERRY_OFFLINE: '1', LANGSMITH_ENDPOINT: 'http://127.0.0.1:9', HF_ENDPOINT: 'http://127.0.0.1:9' }
  const out = join(dir, 'timeout-refused.json')
  for (const [args, message] of [
    [['convert', 'langsmith://x', '--to', 'deepeval', '-o', out, '--timeout', '0'], '--timeout takes a number of seconds above 0, not "0"'],
    [['convert', 'langsmith://x', '--to', 'deepeval', '-o', out, '--timeout', '2147484'], '--timeout takes at most 2147483 seconds, not "2147484"'],
    [['detect', 'hf://datasets/acme/x', '--timeout', 'soon'], '--timeout takes a number of seconds above 0, not "soon"'],
    [['detect', 'hf://datasets/acme/x', '--timeout', '2147484'], '--timeout takes at most 2147483 seconds, not "2147484"'],
  ] as const) {
    const result = await runCli([...args], env)
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
    assert.ok(result.stderr.includes(message), `${args.join(' ')}: ${result.stderr}`)
  }
  assert.equal(existsSync(out), false)
})

test('convert: a rejects file, report or shard output that is an input, or two files written to one place, are refused with exit 2', async () => {
  const input = file('guarded.jsonl', '{"input": "a"}\n{"input": 5}\n')
  const part = file('guarded.part-1-of-2.jsonl', '{"input": "b"}\n{"input": "c"}\n')
  const out = join(dir, 'guarded-out.jsonl')
  const skip = ['--on-error', 'skip']
  const cases: [string[], string][] = [
    [[input, '-o', out, ...skip, '--rejects', input], `the rejects file ${input} is the input ${input}; evalferry never overwrites an input`],
    [[input, '-o', out, '--report', input], `the report ${input} is the input ${input}; evalferry never overwrites an input`],
    // A shard of one file writes <stem>.part-<i>-of-<n>: here the input's own name.
    [[part, '-o', join(dir, 'guarded.jsonl.tmp', '..', 'guarded.jsonl'), '--shard', '1/2'], `the output ${join(dir, 'guarded.part-1-of-2.jsonl')} is the input ${part}; evalferry never overwrites an input`],
    [[input, '-o', out, ...skip, '--rejects', out], `the output and the rejects file would both be written to ${out}; name another file for one of them`],
    [[input, '-o', out, '--report', out], `the output and the report would both be written to ${out}; name another file for one of them`],
    [[input, '-o', '-', '--report', '-'], 'the output and the report would both be written to standard output; name another file for one of them'],
    [[input, '-o', '-', '--json'], 'the output and the report (--json) would both be written to standard output; name another file for one of them'],
    // /dev/stdout is standard output, by any of its names.
    [[input, '-o', '/dev/stdout', '--json'], 'the output and the report (--json) would both be written to standard output; name another file for one of them'],
    [[input, '-o', '-', '--report', '/dev/fd/1'], 'the output and the report would both be written to standard output; name another file for one of them'],
    [[input, '-o', out, '--rejects', join(dir, 'guarded-rejects.jsonl')], '--rejects names where skipped records go: add --on-error skip'],
  ]
  for (const [args, message] of cases) {
    const result = await runCli(['convert', ...args, '--from', 'deepeval', '--to', 'evals'])
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
    assert.equal(result.stderr, `evalferry: ${message}\n`)
    assert.equal(result.stdout, '')
  }
  assert.equal(readFileSync(input, 'utf8'), '{"input": "a"}\n{"input": 5}\n')
  assert.equal(readFileSync(part, 'utf8'), '{"input": "b"}\n{"input": "c"}\n')
  assert.deepEqual(outputsOf('guarded').sort(), ['guarded.jsonl', 'guarded.part-1-of-2.jsonl'])
})

test('convert: standard output by its names, a device, a named pipe and a path ending in / are written without an extension to name a container', async () => {
  const input = file('unnamed-out.jsonl', '{"input": "a", "expected_output": "b"}\n')
  // The target's own container, as for -o -.
  const stdout = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '-o', '/dev/stdout'])
  assert.equal(stdout.code, 0, stdout.stderr)
  assert.deepEqual((JSON.parse(stdout.stdout) as { input: string; expected: string }[]).map((c) => [c.input, c.expected]), [['a', 'b']])
  const dashed = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '-o', '-'])
  assert.equal(stdout.stdout, dashed.stdout)
  const devNull = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', '/dev/null'])
  assert.equal(devNull.code, 0, devNull.stderr)
  assert.match(devNull.stderr, /deepeval → evalcase: 1 read, 1 written/)
  const fifo = join(dir, 'unnamed-out-pipe')
  spawnSync('mkfifo', [fifo])
  const reader = spawn('cat', [fifo])
  let piped = ''
  reader.stdout.on('data', (c: Buffer) => (piped += c.toString()))
  const closed = new Promise((done) => reader.on('close', done))
  const toPipe = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '--to-container', 'jsonl', '-o', fifo])
  await closed
  assert.equal(toPipe.code, 0, toPipe.stderr)
  assert.deepEqual((({ id, input, expected_output }) => [id, input, expected_output])(JSON.parse(piped) as Record<string, string>), ['case-1', 'a', 'b'])
  // A path ending in / is a directory, made if need be, that the input is written into under its stem, in its container as in a batch.
  const into = join(dir, 'unnamed-out-dir')
  const slashed = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '-o', `${into}/`])
  assert.equal(slashed.code, 0, slashed.stderr)
  assert.deepEqual(readdirSync(into), ['unnamed-out.jsonl'])
  assert.deepEqual(JSON.parse(readFileSync(join(into, 'unnamed-out.jsonl'), 'utf8')), (JSON.parse(stdout.stdout) as unknown[])[0])
})

test('convert: a batch writes the rejects of all its files to the one file named, in input order', async () => {
  const batch = join(dir, 'rejects-batch')
  mkdirSync(batch)
  const first = join(batch, 'first.jsonl')
  const second = join(batch, 'second.jsonl')
  writeFileSync(first, '{"input": "keep 1"}\n{"input": 5}\n')
  writeFileSync(second, '{"input": 6}\n{"input": "keep 2"}\n{"input": 7}\n')
  const rejects = join(batch, 'rejects.jsonl')
  for (const jobs of ['1', '2']) {
    const result = await runCli(['convert', second, first, '--from', 'deepeval', '--to', 'evals', '-o', join(batch, 'out'), '--on-error', 'skip', '--rejects', rejects, '--jobs', jobs])
    assert.equal(result.code, 0, result.stderr)
    const lines = readFileSync(rejects, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { location: { file: string; line: number }; record: string })
    assert.deepEqual(
      lines.map((r) => [r.location.file, r.location.line, r.record]),
      [
        [second, 1, '{"input": 6}'],
        [second, 3, '{"input": 7}'],
        [first, 2, '{"input": 5}'],
      ],
    )
    assert.deepEqual(readdirSync(batch).sort(), ['first.jsonl', 'out', 'rejects.jsonl', 'second.jsonl'])
  }
})

test('convert: a shard names its rejects and report as its part, and a shard to standard output writes there', async () => {
  const input = file('sharded-rejects.jsonl', '{"input": "a"}\n{"input": 5}\n{"input": "c"}\n{"input": 6}\n')
  const out = join(dir, 'sharded-out.jsonl')
  for (const i of [1, 2]) {
    const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '-o', out, '--shard', `${i}/2`, '--on-error', 'skip', '--rejects', join(dir, 'sharded-rejects-of.jsonl'), '--report', join(dir, 'sharded-report.json'), '--quiet'])
    assert.equal(result.code, 0, result.stderr)
    const report = JSON.parse(readFileSync(join(dir, `sharded-report.part-${i}-of-2.json`), 'utf8')) as { output: string; records: { read: number; skipped: number } }
    assert.equal(report.output, join(dir, `sharded-out.part-${i}-of-2.jsonl`))
    assert.deepEqual([report.records.read, report.records.skipped], [1, 1])
    const reject = JSON.parse(readFileSync(join(dir, `sharded-rejects-of.part-${i}-of-2.jsonl`), 'utf8')) as { location: { line: number } }
    assert.equal(reject.location.line, 2 * i)
  }
  const toStdout = await runCli(['convert', input, '--from', 'deepeval', '--to', 'langsmith', '--to-container', 'jsonl', '-o', '-', '--shard', '2/2', '--on-error', 'skip', '--quiet'])
  assert.equal(toStdout.code, 0, toStdout.stderr)
  assert.deepEqual(toStdout.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { inputs: unknown }).inputs), [{ question: 'c' }])
  assert.equal(existsSync(join(process.cwd(), '-.part-2-of-2')), false)
})

test('a batch with a corrupt Parquet file names it, on worker threads too, with exit 1', async () => {
  const batch = join(dir, 'corrupt-batch')
  mkdirSync(batch)
  const corrupt = join(batch, 'b.parquet')
  writeFileSync(corrupt, readFileSync(join(ROOT, 'test', 'fixtures', 'bad', 'hf-corrupt-page.parquet')))
  await convert({ input: join(ROOT, 'examples', 'goldens.json'), output: join(batch, 'a.parquet'), to: 'hf' })
  for (const jobs of ['1', '2']) {
    const result = await runCli(['convert', batch, '--from', 'hf', '--to', 'deepeval', '-o', join(dir, 'corrupt-out'), '--jobs', jobs])
    assert.equal(result.code, 1, result.stderr)
    const a = join(dir, 'corrupt-out', 'a.json')
    assert.equal(result.stderr, `evalferry: the batch stopped: 1 of 2 file(s) written (${a}); 1 failed (${corrupt}); 0 not converted\nevalferry: ${corrupt} record 1: corrupt Parquet data: the reader stopped on it\n`)
  }
  assert.equal(existsSync(join(dir, 'corrupt-out', 'b.json')), false)
})

test('convert: a .tsv output is written with tabs and reads back; --to-container that contradicts the output name is refused', async () => {
  const input = file('tabs.tsv', 'question\tanswer\nq1, with a comma\t"a1\tafter a tab"\n')
  const out = join(dir, 'tabs-out.tsv')
  const result = await runCli(['convert', input, '--from', 'csv', '--to', 'csv', '-o', out, '--quiet'])
  assert.equal(result.code, 0, result.stderr)
  assert.equal(readFileSync(out, 'utf8'), 'question\tanswer\nq1, with a comma\t"a1\tafter a tab"\n')
  const back = await runCli(['convert', out, '--from', 'csv', '--to', 'evals', '-o', '-', '--quiet'])
  const [record] = JSON.parse(back.stdout) as { input: string; expected: string }[]
  assert.deepEqual([record!.input, record!.expected], ['q1, with a comma', 'a1\tafter a tab'])

  const contradicted = await runCli(['convert', input, '--from', 'csv', '--to', 'hf', '-o', join(dir, 'tabs-out.csv'), '--to-container', 'parquet'])
  assert.equal(contradicted.code, 2)
  assert.equal(contradicted.stderr, `evalferry: --to-container parquet contradicts the output ${join(dir, 'tabs-out.csv')}, a csv file by its name\n`)
  assert.equal(existsSync(join(dir, 'tabs-out.csv')), false)
})

test('convert: standard output closed by its reader (| head) ends the conversion quietly, with exit 141', async () => {
  const lines = Array.from({ length: 50_000 }, (_, i) => JSON.stringify({ input: `question ${i} ${'x'.repeat(40)}` })).join('\n')
  const input = file('piped.jsonl', lines + '\n')
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'convert', input, '--from', 'deepeval', '--to', 'langsmith', '--to-container', 'jsonl', '-o', '-'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let first = ''
  let stderr = ''
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  child.stdout.once('data', (c: Buffer) => {
    first = c.toString()
    child.stdout.destroy()
  })
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
  assert.match(first, /^\{"inputs":\{"question":"question 0 x+"\}/)
  assert.equal(stderr, '')
  assert.equal(code, 141)
})

test('a JSON Lines line that is not JSON and a CSV row of too many cells are bad records: skipped with --on-error skip, each listed by validate', async () => {
  const lines = file('bad-lines.jsonl', '{"input": "a"}\n{"input":\n{"input": "c"}\n{"input": "d", "input": "e"}\n')
  const rows = file('bad-rows.csv', 'question,answer\nq1,a1\nq2,a2,extra\nq3,a3\nq4,a4,x\n')
  const validLines = await runCli(['validate', lines, '--from', 'deepeval'])
  assert.equal(validLines.code, 1)
  assert.deepEqual(validLines.stderr.trimEnd().split('\n'), [
    `${lines}:2:10: invalid JSON: Unexpected end of JSON input`,
    `${lines}:4:16: input: duplicate key "input": JSON keeps only the last, so a value would be lost`,
  ])
  const validRows = await runCli(['validate', rows, '--from', 'csv'])
  assert.equal(validRows.code, 1)
  assert.deepEqual(validRows.stderr.trimEnd().split('\n'), [
    `${rows}:3: column 3: row has 3 cells but the header has 2 columns`,
    `${rows}:5: column 3: row has 3 cells but the header has 2 columns`,
  ])

  const rejects = join(dir, 'bad-lines-rejects.jsonl')
  const out = join(dir, 'bad-lines-out.json')
  const skipped = await runCli(['convert', lines, '--from', 'deepeval', '--to', 'evals', '-o', out, '--on-error', 'skip', '--rejects', rejects, '--quiet'])
  assert.equal(skipped.code, 0, skipped.stderr)
  assert.deepEqual((JSON.parse(readFileSync(out, 'utf8')) as { input: string }[]).map((c) => c.input), ['a', 'c'])
  assert.deepEqual(
    readFileSync(rejects, 'utf8').trimEnd().split('\n').map((l) => {
      const r = JSON.parse(l) as { code: string; location: { line: number }; record: string }
      return [r.code, r.location.line, r.record]
    }),
    [
      ['E_PARSE', 2, '{"input":'],
      ['E_PARSE', 4, '{"input": "d", "input": "e"}'],
    ],
  )
  const failed = await runCli(['convert', rows, '--from', 'csv', '--to', 'evals', '-o', join(dir, 'bad-rows-out.json')])
  assert.equal(failed.code, 1)
  assert.equal(failed.stderr, `evalferry: ${rows}:3: column 3: row has 3 cells but the header has 2 columns\n`)
})

test('convert: an integer past 2^53 keeps every digit, as text, and the report warns of it at its line', async () => {
  const input = file('long-integers.jsonl', '{"input": "a", "additional_metadata": {"trace": 12345678901234567890, "n": 7}}\n')
  const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '-o', '-'])
  assert.equal(result.code, 0, result.stderr)
  const [record] = JSON.parse(result.stdout) as { metadata: Record<string, unknown> }[]
  assert.deepEqual([record!.metadata.trace, record!.metadata.n], ['12345678901234567890', 7])
  assert.match(result.stderr, new RegExp(`1 warning:\n  ${input}:1: the integer 12345678901234567890 is past what a number holds exactly: kept as text, every digit\n`))
})

test('convert: a YAML file\'s comments are warned of as not carried, at the first; validate and a file without one say nothing of them', async () => {
  const commented = file('commented.yaml', 'description: refunds\ntests:\n  - id: a\n    input: "hi # not a comment"\n    criteria: |\n      # a heading, not a comment\n      says hello\n  - id: b # the second\n    input: bye\n    criteria: waves\n')
  const converted = await runCli(['convert', commented, '--to', 'evalcase', '-o', join(dir, 'commented-out.yaml'), '--json'])
  assert.equal(converted.code, 0, converted.stderr)
  const report = JSON.parse(converted.stdout) as ConversionReport
  assert.deepEqual(report.warnings, [{ message: "comments are not carried (YAML comments are not data); this is the file's first", location: { file: commented, line: 8 } }])
  const validated = await runCli(['validate', commented])
  assert.equal(validated.code, 0, validated.stderr)
  assert.doesNotMatch(validated.stderr, /comments are not carried/)
  const plain = file('uncommented.yaml', 'tests:\n  - id: a\n    input: "hi # not a comment"\n    criteria: |\n      # a heading\n')
  const quiet = await runCli(['convert', plain, '--to', 'deepeval', '-o', '-'])
  assert.equal(quiet.code, 0, quiet.stderr)
  assert.doesNotMatch(quiet.stderr, /warning/)
})

test('a quoted glob is expanded to the dataset files it matches, in name order, for convert, validate and detect', async () => {
  const folder = join(dir, 'globbed')
  mkdirSync(folder)
  writeFileSync(join(folder, 'b.jsonl'), '{"input": "b"}\n')
  writeFileSync(join(folder, 'a.jsonl'), '{"input": "a"}\n{"input": 5}\n')
  writeFileSync(join(folder, 'notes.txt'), 'not a dataset\n')
  const pattern = join(folder, '*')
  const out = join(dir, 'globbed-out')
  const converted = await runCli(['convert', join(folder, '[ab].jsonl'), '--from', 'deepeval', '--to', 'evals', '-o', out, '--on-error', 'skip', '--quiet'])
  assert.equal(converted.code, 0, converted.stderr)
  assert.deepEqual(readdirSync(out).sort(), ['a.jsonl', 'b.jsonl'])
  const validated = await runCli(['validate', pattern, '--from', 'deepeval'])
  assert.equal(validated.code, 1)
  assert.deepEqual(validated.stdout.trimEnd().split('\n'), [`${join(folder, 'a.jsonl')}: 1 case, 1 error`, `${join(folder, 'b.jsonl')}: 1 case, 0 errors`])
  const detected = await runCli(['detect', pattern, '--json'])
  assert.deepEqual((JSON.parse(detected.stdout) as { file: string }[]).map((d) => d.file), [join(folder, 'a.jsonl'), join(folder, 'b.jsonl')])
  const none = await runCli(['convert', join(folder, '*.csv'), '--to', 'evals', '-o', out])
  assert.equal(none.code, 1)
  assert.equal(none.stderr, `evalferry: ${join(folder, '*.csv')}: no dataset file matches\n`)
})

test('convert: YAML is written only as deep as it reads back: 450 levels round-trip, 600 are refused naming the record', async () => {
  const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)
  const fits = file('deep-450.json', `[{"input": "a", "additional_metadata": {"k": ${nested(450)}}}]`)
  const out = join(dir, 'deep-450.yaml')
  assert.equal((await runCli(['convert', fits, '--from', 'deepeval', '--to', 'evalcase', '-o', out, '--quiet'])).code, 0)
  const back = await runCli(['convert', out, '--to', 'deepeval', '-o', '-', '--quiet'])
  assert.equal(back.code, 0, back.stderr)
  assert.equal(JSON.stringify((JSON.parse(back.stdout) as { additional_metadata: unknown }[])[0]!.additional_metadata), `{"k":${nested(450)}}`)
  const tooDeep = file('deep-600.json', `[{"input": "a"}, {"input": "b", "additional_metadata": {"k": ${nested(600)}}}]`)
  const refused = await runCli(['convert', tooDeep, '--from', 'deepeval', '--to', 'evalcase', '-o', join(dir, 'deep-600.yaml')])
  assert.equal(refused.code, 1)
  assert.equal(refused.stderr, `evalferry: ${tooDeep} record 2: nested deeper than 500 levels: too deep to write as YAML that reads back\n`)
  assert.equal(existsSync(join(dir, 'deep-600.yaml')), false)
})

test('convert: one file whose extension names no container is one file: its container is asked for, not a directory for a batch', async () => {
  const input = file('table-data.txt', 'question,answer\nq1,a1\n')
  const unnamed = await runCli(['convert', input, '--from', 'csv', '--to', 'evals', '-o', '-'])
  assert.equal(unnamed.code, 2)
  assert.equal(unnamed.stderr, `evalferry: cannot tell the container of ${input} from its extension; expected .json, .jsonl, .csv, .tsv, .yaml, .yml or .parquet, each maybe followed by .gz, or --from-container\n`)
  const named = await runCli(['convert', input, '--from', 'csv', '--from-container', 'csv', '--to', 'evals', '-o', '-', '--quiet'])
  assert.equal(named.code, 0, named.stderr)
  assert.deepEqual((JSON.parse(named.stdout) as { input: string }[]).map((c) => c.input), ['q1'])
})

test('convert --json prints the report on a failed run too, with why it stopped, and exits as the failure does', async () => {
  const input = file('json-failed.jsonl', '{"input": "a"}\n{"input":\n')
  const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '-o', join(dir, 'json-failed.json'), '--json'])
  assert.equal(result.code, 1)
  const report = JSON.parse(result.stdout) as { failed: { code: string; message: string; location: { line: number } } }
  assert.deepEqual([report.failed.code, report.failed.location.line], ['E_PARSE', 2])
  assert.equal(result.stderr, `evalferry: ${report.failed.message}\n`)

  // The record read before the bad one counts; none is written, since the output is left as it was.
  assert.deepEqual((report as unknown as ConversionReport).records, { read: 1, written: 0, skipped: 0 })

  // Without --from, the report names the format the file was read as; in a batch, the files written before the failure count, and the failed file's records read.
  const good = file('json-failed-first.jsonl', '{"input": "x", "expected_output": "y"}\n{"input": "z"}\n')
  const out = join(dir, 'json-failed-batch')
  for (const jobs of ['1', '2']) {
    rmSync(out, { recursive: true, force: true })
    const batch = await runCli(['convert', good, input, '--to', 'evals', '-o', out, '--json', '--jobs', jobs])
    assert.equal(batch.code, 1)
    const total = JSON.parse(batch.stdout) as ConversionReport & { failed: { location: { file: string; line: number } } }
    assert.deepEqual([total.from, total.records, total.failed.location], ['deepeval', { read: 3, written: 2, skipped: 0 }, { file: input, line: 2, column: 10 }], `--jobs ${jobs}`)
    assert.deepEqual(readdirSync(out), ['json-failed-first.jsonl'])
  }
})

test('a failed conversion to standard output or a pipe hands out every record before the bad one, and its report counts them', async () => {
  // Records of about 100 bytes: more than the 64 KiB a stream's writes are gathered in go out before the bad one.
  const good = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ id: `r${i}`, input: `question ${i} `.padEnd(60, '.'), expected_output: 'yes' }))
  const input = file('stops-at-2001.jsonl', [...good, '{"id": "bad", "input":', ''].join('\n'))
  for (const [to, container, lines] of [['deepeval', 'jsonl', 2000], ['deepeval', 'csv', 2001], ['evalcase', 'yaml', undefined]] as const) {
    const reportPath = join(dir, `stops-${container}.report.json`)
    const result = await runCli(['convert', input, '--from', 'evalcase', '--to', to, '--to-container', container, '-o', '-', '--report', reportPath])
    assert.equal(result.code, 1, container)
    assert.match(result.stderr, /stops-at-2001\.jsonl:2001:\d+: invalid JSON/, container)
    const report = JSON.parse(readFileSync(reportPath, 'utf8')) as ConversionReport
    assert.deepEqual(report.records, { read: 2000, written: 2000, skipped: 0 }, container)
    // Every record converted is on standard output, whole: the last is the one before the bad one.
    if (lines !== undefined) assert.equal(result.stdout.split('\n').filter(Boolean).length, lines, container)
    else assert.equal(result.stdout.match(/^ {2}- id: r/gm)?.length, 2000)
    assert.match(result.stdout, /r1999/, container)
    assert.ok(result.stdout.endsWith('\n'), container)
  }
  // A named pipe gets them too.
  const fifo = join(dir, 'stops.fifo')
  spawnSync('mkfifo', [fifo])
  const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'ignore'] })
  let piped = ''
  reader.stdout.setEncoding('utf8').on('data', (d: string) => (piped += d))
  const readerDone = new Promise((done) => reader.on('close', done))
  const result = await runCli(['convert', input, '--from', 'evalcase', '--to', 'deepeval', '--to-container', 'jsonl', '-o', fifo, '--json'])
  await readerDone
  assert.equal(result.code, 1)
  assert.deepEqual((JSON.parse(result.stdout) as ConversionReport).records, { read: 2000, written: 2000, skipped: 0 })
  assert.equal(piped.split('\n').filter(Boolean).length, 2000)

  // The library's convert() rejects with the same report on its error.
  const output = join(dir, 'stops.jsonl')
  await assert.rejects(convert({ input, output, from: 'evalcase', to: 'deepeval' }), (error: EvalferryError) => {
    assert.equal(error.code, 'E_PARSE')
    assert.deepEqual(error.report?.records, { read: 2000, written: 0, skipped: 0 })
    assert.deepEqual([error.report?.from, error.report?.to, error.report?.inputs, error.report?.output], ['evalcase', 'deepeval', [input], output])
    return true
  })
  assert.equal(existsSync(output), false)
})

test('the sidecar of a JSON Lines output, and a library conversion onto its own input, never overwrite the input', async () => {
  const input = file('sidecar-input.yaml', 'description: suite\nevalcases:\n  - id: a\n    input: hi\n    expected_output: ok\n')
  const before = readFileSync(input, 'utf8')
  const result = await runCli(['convert', input, '--to', 'evalcase', '-o', join(dir, 'sidecar-input.jsonl')])
  assert.equal(result.code, 2)
  assert.equal(result.stderr, `evalferry: the output's sidecar ${input} is the input ${input}; evalferry never overwrites an input\n`)
  await assert.rejects(convert({ input, output: join(dir, '.', 'sidecar-input.yaml'), to: 'evalcase' }), (error: Error & { code?: string }) => {
    assert.equal(error.message, `the output ${join(dir, '.', 'sidecar-input.yaml')} is the input ${input}; evalferry never overwrites an input`)
    return true
  })
  assert.equal(readFileSync(input, 'utf8'), before)
  assert.equal(existsSync(join(dir, 'sidecar-input.jsonl')), false)
})

test('a case the target cannot take is named by its place in the input; a case made by a library caller by its place in the output', async () => {
  const rows = Array.from({ length: 150 }, (_, i) => JSON.stringify({ question: `q${i}`, answer: 'a', ...(i === 120 ? { late: 'x' } : {}) }))
  const input = file('late-column.jsonl', rows.join('\n') + '\n')
  const out = join(dir, 'late-column.csv')
  // Standard input cannot be read twice, so the file cannot be written again with a wider header.
  const piped = await runCli(['convert', '-', '--from', 'hf', '--from-container', 'jsonl', '--to', 'hf', '-o', out], {}, 60_000, readFileSync(input))
  assert.equal(piped.code, 1)
  assert.match(piped.stderr, /^evalferry: -:121: evalferry: this case needs an "evalferry" column/)
  // A file can: its header gets the column.
  const result = await runCli(['convert', input, '--from', 'hf', '--to', 'hf', '-o', out, '--quiet'])
  assert.equal(result.code, 0, result.stderr)
  assert.deepEqual(readFileSync(out, 'utf8').split('\n').slice(0, 2), ['question,answer,late', 'q0,a,'])

  // Standard output is written again with the column while it has taken nothing (the rows are still gathered)...
  const small = await runCli(['convert', input, '--from', 'hf', '--to', 'hf', '--to-container', 'csv', '-o', '-', '--quiet'])
  assert.equal(small.code, 0, small.stderr)
  assert.deepEqual(small.stdout.split('\n').slice(0, 2), ['question,answer,late', 'q0,a,'])
  assert.equal(small.stdout.split('\n').filter(Boolean).length, 151)
  // ...but once it has taken rows it cannot be: the run stops at the case with every row before it, and one header.
  const long = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ question: `q${i} `.padEnd(60, '.'), answer: 'a', ...(i === 2500 ? { late: 'x' } : {}) }))
  const longInput = file('late-column-long.jsonl', long.join('\n') + '\n')
  const streamed = await runCli(['convert', longInput, '--from', 'hf', '--to', 'hf', '--to-container', 'csv', '-o', '-'])
  assert.equal(streamed.code, 1)
  assert.match(streamed.stderr, /late-column-long\.jsonl:2501: evalferry: this case needs an "evalferry" column.*; standard output had already taken the records before it, and a stream cannot be written again with the column added: write to a file instead, which can\n$/)
  const streamedRows = streamed.stdout.split('\n').filter(Boolean)
  assert.deepEqual([streamedRows.length, streamedRows[0], streamedRows.at(-1)], [2501, 'question,answer', `${'q2499 '.padEnd(60, '.')},a`])
  const toFile = await runCli(['convert', longInput, '--from', 'hf', '--to', 'hf', '-o', join(dir, 'late-column-long.csv'), '--quiet'])
  assert.equal(toFile.code, 0, toFile.stderr)
  assert.equal(readFileSync(join(dir, 'late-column-long.csv'), 'utf8').split('\n')[0], 'question,answer,late')

  const made = (async function* (): AsyncGenerator<EvalCase> {
    for (let i = 0; i < 150; i++) yield { input: [{ role: 'user', content: `q${i}` }], ...(i === 120 ? { metadata: { late: 'x' } } : {}) }
  })()
  await assert.rejects(write(made, join(dir, 'made.csv'), { to: 'hf' }), (error: EvalferryError) => {
    assert.deepEqual(error.location, { file: join(dir, 'made.csv'), record: 120, field: 'evalferry' })
    return true
  })
})

test('convert: NaN and the infinities of a YAML dataset come back from DeepEval JSON, CSV and JSON Lines, their metadata not carried', async () => {
  const input = file('non-finite.yaml', 'evalcases:\n  - id: a\n    input: hi\n    expected_output: ok\n    metadata: {score: .nan, hi: .inf, lo: -.inf}\n')
  for (const [to, extension] of [['deepeval', 'json'], ['deepeval', 'csv'], ['langsmith', 'jsonl']]) {
    const out = join(dir, `non-finite-${to}.${extension}`)
    const there = await runCli(['convert', input, '--to', to!, '-o', out])
    assert.equal(there.code, 0, there.stderr)
    assert.doesNotMatch(there.stderr, /carried.*metadata/, `${to} ${extension}`)
    const back = await runCli(['convert', out, '--from', to!, '--to', 'evalcase', '-o', '-', '--quiet'])
    assert.equal(back.code, 0, back.stderr)
    assert.match(back.stdout, /metadata:\n +score: \.nan\n +hi: \.inf\n +lo: -\.inf\n/, `${to} ${extension}`)
  }
})

test('an input that does not exist is named as missing, in every container and command, with exit 1', async () => {
  const out = join(dir, 'missing-out.jsonl')
  // A name without an extension, or a directory's, is missing before its container is asked for.
  const formats = { 'missing.csv': 'csv', 'missing.json': 'deepeval', 'missing.jsonl': 'langsmith', 'missing.yaml': 'evalcase', 'missing.parquet': 'hf', missing: 'deepeval', 'missing-dir/': 'evals' }
  for (const [name, format] of Object.entries(formats)) {
    const input = join(dir, name)
    for (const args of [
      ['convert', input, '--to', 'evalcase', '-o', out],
      ['convert', input, '--from', format, '--to', 'deepeval', '-o', out],
      ['detect', input],
      ['validate', input],
    ]) {
      const result = await runCli(args)
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stderr}`)
      // validate lists what it finds, one per line, as it lists bad records.
      const prefix = args[0] === 'validate' ? '' : 'evalferry: '
      assert.equal(result.stderr, `${prefix}${input}: no such file\n`, args.join(' '))
    }
  }
  assert.equal(existsSync(out), false)
})

test('an output that cannot be made is named, with exit 1 and no temporary left behind', async () => {
  const input = join(ROOT, 'examples', 'goldens.json')
  const blocker = file('blocker', 'a file where a directory would be\n')
  const reportDir = join(dir, 'report-dir')
  mkdirSync(reportDir)
  const cases: [string[], string][] = [
    [['-o', join(blocker, 'out.yaml')], `${join(blocker, 'out.yaml')}: cannot be written: a part of its path is a file, not a directory`],
    [['-o', join(dir, 'cannot-out.yaml'), '--on-error', 'skip', '--rejects', join(blocker, 'r.jsonl')], `${join(blocker, 'r.jsonl')}: cannot be written: a part of its path is a file, not a directory`],
    [['-o', join(dir, 'cannot-out.yaml'), '--report', reportDir], `the report ${reportDir} is a directory; name a file`],
  ]
  for (const [args, message] of cases) {
    const result = await runCli(['convert', input, '--to', 'evalcase', '--quiet', ...args])
    // A directory named where a file goes is a mistake in the command (2); a path that cannot hold a file is the filesystem's (1).
    assert.equal(result.code, args.includes('--report') ? 2 : 1, result.stderr)
    assert.equal(result.stderr, `evalferry: ${message}\n`)
    // The rejects file and the report are begun before the output: neither failure leaves an output behind.
    assert.equal(existsSync(join(dir, 'cannot-out.yaml')), false, args.join(' '))
  }
  assert.deepEqual(readdirSync(reportDir), [])
  assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.evalferry-tmp')), [])
  assert.equal(readFileSync(blocker, 'utf8'), 'a file where a directory would be\n')
})

test('usage errors exit 2: unknown option, unknown format, missing --to, unknown dialect, --map on a format of fixed fields, a negative number', async () => {
  const unknownOption = await runCli(['convert', 'x.json', '--to', 'evalcase', '--frobnicate'])
  assert.equal(unknownOption.code, 2)
  assert.match(unknownOption.stderr, /frobnicate/)
  const emptyOutput = await runCli(['convert', join(ROOT, 'examples', 'goldens.json'), '--to', 'evalcase', '-o', ''])
  assert.deepEqual([emptyOutput.code, emptyOutput.stderr], [2, 'evalferry: -o is empty; name a file, a directory for a batch, or - for standard output\n'])
  const unknownFormat = await runCli(['convert', 'x.json', '--to', 'opik'])
  assert.equal(unknownFormat.code, 2)
  assert.match(unknownFormat.stderr, /unknown format "opik"/)
  const noTarget = await runCli(['convert', 'x.json'])
  assert.equal(noTarget.code, 2)
  assert.match(noTarget.stderr, /--to is required/)
  const unknownDialect = await runCli(['convert', join(ROOT, 'examples', 'goldens.json'), '--to', 'evalcase', '--dialect', 'agentV', '-o', join(dir, 'dialect.yaml')])
  assert.equal(unknownDialect.code, 2)
  assert.equal(unknownDialect.stderr, 'evalferry: --dialect takes agentv or evalcase, not "agentV"\n')
  const dialectElsewhere = await runCli(['convert', join(ROOT, 'examples', 'goldens.json'), '--to', 'evals', '--dialect', 'agentv', '-o', join(dir, 'dialect.json')])
  assert.equal(dialectElsewhere.code, 2)
  assert.equal(dialectElsewhere.stderr, 'evalferry: --dialect chooses how evalcase is written; the output here is evals\n')
  assert.equal(existsSync(join(dir, 'dialect.yaml')), false)
  const goldens = join(ROOT, 'examples', 'goldens.json')
  const mapped = await runCli(['convert', goldens, '--to', 'evalcase', '--map', 'input=question', '-o', join(dir, 'mapped.yaml')])
  assert.equal(mapped.code, 2)
  assert.equal(mapped.stderr, `evalferry: --map maps the columns of a table (csv, hf, langsmith); ${goldens} is deepeval, whose fields are its own\n`)
  assert.equal(existsSync(join(dir, 'mapped.yaml')), false)
  // An option of one value given twice with two: neither is taken. The same value twice, or a list option repeated, is fine.
  for (const [args, said] of [
    [['--to', 'evals', '--to', 'deepeval'], '--to is given twice, as "evals" and "deepeval"'],
    [['--to', 'evals', '-o', join(dir, 'o1.json'), '-o', join(dir, 'o2.json')], `-o is given twice, as "${join(dir, 'o1.json')}" and "${join(dir, 'o2.json')}"`],
    [['--to', 'evals', '--jobs', '1', '-j', '2'], '-j is given twice, as "1" and "2"'],
  ] as const) {
    const run = await runCli(['convert', goldens, ...args, ...((args as readonly string[]).includes('-o') ? [] : ['-o', join(dir, 'o1.json')])])
    assert.deepEqual([run.code, run.stderr], [2, `evalferry: ${said}; give it once\n`])
  }
  assert.equal(existsSync(join(dir, 'o1.json')) || existsSync(join(dir, 'o2.json')), false)
  // A negative number after an option is its value, told by the option's own check; after `--` it is an input.
  const shard = await runCli(['convert', goldens, '--to', 'evals', '-o', join(dir, 'o1.json'), '--shard', '-1/2'])
  assert.deepEqual([shard.code, shard.stderr], [2, 'evalferry: --shard takes i/n with 1 ≤ i ≤ n (the shards of 2 are 1/2 … 2/2), not "-1/2"\n'])
  const afterDashes = await runCli(['convert', '--to', 'evals', '-o', join(dir, 'o1.json'), '--', '-1.json'])
  assert.equal(afterDashes.code, 1)
  assert.match(afterDashes.stderr, /^evalferry: -1\.json: /)
  const same = await runCli(['convert', goldens, '--to', 'evals', '--to', 'evals', '-o', join(dir, 'o1.json'), '--quiet'])
  assert.equal(same.code, 0, same.stderr)
  const table = file('ignored-and-used.csv', 'question,answer\nq,a\n')
  const both = await runCli(['convert', table, '--from', 'csv', '--map', 'input=question', '--map', 'ignore=question', '--to', 'evals', '-o', join(dir, 'o2.json')])
  assert.deepEqual([both.code, both.stderr], [2, 'evalferry: --map names the column "question" in ignore= and in input=; give it one place\n'])
  assert.equal(existsSync(join(dir, 'o2.json')), false)
})

test('convert: --on-error skip converts the good records and writes the bad ones to --rejects', async () => {
  const input = file('mixed.jsonl', '{"input": "good one"}\n{"input": 42}\n{"input": "good two"}\n')
  const out = join(dir, 'mixed-out.yaml')
  const rejects = join(dir, 'rejects.jsonl')
  const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', out, '--on-error', 'skip', '--rejects', rejects])
  assert.equal(result.code, 0, result.stderr)
  assert.match(result.stderr, /2 read, 2 written, 1 skipped/)
  // The summary names the skipped record, as it names warnings.
  assert.ok(result.stderr.includes(`1 skipped:\n  ${input}:2: input: expected a string`), result.stderr)
  const doc = parseYaml(readFileSync(out, 'utf8')) as { tests: { input: string }[] }
  assert.deepEqual(doc.tests.map((c) => c.input), ['good one', 'good two'])
  const [reject] = readFileSync(rejects, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  assert.equal(reject.location.line, 2)
  assert.equal(reject.location.field, 'input')
  assert.equal(reject.record, '{"input": 42}')
})

test('validate lists every bad record with file:line and exits 1', async () => {
  const input = file('validate.jsonl', '{"input": "fine"}\n{"input": 1}\n{"input": "fine"}\n{"nothing": true}\n')
  const result = await runCli(['validate', input, '--from', 'deepeval'])
  assert.equal(result.code, 1)
  const lines = result.stderr.trim().split('\n')
  assert.equal(lines.length, 2, result.stderr)
  assert.match(lines[0]!, /validate\.jsonl:2: input: /)
  assert.match(lines[1]!, /validate\.jsonl:4: input: /)
  assert.match(result.stdout, /2 cases, 2 errors/)
  // --json gives each error its code, as rejects and detect do.
  const json = await runCli(['validate', input, '--from', 'deepeval', '--json'])
  assert.equal(json.code, 1)
  const [entry] = JSON.parse(json.stdout) as { errors: { code: string; location: { line: number } }[] }[]
  assert.deepEqual(entry!.errors.map((e) => [e.code, e.location.line]), [['E_FIELD', 2], ['E_FIELD', 4]])
})

test('standard input and output need the container named', async () => {
  const text = readFileSync(join(SHARED_FIXTURES, 'deepeval', 'saveas-single_turn.jsonl'), 'utf8')
  const result = await runCli(['convert', '-', '--from', 'deepeval', '--from-container', 'jsonl', '--to', 'evalcase', '--quiet'], {}, 60_000, text)
  assert.equal(result.code, 0, result.stderr)
  const doc = parseYaml(result.stdout) as { tests: { input: string }[] }
  assert.deepEqual(doc.tests.map((c) => c.input), ['What is the refund policy?', 'Hola ¿qué tal?'])
  assert.equal(result.stderr, '')
  const missing = await runCli(['convert', '-', '--from', 'deepeval', '--to', 'evalcase'], {}, 60_000, text)
  assert.equal(missing.code, 2)
  assert.match(missing.stderr, /container/)
  assert.ok(!existsSync(join(dir, '-')))
})

test('a Parquet file piped to standard input converts as the file does, through a temporary copy that is removed, as are those killed conversions left', async () => {
  const source = file('piped.jsonl', Array.from({ length: 300 }, (_, i) => JSON.stringify({ question: `q${i} ¿sí?`, answer: `a${i}`, n: i })).join('\n') + '\n')
  const parquet = join(dir, 'piped.parquet')
  await convert({ input: source, from: 'huggingface', to: 'huggingface', output: parquet })
  const spools = tempDir('evalferry-spools-')
  // A copy a killed conversion left (its process is gone) is removed; a running one's is not.
  const dead = spawnSync('true').pid
  mkdirSync(join(spools, `evalferry-tmp-${dead}-abc123`))
  mkdirSync(join(spools, `evalferry-tmp-${process.pid}-def456`))
  try {
    const args = ['--from', 'huggingface', '--from-container', 'parquet', '--to', 'huggingface', '--to-container', 'jsonl', '--quiet']
    const piped = await runCli(['convert', '-', ...args], { TMPDIR: spools }, 60_000, readFileSync(parquet))
    assert.equal(piped.code, 0, piped.stderr)
    const byPath = await runCli(['convert', parquet, ...args])
    assert.equal(byPath.code, 0, byPath.stderr)
    const rows = piped.stdout.trim().split('\n').map((l) => JSON.parse(l) as { question: string; n: number })
    assert.equal(rows.length, 300)
    assert.deepEqual(rows[299], { question: 'q299 ¿sí?', answer: 'a299', n: 299 })
    assert.equal(piped.stdout, byPath.stdout)
    assert.deepEqual(readdirSync(spools).filter((n) => n.startsWith('evalferry-tmp-')), [`evalferry-tmp-${process.pid}-def456`])
    // Bytes that are not Parquet: an error naming standard input, and still no copy left behind.
    const bad = await runCli(['convert', '-', ...args], { TMPDIR: spools }, 60_000, Buffer.from('not parquet at all'))
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /-: not a Parquet file/)
    assert.deepEqual(readdirSync(spools).filter((n) => n.startsWith('evalferry-tmp-')), [`evalferry-tmp-${process.pid}-def456`])
    // A named pipe named .parquet is copied so too.
    const fifo = join(dir, 'piped-fifo.parquet')
    spawnSync('mkfifo', [fifo])
    const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', parquet, fifo])
    const written = new Promise((done) => writer.on('close', done))
    const fromPipe = await runCli(['convert', fifo, ...args], { TMPDIR: spools })
    await written
    assert.equal(fromPipe.code, 0, fromPipe.stderr)
    assert.equal(fromPipe.stdout, byPath.stdout)
    assert.deepEqual(readdirSync(spools).filter((n) => n.startsWith('evalferry-tmp-')), [`evalferry-tmp-${process.pid}-def456`])
  } finally {
    rmSync(spools, { recursive: true, force: true })
  }
})

test('a lone UTF-16 surrogate written into a CSV or Parquet becomes U+FFFD with a warning naming the case and column; JSON Lines keeps it', async () => {
  const input = file('surrogate.jsonl', '{"question": "q\\ud800x", "answer": "a1"}\n{"question": "fine \\ud83d\\ude00", "answer": "a2"}\n')
  const csv = join(dir, 'surrogate.csv')
  const report = await convert({ input, output: csv, from: 'hf', to: 'hf' })
  assert.equal(readFileSync(csv, 'utf8'), 'question,answer\nq\ufffdx,a1\nfine \u{1f600},a2\n')
  assert.deepEqual(report.warnings.map((w) => [w.location, w.message.slice(0, 29)]), [[{ file: input, line: 1, field: 'question' }, 'a lone UTF-16 surrogate (half']])
  const parquet = join(dir, 'surrogate.parquet')
  const inParquet = await convert({ input, output: parquet, from: 'hf', to: 'hf' })
  assert.deepEqual(inParquet.warnings.map((w) => w.location), [{ file: input, line: 1, field: 'question' }])
  const back = await convert({ input: parquet, output: join(dir, 'surrogate.back.csv'), from: 'hf', to: 'hf' })
  assert.deepEqual(back.warnings, [])
  assert.equal(readFileSync(join(dir, 'surrogate.back.csv'), 'utf8'), 'question,answer\nq\ufffdx,a1\nfine \u{1f600},a2\n')
  const jsonl = join(dir, 'surrogate.out.jsonl')
  const kept = await convert({ input, output: jsonl, from: 'hf', to: 'hf' })
  assert.deepEqual(kept.warnings, [])
  assert.equal(readFileSync(jsonl, 'utf8').split('\n')[0], '{"question":"q\\ud800x","answer":"a1"}')
})

test('an integer past 2^53 in the header keys of a JSON or YAML document is kept as its digits, with a warning at its line', async () => {
  const json = file('long-header.json', '{"version": 123456789012345678901,\n "goldens": [{"input": "q", "expected_output": "a"}],\n "trailer": 98765432109876543210}\n')
  const fromJson = await convert({ input: json, output: join(dir, 'long-header.out.json'), from: 'deepeval', to: 'deepeval' })
  assert.deepEqual(
    fromJson.warnings.map((w) => [w.location, w.message]),
    [
      [{ file: json, line: 1, field: 'version' }, 'the integer 123456789012345678901 is past what a number holds exactly: kept as text, every digit'],
      [{ file: json, line: 3, field: 'trailer' }, 'the integer 98765432109876543210 is past what a number holds exactly: kept as text, every digit'],
    ],
  )
  const yaml = file('long-header.yaml', 'description: x\nexecution:\n  seed: 123456789012345678901\nevalcases:\n  - id: a\n    input: q\n    expected_output: a\n')
  const out = join(dir, 'long-header.out.yaml')
  const fromYaml = await convert({ input: yaml, output: out, from: 'evalcase', to: 'evalcase' })
  assert.deepEqual(fromYaml.warnings.map((w) => w.location), [{ file: yaml, line: 3, field: 'execution' }])
  assert.match(readFileSync(out, 'utf8'), /execution:\n  seed: "123456789012345678901"\n/)
})

test('a YAML !!binary value, in a case or in the header, is read as its base64 text, with a warning at its line', async () => {
  const yaml = file('binary.yaml', 'description: x\nexecution:\n  key: !!binary c2VjcmV0\nevalcases:\n  - id: a\n    input: q\n    expected_output: a\n    metadata:\n      bin: !!binary aGVsbG8=\n')
  const out = join(dir, 'binary.out.yaml')
  const report = await convert({ input: yaml, output: out, from: 'evalcase', to: 'evalcase' })
  assert.deepEqual(
    report.warnings.map((w) => [w.location, w.message]),
    [
      [{ file: yaml, line: 3, field: 'execution' }, 'a !!binary value is read as its base64 text'],
      [{ file: yaml, line: 5 }, 'a !!binary value is read as its base64 text'],
    ],
  )
  const written = parseYaml(readFileSync(out, 'utf8')) as { execution: { key: string }; evalcases: { metadata: { bin: string } }[] }
  assert.deepEqual([written.execution.key, written.evalcases[0]!.metadata.bin], ['c2VjcmV0', 'aGVsbG8='])
})

test('a case made by code with the wrong shape is named by its field: from a row mapper at its row, given to write at its place', async () => {
  const input = file('mapped-rows.csv', 'question,answer\nq1,a1\nq2,a2\n')
  await assert.rejects(
    convert({ input, output: join(dir, 'mapped-rows.jsonl'), from: 'table', to: 'evalcase', map: (row) => ({ id: String(row.question), input: row.question } as unknown as EvalCase) }),
    (error: EvalferryError) => {
      assert.deepEqual(error.location, { file: input, line: 2, field: 'input' })
      assert.equal(error.message, 'the row mapper returned a string; expected a list of messages ({role, content}; role system, user, assistant or tool)')
      return true
    },
  )
  const made = [
    { input: [{ role: 'user', content: 'fine' }] },
    { input: [{ role: 'user', content: 'tags wrong' }], tags: 'a,b' },
  ] as unknown as EvalCase[]
  await assert.rejects(write(made, join(dir, 'made-shape.jsonl'), { to: 'evalcase' }), (error: EvalferryError) => {
    assert.deepEqual(error.location, { file: join(dir, 'made-shape.jsonl'), record: 1, field: 'tags' })
    assert.equal(error.message, 'the case has a string; expected a list of texts')
    return true
  })
  assert.equal(existsSync(join(dir, 'made-shape.jsonl')), false)
})

test('an evalcase sidecar that is not YAML or not UTF-8 is an error naming it and its line, in convert and validate alike', async () => {
  const data = '{"id": "a", "input": "q", "expected_output": "a"}\n'
  const input = file('bad-sidecar.jsonl', data)
  const sidecar = file('bad-sidecar.yaml', 'description: fine\nexecution:\n  target: "unclosed\n')
  for (const args of [['convert', input, '--to', 'evals', '-o', join(dir, 'bad-sidecar-out.jsonl')], ['validate', input]]) {
    const run = await runCli(args)
    assert.equal(run.code, 1, run.stderr)
    assert.ok(run.stderr.includes(`${sidecar}:4:1: invalid YAML: Missing closing "quote`), run.stderr)
    assert.doesNotMatch(run.stderr, /internal error/)
  }
  assert.equal(existsSync(join(dir, 'bad-sidecar-out.jsonl')), false)
  // Nested past the 500 levels an evalcase file may hold, yet not so deep that the parser's stack runs out.
  writeFileSync(sidecar, `description: deep\nexecution: ${'['.repeat(600)}${']'.repeat(600)}\n`)
  const deep = await runCli(['convert', input, '--to', 'evals', '-o', join(dir, 'bad-sidecar-out.jsonl')])
  assert.equal(deep.code, 1, deep.stderr)
  assert.equal(deep.stderr, `evalferry: ${sidecar}: invalid YAML: lists or mappings nested deeper than 500 levels\n`)
  writeFileSync(sidecar, Buffer.from([0x64, 0x65, 0x73, 0x63, 0x3a, 0x20, 0xff, 0x0a]))
  const latin = await runCli(['convert', input, '--to', 'evals', '-o', join(dir, 'bad-sidecar-out.jsonl')])
  assert.equal(latin.code, 1, latin.stderr)
  assert.match(latin.stderr, new RegExp(`${sidecar}: invalid UTF-8 in the sidecar`))
})

test('a conversion to standard output that fails says that what it wrote there is not the whole dataset', async () => {
  const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ input: `q${i}`, expected_output: i === 2500 ? 7 : `a${i}` }))
  const input = file('fails-late.jsonl', lines.join('\n') + '\n')
  const run = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '--to-container', 'jsonl'])
  assert.equal(run.code, 1)
  assert.equal(run.stderr.split('\n')[0], 'evalferry: standard output holds only the records converted before the error below, not the whole dataset')
  assert.match(run.stderr.split('\n')[1]!, new RegExp(`^evalferry: ${input}:2501: expected_output: `))
  const written = run.stdout.split('\n').filter(Boolean)
  assert.ok(written.length <= 2500, String(written.length))
  // A file output is never left at all.
  const toFile = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '-o', join(dir, 'fails-late.jsonl.out.jsonl')])
  assert.equal(toFile.code, 1)
  assert.doesNotMatch(toFile.stderr, /standard output/)
})

test('keys after the record list reach the first case: the file is read again; read() and standard input warn that they are dropped; a key given twice is refused', async () => {
  const input = file('late-keys.json', '{"myNotes": "n", "goldens": [{"input": "q1", "expected_output": "a1"}, {"input": "q2"}], "version": "1", "finalized": false}\n')
  const output = join(dir, 'late-keys-out.json')
  const report = await convert({ input, output, from: 'deepeval', to: 'deepeval' })
  assert.deepEqual([report.dropped, report.warnings], [{}, []])
  // Written as DeepEval's JSON loader reads it, a list of goldens: the file's keys, those after the list too, travel with the first.
  const written = JSON.parse(readFileSync(output, 'utf8')) as { input: string; additional_metadata?: { evalferry: { extras: { deepeval: { $file: unknown } } } } }[]
  assert.deepEqual(written.map((g) => g.input), ['q1', 'q2'])
  assert.deepEqual(written[0]!.additional_metadata?.evalferry.extras.deepeval.$file, { myNotes: 'n', version: '1', finalized: false })

  const { newReport, read } = await import('../src/index.ts')
  const seen = newReport()
  for await (const _ of read(input, { from: 'deepeval', report: seen }));
  assert.deepEqual(seen.dropped, { '$file.finalized': 1, '$file.version': 1 })
  assert.deepEqual(seen.warnings.map((w) => [w.location, w.message.endsWith("convert() reads the file again to keep it")]), [
    [{ file: input, field: 'version' }, true],
    [{ file: input, field: 'finalized' }, true],
  ])
  const piped = await runCli(['convert', '-', '--from', 'deepeval', '--from-container', 'json', '--to', 'deepeval', '--to-container', 'json'], {}, 60_000, readFileSync(input, 'utf8'))
  assert.equal(piped.code, 0, piped.stderr)
  assert.match(piped.stderr, /dropped: \$file\.version \(1\), \$file\.finalized \(1\)/)
  assert.match(piped.stderr, /-: version: this key comes after the records, .*; convert the file rather than standard input to keep it/)
  // Standard output is written again with the keys while it has taken nothing; once it has taken the first case, they are dropped with a warning, each case written once.
  const small = await runCli(['convert', input, '--from', 'deepeval', '--to', 'deepeval', '--to-container', 'jsonl', '-o', '-'])
  assert.equal(small.code, 0, small.stderr)
  assert.deepEqual((JSON.parse(small.stdout.split('\n')[0]!) as { additional_metadata: { evalferry: { extras: { deepeval: { $file: unknown } } } } }).additional_metadata.evalferry.extras.deepeval.$file, { myNotes: 'n', version: '1', finalized: false })
  const goldens = Array.from({ length: 3000 }, (_, i) => ({ input: `q${i} `.padEnd(60, '.'), expected_output: 'a' }))
  const long = file('late-keys-long.json', JSON.stringify({ goldens, version: '1' }))
  const streamed = await runCli(['convert', long, '--from', 'deepeval', '--to', 'deepeval', '--to-container', 'jsonl', '-o', '-'])
  assert.equal(streamed.code, 0, streamed.stderr)
  assert.deepEqual(streamed.stdout.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { input: string }).input), goldens.map((g) => g.input))
  assert.match(streamed.stderr, /dropped: \$file\.version \(1\)/)
  assert.match(streamed.stderr, /late-keys-long\.json: version: this key comes after the records, .*; the output, a stream, had taken it, and is not written again: write to a file to keep it/)
  // A key of the file given twice would lose its first value, as one in a record would: refused at its line, nothing written.
  const twice = file('late-keys-twice.json', '{"finalized": true,\n "goldens": [{"input": "q1"}],\n "finalized": false}\n')
  const refused = await runCli(['convert', twice, '--from', 'deepeval', '--to', 'deepeval', '-o', join(dir, 'late-keys-twice-out.json')])
  assert.deepEqual([refused.code, refused.stderr], [1, `evalferry: ${twice}:3: finalized: duplicate key "finalized": JSON keeps only the last, so a value would be lost\n`])
  assert.equal(existsSync(join(dir, 'late-keys-twice-out.json')), false)
})

test('a --map column the table lacks is one usage error (exit 2), not an error per row, even with --on-error skip', async () => {
  const input = file('map-typo.csv', 'question,answer\n' + Array.from({ length: 50 }, (_, i) => `q${i},a${i}`).join('\n') + '\n')
  for (const from of ['csv', 'hf', 'langsmith']) {
    for (const args of [['convert', input, '--from', from, '--map', 'input=qustion', '--to', 'evalcase', '-o', join(dir, 'map-typo.yaml'), '--on-error', 'skip'], ['validate', input, '--from', from, '--map', 'input=qustion']]) {
      const run = await runCli(args)
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
      assert.equal(run.stderr.match(/--map input=qustion: the table has no column "qustion" \(its columns: question, answer\)/g)?.length, 1, run.stderr)
    }
  }
  const outputs = await runCli(['convert', input, '--from', 'langsmith', '--map', 'inputs=question', '--map', 'outputs=answer,anwser', '--to', 'evalcase', '-o', join(dir, 'map-typo.yaml')])
  assert.deepEqual([outputs.code, outputs.stderr], [2, `evalferry: ${input}:2: --map outputs=answer,anwser: the table has no column "anwser" (its columns: question, answer)\n`])
  assert.equal(existsSync(join(dir, 'map-typo.yaml')), false)
})

test('invalid JSON is named by line and column, without the parser\'s offset into the record', async () => {
  const input = file('trailing-comma.jsonl', '{"input": "a"}\n{"input": "b",}\n')
  const run = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', join(dir, 'trailing-comma.yaml')])
  assert.equal(run.code, 1)
  assert.match(run.stderr, new RegExp(`^evalferry: ${input}:2:15: invalid JSON: [^\\n]*property name\\n$`))
  assert.doesNotMatch(run.stderr, /position/)
})

test('an evalcase file as PyYAML writes one (items at column 0, long text folded over quoted lines) is read item by item, in a small heap', async () => {
  // PyYAML's dump: a list at the key's own column, and double-quoted text broken with an escaped line end.
  const words = 'refund policy caf\\xE9 context the customer Z\\xFCrich question model answer'
  const text = Array.from({ length: 12 }, () => words).join(' ')
  const folded = (prefix: string) => `${prefix}"${text.slice(0, 70)}\\\n    \\ ${text.slice(70, 150)}\\\n    \\ ${text.slice(150)}"`
  const items: string[] = []
  for (let i = 0; i < 40_000; i++) items.push(`- id: case-${i}\n${folded('  input: ')}\n${folded('  expected_output: ')}\n`)
  const input = file('pyyaml-style.yaml', `evalcases:\n${items.join('')}`)
  const output = join(dir, 'pyyaml-style-out.jsonl')
  // The whole document parsed at once takes tens of times its size; item by item it fits.
  const run = await runCli(['convert', input, '--from', 'evalcase', '--to', 'evalcase', '-o', output, '--quiet'], { NODE_OPTIONS: '--max-old-space-size=96' }, 120_000)
  assert.equal(run.code, 0, run.stderr)
  const lines = readFileSync(output, 'utf8').trimEnd().split('\n')
  assert.equal(lines.length, 40_000)
  const last = JSON.parse(lines.at(-1)!) as { id: string; input: string }
  assert.equal(last.id, 'case-39999')
  assert.ok(last.input.startsWith('refund policy café context the customer Zürich question'), last.input.slice(0, 80))
})

test('an evalcase file of 400 000 ids that end in no number converts in a 32 MB heap, and an id given again is named with its first line', async () => {
  // Ids like UUIDs: every one must be remembered, and a Map of them outgrew the heap and aborted the process.
  let seed = 12345
  const hex = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0).toString(16).padStart(8, '0'))
  const ids = Array.from({ length: 400_000 }, () => `${hex()}-${hex()}-${hex()}-x`)
  const lines = ids.map((id, i) => `{"id":"${id}","input":"q${i}","expected_output":"a"}\n`)
  lines.push(lines[199_999]!)
  const input = file('many-ids.jsonl', lines.join(''))
  const output = join(dir, 'many-ids-out.jsonl')
  const run = await runCli(['convert', input, '--from', 'evalcase', '--to', 'evals', '--to-container', 'jsonl', '-o', output, '--on-error', 'skip'], { NODE_OPTIONS: '--max-old-space-size=32' }, 180_000)
  assert.equal(run.code, 0, run.stderr)
  assert.match(run.stderr, /400000 written, 1 skipped/)
  assert.ok(run.stderr.includes(`many-ids.jsonl:400001: id: duplicate id "${ids[199_999]}" (first used at ${input}:200000)`), run.stderr)
  const written = readFileSync(output, 'utf8').trimEnd().split('\n')
  assert.equal(written.length, 400_000)
  assert.equal((JSON.parse(written.at(-1)!) as { id: string }).id, ids.at(-1))
})

test('-o naming standard output (/dev/fd/1) writes there, as -o - does', async () => {
  const input = file('to-fd.jsonl', '{"input": "q", "expected_output": "a"}\n')
  const run = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '--to-container', 'jsonl', '-o', '/dev/fd/1', '--quiet'])
  assert.equal(run.code, 0, run.stderr)
  const written = JSON.parse(run.stdout) as { input: string; expected: string }
  assert.deepEqual([written.input, written.expected], ['q', 'a'])
})

test('-o /dev/stdout, /dev/fd/1 or /proc/self/fd/1 with standard output sent to a file writes into that file, not a new one put in its place', () => {
  const input = file('to-stdout-file.jsonl', '{"input": "q", "expected_output": "a"}\n')
  for (const name of ['/dev/stdout', '/dev/fd/1', '/proc/self/fd/1']) {
    const target = join(dir, `stdout-${name.replaceAll('/', '_')}.jsonl`)
    // The shell's `> target`: the process's standard output is that file, opened before it starts.
    const fd = openSync(target, 'w')
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', MAIN, 'convert', input, '--from', 'deepeval', '--to', 'evals', '--to-container', 'jsonl', '-o', name, '--quiet'], {
        cwd: ROOT,
        stdio: ['ignore', fd, 'pipe'],
        timeout: 60_000,
      })
      assert.equal(run.status, 0, `${name}: ${String(run.stderr)}`)
      // Still the file the shell opened: a file renamed over it would leave the shell's output elsewhere.
      assert.equal(statSync(target).ino, fstatSync(fd).ino, name)
    } finally {
      closeSync(fd)
    }
    const written = JSON.parse(readFileSync(target, 'utf8')) as { input: string; expected: string }
    assert.deepEqual([written.input, written.expected], ['q', 'a'], name)
  }
})

test('the installed command, which keeps a plain copy of its environment, still reads it: EVALFERRY_CACHE_DIR names the cache', () => {
  const cache = join(dir, 'env-cache')
  const run = spawnSync(process.execPath, [join(ROOT, 'bin', 'evalferry.js'), 'cache', 'dir'], { cwd: ROOT, env: { ...process.env, EVALFERRY_CACHE_DIR: cache }, encoding: 'utf8', timeout: 60_000 })
  assert.equal(run.status, 0, run.stderr)
  assert.equal(run.stdout.trim(), cache)
})

test('a row mapper that throws an Error rejects its row; one that fails with a TypeError stops the run, skipped or not', async () => {
  const input = file('mapper-throws.csv', 'question,answer\nq1,a1\n,a2\nq3,a3\n')
  const picky = (row: Record<string, unknown>): EvalCase => {
    if (row.question === '') throw new Error('no question in this row')
    return { input: [{ role: 'user', content: String(row.question) }] }
  }
  const skipped = await convert({ input, output: join(dir, 'mapper-picky.jsonl'), from: 'table', to: 'evalcase', map: picky, onError: 'skip' })
  assert.deepEqual(skipped.records, { read: 2, written: 2, skipped: 1 })
  assert.deepEqual(skipped.errors, [{ message: 'no question in this row', code: 'E_FIELD', location: { file: input, line: 3 } }])
  const typo = (row: Record<string, unknown>): EvalCase => ({ input: [{ role: 'user', content: (row.questoin as string).trim() }] })
  await assert.rejects(convert({ input, output: join(dir, 'mapper-typo.jsonl'), from: 'table', to: 'evalcase', map: typo, onError: 'skip' }), TypeError)
  assert.equal(existsSync(join(dir, 'mapper-typo.jsonl')), false)
})

test('evalcase JSON Lines is not written where its sidecar would overwrite a YAML file of cases; a sidecar of its own is replaced', async () => {
  const input = file('sidecar-src.yaml', 'description: mine\nevalcases:\n  - id: a\n    input: hi\n    expected_output: ok\n')
  const precious = file('sidecar-out.yaml', 'evalcases:\n  - id: precious\n    input: keep me\n    expected_output: kept\n')
  const before = readFileSync(precious, 'utf8')
  const refused = await runCli(['convert', input, '--to', 'evalcase', '-o', join(dir, 'sidecar-out.jsonl')])
  assert.equal(refused.code, 2)
  assert.equal(refused.stderr, `evalferry: ${precious} holds cases, and would be overwritten by the sidecar of ${join(dir, 'sidecar-out.jsonl')} (its description and execution); move it, or name another output\n`)
  assert.equal(readFileSync(precious, 'utf8'), before)
  assert.equal(existsSync(join(dir, 'sidecar-out.jsonl')), false)
  for (let run = 0; run < 2; run++) {
    const written = await runCli(['convert', input, '--to', 'evalcase', '-o', join(dir, 'sidecar-own.jsonl'), '--quiet'])
    assert.equal(written.code, 0, written.stderr)
    assert.equal(readFileSync(join(dir, 'sidecar-own.yaml'), 'utf8'), 'description: mine\n')
  }
  // The sidecar is written as a YAML file's own keys: what YAML 1.1 readers read otherwise is quoted or escaped.
  const guarded = file('sidecar-guarded.yaml', 'description: "one\\Ltwo"\nexecution:\n  target: "on"\nevalcases:\n  - id: a\n    input: hi\n    expected_output: ok\n')
  const written = await runCli(['convert', guarded, '--to', 'evalcase', '-o', join(dir, 'sidecar-guarded-out.jsonl'), '--quiet'])
  assert.equal(written.code, 0, written.stderr)
  assert.equal(readFileSync(join(dir, 'sidecar-guarded-out.yaml'), 'utf8'), 'description: "one\\Ltwo"\nexecution:\n  target: "on"\n')
  // A dataset with no description or execution leaves the sidecar there as it was, and says so.
  const goldens = file('sidecar-goldens.json', '[{"input": "hi", "expected_output": "ok"}]')
  const plain = await runCli(['convert', goldens, '--to', 'evalcase', '-o', join(dir, 'sidecar-own.jsonl'), '--json'])
  assert.equal(plain.code, 0, plain.stderr)
  assert.deepEqual((JSON.parse(plain.stdout) as ConversionReport).warnings, [
    { message: `left as it was: this dataset has no description or execution for it, and evalcase readers apply it to ${join(dir, 'sidecar-own.jsonl')}`, location: { file: join(dir, 'sidecar-own.yaml') } },
  ])
  assert.equal(readFileSync(join(dir, 'sidecar-own.yaml'), 'utf8'), 'description: mine\n')
})

test('--on-error skip skips a bad JSON Lines line when the format is detected too; a file of only bad lines is named by its first', async () => {
  const input = file('skip-detected.jsonl', '{"input": "a"}\nnot json\n{"input": "b"}\n')
  const out = join(dir, 'skip-detected.out.jsonl')
  const rejects = join(dir, 'skip-detected.rejects.jsonl')
  const skipped = await runCli(['convert', input, '--to', 'evals', '-o', out, '--on-error', 'skip', '--rejects', rejects, '--quiet'])
  assert.equal(skipped.code, 0, skipped.stderr)
  assert.deepEqual(readFileSync(out, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { input: string }).input), ['a', 'b'])
  assert.deepEqual((JSON.parse(readFileSync(rejects, 'utf8')) as { location: unknown }).location, { file: input, line: 2, column: 2 })
  const failed = await runCli(['convert', input, '--to', 'evals', '-o', out])
  assert.equal(failed.code, 1)
  assert.match(failed.stderr, new RegExp(`^evalferry: ${input}:2:2: invalid JSON`))
  const allBad = file('all-bad.jsonl', 'not json\nnor this\n')
  const detected = await runCli(['detect', allBad])
  assert.equal(detected.code, 1)
  assert.match(detected.stderr, new RegExp(`^evalferry: ${allBad}:1:2: invalid JSON`))
  // With --json, the file that cannot be told has its error in its place among the others.
  const listed = await runCli(['detect', allBad, input, '--json'])
  assert.equal(listed.code, 1)
  const entries = JSON.parse(listed.stdout) as { file: string; format?: string; error?: { code: string; location: unknown } }[]
  assert.deepEqual(entries.map((e) => [e.file, e.format, e.error?.code, e.error?.location]), [
    [allBad, undefined, 'E_PARSE', { file: allBad, line: 1, column: 2 }],
    [input, 'deepeval', undefined, undefined],
  ])
  // A name that tells no container is that file's error too, and the others are still told; its exit is a usage error's.
  const unnamed = file('goldens.dat', readFileSync(input, 'utf8'))
  const mixed = await runCli(['detect', unnamed, input, '--json'])
  assert.equal(mixed.code, 2, mixed.stderr)
  // The told file's line that does not read is named too (its exit, 1, is below the usage error's).
  assert.equal(mixed.stderr, `evalferry: cannot tell the container of ${unnamed} from its extension\nevalferry: ${input}:2:2: invalid JSON: Unexpected token 'o', "not json" is not valid JSON\n`)
  assert.deepEqual(
    (JSON.parse(mixed.stdout) as { file: string; format?: string; error?: { code: string } }[]).map((e) => [e.file, e.format, e.error?.code]),
    [
      [unnamed, undefined, 'E_USAGE'],
      [input, 'deepeval', undefined],
    ],
  )
})

test('detect counts the records that read, and tells those that do not: the first on stderr, exit 1, the count in --json', async () => {
  const input = file('detect-some-bad.jsonl', '{"input": "a"}\nnot json\n{"input": "b"}\n{"input": "c"}\nnor this\n')
  const told = await runCli(['detect', input])
  assert.equal(told.code, 1)
  assert.match(told.stdout, new RegExp(`^${input}: deepeval \\(jsonl\\), .*, 3 records and 2 that do not read\n`))
  assert.equal(told.stderr, `evalferry: ${input}:2:2: invalid JSON: Unexpected token 'o', "not json" is not valid JSON (and 1 more that does not read; validate lists them)\n`)
  const listed = await runCli(['detect', input, '--json'])
  assert.equal(listed.code, 1)
  const [entry] = JSON.parse(listed.stdout) as { records: number; unreadable: { count: number; first: { code: string; location: unknown } } }[]
  assert.deepEqual([entry!.records, entry!.unreadable.count, entry!.unreadable.first.code, entry!.unreadable.first.location], [3, 2, 'E_PARSE', { file: input, line: 2, column: 2 }])
  // A file that reads whole has no such entry, and exits 0.
  const whole = await runCli(['detect', file('detect-whole.jsonl', '{"input": "a"}\n'), '--json'])
  assert.equal(whole.code, 0, whole.stderr)
  assert.equal('unreadable' in (JSON.parse(whole.stdout) as object[])[0]!, false)
})

test('validate, detect, convert and prefetch of a directory that holds no dataset file are refused, as a glob that matches none is', async () => {
  const empty = join(dir, 'no-datasets')
  mkdirSync(empty)
  writeFileSync(join(empty, 'notes.txt'), 'not a dataset\n')
  for (const args of [['validate', empty], ['detect', empty], ['detect', empty, '--json'], ['convert', empty, '--to', 'evals', '-o', join(dir, 'no-datasets-out')], ['prefetch', empty]]) {
    const run = await runCli(args)
    assert.equal(run.code, 2, args.join(' '))
    assert.equal(run.stderr, `evalferry: no dataset files in ${empty}\n`, args.join(' '))
    assert.equal(run.stdout, '', args.join(' '))
  }
  assert.equal(existsSync(join(dir, 'no-datasets-out')), false)
})

test('ids used twice in the source get fresh ones in evalcase, which needs them unique, and come back from the carry', async () => {
  const input = file('dup-ids.jsonl', '{"id": "7", "question": "a", "answer": "x"}\n{"id": "7", "question": "b", "answer": "y"}\n{"id": "7-2", "question": "c", "answer": "z"}\n')
  const yaml = join(dir, 'dup-ids.yaml')
  const report = await convert({ input, output: yaml, from: 'hf', to: 'evalcase' })
  assert.deepEqual(report.warnings.map((w) => [w.location.line, w.message]), [
    [2, 'the id "7" is an earlier case\'s, and evalcase ids are unique: written as "7-2", with "7" carried'],
    [3, 'the id "7-2" is an earlier case\'s, and evalcase ids are unique: written as "7-2-2", with "7-2" carried'],
  ])
  const written = parseYaml(readFileSync(yaml, 'utf8')) as { tests: { id: string }[] }
  assert.deepEqual(written.tests.map((c) => c.id), ['7', '7-2', '7-2-2'])
  assert.equal((await runCli(['validate', yaml])).code, 0)
  const back = join(dir, 'dup-ids.back.jsonl')
  await convert({ input: yaml, output: back, from: 'evalcase', to: 'hf' })
  assert.equal(readFileSync(back, 'utf8'), '{"id":"7","question":"a","answer":"x"}\n{"id":"7","question":"b","answer":"y"}\n{"id":"7-2","question":"c","answer":"z"}\n')
})

test('the evalcase JSON Lines, hf rows and tables evalferry writes are detected as formats that read them whole, so they convert back without --from', async () => {
  const source = join(SHARED_FIXTURES, 'deepeval', 'saveas-single_turn.json')
  const original = JSON.parse(readFileSync(source, 'utf8')) as unknown
  // A table with an evalferry column reads whole as the generic table, whichever of hf and csv wrote it.
  for (const [to, format, ext] of [['evalcase', 'evalcase', 'jsonl'], ['hf', 'hf', 'jsonl'], ['hf', 'csv', 'csv'], ['csv', 'csv', 'csv']]) {
    const there = join(dir, `detected-${to}.${ext}`)
    assert.equal((await runCli(['convert', source, '--to', to!, '-o', there, '--quiet'])).code, 0)
    assert.match((await runCli(['detect', there])).stdout, new RegExp(`^${there}: ${format} \\(${ext}\\)`))
    const back = join(dir, `detected-${to}-${ext}.back.json`)
    const run = await runCli(['convert', there, '--to', 'deepeval', '-o', back, '--quiet'])
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(JSON.parse(readFileSync(back, 'utf8')), original, `${to} ${ext}`)
  }
})

test('a warning about a case is given once, not again when its carry is added', async () => {
  const input = file('warn-once.jsonl', '{"input": "no expectations", "name": "n1"}\n{"input": "none either", "name": "n2"}\n')
  const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', join(dir, 'warn-once.yaml')])
  assert.equal(result.code, 0, result.stderr)
  assert.match(result.stderr, /2 warnings:/)
  // Told once, as one kind of two; each named by the input line that holds the case.
  assert.equal(result.stderr.match(/AgentV skips such a case/g)?.length, 1, result.stderr)
  assert.match(result.stderr, new RegExp(`\\n  2 × ${input}:1: criteria: the case has no criteria.*\\n    also line 2\\n`))
})

test('with --no-extras a table gets no evalferry column: CSV, TSV and Parquet, a mapping read with it included', async () => {
  const input = file('no-extras.csv', 'input,expected_output,context,source\nq1,a1,c1;c2,s1\nq2,a2,,s2\n')
  for (const [to, name] of [['hf', 'no-extras-hf.csv'], ['table', 'no-extras-table.tsv'], ['hf', 'no-extras-hf.parquet']] as const) {
    const output = join(dir, name)
    const report = await convert({ input, output, from: 'deepeval', to, extras: false })
    assert.deepEqual(report.carried, {}, name)
    // The source's column order is its spelling, not a field: only `source` is dropped.
    assert.deepEqual(Object.keys(report.dropped).sort(), ['extras.deepeval.source'], name)
    const columns = name.endsWith('.parquet') ? tableFromIPC(readParquet(new Uint8Array(readFileSync(output))).intoIPCStream()).schema.fields.map((f) => f.name) : readFileSync(output, 'utf8').split('\n')[0]!.split(name.endsWith('.tsv') ? '\t' : ',')
    assert.deepEqual(columns, ['input', 'expected_output', 'context'], name)
  }
  // The mapping a table was read with would ride on its first row; dropped instead.
  const map = { input: 'input', expected_output: 'expected_output' }
  const mapped = await convert({ input, output: join(dir, 'no-extras-mapped.csv'), from: 'table', to: 'table', map, extras: false })
  assert.deepEqual([mapped.dropped, mapped.carried], [{ 'extras.csv.$file': 1 }, {}])
  assert.equal(readFileSync(join(dir, 'no-extras-mapped.csv'), 'utf8').split('\n')[0], 'input,expected_output,context,source')
  // Without it, the mapping rides in the first row's evalferry cell, and the report says so.
  const kept = await convert({ input, output: join(dir, 'extras-mapped.csv'), from: 'table', to: 'table', map })
  assert.deepEqual([kept.dropped, kept.carried], [{}, { 'extras.csv.$file': 1 }])
  assert.equal(readFileSync(join(dir, 'extras-mapped.csv'), 'utf8').split('\n')[0], 'input,expected_output,context,source,evalferry')
})

test('LangSmith → DeepEval with --no-extras reports exactly what was dropped; --strict refuses it', async () => {
  const input = file(
    'lossy.jsonl',
    [
      { id: 'e1', dataset_id: 'd1', inputs: { question: 'q1' }, outputs: { answer: 'a1' }, metadata: { dataset_split: ['test'] } },
      { inputs: { question: 'q2' }, outputs: { answer: 'a2' }, attachments: { chart: { presigned_url: 'https://x.example/c.png', mime_type: 'image/png' } } },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n',
  )
  const out = join(dir, 'lossy.json')
  const reportPath = join(dir, 'lossy-report.json')
  const dropped = await runCli(['convert', input, '--from', 'langsmith', '--to', 'deepeval', '-o', out, '--no-extras', '--report', reportPath, '--quiet'])
  assert.equal(dropped.code, 0, dropped.stderr)
  const report = JSON.parse(readFileSync(reportPath, 'utf8'))
  // e1 is no UUID: dropped; the mark of its spelling (as written) goes with it, a spelling and no field.
  assert.deepEqual(report.dropped, { id: 1, split: 1, 'extras.langsmith.dataset_id': 1, 'extras.langsmith.attachments': 1 })
  assert.deepEqual(report.carried, {})
  const written = JSON.parse(readFileSync(out, 'utf8')) as { input: string; additional_metadata: unknown }[]
  assert.deepEqual(written.map((g) => [g.input, g.additional_metadata]), [['q1', null], ['q2', null]])

  const carried = await runCli(['convert', input, '--from', 'langsmith', '--to', 'deepeval', '-o', join(dir, 'lossy-carried.json'), '--json'])
  assert.equal(carried.code, 0, carried.stderr)
  assert.deepEqual(JSON.parse(carried.stdout).carried, { id: 1, split: 1, 'extras.langsmith.dataset_id': 1, 'extras.langsmith.$form': 1, 'extras.langsmith.attachments': 1 })

  const strictOut = join(dir, 'lossy-strict.json')
  const strict = await runCli(['convert', input, '--from', 'langsmith', '--to', 'deepeval', '-o', strictOut, '--no-extras', '--strict'])
  assert.equal(strict.code, 1)
  assert.match(strict.stderr, /lossy\.jsonl:1: id: deepeval cannot hold id, split, extras\.langsmith\.dataset_id/)
  assert.ok(!existsSync(strictOut))
})

test('a folder as AgentV lays it out converts, validates and detects: the sidecar of its JSON Lines dataset is read with it, and a link to a dataset is followed', async () => {
  const folder = join(dir, 'agentv-folder')
  mkdirSync(folder)
  const real = join(SHARED_FIXTURES, 'evalcase', 'agentv-2026-02')
  for (const name of readdirSync(real)) writeFileSync(join(folder, name), readFileSync(join(real, name)))
  const elsewhere = file('linked-dataset.jsonl', '{"id": "l1", "input": "hi", "expected_outcome": "greets"}\n')
  symlinkSync(elsewhere, join(folder, 'linked.jsonl'))
  const stems = ['basic--dataset', 'basic-jsonl--dataset', 'composite--dataset', 'document-extraction--dataset-field-accuracy', 'linked']

  const out = join(dir, 'agentv-folder-out')
  const converted = await runCli(['convert', folder, '--to', 'evals', '-o', out, '--quiet'])
  assert.equal(converted.code, 0, converted.stderr)
  assert.deepEqual(readdirSync(out).sort(), stems.map((s) => `${s}.${s === 'basic-jsonl--dataset' || s === 'linked' ? 'jsonl' : 'json'}`))
  // Every file reads; what AgentV 4.42.4 refuses in these files of its February 2026 dialect is an error: each `evalcases:` list, and each case of `input_messages` alone, which it skips.
  const validated = await runCli(['validate', folder])
  assert.equal(validated.code, 1, validated.stderr)
  assert.equal(validated.stdout.trimEnd().split('\n').length, stems.length)
  const errors = validated.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning: '))
  assert.deepEqual(
    errors.map((l) => l.slice(folder.length + 1).replace(/: (agentv validate|AgentV).*/, '')),
    ['basic--dataset.yaml:15: evalcases', ...[1, 2, 3, 4].map((n) => `basic-jsonl--dataset.jsonl:${n}: input`), 'composite--dataset.yaml:10: evalcases', 'document-extraction--dataset-field-accuracy.yaml:109: evalcases'],
  )
  const detected = await runCli(['detect', folder, '--json'])
  assert.equal(detected.code, 0, detected.stderr)
  assert.deepEqual((JSON.parse(detected.stdout) as { format: string }[]).map((d) => d.format), stems.map(() => 'evalcase'))

  // The sidecar is read as the dataset's header: no output may replace it.
  const sidecar = join(folder, 'basic-jsonl--dataset.yaml')
  const before = readFileSync(sidecar, 'utf8')
  const onto = await runCli(['convert', join(folder, 'basic-jsonl--dataset.jsonl'), '--to', 'evalcase', '-o', sidecar])
  assert.equal(onto.code, 2, onto.stderr)
  assert.match(onto.stderr, /evalferry never overwrites an input/)
  assert.equal(readFileSync(sidecar, 'utf8'), before)
})

test('--from-container names the container of a file whose extension names none, for detection too; one that contradicts the extension, and standard input in a batch, are refused', async () => {
  const noExtension = file('goldens-no-extension', readFileSync(join(ROOT, 'examples', 'goldens.json'), 'utf8'))
  const out = join(dir, 'from-container.json')
  const converted = await runCli(['convert', noExtension, '--from-container', 'json', '--to', 'evals', '-o', out, '--quiet'])
  assert.equal(converted.code, 0, converted.stderr)
  assert.ok((JSON.parse(readFileSync(out, 'utf8')) as unknown[]).length > 0)

  const lines = file('contradicts.jsonl', '{"input": "a"}\n{"input": "b"}\n')
  const contradicted = await runCli(['convert', lines, '--from', 'deepeval', '--from-container', 'json', '--to', 'evals', '-o', join(dir, 'contradicts.json')])
  assert.equal(contradicted.code, 2, contradicted.stderr)
  assert.equal(contradicted.stderr, `evalferry: ${lines} is named as a jsonl file, but --from-container says json; rename the file, or leave the option out\n`)

  const piped = await runCli(['convert', '-', lines, '--from', 'deepeval', '--from-container', 'jsonl', '--to', 'evals', '-o', join(dir, 'stdin-batch')], {}, 60_000, '{"input": "x"}\n')
  assert.equal(piped.code, 2, piped.stderr)
  assert.match(piped.stderr, /standard input cannot be one of a batch/)
  const ontoFile = await runCli(['convert', lines, noExtension, '--from', 'deepeval', '--from-container', 'jsonl', '--to', 'evals', '-o', out])
  assert.equal(ontoFile.code, 2, ontoFile.stderr)
  assert.equal(ontoFile.stderr, `evalferry: a batch of inputs needs -o <directory>; ${out} is a file\n`)
  assert.equal(existsSync(join(dir, 'stdin-batch', '-.jsonl')), false)
  // Named as a dataset file and not there, it is refused, not made a directory; with a slash, it is one.
  const slip = join(dir, 'all-of-them.json')
  const named = await runCli(['convert', lines, noExtension, '--from', 'deepeval', '--from-container', 'jsonl', '--to', 'evals', '-o', slip])
  assert.deepEqual([named.code, named.stderr], [2, `evalferry: a batch of inputs needs -o <directory>; ${slip} is named as a json file (end it with / to make a directory of that name)\n`])
  assert.equal(existsSync(slip), false)
  const meant = await runCli(['convert', lines, '--from', 'deepeval', '--to', 'evals', '-o', `${slip}/`, '--quiet'])
  assert.equal(meant.code, 0, meant.stderr)
  assert.ok(existsSync(join(slip, 'contradicts.jsonl')))
})

test('a sidecar whose header holds a list as PyYAML writes it is still read with its dataset; an earlier output of cases beside a JSON Lines input is no sidecar, and is written again', async () => {
  const folder = join(dir, 'pyyaml-sidecar')
  mkdirSync(folder)
  writeFileSync(join(folder, 'x.jsonl'), '{"id": "a", "input": "hi", "expected_outcome": "greets"}\n')
  writeFileSync(join(folder, 'x.yaml'), 'description: smoke cases\ntags:\n- smoke\n')
  const out = join(dir, 'pyyaml-sidecar-out')
  const converted = await runCli(['convert', folder, '--to', 'evals', '-o', out, '--quiet'])
  assert.equal(converted.code, 0, converted.stderr)
  assert.deepEqual(readdirSync(out), ['x.jsonl'])

  const goldens = file('goldens-beside.jsonl', '{"input": "a"}\n')
  const output = join(dir, 'goldens-beside.yaml')
  for (let run = 0; run < 2; run++) {
    const again = await runCli(['convert', goldens, '--from', 'deepeval', '--to', 'evalcase', '-o', output, '--quiet'])
    assert.equal(again.code, 0, again.stderr)
  }
  assert.match(readFileSync(output, 'utf8'), /^\$schema: agentv-eval-v2\n\ntests:/)
})

test('each command\'s --help names every option it takes', async () => {
  const { SHARED_OPTIONS } = await import('../src/cli/command.ts')
  for (const name of ['convert', 'detect', 'validate', 'prefetch', 'resolve', 'cache']) {
    const command = ((await import(`../src/cli/${name}.ts`)) as { default: { options: Record<string, unknown>; usage: string } }).default
    for (const option of Object.keys(command.options)) {
      if (option in SHARED_OPTIONS) continue
      assert.match(command.usage, new RegExp(`--${option}\\b`), `${name} --help names --${option}`)
    }
  }
})

test('a command named as a property every object has (constructor, toString) is an unknown command, exit 2', async () => {
  for (const verb of ['constructor', 'toString', '__proto__']) {
    const result = await runCli([verb])
    assert.equal(result.code, 2, `${verb}: ${result.stderr}`)
    assert.equal(result.stderr, `evalferry: unknown command "${verb}"; expected one of convert, detect, validate, prefetch, resolve, cache\n`)
  }
})

test('an error message holding control characters from the data shows them escaped: no escape sequence reaches the terminal', async () => {
  const csv = join(dir, 'escape.csv')
  writeFileSync(csv, 'input,\x1b[2Jx\x07,\x1b[2Jx\x07\n1,2,3\n')
  const run = await runCli(['convert', csv, '--from', 'csv', '--to', 'evalcase', '-o', join(dir, 'escape.yaml')])
  assert.equal(run.code, 1, run.stderr)
  assert.doesNotMatch(run.stderr, /[\x00-\x08\x0b-\x1f\x7f]/)
  assert.match(run.stderr, /the header names the column "\\x1b\[2Jx\\x07" twice/)
})

test('a glob of YAML files leaves out the sidecar of a JSON Lines dataset beside them, which holds no cases, though the dataset is not in the glob', async () => {
  const folder = join(dir, 'glob-sidecar')
  mkdirSync(folder)
  writeFileSync(join(folder, 'lines.jsonl'), '{"id": "a", "input": "hi", "criteria": "greets"}\n')
  writeFileSync(join(folder, 'lines.yaml'), 'description: smoke cases\nexecution:\n  target: default\n')
  writeFileSync(join(folder, 'cases.yaml'), 'tests:\n  - id: b\n    input: hello\n    criteria: greets back\n')
  const out = join(dir, 'glob-sidecar-out')
  const converted = await runCli(['convert', join(folder, '*.yaml'), '--to', 'evals', '-o', `${out}/`, '--quiet'])
  assert.equal(converted.code, 0, converted.stderr)
  assert.deepEqual(readdirSync(out), ['cases.json'])
  const validated = await runCli(['validate', join(folder, '*.yaml')])
  assert.equal(validated.code, 0, validated.stderr)
  assert.equal(validated.stdout, `${join(folder, 'cases.yaml')}: 1 case, 0 errors\n`)
  // Named by itself, it is read as what it is.
  const named = await runCli(['validate', join(folder, 'lines.yaml')])
  assert.equal(named.code, 1, named.stderr)
  // Only sidecars: no dataset.
  const only = await runCli(['validate', join(folder, 'lines.y*ml')])
  assert.deepEqual([only.code, only.stderr], [2, `evalferry: no dataset files in ${join(folder, 'lines.y*ml')}: only the sidecars of JSON Lines datasets not named\n`])
})

test('--strict takes a column --map ignore= names as left out on purpose: dropped in the report, not an error', async () => {
  const input = file('strict-ignore.csv', 'q,ans,row_hash\nQ,A,h\n')
  const out = join(dir, 'strict-ignore.yaml')
  const run = await runCli(['convert', input, '--from', 'csv', '--to', 'evalcase', '--map', 'input=q', '--map', 'ignore=row_hash', '--strict', '-o', out, '--json'])
  assert.equal(run.code, 0, run.stderr)
  assert.deepEqual((JSON.parse(run.stdout) as { dropped: unknown }).dropped, { 'ignored.row_hash': 1 })
  assert.ok(existsSync(out))
})

test("the command line raises V8's budget for optimizing WebAssembly, unless node is given one", () => {
  assert.equal(wasmTieringFlag([]), '--wasm-tiering-budget=100000000')
  assert.equal(wasmTieringFlag(['--max-old-space-size=512']), '--wasm-tiering-budget=100000000')
  assert.equal(wasmTieringFlag(['--wasm-tiering-budget=5']), undefined)
  assert.equal(wasmTieringFlag(['--wasm_tiering_budget', '5']), undefined)
})
