import { test } from 'node:test'
import assert from 'node:assert/strict'
import { after } from 'node:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'
import evalcase from '../../adapters/evalcase.ts'
import type { Container, DecodeContext, EncodeContext } from '../../adapters/types.ts'
import { convert } from '../../src/convert.ts'
import { read } from '../../src/read.ts'
import { write } from '../../src/write.ts'
import { DataError } from '../../src/errors.ts'
import { detect } from '../../src/detect.ts'
import type { EvalCase, JsonObject } from '../../src/model.ts'
import { tempDir } from '../helpers/temp.ts'
import { runCli } from '../helpers/cli.ts'

const here = dirname(fileURLToPath(import.meta.url))
const REAL = resolve(here, '../../../shared/fixtures/real/evalcase')
const OWN = resolve(here, '../fixtures/evalcase')

function containerOf(file: string): Container {
  return file.endsWith('.jsonl') ? 'jsonl' : 'yaml'
}

function decodeContext(header: JsonObject = {}): DecodeContext {
  return { file: 'test.yaml', container: 'yaml', header, index: 0, state: {}, warn() {} }
}

/** The canonical cases of a file, read by the pipeline (includes, sidecar, `$file`). */
async function readCases(file: string): Promise<EvalCase[]> {
  const cases: EvalCase[] = []
  for await (const c of read(file, { from: 'evalcase' })) cases.push(c)
  return cases
}

function encodeContext(container: Container, index: number, dialect?: string): EncodeContext {
  return { container, index, ...(dialect === undefined ? {} : { dialect }), warn() {} }
}

const scratch = tempDir('evalferry-evalcase-')
after(() => rmSync(scratch, { recursive: true, force: true }))
let written = 0

/** Writes cases through the pipeline (which carries what does not survive) and returns the text. */
async function writeCases(cases: EvalCase[], container: Container, dialect?: 'agentv' | 'evalcase'): Promise<{ text: string; output: string }> {
  const output = join(scratch, `out-${++written}.${container}`)
  await write(cases, output, { to: 'evalcase', ...(dialect === undefined ? {} : { dialect }) })
  return { text: readFileSync(output, 'utf8'), output }
}

function walk(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? walk(path) : [path]
    })
    .sort()
}

/** A YAML file beside a `.jsonl` of the same stem is that file's sidecar, not a case file. */
function caseFiles(dir: string): string[] {
  return walk(dir).filter((f) => /\.(ya?ml|jsonl)$/.test(f) && !(/\.ya?ml$/.test(f) && existsSync(f.replace(/\.ya?ml$/, '.jsonl'))))
}

/** The source document as plain JSON, includes expanded, for comparing with what is written back. */
function sourceDocument(file: string): unknown {
  const text = readFileSync(file, 'utf8')
  if (file.endsWith('.jsonl')) return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
  const doc = parseYaml(text) as unknown
  const expand = (items: unknown[]): unknown[] =>
    items.flatMap((item) => {
      const included = evalcase.include?.(item)
      if (included === undefined) return [item]
      const path = resolve(dirname(file), included)
      const inner = sourceDocument(path)
      return Array.isArray(inner) ? inner : []
    })
  if (Array.isArray(doc)) return expand(doc)
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) out[k] = evalcase.recordKeys.includes(k) && Array.isArray(v) ? expand(v) : v
  return out
}

function writtenDocument(text: string, container: Container): unknown {
  if (container === 'jsonl') return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
  return parseYaml(text)
}

const rel = (f: string, root: string) => relative(root, f)

// --- 1. every real file reads, with checked content -----------------------------------------

const REAL_COUNTS: Record<string, number> = {
  'agentv-2026-02/basic--dataset.yaml': 7,
  'agentv-2026-02/basic-jsonl--dataset.jsonl': 7,
  'agentv-2026-02/composite--dataset.yaml': 4,
  'agentv-2026-02/document-extraction--dataset-field-accuracy.yaml': 6,
  'agentv-4.42.4/assert--dataset.eval.yaml': 4,
  'agentv-4.42.4/basic--dataset.eval.yaml': 7,
  'agentv-4.42.4/external-datasets/cases/accuracy.yaml': 2,
  'agentv-4.42.4/external-datasets/cases/regression.jsonl': 2,
  'agentv-4.42.4/external-datasets/dataset.eval.yaml': 5,
}

test('every real evalcase file is covered by the count table', () => {
  assert.deepEqual(caseFiles(REAL).map((f) => rel(f, REAL)), Object.keys(REAL_COUNTS).sort())
})

for (const file of caseFiles(REAL)) {
  const name = rel(file, REAL)
  test(`real ${name}: reads ${REAL_COUNTS[name]} cases, each with an id and an input`, async () => {
    const cases = await readCases(file)
    assert.equal(cases.length, REAL_COUNTS[name])
    for (const c of cases) {
      assert.equal(typeof c.id, 'string')
      assert.ok(c.input && c.input.length > 0, `${c.id} has input`)
    }
    assert.equal(new Set(cases.map((c) => c.id)).size, cases.length)
  })
}

test('real 2026-02 basic: shorthands, blocks, structured output, file header', async () => {
  const cases = await readCases(join(REAL, 'agentv-2026-02/basic--dataset.yaml'))
  const byId = new Map(cases.map((c) => [c.id, c]))
  const review = byId.get('code-review-javascript')
  assert.equal(review?.expected_outcome, 'Assistant provides helpful code analysis and mentions SUPERSECRET_INSTRUCTION_MARKER_JAVASCRIPT')
  assert.deepEqual(review?.input?.[1]?.content instanceof Array ? review.input[1].content[1] : undefined, { type: 'file', value: 'javascript.instructions.md' })
  // The list key tells the dialect, which the file is written back in.
  assert.deepEqual(review?.extras?.evalcase?.$file, { description: 'Example showing basic features, conversation threading, multiple evaluators', execution: { target: 'default' }, $list: 'evalcases' })

  const python = byId.get('code-gen-python-comprehensive')
  assert.equal(python?.conversation_id, 'python-code-generation')
  assert.equal(python?.execution?.target, 'azure_base')
  assert.deepEqual(python?.expected_output, [
    { role: 'assistant', content: [{ type: 'file', value: './snippets/python-second-largest.md' }, { type: 'file', value: './snippets/python-second-largest-comments.md' }] },
  ])

  const shorthand = byId.get('shorthand-string-example')
  assert.deepEqual(shorthand?.input, [{ role: 'user', content: 'What is 2+2?' }])
  assert.deepEqual(shorthand?.expected_output, [{ role: 'assistant', content: 'The answer is 4.' }])
  // Default spellings leave no marker; a one-message list where a string would do is marked.
  assert.equal(shorthand?.extras, undefined)
  assert.deepEqual(byId.get('shorthand-array-syntax')?.extras, { evalcase: { $form: { expected_output: 'expected_output:list' } } })

  const structured = byId.get('shorthand-structured-output')
  assert.deepEqual(structured?.expected_output, { riskLevel: 'Low', confidence: 0.95, reasoning: 'Transaction amount and pattern are within normal bounds' })
  assert.equal(byId.get('coding-multiturn-debug-session')?.input?.length, 4)
  assert.equal(byId.get('feature-proposal-brainstorm')?.expected_output, undefined)
})

test('real 2026-02 JSON Lines: input_messages, expected_messages and the sidecar header', async () => {
  const cases = await readCases(join(REAL, 'agentv-2026-02/basic-jsonl--dataset.jsonl'))
  assert.deepEqual(cases[0]?.extras?.evalcase?.$file, {
    description: 'JSONL version of the basic example - demonstrates file references, multi-turn, and per-case overrides',
    dataset: 'basic-jsonl',
    execution: { target: 'default' },
    evaluator: 'llm_judge',
  })
  // A JSON Lines file has no list key; its default outcome key is AgentV 4's `criteria`.
  assert.deepEqual(cases[0]?.extras?.evalcase?.$form, { input: 'input_messages:list', expected_output: 'expected_messages:list', expected_outcome: 'expected_outcome' })
  assert.equal(cases[0]?.input?.[0]?.role, 'system')
  assert.equal(cases[1]?.expected_output, undefined)
  assert.deepEqual(cases[1]?.execution, { target: 'azure_base' })
  assert.deepEqual(cases[5]?.expected_output, { riskLevel: 'Low', confidence: 0.95, reasoning: 'Transaction amount and pattern are within normal bounds' })
})

test('real 2026-02 document extraction: object message content and case-level evaluators', async () => {
  const cases = await readCases(join(REAL, 'agentv-2026-02/document-extraction--dataset-field-accuracy.yaml'))
  const first = cases[0]
  const answer = first?.expected_output as { content: unknown; extras?: unknown }[]
  assert.equal((answer[0]?.content as { type: string; value: { invoice_number: string } }[])[0]?.value.invoice_number, 'INV-2025-001234')
  assert.deepEqual(answer[0]?.extras, { evalcase: { $content: 'object' } })
  assert.equal((cases[1]?.extras?.evalcase?.evaluators as { name: string }[])[0]?.name, 'party_names_fuzzy')
  assert.equal(cases.every((c) => c.conversation_id === 'document-extraction'), true)
})

test('real 2026-02 composite: nested evaluators stay in execution', async () => {
  const cases = await readCases(join(REAL, 'agentv-2026-02/composite--dataset.yaml'))
  const evaluators = cases[3]?.execution?.evaluators as { evaluators: { name: string }[] }[]
  assert.deepEqual(evaluators[0]?.evaluators.map((e) => e.name), ['content_quality', 'safety'])
  assert.deepEqual(cases[0]?.extras?.evalcase?.$file, { dataset: 'composite-evaluator-examples', execution: { target: 'default' }, $list: 'evalcases' })
})

test('real 4.42.4 assert: criteria and assertions', async () => {
  const cases = await readCases(join(REAL, 'agentv-4.42.4/assert--dataset.eval.yaml'))
  assert.deepEqual(cases.map((c) => c.id), ['contains-check', 'json-response', 'regex-check', 'equals-check'])
  assert.equal(cases[0]?.expected_outcome, 'Response must contain the word Hello')
  assert.equal(cases[0]?.extras?.evalcase?.$form, undefined) // criteria is the default under tests:
  assert.deepEqual(cases[3]?.extras?.evalcase?.assertions, [{ type: 'equals', value: '4', required: true }])
  assert.deepEqual(cases[0]?.extras?.evalcase?.$file, { name: 'assert-demo', description: 'Demonstrates eval spec v2 assert features', version: '1.0', tags: ['demo', 'assert'], execution: { target: 'llm' }, $list: 'tests' })
})

test('real 4.42.4 external datasets: file:// includes read in place, in order', async () => {
  const cases = await readCases(join(REAL, 'agentv-4.42.4/external-datasets/dataset.eval.yaml'))
  assert.deepEqual(cases.map((c) => c.id), ['inline-test', 'accuracy-basic-math', 'accuracy-capital', 'regression-greeting', 'regression-farewell'])
  assert.deepEqual(cases[2]?.input, [{ role: 'user', content: 'What is the capital of France?' }])
  assert.equal(cases[4]?.expected_outcome, 'The agent should respond with a farewell')
  assert.equal(evalcase.include?.('file://cases/accuracy.yaml'), 'cases/accuracy.yaml')
  assert.equal(evalcase.include?.({ id: 'x' }), undefined)
})

// --- 2. within-format round trip ---------------------------------------------------------------

/** Files that do not write back as they are, with the reason and what is written instead. */
const WRITTEN_DIFFERENTLY: Record<string, (source: unknown) => unknown> = {}

for (const file of [...caseFiles(REAL), ...caseFiles(OWN)]) {
  const name = file.startsWith(REAL) ? `real ${rel(file, REAL)}` : `own ${rel(file, OWN)}`
  test(`round trip ${name}: written back, the same JSON values`, async () => {
    const container = containerOf(file)
    const cases = await readCases(file)
    const { text } = await writeCases(cases, container)
    const differently = file.startsWith(REAL) ? WRITTEN_DIFFERENTLY[rel(file, REAL)] : undefined
    const expected = differently ? differently(sourceDocument(file)) : sourceDocument(file)
    assert.deepEqual(writtenDocument(text, container), expected)
    const sidecar = evalcase.sidecar?.(file, container)
    if (sidecar && existsSync(sidecar)) {
      const { $list, ...header } = evalcase.layout(container, cases, encodeContext(container, 0)).header ?? {}
      assert.deepEqual(header, parseYaml(readFileSync(sidecar, 'utf8')))
    }
  })
}

// --- 3. own fixtures against their expected canonical cases --------------------------------------

for (const file of caseFiles(OWN)) {
  test(`fixture ${rel(file, OWN)} decodes to ${rel(file, OWN)}.cases.json`, async () => {
    const expected = JSON.parse(readFileSync(`${file}.cases.json`, 'utf8')) as unknown
    assert.deepEqual(await readCases(file), expected)
  })
}

// --- writing cases from other formats --------------------------------------------------------------

/** `cases` as read back from a written file: the first case carries the file's keys (the list key among them), unless they are the default's. */
function withFile(cases: EvalCase[], $file?: JsonObject): EvalCase[] {
  return cases.map((c, i) => (i === 0 && $file ? { ...c, extras: { evalcase: { $file } } } : c))
}

const foreign: EvalCase[] = [
  { id: 'q1', input: [{ role: 'user', content: 'What is 2+2?' }], expected_output: [{ role: 'assistant', content: '4' }], expected_outcome: 'Adds', rubrics: [{ expected_outcome: 'Is a number' }, { id: 'r2', expected_outcome: 'Is exact', weight: 2 }] },
  { id: 'q2', scenario: 'A user asks for a refund', expected_outcome: 'The refund is granted', turns: [{ role: 'user', content: 'Refund please' }] },
]

/** `foreign` as AgentV 4.42.4 validates and runs it: `tests:`, `criteria`, a rubric's `outcome`, and the schema that names the file an eval file. */
const foreignInAgentv4 = {
  $schema: 'agentv-eval-v2',
  tests: [
    { id: 'q1', criteria: 'Adds', input: 'What is 2+2?', expected_output: '4', rubrics: ['Is a number', { id: 'r2', outcome: 'Is exact', weight: 2 }] },
    { id: 'q2', criteria: 'The refund is granted', input: 'Refund please', metadata: { evalferry: { input: null, scenario: 'A user asks for a refund', turns: [{ role: 'user', content: 'Refund please' }] } } },
  ],
}

// The default was the seed's `evalcases:` dialect, which `agentv validate` 4.42.4 refuses ("Missing or invalid 'tests' field").
test('cases from other formats are written as AgentV 4 validates them: tests, criteria, rubric outcome and $schema', async () => {
  const { text, output } = await writeCases(foreign, 'yaml')
  assert.deepEqual(parseYaml(text), foreignInAgentv4)
  assert.deepEqual(await readCases(output), withFile(foreign))
})

test('--dialect evalcase writes the seed dialect: evalcases, shorthands and expected_outcome', async () => {
  const { text, output } = await writeCases(foreign, 'yaml', 'evalcase')
  assert.deepEqual(parseYaml(text), {
    evalcases: [
      { id: 'q1', expected_outcome: 'Adds', input: 'What is 2+2?', expected_output: '4', rubrics: ['Is a number', { id: 'r2', expected_outcome: 'Is exact', weight: 2 }] },
      { id: 'q2', expected_outcome: 'The refund is granted', input: 'Refund please', metadata: { evalferry: { input: null, scenario: 'A user asks for a refund', turns: [{ role: 'user', content: 'Refund please' }] } } },
    ],
  })
  assert.deepEqual(await readCases(output), withFile(foreign, { $list: 'evalcases' }))
})

test("a rubric's text written as expected_outcome, which AgentV 4 does not read, is warned of once per case; not in AgentV's dialect", async () => {
  const warned = async (dialect?: 'agentv' | 'evalcase') => {
    const output = join(scratch, `rubrics-${dialect ?? 'default'}.yaml`)
    const report = await write(foreign, output, { to: 'evalcase', ...(dialect ? { dialect } : {}) })
    return report.warnings.filter((w) => w.location.field === 'rubrics').map((w) => [w.message, w.location.record])
  }
  assert.deepEqual(await warned('evalcase'), [["a rubric's text is written as `expected_outcome`, as the evalcase format spells it, which AgentV 4 does not read (it reads `outcome`); --dialect agentv writes `outcome`", 0]])
  assert.deepEqual(await warned('agentv'), [])
  assert.deepEqual(await warned(), [])
})

test('cases from other formats with --dialect agentv: the default, tests, criteria and rubric outcome', async () => {
  const { text, output } = await writeCases(foreign, 'yaml', 'agentv')
  assert.deepEqual(parseYaml(text), foreignInAgentv4)
  assert.deepEqual(await readCases(output), withFile(foreign))
})

test('--dialect agentv writes input for input_messages, which AgentV 4 no longer reads, and criteria for expected_outcome; the default dialect keeps them and warns', async () => {
  const cases = await readCases(join(REAL, 'agentv-2026-02/basic-jsonl--dataset.jsonl'))
  const record = evalcase.encode(cases[0]!, encodeContext('yaml', 0, 'agentv'))
  assert.ok('input' in record && !('input_messages' in record))
  // The JSON Lines file spelled `expected_outcome`, which AgentV 4 reads only with a deprecation warning.
  assert.equal(cases[0]?.extras?.evalcase?.$form && (cases[0].extras.evalcase.$form as JsonObject).expected_outcome, 'expected_outcome')
  assert.ok('criteria' in record && !('expected_outcome' in record))
  assert.ok('expected_output' in record && !('expected_messages' in record))
  // The default dialect writes the source's spelling, and says what AgentV 4 does with it.
  const warnings: [string, string | undefined][] = []
  const kept = evalcase.encode(cases[0]!, { ...encodeContext('yaml', 0), warn: (message, field) => warnings.push([message, field]) })
  assert.ok('input_messages' in kept && 'expected_messages' in kept)
  assert.deepEqual(warnings, [
    ['written as the source spelled it, `input_messages`, which AgentV 4 no longer reads (it skips a case without `input`); --dialect agentv writes `input`', 'input_messages'],
    ['written as the source spelled it, `expected_messages`, which AgentV 4 no longer reads (the case has no expected output there); --dialect agentv writes `expected_output`', 'expected_messages'],
  ])
})

/** Every grader type, aggregator type and `evaluator` in a written document, outside what the check carried. */
function graderNames(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) graderNames(item, out)
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === 'evalferry') continue
      if ((key === 'type' || key === 'evaluator') && typeof item === 'string') out.push(item)
      else graderNames(item, out)
    }
  }
  return out
}

test("AgentV's first grader names (llm_judge, code_judge), which AgentV 4 refuses, are written as it names them in its dialect, and come back from the carry", async () => {
  const source = join(REAL, 'agentv-2026-02/composite--dataset.yaml')
  const output = join(scratch, 'composite-agentv.yaml')
  const report = await convert({ input: source, output, to: 'evalcase', dialect: 'agentv' })
  const written = parseYaml(readFileSync(output, 'utf8')) as { tests: JsonObject[] }
  const names = graderNames(written.tests)
  assert.deepEqual([...new Set(names)].sort(), ['code-grader', 'composite', 'llm-grader', 'weighted_average'])
  assert.equal(names.filter((n) => n === 'llm-grader').length, 10)
  assert.equal(names.filter((n) => n === 'code-grader').length, 1)
  // The source's graders, nested in composites and as aggregators, all had the first names.
  const sourceNames = graderNames((parseYaml(readFileSync(source, 'utf8')) as { evalcases: unknown }).evalcases)
  assert.deepEqual(names, sourceNames.map((n) => ({ llm_judge: 'llm-grader', code_judge: 'code-grader' })[n] ?? n))
  // Each case warns once, at the first grader renamed, on the source's line.
  assert.deepEqual(
    report.warnings.filter((w) => w.message.startsWith('the grader')).map((w) => [w.location.line, w.location.field, w.message]),
    [
      [10, 'execution.evaluators[0].evaluators[0].type', 'the grader `llm_judge` is written `llm-grader`, the name AgentV 4 reads (it refuses the earlier one)'],
      [38, 'execution.evaluators[0].aggregator.type', 'the grader `code_judge` is written `code-grader`, the name AgentV 4 reads (it refuses the earlier one)'],
      [64, 'execution.evaluators[0].aggregator.type', 'the grader `llm_judge` is written `llm-grader`, the name AgentV 4 reads (it refuses the earlier one)'],
      [91, 'execution.evaluators[0].evaluators[0].evaluators[0].type', 'the grader `llm_judge` is written `llm-grader`, the name AgentV 4 reads (it refuses the earlier one)'],
    ],
  )
  // Read back, the graders are the source's, first names and all.
  const sourceCases = await readCases(source)
  assert.deepEqual((await readCases(output)).map((c) => c.execution), sourceCases.map((c) => c.execution))
  assert.equal(sourceCases.length, 4)
  // The earlier dialect keeps the names, and says what AgentV 4 does with them.
  const kept = join(scratch, 'composite-evalcase.yaml')
  const keptReport = await convert({ input: source, output: kept, to: 'evalcase' })
  assert.deepEqual(graderNames((parseYaml(readFileSync(kept, 'utf8')) as { evalcases: unknown }).evalcases), sourceNames)
  assert.equal(keptReport.warnings.filter((w) => w.message === 'the grader `llm_judge` is written as the source named it, which AgentV 4 refuses (it reads `llm-grader`); --dialect agentv writes `llm-grader`').length, 3)
})

test("a file's evaluator: llm_judge, over which AgentV 4 refuses the whole file, is written llm-grader in its dialect; kept and warned of elsewhere", async () => {
  const dir = join(scratch, 'judge-sidecar')
  mkdirSync(dir)
  const input = join(dir, 'cases.jsonl')
  writeFileSync(input, readFileSync(join(REAL, 'agentv-2026-02/basic-jsonl--dataset.jsonl')))
  writeFileSync(join(dir, 'cases.yaml'), readFileSync(join(REAL, 'agentv-2026-02/basic-jsonl--dataset.yaml')))
  const output = join(dir, 'agentv.yaml')
  const report = await convert({ input, output, to: 'evalcase', dialect: 'agentv' })
  const written = parseYaml(readFileSync(output, 'utf8')) as JsonObject
  assert.equal(written.evaluator, 'llm-grader')
  assert.deepEqual(
    report.warnings.filter((w) => w.message.startsWith('the grader')).map((w) => w.location),
    [{ file: output, field: 'evaluator' }],
  )
  assert.deepEqual(await readCases(output), await readCases(input))
  // JSON Lines without --dialect keeps the sidecar's name, with the warning.
  const same = join(dir, 'same', 'cases.jsonl')
  const sameReport = await convert({ input, output: same, to: 'evalcase' })
  assert.equal((parseYaml(readFileSync(join(dir, 'same', 'cases.yaml'), 'utf8')) as JsonObject).evaluator, 'llm_judge')
  assert.deepEqual(
    sameReport.warnings.filter((w) => w.message.startsWith('the grader')).map((w) => w.location),
    [{ file: same, field: 'evaluator' }],
  )
})

test('graders AgentV 4 names already (llm-grader, code-grader) are written as they are, with no warning', async () => {
  const source = join(REAL, 'agentv-4.42.4/basic--dataset.eval.yaml')
  const output = join(scratch, 'basic-4.yaml')
  const report = await convert({ input: source, output, to: 'evalcase', dialect: 'agentv' })
  assert.deepEqual(report.warnings.filter((w) => w.message.startsWith('the grader')), [])
  const names = graderNames((parseYaml(readFileSync(output, 'utf8')) as { tests: unknown }).tests)
  assert.ok(names.includes('llm-grader') && names.includes('code-grader'))
  assert.deepEqual(await readCases(output), await readCases(source))
})

test('an image given as a URL, which AgentV reads only from a file and leaves out, is warned of at its block; a path is not', () => {
  const warned = (value: string, where: 'input' | 'expected_output' = 'input') => {
    const warnings: [string, string | undefined][] = []
    const message = { role: where === 'input' ? ('user' as const) : ('assistant' as const), content: [{ type: 'text' as const, value: 'Look' }, { type: 'image' as const, value }] }
    const hi = { role: 'user' as const, content: 'Hi' }
    const c: EvalCase = where === 'input' ? { id: 'i', input: [hi, message], expected_outcome: 'x' } : { id: 'i', input: [hi], expected_output: [message] }
    const record = evalcase.encode(c, { ...encodeContext('yaml', 0), warn: (m, f) => warnings.push([m, f]) }) as JsonObject
    assert.ok(JSON.stringify(record[where]).includes(JSON.stringify(value)))
    return warnings
  }
  assert.deepEqual(warned('https://example.com/cat.png'), [
    ['an image given as a URL (https://example.com/cat.png), which AgentV reads only from a file beside the dataset: it leaves the image out', 'input[1].content[1]'],
  ])
  assert.deepEqual(warned('data:image/png;base64,iVBORw0KGgo=', 'expected_output').map(([, f]) => f), ['expected_output[0].content[1]'])
  assert.deepEqual(warned('./images/dog.jpg'), [])
  assert.deepEqual(warned('C:\\images\\dog.jpg'), [])
})

test('tool calls: OpenAI arguments text kept exactly, AgentV runtime shape kept', () => {
  const c = evalcase.decode(
    {
      id: 't',
      input: [
        { role: 'assistant', content: '', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{"x": 1}' } }] },
        { role: 'assistant', content: '', tool_calls: [{ tool: 'g', input: { y: 2 }, output: 'ok' }] },
      ],
    },
    decodeContext(),
  ) as EvalCase
  assert.deepEqual(c.input?.[0]?.tool_calls?.[0], { id: 'a', type: 'function', name: 'f', arguments: { x: 1 }, extras: { evalcase: { $arguments_text: '{"x": 1}' } } })
  assert.deepEqual(c.input?.[1]?.tool_calls?.[0], { name: 'g', arguments: { y: 2 }, output: 'ok' })
  const back = evalcase.encode(c, encodeContext('yaml', 0)) as { input: { tool_calls: unknown[] }[] }
  assert.deepEqual(back.input[0]?.tool_calls[0], { id: 'a', type: 'function', function: { name: 'f', arguments: '{"x": 1}' } })
  assert.deepEqual(back.input[1]?.tool_calls[0], { tool: 'g', input: { y: 2 }, output: 'ok' })
})

test('sidecar and sniff', () => {
  assert.equal(evalcase.sidecar?.('data/x.jsonl', 'jsonl'), 'data/x.yaml')
  assert.equal(evalcase.sidecar?.('data/x.yaml', 'yaml'), undefined)
  assert.ok(evalcase.sniff({ container: 'yaml', records: [{ id: 'a', criteria: 'c', input: 'x' }], header: {}, fileName: 'a.yaml' }) >= 0.9)
  assert.ok(evalcase.sniff({ container: 'jsonl', records: [{ id: 'a', input_messages: [{ role: 'user', content: 'x' }] }], header: {}, fileName: 'a.jsonl' }) >= 0.9)
  assert.ok(evalcase.sniff({ container: 'yaml', records: [{ id: 'a', input: [{ role: 'user', content: 'x' }] }], header: { execution: {} }, fileName: 'a.yaml' }) >= 0.9)
  assert.equal(evalcase.sniff({ container: 'jsonl', records: [{ input: 'q', actual_output: 'a' }], header: {}, fileName: 'goldens.jsonl' }), 0)
  assert.equal(evalcase.sniff({ container: 'json', records: [{ id: 'a', criteria: 'c' }], header: {}, fileName: 'a.json' }), 0)
})

// --- 4. bad input ----------------------------------------------------------------------------------

const BAD: [string, unknown, string][] = [
  ['a case without id', { input: 'hi', criteria: 'c' }, 'id'],
  ['an empty id', { id: '', input: 'hi' }, 'id'],
  ['input a number', { id: 'a', input: 5 }, 'input'],
  ['input_messages a mapping', { id: 'a', input_messages: { role: 'user' } }, 'input_messages'],
  ['a message without role', { id: 'a', input: [{ role: 'system', content: 's' }, { content: 'hi' }] }, 'input[1].role'],
  ['an unknown role', { id: 'a', input: [{ role: 'human', content: 'hi' }] }, 'input[0].role'],
  ['content a number', { id: 'a', input: [{ role: 'user', content: 3 }] }, 'input[0].content'],
  ['an unknown block type', { id: 'a', input: [{ role: 'user', content: [{ type: 'text', value: 'x' }, { type: 'video', value: 'v.mp4' }] }] }, 'input[0].content[1].type'],
  ['a text block without value', { id: 'a', input: [{ role: 'user', content: [{ type: 'text' }] }] }, 'input[0].content[0].value'],
  ['a tool call without name', { id: 'a', input: [{ role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { arguments: '{}' } }] }] }, 'input[0].tool_calls[0].function.name'],
  ['an expected message without role', { id: 'a', input: 'q', expected_messages: [{ role: 'assistant', content: 'x' }, { content: 'y' }] }, 'expected_messages[1].role'],
  ['criteria a number', { id: 'a', input: 'q', criteria: 5 }, 'criteria'],
  ['metadata a string', { id: 'a', input: 'q', metadata: 'x' }, 'metadata'],
  ['a rubric weight as text', { id: 'a', input: 'q', rubrics: ['ok', { expected_outcome: 'x', weight: 'high' }] }, 'rubrics[1].weight'],
  ['a rubric without text', { id: 'a', input: 'q', rubrics: [{ id: 'r', weight: 1 }] }, 'rubrics[0].expected_outcome'],
]

for (const [what, record, field] of BAD) {
  test(`bad input: ${what} is an error at ${field}`, () => {
    assert.throws(
      () => evalcase.decode(record, decodeContext()),
      (error: unknown) => error instanceof DataError && error.code === 'E_FIELD' && error.location.field === field,
    )
  })
}

test('a duplicate id is an error naming the field id and the line', async () => {
  const file = join(scratch, 'dup.yaml')
  writeFileSync(file, 'evalcases:\n  - id: a\n    input: one\n  - id: b\n    input: two\n  - id: a\n    input: three\n')
  await assert.rejects(readCases(file), (error: unknown) => error instanceof DataError && error.code === 'E_DUPLICATE_ID' && error.location.field === 'id' && error.location.line === 6)
})

test('a duplicate id names where it was first used, in the file read or in a file it includes', async () => {
  const dir = join(scratch, 'dup-include')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'inc.jsonl'), '{"id": "b", "input": "two"}\n{"id": "c", "input": "inner"}\n')
  const main = join(dir, 'main.yaml')
  const duplicate = async (text: string): Promise<DataError> => {
    writeFileSync(main, text)
    let caught: unknown
    await readCases(main).catch((error: unknown) => (caught = error))
    assert.ok(caught instanceof DataError && caught.code === 'E_DUPLICATE_ID', String(caught))
    return caught
  }
  const later = await duplicate('tests:\n  - id: a\n    input: one\n  - file://inc.jsonl\n  - id: c\n    input: three\n')
  assert.equal(later.message, `duplicate id "c" (first used at ${join(dir, 'inc.jsonl')}:2)`)
  assert.equal(later.location.line, 5)
  const earlier = await duplicate('tests:\n  - id: a\n    input: one\n  - id: b\n    input: two\n  - file://inc.jsonl\n')
  assert.equal(earlier.message, `duplicate id "b" (first used at ${main}:4)`)
  assert.equal(earlier.location.file, join(dir, 'inc.jsonl'))
  assert.equal(earlier.location.line, 1)
})

test('a case without id is an error naming the field id and the line, through the pipeline', async () => {
  const file = join(scratch, 'noid.yaml')
  writeFileSync(file, 'tests:\n  - id: a\n    input: one\n  - criteria: c\n    input: two\n')
  await assert.rejects(readCases(file), (error: unknown) => error instanceof DataError && error.location.field === 'id' && error.location.line === 4)
})

test('a case written with criteria is written with input and expected_output, the spellings AgentV 4 reads beside it, and comes back as it was', async () => {
  const dir = mkdtempSync(join(scratch, 'criteria-'))
  const source = join(dir, 'old.yaml')
  writeFileSync(source, 'evalcases:\n  - id: a\n    expected_outcome: Says hello\n    input_messages:\n      - role: user\n        content: Hi\n    expected_messages:\n      - role: assistant\n        content: Hello\n')
  await convert({ input: source, output: join(dir, 'cases.jsonl'), from: 'evalcase', to: 'evalcase' })
  const line = JSON.parse(readFileSync(join(dir, 'cases.jsonl'), 'utf8')) as Record<string, unknown>
  assert.deepEqual(Object.keys(line).filter((k) => k !== 'metadata'), ['id', 'criteria', 'input', 'expected_output'])
  await convert({ input: join(dir, 'cases.jsonl'), output: join(dir, 'back.yaml'), from: 'evalcase', to: 'evalcase' })
  assert.deepEqual(parseYaml(readFileSync(join(dir, 'back.yaml'), 'utf8')), parseYaml(readFileSync(source, 'utf8')))
})

test('YAML merge keys (<<: *defaults) merge the anchored mapping into the case, its own keys first, as AgentV reads them; in metadata too', async () => {
  const dir = tempDir('evalferry-merge-')
  try {
    const file = join(dir, 'merge.yaml')
    writeFileSync(
      file,
      [
        'x-defaults: &defaults',
        '  expected_outcome: Answer politely',
        '  execution:',
        '    target: llm',
        'evalcases:',
        '  - <<: *defaults',
        '    id: m1',
        '    input: hello',
        '    metadata: &md {a: 1, b: 2}',
        '  - <<: *defaults',
        '    id: m2',
        '    input: bye',
        '    expected_outcome: Its own',
        '    metadata:',
        '      <<: *md',
        '      b: 3',
        '',
      ].join('\n'),
    )
    const cases = await readCases(file)
    assert.deepEqual(
      cases.map((c) => [c.id, c.expected_outcome, c.execution, c.metadata]),
      [
        ['m1', 'Answer politely', { target: 'llm' }, { a: 1, b: 2 }],
        ['m2', 'Its own', { target: 'llm' }, { a: 1, b: 3 }],
      ],
    )
    // No case holds the merge key itself.
    assert.ok(!JSON.stringify(cases).includes('<<'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('YAML merge keys in the sidecar of a JSON Lines dataset merge into its header, which the first case carries', async () => {
  const dir = tempDir('evalferry-merge-sidecar-')
  try {
    writeFileSync(
      join(dir, 'dataset.yaml'),
      ['x-run: &run', '  target: llm', '  timeout_seconds: 30', 'description: merged', 'execution:', '  <<: *run', '  timeout_seconds: 60', ''].join('\n'),
    )
    writeFileSync(join(dir, 'dataset.jsonl'), '{"id": "a", "input": "hello"}\n')
    const cases = await readCases(join(dir, 'dataset.jsonl'))
    assert.deepEqual(cases[0]?.extras?.evalcase?.$file, { 'x-run': { target: 'llm', timeout_seconds: 30 }, description: 'merged', execution: { target: 'llm', timeout_seconds: 60 } })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a key __proto__ in the sidecar of a JSON Lines dataset, plain or written with an escape, is refused at its line', async () => {
  const dir = tempDir('evalferry-proto-sidecar-')
  try {
    writeFileSync(join(dir, 'dataset.jsonl'), '{"id": "a", "input": "hello"}\n')
    for (const [sidecar, line] of [
      ['description: d\n__proto__:\n  admin: true\n', 2],
      ['description: d\nexecution:\n  "\\x5f_proto__":\n    admin: true\n', 3],
    ] as const) {
      writeFileSync(join(dir, 'dataset.yaml'), sidecar)
      await assert.rejects(readCases(join(dir, 'dataset.jsonl')), (error: DataError) => {
        assert.equal(error.code, 'E_FIELD')
        assert.deepEqual(error.location, { file: join(dir, 'dataset.yaml'), line, field: '__proto__' })
        return true
      })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a key that is a list, a mapping or binary data is refused at its line and field, and yaml prints no warning of its own', async () => {
  const dir = tempDir('evalferry-collection-key-')
  const warnings: string[] = []
  const onWarning = (warning: Error) => warnings.push(warning.message)
  process.on('warning', onWarning)
  try {
    const cases = [
      // A block sequence as a key, in a list inside a case.
      ['nested.yaml', 'evalcases:\n  - id: a\n    input: hi\n    metadata:\n      nested:\n        - ? - x\n            - y\n          : 1\n', 6, 'metadata.nested[0]'],
      // A flow sequence as an implicit key, in a flow mapping.
      ['flow.yaml', 'evalcases:\n  - id: b\n    input: hi\n    metadata: {[a, b]: c}\n', 4, 'metadata'],
      // A mapping as a key among the file's own keys.
      ['header.yaml', 'description: d\nexecution:\n  ? {a: 1}\n  : x\nevalcases:\n  - id: c\n    input: hi\n', 3, 'execution'],
      // Binary data (bytes) as a key.
      ['binary.yaml', 'evalcases:\n  - id: e\n    input: hi\n    metadata:\n      !!binary aGk=: 1\n', 5, 'metadata'],
      // A list as a key of the file, before the cases and after them.
      ['top.yaml', 'description: d\n? [a]\n: b\nevalcases:\n  - id: f\n    input: hi\n', 2, undefined],
      ['tail.yaml', 'description: d\nevalcases:\n  - id: g\n    input: hi\n? [z]\n: b\n', 5, undefined],
    ] as const
    for (const [name, text, line, field] of cases) {
      writeFileSync(join(dir, name), text)
      await assert.rejects(readCases(join(dir, name)), (error: DataError) => {
        assert.equal(error.code, 'E_FIELD', name)
        assert.equal(error.location.file, join(dir, name))
        assert.equal(error.location.line, line, name)
        assert.equal(error.location.field, field, name)
        assert.match(error.message, /a key that is a list, a mapping or binary data \(.+\) cannot be kept/)
        return true
      })
    }
    // The sidecar of a JSON Lines dataset, whose top-level key is a list.
    writeFileSync(join(dir, 'dataset.jsonl'), '{"id": "a", "input": "hello"}\n')
    writeFileSync(join(dir, 'dataset.yaml'), 'description: d\n? [a]\n: b\n')
    await assert.rejects(readCases(join(dir, 'dataset.jsonl')), (error: DataError) => {
      assert.deepEqual([error.code, error.location], ['E_FIELD', { file: join(dir, 'dataset.yaml'), line: 2 }])
      return true
    })
    // A `?` key that is text reads as the text; one with no value, as a key whose value is null.
    writeFileSync(join(dir, 'scalar.yaml'), 'evalcases:\n  - id: d\n    input: hi\n    metadata:\n      ? long key\n      : v\n')
    assert.deepEqual((await readCases(join(dir, 'scalar.yaml')))[0]!.metadata, { 'long key': 'v' })
    writeFileSync(join(dir, 'no-value.yaml'), 'description: d\n? version\nevalcases:\n  - id: h\n    input: hi\n')
    assert.deepEqual((await readCases(join(dir, 'no-value.yaml')))[0]!.extras?.evalcase?.$file, { description: 'd', version: null, $list: 'evalcases' })
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(warnings, [])
  } finally {
    process.off('warning', onWarning)
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a key written empty (note:, metadata:, expected_output: null) is read, written back as it was, and carried elsewhere as the extra it is', async () => {
  const dir = tempDir('evalferry-evalcase-null-')
  try {
    const input = join(dir, 'nulls.yaml')
    writeFileSync(input, 'evalcases:\n  - id: a\n    input: hi\n    expected_outcome: says hello\n    note:\n    metadata:\n    expected_output: null\n')
    const [c] = await readCases(input)
    assert.equal(c!.expected_output, undefined)
    assert.equal(c!.metadata, undefined)
    assert.deepEqual(c!.extras?.evalcase, { note: null, metadata: null, expected_output: null, $file: { $list: 'evalcases' } })

    // DeepEval gets no expected output (null, not the text "null"); the empty keys travel in the carry, and the dialect (`evalcases:`) with the file's keys.
    const goldens = join(dir, 'goldens.json')
    const report = await convert({ input, output: goldens, from: 'evalcase', to: 'deepeval' })
    assert.deepEqual(report.carried, { id: 1, expected_outcome: 1, 'extras.evalcase.note': 1, 'extras.evalcase.metadata': 1, 'extras.evalcase.expected_output': 1, 'extras.evalcase.$file': 1 })
    const [golden] = JSON.parse(readFileSync(goldens, 'utf8'))
    assert.equal(golden.expected_output, null)

    const back = join(dir, 'back.yaml')
    await convert({ input: goldens, output: back, from: 'deepeval', to: 'evalcase' })
    assert.deepEqual(parseYaml(readFileSync(back, 'utf8')), parseYaml(readFileSync(input, 'utf8')))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("a source's AgentV 4 deprecation (`expected_outcome` for `criteria`) is told when the cases are read for evalcase or validated, not when they go to another format", async () => {
  const dir = tempDir('evalferry-lint-')
  const input = join(REAL, 'agentv-2026-02', 'basic-jsonl--dataset.jsonl')
  const lint = (report: { warnings: { message: string }[] }): number => report.warnings.filter((w) => /deprecated spelling of `criteria`/.test(w.message)).length
  const cases = readFileSync(input, 'utf8').split('\n').filter((l) => l.includes('"expected_outcome"')).length
  assert.ok(cases > 0)
  assert.equal(lint(await convert({ input, output: join(dir, 'same.jsonl'), to: 'evalcase' })), cases)
  assert.equal(lint(await convert({ input, output: join(dir, 'other.json'), to: 'deepeval' })), 0)
  const { newReport } = await import('../../src/report.ts')
  const report = newReport()
  for await (const _ of read(input, { report })) void _
  assert.equal(lint(report), cases)
})

test("written as JSON Lines, what AgentV's JSON Lines loader does not apply is warned of: sidecar keys other than its four, a case graded by `assertions` alone", async () => {
  const dir = tempDir('evalferry-jsonl-agentv-')
  const source = join(dir, 'suite.yaml')
  writeFileSync(
    source,
    [
      'description: smoke',
      'input: You are terse.',
      'assertions:',
      '  - type: contains',
      '    value: hi',
      'tests:',
      '  - id: graded',
      '    input: Say hi',
      '    criteria: says hi',
      '  - id: asserted',
      '    input: Say hello',
      '    assertions:',
      '      - type: contains',
      '        value: hello',
      '',
    ].join('\n'),
  )
  const output = join(dir, 'suite-out.jsonl')
  const report = await convert({ input: source, output, to: 'evalcase' })
  const sidecar = join(dir, 'suite-out.yaml')
  assert.deepEqual(
    report.warnings.filter((w) => w.location.file === sidecar).map((w) => w.location.field),
    ['input', 'assertions'],
  )
  assert.ok(report.warnings.some((w) => w.location.field === 'assertions' && /JSON Lines loader does not count: it skips the case/.test(w.message) && w.location.line !== undefined))
  // The keys are kept: read back, the cases are those of the YAML file.
  const back: EvalCase[] = []
  for await (const c of read(output)) back.push(c)
  const direct: EvalCase[] = []
  for await (const c of read(source)) direct.push(c)
  assert.deepEqual(back.map((c) => c.id), direct.map((c) => c.id))
  // YAML applies them all: no such warning.
  const yaml = await convert({ input: source, output: join(dir, 'suite-out.yaml.d', 'suite.yaml'), to: 'evalcase' })
  assert.ok(!yaml.warnings.some((w) => /JSON Lines/.test(w.message)), JSON.stringify(yaml.warnings))
})

test("a file block's relative path that names a file beside the source and none beside the output is warned of, left as it was", async () => {
  const dir = tempDir('evalferry-relative-')
  mkdirSync(join(dir, 'src'))
  mkdirSync(join(dir, 'dst'))
  writeFileSync(join(dir, 'src', 'snippet.md'), 'hi\n')
  const source = join(dir, 'src', 'cases.yaml')
  const blocks = ['./snippet.md', 'missing.md', '/abs/x.md', 'https://example.com/a.md']
  writeFileSync(source, `tests:\n  - id: a\n    input:\n      - role: user\n        content:\n${blocks.map((v) => `          - type: file\n            value: ${v}\n`).join('')}    criteria: c\n`)
  const moved = await convert({ input: source, output: join(dir, 'dst', 'cases.yaml'), to: 'evalcase' })
  assert.deepEqual(moved.warnings.map((w) => [w.location.line, w.location.field]), [[2, 'input[0].content[0].value']])
  assert.match(moved.warnings[0]!.message, /\.\/snippet\.md names a file beside the source .* and none beside the output/)
  const doc = parseYaml(readFileSync(join(dir, 'dst', 'cases.yaml'), 'utf8')) as { tests: { input: { content: { value: string }[] }[] }[] }
  assert.deepEqual(doc.tests[0]!.input[0]!.content.map((b) => b.value), blocks)
  // Beside the source, or where the file is beside the output too, nothing is said.
  assert.deepEqual((await convert({ input: source, output: join(dir, 'src', 'again.yaml'), to: 'evalcase' })).warnings, [])
  // Nor in a folder below the source's, where AgentV finds it by looking in the folders above.
  mkdirSync(join(dir, 'src', 'below'))
  assert.deepEqual((await convert({ input: source, output: join(dir, 'src', 'below', 'cases.yaml'), to: 'evalcase' })).warnings, [])
  writeFileSync(join(dir, 'dst', 'snippet.md'), 'hi\n')
  assert.deepEqual((await convert({ input: source, output: join(dir, 'dst', 'again.yaml'), to: 'evalcase' })).warnings, [])
})

test("an included file's file blocks are looked for beside the included file, its including file's beside that one", async () => {
  const dir = tempDir('evalferry-relative-include-')
  mkdirSync(join(dir, 'src', 'sub'), { recursive: true })
  mkdirSync(join(dir, 'dst'))
  writeFileSync(join(dir, 'src', 'a.md'), 'a\n')
  writeFileSync(join(dir, 'src', 'sub', 'b.md'), 'b\n')
  const block = (id: string, value: string) => `  - id: ${id}\n    input:\n      - role: user\n        content:\n          - type: file\n            value: ${value}\n    criteria: c\n`
  writeFileSync(join(dir, 'src', 'sub', 'more.yaml'), `tests:\n${block('b', './b.md')}`)
  const source = join(dir, 'src', 'cases.yaml')
  writeFileSync(source, `tests:\n${block('a', './a.md')}  - file://sub/more.yaml\n${block('c', './a.md')}`)
  const report = await convert({ input: source, output: join(dir, 'dst', 'cases.yaml'), to: 'evalcase' })
  const moved = report.warnings.filter((w) => /names a file beside the source/.test(w.message))
  assert.deepEqual(
    moved.map((w) => [w.location.file, w.location.line]),
    [
      [source, 2],
      [join(dir, 'src', 'sub', 'more.yaml'), 2],
      [source, 10],
    ],
  )
  assert.ok(moved[1]!.message.includes(`beside the source (${join(dir, 'src', 'sub')})`), moved[1]!.message)
})

// --- AgentV 4's `tests: ./dataset.jsonl` -----------------------------------------------------------

const FIELD_SUITE = resolve(here, '../../../shared/fixtures/real/field/agentv-4.42.4/basic-jsonl/dataset.eval.yaml')

/** The records of a JSON Lines file. */
const jsonLines = (file: string): unknown[] => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown)

test("AgentV 4's tests: ./dataset.jsonl reads the cases of that file, the suite's name, description and execution on the first", async () => {
  const cases = await readCases(FIELD_SUITE)
  assert.deepEqual(cases.map((c) => c.id), ['code-review-javascript', 'code-gen-python', 'feature-proposal-brainstorm', 'multiturn-debug-session', 'shorthand-string-example', 'shorthand-structured-output', 'shorthand-array-syntax'])
  assert.deepEqual(cases[0]?.extras?.evalcase?.$file, {
    description: 'JSONL version of the basic example - demonstrates file references, multi-turn, and per-case overrides',
    name: 'basic-jsonl',
    execution: { target: 'llm' },
    $list: 'tests',
    $cases: './dataset.jsonl',
  })
  assert.equal(cases[1]?.execution?.target, 'azure-llm')
  assert.equal(cases[4]?.expected_outcome, 'Assistant correctly answers the math question')
})

test('the suite and its JSON Lines file are written back as they were, from evalcase and through another format; never onto the input', async () => {
  const dir = tempDir('evalferry-tests-path-')
  try {
    const source = jsonLines(join(dirname(FIELD_SUITE), 'dataset.jsonl'))
    const suite = join(dir, 'direct', 'dataset.eval.yaml')
    const report = await convert({ input: FIELD_SUITE, output: suite, to: 'evalcase' })
    // The file named in place of the list is kept: no warning that an include is not.
    assert.deepEqual(report.warnings.map((w) => w.message).filter((m) => /include/.test(m)), [])
    assert.deepEqual(parseYaml(readFileSync(suite, 'utf8')), parseYaml(readFileSync(FIELD_SUITE, 'utf8')))
    assert.deepEqual(jsonLines(join(dir, 'direct', 'dataset.jsonl')), source)

    const goldens = join(dir, 'goldens.json')
    await convert({ input: FIELD_SUITE, output: goldens, to: 'deepeval' })
    const back = join(dir, 'back', 'dataset.eval.yaml')
    await convert({ input: goldens, output: back, to: 'evalcase' })
    assert.deepEqual(parseYaml(readFileSync(back, 'utf8')), parseYaml(readFileSync(FIELD_SUITE, 'utf8')))
    assert.deepEqual(jsonLines(join(dir, 'back', 'dataset.jsonl')), source)

    // Written beside the input, the cases would overwrite the file it reads them from.
    const copy = join(dir, 'copy')
    mkdirSync(copy)
    for (const name of ['dataset.eval.yaml', 'dataset.jsonl']) writeFileSync(join(copy, name), readFileSync(join(dirname(FIELD_SUITE), name)))
    await assert.rejects(convert({ input: join(copy, 'dataset.eval.yaml'), output: join(copy, 'again.eval.yaml'), to: 'evalcase' }), /would write its cases into .*dataset\.jsonl, which holds the cases of the input/)
    assert.deepEqual(jsonLines(join(copy, 'dataset.jsonl')), source)
    assert.equal(existsSync(join(copy, 'again.eval.yaml')), false)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("a suite's `input:`, which AgentV sends before every test's input, is warned of once when the cases go to another format: carried with the file's keys, not put into each input", async () => {
  const dir = tempDir('evalferry-suite-input-')
  const source = join(dir, 'support.eval.yaml')
  writeFileSync(
    source,
    [
      '$schema: agentv-eval-v2',
      'name: support',
      'input:',
      '  - role: system',
      '    content: You are a terse support agent.',
      'tests:',
      '  - id: refund',
      '    input: How do I get a refund?',
      '    criteria: Explains the refund steps',
      '  - id: hours',
      '    input: When are you open?',
      '    criteria: Gives the opening hours',
      '',
    ].join('\n'),
  )
  const told = (report: { warnings: { message: string }[] }) => report.warnings.filter((w) => w.message.startsWith("the suite's `input:`")).map((w) => w.message)
  const goldens = join(dir, 'goldens.json')
  const report = await convert({ input: source, output: goldens, to: 'deepeval' })
  assert.deepEqual(told(report), ["the suite's `input:`, which AgentV sends before every test's input, is carried as a key of the file (with the first case), not put into each case's input: deepeval will not send it"])
  const written = JSON.parse(readFileSync(goldens, 'utf8')) as { input: string }[]
  assert.deepEqual(written.map((g) => g.input), ['How do I get a refund?', 'When are you open?'])
  // Carried, the suite's input comes back as the suite's.
  const back = join(dir, 'back.eval.yaml')
  assert.deepEqual(told(await convert({ input: goldens, output: back, to: 'evalcase' })), [])
  assert.deepEqual(parseYaml(readFileSync(back, 'utf8')).input, [{ role: 'system', content: 'You are a terse support agent.' }])
  assert.deepEqual(told(await convert({ input: source, output: join(dir, 'same.eval.yaml'), to: 'evalcase' })), [])
  // A shard that starts past the first case is told too.
  const second = await runCli(['convert', source, '--to', 'deepeval', '-o', join(dir, 'shard.json'), '--shard', '2/2'])
  assert.equal(second.code, 0, second.stderr)
  assert.equal(second.stderr.split("the suite's `input:`").length - 1, 1, second.stderr)
})

test('a suite whose tests: names itself, and two files that include each other, are an error at the include, not a read without end; detect ends too', async () => {
  const dir = tempDir('evalferry-self-include-')
  const self = join(dir, 'suite.yaml')
  writeFileSync(self, 'name: s\ntests: ./suite.yaml\n')
  const a = join(dir, 'a.yaml')
  const b = join(dir, 'b.yaml')
  writeFileSync(a, 'tests:\n  - file://b.yaml\n')
  writeFileSync(b, 'tests:\n  - file://a.yaml\n')
  await assert.rejects(convert({ input: self, output: join(dir, 'self.json'), from: 'evalcase', to: 'deepeval' }), (error: DataError) => {
    assert.equal(error.message, 'the include names this file itself: its cases would be read without end')
    assert.deepEqual([error.location.file, error.location.line, error.location.field], [self, 2, './suite.yaml'])
    return true
  })
  await assert.rejects(convert({ input: a, output: join(dir, 'ab.json'), from: 'evalcase', to: 'deepeval' }), (error: DataError) => {
    assert.equal(error.message, 'the include names a file that includes this one: its cases would be read without end')
    assert.deepEqual([error.location.file, error.location.line, error.location.field], [b, 2, 'file://a.yaml'])
    return true
  })
  assert.equal(existsSync(join(dir, 'self.json')) || existsSync(join(dir, 'ab.json')), false)
  assert.equal((await detect(self)).format, 'evalcase')
})
