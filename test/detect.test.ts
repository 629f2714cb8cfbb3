import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { FORMAT_NAMES, getAdapter } from '../adapters/index.ts'
import { detect } from '../src/detect.ts'
import type { EvalCase } from '../src/model.ts'
import { convert } from '../src/convert.ts'
import { read } from '../src/read.ts'
import { runCli, SHARED_FIXTURES } from './helpers/cli.ts'
import { fixtures } from './helpers/fixtures.ts'
import { tempDir } from './helpers/temp.ts'

/** Fixtures whose content cannot tell their format, with what they are read as and why. */
const READ_AS: Record<string, { format: string; why: string }> = {
  'hf/gsm.csv': { format: 'csv', why: 'a Hugging Face CSV export is a plain table; the table format maps it the same way' },
}

// The files from the field are told below, each with the format it must be detected as.
for (const fixture of fixtures().filter((f) => !f.name.startsWith('field/'))) {
  const key = fixture.name
  test(`detect tells ${key} from its content`, async () => {
    const d = await detect(fixture.path, { count: true })
    assert.equal(d.format, READ_AS[key]?.format ?? fixture.format, `candidates: ${JSON.stringify(d.candidates)}`)
    assert.equal(d.container, fixture.container)
    assert.ok(d.confidence > 0)
    assert.ok((d.records ?? 0) > 0)
  })
}

test('detect reads a .json file that holds JSON Lines, and reports the others as they are', async () => {
  const dir = tempDir('evalferry-detect-')
  const lines = join(dir, 'lines.json')
  writeFileSync(lines, '{"inputs": {"question": "a"}, "outputs": {"answer": "b"}, "dataset_id": "d"}\n{"inputs": {"question": "c"}, "outputs": null, "dataset_id": "d"}\n')
  const d = await detect(lines, { count: true })
  assert.deepEqual([d.format, d.container, d.records], ['langsmith', 'jsonl', 2])
  const garbage = join(dir, 'garbage.json')
  writeFileSync(garbage, '[{"input": "a"}]\nnot json\n')
  await assert.rejects(detect(garbage), (e: Error & { location?: { file?: string; line?: number } }) => e.location?.file === garbage && e.location.line === 2 && /after the end of the JSON document/.test(e.message))
})

test('a file that holds no record converts without --from, to an empty dataset; one whose records cannot be told still needs it', async () => {
  const dir = tempDir('evalferry-detect-')
  for (const [name, text, format] of [
    ['empty.jsonl', '', 'evalcase'],
    ['blank.jsonl', '\n\n', 'evalcase'],
    ['empty.json', '[]\n', 'deepeval'],
  ] as const) {
    const path = join(dir, name)
    writeFileSync(path, text)
    assert.equal((await detect(path)).format, format, name)
    const out = join(dir, `${name}.out.json`)
    const report = await convert({ input: path, output: out, to: 'deepeval' })
    assert.deepEqual(report.records, { read: 0, written: 0, skipped: 0 })
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), [])
  }
  const unknown = join(dir, 'unknown.jsonl')
  writeFileSync(unknown, '[1, 2]\n')
  await assert.rejects(detect(unknown), /cannot tell which format this jsonl file is; name it with --from/)
})

test('a plain table converted to hf is read as hf reads it: its columns keep their names, with nothing carried', async () => {
  const table = join(import.meta.dirname, 'fixtures', 'hf', 'gsm.csv')
  assert.equal((await detect(table)).format, 'csv')
  assert.equal((await detect(table, { target: 'hf' })).format, 'hf')
  // Another target keeps the generic table, which wins a tie.
  assert.equal((await detect(table, { target: 'langsmith' })).format, 'csv')
  const out = join(tempDir('evalferry-detect-'), 'gsm.jsonl')
  const report = await convert({ input: table, output: out, to: 'hf' })
  assert.equal(report.from, 'hf')
  assert.deepEqual(report.carried, {})
  const rows = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  assert.deepEqual(Object.keys(rows[0]!), ['question', 'answer', 'subject'])
  assert.equal(rows[0]!.question, 'What is H2O?')
})

test('evalcase JSON Lines whose cases do not all have an expected output is read back as evalcase, not as EvalCase JSON', async () => {
  const dir = tempDir('evalferry-detect-')
  // The bundled goldens: case-2 has no expected output, and its metadata has a difficulty, as EvalCase JSON's often do.
  const goldens = join(import.meta.dirname, '..', 'examples', 'goldens.json')
  const lines = join(dir, 'cases.jsonl')
  await convert({ input: goldens, output: lines, to: 'evalcase' })
  const written = readFileSync(lines, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  assert.deepEqual(written.map((c) => 'expected_output' in c), [true, false, true])
  const d = await detect(lines)
  assert.equal(d.format, 'evalcase', JSON.stringify(d.candidates))
  assert.equal(d.candidates.find((c) => c.format === 'evals')?.confidence, 0.2)
  const back = join(dir, 'back.json')
  const report = await convert({ input: lines, output: back, to: 'deepeval' })
  assert.deepEqual(report.carried, {})
  assert.deepEqual(JSON.parse(readFileSync(back, 'utf8')), JSON.parse(readFileSync(goldens, 'utf8')))
})

test('evalcase JSON Lines of cases with no input (classification rows, their columns in the metadata) is read back as evalcase', async () => {
  const dir = tempDir('evalferry-detect-')
  const rows = join(dir, 'reviews.jsonl')
  writeFileSync(rows, '{"text": "Great movie", "label": 1}\n{"text": "Dull", "label": 0}\n')
  const lines = join(dir, 'cases.jsonl')
  await convert({ input: rows, output: lines, from: 'hf', to: 'evalcase' })
  assert.deepEqual(JSON.parse(readFileSync(lines, 'utf8').split('\n')[0]!), { id: 'case-1', metadata: { text: 'Great movie', label: 1, evalferry: { generated: ['id'] } } })
  const d = await detect(lines)
  assert.deepEqual([d.format, d.confidence], ['evalcase', 0.7], JSON.stringify(d.candidates))
  const back = join(dir, 'back.jsonl')
  await convert({ input: lines, output: back, to: 'hf' })
  assert.equal(readFileSync(back, 'utf8'), '{"text":"Great movie","label":1}\n{"text":"Dull","label":0}\n')
  // Keys evalcase does not know beside them: not evalcase's by these alone.
  const other = join(dir, 'other.jsonl')
  writeFileSync(other, '{"id": "a", "label": 1, "metadata": {"evalferry": {}}}\n')
  assert.equal((await detect(other)).candidates.find((c) => c.format === 'evalcase')?.confidence, 0)
})

async function readAll(file: string, options: Parameters<typeof read>[1]): Promise<EvalCase[]> {
  const cases: EvalCase[] = []
  for await (const c of read(file, options)) cases.push(c)
  return JSON.parse(JSON.stringify(cases)) as EvalCase[]
}

/** Sources of several formats and shapes, for what evalferry writes from them. */
const SOURCES = [
  join(import.meta.dirname, '..', 'examples', 'goldens.json'),
  join(import.meta.dirname, 'fixtures', 'deepeval', 'multi_turn.json'),
  join(import.meta.dirname, 'fixtures', 'langsmith', 'chat-legacy.json'),
  join(import.meta.dirname, 'fixtures', 'hf', 'squad.parquet'),
  join(import.meta.dirname, 'fixtures', 'csv', 'qa.csv'),
  join(import.meta.dirname, 'fixtures', 'evalcase', 'full.yaml'),
  join(import.meta.dirname, 'fixtures', 'evals', 'suite.json'),
  join(SHARED_FIXTURES, 'field', 'langsmith', 'langchain-benchmarks__Web-QA-Dataset-Correct.json'),
  join(SHARED_FIXTURES, 'field', 'ragas', 'Filichkin_kim_ragas__ragas_testset.csv'),
]

/**
 * Outputs another format writes alike, which detection names by that format: a Hugging Face CSV is
 * a plain table; a JSON Lines case of an id, an input text and metadata is evalcase's as much as
 * EvalCase JSON's.
 */
const WRITTEN_ALIKE = ['evals jsonl as evalcase', 'hf csv as csv']

test('whatever evalferry writes, detect names as the format it was written as, and it reads back without --from', async () => {
  const dir = tempDir('evalferry-detect-')
  // DeepEval goldens whose second has a difficulty EvalCase JSON refuses: written as evalcase, they are no EvalCase JSON.
  const hard = join(dir, 'hard.json')
  writeFileSync(hard, JSON.stringify([{ input: 'What is 2+2?', additional_metadata: { difficulty: 'easy' } }, { input: 'Prove it.', additional_metadata: { difficulty: 'expert' } }]))
  const wrong: string[] = []
  const alike = new Set<string>()
  for (const format of FORMAT_NAMES) {
    const adapter = await getAdapter(format)
    for (const container of adapter.writes) {
      for (const source of [...SOURCES, hard]) {
        // Each its own folder: an evalcase YAML and the sidecar of a JSON Lines file of the same stem would meet.
        const out = join(dir, `${basename(source).replace(/\W/g, '_')}-${format}-${container}`, `written.${container}`)
        mkdirSync(dirname(out))
        await convert({ input: source, output: out, to: format })
        const d = await detect(out)
        const where = `${format} ${container} from ${basename(source)}`
        if (d.container !== container) wrong.push(`${where}: detected ${d.container}`)
        else if (d.format === format) await readAll(out, {})
        else {
          // Records another format writes alike may be named by it: read as it and written as this format again, they are the same file.
          const again = join(dirname(out), `again.${container}`)
          await convert({ input: out, output: again, to: format })
          if (readFileSync(again, 'utf8') !== readFileSync(out, 'utf8')) wrong.push(`${where}: detected ${d.format} ${JSON.stringify(d.candidates)}`)
          else alike.add(`${format} ${container} as ${d.format}`)
        }
      }
    }
  }
  assert.deepEqual(wrong, [])
  assert.deepEqual([...alike].sort(), WRITTEN_ALIKE)
})

test('a weak guess whose reader refuses the first record says which formats read it; skipping every record is no success', async () => {
  const dir = tempDir('evalferry-detect-')
  // LangSmith-style runs: input and output are objects, which DeepEval's input cannot be.
  const runs = join(dir, 'runs.jsonl')
  writeFileSync(runs, '{"input": {"question": "What is 2+2?"}, "output": {"answer": "4"}}\n{"input": {"question": "Capital of France?"}, "output": {"answer": "Paris"}}\n')
  const d = await detect(runs)
  assert.ok(d.confidence < 0.5, JSON.stringify(d.candidates))
  const out = join(dir, 'cases.yaml')
  const failed = await runCli(['convert', runs, '--to', 'evalcase', '-o', out])
  assert.equal(failed.code, 1)
  assert.match(failed.stderr, new RegExp(`^evalferry: ${runs}:1: input: .*; the file was taken for ${d.format} from its content, with confidence ${d.confidence.toFixed(2)}: it reads as hf \\(--from hf\\)`), failed.stderr)
  const skipped = await runCli(['convert', runs, '--to', 'evalcase', '-o', out, '--on-error', 'skip', '--rejects', join(dir, 'rejects.jsonl')])
  assert.equal(skipped.code, 1, skipped.stderr)
  assert.match(skipped.stderr, /no case was read: all 2 of its records were skipped, so nothing is written; the first: .*:1: input: .*--from hf/)
  assert.equal(existsSync(out), false)
  const named = await runCli(['convert', runs, '--from', 'hf', '--to', 'evalcase', '-o', out, '--quiet'])
  assert.equal(named.code, 0, named.stderr)
  assert.equal((await readAll(out, {})).length, 2)
  // A sure guess that refuses a record is an error of the record alone.
  const sure = join(dir, 'sure.json')
  writeFileSync(sure, JSON.stringify([{ input: 'a', actual_output: 'b', tools_called: 3 }]))
  const refused = await runCli(['convert', sure, '--to', 'evalcase', '-o', join(dir, 'sure.yaml')])
  assert.equal(refused.code, 1)
  assert.doesNotMatch(refused.stderr, /taken for/)
})

/**
 * Every file of the field (`../shared/fixtures/real/field`) and the format it is detected as. A
 * ragas test set saved by pandas is a plain table: `csv`, which maps ragas' columns by name, as `hf`
 * would the same cells.
 */
const FIELD_FORMATS: Record<string, string> = {
  'agentv-4.42.4/basic-jsonl/dataset.eval.yaml': 'evalcase',
  'agentv-4.42.4/basic-jsonl/dataset.jsonl': 'evalcase',
  'agentv-5/basic-jsonl/cases.jsonl': 'evalcase',
  'agentv-5/basic-jsonl/suite.yaml': 'evalcase',
  'agentv-5/rubric_suite.yaml': 'evalcase',
  'hf/openai_grade-school-math__test.jsonl': 'hf',
  'hf/openai_human-eval__HumanEval.jsonl.gz': 'hf',
  'langsmith/langchain-benchmarks__Web-QA-Dataset-Correct.json': 'langsmith',
  'promptfoo/promptfoo__eval-customer-support-rubric_tests.csv': 'promptfoo',
  'promptfoo/promptfoo__simple-csv_tests.csv': 'promptfoo',
  'ragas/Filichkin_kim_ragas__ragas_testset.csv': 'csv',
}

test('the field files are all listed here', () => {
  const field = join(SHARED_FIXTURES, 'field')
  const files = (readdirSync(field, { recursive: true }) as string[]).filter((name) => name !== 'README.md' && statSync(join(field, name)).isFile())
  assert.deepEqual(files.sort(), Object.keys(FIELD_FORMATS).sort())
})

for (const [name, format] of Object.entries(FIELD_FORMATS)) {
  test(`field/${name} is detected as ${format}`, async () => {
    const d = await detect(join(SHARED_FIXTURES, 'field', name), { count: true })
    assert.equal(d.format, format, JSON.stringify(d.candidates))
    assert.ok((d.records ?? 0) > 0)
  })
}

test('a surer guess that gave way says why, in detect and its --json', async () => {
  const dir = tempDir('evalferry-detect-')
  const hard = join(dir, 'hard.json')
  writeFileSync(hard, JSON.stringify([{ input: 'What is 2+2?', additional_metadata: { difficulty: 'easy' } }, { input: 'Prove it.', additional_metadata: { difficulty: 'expert' } }]))
  const lines = join(dir, 'hard.jsonl')
  await convert({ input: hard, output: lines, to: 'evalcase' })
  const d = await detect(lines)
  assert.equal(d.format, 'evalcase')
  const evals = d.candidates.find((c) => c.format === 'evals')!
  assert.ok(evals.confidence > d.confidence, JSON.stringify(d.candidates))
  assert.match(evals.passedOver!, /^its reader refuses record 2: metadata\.difficulty: expected one of "easy", "medium", "hard", got string "expert"/)
  const printed = await runCli(['detect', lines])
  assert.match(printed.stdout, /\(also evals 0\.75 \[passed over: its reader refuses record 2: metadata\.difficulty: /)
})

test('a record past those detection read that its guess refuses, and a likely other format reads, has the file read as that one', async () => {
  const dir = tempDir('evalferry-detect-')
  // DeepEval goldens whose 26th has a difficulty EvalCase JSON refuses, past the 20 records detection reads.
  const goldens = [...Array.from({ length: 25 }, (_, i) => ({ input: `q${i}`, additional_metadata: { difficulty: 'easy' } })), { input: 'the hard one', additional_metadata: { difficulty: 'expert' } }]
  const source = join(dir, 'goldens.json')
  writeFileSync(source, JSON.stringify(goldens))
  const lines = join(dir, 'cases.jsonl')
  await convert({ input: source, output: lines, to: 'evalcase' })
  assert.equal((await detect(lines)).format, 'evals')
  for (const onError of ['fail', 'skip'] as const) {
    const back = join(dir, `back-${onError}.json`)
    const report = await convert({ input: lines, output: back, to: 'deepeval', onError })
    assert.deepEqual([report.from, report.records], ['evalcase', { read: 26, written: 26, skipped: 0 }])
    assert.deepEqual(JSON.parse(readFileSync(back, 'utf8')), JSON.parse(readFileSync(source, 'utf8')))
    assert.deepEqual(
      report.warnings.filter((w) => /^detected as/.test(w.message)).map((w) => [w.location.line, w.message.replace(/\(.*\)/, '(…)')]),
      [[26, 'detected as evals from the first records, whose reader refuses this one (…): the file is read as evalcase']],
    )
  }
})

test("a suite whose tests: names its cases file is told by that file's cases: their count and fields", async () => {
  for (const [suite, cases] of [
    ['agentv-4.42.4/basic-jsonl/dataset.eval.yaml', 'agentv-4.42.4/basic-jsonl/dataset.jsonl'],
    ['agentv-5/basic-jsonl/suite.yaml', 'agentv-5/basic-jsonl/cases.jsonl'],
  ] as const) {
    const told = await detect(join(SHARED_FIXTURES, 'field', suite), { count: true })
    const file = await detect(join(SHARED_FIXTURES, 'field', cases), { count: true })
    assert.deepEqual([told.format, told.container, told.records], ['evalcase', 'yaml', file.records], suite)
    assert.deepEqual(told.fields, file.fields, suite)
  }
})

test("an AgentV sidecar read alone (dataset.yaml beside dataset.jsonl) is named as the sidecar of that file, which holds the cases to convert", async () => {
  const dir = tempDir('evalferry-sidecar-alone-')
  const sidecar = join(SHARED_FIXTURES, 'evalcase', 'agentv-2026-02', 'basic-jsonl--dataset.yaml')
  const run = await runCli(['convert', sidecar, '--to', 'deepeval', '-o', join(dir, 'goldens.json')])
  assert.equal(run.code, 1)
  assert.equal(
    run.stderr.trim(),
    `evalferry: ${sidecar}: this file is the sidecar of basic-jsonl--dataset.jsonl beside it (the keys of its evalcase cases) and holds no cases: convert basic-jsonl--dataset.jsonl`,
  )
  assert.equal(existsSync(join(dir, 'goldens.json')), false)
})

test('a suite whose cases file is missing is refused where it names the file, whether its format is named or told', async () => {
  const dir = tempDir('evalferry-detect-cases-file-')
  const suite = join(dir, 'suite.eval.yaml')
  writeFileSync(suite, '# cases in a file beside\ndescription: a suite\n\ntests: ./missing.jsonl\n')
  for (const from of [[], ['--from', 'evalcase']]) {
    const result = await runCli(['convert', suite, ...from, '--to', 'deepeval', '-o', join(dir, 'out.jsonl')])
    assert.equal(result.code, 1)
    assert.equal(result.stderr.trim(), `evalferry: ${suite}:4: ./missing.jsonl: no such file`)
  }
  await assert.rejects(detect(suite), (error: Error & { location?: object }) => {
    assert.deepEqual(error.location, { file: suite, line: 4, field: './missing.jsonl' })
    return true
  })
})
