/**
 * What every adapter does to a record's fields: check their types with errors that name the
 * field, prefix the path of a nested object onto its errors, keep the keys a format does not
 * name in `extras` so that they are written back, and warn of CSV cells a pandas reader misreads.
 */
import { fieldError, withFieldPrefix } from '../src/errors.ts'
import { hasKeys, isJsonObject, type EvalCase, type JsonObject } from '../src/model.ts'
import type { EncodeContext } from './types.ts'

/** Type checks whose messages call an object `objectNoun` (YAML users say "a mapping"). */
export function fieldChecks(objectNoun = 'an object') {
  const describeType = (value: unknown): string => {
    if (value === undefined) return 'none'
    if (value === null) return 'null'
    if (Array.isArray(value)) return 'a list'
    return typeof value === 'object' ? objectNoun : `${typeof value} ${JSON.stringify(value)}`
  }
  return {
    describeType,
    expectString(value: unknown, field: string): string {
      if (typeof value !== 'string') throw fieldError(field, `expected a string, got ${describeType(value)}`)
      return value
    },
    expectObject(value: unknown, field: string): JsonObject {
      if (!isJsonObject(value)) throw fieldError(field, `expected ${objectNoun}, got ${describeType(value)}`)
      return value
    },
  }
}

/** The cell texts pandas' `read_csv` reads as missing by default (`keep_default_na`); the empty cell, an absent field's, aside. */
const PANDAS_NA = new Set(['#N/A', '#N/A N/A', '#NA', '-1.#IND', '-1.#QNAN', '-NaN', '-nan', '1.#IND', '1.#QNAN', '<NA>', 'N/A', 'NA', 'NULL', 'NaN', 'None', 'n/a', 'nan', 'null'])

/**
 * Warns of each cell of a CSV row that `reader`, which reads CSV through pandas, takes for a
 * missing value (`N/A`, `None`, `null`…): the text is written as it is, and evalferry reads it back.
 * `consequences`: what a column's missing value leads to, added to its warning.
 */
export function warnPandasMissing(row: JsonObject, ctx: EncodeContext, reader: string, consequences?: Record<string, string>): void {
  for (const column in row) {
    const value = row[column]
    if (typeof value === 'string' && PANDAS_NA.has(value)) {
      ctx.warn(`the cell "${value}" is read by pandas (${reader}) as a missing value, not as this text${(consequences && Object.hasOwn(consequences, column) && consequences[column]) || ''}`, column)
    }
  }
}

/** A cell pandas' `read_csv` reads as a number (`2`, ` 2.5`, `1e5`, `inf`) or a boolean (`True`, `false`): where every cell of a column is one, the column's values are no longer text. */
export function pandasReadsAs(cell: string): 'a number' | 'a boolean' | undefined {
  if (PANDAS_NUMBER.test(cell)) return 'a number'
  if (PANDAS_BOOLEAN.test(cell)) return 'a boolean'
  return undefined
}

const PANDAS_NUMBER = /^(?:[ \t]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[ \t]*|[+-]?[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)$/
const PANDAS_BOOLEAN = /^(?:true|false)$/i

/** Runs `fn`, prefixing `prefix` onto the field path of any error it throws. */
export function under<T>(prefix: string, fn: () => T): T {
  try {
    return fn()
  } catch (error) {
    throw withFieldPrefix(error, prefix)
  }
}

type ExtrasHolder = { extras?: { [format: string]: JsonObject } }

/**
 * The adapters' markers, in `extras[format]`, of how a source spelled its data rather than of data:
 * its keys in their order (`$keys`), which key or style held a field (`$form`), a value's exact
 * text (`$text`), a table's column order (`$columns`). Written without them, the data is the same.
 */
export const SPELLING_MARKERS: ReadonlySet<string> = new Set(['$keys', '$form', '$text', '$columns'])

/**
 * Unknown source keys of `format`, kept as they are in `extras[format]`; a source key starting
 * with `$` gets one more `$`, so that it never collides with the adapter's own markers.
 */
export function extrasOf(format: string) {
  const fromExtraKey = (key: string): string | undefined => {
    if (key.startsWith('$$')) return key.slice(1)
    return key.startsWith('$') ? undefined : key
  }
  return {
    toExtraKey: (key: string): string => (key.startsWith('$') ? '$' + key : key),
    fromExtraKey,
    ownExtras: (holder: ExtrasHolder | undefined): JsonObject => holder?.extras?.[format] ?? {},
    setExtras<T extends ExtrasHolder>(target: T, extras: JsonObject): T {
      if (hasKeys(extras)) target.extras = { ...(target.extras ?? {}), [format]: extras }
      return target
    },
    /** Writes the unknown source keys kept in `extras` back into `record`. */
    writeExtras(record: JsonObject, extras: JsonObject): void {
      for (const key in extras) {
        const original = fromExtraKey(key)
        if (original !== undefined && !Object.hasOwn(record, original)) record[original] = extras[key]!
      }
    },
  }
}

/** The case whose columns head the table of an empty dataset: an input and its expected output. */
export const A_CASE: EvalCase = { input: [{ role: 'user', content: '' }], expected_output: [{ role: 'assistant', content: '' }] }
