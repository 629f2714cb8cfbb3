import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { carryPlacing } from '../src/case-encoder.ts'
import { read, write } from '../src/index.ts'
import type { EvalCase } from '../src/model.ts'
import { fixtures } from './helpers/fixtures.ts'
import { tempDir } from './helpers/temp.ts'

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
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
  try {
    const placed: Record<string, number> = {}
    let compared = 0
    for (const fixture of fixtures()) {
      const cases: EvalCase[] = await collect(read(fixture.path, { from: fixture.format }))
      for (const { to, ext, dialect } of TARGETS) {
        const target = `${to} ${ext}${dialect ? ` (${dialect})` : ''}`
        const bytes = async (on: boolean): Promise<Buffer | string> => {
          const output = join(dir, `out-${on}${ext}`)
          carryPlacing.on = on
          try {
            await write(cases, output, { to, ...(dialect ? { dialect } : {}) })
          } catch (error) {
            return String(error)
          } finally {
            carryPlacing.on = true
          }
          return readFileSync(output)
        }
        const before = carryPlacing.placed
        const fast = await bytes(true)
        placed[target] = (placed[target] ?? 0) + carryPlacing.placed - before
        const again = await bytes(false)
        assert.deepEqual(fast, again, `${fixture.name} → ${target}`)
        compared++
      }
    }
    assert.ok(compared > 600, `${compared} outputs compared`)
    // Most fixtures' cases carry something the target has no field for: their carries were placed, not encoded again.
    for (const { to, ext, dialect } of TARGETS) {
      const target = `${to} ${ext}${dialect ? ` (${dialect})` : ''}`
      assert.ok(placed[target]! > 50, `${target}: ${placed[target]} carries placed`)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a carry the first cases did not need is never placed in a table without a carry column: the file is written again with one', async () => {
  const dir = tempDir('evalferry-carry-placing-')
  try {
    // The first 100 cases (the layout's sample) carry nothing hf cannot hold; case 120 carries its tools.
    const cases: EvalCase[] = Array.from({ length: 150 }, (_, i) => ({
      id: `c${i}`,
      input: [{ role: 'user', content: `question ${i}` }],
      ...(i === 120 ? { tools_called: [{ name: 'search', input: { q: 'refunds' } }] } : {}),
    }))
    for (const ext of ['.csv', '.parquet']) {
      const outputs: Buffer[] = []
      for (const on of [true, false]) {
        const output = join(dir, `late-${on}${ext}`)
        carryPlacing.on = on
        try {
          await write(cases, output, { to: 'hf' })
        } finally {
          carryPlacing.on = true
        }
        outputs.push(readFileSync(output))
      }
      assert.ok(outputs[0]!.equals(outputs[1]!), `hf ${ext}: the outputs differ`)
      const back = await collect(read(join(dir, `late-true${ext}`), { from: 'hf' }))
      assert.deepEqual(back[120]!.tools_called, [{ name: 'search', input: { q: 'refunds' } }])
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a case whose metadata holds a carry of its own at the carry\'s key is encoded again, its carry written where that key was', async () => {
  const dir = tempDir('evalferry-carry-placing-')
  try {
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
      const outputs: string[] = []
      for (const on of [true, false]) {
        const output = join(dir, `own-${on}${ext}`)
        carryPlacing.on = on
        try {
          await write(cases, output, { to })
        } finally {
          carryPlacing.on = true
        }
        outputs.push(readFileSync(output, 'utf8'))
      }
      assert.equal(outputs[0], outputs[1], `${to} ${ext}`)
      // evalcase keeps the metadata's order (hf's carry column is its row's last, as ever).
      const row = JSON.parse(outputs[0]!.split('\n')[1]!) as { metadata?: object }
      if (to === 'evalcase') assert.deepEqual(Object.keys(row.metadata!), ['a', 'evalferry', 'b'])
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
