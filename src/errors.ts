import { EXIT_BY_CODE, type ErrorCode } from './error-codes.ts'
import { formatLocation, type Location } from './location.ts'
import type { EvalCase } from './model.ts'
import type { ConversionReport } from './report.ts'

/**
 * Typed errors. Each carries a `code` that callers branch on, an exit code for the CLI, and, for
 * data errors, the place: file, line (1-based), column, record index and field path.
 */

export type { ErrorCode } from './error-codes.ts'
export { formatLocation, type Location } from './location.ts'

export class EvalferryError extends Error {
  readonly code: ErrorCode
  location: Location
  /**
   * Set by `convert()` when it stops: what it had done, the failed record aside (records read,
   * skipped, the warnings and fields carried so far). `written` counts only records an output
   * still holds: none for a file, which a failed conversion leaves as it was.
   */
  report?: ConversionReport

  constructor(code: ErrorCode, message: string, location: Location = {}, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
    this.location = location
  }

  /** The process exit code the CLI uses for this error (SPEC section 5). */
  get exitCode(): 1 | 2 | 3 {
    return EXIT_BY_CODE[this.code]
  }

  /** `file:line:column: field: message`, with the parts that are known. */
  describe(): string {
    return formatLocation(this.location) + this.message
  }
}

/** Bad data: a parse error, a wrong field, a duplicate id. Exit code 1. */
export class DataError extends EvalferryError {}

/**
 * The error of a conversion of `input` that skipped every record it read (`--on-error skip`),
 * before its output is written: an empty dataset is no conversion of a file whose records all failed.
 */
export function noCaseRead(report: ConversionReport, input: string): DataError | undefined {
  const { read, skipped } = report.records
  const first = report.errors[0]
  if (read > 0 || skipped === 0 || !first) return undefined
  const all = skipped === 1 ? 'its one record was' : `all ${skipped} of its records were`
  return new DataError(first.code, `no case was read: ${all} skipped, so nothing is written; the first: ${formatLocation(first.location)}${first.message}`, { file: input })
}

/**
 * A record that the file's layout, chosen from its first records, cannot hold: it needs a column
 * none of them did. `cases` are the record's; `convert` writes the file again with them among the
 * records the layout is chosen from.
 */
export class LayoutError extends DataError {
  cases?: EvalCase[]

  constructor(message: string, location: Location = {}) {
    super('E_LAYOUT', message, location)
  }
}

/** Bad usage: unknown option, missing format, output equal to input. Exit code 2. */
export class UsageError extends EvalferryError {
  constructor(message: string) {
    super('E_USAGE', message)
  }
}

/** An option `signal` that is no AbortSignal, as a UsageError; `where` begins the message (`convert(): `). */
export function requireAbortSignal(where: string, signal: unknown): void {
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new UsageError(`${where}the option signal takes an AbortSignal, not ${signal === null ? 'null' : typeof signal}`)
}

/** A fetch, ref or cache failure in the resolver. Exit code 3. */
export class FetchError extends EvalferryError {}

/** Thrown by adapters, which know the field but not the file; reading and writing add the place. */
export function fieldError(field: string, message: string): DataError {
  return new DataError('E_FIELD', message, { field })
}


/**
 * A message for a terminal: the control characters data or a server put in it (an escape sequence,
 * a carriage return, a bell) shown as `\x1b`, so that none acts on the terminal; tabs and line ends stay.
 */
export function printable(message: string): string {
  return message.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

/** A name from data or a repository in a message: in single quotes, or as a JSON string when it holds a control character (a line end). */
export function quoted(name: string): string {
  return /[\x00-\x1f\x7f-\x9f]/.test(name) ? JSON.stringify(name) : `'${name}'`
}

/** Prefix a field path with the path of the object it sits in: `turns[1]` + `role`. */
export function withFieldPrefix(error: unknown, prefix: string): unknown {
  if (error instanceof EvalferryError) {
    const inner = error.location.field
    error.location.field = inner ? (inner.startsWith('[') ? prefix + inner : `${prefix}.${inner}`) : prefix
  }
  return error
}

/** An error with the file, line or record filled in (an adapter knows only the field). */
export function locate(error: unknown, location: Location): EvalferryError {
  // A mistake in code (a row mapper's, or evalferry's own) is no fault of the record: it stops the run as it is, never skipped.
  if (error instanceof TypeError || error instanceof ReferenceError) throw error
  if (error instanceof EvalferryError) {
    error.location = { ...location, ...error.location }
    return error
  }
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    // A value nested past what recursion can walk (JSON text in a CSV cell, say) is bad data, not a crash.
    return new DataError('E_PARSE', 'nested too deeply: a value holds more levels of lists and objects than can be read', location, { cause: error })
  }
  return new DataError('E_FIELD', (error as Error)?.message ?? String(error), location, { cause: error })
}
