import { test } from 'node:test'
import assert from 'node:assert/strict'
import { applyCarry, deepEqual, lostFields, withCarry } from '../src/carry.ts'
import type { EvalCase } from '../src/model.ts'

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
