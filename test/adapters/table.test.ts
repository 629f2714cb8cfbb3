import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import Papa from 'papaparse'
import { EvalferryError } from '../../src/errors.ts'
import { type EvalCase, type Message, singleText } from '../../src/model.ts'
import { convert } from '../../src/convert.ts'
import { read } from '../../src/read.ts'
import { write } from '../../src/write.ts'
import { tempDir } from '../helpers/temp.ts'
import { SHARED_FIXTURES } from '../helpers/cli.ts'
import { collect } from '../helpers/collect.ts'

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'csv')
const work = tempDir('evalferry-table-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

function readAll(file: string, options: Parameters<typeof read>[1] = { from: 'csv' }): Promise<EvalCase[]> {
  return collect(read(file, options))
}

const withoutBom = (text: string) => text.replace(/^\uFEFF/, '')

for (const name of readdirSync(FIXTURES).filter((n) => /\.(csv|tsv)$/.test(n))) {
  test(`csv/${name}: reads as the expected cases, and writes back the same cells`, async () => {
    const path = join(FIXTURES, name)
    const cases = await readAll(path)
    assert.deepEqual(JSON.parse(JSON.stringify(cases)), JSON.parse(readFileSync(`${path}.cases.json`, 'utf8')))
    const out = join(work, name.replace(/\.tsv$/, '.csv'))
    await write(cases, out, { to: 'csv' })
    const source = withoutBom(readFileSync(path, 'utf8'))
    const written = readFileSync(out, 'utf8')
    // The same header names and order, and the same cells (a TSV comes back comma-separated).
    const cells = (text: string, d: string) => text.split('\n')[0]!.split(d)
    const semicolons = source.split('\n')[0]!.includes(';')
    assert.deepEqual(cells(written, ','), cells(source, name.endsWith('.tsv') ? '\t' : semicolons ? ';' : ','))
    if (!name.endsWith('.tsv') && !semicolons) assert.equal(written, source)
    assert.deepEqual(await readAll(out), cases)
  })
}

test('BOM, quoted newlines and JSON list cells', async () => {
  const [first, second] = await readAll(join(FIXTURES, 'qa.csv'))
  assert.deepEqual(first!.input, [{ role: 'user', content: 'What is 2+2?' }])
  assert.deepEqual(first!.context, ['Arithmetic: 2+2=4', 'Numbers add up'])
  assert.equal(second!.input?.[0]?.content, 'Name the capital\nof France')
  assert.deepEqual(second!.metadata, { domain: 'geography' })
})

test('semicolon delimiter; a header in its own order travels with the first case, a default one does not', async () => {
  const cases = await readAll(join(FIXTURES, 'semicolon.csv'))
  assert.equal(cases.length, 2)
  assert.deepEqual(cases[0]!.tags, ['smalltalk', 'en'])
  assert.equal(cases[1]!.input?.[0]?.content, 'Say "yes"')
  assert.deepEqual(cases[0]!.extras?.csv?.$file, { columns: ['id', 'input', 'expected_output', 'context', 'tags', 'notes'] })
  const path = join(work, 'default.csv')
  writeFileSync(path, 'id,tags,input,notes\n1,x,q,n\n')
  assert.deepEqual(await readAll(path), [{ id: '1', tags: ['x'], input: [{ role: 'user', content: 'q' }], metadata: { notes: 'n' } }])
})

test('--map with dotted and explicit columns; written back under the source header', async () => {
  const path = join(work, 'mapped.csv')
  writeFileSync(path, 'q,gold,docs,row_hash\nWhy?,Because,d1,abc\n')
  const cases = await readAll(path, { from: 'csv', map: { input: 'q', expected_output: 'gold', context: 'docs', ignore: ['row_hash'] } })
  assert.deepEqual(cases[0]!.input, [{ role: 'user', content: 'Why?' }])
  assert.deepEqual(cases[0]!.context, ['d1'])
  assert.equal(cases[0]!.metadata, undefined)
  const out = join(work, 'mapped-out.csv')
  await write(cases, out, { to: 'csv' })
  assert.equal(readFileSync(out, 'utf8').split('\n')[0], 'q,gold,docs,evalferry')
  // Read back without the map, the carried fields restore the same case.
  assert.deepEqual(await readAll(out), cases)
})

test('fields a cell cannot hold go to the evalferry column', async () => {
  const cases: EvalCase[] = [
    { id: 'a', input: [{ role: 'user', content: 'q' }], metadata: { score: 3, lang: 'en' } },
    { id: 'b', input: [{ role: 'user', content: 'q2' }], turns: [{ role: 'user', content: 'hi' }] },
  ]
  const out = join(work, 'carry.csv')
  const report = await write(cases, out, { to: 'csv' })
  const lines = readFileSync(out, 'utf8').trimEnd().split('\n')
  assert.equal(lines[0], 'id,input,score,lang,evalferry')
  // Of the metadata, only the value a cell gave back as text travels; `lang` came back whole.
  assert.equal(lines[1], 'a,q,3,en,"{""$metadata"":{""score"":3}}"')
  assert.deepEqual(report.carried, { 'metadata.score': 1, turns: 1 })
  assert.deepEqual(await readAll(out), cases)
})

test("a spreadsheet's export: its sep= line, its columns without a name and its trailing empty cells", async () => {
  const path = join(FIXTURES, 'excel', 'export.csv')
  const cases = await readAll(path)
  assert.deepEqual(
    cases.map((c) => [singleText(c.input, 'user'), singleText(c.expected_output as Message[], 'assistant')]),
    [
      ['What is the refund window?', '30 days'],
      ['Who signs off a refund?', 'The "billing" lead'],
      ['Is shipping free?', 'Over 50 EUR'],
    ],
  )
  // The one cell under a column without a name that holds text is kept, under pandas' name for it.
  assert.deepEqual(
    cases.map((c) => c.metadata),
    [undefined, { 'Unnamed: 3': 'checked by Ana' }, undefined],
  )
  assert.deepEqual(cases[0]!.extras?.csv?.$file, { columns: ['question', 'answer', 'Unnamed: 2', 'Unnamed: 3'] })
  // Written back: the columns without a name get none again, and every cell is where it was.
  const out = join(work, 'export.csv')
  await write(cases, out, { to: 'csv' })
  assert.equal(
    readFileSync(out, 'utf8'),
    'question,answer,,\nWhat is the refund window?,30 days,,\nWho signs off a refund?,"The ""billing"" lead",,checked by Ana\nIs shipping free?,Over 50 EUR,,\n',
  )
  assert.deepEqual(await readAll(out), cases)
})

test("pandas' index column, written without a name, is read as pandas reads it and written back without one", async () => {
  const path = join(work, 'pandas-index.csv')
  writeFileSync(path, ',question,answer\n0,What?,Yes\n1,Who?,Me\n')
  const cases = await readAll(path)
  assert.deepEqual(
    cases.map((c) => [singleText(c.input, 'user'), singleText(c.expected_output as Message[], 'assistant'), c.metadata?.['Unnamed: 0']]),
    [
      ['What?', 'Yes', '0'],
      ['Who?', 'Me', '1'],
    ],
  )
  const out = join(work, 'pandas-index-out.csv')
  await write(cases, out, { to: 'csv' })
  assert.equal(readFileSync(out, 'utf8'), ',question,answer\n0,What?,Yes\n1,Who?,Me\n')
})

test('a row whose cells past the header hold text is still refused; empty ones past it are not', async () => {
  const path = join(work, 'past-header.csv')
  writeFileSync(path, 'question,answer\nWhat?,Yes,,\nWho?,Me,,late\n')
  await assert.rejects(readAll(path), (e: EvalferryError) => {
    assert.equal(e.code, 'E_PARSE')
    assert.deepEqual(e.location, { file: path, line: 3, field: 'column 3' })
    return true
  })
  const skipped = await convert({ input: path, output: join(work, 'past-header.jsonl'), from: 'csv', to: 'evalcase', onError: 'skip' })
  assert.equal(skipped.records.written, 1)
  assert.equal(skipped.records.skipped, 1)
})

test('a row with more cells than the header: file, line and field', async () => {
  const path = join(FIXTURES, 'bad', 'extra-cell.csv')
  await assert.rejects(readAll(path), (e: EvalferryError) => {
    assert.equal(e.code, 'E_PARSE')
    assert.equal(e.exitCode, 1)
    assert.deepEqual(e.location, { file: path, line: 2, field: 'column 3' })
    return true
  })
})

test('a mapped column the header lacks: a usage error naming the mapping and the header; a JSON row without it: an error at its line', async () => {
  const path = join(FIXTURES, 'qa.csv')
  await assert.rejects(convert({ input: path, output: join(work, 'never.csv'), from: 'csv', to: 'csv', map: { input: 'x' } }), (e: EvalferryError) => {
    assert.equal(e.code, 'E_USAGE')
    assert.match(e.message, /^--map input=x: the table has no column "x" \(its columns: /)
    return true
  })
  const rows = join(work, 'rows-without.jsonl')
  writeFileSync(rows, '{"x": "q1"}\n{"y": "q2"}\n')
  await assert.rejects(convert({ input: rows, output: join(work, 'never.jsonl'), from: 'hf', to: 'hf', map: { input: 'x' } }), (e: EvalferryError) => {
    assert.equal(e.code, 'E_FIELD')
    assert.deepEqual(e.location, { file: rows, line: 2, field: 'x' })
    return true
  })
})

test("a table written as Hugging Face rows and back keeps its column names, in each of hf's containers", async () => {
  const source = 'question,answer,topic\nWhat is 2+2?,4,math\n"Capital of France?",Paris,geo\n'
  const path = join(work, 'own-names.csv')
  writeFileSync(path, source)
  const cases = await readAll(path)
  assert.deepEqual(cases[0]!.extras, { csv: { $file: { columns: ['question', 'answer', 'topic'] } } })
  for (const ext of ['jsonl', 'csv', 'parquet']) {
    const middle = join(work, `own-names-hf.${ext}`)
    await convert({ input: path, output: middle, from: 'csv', to: 'hf' })
    const rows = await readAll(middle, { from: 'hf' })
    // hf reads the header as its own; the cases are the table's otherwise.
    assert.deepEqual(rows[0]!.extras, { hf: { $file: { columns: ['question', 'answer', 'topic'] } } }, ext)
    assert.deepEqual(rows.map((c) => ({ ...c, extras: undefined })), cases.map((c) => ({ ...c, extras: undefined })), ext)
    const back = join(work, `own-names-back-${ext}.csv`)
    await convert({ input: middle, output: back, from: 'hf', to: 'csv' })
    assert.equal(readFileSync(back, 'utf8'), source.replace('"Capital of France?"', 'Capital of France?'), ext)
  }
  const jsonl = readFileSync(join(work, 'own-names-hf.jsonl'), 'utf8')
  assert.deepEqual(Object.keys(JSON.parse(jsonl.split('\n')[0]!)), ['question', 'answer', 'topic'])
})

test("a Parquet dataset's columns name the CSV's, its features carried beside them", async () => {
  const out = join(work, 'squad.csv')
  await convert({ input: join(import.meta.dirname, '..', 'fixtures', 'hf', 'squad.parquet'), output: out, from: 'hf', to: 'csv' })
  assert.equal(readFileSync(out, 'utf8').split('\n')[0], 'id,title,context,question,answers,answerable,evalferry')
  const [first] = await readAll(out)
  assert.deepEqual(first!.extras?.csv, { $file: { columns: ['id', 'title', 'context', 'question', 'answers', 'answerable'] } })
  assert.deepEqual(Object.keys(first!.extras?.hf?.$file as object), ['features'])
})

test('a header read with --map is not written as Hugging Face rows: its rows would need the mapping to read back', async () => {
  const path = join(work, 'mapped-to-hf.csv')
  writeFileSync(path, 'q,a,topic\nWhat?,This,x\n')
  const out = join(work, 'mapped-to-hf.jsonl')
  await convert({ input: path, output: out, from: 'csv', to: 'hf', map: { input: 'q', expected_output: 'a' } })
  const row = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]!)
  assert.deepEqual(row, {
    input: 'What?',
    expected_output: 'This',
    topic: 'x',
    evalferry: { extras: { csv: { $file: { columns: ['q', 'a', 'topic'], map: { input: 'q', expected_output: 'a' } } } } },
  })
})

test('rows with no field at all are written under the carry column, one `""` row each, and read back as such rows', async () => {
  // JSON Lines rows of no column: a table of them needs a header, and a row each.
  const source = join(work, 'no-columns.jsonl')
  writeFileSync(source, '{}\n{}\n')
  for (const to of ['csv', 'hf'] as const) {
    const output = join(work, `no-columns-${to}.csv`)
    await convert({ input: source, output, from: 'hf', to })
    assert.equal(readFileSync(output, 'utf8'), 'evalferry\n""\n""\n', to)
    assert.deepEqual(await readAll(output, { from: to }), [{}, {}], to)
  }
})

test('a one-column table keeps its rows of an empty cell, written `""` as Python writes them', async () => {
  const source = join(work, 'one-column.jsonl')
  writeFileSync(source, '{"q": "a"}\n{"q": ""}\n{"q": "b"}\n')
  const output = join(work, 'one-column.csv')
  await convert({ input: source, output, from: 'hf', to: 'csv', extras: false })
  assert.equal(readFileSync(output, 'utf8'), 'q\na\n""\nb\n')
  // An empty cell is no value in a table: the row reads as a case with nothing in it.
  assert.deepEqual(await readAll(output), [{ metadata: { q: 'a' } }, {}, { metadata: { q: 'b' } }])
})

test('column names that hold another delimiter are quoted where the header would read as delimited by it', async () => {
  for (const [row, header] of [
    [{ 'x;y;z': '1' }, '"x;y;z"'],
    [{ 'a;b;c': '1', d: '2' }, '"a;b;c",d'],
    [{ 'a;b': '1', c: '2', d: '3' }, 'a;b,c,d'],
  ] as const) {
    const source = join(work, 'delimiters.jsonl')
    writeFileSync(source, JSON.stringify(row) + '\n')
    const output = join(work, 'delimiters.csv')
    await convert({ input: source, output, from: 'hf', to: 'csv', extras: false })
    assert.equal(readFileSync(output, 'utf8').split('\n')[0], header)
    assert.deepEqual(await readAll(output), [{ metadata: row }])
  }
})

test("a ragas test set as pandas saved it reads by ragas' names, its Python-list contexts as a list, and writes back the same bytes", async () => {
  const source = join(SHARED_FIXTURES, 'field', 'ragas', 'Filichkin_kim_ragas__ragas_testset.csv')
  const cases = await readAll(source)
  assert.equal(cases.length, 4)
  for (const c of cases) {
    assert.ok(singleText(c.input!, 'user')!.length > 10)
    assert.ok(singleText(c.expected_output as Message[], 'assistant')!.length > 10)
    assert.ok(c.context!.length >= 1 && c.context!.every((text) => typeof text === 'string' && text.length > 0), JSON.stringify(c.context))
    assert.deepEqual(Object.keys(c.metadata!), ['synthesizer_name'])
  }
  assert.match(cases[0]!.context![0]!, /^Сервисная книжка/)
  const out = join(work, 'ragas.csv')
  await write(cases, out, { to: 'csv' })
  assert.equal(readFileSync(out, 'utf8'), readFileSync(source, 'utf8'))
})

test("promptfoo's __expected column, read as a plain table, is the expected output", async () => {
  const cases = await readAll(join(SHARED_FIXTURES, 'field', 'promptfoo', 'promptfoo__simple-csv_tests.csv'))
  assert.deepEqual(
    cases.map((c) => [singleText(c.expected_output as Message[], 'assistant'), c.metadata?.language]),
    [['icontains:bonjour', 'French'], ['icontains:faim', 'French'], ['icontains:Ahoy', 'Pirate'], ['icontains:grub', 'Pirate']],
  )
})

test('a plain table through Hugging Face rows (Parquet, JSON Lines, CSV) and back gives the same cells, with no column added', async () => {
  // promptfoo's test CSVs are read as the plain tables they also are (and their rows as rows): detected, they are promptfoo's tests.
  const promptfoo = [join(SHARED_FIXTURES, 'field', 'promptfoo', 'promptfoo__simple-csv_tests.csv'), join(SHARED_FIXTURES, 'field', 'promptfoo', 'promptfoo__eval-customer-support-rubric_tests.csv')]
  const tables = [
    join(SHARED_FIXTURES, 'field', 'ragas', 'Filichkin_kim_ragas__ragas_testset.csv'),
    ...promptfoo,
    join(FIXTURES, 'truthfulqa.csv'),
    join(FIXTURES, 'pandas_lists.csv'),
    join(FIXTURES, 'qa.csv'),
  ]
  // Lists as JSON text, spaced as people write it; one of one item; a plain text.
  const contexts = join(work, 'contexts.csv')
  writeFileSync(contexts, 'question,answer,contexts,topic\nWhat is H2O?,Water,"[""H2O is water"", ""Water is wet""]",chem\nWhat is 2+2?,4,"[""Arithmetic facts""]",math\nWhy?,Because,plain context,misc\n')
  const cells = (file: string): string[][] => Papa.parse<string[]>(withoutBom(readFileSync(file, 'utf8')), { skipEmptyLines: true }).data
  for (const table of [...tables, contexts]) {
    for (const container of ['parquet', 'jsonl', 'csv']) {
      for (const from of promptfoo.includes(table) ? (['csv'] as const) : (['csv', undefined] as const)) {
        const rows = join(work, `through-${basename(table)}-${from}.${container}`)
        await convert({ input: table, output: rows, to: 'hf', ...(from ? { from } : {}) })
        const back = join(work, `through-${basename(table)}-${from}-${container}.back.csv`)
        await convert({ input: rows, output: back, to: 'csv', ...(promptfoo.includes(table) ? { from: 'hf' as const } : {}) })
        assert.deepEqual(cells(back), cells(table), `${basename(table)} through hf ${container}, read as ${from ?? 'detected'}`)
      }
    }
  }
})
