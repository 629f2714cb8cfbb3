import type { ErrorCode } from './error-codes.ts'
import { formatLocation, type Location } from './location.ts'
import type { DryRun, PushSummary } from './services/context.ts'

export interface Warning {
  message: string
  location: Location
}

/** A record refused: what its error says, its code (as a rejects line and `detect` give it) and where. */
export interface RecordError extends Warning {
  code: ErrorCode
}

/** What a conversion did (SPEC section 3): printed as a summary, written as JSON with `--report`. */
export interface ConversionReport {
  inputs: string[]
  output?: string
  from: string
  to: string
  records: { read: number; written: number; skipped: number }
  /** Canonical fields the target could not express, carried under `evalferry`, with how many cases. */
  carried: Record<string, number>
  /** Fields lost (with `--no-extras`), with how many cases. */
  dropped: Record<string, number>
  /** The first warnings, each as it was given. */
  warnings: Warning[]
  /** Warnings beyond those listed, counted only. */
  more_warnings: number
  /** Every warning, grouped by kind (its text with quoted values and numbers left out), in the order the kinds came. */
  warning_groups: WarningGroup[]
  errors: RecordError[]
  /** A push to a service's dataset: what it did. */
  push?: PushSummary
  /** A push with `dryRun`: what it would have sent. */
  dry_run?: DryRun
}

/** Warnings of one kind: how many, and the first few as they were given. */
export interface WarningGroup {
  /** The kind's text: the message with each quoted value as `"…"` and each number as `#`. */
  kind: string
  count: number
  /** The first warnings of the kind (at most `FIRST_OF_KIND`), with their own messages and places. */
  first: Warning[]
}

const MAX_LISTED_WARNINGS = 200
/** How many warnings of a kind are listed with their places; the rest are counted. */
const FIRST_OF_KIND = 5
/** Kinds past this many fall into one group of their own, so that warnings naming a value each cannot grow the report without end. */
const MAX_KINDS = 100
const OTHER_KINDS = 'warnings of other kinds'

/** An empty report; a caller of `read` passes one to keep the warnings. */
export function newReport(from = '', to = '', inputs: string[] = [], output?: string): ConversionReport {
  return {
    inputs,
    ...(output === undefined ? {} : { output }),
    from,
    to,
    records: { read: 0, written: 0, skipped: 0 },
    carried: {},
    dropped: {},
    warnings: [],
    more_warnings: 0,
    warning_groups: [],
    errors: [],
  }
}

export function addWarning(report: ConversionReport, message: string, location: Location): void {
  if (report.warnings.length < MAX_LISTED_WARNINGS) report.warnings.push({ message, location })
  else report.more_warnings++
  addToGroup(report, { message, location }, 1)
}

/**
 * The kind of a warning: its text without the values it names (`the cell "N/A" …` and `the cell
 * "null" …` are one kind), so that a warning given on every row of a table is told once.
 */
export function warningKind(message: string): string {
  return message.replace(/"(?:[^"\\]|\\.)*"/g, '"…"').replace(/(?<![\w.-])-?\d+(?:\.\d+)?(?![\w.])/g, '#')
}

/** Each report's groups by kind; rebuilt from the groups for a report that crossed a thread. */
const groupsByKind = new WeakMap<ConversionReport, Map<string, WarningGroup>>()

function groupOf(report: ConversionReport, kind: string): WarningGroup {
  report.warning_groups ??= []
  let byKind = groupsByKind.get(report)
  if (!byKind) {
    byKind = new Map(report.warning_groups.map((g) => [g.kind, g]))
    groupsByKind.set(report, byKind)
  }
  const key = byKind.has(kind) || byKind.size < MAX_KINDS ? kind : OTHER_KINDS
  let group = byKind.get(key)
  if (!group) {
    group = { kind: key, count: 0, first: [] }
    byKind.set(key, group)
    report.warning_groups.push(group)
  }
  return group
}

/** Counts `count` warnings of the kind of `warning`, listing it among the first of its kind while there is room. */
function addToGroup(report: ConversionReport, warning: Warning, count: number, first: Warning[] = [warning]): void {
  const group = groupOf(report, warningKind(warning.message))
  group.count += count
  for (const w of first) if (group.first.length < FIRST_OF_KIND) group.first.push(w)
}

export function countField(tally: Record<string, number>, field: string): void {
  tally[field] = (tally[field] ?? 0) + 1
}

/** Folds the report of one file of a batch into the batch's report. */
export function mergeReport(into: ConversionReport, from: ConversionReport): void {
  into.records.read += from.records.read
  into.records.written += from.records.written
  into.records.skipped += from.records.skipped
  for (const [k, v] of Object.entries(from.carried)) into.carried[k] = (into.carried[k] ?? 0) + v
  for (const [k, v] of Object.entries(from.dropped)) into.dropped[k] = (into.dropped[k] ?? 0) + v
  for (const w of from.warnings) {
    if (into.warnings.length < MAX_LISTED_WARNINGS) into.warnings.push(w)
    else into.more_warnings++
  }
  into.more_warnings += from.more_warnings
  for (const g of from.warning_groups ?? []) {
    const first = g.first[0]
    if (first) addToGroup(into, first, g.count, g.first)
  }
  into.errors.push(...from.errors)
}

/** The few lines printed to stderr after a conversion. */
export function summarize(report: ConversionReport): string {
  const { read, written, skipped } = report.records
  const lines = [`${report.from} → ${report.to}: ${read} read, ${written} written, ${skipped} skipped`]
  const fields = (tally: Record<string, number>) =>
    Object.entries(tally)
      .map(([f, n]) => `${f} (${n})`)
      .join(', ')
  if (Object.keys(report.carried).length) lines.push(`carried under "evalferry": ${fields(report.carried)}`)
  if (Object.keys(report.dropped).length) lines.push(`dropped: ${fields(report.dropped)}`)
  // Skipped records are named, the first few, as warnings are: which ones were left out is the first thing to know.
  if (report.errors.length) {
    lines.push(`${report.errors.length} skipped:`)
    for (const e of report.errors.slice(0, 5)) lines.push(`  ${formatLocation(e.location)}${e.message}`)
    if (report.errors.length > 5) lines.push(`  … ${report.errors.length - 5} more (see --rejects or --report)`)
  }
  const warningCount = report.warnings.length + report.more_warnings
  if (warningCount) {
    const groups = report.warning_groups ?? []
    const kinds = groups.length > 1 ? `, of ${groups.length} kinds` : ''
    lines.push(`${warningCount} warning${warningCount === 1 ? '' : 's'}${kinds}:`)
    // A kind given many times is told once, with its count and its first places.
    for (const g of groups.slice(0, SUMMARY_KINDS)) {
      const [w, ...others] = g.first
      if (!w) continue
      lines.push(`  ${g.count > 1 ? `${g.count} × ` : ''}${formatLocation(w.location)}${w.message}`)
      if (others.length) lines.push(`    also ${others.map((o) => shortPlace(o.location, w.location)).join(', ')}${g.count > g.first.length ? ', …' : ''}`)
    }
    if (groups.length > SUMMARY_KINDS) {
      const rest = groups.slice(SUMMARY_KINDS).reduce((n, g) => n + g.count, 0)
      lines.push(`  … ${rest} more, of ${groups.length - SUMMARY_KINDS} other kind${groups.length - SUMMARY_KINDS === 1 ? '' : 's'}${report.output ? ' (see --report)' : ''}`)
    }
  }
  return lines.join('\n')
}

/** How many kinds of warning the summary names. */
const SUMMARY_KINDS = 5

/** A place as the summary names the later warnings of a kind: its line, and its file and field where they differ from the first's. */
function shortPlace(location: Location, first: Location): string {
  const { file, field, ...rest } = location
  const place: Location = { ...(file === first.file ? {} : { file }), ...rest, ...(field === first.field ? {} : { field }) }
  return formatLocation(place).replace(/:\s*$/, '')
}
