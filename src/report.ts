import { type ErrorCode, formatLocation, type Location } from './errors.ts'

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
  warnings: Warning[]
  /** Warnings beyond those listed, counted only. */
  more_warnings: number
  errors: RecordError[]
}

const MAX_LISTED_WARNINGS = 200

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
    errors: [],
  }
}

export function addWarning(report: ConversionReport, message: string, location: Location): void {
  if (report.warnings.length < MAX_LISTED_WARNINGS) report.warnings.push({ message, location })
  else report.more_warnings++
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
  for (const w of from.warnings) addWarning(into, w.message, w.location)
  into.more_warnings += from.more_warnings
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
    lines.push(`${warningCount} warning${warningCount === 1 ? '' : 's'}:`)
    for (const w of report.warnings.slice(0, 5)) lines.push(`  ${formatLocation(w.location)}${w.message}`)
    if (warningCount > 5) lines.push(`  … ${warningCount - 5} more${report.output ? ' (see --report)' : ''}`)
  }
  return lines.join('\n')
}
