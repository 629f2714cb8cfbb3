import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { detect } from '../src/detect.ts'
import { convert } from '../src/pipeline.ts'
import { fixtures } from './helpers/fixtures.ts'
import { tempDir } from './helpers/temp.ts'

/** Fixtures whose content cannot tell their format, with what they are read as and why. */
const READ_AS: Record<string, { format: string; why: string }> = {
  'hf/gsm.csv': { format: 'csv', why: 'a Hugging Face CSV export is a plain table; the table format maps it the same way' },
}

for (const fixture of fixtures()) {
  const key = `${fixture.format}/${basename(fixture.path)}`
  test(`detect tells ${key} from its content`, async () => {
    const d = await detect(fixture.path, { count: true })
    assert.equal(d.format, READ_AS[key]?.format ?? fixture.format, `candidates: ${JSON.stringify(d.candidates)}`)
    assert.equal(d.container, fixture.container)
    assert.ok(d.confidence > 0)
    assert.ok((d.records ?? 0) > 0)
  })
}

test('detect reads a .json file that holds JSON Lines, and reports the others as they are', async () => {
  const dir = tempDir('evalferry-detect-')
  const lines = join(dir, 'lines.json')
  writeFileSync(lines, '{"inputs": {"question": "a"}, "outputs": {"answer": "b"}, "dataset_id": "d"}\n{"inputs": {"question": "c"}, "outputs": null, "dataset_id": "d"}\n')
  const d = await detect(lines, { count: true })
  assert.deepEqual([d.format, d.container, d.records], ['langsmith', 'jsonl', 2])
  const garbage = join(dir, 'garbage.json')
  writeFileSync(garbage, '[{"input": "a"}]\nnot json\n')
  await assert.rejects(detect(garbage), (e: Error & { location?: { file?: string; line?: number } }) => e.location?.file === garbage && e.location.line === 2 && /after the end of the JSON document/.test(e.message))
})

test('a file that holds no record converts without --from, to an empty dataset; one whose records cannot be told still needs it', async () => {
  const dir = tempDir('evalferry-detect-')
  for (const [name, text, format] of [
    ['empty.jsonl', '', 'evalcase'],
    ['blank.jsonl', '\n\n', 'evalcase'],
    ['empty.json', '[]\n', 'deepeval'],
  ] as const) {
    const path = join(dir, name)
    writeFileSync(path, text)
    assert.equal((await detect(path)).format, format, name)
    const out = join(dir, `${name}.out.json`)
    const report = await convert({ input: path, output: out, to: 'deepeval' })
    assert.deepEqual(report.records, { read: 0, written: 0, skipped: 0 })
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), [])
  }
  const unknown = join(dir, 'unknown.jsonl')
  writeFileSync(unknown, '[1, 2]\n')
  await assert.rejects(detect(unknown), /cannot tell which format this jsonl file is; name it with --from/)
})

test('a plain table converted to hf is read as hf reads it: its columns keep their names, with nothing carried', async () => {
  const table = join(import.meta.dirname, 'fixtures', 'hf', 'gsm.csv')
  assert.equal((await detect(table)).format, 'csv')
  assert.equal((await detect(table, { target: 'hf' })).format, 'hf')
  // Another target keeps the generic table, which wins a tie.
  assert.equal((await detect(table, { target: 'langsmith' })).format, 'csv')
  const out = join(tempDir('evalferry-detect-'), 'gsm.jsonl')
  const report = await convert({ input: table, output: out, to: 'hf' })
  assert.equal(report.from, 'hf')
  assert.deepEqual(report.carried, {})
  const rows = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  assert.deepEqual(Object.keys(rows[0]!), ['question', 'answer', 'subject'])
  assert.equal(rows[0]!.question, 'What is H2O?')
})

test('evalcase JSON Lines whose cases do not all have an expected output is read back as evalcase, not as EvalCase JSON', async () => {
  const dir = tempDir('evalferry-detect-')
  // The bundled goldens: case-2 has no expected output, and its metadata has a difficulty, as EvalCase JSON's often do.
  const goldens = join(import.meta.dirname, '..', 'examples', 'goldens.json')
  const lines = join(dir, 'cases.jsonl')
  await convert({ input: goldens, output: lines, to: 'evalcase' })
  const written = readFileSync(lines, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  assert.deepEqual(written.map((c) => 'expected_output' in c), [true, false, true])
  const d = await detect(lines)
  assert.equal(d.format, 'evalcase', JSON.stringify(d.candidates))
  assert.equal(d.candidates.find((c) => c.format === 'evals')?.confidence, 0.2)
  const back = join(dir, 'back.json')
  const report = await convert({ input: lines, output: back, to: 'deepeval' })
  assert.deepEqual(report.carried, {})
  assert.deepEqual(JSON.parse(readFileSync(back, 'utf8')), JSON.parse(readFileSync(goldens, 'utf8')))
})

test('evalcase JSON Lines of cases with no input (classification rows, their columns in the metadata) is read back as evalcase', async () => {
  const dir = tempDir('evalferry-detect-')
  const rows = join(dir, 'reviews.jsonl')
  writeFileSync(rows, '{"text": "Great movie", "label": 1}\n{"text": "Dull", "label": 0}\n')
  const lines = join(dir, 'cases.jsonl')
  await convert({ input: rows, output: lines, from: 'hf', to: 'evalcase' })
  assert.deepEqual(JSON.parse(readFileSync(lines, 'utf8').split('\n')[0]!), { id: 'case-1', metadata: { text: 'Great movie', label: 1, evalferry: { generated: ['id'] } } })
  const d = await detect(lines)
  assert.deepEqual([d.format, d.confidence], ['evalcase', 0.7], JSON.stringify(d.candidates))
  const back = join(dir, 'back.jsonl')
  await convert({ input: lines, output: back, to: 'hf' })
  assert.equal(readFileSync(back, 'utf8'), '{"text":"Great movie","label":1}\n{"text":"Dull","label":0}\n')
  // Keys evalcase does not know beside them: not evalcase's by these alone.
  const other = join(dir, 'other.jsonl')
  writeFileSync(other, '{"id": "a", "label": 1, "metadata": {"evalferry": {}}}\n')
  assert.equal((await detect(other)).candidates.find((c) => c.format === 'evalcase')?.confidence, 0)
})
