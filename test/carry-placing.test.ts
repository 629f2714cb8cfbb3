import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { carryPlacing } from '../src/case-encoder.ts'
import { read, write } from '../src/index.ts'
import type { EvalCase } from '../src/model.ts'
import type { WriteOptions } from '../src/options.ts'
import { fixtures } from './helpers/fixtures.ts'
import { tempDir } from './helpers/temp.ts'

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

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
  try {
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
      const output = join(dir, `late${ext}`)
      const both = await bothWays(cases, output, { to: 'hf' })
      assert.deepEqual(both.placed, both.again, `hf ${ext}: the outputs differ`)
      const back = await collect(read(output, { from: 'hf' }))
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
      const both = await bothWays(cases, join(dir, `own${ext}`), { to })
      assert.deepEqual(both.placed, both.again, `${to} ${ext}`)
      // evalcase keeps the metadata's order (hf's carry column is its row's last, as ever).
      const row = JSON.parse(both.placed.toString().split('\n')[1]!) as { metadata?: object }
      if (to === 'evalcase') assert.deepEqual(Object.keys(row.metadata!), ['a', 'evalferry', 'b'])
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
