import type { EvalCase } from './model.ts'
import type { ConversionReport } from './report.ts'

/**
 * Typed errors. Each carries a `code` that callers branch on, an exit code for the CLI, and, for
 * data errors, the place: file, line (1-based), column, record index and field path.
 */

export interface Location {
  file?: string
  line?: number
  column?: number
  /** 0-based record index within the file, where no line is known (Parquet rows, say). */
  record?: number
  /** Dotted path of the field at fault, e.g. `turns[2].role`. */
  field?: string
}

export type ErrorCode =
  | 'E_PARSE' // the container could not be parsed (broken JSON, YAML, CSV quoting, Parquet)
  | 'E_FIELD' // a record parsed but a field is missing or has the wrong type
  | 'E_LAYOUT' // a case needs a column that the layout, chosen from the first cases, lacks (see LayoutError)
  | 'E_DUPLICATE_ID'
  | 'E_LOSSY' // --strict and something could not be carried
  | 'E_USAGE'
  | 'E_DETECT'
  | 'E_IO'
  | 'E_FETCH'
  | 'E_REF'
  | 'E_CACHE'
  | 'E_OFFLINE'
  | 'E_UNSAFE'
  | 'E_AUTH'

const EXIT_BY_CODE: Record<ErrorCode, 1 | 2 | 3> = {
  E_PARSE: 1,
  E_FIELD: 1,
  E_LAYOUT: 1,
  E_DUPLICATE_ID: 1,
  E_LOSSY: 1,
  E_DETECT: 1,
  E_USAGE: 2,
  E_IO: 1,
  E_FETCH: 3,
  E_REF: 3,
  E_CACHE: 3,
  E_OFFLINE: 3,
  E_UNSAFE: 3,
  E_AUTH: 3,
}

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

/** Thrown by adapters, which know the field but not the file; the pipeline adds the place. */
export function fieldError(field: string, message: string): DataError {
  return new DataError('E_FIELD', message, { field })
}

export function formatLocation(loc: Location): string {
  let place = ''
  if (loc.file !== undefined) {
    place = loc.file
    if (loc.line !== undefined) {
      place += `:${loc.line}`
      if (loc.column !== undefined) place += `:${loc.column}`
    } else if (loc.record !== undefined) {
      place += ` record ${loc.record + 1}`
    }
  } else if (loc.line !== undefined) {
    place = `line ${loc.line}`
  } else if (loc.record !== undefined) {
    place = `record ${loc.record + 1}`
  }
  const parts = [place, loc.field].filter((p) => p !== undefined && p !== '')
  return parts.length ? parts.join(': ') + ': ' : ''
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
