import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Papa from 'papaparse'
import { convert } from '../src/convert.ts'
import { write } from '../src/write.ts'
import { tempDir } from './helpers/temp.ts'

/** OpenBookQA's own shape: the question an object of its stem and choices. */
const OPENBOOKQA = [
  { id: '8-343', question: { stem: 'A magnet will stick to', choices: [{ text: 'a wooden door', label: 'A' }, { text: 'a steel spoon', label: 'B' }] }, answerKey: 'B' },
  { id: '9-121', question: { stem: 'Plants make food from', choices: [{ text: 'sunlight', label: 'A' }, { text: 'moonlight', label: 'B' }] }, answerKey: 'A' },
]

test('an object-valued input is written as its JSON text where the target holds only text, with or without extras, and comes back whole', async () => {
  const dir = tempDir('evalferry-empty-')
  const source = join(dir, 'openbookqa.jsonl')
  writeFileSync(source, OPENBOOKQA.map((r) => JSON.stringify(r)).join('\n') + '\n')
  const inputs = (to: string, file: string): unknown[] => {
    const text = readFileSync(file, 'utf8')
    if (file.endsWith('.csv')) return Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data.map((r) => r.input)
    const records = file.endsWith('.jsonl') ? text.trim().split('\n').map((l) => JSON.parse(l) as { input: unknown }) : (JSON.parse(text) as { input: unknown }[])
    return records.map((r) => r.input)
  }
  for (const [to, extension] of [['deepeval', 'json'], ['deepeval', 'jsonl'], ['deepeval', 'csv'], ['evals', 'json']] as const) {
    for (const extras of [true, false]) {
      const out = join(dir, `${to}-${extras}.${extension}`)
      const report = await convert({ input: source, output: out, to, extras })
      const written = inputs(to, out).map((i) => JSON.parse(i as string) as unknown)
      assert.deepEqual(written, OPENBOOKQA.map((r) => r.question), `${to} ${extension} extras ${extras}`)
      assert.deepEqual(report.warnings.filter((w) => w.location.field === 'input'), [], `${to} ${extension}`)
      if (!extras) continue
      const back = join(dir, `${to}-${extension}.back.jsonl`)
      await convert({ input: out, output: back, to: 'hf' })
      assert.deepEqual(readFileSync(back, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown), OPENBOOKQA, `${to} ${extension} and back`)
    }
  }
})

test('an input of files alone, which a text field cannot hold, is written empty only with a warning at its case', async () => {
  const dir = tempDir('evalferry-empty-')
  const cases = [{ id: 'c1', input: [{ role: 'user' as const, content: [{ type: 'file' as const, value: 'docs/guide.md' }] }], expected_output: [{ role: 'assistant' as const, content: 'ok' }] }]
  for (const [to, extension, needs] of [['deepeval', 'json', 'a DeepEval golden'], ['evals', 'json', 'the EvalCase schema']] as const) {
    const report = await write(cases, join(dir, `files.${to}.${extension}`), { to })
    const warned = report.warnings.filter((w) => w.location.field === 'input').map((w) => w.message)
    assert.equal(warned.length, 1, `${to}: ${JSON.stringify(report.warnings)}`)
    assert.match(warned[0]!, new RegExp(`the input holds no text, only files.*which ${needs} cannot take: written as ""`))
  }
})
