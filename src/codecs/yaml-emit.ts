/**
 * YAML text of one record, as the `yaml` package writes it, made faster. `yaml` builds a document
 * of nodes for every record: most of the 70 µs a small record took to convert. Here the mappings,
 * lists, plain scalars and literal blocks of a record are written directly, and text of one line
 * that cannot be plain or that YAML 1.1 reads otherwise, quoted (`"Answer: 42"`, `"yes"`, a key
 * `"n"`); a pair or list item holding a value whose form takes judgement (text with a control
 * character, a line or paragraph separator or a byte-order mark, text of several lines whose last
 * line or first line that is not empty holds only spaces, a key of several lines or past 128
 * characters) is handed to `yaml` (see `handedOver`). The result is byte for byte what `yaml`
 * writes for the whole record with the YAML 1.1 guards of `yamlText` (a property test holds the
 * two together), so that PyYAML reads back what `yaml` does. `yamlWriter` writes a document of
 * records so; reading YAML is `yaml.ts`'s.
 */
import { createRequire } from 'node:module'
import type * as Yaml from 'yaml'
import type { ScalarTag, Scalar, Tags } from 'yaml'
import { DataError } from '../errors.ts'
import { hasKeys, type JsonObject } from '../model.ts'
import { depthOver, LIST_KEY, type RecordWriter, type Sink } from './types.ts'

/**
 * The `yaml` package, loaded the first time it is needed: the writer hands it few values and the
 * reader few items, and loading it took a fifth of converting a small file (35 of 180 ms).
 */
let loaded: typeof Yaml | undefined
export function yamlPackage(): typeof Yaml {
  return (loaded ??= createRequire(import.meta.url)('yaml') as typeof Yaml)
}

/**
 * Lists and mappings nested deeper are refused, read or written: the `yaml` parser reads some 800
 * levels before its stack runs out (how many depends on the stack), and a limit of its own says
 * the same thing at the same depth everywhere.
 */
export const MAX_DEPTH = 500

/**
 * A number JavaScript writes with an exponent and no point (`1e-7`, `5e-324`, `1e+21`), written
 * with one (`1.0e-7`): YAML 1.1's floats have a point, and PyYAML reads the other as text.
 */
function withPoint(number: string): string {
  return EXPONENT_WITHOUT_POINT.test(number) ? number.replace('e', '.0e') : number
}
const EXPONENT_WITHOUT_POINT = /^-?\d+e/

/** `yaml`'s tags, those that write numbers writing them `withPoint`. */
function numbersWithPoint(tags: Tags): Tags {
  return tags.map((tag) => {
    // A tag named by its id (`'binary'`) is not among the schema's own, which these are.
    if (typeof tag === 'string') return tag
    const { identify, stringify: write } = tag as ScalarTag
    if (!write || !(identify?.(1e-7) || identify?.(1e21))) return tag
    return { ...tag, stringify: (...args: Parameters<typeof write>) => withPoint(write(...args)) } as ScalarTag
  })
}

export const STRINGIFY_OPTIONS = { lineWidth: 0, minContentWidth: 0, aliasDuplicateObjects: false, customTags: numbersWithPoint } as const

const FRAGILE_BLOCK = /^\n* +(\n|$)/

/**
 * Plain text that YAML 1.1 readers (PyYAML, and so most Python tools) take for something else: the
 * booleans yes, no, on and off, numbers like 1_000, 0b101 or 12:30:00 (base 60), and dates, with a
 * time after a `T` or spaces (`2024-01-01 10:00:00 +02:00`). YAML 1.2 reads them as text, so `yaml`
 * writes them plain; they are quoted for both to read the same.
 */
const YAML11_SUSPECT = /^(?:[-+.]?\d[\w.:+-]*|\d{4}-\d\d?-\d\d?[\t ]+[\w.:+-]+(?:[\t ]+[\w.:+-]+)?|[yn]|yes|no|on|off)$/i

const MERGE_KEY = '<<'
/**
 * Text YAML 1.1 gives a type no reader constructs: the merge key `<<` and the value key `=`, which
 * PyYAML refuses as a value (and `=` as a key), file and all.
 */
const YAML11_UNCONSTRUCTED = new Set([MERGE_KEY, '='])

/**
 * Characters that `yaml` writes as they are and YAML 1.1 readers do not read back: DEL, the C1
 * controls, U+FFFE and U+FFFF, which are no printable characters of YAML (PyYAML refuses them, file
 * and all); NEL, which it reads in quotes as a space; the line and paragraph separators, line breaks
 * to it, which it refuses in a plain or block scalar. Text holding one is written double-quoted,
 * with them escaped (`\x7f`, `\N`, `\L`, `\P`, `\ufffe`).
 */
const UNSAFE_FOR_YAML11 = /[\x7f-\x9f\u2028\u2029\ufffe\uffff]/
const UNSAFE_FOR_YAML11_ALL = new RegExp(UNSAFE_FOR_YAML11.source, 'g')
const NAMED_ESCAPES: Record<string, string> = { '\x85': '\\N', '\u2028': '\\L', '\u2029': '\\P' }

function escapeFor11(ch: string): string {
  const code = ch.charCodeAt(0)
  return NAMED_ESCAPES[ch] ?? (code < 0x100 ? `\\x${code.toString(16)}` : `\\u${code.toString(16)}`)
}

/**
 * Text of one line holding a tab, which `yaml` writes plain where it can: PyYAML refuses a tab
 * inside a plain scalar, file and all. It is written double-quoted, the tab as `\t`.
 */
function tabInOneLine(text: string): boolean {
  return text.includes('\t') && !text.includes('\n')
}

/**
 * A key that is an integer's text (`0`, `10`, `-5`) is written as that integer, plain: a JSON
 * object's keys are all text, so an integer key read from YAML (a rubric's `score_ranges: {0: …,
 * 10: …}`) comes as one, and YAML 1.1 readers (PyYAML) take it back as the integer it was.
 */
const INTEGER_KEY = /^(?:0|-?[1-9]\d{0,14})$/

function mustQuoteKey(key: string): boolean {
  return UNSAFE_FOR_YAML11.test(key) || tabInOneLine(key) || readsOtherwiseInYaml11(key)
}

function readsOtherwiseInYaml11(text: string): boolean {
  if (YAML11_UNCONSTRUCTED.has(text)) return true
  if (!YAML11_SUSPECT.test(text)) return false
  try {
    return yamlPackage().parse(text, { version: '1.1' }) !== text
  } catch {
    return false
  }
}

/**
 * `value` with every multi-line string whose first non-empty line is only spaces double-quoted: as
 * a block scalar, `yaml` writes it without an indentation indicator and the spaces are lost. Text
 * that YAML 1.1 reads otherwise is double-quoted too, as a value or as a key.
 */
function quoteFragile(value: unknown): unknown {
  if (typeof value === 'string') {
    if (!FRAGILE_BLOCK.test(value) && !UNSAFE_FOR_YAML11.test(value) && !tabInOneLine(value) && !readsOtherwiseInYaml11(value)) return value
    return quoted(value)
  }
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const fixed = quoteFragile(value[i])
      if (fixed !== value[i]) (copy ??= [...value])[i] = fixed
    }
    return copy ?? value
  }
  let copy: Record<string, unknown> | undefined
  let keysChanged = false
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key]
    const fixed = quoteFragile(item)
    if (fixed !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = fixed
    if (INTEGER_KEY.test(key) || mustQuoteKey(key)) keysChanged = true
  }
  if (!keysChanged) return copy ?? value
  // A key YAML 1.1 reads otherwise (`on:`, `no:`), or the merge key's text, is quoted too, and an integer's is the integer: the mapping goes as a Map with those keys.
  return new Map(Object.entries(copy ?? value).map(([key, item]) => [INTEGER_KEY.test(key) ? Number(key) : mustQuoteKey(key) ? quoted(key) : key, item]))
}

function quoted(text: string): Scalar {
  const scalar = new (yamlPackage().Scalar)(text)
  scalar.type = 'QUOTE_DOUBLE'
  return scalar
}

/** `value` as `yaml` writes it, with the YAML 1.1 guards. */
export function yamlText(value: unknown): string {
  const text = yamlPackage().stringify(quoteFragile(value), STRINGIFY_OPTIONS)
  // Every text holding one of these is double-quoted now, where an escape reads as the character.
  return UNSAFE_FOR_YAML11.test(text) ? text.replace(UNSAFE_FOR_YAML11_ALL, escapeFor11) : text
}

/**
 * Text `yaml` writes plain and as it is, on one line, in a mapping or list: it starts with a letter,
 * `_` or `$` (evalferry's own keys, `$keys`), a character past ASCII (`✓`, `é`, an emoji), or a
 * digit (below); holds no line break, no control (a tab included), no line or paragraph separator,
 * byte-order mark, U+FFFE, U+FFFF or half a character (see `plainChars`), and nothing `NOT_PLAIN`
 * finds (`: `, ` #`, a space or `:` last; `http://x.y/z#a` holds none of those); and is read as
 * text by YAML 1.2 and 1.1 alike (not `true`, `null`, `yes`, `off`).
 */
const PLAIN = /^[A-Za-z_$0-9\u00a0-\u2027\u202a-\udbff\ue000-\ufefe\uff00-\ufffd][^\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]*$/

/** `PLAIN`'s characters, and no half of a character (which `yaml` writes quoted). */
function plainChars(text: string): boolean {
  return PLAIN.test(text) && !(MAY_FORCE_QUOTES.test(text) && FORCES_QUOTES.test(text))
}
/** Words YAML 1.2 reads as other than text (`yaml` tests them case by case; all cases here). */
const CORE_WORDS = /^(?:true|false|null)$/i
/**
 * Text that starts with a digit is a number, a date or a time in some schema unless it holds a
 * letter none of those use (they use e for exponents, t and z in timestamps; after a leading 0, x
 * and the hexadecimal digits, b and o and no letter after them): `1ac80610-e9d6-…` and
 * `0b1e5a7c-3f2d-…` (UUIDs) are text everywhere, `1e5`, `0x1f` and `2001-12-14t21:59:43z` are not.
 */
const NO_NUMBER = /^(?:0[xX].*[G-Zg-z]|0[bBoO].*[A-Za-z]|(?!0[xXbBoO])\d.*[A-DF-SU-Ya-df-su-y])/
/** Longer keys are written by `yaml` as explicit (`? key`) past 1024 characters: left to it. */
const MAX_PLAIN_KEY = 128

function isPlain(text: string): boolean {
  if (!plainChars(text) || NOT_PLAIN.test(text)) return false
  const first = text.charCodeAt(0)
  return first >= 0x30 && first <= 0x39 ? NO_NUMBER.test(text) : !CORE_WORDS.test(text) && !YAML11_SUSPECT.test(text)
}

/**
 * Text of one line that no plain scalar can be (it starts with an indicator, holds `: ` or ` #`, ends
 * in a space or `:`; a tab counts as a space), which `yaml` writes quoted whatever schema it is read in.
 */
const NOT_PLAIN = /^[\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][\t ]|:[\t ]|[\t ]#|[\t :]$/
/** Characters JSON and `yaml` escape otherwise, or that take `yaml`'s judgement: left to it. */
const OWN_ESCAPES = /[\n\u2028\u2029\ufeff]/

/**
 * Text of one line that cannot be plain, quoted as `yaml` quotes it: in single quotes when it holds
 * a double quote and no single one, else in double quotes, escaped as JSON escapes it (it holds no
 * character JSON writes otherwise but `"`, `\` and a tab). Text with a tab is double-quoted, as
 * `quoteFragile` has `yaml` write it.
 */
function quotedLine(text: string): string | undefined {
  if (OWN_ESCAPES.test(text) || UNSAFE_FOR_YAML11.test(text) || (MAY_FORCE_QUOTES.test(text) && FORCES_QUOTES.test(text))) return undefined
  if (text.includes('\t')) return JSON.stringify(text)
  if (!NOT_PLAIN.test(text)) return undefined
  return text.includes('"') && !text.includes("'") ? `'${text}'` : JSON.stringify(text)
}

/**
 * Text that YAML 1.1 reads otherwise (`yes`, `n`, `1_000`, `2024-12-12T15:15:50Z`), double-quoted
 * as `quoteFragile` has `yaml` write it: such text holds only characters JSON writes as they are.
 */
function quotedFor11(text: string): string | undefined {
  return readsOtherwiseInYaml11(text) ? `"${text}"` : undefined
}

/** Text of one line written as `yaml` writes it, as a value or a key: plain, quoted, or undefined (left to `yaml`). */
function oneLine(text: string): string | undefined {
  if (isPlain(text)) return text
  return text === '' ? '""' : (quotedLine(text) ?? quotedFor11(text))
}

/** A scalar written directly, or undefined when it is left to `yaml`. */
function scalar(value: unknown): string | undefined {
  if (typeof value === 'string') return oneLine(value)
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? withPoint(JSON.stringify(value)) : undefined
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (value === null) return 'null'
  return undefined
}

/** Text `yaml` writes double-quoted whatever its form: controls, and halves of characters. */
const FORCES_QUOTES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u{D800}-\u{DFFF}]/u
/** The same, and halves of characters that are whole: tested first, as a pattern that reads code points is slower. */
const MAY_FORCE_QUOTES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]/
/** Runs of line breaks; `yaml` indents the line after each. */
const BREAKS = /\n+/g
/** In the breaks and spaces that end a block, runs of breaks but the last: `yaml` indents the line after each. */
const END_BREAKS = /(^|(?<!\n))\n+(?!\n|$)/g
/** Text whose last line holds only spaces or tabs: `yaml` quotes it. */
const SPACES_LAST = /\n[\t ]+$/

/**
 * Text of several lines as `yaml` writes it in a block: a literal block scalar whose lines stand at
 * `indent` (never ''), its chomping from the breaks and spaces that end it (`|-` none, `|` one,
 * `|+` more, or text of only those), an indentation indicator where it starts with a space (`|2-`).
 * Undefined where `yaml` writes it otherwise: text that must be quoted, or whose last line, or
 * first line that is not empty (`quoteFragile`), holds only spaces.
 */
function literal(text: string, indent: string): string | undefined {
  if ((MAY_FORCE_QUOTES.test(text) && FORCES_QUOTES.test(text)) || UNSAFE_FOR_YAML11.test(text) || SPACES_LAST.test(text) || FRAGILE_BLOCK.test(text)) return undefined
  let endStart = text.length
  for (let c = text.charCodeAt(endStart - 1); endStart > 0 && (c === 0x0a || c === 0x20 || c === 0x09); c = text.charCodeAt(--endStart - 1));
  let end = text.slice(endStart)
  const endBreak = end.indexOf('\n')
  const chomp = endBreak === -1 ? '-' : endStart === 0 || endBreak !== end.length - 1 ? '+' : ''
  const value = text.slice(0, endStart)
  if (end.endsWith('\n')) end = end.slice(0, -1)
  if (end) end = end.replace(END_BREAKS, `$&${indent}`)
  // A space among the breaks and spaces it starts with asks for the indicator.
  let space = false
  for (let i = 0, c = value.charCodeAt(0); c === 0x20 || c === 0x0a; c = value.charCodeAt(++i)) if (c === 0x20) space = true
  return `|${space ? '2' : ''}${chomp}\n${indent}${value.replace(BREAKS, `$&${indent}`)}${end}`
}

function isCollection(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return true
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function isEmpty(value: object): boolean {
  return Array.isArray(value) ? value.length === 0 : !hasKeys(value)
}

/**
 * `yaml`'s text of `value` (a pair as a mapping of one key, or a list item as a list of one), its
 * first line without indentation, the others at `indent`. `yaml` writes some text by its place (a
 * `---` that starts a key is quoted at one depth and not another), so `value` is written nested
 * in mappings as deep as `indent`, and the lines of those mappings' keys dropped.
 */
function handedOver(value: unknown, indent: string): string {
  const depth = indent.length / 2
  let nested = value
  for (let i = 0; i < depth; i++) nested = { _: nested }
  let text = yamlText(nested)
  let start = 0
  for (let i = 0; i < depth; i++) start = text.indexOf('\n', start) + 1
  text = text.slice(start + indent.length)
  return text.endsWith('\n') ? text.slice(0, -1) : text
}

/**
 * A block mapping; its first line goes where it is put, the others at `indent`. Pairs in a row
 * that are handed to `yaml` go together, in one call.
 */
function mapping(value: Record<string, unknown>, indent: string): string {
  let out = ''
  let pending: Record<string, unknown> | undefined
  const flush = () => {
    if (out) out += `\n${indent}`
    out += handedOver(pending, indent)
    pending = undefined
  }
  for (const key in value) {
    const item = value[key]
    if (item === undefined) continue
    const text = pair(key, item, indent)
    if (text === undefined) {
      // defined, not assigned: a `__proto__` key stays a key
      Object.defineProperty((pending ??= {}), key, { value: item, enumerable: true, writable: true, configurable: true })
      continue
    }
    if (pending) flush()
    if (out) out += `\n${indent}`
    out += text
  }
  if (pending) flush()
  return out
}

/** A pair written directly, or undefined when it is left to `yaml`. */
function pair(name: string, item: unknown, indent: string): string | undefined {
  if (name.length > MAX_PLAIN_KEY) return undefined
  // Plain, `<<` is a merge key: its value's keys would be read into this mapping, and the key lost.
  const key = name === MERGE_KEY ? '"<<"' : INTEGER_KEY.test(name) ? name : oneLine(name)
  if (key === undefined) return undefined
  const text = scalar(item)
  if (text !== undefined) return `${key}: ${text}`
  if (typeof item === 'string' && item.includes('\n')) {
    const block = literal(item, `${indent}  `)
    return block === undefined ? undefined : `${key}: ${block}`
  }
  if (!isCollection(item)) return undefined
  if (isEmpty(item)) return `${key}: ${Array.isArray(item) ? '[]' : '{}'}`
  const inner = `${indent}  `
  return `${key}:\n${inner}${Array.isArray(item) ? sequence(item, inner) : mapping(item as Record<string, unknown>, inner)}`
}

/** A block list; its first line goes where it is put, the others at `indent`. */
function sequence(value: unknown[], indent: string): string {
  let out = ''
  for (let i = 0; i < value.length; i++) {
    if (i) out += `\n${indent}`
    out += entry(value[i], indent)
  }
  return out
}

function entry(item: unknown, indent: string): string {
  const text = scalar(item)
  if (text !== undefined) return `- ${text}`
  if (isCollection(item)) {
    if (isEmpty(item)) return Array.isArray(item) ? '- []' : '- {}'
    const inner = `${indent}  `
    return `- ${Array.isArray(item) ? sequence(item, inner) : mapping(item as Record<string, unknown>, inner)}`
  }
  if (typeof item === 'string' && item.includes('\n')) {
    const block = literal(item, `${indent}  `)
    if (block !== undefined) return `- ${block}`
  }
  return handedOver([item], indent)
}

/** A record as a list item at `indent`, every line ended, as `yaml` writes `[record]` indented. */
export function yamlItem(record: Record<string, unknown>, indent: string): string {
  return `${indent}${entry(record, indent)}\n`
}

/** Keys of a document's top mapping, each line ended; '' for none. */
export function yamlMapping(keys: Record<string, unknown>): string {
  const text = mapping(keys, '')
  return text ? `${text}\n` : ''
}

const KEEP_CHOMPING = /[|>][1-9]?\+/

/** A YAML document: header keys, then `listKey:` and one `- ` item per record. */
export function yamlWriter(sink: Sink, layout: { header?: JsonObject; listKey?: string }): RecordWriter {
  let opened = false
  let lastKeepsTrailing = false
  const indent = layout.listKey ? '  ' : ''
  const open = async () => {
    opened = true
    let head = ''
    const header = { ...layout.header }
    delete header[LIST_KEY]
    if (Object.keys(header).length) head += yamlMapping(header) + '\n'
    if (layout.listKey) head += `${layout.listKey}:\n`
    if (head) await sink.write(head)
  }
  let count = 0
  return {
    async write(record: JsonObject) {
      if (!opened) await open()
      if (depthOver(record, MAX_DEPTH)) {
        throw new DataError('E_FIELD', `nested deeper than ${MAX_DEPTH} levels: too deep to write as YAML that reads back`)
      }
      const item = yamlItem(record, indent)
      // A blank line between items reads well, but after a kept (`|+`) block scalar it would join its text.
      await sink.write((count++ && !lastKeepsTrailing ? '\n' : '') + item)
      lastKeepsTrailing = KEEP_CHOMPING.test(item)
    },
    async end() {
      if (!opened) await open()
      if (count === 0 && layout.listKey) {
        // `key:` alone would read as null; an empty list must stay a list.
        await sink.write(`${indent}[]\n`)
      } else if (count === 0) await sink.write('[]\n')
    },
  }
}
