/**
 * promptfoo test cases, and AgentV 5's dialect of them, on the files people really have: the test
 * CSVs of promptfoo's own examples and AgentV 5's example suites (../shared/fixtures/real/field).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { FORMAT_NAMES, getAdapter } from '../../adapters/index.ts'
import type { Container, FormatName } from '../../adapters/types.ts'
import { containerOf, readRecords } from '../../src/codecs/index.ts'
import { detect } from '../../src/detect.ts'
import { write } from '../../src/write.ts'
import type { EvalCase, JsonObject } from '../../src/model.ts'
import { rowTest } from '../../adapters/promptfoo.ts'
import { agentv5Refusals, promptfooRefusals } from '../../adapters/test-case.ts'
import { runCli, SHARED_FIXTURES } from '../helpers/cli.ts'
import { judgedBy, runInCompat } from '../helpers/compat.ts'
import { fixtures } from '../helpers/fixtures.ts'
import { plain, readAll, tempDir } from './fixture-helpers.ts'

const FIELD = join(SHARED_FIXTURES, 'field')
const SIMPLE_CSV = join(FIELD, 'promptfoo', 'promptfoo__simple-csv_tests.csv')
const RUBRIC_CSV = join(FIELD, 'promptfoo', 'promptfoo__eval-customer-support-rubric_tests.csv')
const AGENTV5_SUITE = join(FIELD, 'agentv-5', 'rubric_suite.yaml')
const AGENTV5_JSONL = join(FIELD, 'agentv-5', 'basic-jsonl', 'cases.jsonl')
const AGENTV4_JSONL = join(FIELD, 'agentv-4.42.4', 'basic-jsonl', 'dataset.jsonl')

const scratch = tempDir()
let counter = 0
const EXT: Record<Container, string> = { json: '.json', jsonl: '.jsonl', csv: '.csv', yaml: '.yaml', parquet: '.parquet' }
const output = (container: Container) => join(scratch, `out-${++counter}${EXT[container]}`)

/** A file's header and records as its container parses them: JSON values, or a CSV's cells. */
async function records(file: string, format: FormatName): Promise<unknown[]> {
  const adapter = await getAdapter(format)
  const header = {}
  const values: unknown[] = []
  for await (const r of readRecords(containerOf(file)!, file, { file, recordKeys: adapter.recordKeys, header, columns: [], casesFiles: true })) values.push(r.value)
  return [header, ...values]
}

test('promptfoo test CSVs from the field are detected as promptfoo and read as its loader reads them', async () => {
  for (const file of [SIMPLE_CSV, RUBRIC_CSV]) assert.equal((await detect(file)).format, 'promptfoo', file)

  const simple = await readAll(SIMPLE_CSV, {})
  assert.equal(simple.length, 4)
  // Plain columns are variables: row data, a JSON text cell kept as text.
  assert.deepEqual(simple[1]!.metadata, { language: 'French', body: "I'm hungry", style_config: '{"tone":"casual","length":"brief","formatting":{"bullets":true}}' })
  // `icontains:faim` is promptfoo's `icontains` assertion, no canonical field: it stays with the case.
  assert.deepEqual(simple[1]!.extras?.promptfoo?.$assert, [{ type: 'icontains', value: 'faim' }])

  const rubric = await readAll(RUBRIC_CSV, {})
  assert.equal(rubric.length, 8)
  assert.equal(rubric[0]!.description, 'ES refund ticket answered in Spanish')
  assert.equal(rubric[3]!.metadata?.customer_message, 'Cual es el precio de mi tarifa despues del primer año?')
  assert.equal(rubric[3]!.metadata?.severity, 'medium')
  // `__threshold` "0" is a threshold of 0 to promptfoo; an empty cell none.
  assert.equal(rubric[3]!.extras?.promptfoo?.threshold, 0)
  assert.equal(rubric[0]!.extras?.promptfoo?.threshold, undefined)
})

test('a plain __expected is the reference, llm-rubric: the criterion, and other cells stay as written', async () => {
  const cases = await readAll(join(import.meta.dirname, '..', 'fixtures', 'promptfoo', 'tests.csv'), {})
  assert.deepEqual(cases[0]!.expected_output, [{ role: 'assistant', content: 'Paris' }])
  assert.equal(cases[0]!.expected_outcome, 'Names Paris only')
  assert.deepEqual(cases[0]!.metadata?.tags, ['geo', 'europe'])
  // `icontains: tac` reads as `icontains` of "tac": the cell's own text is kept to be written again.
  assert.deepEqual(cases[2]!.extras?.promptfoo?.$text, { __expected1: 'icontains: tac' })
})

test('promptfoo test CSVs from the field are written back cell for cell', async () => {
  for (const file of [SIMPLE_CSV, RUBRIC_CSV]) {
    const cases = await readAll(file, { from: 'promptfoo' })
    const out = output('csv')
    await write(cases, out, { to: 'promptfoo' })
    assert.deepEqual(await records(out, 'promptfoo'), await records(file, 'promptfoo'), file)
  }
})

/** Reading `file`, writing every format in every container, reading that and writing `file`'s format gives `file`'s records. */
async function throughEveryFormat(file: string, format: FormatName, t: test.TestContext): Promise<void> {
  const original = await readAll(file, { from: format })
  const direct = output(containerOf(file)!)
  await write(original, direct, { to: format })
  const expected = await records(direct, format)
  assert.deepEqual(expected, await records(file, format), 'written directly, the file is the same')
  for (const target of FORMAT_NAMES) {
    for (const container of (await getAdapter(target)).writes) {
      await t.test(`→ ${target} ${container} → ${format}`, async () => {
        const middle = output(container)
        await write(original, middle, { to: target })
        const through = await readAll(middle, { from: target })
        const back = output(containerOf(file)!)
        await write(through, back, { to: format })
        assert.deepEqual(await records(back, format), expected)
      })
    }
  }
}

for (const file of [SIMPLE_CSV, RUBRIC_CSV]) {
  test(`${file.split('/').pop()}: through every format and back, the same cells`, (t) => throughEveryFormat(file, 'promptfoo', t))
}

test('AgentV 5 suites are read by evalcase: ids, chat inputs, references, criteria and rubrics', async () => {
  assert.equal((await detect(AGENTV5_SUITE)).format, 'evalcase')
  assert.equal((await detect(AGENTV5_JSONL)).format, 'evalcase')
  const cases = await readAll(AGENTV5_SUITE, {})
  assert.deepEqual(
    cases.map((c) => c.id),
    ['code-explanation-simple', 'technical-writing-detailed', 'code-quality-multi-eval', 'summary-task', 'summary-multi-criteria-score-ranges-proposed'],
  )
  const [simple, detailed, multi] = cases as [EvalCase, EvalCase, EvalCase]
  assert.deepEqual(simple.input, [{ role: 'user', content: 'Explain how the quicksort algorithm works' }])
  assert.match(String((simple.expected_output as { content: string }[])[0]!.content), /^Quicksort is a divide-and-conquer/)
  // The last bare assertion is the case's criterion (AgentV 4's `criteria`); those before it, its rubrics.
  assert.equal(simple.expected_outcome, 'Provide a clear explanation of how quicksort works, including time complexity')
  assert.deepEqual(simple.rubrics, [{ expected_outcome: 'Mentions divide-and-conquer approach' }, { expected_outcome: 'Explains the partition step' }, { expected_outcome: 'States time complexity correctly' }])
  assert.deepEqual(detailed.rubrics?.[1], { id: 'success-codes', expected_outcome: 'Covers 2xx success codes with examples', weight: 2, required: true })
  assert.equal(detailed.expected_outcome, 'Write a comprehensive guide on HTTP status codes with examples')
  // A grader with no canonical field (a script) stays in its place among the assertions.
  const kept = multi.extras?.evalcase?.$assert as unknown[]
  assert.deepEqual(kept[1], { metric: 'python_syntax', type: 'script', command: ['uv', 'run', 'python', 'check_syntax.py'] })
  assert.equal(multi.rubrics?.length, 4)
})

test("AgentV 5's JSON Lines cases read as the same cases as AgentV 4's", async () => {
  const v5 = await readAll(AGENTV5_JSONL, {})
  const v4 = await readAll(AGENTV4_JSONL, { from: 'evalcase' })
  const fields = (c: EvalCase) => plain({ id: c.id, conversation_id: c.conversation_id, input: c.input, expected_output: c.expected_output, expected_outcome: c.expected_outcome })
  assert.equal(v5.length, 7)
  assert.deepEqual(v5.map(fields), v4.map(fields))
})

for (const file of [AGENTV5_SUITE, AGENTV5_JSONL, join(FIELD, 'agentv-5', 'basic-jsonl', 'suite.yaml')]) {
  test(`${file.split('/').pop()}: AgentV 5 through every format and back, the same records`, (t) => throughEveryFormat(file, 'evalcase', t))
}

/**
 * promptfoo's own loader, in compat/, reads each file: a test list by its path (`tests: file://…`,
 * as a config names one), a config's tests as the config holds them. A provider that answers
 * every test keeps the test promptfoo made (defaults applied, variables expanded), one per call.
 */
function promptfooTests(files: { path: string; inline?: unknown[] }[], config: string): { path: string; tests?: unknown[]; error?: string }[] {
  return runInCompat(
    `process.env.PROMPTFOO_CONFIG_DIR = process.argv[2]
     process.env.PROMPTFOO_DISABLE_TELEMETRY = '1'
     process.env.PROMPTFOO_DISABLE_UPDATE = '1'
     const { evaluate } = (await import('promptfoo')).default
     const out = []
     for (const file of JSON.parse(process.argv[1])) {
       const seen = []
       const keep = { id: () => 'keep', callApi: async (prompt, context) => { seen.push(JSON.parse(JSON.stringify(context.test))); return { output: '' } } }
       try {
         await evaluate({ prompts: ['{{input}}'], providers: [keep], tests: file.inline ?? 'file://' + file.path, writeLatestResults: false }, { maxConcurrency: 1, cache: false, showProgressBar: false })
         out.push({ path: file.path, tests: seen })
       } catch (error) {
         out.push({ path: file.path, error: String(error?.message ?? error) })
       }
     }
     result(out)`,
    [JSON.stringify(files), config],
  )
}

/** promptfoo's test as the file holds it: what the loader adds to every test (an empty `options`, a `Row #n` name...) taken off. */
function asWritten(loaded: Record<string, unknown>, written: Record<string, unknown>, index: number): Record<string, unknown> {
  const test = { ...loaded }
  const empty = (v: unknown) => (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && v !== null && Object.keys(v).length === 0)
  for (const key of ['options', 'metadata', 'assert', 'vars']) if (!(key in written) && empty(test[key])) delete test[key]
  if (!('description' in written) && test.description === `Row #${index + 1}`) delete test.description
  return test
}

test("promptfoo's loader reads every test evalferry writes as promptfoo with the same vars and assertions", judgedBy('promptfoo'), async (t) => {
  const sources: { path: string; format: FormatName }[] = [
    ...fixtures().map((f) => ({ path: f.path, format: f.format })),
    { path: SIMPLE_CSV, format: 'promptfoo' },
    { path: RUBRIC_CSV, format: 'promptfoo' },
    { path: AGENTV5_SUITE, format: 'evalcase' },
    { path: AGENTV5_JSONL, format: 'evalcase' },
    { path: AGENTV4_JSONL, format: 'evalcase' },
    { path: join(FIELD, 'langsmith', 'langchain-benchmarks__Web-QA-Dataset-Correct.json'), format: 'langsmith' },
    { path: join(FIELD, 'ragas', 'Filichkin_kim_ragas__ragas_testset.csv'), format: 'csv' },
    { path: join(FIELD, 'hf', 'openai_human-eval__HumanEval.jsonl.gz'), format: 'hf' },
  ]
  const files: { path: string; inline?: unknown[]; written: Record<string, unknown>[] }[] = []
  for (const source of sources) {
    const cases = await readAll(source.path, { from: source.format })
    for (const container of ['yaml', 'json', 'jsonl', 'csv'] as const) {
      const path = output(container)
      await write(cases, path, { to: 'promptfoo' })
      const [header, ...rows] = await records(path, 'promptfoo')
      const written = (container === 'csv' ? rows.map((row) => rowTest(row as Record<string, string>, Object.keys(row as object))) : rows) as Record<string, unknown>[]
      // A config's tests are handed over as the config holds them; a test's own provider would answer in place of the one that keeps it.
      const config = Object.keys(header as object).some((k) => !k.startsWith('$'))
      const inline = config ? written.map(({ provider: _provider, ...rest }) => rest) : undefined
      files.push({ path, written: inline ?? written, ...(inline ? { inline } : {}) })
    }
  }
  const loaded = promptfooTests(files.map(({ path, inline }) => ({ path, ...(inline ? { inline } : {}) })), tempDir())
  let tests = 0
  for (const [i, file] of files.entries()) {
    const got = loaded[i]!
    assert.equal(got.error, undefined, `${file.path}: ${got.error}`)
    const theirs = (got.tests as Record<string, unknown>[]).map((t, k) => asWritten(t, file.written[k] ?? {}, k))
    assert.deepEqual(theirs, plain(file.written), file.path)
    tests += theirs.length
  }
  t.diagnostic(`promptfoo loaded ${tests} tests from ${files.length} files, each as written`)
  assert.ok(tests > 1000, `promptfoo loaded ${tests} tests from ${files.length} files`)
})

test("AgentV 5's own suites hold nothing AgentV 5 refuses or skips; what it does refuse is named at its field", async () => {
  for (const file of [AGENTV5_SUITE, AGENTV5_JSONL]) {
    const [header, ...cases] = (await records(file, 'evalcase')) as [JsonObject, ...unknown[]]
    cases.forEach((record, i) => assert.deepEqual(agentv5Refusals(record, header, i === 0), [], `${file} [${i}]`))
  }
  const fields = (record: unknown, header: JsonObject = {}) => agentv5Refusals(record, header, true).map((r) => r.field)
  // AgentV 4's spelling in an AgentV 5 case: input and expected_output are variables now.
  assert.deepEqual(fields({ id: 'a', input: 'hi', expected_output: 'yo', vars: { input: 'hi' }, assert: ['ok'] }), ['input', 'expected_output'])
  assert.deepEqual(fields({ vars: { question: 'hi' }, assert: [{ type: 'factuality', value: 'x' }] }, { prompts: ['{{ question }}'] }), ['id', 'assert[0].type'])
  assert.deepEqual(fields({ id: 'a', vars: { input: 'hi' } }, { evalcases: [], execution: { target: 'llm' } }), ['evalcases', 'execution', 'assert'])
})

test('promptfoo refuses a test with nothing but a description, and a bare string among its assertions', async () => {
  for (const file of [SIMPLE_CSV, RUBRIC_CSV]) {
    const [, ...rows] = await records(file, 'promptfoo')
    for (const row of rows) assert.deepEqual(promptfooRefusals(rowTest(row as Record<string, string>, Object.keys(row as object))), [])
  }
  assert.deepEqual(promptfooRefusals({ description: 'only a name' }).map((r) => r.field), ['vars'])
  assert.deepEqual(promptfooRefusals({ vars: { input: 'hi' }, assert: ['Answers politely'] }).map((r) => r.field), ['assert[0]'])
})

test("a config whose only prompt is {{ question }} has each test's input in vars.question, in every container it is written to", async () => {
  const config = join(scratch, 'question.yaml')
  writeFileSync(config, 'prompts: ["{{ question }}"]\nproviders: [echo]\ntests:\n  - vars: {question: "What is 2+2?", expected_output: "4"}\n    assert: [{type: llm-rubric, value: Answers 4}]\n')
  const [c] = await readAll(config, {})
  assert.deepEqual(c!.input, [{ role: 'user', content: 'What is 2+2?' }])
  for (const container of ['yaml', 'json', 'jsonl', 'csv'] as const) {
    const out = output(container)
    const report = await write([c!], out, { to: 'promptfoo' })
    // The question is the input's variable: nothing of the case needs carrying but the config's keys, where the container has no place for them.
    assert.deepEqual(Object.keys(report.carried), container === 'yaml' || container === 'json' ? [] : ['extras.promptfoo.$file'], container)
    assert.deepEqual(plain(await readAll(out, { from: 'promptfoo' })), plain([c]), container)
  }
})

test('validate passes the AgentV 5 and promptfoo files from the field, and fails where AgentV 5 or promptfoo would refuse or skip a test', async () => {
  const good = await runCli(['validate', AGENTV5_SUITE, AGENTV5_JSONL, SIMPLE_CSV, RUBRIC_CSV])
  assert.equal(good.code, 0, good.stdout + good.stderr)
  const suite = join(scratch, 'v5-suite.yaml')
  writeFileSync(
    suite,
    'name: v5\nprompts: ["{{ input }}"]\nproviders: [llm]\ntests:\n  - id: old\n    input: What is 2+2?\n    vars: {input: What is 2+2?}\n    assert: [Answers 4]\n  - id: ungraded\n    vars: {input: Hi}\n',
  )
  const tests = join(scratch, 'bare.json')
  writeFileSync(tests, '[{"vars": {"input": "hi"}, "assert": ["Answers politely"]}]\n')
  const bad = await runCli(['validate', suite])
  assert.equal(bad.code, 1)
  assert.match(bad.stdout + bad.stderr, /v5-suite\.yaml:6: input: AgentV 5 refuses a case's `input`/)
  assert.match(bad.stdout + bad.stderr, /v5-suite\.yaml:9: assert: AgentV 5 skips a case without criteria, assertions or turns/)
  const bare = await runCli(['validate', tests, '--from', 'promptfoo'])
  assert.equal(bare.code, 1)
  assert.match(bare.stdout + bare.stderr, /bare\.json:1: assert\[0\]: promptfoo refuses an assertion without a type/)
})

test("AgentV 5's suite naming its JSON Lines cases reads as those cases, under the suite's prompt and keys", async () => {
  const suite = join(FIELD, 'agentv-5', 'basic-jsonl', 'suite.yaml')
  assert.equal((await detect(suite)).format, 'evalcase')
  const cases = await readAll(suite, {})
  const alone = await readAll(AGENTV5_JSONL, {})
  assert.deepEqual(cases.map((c) => c.id), alone.map((c) => c.id))
  assert.deepEqual(plain(cases.map((c) => c.input)), plain(alone.map((c) => c.input)))
  assert.equal(cases[4]!.expected_outcome, 'Assistant correctly answers the math question')
  const keys = cases[0]!.extras?.evalcase?.$file as JsonObject
  assert.deepEqual([keys.name, keys.providers, keys.prompts], ['basic-jsonl', ['llm'], ['{{ input }}']])
  // Written back: the suite, naming its file, and the file, each with the same records.
  const dir = join(scratch, 'suite')
  await write(cases, join(dir, 'suite.yaml'), { to: 'evalcase' })
  assert.deepEqual(await records(join(dir, 'suite.yaml'), 'evalcase'), await records(suite, 'evalcase'))
  assert.deepEqual(await records(join(dir, 'cases.jsonl'), 'evalcase'), await records(AGENTV5_JSONL, 'evalcase'))
})

test('a config whose tests: names a CSV reads as that CSV\'s tests with the config\'s keys, and is written with its tests in place', async () => {
  const dir = join(scratch, 'named')
  mkdirSync(dir)
  copyFileSync(SIMPLE_CSV, join(dir, 'tests.csv'))
  writeFileSync(join(dir, 'promptfooconfig.yaml'), 'description: Translations\nprompts: ["Rewrite {{body}} in {{language}}"]\nproviders: [echo]\ntests: file://tests.csv\n')
  const cases = await readAll(join(dir, 'promptfooconfig.yaml'), {})
  assert.deepEqual(plain(cases.map(({ extras: _extras, ...c }) => c)), plain((await readAll(SIMPLE_CSV, {})).map(({ extras: _extras, ...c }) => c)))
  assert.equal((cases[0]!.extras?.promptfoo?.$file as JsonObject).description, 'Translations')
  const out = join(dir, 'out.yaml')
  await write(cases, out, { to: 'promptfoo' })
  const [header, ...tests] = await records(out, 'promptfoo')
  assert.deepEqual(Object.keys(header as object).filter((k) => !k.startsWith('$')), ['description', 'prompts', 'providers'])
  assert.equal(tests.length, 4)
  assert.deepEqual(plain(await readAll(out, {})), plain(cases))
})
