import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import deepeval from '../../adapters/deepeval.ts'
import type { DecodeContext, EncodeContext } from '../../adapters/types.ts'
import { EvalferryError } from '../../src/errors.ts'
import type { EvalCase, JsonValue } from '../../src/model.ts'
import { convert } from '../../src/convert.ts'
import { read } from '../../src/read.ts'
import { write } from '../../src/write.ts'
import { newReport } from '../../src/report.ts'
import { readCsv } from '../../src/codecs/csv.ts'
import { tempDir } from '../helpers/temp.ts'

const REAL = '/work/shared/fixtures/real/deepeval/'
const OWN = join(import.meta.dirname, '../fixtures/deepeval/')
const out = tempDir('evalferry-deepeval-')

async function readAll(path: string): Promise<EvalCase[]> {
  const cases: EvalCase[] = []
  for await (const c of read(path, { from: 'deepeval' })) cases.push(c)
  return cases
}

/** Writes `cases` as DeepEval in the container `ext`; returns the text and the report. */
async function writeAll(cases: EvalCase[], name: string) {
  const path = join(out, name)
  const report = newReport('deepeval', 'deepeval', [], path)
  await write(cases, path, { to: 'deepeval', report })
  return { text: readFileSync(path, 'utf8'), report }
}

/** The records of a file as JSON values: CSV rows as cells by column, JSON Lines per line. */
/** The records a file holds: JSON values, or a CSV file's rows of cells (whatever ends its rows). */
async function records(text: string, ext: string): Promise<unknown> {
  if (ext === 'json') return JSON.parse(text) as JsonValue
  if (ext === 'jsonl') return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as JsonValue)
  const columns: string[] = []
  const rows: unknown[] = []
  for await (const r of readCsv([text], { file: 'in.csv', recordKeys: [], header: {}, columns })) rows.push(r.value)
  return { columns, rows }
}

const extOf = (f: string) => f.slice(f.lastIndexOf('.') + 1)
const realFiles = readdirSync(REAL).sort()
const ownFiles = readdirSync(OWN).filter((f) => /\.(json|jsonl|csv)$/.test(f) && !f.endsWith('.cases.json')).sort()

// ---------------------------------------------------------------------------------------------
// real files: what they read as

const input = (c: EvalCase | undefined) => c?.input?.[0]?.content

test('every real DeepEval file reads, with the right number of cases', async () => {
  const expected: Record<string, number> = {
    'repo-community_chatbot_dataset.json': 3,
    'repo-confident_goldens.json': 4,
    'repo-confident_goldens_multi_turn.json': 5,
    'repo-convo_goldens.csv': 15,
    'repo-convo_goldens.json': 15,
    'repo-goldens.csv': 15,
    'repo-goldens.json': 15,
    'saveas-multi_turn.csv': 2,
    'saveas-multi_turn.json': 2,
    'saveas-multi_turn.jsonl': 2,
    'saveas-single_turn.csv': 2,
    'saveas-single_turn.json': 2,
    'saveas-single_turn.jsonl': 2,
    'saveas-with_test_cases.json': 2,
  }
  assert.deepEqual(realFiles, Object.keys(expected).sort())
  for (const f of realFiles) assert.equal((await readAll(REAL + f)).length, expected[f], f)
})

test('community file: the `expected` key is the expected output', async () => {
  const [first] = await readAll(REAL + 'repo-community_chatbot_dataset.json')
  assert.deepEqual(first?.input, [{ role: 'user', content: 'What is Dubai?' }])
  assert.deepEqual(first?.expected_output, [{ role: 'assistant', content: 'Dubai is a city in the UAE' }])
  assert.deepEqual(first?.extras?.deepeval?.$keys, ['input', 'expected'])
})

test("records of one file that name their keys differently each read by their own keys: an alias beside its name stays the source's own key", async () => {
  const path = join(out, 'keys-vary.jsonl')
  const lines = [
    { input: 'q1', expected_output: 'a1' },
    { input: 'q2', expected: 'a2' },
    { expected: 'a3', input: 'q3', expected_output: 'b3' },
    { input: 'q4', expected_output: 'a4' },
    { expected: 'a5', input: 'q5' },
  ]
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
  const cases = await readAll(path)
  assert.deepEqual(cases.map((c) => c.expected_output), ['a1', 'a2', 'a3', 'a4', 'a5'].map((content) => [{ role: 'assistant', content }]))
  assert.deepEqual(cases.map((c) => c.extras?.deepeval?.$keys), lines.map((l) => Object.keys(l)))
  // The second spelling of a name the record already gave is the record's own key, written back as it was.
  const { text } = await writeAll(cases, 'keys-vary-out.jsonl')
  assert.deepEqual(text.trim().split('\n').map((l) => JSON.parse(l) as JsonValue), lines)
})

test('Confident exports: tool calls with an `input` key become arguments', async () => {
  const cases = await readAll(REAL + 'repo-confident_goldens.json')
  const third = cases[2]
  assert.equal(input(third), 'Explain the concept of photosynthesis and its importance in the ecosystem.')
  assert.deepEqual(
    third?.tools_called?.map((t) => [t.name, t.arguments]),
    [
      ['search_biology_database', { query: 'photosynthesis process mechanism' }],
      ['search_ecology_database', { query: 'photosynthesis ecosystem importance' }],
    ],
  )
  assert.deepEqual(third?.metadata, { topic: 'biology', difficulty: 'medium', subtopics: ['ecology', 'biochemistry'] })
  assert.equal(third?.context?.length, 5)
})

test('Confident multi-turn goldens: turns, metadata, custom columns', async () => {
  const cases = await readAll(REAL + 'repo-confident_goldens_multi_turn.json')
  assert.equal(cases[0]?.turns?.length, 6)
  assert.deepEqual(cases[0]?.turns?.[1]?.role, 'assistant')
  assert.equal(cases[0]?.metadata?.expected_turns, 6)
  assert.ok(cases[0]?.user_description?.startsWith('Frustrated customer'))
  const last = cases[4]
  assert.ok(last?.extras?.deepeval?.custom_column_key_values !== undefined)
  assert.equal(last?.user_description, undefined)
})

test('older multi-turn files: turns as JSON text, in JSON and in CSV, read the same', async () => {
  const fromJson = await readAll(REAL + 'repo-convo_goldens.json')
  const fromCsv = await readAll(REAL + 'repo-convo_goldens.csv')
  const turns = fromJson[0]?.turns
  assert.equal(turns?.length, 2)
  assert.equal(turns?.[1]?.content, "It's expected to be rainy with temperatures around 18°C.")
  assert.deepEqual(turns?.[0]?.retrieval_context, ['Weather API docs', 'Weather API reference'])
  assert.deepEqual(fromJson[0]?.extras?.deepeval?.$form, { turns: 'text' })
  assert.equal(fromJson[2]?.turns?.[1]?.retrieval_context, undefined) // null there
  for (let i = 0; i < fromJson.length; i++) {
    assert.deepEqual(fromCsv[i]?.turns?.map((t) => [t.role, t.content, t.retrieval_context]), fromJson[i]?.turns?.map((t) => [t.role, t.content, t.retrieval_context]))
    assert.deepEqual(fromCsv[i]?.context, fromJson[i]?.context)
  }
})

test('repo goldens: CSV tool-call cells with odd spacing, a trailing empty source_file', async () => {
  const [first] = await readAll(REAL + 'repo-goldens.csv')
  assert.deepEqual(first?.tools_called, [{ name: 'mountain_lookup', arguments: { query: 'tallest mountain' } }])
  assert.deepEqual(first?.retrieval_context, ['Mountain heights list', 'Moutain list'])
  assert.equal(first?.extras?.deepeval?.source_file, undefined)
  assert.ok(Array.isArray(first?.extras?.deepeval?.$columns)) // not save_as's column order
})

test('save_as single-turn: the same cases from JSON and JSON Lines; CSV splits the piped item', async () => {
  const json = await readAll(REAL + 'saveas-single_turn.json')
  const jsonl = await readAll(REAL + 'saveas-single_turn.jsonl')
  const csv = await readAll(REAL + 'saveas-single_turn.csv')
  const first = json[0]
  assert.equal(input(first), 'What is the refund policy?')
  assert.equal(first?.actual_output, undefined)
  assert.deepEqual(first?.retrieval_context, ['chunk one', 'deepeval_source=doc.pdf,deepeval_context=chunk two'])
  assert.deepEqual(first?.context, ['Policy A: refunds, 30 days', 'Line2\nwith newline', 'has | pipe'])
  assert.deepEqual(first?.tools_called, [{ name: 'search', type: 'FUNCTION', output: { hits: 2 }, arguments: { q: 'refund' } }])
  assert.deepEqual(first?.expected_tools, [{ name: 'search', type: 'FUNCTION', description: 'kb search', reasoning: 'needs kb' }])
  assert.deepEqual(first?.metadata, { difficulty: 'easy', tags: ['a', 'b'], n: 1 })
  assert.deepEqual(first?.extras, { deepeval: { source_file: 'policy.pdf', custom_column_key_values: { team: 'support', myColumn: 'x' } } })
  assert.deepEqual(json[1], { input: [{ role: 'user', content: 'Hola ¿qué tal?' }] })
  // JSON Lines joins with `|` and splits the piped item, as DeepEval does
  assert.deepEqual(jsonl[0]?.context, ['Policy A: refunds, 30 days', 'Line2\nwith newline', 'has ', ' pipe'])
  assert.deepEqual(csv[0]?.context, jsonl[0]?.context)
  assert.deepEqual({ ...csv[0], context: undefined }, { ...jsonl[0], context: undefined })
  assert.deepEqual(csv[1], json[1])
})

test('save_as multi-turn: turns, persona and metadata per turn', async () => {
  const [first, second] = await readAll(REAL + 'saveas-multi_turn.json')
  assert.equal(first?.scenario, 'User wants to cancel subscription')
  assert.deepEqual(first?.turns?.[0], { role: 'user', content: 'Cancel my plan', user_id: 'u1', metadata: { ch: 'web' } })
  assert.deepEqual(first?.turns?.[1]?.tools_called, [{ name: 'cancel', type: 'FUNCTION', output: 'ok', arguments: { plan: 'pro' } }])
  assert.deepEqual(first?.persona, { name: 'Ann', characteristics: 'Impatient 40yo, terse' })
  assert.deepEqual(first?.metadata, { lang: 'en' })
  assert.deepEqual(second, { scenario: 'Just say hi', user_description: 'legacy description', persona: { characteristics: 'legacy description' } })
})

test('save_as with test cases', async () => {
  const [, tc] = await readAll(REAL + 'saveas-with_test_cases.json')
  assert.equal(tc?.actual_output, 'tc output')
  assert.deepEqual(tc?.retrieval_context, ['deepeval_source=s,deepeval_context=c'])
  assert.deepEqual(tc?.tools_called, [{ name: 't', type: 'FUNCTION', arguments: { a: 1 } }])
})

// ---------------------------------------------------------------------------------------------
// writing

for (const f of realFiles.filter((f) => f.startsWith('saveas-'))) {
  test(`writing ${f} back gives the same bytes`, async () => {
    const { text } = await writeAll(await readAll(REAL + f), f)
    assert.equal(text, readFileSync(REAL + f, 'utf8'))
  })
}

// Confident AI's shape is written as save_as writes it (below).
for (const f of [...realFiles.map((f) => REAL + f), ...ownFiles.filter((f) => !f.startsWith('confident')).map((f) => OWN + f)]) {
  const name = f.slice(f.lastIndexOf('/') + 1)
  test(`${name}: a round trip within DeepEval gives the same records`, async () => {
    const ext = extOf(name)
    const { text } = await writeAll(await readAll(f), `rt-${name}`)
    assert.deepEqual(await records(text, ext), await records(readFileSync(f, 'utf8'), ext))
  })
}

test('cases from another format get the full save_as layout, with nulls', async () => {
  const c: EvalCase = { input: [{ role: 'user', content: 'q' }], tags: ['t'], token_cost: 0.5 }
  const { text: json } = await writeAll([c], 'other.json')
  assert.equal(
    json,
    '[\n    {\n        "input": "q",\n        "actual_output": null,\n        "expected_output": null,\n        "retrieval_context": null,\n        "context": null,\n        "name": null,\n        "comments": null,\n        "source_file": null,\n        "tools_called": null,\n        "expected_tools": null,\n        "additional_metadata": null,\n        "custom_column_key_values": null,\n        "token_cost": 0.5,\n        "tags": [\n            "t"\n        ]\n    }\n]',
  )
  const { text: csv } = await writeAll([c], 'other.csv')
  assert.equal(
    csv,
    'input,actual_output,expected_output,retrieval_context,context,name,comments,source_file,tools_called,expected_tools,additional_metadata,custom_column_key_values,token_cost,tags\r\nq,,,,,,,,,,,,0.5,t\r\n',
  )
})

test('a list item holding `|` is a list in JSON Lines, whose loader takes one as it is; in CSV it warns and travels whole under evalferry', async () => {
  const c: EvalCase = { input: [{ role: 'user', content: 'q' }], context: ['a|b', 'c'], retrieval_context: [''] }
  const { text, report } = await writeAll([c], 'piped.jsonl')
  assert.deepEqual([report.warnings, report.carried], [[], {}])
  const record = JSON.parse(text) as { context: unknown; retrieval_context: unknown }
  // add_goldens_from_jsonl_file's parse_context returns a list unchanged; "" would split to [].
  assert.deepEqual([record.context, record.retrieval_context], [['a|b', 'c'], ['']])
  const [back] = await readAll(join(out, 'piped.jsonl'))
  assert.deepEqual(back, c)
  const { text: csv, report: csvReport } = await writeAll([c], 'piped.csv')
  assert.deepEqual(csvReport.warnings.map((w) => w.location.field), ['context'])
  assert.deepEqual(csvReport.carried, { context: 1, retrieval_context: 1 })
  assert.match(csv, /a\|b\|c/)
  const { report: jsonReport } = await writeAll([c], 'piped.json')
  assert.equal(jsonReport.warnings.length, 0) // JSON keeps lists
})

test('a CSV metadata cell with an integer past 2^53 is written back as its text, with nothing carried', async () => {
  const source = readFileSync(OWN + 'big_integer.csv', 'utf8')
  const cases = await readAll(OWN + 'big_integer.csv')
  assert.deepEqual(cases[0]?.metadata, { k: '12345678901234567890' }) // every digit, as text
  const { text, report } = await writeAll(cases, 'big_integer.csv')
  assert.equal(text, 'input,additional_metadata\r\nq,"{""k"": 12345678901234567890}"\r\nr,"{""n"": [-98765432109876543210, 1], ""s"": ""x""}"\r\n')
  assert.equal(text, source)
  assert.deepEqual(report.carried, {})
  // JSON holds the digits as text, as the JSON codec reads such an integer; the cell's text and columns travel
  const { text: json } = await writeAll(cases, 'big_integer.json')
  assert.deepEqual((JSON.parse(json) as [{ additional_metadata: JsonValue }])[0].additional_metadata, {
    k: '12345678901234567890',
    evalferry: { extras: { deepeval: { $text: { additional_metadata: '{"k": 12345678901234567890}' }, $columns: ['input', 'additional_metadata'] } } },
  })
  const { text: back, report: backReport } = await writeAll(await readAll(join(out, 'big_integer.json')), 'big_integer-back.csv')
  assert.equal(back, source)
  assert.deepEqual(backReport.carried, {})
})

test('lists a join would not give back: JSON to JSON Lines and back gives the same file, and a null key stays', async () => {
  const source = readFileSync(OWN + 'piped_context.json', 'utf8')
  // Lists a join would not give back are written as lists, which DeepEval's JSON Lines loader takes as they are: nothing carried.
  const { text: jsonl, report } = await writeAll(await readAll(OWN + 'piped_context.json'), 'piped_context.jsonl')
  assert.deepEqual(report.carried, {})
  assert.deepEqual(await records(jsonl, 'jsonl'), [
    { input: 'Which plans exist?', context: ['Plans: basic|pro'] },
    { input: 'Anything retrieved?', retrieval_context: [''], name: 'empty chunk' },
  ])
  const { text: back } = await writeAll(await readAll(join(out, 'piped_context.jsonl')), 'piped_context-back.json')
  assert.deepEqual(await records(back, 'json'), [
    { input: 'Which plans exist?', context: ['Plans: basic|pro'] },
    { input: 'Anything retrieved?', retrieval_context: [''], name: 'empty chunk' },
  ])
  assert.equal(back, source)
  // A null key stays: its `$keys` have it, so the carry needs no extras
  const withNull: EvalCase = { input: [{ role: 'user', content: 'b' }], context: ['x|y'], extras: { deepeval: { $keys: ['input', 'context', 'additional_metadata'] } } }
  const { text: nullJsonl } = await writeAll([withNull], 'null-metadata.jsonl')
  assert.equal(nullJsonl, '{"input": "b", "context": ["x|y"], "additional_metadata": null}\n')
  const { text: nullBack } = await writeAll(await readAll(join(out, 'null-metadata.jsonl')), 'null-metadata.json')
  assert.deepEqual(await records(nullBack, 'json'), [{ input: 'b', context: ['x|y'], additional_metadata: null }])
})

test('a structured expected output is written as JSON text and carried exactly', async () => {
  const c: EvalCase = { input: [{ role: 'user', content: 'q' }], expected_output: { answer: 42 } }
  const { text, report } = await writeAll([c], 'structured.json')
  assert.equal((JSON.parse(text) as [{ expected_output: string }])[0].expected_output, '{"answer": 42}')
  assert.deepEqual(report.carried, { expected_output: 1 })
  assert.deepEqual((await readAll(join(out, 'structured.json')))[0]?.expected_output, { answer: 42 })
})

test("the Confident shape is written as DeepEval's JSON loader reads it, a list in save_as's names; its header and spelling are carried back", async () => {
  for (const name of ['confident.json', 'confident_multi.json']) {
    const cases = await readAll(OWN + name)
    const { text } = await writeAll(cases, `written-${name}`)
    const doc = JSON.parse(text) as Record<string, unknown>[]
    // add_goldens_from_json_file iterates a list and reads snake_case keys.
    assert.ok(Array.isArray(doc), name)
    // No key DeepEval reads is in Confident's spelling (a key of Confident's alone, `imagesMapping`, stays as it is).
    const keys = new Set(doc.flatMap((g) => Object.keys(g)))
    for (const camel of ['actualOutput', 'expectedOutput', 'retrievalContext', 'toolsCalled', 'expectedTools', 'additionalMetadata', 'sourceFile', 'customColumnKeyValues', 'expectedOutcome', 'userDescription']) {
      assert.ok(!keys.has(camel), `${name}: ${camel}`)
    }
    assert.ok(keys.has('input') || keys.has('scenario'), name)
    assert.deepEqual(JSON.parse(JSON.stringify(await readAll(join(out, `written-${name}`)))), JSON.parse(JSON.stringify(cases)), name)
  }
  const { text } = await writeAll(await readAll(OWN + 'confident.json'), 'single.json')
  assert.deepEqual(Object.keys((JSON.parse(text) as object[])[0]!).slice(0, 3), ['input', 'actual_output', 'expected_output'])
})

test('older multimodal images: image blocks, written back as MLLMImage objects', async () => {
  const c: EvalCase = {
    input: [{ role: 'user', content: [{ type: 'text', value: 'look' }, { type: 'image', value: 'https://x.test/a.png' }, { type: 'image', value: 'iVBOR', mime_type: 'image/png' }] }],
  }
  const { text } = await writeAll([c], 'images.json')
  assert.deepEqual((JSON.parse(text) as [{ input: JsonValue }])[0].input, ['look', { url: 'https://x.test/a.png', local: false }, { dataBase64: 'iVBOR', mimeType: 'image/png' }])
  assert.deepEqual((await readAll(join(out, 'images.json')))[0]?.input, c.input)
})

test('arena contestants become cases linked by a group id and keep it through a write', async () => {
  const cases = await readAll(OWN + 'arena.json')
  assert.deepEqual(cases.map((c) => c.metadata?.arena), [
    { group: 'arena-1', contestant: 'gpt', hyperparameters: { temperature: 0.2 } },
    { group: 'arena-1', contestant: 'claude' },
  ])
  await writeAll(cases, 'arena-out.json')
  const back = await readAll(join(out, 'arena-out.json'))
  assert.deepEqual(back.map((c) => [c.actual_output, c.metadata]), cases.map((c) => [c.actual_output, c.metadata]))
})

// ---------------------------------------------------------------------------------------------
// own fixtures: decode against the expected canonical cases

for (const f of ownFiles) {
  test(`fixture ${f} decodes to ${f}.cases.json`, async () => {
    const expected = JSON.parse(readFileSync(OWN + f + '.cases.json', 'utf8')) as EvalCase[]
    assert.deepEqual(await readAll(OWN + f), expected)
  })
}

test('the full fixture holds every single-turn field', async () => {
  const [first, mllm] = await readAll(OWN + 'single_turn_full.json')
  assert.equal(first?.token_cost, 0.0042)
  assert.equal(first?.completion_time, 1.5)
  assert.deepEqual(first?.tags, ['charts', 'q3'])
  assert.equal(input(first), 'Summarise the attached chart [DEEPEVAL:IMAGE:4f2a]') // DeepEval 4 placeholders stay text
  for (const k of ['mcp_servers', 'mcp_tools_called', 'mcp_resources_called', 'mcp_prompts_called']) assert.ok(first?.extras?.deepeval?.[k], k)
  assert.deepEqual(mllm?.input?.[0]?.content, [
    { type: 'text', value: 'What is in this picture?' },
    { type: 'image', value: 'https://example.com/cat.png' },
    { type: 'image', value: './images/dog.jpg' },
  ])
})

test('CSV cells stay text: NA, null and None are strings; numbers keep their spelling', async () => {
  const [k2, na] = await readAll(OWN + 'single_turn.csv')
  assert.equal(input(na), 'NA')
  assert.equal(na?.actual_output, 'null')
  assert.equal(k2?.completion_time, 2)
  assert.deepEqual(k2?.extras?.deepeval?.$text, { completion_time: '2.0' })
})

test('a metadata cell neither JSON nor a Python literal is an error in the words of the reading its text is closer to', async () => {
  const source = join(out, 'bad-metadata.csv')
  const cases: [string, RegExp][] = [
    ['"{""reviewed"": tru}"', /^expected JSON text: /],
    ["\"{'reviewed': tru}\"", /^expected a Python literal \(as DeepEval reads this column when it is not JSON\): the name tru, which is no literal at character 14$/],
    ['"{""reviewed"": True"', /^expected a Python literal .*: expected "," or "\}", found end of text at character 18$/],
  ]
  for (const [cell, message] of cases) {
    writeFileSync(source, `input,additional_metadata\nq,${cell}\n`)
    await assert.rejects(readAll(source), (e: unknown) => e instanceof EvalferryError && e.location.line === 2 && e.location.field === 'additional_metadata' && message.test(e.message), cell)
  }
})

test('tool calls given as JSON text in JSON Lines, as DeepEval\'s JSON Lines loader takes them, are tool calls, written back as text', async () => {
  const source = join(out, 'tools-text.jsonl')
  const line = JSON.stringify({ input: 'q', tools_called: '[{"name": "search", "inputParameters": {"q": "refunds"}}]', expected_tools: '[{"name": "search"}]' })
  writeFileSync(source, line + '\n')
  const [c] = await readAll(source)
  assert.deepEqual(c?.tools_called, [{ name: 'search', arguments: { q: 'refunds' } }])
  assert.deepEqual(c?.expected_tools, [{ name: 'search' }])
  // Through evalcase YAML and back: the same record, its tool calls text again.
  const yaml = join(out, 'tools-text.yaml')
  const back = join(out, 'tools-text-back.jsonl')
  await convert({ input: source, output: yaml, to: 'evalcase' })
  await convert({ input: yaml, output: back, to: 'deepeval' })
  assert.deepEqual(await records(readFileSync(back, 'utf8'), 'jsonl'), [JSON.parse(line)])
  // Text that is not a list of tool calls is an error at the field.
  writeFileSync(source, JSON.stringify({ input: 'q', tools_called: 'search' }) + '\n')
  await assert.rejects(readAll(source), (e: unknown) => e instanceof EvalferryError && e.location.line === 1 && e.location.field === 'tools_called' && /^expected JSON text/.test(e.message))
})

test('a CSV pandas wrote from dicts reads as DeepEval reads it: metadata cells as Python literals, written back as they were', async () => {
  // pandas' `to_csv` of a DataFrame whose metadata column holds dicts (test/fixtures/deepeval/pandas_to_csv.csv).
  const source = OWN + 'pandas_to_csv.csv'
  const cases = await readAll(source)
  assert.deepEqual(
    cases.map((c) => c.metadata),
    [
      { topic: 'billing', reviewed: true, score: 0.75, reviewer: null, tags: ['a', 'b'], pair: [1, 2], small: 1e-7 },
      { note: 'line one\nline two\ttab', unicode: 'café ☕ 日本', both: `it's "x"`, esc: '\\ backslash', ctrl: '\x07\u2028' },
      { '1': 'one', big: '12345678901234567890', neg: -5, float: 2, nested: { deep: [{ x: false }] } },
      { n: 1, ok: true },
      undefined,
    ],
  )
  assert.deepEqual(cases[0]?.extras?.deepeval?.custom_column_key_values, { team: "support's", quote: 'say "hi"' })
  // Through DeepEval JSON Lines and back to CSV: every cell as pandas wrote it.
  const lines = join(out, 'pandas.jsonl')
  const back = join(out, 'pandas-back.csv')
  await convert({ input: source, output: lines, to: 'deepeval' })
  await convert({ input: lines, output: back, to: 'deepeval' })
  assert.deepEqual(await records(readFileSync(back, 'utf8'), 'csv'), await records(readFileSync(source, 'utf8'), 'csv'))
})

test('CSV cells pandas reads as missing (N/A, None, NULL) are written as they are and warned of, per column; JSON is not', async () => {
  const cases: EvalCase[] = [
    { input: [{ role: 'user', content: 'Is it known?' }], expected_output: [{ role: 'assistant', content: 'N/A' }], actual_output: 'None' },
    { input: [{ role: 'user', content: 'NULL' }], expected_output: [{ role: 'assistant', content: 'n/a, see the policy' }] },
  ]
  const { report } = await writeAll(cases, 'missing-like.csv')
  assert.deepEqual(
    report.warnings.map((w) => [w.location.record, w.location.field]),
    [
      [0, 'actual_output'],
      [0, 'expected_output'],
      [1, 'input'],
    ],
  )
  assert.match(report.warnings[0]!.message, /"None" is read by pandas \(DeepEval's CSV reader\) as a missing value/)
  const back = await readAll(join(out, 'missing-like.csv'))
  assert.deepEqual(back.map((c) => [input(c), c.actual_output]), [['Is it known?', 'None'], ['NULL', undefined]])
  assert.equal((await writeAll(cases, 'missing-like.json')).report.warnings.length, 0)
})

// ---------------------------------------------------------------------------------------------
// bad input

function decodeContext(container: DecodeContext['container'] = 'json'): DecodeContext {
  return { file: 'x', container, header: {}, index: 0, state: {}, warn: () => {} }
}

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    assert.ok(error instanceof EvalferryError)
    assert.equal(error.code, 'E_FIELD')
    return error.location.field
  }
  assert.fail('expected an error')
}

test('a single-turn record without input names the field input', () => {
  assert.equal(fieldOf(() => deepeval.decode({ expected_output: 'x' }, decodeContext())), 'input')
  assert.equal(fieldOf(() => deepeval.decode({ input: 3 }, decodeContext())), 'input')
  assert.equal(fieldOf(() => deepeval.decode({ input: null, name: 'n' }, decodeContext())), 'input')
  assert.equal(fieldOf(() => deepeval.decode({ name: 'n', actual_output: 'a' }, decodeContext('csv'))), 'input')
})

test('an empty CSV cell under the input column is the empty input, since cells are text', () => {
  const c = deepeval.decode({ input: '', name: 'n' }, decodeContext('csv')) as EvalCase
  assert.deepEqual(c.input, [{ role: 'user', content: '' }])
})

test('wrong types name the field path', () => {
  const multi = { scenario: 's', turns: [{ role: 'user', content: 'a' }, { role: 'system', content: 'b' }] }
  assert.equal(fieldOf(() => deepeval.decode(multi, decodeContext())), 'turns[1].role')
  assert.equal(fieldOf(() => deepeval.decode({ scenario: 's', turns: [{ role: 'user', content: 1 }] }, decodeContext())), 'turns[0].content')
  assert.equal(fieldOf(() => deepeval.decode({ input: 'q', context: ['a', 2] }, decodeContext())), 'context[1]')
  assert.equal(fieldOf(() => deepeval.decode({ input: 'q', tools_called: [{ inputParameters: {} }] }, decodeContext())), 'tools_called[0].name')
  assert.equal(fieldOf(() => deepeval.decode({ input: 'q', additionalMetadata: 'x' }, decodeContext())), 'additionalMetadata')
  assert.equal(fieldOf(() => deepeval.decode({ input: 'q', tools_called: '[{' }, decodeContext('csv'))), 'tools_called')
  assert.equal(fieldOf(() => deepeval.decode({ scenario: 's', turns: [{ role: 'user', content: 'a', tools_called: [{ name: 1 }] }] }, decodeContext())), 'turns[0].tools_called[0].name')
})

test('a file that mixes single- and multi-turn records is an error at the second kind', () => {
  const ctx = decodeContext()
  deepeval.decode({ input: 'q' }, ctx)
  assert.equal(fieldOf(() => deepeval.decode({ scenario: 's' }, ctx)), 'scenario')
  const multiFirst = decodeContext()
  deepeval.decode({ scenario: 's' }, multiFirst)
  assert.equal(fieldOf(() => deepeval.decode({ input: 'q' }, multiFirst)), 'scenario')
})

test('a mixed file read through the pipeline reports file and line', async () => {
  await assert.rejects(readAll(join(OWN, 'bad/mixed.jsonl')), (error: unknown) => {
    assert.ok(error instanceof EvalferryError)
    assert.deepEqual(error.location, { file: join(OWN, 'bad/mixed.jsonl'), line: 2, field: 'scenario' })
    return true
  })
})

// ---------------------------------------------------------------------------------------------
// sniffing and layout

test('sniff: sure for DeepEval keys, unsure for a bare input', () => {
  const sample = (records: unknown[], header = {}) => ({ container: 'json' as const, records, header, fileName: 'x.json' })
  assert.ok(deepeval.sniff(sample([{ input: 'q', retrieval_context: [] }])) >= 0.9)
  assert.ok(deepeval.sniff(sample([{ scenario: 's', turns: [] }])) >= 0.9)
  assert.ok(deepeval.sniff(sample([{ input: 'q', actualOutput: 'a' }], { finalized: true })) >= 0.9)
  assert.ok(deepeval.sniff(sample([{ input: 'q' }])) < 0.5)
  assert.equal(deepeval.sniff(sample([{ question: 'q' }])), 0)
})

test('layout: indent 4, Python spacing, CRLF; save_as columns per kind', () => {
  const ctx: EncodeContext = { container: 'csv', index: 0, warn: () => {} }
  assert.deepEqual(deepeval.layout('csv', [{ scenario: 's' }], ctx), {
    indent: 4,
    pythonSpacing: true,
    newline: '\r\n',
    columns: ['scenario', 'turns', 'expected_outcome', 'user_description', 'context', 'name', 'comments', 'additional_metadata', 'custom_column_key_values'],
  })
})

test('tool-call arguments that are no object are carried, not written as input_parameters, which DeepEval takes only as a dict', async () => {
  const cases: EvalCase[] = [
    {
      input: [{ role: 'user', content: 'Weather in Paris?' }],
      expected_tools: [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'log', arguments: 'raw text' },
        { name: 'rank', arguments: ['p', 1] },
      ],
    },
  ]
  const out = join(tempDir('evalferry-deepeval-tools-'), 'goldens.json')
  const report = await write(cases, out, { to: 'deepeval' })
  assert.deepEqual(report.carried, { expected_tools: 1 })
  const [golden] = JSON.parse(readFileSync(out, 'utf8')) as { expected_tools: unknown[] }[]
  assert.deepEqual(golden!.expected_tools, [{ name: 'get_weather', inputParameters: { city: 'Paris' } }, { name: 'log' }, { name: 'rank' }])
  const back: EvalCase[] = []
  for await (const c of read(out, { from: 'deepeval' })) back.push(c)
  assert.deepEqual(back[0]!.expected_tools, cases[0]!.expected_tools)
})

test('a conversation is shown as the input messages of a format without turns, and comes back as the turns it was', async () => {
  const dir = tempDir('evalferry-deepeval-turns-')
  const cases: EvalCase[] = [
    {
      scenario: 'User wants to cancel',
      turns: [
        { role: 'user', content: 'Cancel my plan', user_id: 'u1' },
        { role: 'assistant', content: 'Done.', tools_called: [{ name: 'cancel', arguments: { plan: 'pro' } }], retrieval_context: ['policy'] },
      ],
      expected_outcome: 'Subscription cancelled',
    },
    // A scenario alone has no messages to show.
    { scenario: 'User asks for a refund', expected_outcome: 'Refund explained' },
  ]
  const source = join(dir, 'goldens.json')
  await write(cases, source, { to: 'deepeval' })
  const original: EvalCase[] = []
  for await (const c of read(source, { from: 'deepeval' })) original.push(c)
  for (const [to, extension] of [['langsmith', 'jsonl'], ['evalcase', 'yaml'], ['hf', 'jsonl'], ['evals', 'json']] as const) {
    const output = join(dir, `turns.${to}.${extension}`)
    const report = await write(original, output, { to })
    assert.equal(report.carried.turns, 1, to)
    const back: EvalCase[] = []
    for await (const c of read(output, { from: to })) back.push(c)
    const back2 = join(dir, `back.${to}.json`)
    await write(back, back2, { to: 'deepeval' })
    assert.deepEqual(JSON.parse(readFileSync(back2, 'utf8')), JSON.parse(readFileSync(source, 'utf8')), to)
  }
  // As the formats show them: LangSmith's chat, evalcase's input (the scenario only where there are no turns).
  const example = JSON.parse(readFileSync(join(dir, 'turns.langsmith.jsonl'), 'utf8').split('\n')[0]!) as { inputs: { messages: { role: string; content: string; tool_calls?: { function: { name: string } }[] }[] } }
  assert.deepEqual(example.inputs.messages.map((m) => [m.role, m.content, m.tool_calls?.[0]?.function.name ?? null]), [['user', 'Cancel my plan', null], ['assistant', 'Done.', 'cancel']])
  const evalcases = (parseYaml(readFileSync(join(dir, 'turns.evalcase.yaml'), 'utf8')) as { tests: { input: unknown }[] }).tests
  assert.deepEqual((evalcases[0]!.input as { role: string; content: string }[]).map((m) => [m.role, m.content]), [['user', 'Cancel my plan'], ['assistant', 'Done.']])
  assert.equal(evalcases[1]!.input, 'User asks for a refund')
})

test('the tool calls of an expected assistant message are shown as the expected tools of DeepEval and EvalCase, and come back as the message', async () => {
  const dir = tempDir('evalferry-expected-tools-')
  const source = join(dir, 'examples.jsonl')
  const example = {
    inputs: { messages: [{ role: 'user', content: 'Weather in Paris?' }] },
    outputs: { message: { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] } },
  }
  writeFileSync(source, JSON.stringify(example) + '\n')
  const goldens = join(dir, 'goldens.json')
  await convert({ input: source, output: goldens, from: 'langsmith', to: 'deepeval' })
  const [golden] = JSON.parse(readFileSync(goldens, 'utf8')) as { expected_output: unknown; expected_tools: { name: string; inputParameters: unknown }[] }[]
  assert.equal(golden!.expected_output, null)
  assert.deepEqual(golden!.expected_tools.map((t) => [t.name, t.inputParameters]), [['get_weather', { city: 'Paris' }]])
  const evalCases = join(dir, 'cases.json')
  await convert({ input: source, output: evalCases, from: 'langsmith', to: 'evals' })
  const [record] = JSON.parse(readFileSync(evalCases, 'utf8')) as { expected_structured: { tool_calls: { name: string }[] } }[]
  assert.deepEqual(record!.expected_structured.tool_calls.map((t) => t.name), ['get_weather'])
  for (const [file, from] of [[goldens, 'deepeval'], [evalCases, 'evals']] as const) {
    const back = join(dir, `back-${from}.jsonl`)
    await convert({ input: file, output: back, from, to: 'langsmith' })
    assert.deepEqual(JSON.parse(readFileSync(back, 'utf8')), example, from)
  }
})

test('an expected answer with no text is written as DeepEval reads one: a JSON answer as its JSON text, files alone as none, not an empty answer', async () => {
  const dir = tempDir('evalferry-deepeval-notext-')
  const answer = { invoice: 'INV-1', total: 1889, lines: [{ sku: 'A', qty: 2 }] }
  const cases: EvalCase[] = [
    { input: [{ role: 'user', content: 'Extract the invoice' }], expected_output: [{ role: 'assistant', content: [{ type: 'json', value: answer }] }] },
    { input: [{ role: 'user', content: 'Write the function' }], expected_output: [{ role: 'assistant', content: [{ type: 'file', value: './snippets/solution.md' }] }] },
    { input: [{ role: 'user', content: 'Say nothing' }], expected_output: [{ role: 'assistant', content: '' }] },
  ]
  for (const extension of ['json', 'jsonl']) {
    const output = join(dir, `cases.${extension}`)
    await write(cases, output, { to: 'deepeval' })
    const text = readFileSync(output, 'utf8')
    const records = (extension === 'json' ? JSON.parse(text) : text.trim().split('\n').map((l) => JSON.parse(l))) as { expected_output: unknown }[]
    assert.deepEqual(JSON.parse(records[0]!.expected_output as string), answer, extension)
    // An answer kept in a file is none DeepEval can read; an empty answer given as such stays one.
    assert.deepEqual(records.slice(1).map((r) => r.expected_output), [null, ''], extension)
    assert.deepEqual((await readAll(output)).map((c) => c.expected_output), cases.map((c) => c.expected_output), extension)
  }
})

test('a structured answer of objects that have a role but are not messages is written as its JSON text, in every DeepEval container', async () => {
  const dir = tempDir('evalferry-deepeval-roles-')
  // A Hugging Face row whose answer is a list of records with a role (a cast list, say): a value, not a chat.
  const answer: JsonValue = [{ role: 'assistant', line: 'I am the answer' }, { role: 'narrator' }]
  const cases: EvalCase[] = [{ id: 'r1', input: [{ role: 'user', content: 'Who speaks?' }], expected_output: answer }]
  for (const extension of ['json', 'jsonl', 'csv']) {
    const output = join(dir, `cases.${extension}`)
    await write(cases, output, { to: 'deepeval' })
    const [back] = await readAll(output)
    assert.deepEqual(back!.expected_output, answer, extension)
  }
  const record = (JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as { expected_output: string }[])[0]!
  assert.deepEqual(JSON.parse(record.expected_output), answer)
})

test('a DeepEval CSV column whose every cell reads as a number or a boolean is warned of once, as pandas gives DeepEval numbers or booleans there; a column of other text too is not', async () => {
  const dir = tempDir('evalferry-deepeval-numbers-')
  const golden = (input: string, answer: string): EvalCase => ({ input: [{ role: 'user', content: input }], expected_output: [{ role: 'assistant', content: answer }] })
  const numbers = await write([golden('2+2?', '4'), golden('Bond?', '007'), golden('Big?', '1e3')], join(dir, 'numbers.csv'), { to: 'deepeval' })
  assert.deepEqual(numbers.warnings.map((w) => [w.location, w.message.slice(0, 64)]), [[{ file: join(dir, 'numbers.csv'), field: 'expected_output' }, 'every cell of the column among the first cases reads as a number']])
  assert.match(readFileSync(join(dir, 'numbers.csv'), 'utf8'), /\r\n2\+2\?,,4,/)
  const mixed = await write([golden('2+2?', '4'), golden('Capital?', 'Paris')], join(dir, 'mixed.csv'), { to: 'deepeval' })
  assert.deepEqual(mixed.warnings, [])
  const json = await write([golden('2+2?', '4')], join(dir, 'numbers.json'), { to: 'deepeval' })
  assert.deepEqual(json.warnings, [])
  // pandas reads `True` and `false` as booleans, ` 2` and `inf` as numbers; numbers beside booleans stay text.
  const booleans = await write([golden('Is it?', 'True'), golden('Is it not?', 'false')], join(dir, 'booleans.csv'), { to: 'deepeval' })
  assert.deepEqual(booleans.warnings.map((w) => [w.location.field, w.message]), [
    ['expected_output', `every cell of the column among the first cases reads as a boolean ("True"): pandas, which DeepEval reads CSV with, gives booleans, which DeepEval's text fields refuse, and its CSV loader the whole file`],
  ])
  const spaced = await write([golden('Pad?', ' 2'), golden('Limit?', 'inf')], join(dir, 'spaced.csv'), { to: 'deepeval' })
  assert.deepEqual(spaced.warnings.map((w) => w.message.slice(0, w.message.indexOf(':'))), ['every cell of the column among the first cases reads as a number (" 2")'])
  const both = await write([golden('Is it?', 'True'), golden('How many?', '2')], join(dir, 'both.csv'), { to: 'deepeval' })
  assert.deepEqual(both.warnings, [])
  // A Golden's source_file is text, which a column of numbers fails too.
  const sourced = (file: string): EvalCase => ({ ...golden('q', 'a'), extras: { deepeval: { source_file: file } } })
  const files = await write([sourced('7'), sourced('1.5')], join(dir, 'source-files.csv'), { to: 'deepeval' })
  assert.deepEqual(files.warnings.map((w) => w.location.field), ['source_file'])
})

test('a persona without a user description gives the DeepEval CSV its user_description, where DeepEval reads the simulated user from', async () => {
  const dir = tempDir('evalferry-deepeval-persona-')
  const golden: EvalCase = { scenario: 'Book a flight', turns: [{ role: 'user', content: 'Book me to Rome' }], expected_outcome: 'Flight booked', persona: { name: 'Bo', characteristics: 'busy executive, terse' } }
  const csv = join(dir, 'goldens.csv')
  const report = await write([golden], csv, { to: 'deepeval' })
  assert.equal(report.carried.user_description, 1)
  const [header, row] = readFileSync(csv, 'utf8').split('\r\n')
  assert.ok(header!.startsWith('scenario,turns,expected_outcome,user_description,'), header)
  assert.ok(row!.includes(',Flight booked,"busy executive, terse",'), row)
  const back: EvalCase[] = []
  for await (const c of read(csv, { from: 'deepeval' })) back.push(c)
  assert.deepEqual([back[0]!.user_description, back[0]!.persona], [undefined, golden.persona])
})

test("files DeepEval's own loaders read: tool types of its enum only, save_as's names in JSON Lines, lists in JSON", async () => {
  // An OpenAI tool call's type "function" fails DeepEval's ToolCall (FUNCTION or MCP): left out, and carried.
  const tools: EvalCase[] = [
    {
      input: [{ role: 'user', content: 'Weather in Oslo?' }],
      expected_tools: [{ name: 'weather', type: 'function', arguments: { city: 'Oslo' } }],
      tools_called: [{ name: 'weather', type: 'MCP', arguments: { city: 'Oslo' } }],
    },
  ]
  const { text } = await writeAll(tools, 'tool-types.json')
  const [golden] = JSON.parse(text) as { expected_tools: object[]; tools_called: object[] }[]
  assert.deepEqual(golden!.expected_tools, [{ name: 'weather', inputParameters: { city: 'Oslo' } }])
  assert.deepEqual(golden!.tools_called, [{ name: 'weather', type: 'MCP', inputParameters: { city: 'Oslo' } }])
  assert.deepEqual(await readAll(join(out, 'tool-types.json')), tools)

  // Confident AI's camelCase is its JSON's: JSON Lines gets the names DeepEval's JSON Lines reader takes.
  const confident = await readAll(join(OWN, 'confident.json'))
  const lines = join(out, 'confident.jsonl')
  await convert({ input: join(OWN, 'confident.json'), output: lines, from: 'deepeval', to: 'deepeval' })
  const [first] = (await records(readFileSync(lines, 'utf8'), 'jsonl')) as Record<string, unknown>[]
  for (const key of ['actual_output', 'expected_output', 'retrieval_context', 'additional_metadata', 'tools_called', 'expected_tools', 'source_file', 'custom_column_key_values']) assert.ok(key in first!, key)
  for (const key of ['actualOutput', 'expectedOutput', 'retrievalContext', 'additionalMetadata', 'toolsCalled', 'expectedTools', 'sourceFile', 'customColumnKeyValues']) assert.ok(!(key in first!), key)
  assert.equal(first!.expected_output, 'An LLM evaluation framework')
  assert.deepEqual(await readAll(lines), confident)

  // A context joined by hand in JSON Lines is a list in JSON, which DeepEval's JSON reader requires.
  const source = join(OWN, 'multi_turn.jsonl')
  const json = join(out, 'multi_turn.json')
  await convert({ input: source, output: json, from: 'deepeval', to: 'deepeval' })
  const written = JSON.parse(readFileSync(json, 'utf8')) as { scenario: string; context: unknown }[]
  assert.deepEqual(written.find((g) => g.scenario === 'Joined context by hand')!.context, ['a', 'b'])
  assert.deepEqual(await readAll(json), await readAll(source))
})

test('a JSON cell with a trailing comma, which DeepEval reads (trimAndLoadJson), reads as it does and is written back as it was', async () => {
  const dir = tempDir('evalferry-trailing-')
  const source = join(dir, 'trailing.csv')
  // save_as writes CSV with CRLF row ends, as pandas does.
  const text = 'input,tools_called,additional_metadata\r\nq,"[{""name"": ""t"",}]","{""a"": 1,}"\r\n'
  writeFileSync(source, text)
  const [c] = await readAll(source)
  assert.deepEqual(c!.tools_called, [{ name: 't' }])
  assert.deepEqual(c!.metadata, { a: 1 })
  const output = join(dir, 'back.csv')
  await write([c!], output, { to: 'deepeval' })
  assert.equal(readFileSync(output, 'utf8'), text)
  // Broken otherwise, it is still an error at the cell.
  writeFileSync(source, 'input,tools_called\nq,"[{""name"": ""t"",,}]"\n')
  await assert.rejects(readAll(source), (e: unknown) => e instanceof EvalferryError && e.location.field === 'tools_called' && /expected JSON text/.test(e.message))
})

test("tags, token_cost and completion_time, which no DeepEval dataset loader reads, are warned of once a file", async () => {
  const c = (i: number): EvalCase => ({ input: [{ role: 'user', content: `q${i}` }], tags: ['t'], token_cost: 0.5 })
  for (const name of ['unread.json', 'unread.jsonl', 'unread.csv']) {
    const { report } = await writeAll([c(1), c(2), c(3)], name)
    assert.deepEqual(report.warnings.map((w) => w.location.field), ['tags', 'token_cost'], name)
    assert.deepEqual(report.carried, {}, name)
  }
  const { report } = await writeAll([{ input: [{ role: 'user', content: 'q' }] }], 'read.json')
  assert.deepEqual(report.warnings, [])
})
