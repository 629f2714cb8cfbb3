/** `--report report.html`: a page a reviewer opens, checked as Chromium renders it. */
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { renderReportHtml } from '../src/report-html.ts'
import { addWarning, newReport } from '../src/report.ts'
import { CHROMIUM, pngFacts, renderedDom, screenshot, tableRows, textOf } from './helpers/browser.ts'
import { ROOT, runCli } from './helpers/cli.ts'
import { tempDir } from './helpers/temp.ts'

const NO_CHROMIUM = CHROMIUM ? false : 'needs Chromium (Debian chromium; .ci/run installs it)'
const GOLDENS = join(ROOT, 'examples', 'goldens.json')

/** The cells of the row of table `id` whose cell `column` is `value`. */
function rowWith(dom: string, id: string, column: number, value: string): string[] {
  const row = tableRows(dom, id).find((cells) => cells[column] === value)
  assert.ok(row, `no row of #${id} with ${value}: ${JSON.stringify(tableRows(dom, id))}`)
  return row
}

/** The count the counts table shows under `name`. */
function count(dom: string, name: string): string {
  const cell = new RegExp(`data-count="${name}">([^<]*)<`).exec(dom)
  assert.ok(cell, `no count ${name}`)
  return cell[1]!
}

test('the page shows the counts, where each field went, the warnings by kind and the records side by side', { skip: NO_CHROMIUM }, async () => {
  const dir = tempDir()
  const page = join(dir, 'report.html')
  const run = await runCli(['convert', GOLDENS, '--to', 'evalcase', '-o', join(dir, 'out.yaml'), '--report', page, '--json'])
  assert.equal(run.code, 0, run.stderr)
  const html = readFileSync(page, 'utf8')
  // Self-contained: nothing to fetch, and a policy that forbids fetching anything.
  assert.doesNotMatch(html, /<script|<link|\bsrc=|\bhref=|url\(|@import/i)
  assert.match(html, /Content-Security-Policy" content="default-src 'none'/)

  const dom = renderedDom(page)
  assert.equal(textOf(/<h1>([\s\S]*?)<\/h1>/.exec(dom)![1]!), 'evalferry: deepeval → evalcase')
  assert.deepEqual(['read', 'written', 'skipped', 'carried', 'warnings'].map((n) => count(dom, n)), ['3', '3', '0', '7', '1'])

  // Source field, case field, target field, records, carried, dropped.
  assert.deepEqual(rowWith(dom, 'fields', 1, 'input'), ['input', 'input', 'input', '3', '0', '0'])
  assert.deepEqual(rowWith(dom, 'fields', 1, 'name'), ['name', 'name', 'metadata.evalferry.name', '3', '3', '0'])
  assert.deepEqual(rowWith(dom, 'fields', 1, 'context'), ['context', 'context', 'metadata.evalferry.context', '2', '2', '0'])
  assert.deepEqual(rowWith(dom, 'fields', 1, 'metadata.difficulty'), ['additional_metadata.difficulty', 'metadata.difficulty', 'metadata.difficulty', '2', '0', '0'])
  // Each field the conversion counted as carried is a row whose carried count is the report's.
  const carried = (JSON.parse(run.stdout) as { carried: Record<string, number> }).carried
  assert.deepEqual(Object.keys(carried).sort(), ['comments', 'context', 'expected_tools', 'name'])
  for (const [field, n] of Object.entries(carried)) assert.equal(rowWith(dom, 'fields', 1, field)[4], String(n), field)

  const [warning] = tableRows(dom, 'warnings')
  assert.equal(warning![0], '1')
  assert.equal(warning![1], 'the case has no criteria, expected output or assertions; AgentV skips such a case')
  assert.equal(warning![2], `${GOLDENS}:30: criteria`)

  const records = [...dom.matchAll(/<section class="record" data-record="(\d+)">([\s\S]*?)<\/section>/g)]
  assert.deepEqual(records.map((r) => r[1]), ['1', '2', '3'])
  const [, , first] = records[0]!
  const source = /<div class="source">([\s\S]*?)<\/div>/.exec(first!)![1]!
  const written = /<div class="written">([\s\S]*?)<\/div>/.exec(first!)![1]!
  assert.match(textOf(source), /"input": "What is the refund window for a damaged item\?"/)
  assert.match(textOf(written), /"id": "case-1"/)
  // Marked: the carry in the written record, and the source fields that went into it.
  const marked = (html: string) => [...html.matchAll(/<mark class="carried">\s*"([^"]+)"/g)].map((m) => m[1])
  assert.deepEqual(marked(written), ['evalferry'])
  assert.deepEqual(marked(source).sort(), ['comments', 'context', 'expected_tools', 'name'])
  assert.doesNotMatch(textOf(source.replace(/<mark[\s\S]*?<\/mark>/g, '')), /refund-damaged/)

  const shot = pngFacts(screenshot(page, 1280, 2400))
  assert.deepEqual([shot.width, shot.height], [1280, 2400])
  // A blank page draws a few byte values; tables, text and marks draw many.
  assert.ok(shot.distinctBytes > 100, `the screenshot holds ${shot.distinctBytes} byte values`)
})

test('text from the data is shown as text, never read as markup', { skip: NO_CHROMIUM }, () => {
  const dir = tempDir()
  const page = join(dir, 'report.html')
  const hostile = `</pre></div><script>document.title = "run"</script><img src=x onerror="document.title='run'">&amp;`
  const report = newReport('deepeval', 'evalcase', [hostile], hostile)
  report.records = { read: 1, written: 1, skipped: 0 }
  addWarning(report, hostile, { file: hostile, line: 1, field: hostile })
  writeFileSync(
    page,
    renderReportHtml(report, {
      fields: [{ field: hostile, from: { [hostile]: 1 }, to: { [hostile]: 1 }, records: 1, carried: 0, dropped: 0 }],
      samples: [{ place: { file: hostile, line: 1 }, source: { [hostile]: hostile }, written: { evalferry: hostile }, carriedFrom: [hostile] }],
      unread: [],
    }),
  )
  const dom = renderedDom(page)
  assert.doesNotMatch(dom, /<script|<img/i)
  assert.match(dom, /<title>evalferry: deepeval → evalcase<\/title>/)
  assert.equal(rowWith(dom, 'fields', 1, hostile)[0], hostile)
  assert.equal(tableRows(dom, 'warnings')[0]![1], hostile)
  const record = /<section class="record" data-record="1">([\s\S]*?)<\/section>/.exec(dom)![1]!
  assert.ok(textOf(record).includes(JSON.stringify(hostile)), textOf(record))
})

test('dropped fields, skipped records and a table output are counted on the page', { skip: NO_CHROMIUM }, async () => {
  const dir = tempDir()
  const input = join(dir, 'cases.jsonl')
  const tools = [{ name: 'search', input_parameters: { q: 'refunds' } }]
  writeFileSync(
    input,
    [
      JSON.stringify({ input: 'first question', expected_output: 'one', name: 'n1', expected_tools: tools, additional_metadata: { team: 'red' } }),
      '{"input": broken',
      JSON.stringify({ input: 'second question', expected_output: 'two', name: 'n2', additional_metadata: { team: 'blue' } }),
    ].join('\n') + '\n',
  )
  const page = join(dir, 'report.html')
  const dropping = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', join(dir, 'out.yaml'), '--no-extras', '--on-error', 'skip', '--report', page])
  assert.equal(dropping.code, 0, dropping.stderr)
  let dom = renderedDom(page)
  assert.deepEqual(['read', 'written', 'skipped', 'carried', 'dropped'].map((n) => count(dom, n)), ['2', '2', '1', '0', '3'])
  assert.deepEqual(rowWith(dom, 'fields', 1, 'input'), ['input', 'input', 'input', '2', '0', '0'])
  assert.deepEqual(rowWith(dom, 'fields', 1, 'name'), ['name', 'name', '—', '2', '0', '2'])
  assert.deepEqual(rowWith(dom, 'fields', 1, 'expected_tools'), ['expected_tools', 'expected_tools', '—', '1', '0', '1'])
  // How the source spelled its keys is no field of its records.
  assert.deepEqual(tableRows(dom, 'fields').filter((r) => /\$(keys|form|text|columns)$/.test(r[1]!)), [])
  const [skipped] = tableRows(dom, 'skipped')
  assert.equal(skipped![0], `${input}:2:11`)
  assert.equal(skipped![1], 'E_PARSE')
  assert.equal(dom.match(/<section class="record"/g)?.length, 2)

  // A table: metadata as columns of its own, the rest carried as JSON text in the evalferry column.
  const table = await runCli(['convert', input, '--from', 'deepeval', '--to', 'csv', '-o', join(dir, 'out.csv'), '--on-error', 'skip', '--report', page])
  assert.equal(table.code, 0, table.stderr)
  dom = renderedDom(page)
  assert.deepEqual(rowWith(dom, 'fields', 1, 'metadata.team'), ['additional_metadata.team', 'metadata.team', 'team', '2', '0', '0'])
  assert.deepEqual(rowWith(dom, 'fields', 1, 'expected_tools'), ['expected_tools', 'expected_tools', 'evalferry.expected_tools', '1', '1', '0'])

  // DeepEval's CSV carries inside its metadata cell's JSON text: shown as the object it holds, the carry marked.
  const cells = await runCli(['convert', input, '--from', 'deepeval', '--to', 'deepeval', '-o', join(dir, 'goldens.csv'), '--on-error', 'skip', '--report', page])
  assert.equal(cells.code, 0, cells.stderr)
  dom = renderedDom(page)
  const written = /<section class="record" data-record="1">[\s\S]*?<div class="written">([\s\S]*?)<\/div>/.exec(dom)![1]!
  assert.match(written, /"additional_metadata": <span class="note">JSON text:<\/span> \{/)
  assert.match(written, /<mark class="carried">\s*"evalferry": \{/)
})

test('a run that stops writes a page that says why, with no output to read back', { skip: NO_CHROMIUM }, async () => {
  const dir = tempDir()
  const input = join(dir, 'cases.jsonl')
  writeFileSync(input, `${JSON.stringify({ input: 'fine' })}\n{"input": broken\n`)
  const page = join(dir, 'report.html')
  const output = join(dir, 'out.yaml')
  const run = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', output, '--report', page])
  assert.equal(run.code, 1)
  assert.equal(existsSync(output), false)
  const dom = renderedDom(page)
  assert.match(textOf(/<p class="failed" id="failed">([\s\S]*?)<\/p>/.exec(dom)![1]!), new RegExp(`^The conversion stopped \\(E_PARSE\\): ${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2`))
  assert.equal(count(dom, 'read'), '1')
  assert.match(dom, /\(not read back\)/)
  assert.equal(textOf(/<span id="unread">([\s\S]*?)<\/span>/.exec(dom)![1]!), `Not read back: the output of ${input}, not written.`)
})

test('--report x.json is still the JSON report', async () => {
  const dir = tempDir()
  const run = await runCli(['convert', GOLDENS, '--to', 'evalcase', '-o', join(dir, 'out.yaml'), '--report', join(dir, 'x.json')])
  assert.equal(run.code, 0, run.stderr)
  const report = JSON.parse(readFileSync(join(dir, 'x.json'), 'utf8'))
  assert.deepEqual(report.records, { read: 3, written: 3, skipped: 0 })
  assert.deepEqual(report.carried, { expected_tools: 1, context: 2, name: 3, comments: 1 })
})

test("each field is found at its own place: a value whole before one inside a longer text, and a file's keys in the file, not dropped", async () => {
  const { reviewConversion } = await import('../src/review.ts')
  const dir = tempDir()
  const input = join(dir, 'cases.yaml')
  // The name is also a piece of the input's text; the file's description goes to a JSON Lines dataset's sidecar.
  writeFileSync(input, 'description: Support answers\nevalcases:\n  - id: refund-1\n    name: refund window\n    input: What is the refund window for a damaged item?\n    expected_output: 30 days.\n')
  const toDeepeval = join(dir, 'out.json')
  const toLines = join(dir, 'lines', 'out.jsonl')
  for (const [output, to] of [[toDeepeval, 'deepeval'], [toLines, 'evalcase']]) {
    const run = await runCli(['convert', input, '--to', to!, '-o', output!, '-q'])
    assert.equal(run.code, 0, run.stderr)
  }
  const row = (fields: { field: string }[], field: string) => fields.find((f) => f.field === field)
  const deepeval = await reviewConversion([{ input, output: toDeepeval, from: 'evalcase', to: 'deepeval' }])
  assert.deepEqual(row(deepeval.fields, 'extras.evalcase.name'), { field: 'extras.evalcase.name', from: { name: 1 }, to: { 'additional_metadata.evalferry.extras.evalcase.name': 1 }, records: 1, carried: 1, dropped: 0 })
  assert.deepEqual(row(deepeval.fields, 'input'), { field: 'input', from: { input: 1 }, to: { input: 1 }, records: 1, carried: 0, dropped: 0 })
  const lines = await reviewConversion([{ input, output: toLines, from: 'evalcase', to: 'evalcase' }])
  // The description goes to the sidecar; the `evalcases:` list key, which JSON Lines cannot say, is carried on the first case.
  assert.deepEqual(row(lines.fields, 'extras.evalcase.$file'), { field: 'extras.evalcase.$file', from: { '(file keys)': 1 }, to: { 'metadata.evalferry.extras.evalcase.$file': 1 }, records: 1, carried: 1, dropped: 0 })
  assert.match(readFileSync(join(dir, 'lines', 'out.yaml'), 'utf8'), /^description: Support answers$/m)
  assert.equal(readFileSync(join(dir, 'lines', 'out.yaml'), 'utf8'), 'description: Support answers\n')
})

test('a batch that stops shows which files were written, which failed and which were not converted', { skip: NO_CHROMIUM }, async () => {
  const dir = tempDir()
  const inputs = join(dir, 'in')
  mkdirSync(inputs)
  writeFileSync(join(inputs, 'a.jsonl'), `${JSON.stringify({ input: 'fine' })}\n`)
  writeFileSync(join(inputs, 'b.jsonl'), '{"input": broken\n')
  const page = join(dir, 'report.html')
  const run = await runCli(['convert', inputs, '--from', 'deepeval', '--to', 'evalcase', '-o', join(dir, 'out') + '/', '--report', page, '-j', '1'])
  assert.equal(run.code, 1)
  const dom = renderedDom(page)
  const files = tableRows(dom, 'files')
  assert.deepEqual(files.map((r) => r[0]), ['Files written', 'Files that failed', 'Files not converted'])
  assert.deepEqual(files[1]!.slice(1), ['1', join(inputs, 'b.jsonl')])
  assert.equal(Number(files[0]![1]) + Number(files[2]![1]), 1)
  assert.match(textOf(/<p class="failed" id="failed">([\s\S]*?)<\/p>/.exec(dom)![1]!), /^The conversion stopped \(E_PARSE\)/)
})
