import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import evals, { EVALS_SCHEMA, validate } from '../../adapters/evals.ts'
import type { DecodeContext, EncodeContext } from '../../adapters/types.ts'
import { DataError } from '../../src/errors.ts'
import { convert } from '../../src/convert.ts'
import { write } from '../../src/write.ts'
import { newReport } from '../../src/report.ts'
import type { EvalCase } from '../../src/model.ts'
import { fileRecords, fixtures, plain, readAll, tempDir } from './fixture-helpers.ts'

const DIR = 'test/fixtures/evals'
const REAL = '/work/shared/fixtures/real/evals'
const REAL_SCHEMA = 'evals-eval-case-schema.json'

function decodeContext(): DecodeContext {
  return { file: 'x.jsonl', container: 'jsonl', header: {}, index: 0, state: {}, warn: () => {} }
}

function encodeContext(warnings: string[] = []): EncodeContext {
  return { container: 'jsonl', index: 0, warn: (message, field) => warnings.push(`${field}: ${message}`) }
}

for (const fixture of fixtures(DIR)) {
  test(`evals ${fixture.name} reads as its expected cases`, async () => {
    assert.deepEqual(plain(await readAll(fixture.file, { from: 'evals' })), fixture.expected)
  })

  test(`evals ${fixture.name} written back as evals gives the same records`, async () => {
    const out = join(tempDir(), fixture.name)
    await write(await readAll(fixture.file, { from: 'evals' }), out, { to: 'evals' })
    assert.deepEqual(fileRecords(out), fileRecords(fixture.file))
  })
}

const realDatasets = readdirSync(REAL).filter((name) => name !== REAL_SCHEMA)

test('the real fixtures hold a dataset besides the schema', () => {
  assert.deepEqual(realDatasets, ['evals-eval-case-example.json'])
})

for (const name of realDatasets) {
  test(`real ${name} reads, and written back gives the same records`, async () => {
    const file = join(REAL, name)
    const cases = await readAll(file, { from: 'evals' })
    const out = join(tempDir(), basename(name))
    await write(cases, out, { to: 'evals' })
    assert.deepEqual(fileRecords(out), fileRecords(file))
  })
}

test('the real example case: every field lands where it belongs', async () => {
  const [c, ...rest] = await readAll(join(REAL, 'evals-eval-case-example.json'), { from: 'evals' })
  assert.equal(rest.length, 0)
  assert.deepEqual(plain(c), {
    id: 'case_0042',
    input: [{ role: 'user', content: 'What is the refund window for a damaged item?' }],
    expected_output: [{ role: 'assistant', content: '30 days from delivery for damaged items.' }],
    context: [
      'Refund policy section 4.2: Damaged items may be returned within 30 days of delivery for a full refund.',
      'Refund policy section 4.3: Non-damaged returns are accepted within 14 days of delivery.',
    ],
    tags: ['policy', 'refunds'],
    metadata: {
      domain: 'customer-support',
      difficulty: 'easy',
      persona: 'first-time-buyer',
      source: 'https://example.com/help/refund-policy',
    },
    // The file is this one case, not a list of it.
    extras: { evals: { $file: { $single: true } } },
  })
})

test('the schema is the published one, kept as data with its $id', () => {
  const published = JSON.parse(readFileSync(join(REAL, REAL_SCHEMA), 'utf8')) as unknown
  assert.deepEqual(EVALS_SCHEMA, published)
  assert.equal(EVALS_SCHEMA.$id, 'https://raw.githubusercontent.com/api-evangelist/evals/refs/heads/main/json-schema/evals-eval-case-schema.json')
})

test('a record violating the schema is a data error naming the field path and line', async () => {
  const file = join(DIR, 'bad', 'extreme.jsonl')
  await assert.rejects(readAll(file, { from: 'evals' }), (error: unknown) => {
    assert.ok(error instanceof DataError)
    assert.equal(error.exitCode, 1)
    assert.deepEqual(error.location, { file, line: 2, field: 'metadata.difficulty' })
    assert.match(error.message, /expected one of "easy", "medium", "hard", got string "extreme"/)
    return true
  })
})

test('the validator names each violation by path', () => {
  assert.deepEqual(validate({ input: 3, context: ['a', 7], tags: 'x', metadata: { source: 'not a uri', difficulty: 'hard' } }), [
    { path: 'id', message: 'is missing' },
    { path: 'input', message: 'expected string, got number 3' },
    { path: 'context[1]', message: 'expected string, got number 7' },
    { path: 'metadata.source', message: 'expected a URI (scheme:...), got "not a uri"' },
    { path: 'tags', message: 'expected array, got string "x"' },
  ])
  assert.deepEqual(validate({ id: 'a', input: 'b', metadata: { source: 'urn:isbn:0451450523', license: 'MIT' } }), [])
  assert.throws(() => evals.decode({ id: 'a', input: 'b', expected_structured: 'text' }, decodeContext()), (e: unknown) => e instanceof DataError && e.location.field === 'expected_structured')
})

test('a foreign case whose metadata the schema refuses is written valid, warned about, and carried back whole', async () => {
  const dir = tempDir()
  const original: EvalCase[] = [
    {
      name: 'golden one',
      input: [{ role: 'user', content: 'Hard question?' }],
      expected_outcome: 'Says it does not know.',
      metadata: { difficulty: 'extreme', source: 'manual', domain: 'qa' },
    },
  ]
  const report = newReport('canonical', 'evals', [])
  await write(original, join(dir, 'out.jsonl'), { to: 'evals', report })
  const [record] = fileRecords(join(dir, 'out.jsonl')) as Record<string, unknown>[]
  assert.deepEqual(validate(record), [])
  assert.equal(record!.id, 'case-1')
  assert.deepEqual((record!.metadata as Record<string, unknown>).domain, 'qa')
  assert.equal((record!.metadata as Record<string, unknown>).difficulty, undefined)
  assert.deepEqual(
    report.warnings.map((w) => w.location.field),
    ['metadata.difficulty', 'metadata.source'],
  )
  // The id the schema required comes back marked generated, and the next writer drops it again.
  assert.deepEqual(plain(await readAll(join(dir, 'out.jsonl'), { from: 'evals' })), [{ ...original[0], id: 'case-1', generated: ['id'] }])
  await convert({ input: join(dir, 'out.jsonl'), output: join(dir, 'back.jsonl'), from: 'evals', to: 'langsmith' })
  const [example] = fileRecords(join(dir, 'back.jsonl')) as Record<string, unknown>[]
  assert.equal(example!.id, undefined)
  assert.deepEqual(example!.metadata, { difficulty: 'extreme', source: 'manual', domain: 'qa', evalferry: { name: 'golden one', expected_outcome: 'Says it does not know.' } })
})

test('conversations travel as input_structured.messages; input is the last user turn', () => {
  const c: EvalCase = {
    id: 'c',
    input: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Bye' },
    ],
    expected_output: [{ role: 'assistant', content: 'Goodbye' }],
    expected_tools: [{ name: 'end_chat', arguments: {} }],
  }
  const record = evals.encode(c, encodeContext())
  assert.deepEqual(record, {
    id: 'c',
    input: 'Bye',
    input_structured: {
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello!' },
        { role: 'user', content: 'Bye' },
      ],
    },
    expected: 'Goodbye',
    expected_structured: { tool_calls: [{ name: 'end_chat', arguments: {} }] },
  })
  assert.deepEqual(evals.decode(record, decodeContext()), c)
})

test('a single message under input_structured.messages is written back there, not folded into input', () => {
  const record = { id: 'one', input: 'Hello', input_structured: { messages: [{ role: 'user', content: 'Hello' }] } }
  const c = evals.decode(record, decodeContext()) as EvalCase
  assert.deepEqual(evals.encode(c, encodeContext()), record)
})

test('EvalCase JSON → LangSmith → EvalCase JSON gives the same records', async () => {
  for (const name of ['cases.jsonl', 'suite.json']) {
    const dir = tempDir()
    await convert({ input: join(DIR, name), output: join(dir, 'mid.jsonl'), from: 'evals', to: 'langsmith' })
    await convert({ input: join(dir, 'mid.jsonl'), output: join(dir, name), from: 'langsmith', to: 'evals' })
    assert.deepEqual(fileRecords(join(dir, name)), fileRecords(join(DIR, name)), name)
  }
})

test('a single-object file reads as one case, marked as the whole file', async () => {
  const file = join(tempDir(), 'one.json')
  writeFileSync(file, JSON.stringify({ id: 'solo', input: 'Only me', tags: ['x'] }, null, 2))
  assert.deepEqual(plain(await readAll(file, { from: 'evals' })), [
    { id: 'solo', input: [{ role: 'user', content: 'Only me' }], tags: ['x'], extras: { evals: { $file: { $single: true } } } },
  ])
})

test('the real single-case file is one object again as EvalCase JSON, directly or through every other format', async () => {
  const source = join(REAL, 'evals-eval-case-example.json')
  const dir = tempDir()
  const again = join(dir, 'again.json')
  const report = await convert({ input: source, output: again, to: 'evals' })
  assert.deepEqual(JSON.parse(readFileSync(again, 'utf8')), JSON.parse(readFileSync(source, 'utf8')))
  assert.deepEqual([report.carried, report.dropped], [{}, {}])
  for (const [to, output] of [['hf', 'rows.parquet'], ['evals', 'cases.jsonl'], ['deepeval', 'goldens.json'], ['evalcase', 'cases.yaml']] as const) {
    await convert({ input: source, output: join(dir, output), to })
    await convert({ input: join(dir, output), output: join(dir, `${output}.json`), from: to, to: 'evals' })
    assert.deepEqual(JSON.parse(readFileSync(join(dir, `${output}.json`), 'utf8')), JSON.parse(readFileSync(source, 'utf8')), to)
  }

  // A list of one stays a list; a DeepEval file of one object becomes the list DeepEval loads.
  const listOfOne = join(dir, 'list.json')
  writeFileSync(listOfOne, `[${readFileSync(source, 'utf8')}]`)
  await convert({ input: listOfOne, output: join(dir, 'list-again.json'), to: 'evals' })
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'list-again.json'), 'utf8')), JSON.parse(readFileSync(listOfOne, 'utf8')))
  const golden = join(dir, 'golden.json')
  writeFileSync(golden, '{"input": "Hi", "expected_output": "Hello"}')
  await convert({ input: golden, output: join(dir, 'goldens.json'), from: 'deepeval', to: 'deepeval' })
  const goldens = JSON.parse(readFileSync(join(dir, 'goldens.json'), 'utf8')) as { input: string; expected_output: string }[]
  assert.deepEqual(goldens.map((g) => [g.input, g.expected_output]), [['Hi', 'Hello']])
})

test('sniff: id, string input and evals keys, no inputs', () => {
  const sample = (records: unknown[], container: 'json' | 'jsonl' | 'csv' = 'json') => ({ container, records, header: {}, fileName: 'x' })
  assert.equal(evals.sniff(sample([{ id: 'a', input: 'q', expected: 'x' }])), 0.9)
  assert.equal(evals.sniff(sample([{ id: 'a', input: 'q', tags: ['t'] }])), 0.75)
  assert.equal(evals.sniff(sample([{ id: 'a', input: 'q' }])), 0.5)
  assert.equal(evals.sniff(sample([{ id: 'a', input: 'q', expected_outcome: 'x' }], 'jsonl')), 0.2)
  assert.equal(evals.sniff(sample([{ id: 'a', input: 'q', inputs: {} }])), 0)
  assert.equal(evals.sniff(sample([{ id: 'a', input: 'q', expected: 'x' }], 'csv')), 0)
})
