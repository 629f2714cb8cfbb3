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

test('hf rows that carry fields are written with the carry placed in the row as encoding the case again writes them, byte for byte, for every fixture', async () => {
  const dir = tempDir('evalferry-carry-placing-')
  try {
    let placed = 0
    let compared = 0
    for (const fixture of fixtures()) {
      const cases: EvalCase[] = await collect(read(fixture.path, { from: fixture.format }))
      for (const ext of ['.jsonl', '.parquet', '.csv']) {
        const bytes = async (on: boolean): Promise<Buffer | string> => {
          const output = join(dir, `out-${on}${ext}`)
          carryPlacing.on = on
          try {
            await write(cases, output, { to: 'hf' })
          } catch (error) {
            return String(error)
          } finally {
            carryPlacing.on = true
          }
          return readFileSync(output)
        }
        const before = carryPlacing.placed
        const fast = await bytes(true)
        placed += carryPlacing.placed - before
        const again = await bytes(false)
        assert.deepEqual(fast, again, `${fixture.name} → hf ${ext}`)
        compared++
      }
    }
    assert.ok(compared > 250, `${compared} outputs compared`)
    // Most fixtures' cases carry something hf has no column for: their carries were placed, not encoded again.
    assert.ok(placed > 100, `${placed} carries placed`)
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
