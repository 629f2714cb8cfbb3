import { test } from 'node:test'
import assert from 'node:assert/strict'
import { prng } from '../bench/data.ts'
import { IdSet } from '../src/ids.ts'

/** Adds every id to an IdSet and to a Set, asking both before each add: they must agree throughout. */
function agreeWithSet(ids: string[]): IdSet {
  const set = new IdSet()
  const reference = new Set<string>()
  for (const id of ids) {
    assert.equal(set.has(id), reference.has(id), `has(${JSON.stringify(id)})`)
    assert.equal(set.add(id), !reference.has(id), `add(${JSON.stringify(id)})`)
    reference.add(id)
    assert.equal(set.size, reference.size)
  }
  return set
}

test('IdSet: numbered ids in any order, with leading zeros, repeats and gaps, agree with a Set', () => {
  const random = prng(7)
  const pick = (n: number) => Math.floor(random() * n)
  const prefixes = ['q', 'case-', 'case-0', 'ex-1-', '', 'Ω-']
  const ids: string[] = []
  for (let i = 0; i < 20000; i++) {
    const prefix = prefixes[pick(prefixes.length)]!
    // Mostly near each other, some far apart (past what a dense bitmap holds), some repeated.
    const n = random() < 0.9 ? pick(3000) : pick(1e12)
    const digits = random() < 0.2 ? String(n).padStart(6, '0') : String(n)
    ids.push(prefix + digits)
    if (random() < 0.1) ids.push(ids[pick(ids.length)]!)
  }
  agreeWithSet(ids)
})

test('IdSet: ids that differ only in leading zeros, descending numbers and ids without a number are told apart', () => {
  const set = agreeWithSet(['q1', 'q01', 'q001', 'q0', 'q00', '0', '00', '7', 'q', '', 'abc', 'q9999999999999999', 'q99999999999999999'])
  assert.equal(set.size, 13)
  const descending: string[] = []
  for (let n = 200000; n >= 0; n -= 3) descending.push(`row-${n}`)
  agreeWithSet([...descending, ...descending.slice(0, 1000)])
})

test('IdSet: a number kept as a string while far from the others is still found once the bitmap grows over it', () => {
  const ids = ['p100000', 'p0', 'p7']
  for (let n = 100001; n < 103000; n++) ids.push(`p${n}`)
  // Now dense enough to reach down to 0: p0 and p7 are strings inside the bitmap's range.
  ids.push('p5', 'p0', 'p7', 'p100000')
  const set = agreeWithSet(ids)
  assert.equal(set.size, ids.length - 3)
})

test('IdSet: ids that only happen to end in digits (hex, more prefixes than kept) agree with a Set', () => {
  const random = prng(11)
  const ids: string[] = []
  for (let i = 0; i < 5000; i++) ids.push(Math.floor(random() * 2 ** 48).toString(16) + String(Math.floor(random() * 10)))
  agreeWithSet([...ids, ...ids.slice(0, 500)])
})
