import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
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

test('a named pipe reads as a file: chunks arrive in order, whatever size each read returns', async () => {
  const fifo = join(dir, 'rows.csv')
  execFileSync('mkfifo', [fifo])
  const rows = Array.from({ length: 3000 }, (_, i) => `question ${i} ${'x'.repeat(500)},answer ${i}`)
  // Written in small pieces, so that reads return short chunks; the file has no size to read up to.
  const writer = createWriteStream(fifo)
  const writing = (async () => {
    const text = 'input,expected_output\n' + rows.join('\n') + '\n'
    for (let at = 0; at < text.length; at += 7000) if (!writer.write(text.slice(at, at + 7000))) await new Promise<void>((r) => writer.once('drain', () => r()))
    writer.end()
  })()
  const inputs: unknown[] = []
  for await (const c of read(fifo, { from: 'csv' })) inputs.push(c.input?.[0]?.content)
  await writing
  assert.deepEqual(
    inputs,
    rows.map((r) => r.slice(0, r.indexOf(','))),
  )
})
