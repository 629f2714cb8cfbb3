import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import langsmith from '../../adapters/langsmith.ts'
import type { DecodeContext, EncodeContext } from '../../adapters/types.ts'
import { DataError, EvalferryError } from '../../src/errors.ts'
import { parseMapArgs } from '../../src/mapping.ts'
import { convert } from '../../src/convert.ts'
import { write } from '../../src/write.ts'
import type { EvalCase, JsonObject } from '../../src/model.ts'
import { fileRecords, fixtures, plain, readAll, tempDir } from './fixture-helpers.ts'
import { detect } from '../../src/detect.ts'
import { SHARED_FIXTURES } from '../helpers/cli.ts'

const DIR = 'test/fixtures/langsmith'
const PLAIN_TABLES = ['plain.csv', 'columns.csv']

function decodeContext(overrides: Partial<DecodeContext> = {}): DecodeContext {
  return { file: 'x.jsonl', container: 'jsonl', header: {}, index: 0, state: {}, warn: () => {}, ...overrides }
}

function encodeContext(container: EncodeContext['container'] = 'jsonl'): EncodeContext {
  return { container, index: 0, warn: () => {} }
}

for (const fixture of fixtures(DIR)) {
  test(`langsmith ${fixture.name} reads as its expected cases`, async () => {
    const cases = await readAll(fixture.file, { from: 'langsmith', ...fixture.options })
    assert.deepEqual(plain(cases), fixture.expected)
  })

  test(`langsmith ${fixture.name} written back as langsmith gives the same records`, async () => {
    const cases = await readAll(fixture.file, { from: 'langsmith', ...fixture.options })
    const out = join(tempDir(), fixture.name)
    await write(cases, out, { to: 'langsmith' })
    if (PLAIN_TABLES.includes(fixture.name)) {
      // A plain table is written as evalferry's own CSV, which reads back without the map.
      assert.deepEqual(plain(await readAll(out, { from: 'langsmith' })), fixture.expected)
    } else {
      assert.deepEqual(fileRecords(out), fileRecords(fixture.file))
    }
  })
}

test('every chat shape and kv file survives JSON Lines → CSV → JSON Lines', async () => {
  for (const name of ['kv.jsonl', 'chat.jsonl', 'chat-legacy.json', 'attachments.jsonl', 'llm.json', 'langchain-shapes.jsonl']) {
    const dir = tempDir()
    const source = join(DIR, name)
    await convert({ input: source, output: join(dir, 'x.csv'), from: 'langsmith', to: 'langsmith' })
    await convert({ input: join(dir, 'x.csv'), output: join(dir, name), from: 'langsmith', to: 'langsmith' })
    assert.deepEqual(fileRecords(join(dir, name)), fileRecords(source), name)
  }
})

test('own CSV names columns inputs.<key>, outputs.<key>, metadata.<key> and quotes strings that read as JSON', async () => {
  const dir = tempDir()
  await convert({ input: join(DIR, 'kv.jsonl'), output: join(dir, 'kv.csv'), from: 'langsmith', to: 'langsmith' })
  const text = readFileSync(join(dir, 'kv.csv'), 'utf8')
  const header = text.split('\n')[0]!
  assert.equal(
    header,
    'id,inputs.question,inputs.context,inputs.language,inputs.topic,outputs.answer,outputs.explanation,outputs,metadata.difficulty,metadata.dataset_split,metadata,dataset_id,created_at,modified_at,source_run_id',
  )
  const [first, second, third] = fileRecords(join(dir, 'kv.csv')) as Record<string, string>[]
  assert.equal(first!['inputs.question'], 'What is the capital of France?')
  assert.equal(first!['inputs.context'], '["France is a country in Europe.","Paris is its capital."]')
  assert.equal(first!['metadata.dataset_split'], '["test"]')
  assert.equal(first!.source_run_id, 'null')
  assert.equal(second!['outputs.answer'], '"5"') // the string "5", not the number
  assert.equal(third!.outputs, 'null')
  assert.equal(third!.metadata, '{}') // an empty object is kept, not dropped
})

test('a line whose inputs is not an object is a data error naming file, line and field', async () => {
  const file = join(DIR, 'bad', 'inputs-string.jsonl')
  await assert.rejects(readAll(file, { from: 'langsmith' }), (error: unknown) => {
    assert.ok(error instanceof DataError)
    assert.equal(error.code, 'E_FIELD')
    assert.equal(error.exitCode, 1)
    assert.deepEqual(error.location, { file, line: 2, field: 'inputs' })
    assert.match(error.describe(), /inputs-string\.jsonl:2: inputs: expected an object, got string "What is 2 \+ 2\?"/)
    return true
  })
})

test('a missing inputs and a non-object outputs are field errors too', () => {
  assert.throws(() => langsmith.decode({ outputs: { answer: 'x' } }, decodeContext()), (e: unknown) => e instanceof DataError && e.location.field === 'inputs')
  assert.throws(() => langsmith.decode({ inputs: {}, outputs: 'x' }, decodeContext()), (e: unknown) => e instanceof DataError && e.location.field === 'outputs')
  assert.throws(
    () => langsmith.decode({ inputs: { messages: [{ role: 'robot', content: 'x' }] } }, decodeContext()),
    (e: unknown) => e instanceof DataError && e.location.field === 'inputs.messages[0].role',
  )
})

test('cases from other formats: a conversation is written in the current chat shape', () => {
  const c: EvalCase = {
    id: 'conv-1',
    input: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Oslo?' },
    ],
    expected_output: [
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }] },
    ],
    split: 'test',
    metadata: { owner: 'qa' },
  }
  const record = langsmith.encode(c, encodeContext())
  // conv-1 is no UUID, which LangSmith's example ids are: it is left to the carry.
  assert.deepEqual(record, {
    inputs: { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Weather in Oslo?' }] },
    outputs: {
      message: {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }],
      },
    },
    metadata: { owner: 'qa', dataset_split: ['test'] },
  })
  const back = langsmith.decode(record, decodeContext()) as EvalCase
  assert.deepEqual(back.input, c.input)
  assert.equal(back.split, 'test')
  assert.deepEqual(back.metadata, { owner: 'qa' })
})

test('cases from other formats: text in, text out is a kv example with question and answer', () => {
  const record = langsmith.encode(
    { input: [{ role: 'user', content: 'Capital of Peru?' }], expected_output: [{ role: 'assistant', content: 'Lima' }], context: ['Peru is in South America.'], split: ['a', 'b'] },
    encodeContext(),
  )
  assert.deepEqual(record, {
    inputs: { question: 'Capital of Peru?', context: ['Peru is in South America.'] },
    outputs: { answer: 'Lima' },
    metadata: { dataset_split: ['a', 'b'] },
  })
})

test('legacy LangChain messages keep their type and data keys, tool calls included', async () => {
  const cases = await readAll(join(DIR, 'chat-legacy.json'), { from: 'langsmith' })
  const expected = cases[1]!.expected_output as EvalCase['input']
  assert.deepEqual(expected![0]!.tool_calls, [
    { name: 'convert_units', id: 'call_1', arguments: { value: 10, from: 'km', to: 'mi' }, extras: { langsmith: { type: 'tool_call' } } },
  ])
  const record = langsmith.encode(cases[1]!, encodeContext())
  const outputs = record.outputs as JsonObject
  assert.equal((outputs.output as JsonObject).type, 'ai')
  assert.deepEqual(((outputs.output as JsonObject).data as JsonObject).tool_calls, [
    { name: 'convert_units', args: { value: 10, from: 'km', to: 'mi' }, id: 'call_1', type: 'tool_call' },
  ])
})

test('tool call arguments keep their exact JSON text, but edited arguments are written afresh', async () => {
  const [first] = await readAll(join(DIR, 'chat.jsonl'), { from: 'langsmith' })
  const call = first!.input![2]!.tool_calls![0]!
  assert.deepEqual(call.arguments, { city: 'Paris', unit: 'celsius' })
  const written = langsmith.encode(first!, encodeContext())
  const fn = (((written.inputs as JsonObject).messages as JsonObject[])[2]!.tool_calls as JsonObject[])[0]!.function as JsonObject
  assert.equal(fn.arguments, '{"city": "Paris", "unit": "celsius"}')
  call.arguments = { city: 'Lyon' }
  const edited = langsmith.encode(first!, encodeContext())
  const fn2 = (((edited.inputs as JsonObject).messages as JsonObject[])[2]!.tool_calls as JsonObject[])[0]!.function as JsonObject
  assert.equal(fn2.arguments, '{"city":"Lyon"}')
})

test('attachments keep name, MIME type and presigned URL, untouched', async () => {
  const cases = await readAll(join(DIR, 'attachments.jsonl'), { from: 'langsmith' })
  assert.deepEqual(cases[0]!.extras?.langsmith?.attachments, {
    chart: { presigned_url: 'https://storage.example.com/attachments/chart.png?X-Amz-Signature=abc123&X-Amz-Expires=3600', mime_type: 'image/png' },
    report: { presigned_url: 'https://storage.example.com/attachments/report.pdf?X-Amz-Signature=def456&X-Amz-Expires=3600', mime_type: 'application/pdf' },
  })
  assert.equal(cases[1]!.split, 'train')
  assert.deepEqual(langsmith.encode(cases[1]!, encodeContext()).split, 'train')
})

test('a dotted --map path picks the input and expected keys of JSON examples', () => {
  const record = { inputs: { question: 'ignored as input', text: 'Use me' }, outputs: { answer: 'no', gold: 'yes' } }
  const c = langsmith.decode(record, decodeContext({ map: { input: 'inputs.text', expected_output: 'outputs.gold' } })) as EvalCase
  assert.deepEqual(c.input, [{ role: 'user', content: 'Use me' }])
  assert.deepEqual(c.expected_output, [{ role: 'assistant', content: 'yes' }])
  // The keys not taken are metadata, and go back to inputs and outputs.
  assert.deepEqual(c.metadata, { question: 'ignored as input', answer: 'no' })
  assert.deepEqual(langsmith.encode(c, encodeContext()), record)
})

test('the --map lines of plain.csv.map parse to upload_csv key lists', async () => {
  const map = parseMapArgs(readFileSync(join(DIR, 'plain.csv.map'), 'utf8').trim().split('\n'))
  assert.deepEqual(map, { inputs: ['question'], context: 'docs', outputs: ['answer'], ignore: ['row_hash'] })
  const expected = JSON.parse(readFileSync(join(DIR, 'plain.csv.cases.json'), 'utf8')) as unknown
  assert.deepEqual(plain(await readAll(join(DIR, 'plain.csv'), { from: 'langsmith', map })), expected)
})

test('a map naming a column the table lacks is a usage error naming the mapping and the columns, at the first row', async () => {
  const dir = tempDir()
  const file = join(dir, 't.csv')
  writeFileSync(file, 'q,a\nhello,world\n')
  await assert.rejects(readAll(file, { from: 'langsmith', map: { inputs: 'question' } }), (e: unknown) => {
    assert.ok(e instanceof EvalferryError)
    assert.deepEqual([e.code, e.exitCode, e.message], ['E_USAGE', 2, '--map inputs=question: the table has no column "question" (its columns: q, a)'])
    assert.deepEqual(e.location, { file, line: 2 })
    return true
  })
})

test('a row function given as the map makes the cases itself', async () => {
  const cases = await readAll(join(DIR, 'plain.csv'), {
    from: 'langsmith',
    map: (row) => ({ id: String(row.row_hash), input: [{ role: 'user', content: String(row.question) }] }),
  })
  assert.deepEqual(plain(cases.map((c) => c.id)), ['a1f3', 'b2e4'])
})

test('LangSmith → EvalCase JSON → LangSmith gives the same records', async () => {
  for (const name of ['kv.jsonl', 'chat.jsonl', 'chat-legacy.json', 'attachments.jsonl']) {
    const dir = tempDir()
    const source = join(DIR, name)
    const middle = join(dir, 'middle.jsonl')
    await convert({ input: source, output: middle, from: 'langsmith', to: 'evals' })
    await convert({ input: middle, output: join(dir, name), from: 'evals', to: 'langsmith' })
    assert.deepEqual(fileRecords(join(dir, name)), fileRecords(source), name)
  }
})

test('sniff: examples with inputs objects are LangSmith; own CSV columns too; plain tables are not', () => {
  const sample = (records: unknown[], container: 'json' | 'jsonl' | 'csv' = 'jsonl', columns?: string[]) => ({
    container,
    records,
    header: {},
    fileName: 'x',
    ...(columns ? { columns } : {}),
  })
  assert.equal(langsmith.sniff(sample([{ inputs: { messages: [] }, outputs: { message: {} } }])), 0.95)
  assert.equal(langsmith.sniff(sample([{ inputs: { q: 'x' }, dataset_id: 'd' }])), 0.95)
  assert.equal(langsmith.sniff(sample([{ inputs: { q: 'x' } }])), 0.8)
  assert.equal(langsmith.sniff(sample([{ id: 'x', input: 'hello', expected: 'y' }])), 0)
  assert.equal(langsmith.sniff(sample([], 'csv', ['id', 'inputs.question', 'outputs.answer'])), 0.9)
  assert.equal(langsmith.sniff(sample([], 'csv', ['question', 'answer'])), 0)
})

test('NaN and the infinities written by name to a file Python does not write are warned of, at the case and field; DeepEval files are not', async () => {
  const dir = tempDir()
  const source = join(dir, 'scores.jsonl')
  writeFileSync(source, '{"inputs": {"question": "q"}, "outputs": {"answer": "a"}}\n{"inputs": {"question": "r"}, "outputs": {"answer": "b", "scores": [1, NaN]}}\n')
  const ls = await convert({ input: source, output: join(dir, 'out.jsonl'), from: 'langsmith', to: 'langsmith' })
  assert.deepEqual(
    ls.warnings.map((w) => [w.location, /JSON\.parse .* refuse them/.test(w.message)]),
    [[{ file: source, line: 2, field: 'outputs.scores[1]' }, true]],
  )
  // The value is kept, by name, as Python's json writes it.
  assert.match(readFileSync(join(dir, 'out.jsonl'), 'utf8').split('\n')[1]!, /"scores":\[1,NaN\]/)
  const evals = await convert({ input: source, output: join(dir, 'out.json'), from: 'langsmith', to: 'evals' })
  assert.equal(evals.warnings.filter((w) => /refuse them/.test(w.message)).length, 1)
  const deepeval = await convert({ input: source, output: join(dir, 'goldens.json'), from: 'langsmith', to: 'deepeval' })
  assert.deepEqual(deepeval.warnings.filter((w) => /refuse them/.test(w.message)), [])
})

test('NaN, the infinities and strings that read as them keep their kind through LangSmith CSV, as in a DeepEval cell carried there', async () => {
  const dir = tempDir()
  const source = join(dir, 'special.jsonl')
  const text = '{"inputs": {"question": "q", "n": NaN, "s": "NaN", "inf": -Infinity, "t": "Infinity"}, "outputs": {"answer": "a"}}\n'
  writeFileSync(source, text)
  await convert({ input: source, output: join(dir, 'special.csv'), to: 'langsmith' })
  assert.equal(readFileSync(join(dir, 'special.csv'), 'utf8').split('\n')[1], 'q,NaN,"""NaN""",-Infinity,"""Infinity""",a')
  await convert({ input: join(dir, 'special.csv'), output: join(dir, 'back.jsonl'), to: 'langsmith' })
  assert.equal(readFileSync(join(dir, 'back.jsonl'), 'utf8'), text.replace(/": /g, '":').replace(/, "/g, ',"'))

  // A number Python reads as infinity, in a DeepEval cell, comes back as its text.
  writeFileSync(join(dir, 'goldens.csv'), 'input,additional_metadata\nq,"{""x"": 1e400}"\n')
  await convert({ input: join(dir, 'goldens.csv'), output: join(dir, 'examples.csv'), from: 'deepeval', to: 'langsmith' })
  await convert({ input: join(dir, 'examples.csv'), output: join(dir, 'goldens-back.csv'), from: 'langsmith', to: 'deepeval' })
  // DeepEval's CSV ends its rows in CRLF, as Python's csv module does.
  assert.equal(readFileSync(join(dir, 'goldens-back.csv'), 'utf8'), 'input,additional_metadata\r\nq,"{""x"": 1e400}"\r\n')
})

test('LangChain messages in each shape LangSmith holds read as chat messages: dumped flat, as dumpd constructors, and with human and ai roles', async () => {
  const cases = await readAll(join(DIR, 'langchain-shapes.jsonl'), { from: 'langsmith' })
  const turns = (messages: EvalCase['input']) => messages?.map((m) => [m.role, m.content, m.tool_calls?.map((t) => [t.name, t.arguments]) ?? null, m.tool_call_id ?? null])
  assert.deepEqual(cases.map((c) => turns(c.input)), [
    [['user', 'hi', null, null]],
    [['user', 'What is 2+2?', null, null]],
    [['user', 'hi', null, null]],
    [['user', 'Call the tool', null, null], ['assistant', '', [['lookup', { q: 'x' }]], null], ['tool', 'found', null, 'call_1']],
  ])
  assert.deepEqual(cases.map((c) => turns(c.expected_output as EvalCase['input'])), [[['assistant', 'hello', null, null]], [['assistant', '4', null, null]], [['assistant', 'hello', null, null]], [['assistant', 'done', null, null]]])
})

test('a LangChain message dumped flat is written back with its keys in their order', async () => {
  const dir = tempDir()
  const out = join(dir, 'flat.jsonl')
  await convert({ input: join(DIR, 'langchain-shapes.jsonl'), output: out, from: 'langsmith', to: 'langsmith' })
  const line = (file: string) => readFileSync(file, 'utf8').split('\n')[1]!
  assert.equal(JSON.stringify(JSON.parse(line(out))), JSON.stringify(JSON.parse(line(join(DIR, 'langchain-shapes.jsonl')))))
})

test('a message without a role names the field and says it has none', () => {
  assert.throws(
    () => langsmith.decode({ inputs: { messages: [{ content: 'hi' }] } }, decodeContext()),
    (error: DataError) => error.location.field === 'inputs.messages[0].role' && /got none$/.test(error.message),
  )
})

test('an id that is no UUID is carried, not written as the example id, which LangSmith refuses; a UUID is written', async () => {
  const dir = tempDir()
  const input = join(dir, 'cases.yaml')
  const uuid = '5b0e5f4e-2b1a-4c3d-8e9f-0a1b2c3d4e5f'
  writeFileSync(input, `evalcases:\n  - id: refund-policy\n    input: hi\n    expected_outcome: greets\n  - id: ${uuid}\n    input: bye\n    expected_outcome: leaves\n`)
  const output = join(dir, 'examples.jsonl')
  const report = await convert({ input, output, from: 'evalcase', to: 'langsmith' })
  assert.equal(report.carried.id, 1)
  const [first, second] = fileRecords(output) as JsonObject[]
  assert.equal(first!.id, undefined)
  assert.equal(((first!.metadata as JsonObject).evalferry as JsonObject).id, 'refund-policy')
  assert.equal(second!.id, uuid)
  const back = join(dir, 'back.yaml')
  await convert({ input: output, output: back, from: 'langsmith', to: 'evalcase' })
  assert.deepEqual((await readAll(back, { from: 'evalcase' })).map((c) => c.id), ['refund-policy', uuid])

  // A LangSmith file's own id that is no UUID (a hand-made file) is written back where it was.
  const handMade = join(dir, 'hand-made.jsonl')
  writeFileSync(handMade, '{"id": "q1", "inputs": {"question": "hi"}, "outputs": {"answer": "hello"}}\n')
  const again = join(dir, 'hand-made-out.jsonl')
  const same = await convert({ input: handMade, output: again, from: 'langsmith', to: 'langsmith' })
  assert.deepEqual(same.carried, {})
  assert.deepEqual(fileRecords(again), fileRecords(handMade))
})

test('a message type or class named as a property every object has (constructor, __proto__, toString) is an error at its field', async () => {
  const dir = tempDir()
  const messages: [unknown, string][] = [
    [{ type: 'constructor', data: { content: 'hi' } }, 'inputs.input[0].type'],
    [{ lc: 1, type: 'constructor', id: ['langchain', 'schema', 'messages', 'toString'], kwargs: { content: 'hi' } }, 'inputs.input[0].id'],
    [{ lc: 1, type: 'constructor', id: ['langchain', 'schema', 'messages', 'hasOwnPropertyChunk'], kwargs: { content: 'hi' } }, 'inputs.input[0].id'],
  ]
  for (const [i, [message, field]] of messages.entries()) {
    const file = join(dir, `names-${i}.jsonl`)
    writeFileSync(file, JSON.stringify({ inputs: { input: [message] }, outputs: { output: 'x' } }) + '\n')
    await assert.rejects(readAll(file, { from: 'langsmith' }), (error: unknown) => {
      assert.ok(error instanceof DataError, String(error))
      assert.deepEqual([error.code, error.location], ['E_FIELD', { file, line: 1, field }])
      return true
    })
  }
  // A flat object of type `__proto__` is no LangChain message: the inputs are kept as the data they are (metadata).
  const file = join(dir, 'proto-type.jsonl')
  const inputs = { input: [{ type: '__proto__', content: 'hi' }] }
  writeFileSync(file, JSON.stringify({ inputs, outputs: { output: 'x' } }) + '\n')
  const [c] = await readAll(file, { from: 'langsmith' })
  assert.deepEqual(c!.metadata, inputs)
  assert.deepEqual(c!.extras?.langsmith?.$form, { expected_key: 'output', input_keys: ['input'], metadata: 'moved' })
})

test("DeepEval's tool-call types (FUNCTION, MCP) are written as OpenAI's `function` in chat messages, and carried back", async () => {
  const dir = tempDir()
  const calls = (type: string): EvalCase => ({
    id: type,
    input: [
      { role: 'user', content: 'Cancel my plan' },
      { role: 'assistant', content: 'Done.', tool_calls: [{ name: 'cancel', type, arguments: { plan: 'pro' } }] },
    ],
  })
  const cases = [calls('FUNCTION'), calls('MCP'), calls('function')]
  const out = join(dir, 'tool-types.jsonl')
  await write(cases, out, { to: 'langsmith' })
  const written = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { inputs: { messages: { tool_calls?: { type: string }[] }[] } })
  assert.deepEqual(written.map((r) => r.inputs.messages[1]!.tool_calls!.map((t) => t.type)), [['function'], ['function'], ['function']])
  const back = await readAll(out, { from: 'langsmith' })
  assert.deepEqual(back.map((c) => (c.input![1]!.tool_calls![0]!.type)), ['FUNCTION', 'MCP', 'function'])
})

test('a LangSmith export wrapped as {name, examples} reads its examples, and keeps its name through every format and back', async () => {
  const source = join(SHARED_FIXTURES, 'field', 'langsmith', 'langchain-benchmarks__Web-QA-Dataset-Correct.json')
  const original = JSON.parse(readFileSync(source, 'utf8')) as { name: string; examples: JsonObject[] }
  const detected = await detect(source, { count: true })
  assert.deepEqual([detected.format, detected.container, detected.records], ['langsmith', 'json', 100])
  const cases = await readAll(source, { from: 'langsmith' })
  assert.equal(cases.length, 100)
  assert.deepEqual(cases[0]!.input, [{ role: 'user', content: (original.examples[0]!.inputs as JsonObject).input }])
  const dir = tempDir()
  for (const [to, extension] of [['langsmith', 'json'], ['langsmith', 'jsonl'], ['langsmith', 'csv'], ['deepeval', 'json'], ['deepeval', 'csv'], ['evalcase', 'yaml'], ['evals', 'jsonl'], ['hf', 'parquet'], ['csv', 'csv']] as const) {
    const there = join(dir, `web-qa-${to}.${extension}`)
    await convert({ input: source, output: there, to })
    const back = join(dir, `web-qa-${to}-${extension}.back.json`)
    await convert({ input: there, output: back, to: 'langsmith' })
    assert.deepEqual(JSON.parse(readFileSync(back, 'utf8')), original, `through ${to} ${extension}`)
  }
})

test('keys and columns as people write them (Question, Best Answer) are the well-known input and output, in a plain CSV and in examples', async () => {
  const dir = tempDir()
  const table = join(dir, 'truthful.csv')
  writeFileSync(table, 'Type,Question,Best Answer,Source\nAdversarial,What happens if you swallow a cherry pit?,It passes through,https://example.org/a\n')
  const [fromTable] = await readAll(table, { from: 'langsmith' })
  assert.deepEqual(fromTable!.input, [{ role: 'user', content: 'What happens if you swallow a cherry pit?' }])
  assert.deepEqual(fromTable!.expected_output, [{ role: 'assistant', content: 'It passes through' }])
  const examples = join(dir, 'truthful.jsonl')
  await convert({ input: table, output: examples, from: 'langsmith', to: 'langsmith' })
  // The keys stay as they were written, and nothing needs carrying to read them back.
  assert.deepEqual(fileRecords(examples), [{ inputs: { Question: 'What happens if you swallow a cherry pit?' }, outputs: { 'Best Answer': 'It passes through' }, metadata: { Type: 'Adversarial', Source: 'https://example.org/a' } }])
  assert.deepEqual(plain(await readAll(examples, {})), plain([{ ...fromTable!, extras: { langsmith: { $form: { input_key: 'Question', expected_key: 'Best Answer' } } } }]))
})
