import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { Int64, Utf8, vectorFromArray } from 'apache-arrow'
import { carryPlacing } from '../src/case-encoder.ts'
import { read, write } from '../src/index.ts'
import type { EvalCase } from '../src/model.ts'
import type { WriteOptions } from '../src/options.ts'
import { fixtures } from './helpers/fixtures.ts'
import { arrowParquet } from './helpers/parquet.ts'
import { tempDir } from './helpers/temp.ts'
import { collect } from './helpers/collect.ts'

/**
 * `cases` written to `output` with their carries placed, and beside it with each case encoded
 * again: each way's bytes (or its error's text), and how many carries were placed.
 */
async function bothWays(cases: EvalCase[], output: string, options: WriteOptions): Promise<{ placed: Buffer | string; again: Buffer | string; count: number }> {
  const written = async (on: boolean, path: string): Promise<Buffer | string> => {
    carryPlacing.on = on
    try {
      await write(cases, path, options)
    } catch (error) {
      return String(error)
    } finally {
      carryPlacing.on = true
    }
    return readFileSync(path)
  }
  const before = carryPlacing.placed
  const placed = await written(true, output)
  const count = carryPlacing.placed - before
  return { placed, again: await written(false, join(dirname(output), `again-${basename(output)}`)), count }
}

/** Each target that places a carry in the record it wrote, with the files it writes, and a dialect it is asked for. */
const TARGETS: { to: 'hf' | 'evalcase'; ext: string; dialect?: 'agentv' | 'evalcase' }[] = [
  { to: 'hf', ext: '.jsonl' },
  { to: 'hf', ext: '.parquet' },
  { to: 'hf', ext: '.csv' },
  { to: 'evalcase', ext: '.jsonl' },
  { to: 'evalcase', ext: '.yaml' },
  { to: 'evalcase', ext: '.yaml', dialect: 'agentv' },
  { to: 'evalcase', ext: '.yaml', dialect: 'evalcase' },
]

test('records that carry fields are written with the carry placed in the record as encoding the case again writes them, byte for byte, for every fixture', async () => {
  const dir = tempDir('evalferry-carry-placing-')
  const placed: Record<string, number> = {}
  let compared = 0
  for (const fixture of fixtures()) {
    const cases: EvalCase[] = await collect(read(fixture.path, { from: fixture.format }))
    for (const { to, ext, dialect } of TARGETS) {
      const target = `${to} ${ext}${dialect ? ` (${dialect})` : ''}`
      const both = await bothWays(cases, join(dir, `out${ext}`), { to, ...(dialect ? { dialect } : {}) })
      placed[target] = (placed[target] ?? 0) + both.count
      assert.deepEqual(both.placed, both.again, `${fixture.name} → ${target}`)
      compared++
    }
  }
  assert.ok(compared > 600, `${compared} outputs compared`)
  // Most fixtures' cases carry something the target has no field for: their carries were placed, not encoded again.
  for (const { to, ext, dialect } of TARGETS) {
    const target = `${to} ${ext}${dialect ? ` (${dialect})` : ''}`
    assert.ok(placed[target]! > 50, `${target}: ${placed[target]} carries placed`)
  }
})

test('a carry the first cases did not need is never placed in a table without a carry column: the file is written again with one', async () => {
  const dir = tempDir('evalferry-carry-placing-')
  // The first 100 cases (the layout's sample) carry nothing hf cannot hold; case 120 carries its tools.
  const cases: EvalCase[] = Array.from({ length: 150 }, (_, i) => ({
    id: `c${i}`,
    input: [{ role: 'user', content: `question ${i}` }],
    ...(i === 120 ? { tools_called: [{ name: 'search', input: { q: 'refunds' } }] } : {}),
  }))
  for (const ext of ['.csv', '.parquet']) {
    const output = join(dir, `late${ext}`)
    const both = await bothWays(cases, output, { to: 'hf' })
    assert.deepEqual(both.placed, both.again, `hf ${ext}: the outputs differ`)
    const back = await collect(read(output, { from: 'hf' }))
    assert.deepEqual(back[120]!.tools_called, [{ name: 'search', input: { q: 'refunds' } }])
  }
})

test('a case whose metadata holds a carry of its own at the carry\'s key is encoded again, its carry written where that key was', async () => {
  const dir = tempDir('evalferry-carry-placing-')
  // The case's own carry-shaped value sits between two keys; what the target cannot hold joins it there.
  const cases: EvalCase[] = Array.from({ length: 3 }, (_, i) => ({
    id: `c${i}`,
    input: [{ role: 'user', content: `question ${i}` }],
    expected_output: `answer ${i}`,
    tools_called: [{ name: 'search' }],
    extras: { deepeval: { additional: i } },
    metadata: { a: i, evalferry: { description: `own ${i}` }, b: i },
  }))
  for (const { to, ext } of [{ to: 'hf', ext: '.jsonl' }, { to: 'evalcase', ext: '.jsonl' }] as const) {
    const both = await bothWays(cases, join(dir, `own${ext}`), { to })
    assert.deepEqual(both.placed, both.again, `${to} ${ext}`)
    // evalcase keeps the metadata's order (hf's carry column is its row's last, as ever).
    const row = JSON.parse(both.placed.toString().split('\n')[1]!) as { metadata?: object }
    if (to === 'evalcase') assert.deepEqual(Object.keys(row.metadata!), ['a', 'evalferry', 'b'])
  }
})

test('a JSON Lines row whose source header has the carry column before others gets its carry in that column\'s place, as encoding the case again writes it', async () => {
  const dir = tempDir('evalferry-carry-placing-')
  // A dataset evalferry wrote whose columns were reordered since: the carry column comes second.
  const features = {
    input: { dtype: 'string', _type: 'Value' },
    evalferry: { dtype: 'string', _type: 'Value' },
    expected_output: { dtype: 'string', _type: 'Value' },
    label: { names: ['neg', 'pos'], _type: 'ClassLabel' },
  }
  const tools = (i: number) => [{ name: 'search', input: { q: `refunds ${i}` } }]
  const n = 3
  const text = (values: string[]) => vectorFromArray(values, new Utf8()).data[0]!
  const source = await arrowParquet(
    join(dir, 'reordered.parquet'),
    {
      input: text(Array.from({ length: n }, (_, i) => `question ${i}`)),
      evalferry: text(Array.from({ length: n }, (_, i) => JSON.stringify({ tools_called: tools(i) }))),
      expected_output: text(Array.from({ length: n }, (_, i) => `answer ${i}`)),
      label: vectorFromArray(Array.from({ length: n }, (_, i) => BigInt(i % 2)), new Int64()).data[0]!,
    },
    new Map([['huggingface', JSON.stringify({ info: { features } })]]),
  )
  const cases: EvalCase[] = await collect(read(source, { from: 'hf' }))
  assert.deepEqual(cases.map((c) => c.tools_called), [tools(0), tools(1), tools(2)])
  const output = join(dir, 'reordered.jsonl')
  const both = await bothWays(cases, output, { to: 'hf' })
  assert.deepEqual(both.placed, both.again, 'hf .jsonl: the outputs differ')
  // The ClassLabel makes the features travel with the first case, so the source's header is the file's.
  const rows = both.placed.toString().trimEnd().split('\n').map((line) => JSON.parse(line) as object)
  for (const row of rows.slice(1)) assert.deepEqual(Object.keys(row), ['input', 'evalferry', 'expected_output', 'label'])
  const back = await collect(read(output, { from: 'hf' }))
  assert.deepEqual(back.map((c) => c.tools_called), [tools(0), tools(1), tools(2)])
  assert.deepEqual(back.map((c) => c.metadata?.label), ['neg', 'pos', 'neg'])
})

test('an AgentV 5 test, whose metadata is written apart from the variables it was read with, is encoded again with its carry', async () => {
  const dir = tempDir('evalferry-carry-placing-')
  // `topic` is a variable and `source` the test's own metadata: the case holds both in its metadata.
  const suite = join(dir, 'suite.yaml')
  writeFileSync(
    suite,
    [
      'name: support',
      'providers:',
      '  - llm',
      'prompts:',
      '  - "{{ input }}"',
      'tests:',
      '  - id: refund',
      '    assert:',
      '      - Explains the refund window',
      '    vars:',
      '      input: How long do I have to ask for a refund?',
      '      expected_output: Thirty days from delivery.',
      '      topic: refunds',
      '    metadata:',
      '      source: tickets',
      '  - id: shipping',
      '    assert:',
      '      - Names the carrier',
      '    vars:',
      '      input: Who ships my order?',
      '      topic: shipping',
      '    metadata:',
      '      source: faq',
      '',
    ].join('\n'),
  )
  const read5: EvalCase[] = await collect(read(suite, { from: 'evalcase' }))
  assert.deepEqual(read5.map((c) => c.metadata), [{ topic: 'refunds', source: 'tickets' }, { topic: 'shipping', source: 'faq' }])
  // The tool calls an AgentV 5 test has no key for: they are carried.
  const tools = (i: number) => [{ name: 'lookup', input: { order: i } }]
  const cases = read5.map((c, i) => ({ ...c, tools_called: tools(i) }))
  for (const ext of ['.yaml', '.jsonl']) {
    const output = join(dir, `agentv5${ext}`)
    const both = await bothWays(cases, output, { to: 'evalcase' })
    assert.deepEqual(both.placed, both.again, `evalcase ${ext}: the outputs differ`)
    const back = await collect(read(output, { from: 'evalcase' }))
    assert.deepEqual(back.map((c) => c.tools_called), [tools(0), tools(1)], ext)
    assert.deepEqual(back.map((c) => c.metadata), read5.map((c) => c.metadata), ext)
  }
})
