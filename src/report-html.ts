/**
 * The conversion report as one HTML page a reviewer opens (`--report report.html`): the counts,
 * where each field went, the warnings by kind, and the first records side by side. The page holds
 * its own style and nothing else: no script, no font, no request, which its policy forbids.
 */
import { formatLocation, type Location } from './location.ts'
import { CARRY_KEY } from './model.ts'
import type { ConversionReport } from './report.ts'
import { asObject, type FieldRow, type Review } from './review.ts'

/** What a failed run's report adds: why it stopped. */
export interface Failure {
  message: string
  code?: string
  /** A batch that stopped: the outputs written, the inputs that failed, those not converted. */
  files?: { written: string[]; failed: string[]; not_converted: string[] }
}

/** Warnings of one kind, with how many, the first's message, and where the first were. */
export interface WarningGroup {
  message: string
  count: number
  places: Location[]
}

/** Places listed per kind of warning. */
const FIRST_PLACES = 3
/** Skipped records listed by name; the rest are counted. */
const LISTED_ERRORS = 50
/** Longer text in a record shown is cut, so that a page of long records stays readable. */
const SHOWN_CHARS = 600

/** `&`, `<`, `>` and quotes as entities: text from data never becomes markup. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** The report's warnings by kind (every one counted, see `ConversionReport.warning_groups`), most frequent first, each with its first places. */
export function warningGroups(report: ConversionReport): WarningGroup[] {
  return (report.warning_groups ?? [])
    .filter((g) => g.first.length > 0)
    .map((g) => ({ message: g.first[0]!.message, count: g.count, places: g.first.slice(0, FIRST_PLACES).map((w) => w.location) }))
    .sort((a, b) => b.count - a.count)
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 78em; padding: 0 1em; color: #1b1b1b; background: #fff; }
h1 { font-size: 1.5em; margin-bottom: .2em; }
h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: .2em; }
table { border-collapse: collapse; width: 100%; margin: .5em 0; }
th, td { border: 1px solid #ddd; padding: .3em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code, pre { font: 12.5px/1.4 ui-monospace, monospace; }
pre { margin: 0; white-space: pre-wrap; word-break: break-word; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; margin: .5em 0 1.5em; }
.pair > div { border: 1px solid #ddd; padding: .5em; background: #fafafa; overflow: auto; }
.pair h3 { font-size: 1em; margin: 0 0 .4em; }
mark.carried, .legend mark { background: #ffe38a; }
.failed { border: 2px solid #b00020; background: #fdecee; padding: .6em 1em; }
.note { color: #555; }
`

/** The page: `review` adds the field table and the records side by side. */
export function renderReportHtml(report: ConversionReport, review: Review, failure?: Failure): string {
  const title = `evalferry: ${report.from} → ${report.to}`
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    // No request of any kind leaves the page: its style is its own.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head>',
    '<body>',
    `<h1>${escapeHtml(title)}</h1>`,
    counts(report, failure),
    fields(report, review),
    warnings(report),
    skipped(report),
    records(review),
    '</body>',
    '</html>',
    '',
  ].join('\n')
}

function counts(report: ConversionReport, failure?: Failure): string {
  const warningCount = report.warnings.length + report.more_warnings
  const sum = (tally: Record<string, number>) => Object.values(tally).reduce((a, b) => a + b, 0)
  const row = (name: string, value: string | number, id: string) => `<tr><th>${escapeHtml(name)}</th><td class="n" data-count="${id}">${escapeHtml(String(value))}</td></tr>`
  return [
    failure ? `<p class="failed" id="failed"><strong>The conversion stopped${failure.code ? ` (${escapeHtml(failure.code)})` : ''}:</strong> ${escapeHtml(failure.message)}</p>` : '',
    failure?.files ? batchFiles(failure.files) : '',
    '<h2>Counts</h2>',
    `<p>Read from ${report.inputs.map((i) => `<code>${escapeHtml(i)}</code>`).join(', ')}${report.output ? `, written to <code>${escapeHtml(report.output)}</code>` : ', written to standard output'}.</p>`,
    '<table id="counts">',
    row('Records read', report.records.read, 'read'),
    row('Records written', report.records.written, 'written'),
    row('Records skipped', report.records.skipped, 'skipped'),
    row('Fields carried under "evalferry" (records × fields)', sum(report.carried), 'carried'),
    row('Fields dropped (records × fields)', sum(report.dropped), 'dropped'),
    row('Warnings', warningCount, 'warnings'),
    '</table>',
  ].join('\n')
}

/** What a batch that stopped did with each file. */
function batchFiles(files: NonNullable<Failure['files']>): string {
  const row = (what: string, id: string, paths: string[]) =>
    `<tr><th>${what}</th><td class="n" data-count="${id}">${paths.length}</td><td>${paths.map((p) => `<code>${escapeHtml(p)}</code>`).join('<br>')}</td></tr>`
  return ['<table id="files">', row('Files written', 'files-written', files.written), row('Files that failed', 'files-failed', files.failed), row('Files not converted', 'files-not-converted', files.not_converted), '</table>'].join('\n')
}

function fields(report: ConversionReport, review: Review): string {
  const rows = [...review.fields]
  // What the conversion counted as dropped that no record traced (a column --map ignored, a file key).
  for (const [field, n] of Object.entries(report.dropped)) {
    if (!rows.some((r) => r.field === field)) rows.push({ field, from: {}, to: {}, records: n, carried: 0, dropped: n })
  }
  const paths = (tally: Record<string, number>, total: number) => {
    const entries = Object.entries(tally).sort((a, b) => b[1] - a[1])
    if (!entries.length) return '—'
    return entries.map(([path, n]) => `<code>${escapeHtml(path)}</code>${entries.length > 1 || n !== total ? ` <span class="note">(${n})</span>` : ''}`).join('<br>')
  }
  const line = (r: FieldRow) =>
    `<tr data-field="${escapeHtml(r.field)}"><td>${paths(r.from, r.records)}</td><td><code>${escapeHtml(r.field)}</code></td><td>${paths(r.to, r.records)}</td>` +
    `<td class="n">${r.records}</td><td class="n">${r.carried}</td><td class="n">${r.dropped}</td></tr>`
  return [
    '<h2>Fields</h2>',
    '<p class="note">Each field of the case as evalferry reads it, found by its values in the source record and in the record written for it. ' +
      `Carried: held under <code>${CARRY_KEY}</code> in the target's free-form slot, read back by evalferry. Dropped: not in the written record.` +
      (review.unread.length ? ` <span id="unread">Not read back: ${review.unread.map(escapeHtml).join('; ')}.</span>` : '') +
      '</p>',
    '<table id="fields">',
    '<thead><tr><th>Source field</th><th>Case field</th><th>Target field</th><th>Records</th><th>Carried</th><th>Dropped</th></tr></thead>',
    '<tbody>',
    ...rows.map(line),
    '</tbody>',
    '</table>',
  ].join('\n')
}

function warnings(report: ConversionReport): string {
  const groups = warningGroups(report)
  const place = (l: Location) => `<code>${escapeHtml(formatLocation(l).replace(/: $/, '') || '(the file)')}</code>`
  return [
    '<h2>Warnings</h2>',
    groups.length
      ? [
          '<table id="warnings">',
          '<thead><tr><th>Count</th><th>Warning</th><th>First places</th></tr></thead>',
          '<tbody>',
          ...groups.map((g) => `<tr><td class="n">${g.count}</td><td>${escapeHtml(g.message)}</td><td>${g.places.map(place).join('<br>')}</td></tr>`),
          '</tbody>',
          '</table>',
        ].join('\n')
      : '<p id="warnings">No warnings.</p>',
  ].join('\n')
}

function skipped(report: ConversionReport): string {
  if (!report.errors.length) return ''
  return [
    '<h2>Skipped records</h2>',
    '<table id="skipped">',
    '<thead><tr><th>Place</th><th>Code</th><th>Error</th></tr></thead>',
    '<tbody>',
    ...report.errors.slice(0, LISTED_ERRORS).map((e) => `<tr><td><code>${escapeHtml(formatLocation(e.location).replace(/: $/, ''))}</code></td><td>${escapeHtml(e.code)}</td><td>${escapeHtml(e.message)}</td></tr>`),
    '</tbody>',
    '</table>',
    report.errors.length > LISTED_ERRORS ? `<p class="note">… ${report.errors.length - LISTED_ERRORS} more (see --rejects).</p>` : '',
  ].join('\n')
}

function records(review: Review): string {
  if (!review.samples.length) return '<h2>Records</h2>\n<p id="records">No record was read.</p>'
  const out = ['<h2>Records</h2>', `<p class="note legend">The first ${review.samples.length}, as read and as written; <mark>marked</mark>: what was carried under <code>${CARRY_KEY}</code>.</p>`, '<div id="records">']
  review.samples.forEach((s, i) => {
    out.push(
      `<section class="record" data-record="${i + 1}">`,
      `<h3>${i + 1}. <code>${escapeHtml(formatLocation(s.place).replace(/: $/, ''))}</code></h3>`,
      '<div class="pair">',
      `<div class="source"><h3>Source</h3>${s.source === undefined ? '<p class="note">(read from an included file)</p>' : `<pre>${jsonHtml(s.source, new Set(s.carriedFrom))}</pre>`}</div>`,
      `<div class="written"><h3>Written</h3>${s.written === undefined ? '<p class="note">(not read back)</p>' : `<pre>${jsonHtml(s.written, undefined)}</pre>`}</div>`,
      '</div>',
      '</section>',
    )
  })
  out.push('</div>')
  return out.join('\n')
}

/**
 * A value as indented JSON, escaped, with carried parts marked: in a written record the carry
 * key's value, in a source record the values at `carried` (paths as `FieldRow` names them).
 */
function jsonHtml(value: unknown, carried: Set<string> | undefined): string {
  const pad = (depth: number) => '  '.repeat(depth)
  const mark = (html: string, yes: boolean) => (yes ? `<mark class="carried">${html}</mark>` : html)
  const scalar = (v: unknown): string => {
    if (typeof v === 'string') {
      const shown = v.length > SHOWN_CHARS ? `${v.slice(0, SHOWN_CHARS)}… (${v.length - SHOWN_CHARS} more characters)` : v
      return escapeHtml(JSON.stringify(shown))
    }
    if (typeof v === 'bigint') return v.toString()
    if (v === undefined) return 'null'
    if (v instanceof Uint8Array) return escapeHtml(`<${v.length} bytes>`)
    return escapeHtml(JSON.stringify(v) ?? String(v))
  }
  const walk = (v: unknown, depth: number, path: string): string => {
    if (Array.isArray(v)) {
      if (!v.length) return '[]'
      return `[\n${v.map((x) => pad(depth + 1) + walk(x, depth + 1, path)).join(',\n')}\n${pad(depth)}]`
    }
    // JSON text in a cell (a table's metadata, its evalferry column) is shown as the object it holds, so that its carry is marked too.
    const text = typeof v === 'string' ? asObject(v) : undefined
    if (text) return `<span class="note">JSON text:</span> ${walk(text, depth, path)}`
    if (v !== null && typeof v === 'object' && !(v instanceof Uint8Array) && !(v instanceof Date)) {
      const entries = Object.entries(v)
      if (!entries.length) return '{}'
      const lines = entries.map(([k, x]) => {
        const p = path ? `${path}.${k}` : k
        const marked = carried ? carried.has(p) : k === CARRY_KEY
        return pad(depth + 1) + mark(`${escapeHtml(JSON.stringify(k))}: ${walk(x, depth + 1, p)}`, marked)
      })
      return `{\n${lines.join(',\n')}\n${pad(depth)}}`
    }
    return scalar(v)
  }
  return walk(value, 0, '')
}
