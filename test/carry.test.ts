import { test } from 'node:test'
import assert from 'node:assert/strict'
import { applyCarry, deepEqual, isCarry, lostFields, withCarry } from '../src/carry.ts'
import type { EvalCase, JsonObject } from '../src/model.ts'
import type { FormatName } from '../adapters/types.ts'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { convert } from '../src/convert.ts'
import { read } from '../src/read.ts'
import { tempDir } from './helpers/temp.ts'

test('deepEqual treats undefined-valued keys as absent and compares arrays in order', () => {
  assert.ok(deepEqual({ a: 1, b: undefined }, { a: 1 }))
  assert.ok(!deepEqual({ a: [1, 2] }, { a: [2, 1] }))
  assert.ok(!deepEqual({ a: null }, {}))
  assert.ok(!deepEqual([], {}))
})

test('what a record does not give back is carried, and applying it restores the case', () => {
  const original: EvalCase = {
    input: [{ role: 'user', content: 'q' }],
    context: ['a | b', 'c'],
    turns: [{ role: 'user', content: 'hi' }],
    extras: { deepeval: { source_file: 'x.pdf' }, evalcase: { $file: { description: 'd' } } },
  }
  // What a format that splits lists on '|', knows no turns and reads its own extras would give back.
  const back: EvalCase = {
    input: [{ role: 'user', content: 'q' }],
    context: ['a ', ' b', 'c'],
    extras: { evalcase: { $file: { description: 'd' } } },
    metadata: {},
  }
  const carried = lostFields(original, back)
  assert.deepEqual(carried, {
    context: ['a | b', 'c'],
    turns: [{ role: 'user', content: 'hi' }],
    extras: { deepeval: { source_file: 'x.pdf' } },
    metadata: null,
  })
  const written = withCarry({ ...back, metadata: undefined }, carried)
  assert.deepEqual(written.metadata, { evalferry: carried })
  const restored = applyCarry({ ...back, metadata: { evalferry: carried } })
  assert.deepEqual(JSON.parse(JSON.stringify(restored)), JSON.parse(JSON.stringify(original)))
})

test('metadata whose keys all came back, in order, carries only the values that did not; other metadata travels whole', () => {
  const original: EvalCase = { input: [{ role: 'user', content: 'q' }], metadata: { review: 'long text', stars: 3, tags: ['a'] } }
  // A table's cells: text comes back, a number and a list as their text.
  const back: EvalCase = { input: [{ role: 'user', content: 'q' }], metadata: { review: 'long text', stars: '3', tags: '["a"]' } }
  const carried = lostFields(original, back)
  assert.deepEqual(carried, { $metadata: { stars: 3, tags: ['a'] } })
  assert.ok(isCarry(carried))
  const restored = applyCarry({ ...back, metadata: { ...back.metadata, evalferry: carried } })
  assert.deepEqual(restored, original)
  assert.deepEqual(Object.keys(restored.metadata!), ['review', 'stars', 'tags'])
  // A key lost, or added, or the keys in another order with a value changed: the metadata is carried whole, as it was.
  const others: JsonObject[] = [{ review: 'long text', stars: 3 }, { review: 'long text', stars: 3, tags: ['a'], more: 1 }, { stars: '3', review: 'long text', tags: ['a'] }]
  for (const other of others) {
    assert.deepEqual(lostFields(original, { ...back, metadata: other }), { metadata: original.metadata! })
  }
})

test('ids generated for a target are marked and not carried as lost', () => {
  const carried = lostFields({ input: [] }, { id: 'case-1', input: [] }, ['id'])
  assert.deepEqual(carried, {})
})

test('an empty metadata object survives the slot being taken off again', () => {
  const c: EvalCase = { metadata: {}, tags: ['x'] }
  const written = withCarry(c, { tags: ['x'] })
  assert.deepEqual(written.metadata, { evalferry: { tags: ['x'], metadata: {} } })
  assert.deepEqual(applyCarry({ metadata: written.metadata! }), { metadata: {}, tags: ['x'] })
})

test('a value of the case\'s own at metadata.evalferry travels through every format and comes back, where a carry replaced it', async () => {
  const dir = tempDir('evalferry-slot-')
  try {
    const input = join(dir, 'slot.json')
    writeFileSync(input, '[{"id": "x", "input": "hi", "metadata": {"evalferry": "user value", "k": 1}}]')
    const want = { evalferry: 'user value', k: 1 }
    const original: EvalCase[] = []
    for await (const c of read(input, { from: 'evals' })) original.push(c)
    assert.deepEqual(original[0]!.metadata, want)
    // Where nothing else needs carrying, the value is written as it is; a carry (DeepEval's and
    // LangSmith's of the id, CSV's of the number 1 as text) takes its place and holds the metadata with it.
    const cases = [
      ['deepeval', 'json', { id: 1, metadata: 1 }],
      ['hf', 'jsonl', {}],
      ['langsmith', 'jsonl', { id: 1, metadata: 1 }],
      ['evalcase', 'yaml', {}],
      ['csv', 'csv', { metadata: 1 }],
      ['hf', 'parquet', {}],
    ] as const
    for (const [to, extension, carried] of cases) {
      const output = join(dir, `slot-${to}.${extension}`)
      const report = await convert({ input, output, from: 'evals', to })
      assert.deepEqual(report.carried, carried, `${to} ${extension}`)
      if (to === 'hf' && extension === 'jsonl') assert.match(readFileSync(output, 'utf8'), /"evalferry":"user value"/)
      const back: EvalCase[] = []
      for await (const c of read(output, { from: to })) back.push(c)
      assert.deepEqual(back[0]!.metadata, want, `${to} ${extension}`)
      assert.equal(back[0]!.input?.length, 1)
    }
    // Without extras nothing takes the value's place: only what is lost is named.
    const plain = await convert({ input, output: join(dir, 'slot-plain.json'), from: 'evals', to: 'deepeval', extras: false })
    assert.deepEqual(plain.dropped, { id: 1 })
    const [golden] = JSON.parse(readFileSync(join(dir, 'slot-plain.json'), 'utf8')) as { additional_metadata: unknown }[]
    assert.deepEqual(golden!.additional_metadata, want)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('only an object of case fields under metadata.evalferry is a carry; a user object of other keys, or an empty one, is their metadata', async () => {
  assert.equal(isCarry({ name: 'x' }), true)
  assert.equal(isCarry({ generated: ['id'], id: 'case-1' }), true)
  assert.equal(isCarry({ $file: { description: 'd' } }), true)
  assert.equal(isCarry({ own: true }), false)
  assert.equal(isCarry({ name: 'x', own: true }), false)
  assert.equal(isCarry({}), false)
  assert.equal(isCarry('s'), false)

  const dir = tempDir('evalferry-own-carry-')
  try {
    const input = join(dir, 'own.json')
    const records = [
      { input: 'q1', additional_metadata: { evalferry: { own: true }, k: 1 } },
      { input: 'q2', additional_metadata: { evalferry: {} } },
    ]
    writeFileSync(input, JSON.stringify(records))
    const metadataOf = async (file: string, from: FormatName) => {
      const out: unknown[] = []
      for await (const c of read(file, { from })) out.push(c.metadata)
      return out
    }
    const expected = records.map((r) => r.additional_metadata)
    assert.deepEqual(await metadataOf(input, 'deepeval'), expected)
    // Through every format, the user's objects come back as they were, and back to DeepEval too.
    for (const [to, extension] of [['langsmith', 'jsonl'], ['hf', 'jsonl'], ['evalcase', 'yaml'], ['csv', 'csv'], ['hf', 'parquet'], ['evals', 'json']] as const) {
      const output = join(dir, `own-${to}.${extension}`)
      await convert({ input, output, from: 'deepeval', to })
      assert.deepEqual(await metadataOf(output, to), expected, `${to} ${extension}`)
      const back = join(dir, `back-${to}.json`)
      await convert({ input: output, output: back, from: to, to: 'deepeval' })
      assert.deepEqual(await metadataOf(back, 'deepeval'), expected, `${to} ${extension} → deepeval`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the report names the keys of a format\'s extras the written record did not give back, not every key the carry holds', async () => {
  const dir = tempDir('evalferry-extras-keys-')
  try {
    // A DeepEval record of two keys: its CSV row has every column, so only the key list is lost.
    const input = join(dir, 'goldens.json')
    writeFileSync(input, '[{"input": "q", "custom_column_key_values": {"topic": "biology"}}]')
    const output = join(dir, 'goldens.csv')
    const report = await convert({ input, output, from: 'deepeval', to: 'deepeval' })
    assert.deepEqual(report.carried, { 'extras.deepeval.$keys': 1 })
    const back = join(dir, 'back.json')
    await convert({ input: output, output: back, from: 'deepeval', to: 'deepeval' })
    assert.deepEqual(JSON.parse(readFileSync(back, 'utf8')), [{ input: 'q', custom_column_key_values: { topic: 'biology' } }])
    // Without extras, the keys' spelling is not kept, and is no dropped field: --strict has nothing to refuse.
    const dropped = await convert({ input, output: join(dir, 'plain.csv'), from: 'deepeval', to: 'deepeval', extras: false, strict: true })
    assert.deepEqual(dropped.dropped, {})
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
