import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { addWarning, mergeReport, newReport, summarize, warningKind } from '../src/report.ts'
import { runCli, SHARED_FIXTURES } from './helpers/cli.ts'
import { tempDir } from './helpers/temp.ts'

test('a warning given on every row is counted whole in its group, past the 200 the report lists', () => {
  const report = newReport('hf', 'deepeval', ['bench.jsonl'], 'out.json')
  for (let line = 1; line <= 1387; line++) addWarning(report, 'the case has no input, which a DeepEval golden requires: written as ""', { file: 'bench.jsonl', line, field: 'input' })
  addWarning(report, 'the cell "N/A" is read by pandas as a missing value', { file: 'bench.jsonl', line: 7, field: 'notes' })
  addWarning(report, 'the cell "null" is read by pandas as a missing value', { file: 'bench.jsonl', line: 9, field: 'notes' })
  assert.equal(report.warnings.length, 200)
  assert.equal(report.more_warnings, 1189)
  assert.deepEqual(
    report.warning_groups.map((g) => [g.kind, g.count, g.first.map((w) => w.location.line)]),
    [
      ['the case has no input, which a DeepEval golden requires: written as "…"', 1387, [1, 2, 3, 4, 5]],
      // The same warning of another value is the same kind; each keeps its own message.
      ['the cell "…" is read by pandas as a missing value', 2, [7, 9]],
    ],
  )
  assert.deepEqual(report.warning_groups[1]!.first.map((w) => w.message), ['the cell "N/A" is read by pandas as a missing value', 'the cell "null" is read by pandas as a missing value'])

  const lines = summarize(report).split('\n')
  assert.deepEqual(lines.slice(1), [
    '1389 warnings, of 2 kinds:',
    '  1387 × bench.jsonl:1: input: the case has no input, which a DeepEval golden requires: written as ""',
    '    also line 2, line 3, line 4, line 5, …',
    '  2 × bench.jsonl:7: notes: the cell "N/A" is read by pandas as a missing value',
    '    also line 9',
  ])
})

test('the groups of a batch add up the groups of its files, and a report from before groups still merges', () => {
  const total = newReport()
  for (const file of ['a.csv', 'b.csv']) {
    const one = newReport()
    for (let line = 2; line < 6; line++) addWarning(one, 'the id 3 is given twice', { file, line })
    // As a worker thread hands it over: a copy, without the lookup of its groups.
    mergeReport(total, structuredClone(one))
  }
  assert.deepEqual(total.warning_groups.map((g) => [g.kind, g.count, g.first.map((w) => `${w.location.file}:${w.location.line}`)]), [['the id # is given twice', 8, ['a.csv:2', 'a.csv:3', 'a.csv:4', 'a.csv:5', 'b.csv:2']]])
  // The summary names the file of a later place where it differs from the first's.
  assert.match(summarize(total), /  8 × a\.csv:2: the id 3 is given twice\n    also line 3, line 4, line 5, b\.csv:2, …/)
})

test('a warning kind keeps numbers that are part of a word, and past 100 kinds the rest fall into one group', () => {
  assert.equal(warningKind('column "x2" at row 12 of 1.5e3 in utf-8 line -4'), 'column "…" at row # of 1.5e3 in utf-8 line #')
  const report = newReport()
  for (let i = 0; i < 150; i++) addWarning(report, `warning ${'abcdefghijklmnopqrstuvwxyz'[i % 26]}${'abcdefghijklmnopqrstuvwxyz'[Math.floor(i / 26)]}`, { record: i })
  assert.equal(report.warning_groups.length, 101)
  assert.deepEqual(report.warning_groups.at(-1)!.count, 50)
  assert.equal(report.warning_groups.reduce((n, g) => n + g.count, 0), 150)
})

test('a real benchmark whose every row is warned of the same gives one group, in the summary and in the report', async () => {
  const dir = tempDir('evalferry-report-')
  const input = join(SHARED_FIXTURES, 'field', 'hf', 'openai_human-eval__HumanEval.jsonl.gz')
  const reportPath = join(dir, 'report.json')
  const run = await runCli(['convert', input, '--to', 'evalcase', '-o', join(dir, 'humaneval.yaml'), '--report', reportPath])
  assert.equal(run.code, 0, run.stderr)
  const report = JSON.parse(readFileSync(reportPath, 'utf8'))
  const total = report.warnings.length + report.more_warnings
  assert.ok(total >= 164, `every row warned of: ${total}`)
  const biggest = report.warning_groups.reduce((a: { count: number }, b: { count: number }) => (b.count > a.count ? b : a))
  assert.equal(biggest.count, 164)
  assert.deepEqual(biggest.first.map((w: { location: { line: number } }) => w.location.line), [1, 2, 3, 4, 5])
  assert.equal(report.warning_groups.reduce((n: number, g: { count: number }) => n + g.count, 0), total)
  // The summary tells each kind once: no line of it repeats.
  const told = run.stderr.split('\n').filter((line) => line.includes(biggest.first[0].message))
  assert.equal(told.length, 1, run.stderr)
  assert.match(told[0]!, /^  164 × /)
})
