import { test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { IdSet, ownString } from '../src/ids.ts'

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

/** Ids of a few prefixes, numbers mostly near each other and some far apart (past what a dense bitmap holds), some zero-padded. */
const numberedId = fc
  .tuple(
    fc.constantFrom('q', 'case-', 'case-0', 'ex-1-', '', 'Ω-'),
    fc.oneof({ arbitrary: fc.nat(3000), weight: 9 }, { arbitrary: fc.nat(1e12), weight: 1 }),
    fc.boolean(),
  )
  .map(([prefix, n, padded]) => prefix + (padded ? String(n).padStart(6, '0') : String(n)))

test('IdSet: numbered ids in any order, with leading zeros, repeats and gaps, agree with a Set', () => {
  fc.assert(
    fc.property(fc.array(numberedId, { maxLength: 4000 }), fc.array(fc.nat(), { maxLength: 400 }), (ids, repeats) => {
      agreeWithSet([...ids, ...repeats.map((k) => ids[k % Math.max(ids.length, 1)] ?? 'q1')])
    }),
    { seed: 7, numRuns: 40 },
  )
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
  const hex = fc.tuple(fc.bigInt({ min: 0n, max: 2n ** 48n }), fc.nat(9)).map(([n, d]) => n.toString(16) + String(d))
  fc.assert(
    fc.property(fc.array(hex, { minLength: 1500, maxLength: 3000 }), (ids) => {
      agreeWithSet([...ids, ...ids.slice(0, 300)])
    }),
    { seed: 11, numRuns: 5 },
  )
})

test('StringTable: numbers strings in the order they came and gives each back as it was, whatever its characters', async () => {
  const { StringTable } = await import('../src/ids.ts')
  const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'grapheme-ascii', maxLength: 40 }), fc.constantFrom('', 'café', '\ud800', 'a\udc00b', 'ÿ', 'Ā'))
  fc.assert(
    fc.property(fc.array(anyText, { maxLength: 3000 }), (texts) => {
      const table = new StringTable()
      const numbers = new Map<string, number>()
      for (const text of texts) {
        const known = numbers.get(text)
        assert.equal(table.indexOf(text), known ?? -1)
        const added = table.add(text)
        if (known === undefined) {
          assert.equal(added, numbers.size)
          numbers.set(text, added)
        } else {
          assert.equal(added, -1 - known)
        }
      }
      assert.equal(table.size, numbers.size)
      assert.deepEqual([...table], [...numbers.keys()])
    }),
    { seed: 5, numRuns: 30 },
  )
})

test('StringTable: strings longer than a chunk, and a million of them across many chunks and table growths', async () => {
  const { StringTable } = await import('../src/ids.ts')
  const table = new StringTable()
  const long = 'x'.repeat(3 << 20)
  const wide = 'Ω'.repeat(700_000)
  assert.equal(table.add('first'), 0)
  assert.equal(table.add(long), 1)
  assert.equal(table.add(wide), 2)
  for (let i = 0; i < 1_000_000; i++) table.add(`${i.toString(36)}-ü-${i}`)
  assert.equal(table.size, 1_000_003)
  assert.equal(table.get(1), long)
  assert.equal(table.get(2), wide)
  assert.equal(table.add(long + 'y'), 1_000_003)
  assert.equal(table.add(long), -2)
  for (const i of [0, 1, 777_777, 999_999]) {
    assert.equal(table.indexOf(`${i.toString(36)}-ü-${i}`), i + 3)
    assert.equal(table.get(i + 3), `${i.toString(36)}-ü-${i}`)
  }
  assert.equal(table.indexOf('1000000-ü-1000000'), -1)
})

test('StringTable marks: a reader and a writer sharing one table each keep their own set of its strings, each string kept once', async () => {
  const { StringTable } = await import('../src/ids.ts')
  // Ids as a reader sees them and a writer writes them: mostly the same, some only on one side, some repeated; some end in digits.
  const id = fc.oneof(fc.uuid(), fc.constantFrom('a', 'b', 'a-2', 'case-3', 'Ω'), fc.string({ maxLength: 6 }))
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), id), { maxLength: 2000 }), (steps) => {
      const table = new StringTable()
      const written = new IdSet(table, 2)
      const seen = new Set<string>()
      const writtenReference = new Set<string>()
      for (const [reads, text] of steps) {
        if (reads) {
          // The reader's mark is told apart from the writer's: an id only written is new to it.
          const index = table.mark(text, 1)
          assert.equal(index < 0, seen.has(text), `mark(${JSON.stringify(text)})`)
          assert.equal(table.get(index < 0 ? -1 - index : index), text)
          seen.add(text)
        } else {
          assert.equal(written.has(text), writtenReference.has(text))
          assert.equal(written.add(text), !writtenReference.has(text), `add(${JSON.stringify(text)})`)
          writtenReference.add(text)
        }
        assert.equal(table.has(text, 1), seen.has(text))
      }
      // In the order they came into the table, which the writer may have put them in first.
      assert.deepEqual([...table.marked(1)].sort(), [...seen].sort())
      assert.equal(written.size, writtenReference.size)
      // Every string the two sides kept is in the table once (the writer keeps numbered ids in bitmaps, not here).
      assert.ok(table.size <= new Set([...seen, ...writtenReference]).size)
      for (const text of seen) assert.ok(table.indexOf(text) >= 0)
    }),
    { seed: 17, numRuns: 40 },
  )
})

test('ownString gives the same string, lone surrogates included, and keeps none of the text it was cut from alive', () => {
  fc.assert(fc.property(fc.string({ unit: 'binary' }), (s) => ownString(s) === s))
  assert.equal(ownString('\ud800x\udfff'), '\ud800x\udfff')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  // Ids cut from 300 texts of 100 KB each: kept as they are, they keep every text.
  const heldAfter = (keep: (id: string) => string): number => {
    gc()
    const before = process.memoryUsage().heapUsed
    const ids: string[] = []
    for (let i = 0; i < 300; i++) ids.push(keep((String.fromCharCode(0x100 + i) + 'y'.repeat(50_000) + i).slice(100, 130)))
    gc()
    const held = process.memoryUsage().heapUsed - before
    assert.equal(ids.length, 300)
    return held
  }
  assert.ok(heldAfter((id) => id) > 20e6, 'a substring keeps its text')
  assert.ok(heldAfter(ownString) < 2e6, 'an own string keeps 30 characters')
})
