import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { EvalferryError } from '../src/errors.ts'
import { convert } from '../src/convert.ts'
import { caseToRow, defaultColumns, getPath, isDefaultHeader, mappingStats, mapRow, parseMapArgs, resolvedFor, resolveMapping, rowToCase } from '../src/mapping.ts'
import { tempDir } from './helpers/temp.ts'

const TEXT = { format: 'csv', text: true }

test('parseMapArgs: fields, metadata and ignore lists, dotted paths', () => {
  assert.deepEqual(parseMapArgs(['input=question', 'metadata=difficulty,domain', 'ignore=row_hash', 'metadata=lang', 'expected_output=outputs.answer']), {
    input: 'question',
    metadata: ['difficulty', 'domain', 'lang'],
    ignore: ['row_hash'],
    expected_output: 'outputs.answer',
  })
})

test('parseMapArgs: bad syntax is a usage error', () => {
  for (const bad of [['input'], ['=question'], ['input='], ['nonsense=x'], ['metadata=a,,b'], ['input=a', 'input=b']]) {
    assert.throws(() => parseMapArgs(bad), (e: EvalferryError) => e.code === 'E_USAGE' && e.exitCode === 2, bad.join(' '))
  }
})

test('resolveMapping: well-known names, first listed first; the rest is metadata', () => {
  const r = resolveMapping(['query', 'question', 'ground_truth', 'contexts', 'task_id', 'x'])
  assert.deepEqual(r.fields, [['id', 'task_id'], ['input', 'question'], ['expected_output', 'ground_truth'], ['context', 'contexts']])
  const row = { query: 'q', question: 'Q?', ground_truth: 'A', contexts: '["c1", "c2"]', task_id: 'T1', x: '' }
  assert.deepEqual(rowToCase(row, r, TEXT), {
    id: 'T1',
    input: [{ role: 'user', content: 'Q?' }],
    expected_output: [{ role: 'assistant', content: 'A' }],
    context: ['c1', 'c2'],
    metadata: { query: 'q' },
    extras: { csv: { $raw: { contexts: '["c1", "c2"]' } } },
  })
})

test('a column named like a canonical field fills it before the aliases (retrieval_context is not context)', () => {
  const r = resolveMapping(['question', 'retrieval_context', 'actual_output', 'token_cost'])
  assert.deepEqual(r.fields, [['input', 'question'], ['actual_output', 'actual_output'], ['token_cost', 'token_cost'], ['retrieval_context', 'retrieval_context']])
  const c = rowToCase({ question: 'q', retrieval_context: 'only', actual_output: 'a', token_cost: '0.25' }, r, TEXT)
  assert.deepEqual(c.retrieval_context, ['only'])
  assert.equal(c.token_cost, 0.25)
})

test('an explicit map turns its columns off for the well-known names; metadata= keeps a well-known column as data', () => {
  const c = mapRow({ q: 'Hi', answer: '42', input: 'not this' }, { input: 'q', metadata: ['answer'] }, TEXT)
  assert.deepEqual(c, { input: [{ role: 'user', content: 'Hi' }], metadata: { answer: '42', input: 'not this' } })
})

test('dotted paths reach into objects; the rest of the object stays in metadata and is merged back on writing', () => {
  const row = { inputs: { question: 'Why?', lang: 'en' }, outputs: { answer: 'Because' } }
  const map = { input: 'inputs.question', expected_output: 'outputs.answer' }
  const c = mapRow(row, map, { format: 'langsmith' })
  assert.deepEqual(c, { input: [{ role: 'user', content: 'Why?' }], expected_output: [{ role: 'assistant', content: 'Because' }], metadata: { inputs: { lang: 'en' } } })
  assert.deepEqual(caseToRow(c as never, ['inputs', 'outputs'], { format: 'langsmith', map }), row)
  assert.equal(getPath({ 'a.b': 1, a: { b: 2 } }, 'a.b'), 1)
})

test('a row without the mapped column is an error naming it', () => {
  assert.throws(
    () => mapRow({ question: 'q' }, { input: 'x' }, TEXT),
    (e: EvalferryError) => e.code === 'E_FIELD' && e.location.field === 'x' && /mapped to input is missing/.test(e.message),
  )
})

test('a function maps rows as it is', () => {
  const c = mapRow({ a: '1' }, (row) => [{ id: String(row.a) }, { id: 'two' }], TEXT)
  assert.deepEqual(c, [{ id: '1' }, { id: 'two' }])
})

test('messages: the last assistant message is the expected output; writing joins them again', () => {
  const messages = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'u' },
    { role: 'assistant', content: 'a' },
  ]
  const c = mapRow({ messages }, undefined, { format: 'hf' })
  assert.deepEqual(c, { input: messages.slice(0, 2), expected_output: messages.slice(2) })
  assert.deepEqual(defaultColumns(c as never, { format: 'hf' }), ['messages'])
  assert.deepEqual(caseToRow(c as never, ['messages'], { format: 'hf' }), { messages })
})

test('default headers: canonical names in order, metadata between them, read back without a map', () => {
  const c = { id: 'x', input: [{ role: 'user' as const, content: 'q' }], context: ['a', 'b'], note: 'n', metadata: { lang: 'en', question: 'reserved' } }
  const header = defaultColumns(c, TEXT)
  assert.deepEqual(header, ['id', 'input', 'context', 'lang', 'note'])
  assert.ok(isDefaultHeader(header))
  assert.ok(!isDefaultHeader(['question', 'answer']))
  assert.ok(!isDefaultHeader(['note', 'id']))
  const row = caseToRow(c, header, { ...TEXT, fill: true })
  assert.deepEqual(row, { id: 'x', input: 'q', context: '["a","b"]', lang: 'en', note: 'n' })
  assert.deepEqual(mapRow(row, undefined, TEXT), { id: 'x', input: c.input, context: ['a', 'b'], note: 'n', metadata: { lang: 'en' } })
})

test('text cells: a list cell not starting with [ is its one item; an empty cell is absent', () => {
  assert.deepEqual(mapRow({ input: 'q', context: 'just one', expected_output: '' }, undefined, TEXT), { input: [{ role: 'user', content: 'q' }], context: ['just one'] })
})

test('list cells in every spelling convert to JSON Lines as JSON.stringify writes their lists, the compact ones spliced in as they are', async () => {
  const dir = tempDir('evalferry-list-cells-')
  const input = join(dir, 'rows.csv')
  const long = (word: string) => `${word} ${'x'.repeat(300)}`
  const lists = [
    [long('compact'), 'é "quoted" \\ back\nline'],
    [long('one item')],
    [long('spaced'), 'b'],
    [long('slash/'), 'c'],
    [long('unicode é'), 'd'],
    ['short', 'e'],
  ]
  // As a table holds them: compact JSON, Python's spacing, an escaped slash, a \u escape.
  const cells = [
    JSON.stringify(lists[0]),
    JSON.stringify(lists[1]),
    JSON.stringify(lists[2]).replace('","', '", "'),
    JSON.stringify(lists[3]).replace('/', '\\/'),
    JSON.stringify(lists[4]).replace('é', '\\u00e9'),
    JSON.stringify(lists[5]),
  ]
  const quoted = (cell: string) => `"${cell.replaceAll('"', '""')}"`
  writeFileSync(input, `id,question,contexts\n${cells.map((cell, i) => `c${i},q${i},${quoted(cell)}`).join('\n')}\n`)
  const output = join(dir, 'cases.jsonl')
  const report = await convert({ input, output, from: 'csv', to: 'evalcase' })
  assert.equal(report.records.written, lists.length)
  const lines = readFileSync(output, 'utf8').trimEnd().split('\n')
  for (const [i, line] of lines.entries()) {
    const record = JSON.parse(line) as { metadata: { evalferry: { context: string[] } } }
    assert.deepEqual(record.metadata.evalferry.context, lists[i], line)
    assert.equal(line, JSON.stringify(record), `record ${i} is written as JSON.stringify writes it`)
  }
  assert.ok(lines[0]!.includes(cells[0]!), 'the compact cell is in the record as it was')
  rmSync(dir, { recursive: true })
})

test('columns --map ignore= leaves out are reported as dropped, counted where a row holds a value', async () => {
  const dir = tempDir('evalferry-ignore-')
  const input = join(dir, 'rows.csv')
  writeFileSync(input, 'q,a,d,h\nQ1,A1,easy,x1\nQ2,A2,hard,\nQ3,A3,easy,x3\n')
  const report = await convert({ input, output: join(dir, 'goldens.json'), from: 'csv', to: 'deepeval', map: parseMapArgs(['input=q', 'expected_output=a', 'metadata=d', 'ignore=h']) })
  assert.deepEqual(report.dropped, { 'ignored.h': 2 })
  assert.ok(!readFileSync(join(dir, 'goldens.json'), 'utf8').includes('x1'))
  rmSync(dir, { recursive: true })
})

test('resolveMapping: headers as people write them match whatever their case, spaces, - and _; the exact spelling first', () => {
  // TruthfulQA's header.
  assert.deepEqual(resolveMapping(['Type', 'Category', 'Question', 'Best Answer', 'Correct Answers', 'Incorrect Answers', 'Source']).fields, [
    ['input', 'Question'],
    ['expected_output', 'Best Answer'],
  ])
  assert.deepEqual(resolveMapping(['ID', 'Expected-Output', 'User Input', 'RETRIEVAL_CONTEXT']).fields, [
    ['id', 'ID'],
    ['input', 'User Input'],
    ['expected_output', 'Expected-Output'],
    ['retrieval_context', 'RETRIEVAL_CONTEXT'],
  ])
  assert.deepEqual(resolveMapping(['Input', 'input']).fields, [['input', 'input']])
  // A metadata key spelled like a well-known name is no column of its own in a default header: it would read back as a field.
  assert.deepEqual(defaultColumns({ input: [{ role: 'user', content: 'q' }], metadata: { 'Best Answer': 'a', Topic: 't' } }, TEXT), ['input', 'Topic'])
  assert.equal(isDefaultHeader(['input', 'Question']), false)
})

test("resolveMapping: ragas' names, and promptfoo's __expected", () => {
  assert.deepEqual(resolveMapping(['user_input', 'retrieved_contexts', 'reference_contexts', 'response', 'reference']).fields, [
    ['input', 'user_input'],
    ['expected_output', 'reference'],
    ['actual_output', 'response'],
    ['context', 'reference_contexts'],
    ['retrieval_context', 'retrieved_contexts'],
  ])
  // Without a reference, a response is the expected answer (an instruction dataset's).
  assert.deepEqual(resolveMapping(['instruction', 'response']).fields, [['input', 'instruction'], ['expected_output', 'response']])
  assert.deepEqual(resolveMapping(['language', 'body', '__expected']).fields, [['expected_output', '__expected']])
})

test('resolvedFor resolves each of the headers a conversion alternates between once, not once a row', () => {
  // A CSV table read, and its hf rows checked as they are written: the table's header, with a carry
  // column, and the list columns of the rows whose cells were lists (five headers in all).
  const headers = [
    ['id', 'question', 'answer', 'contexts', 'tags'],
    ['id', 'question', 'answer', 'contexts', 'tags', 'evalferry'],
    ['tags'],
    ['contexts'],
    ['tags', 'contexts'],
    ['question', 'answer'],
  ]
  const before = mappingStats.resolved
  for (let row = 0; row < 600; row++) {
    const header = headers[(row * 7) % headers.length]!
    assert.deepEqual(resolvedFor(header, undefined), resolveMapping(header))
  }
  assert.equal(mappingStats.resolved - before, headers.length)
})
