/** Where in the data something is: file, line (1-based), column, record index and field path, and how a message names it. */

export interface Location {
  file?: string
  line?: number
  column?: number
  /** 0-based record index within the file, where no line is known (Parquet rows, say). */
  record?: number
  /** Dotted path of the field at fault, e.g. `turns[2].role`. */
  field?: string
}

/** `file:line:column: field: `, with the parts that are known. */
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
