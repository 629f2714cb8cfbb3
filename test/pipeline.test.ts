import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { read, write } from '../src/pipeline.ts'
import type { EvalCase } from '../src/model.ts'

const dir = mkdtempSync(join(tmpdir(), 'evalferry-pipeline-'))
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

async function collect(path: string, from: string): Promise<EvalCase[]> {
  const out: EvalCase[] = []
  for await (const c of read(path, { from })) out.push(c)
  return out
}

test('generated ids avoid the ids that cases already have', async () => {
  const cases: EvalCase[] = [
    { input: [{ role: 'user', content: 'first, without an id' }] },
    { id: 'case-1', input: [{ role: 'user', content: 'second, whose id looks generated' }] },
  ]
  for (const [format, ext] of [['evalcase', '.yaml'], ['evals', '.jsonl']] as const) {
    const out = join(dir, `ids-${format}${ext}`)
    await write(cases, out, { to: format })
    const back = await collect(out, format)
    assert.deepEqual(back.map((c) => [c.id, c.generated]), [['case-1-2', ['id']], ['case-1', undefined]], format)
    // Converting on drops the generated id again.
    const again = join(dir, `ids-${format}.json`)
    await write(back, again, { to: 'deepeval' })
    assert.deepEqual((await collect(again, 'deepeval')).map((c) => c.id), [undefined, 'case-1'])
  }
})
