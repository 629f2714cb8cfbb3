/**
 * pandas is the CSV reader of DeepEval (`add_goldens_from_csv_file`) and of `datasets`: the CSV
 * evalferry writes must read there cell for cell as evalferry reads it back, and each cell pandas
 * reads as missing must have been warned of.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import type { FormatName } from '../adapters/types.ts'
import { readRecords } from '../src/codecs/index.ts'
import type { EvalCase } from '../src/model.ts'
import { write } from '../src/write.ts'
import { newReport } from '../src/report.ts'
import { pandasReadsAs } from '../adapters/fields.ts'
import { pythonWith, runPython } from './helpers/python.ts'
import { tempDir } from './helpers/temp.ts'

/** A Python with pandas (compat's, which `.ci/run` installs). */
const python = pythonWith('pandas')

const work = tempDir('evalferry-pandas-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

/** Each file read twice: every cell as text (`dtype=str, keep_default_na=False`), and as DeepEval reads it (missing values as None). */
const READ = `
import json, sys, pandas as pd
out = []
for path in json.load(sys.stdin):
    text = pd.read_csv(path, dtype=str, keep_default_na=False)
    # pandas 2 reads "None" as missing too (Debian's pandas is 1.5).
    deepeval = pd.read_csv(path, na_values=['None'] if int(pd.__version__.split('.')[0]) < 2 else None)
    deepeval = deepeval.astype(object).where(pd.notna(deepeval), None)
    missing = [[i, c] for i, row in enumerate(deepeval.to_dict('records')) for c, v in row.items() if v is None]
    out.append({'columns': list(text.columns), 'rows': text.values.tolist(), 'missing': missing})
sys.stdout.write(json.dumps(out, ensure_ascii=True))
`

// Text of the kinds a dataset holds and CSV must quote or pandas may read otherwise.
const PIECES = ['a', 'b ', ' ', ',', '"', "'", '\n', '\r', '\r\n', '\t', 'é', '😀', '\uFEFF', '#', '|', ';', '\\', '007', '1e5', '-', 'NA', 'None']
const text = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 6 }).map((p) => p.join('')) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', 'NA', 'N/A', 'None', 'null', 'nan', 'NULL', '#N/A', '"', '\n', '""', 'x') },
)
const aCase = fc.record(
  {
    input: text,
    expected: fc.option(text, { nil: undefined }),
    context: fc.option(fc.array(text.filter((t) => t !== '' && !t.includes('|')), { minLength: 1, maxLength: 3 }), { nil: undefined }),
    notes: fc.option(text, { nil: undefined }),
  },
  { requiredKeys: ['input'] },
)

function toCase(r: { input: string; expected?: string; context?: string[]; notes?: string }): EvalCase {
  const c: EvalCase = { input: [{ role: 'user', content: r.input }] }
  if (r.expected !== undefined) c.expected_output = [{ role: 'assistant', content: r.expected }]
  if (r.context) c.context = r.context
  if (r.notes !== undefined) c.metadata = { notes: r.notes }
  return c
}

/** The cells of a CSV file as evalferry's reader gives them, by column. */
async function cellsOf(path: string): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
  const columns: string[] = []
  const rows: Record<string, unknown>[] = []
  for await (const r of readRecords('csv', path, { file: path, recordKeys: [], header: {}, columns })) rows.push(r.value as Record<string, unknown>)
  return { columns, rows }
}

test('pandas reads every cell of the CSV evalferry writes as evalferry reads it, and each cell it reads as missing was warned of', { skip: python ? false : 'needs a Python with pandas: run compat/setup.sh' }, async () => {
  const formats: FormatName[] = ['deepeval', 'hf', 'csv', 'langsmith']
  // DeepEval's and datasets' CSV readers are pandas: those writers warn of the cells it reads as missing.
  const warnsMissing = new Set<FormatName>(['deepeval', 'hf'])
  const files: { path: string; format: FormatName; warned: Set<string> }[] = []
  for (let seed = 1; seed <= 40; seed++) {
    const cases = fc.sample(aCase, { seed, numRuns: 25 }).map(toCase)
    for (const format of formats) {
      const path = join(work, `${format}-${seed}.csv`)
      const report = newReport(format, format, [], path)
      await write(cases, path, { to: format, report })
      const warned = new Set(report.warnings.filter((w) => /read by pandas .* as a missing value/.test(w.message)).map((w) => `${w.location?.record}:${w.location?.field}`))
      files.push({ path, format, warned })
    }
  }
  const read = JSON.parse(runPython(python!, READ, JSON.stringify(files.map((f) => f.path)))) as { columns: string[]; rows: string[][]; missing: [number, string][] }[]
  let cells = 0
  let missingText = 0
  for (const [i, file] of files.entries()) {
    const ours = await cellsOf(file.path)
    const theirs = read[i]!
    assert.deepEqual(theirs.columns, ours.columns, file.path)
    const rows = theirs.rows.map((row) => Object.fromEntries(row.map((cell, k) => [theirs.columns[k]!, cell])))
    assert.deepEqual(rows, ours.rows, file.path)
    cells += rows.length * theirs.columns.length
    if (!warnsMissing.has(file.format)) continue
    // A cell pandas reads as missing: empty (a field the case lacks), or text it takes for a missing value, which was warned of.
    const missing = new Set(theirs.missing.filter(([row, column]) => ours.rows[row]![column] !== '').map(([row, column]) => `${row}:${column}`))
    assert.deepEqual([...missing].sort(), [...file.warned].sort(), file.path)
    missingText += missing.size
  }
  assert.ok(cells > 10_000 && missingText > 100, `${cells} cells, ${missingText} read as missing`)
})

/** The dtype pandas gives a column of one cell, read as DeepEval reads it (missing values aside). */
const KINDS = `
import io, json, sys, pandas as pd
out = []
for cell in json.load(sys.stdin):
    kind = str(pd.read_csv(io.StringIO('c\\n"' + cell + '"\\n'), keep_default_na=False).dtypes['c'])
    out.append('a number' if kind.startswith(('int', 'uint', 'float')) else 'a boolean' if kind == 'bool' else None)
sys.stdout.write(json.dumps(out))
`

test("the cells pandas reads as numbers or booleans are those evalferry's CSV warnings name", { skip: python ? false : 'needs a Python with pandas: run compat/setup.sh' }, () => {
  const pieces = ['0', '1', '7', '.', 'e', 'E', '+', '-', ' ', '\t', 'inf', 'INF', 'Infinity', 'True', 'tRUE', 'false', 'x', '_', ',', '0x']
  const anyText = fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 5 }).map((p) => p.join(''))
  const space = fc.constantFrom('', '', ' ', '\t', '  ')
  const numberLike = fc
    .tuple(space, fc.constantFrom('', '', '+', '-'), fc.stringMatching(/^\d{0,3}$/), fc.constantFrom('', '.'), fc.stringMatching(/^\d{0,2}$/), fc.constantFrom('', '', 'e5', 'E-2', 'e+', 'e', 'x'), space)
    .map((p) => p.join(''))
  const booleanLike = fc.tuple(space, fc.constantFrom('true', 'True', 'TRUE', 'tRuE', 'false', 'FALSE', 'fAlsE', 'yes', 'T', 'truee'), space).map((p) => p.join(''))
  const cells = fc.sample(fc.oneof(anyText, numberLike, booleanLike), { numRuns: 4000, seed: 5 })
  // pandas reads these as missing: the missing-value warnings tell of them.
  const judged = [...new Set(cells)].filter((c) => c.trim() !== '' && !/^[+-]?nan$/i.test(c.trim()))
  const kinds = JSON.parse(runPython(python!, KINDS, JSON.stringify(judged))) as (string | null)[]
  const differ = judged.filter((cell, i) => (pandasReadsAs(cell) ?? null) !== kinds[i])
  assert.deepEqual(differ, [])
  // The sample holds each kind many times over.
  const count = (kind: string) => kinds.filter((k) => k === kind).length
  assert.ok(count('a number') > 300 && count('a boolean') > 5, `${count('a number')} numbers, ${count('a boolean')} booleans of ${kinds.length}`)
})
