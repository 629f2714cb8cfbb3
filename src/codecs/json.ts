/**
 * JSON documents, streamed: the reader scans the text once, cuts out each element of the record
 * list and hands only that slice to `JSON.parse`, so a file larger than memory still reads.
 * The list is the top-level array, or the array under one of `recordKeys` of a top-level object
 * (`{"goldens": [...]}`, `{"rows": [...]}`); the object's other keys go to `header`. A top-level
 * object with no such key is one record.
 */
import { DataError } from '../errors.ts'
import type { JsonObject, JsonValue } from '../model.ts'
import { countNewlines, fieldPath, MAX_RECORD_CHARS, NON_FINITE_WRITTEN, protoRefused, SINGLE_KEY, tooLong, type ByteSource, type ReadOptions, type RecordWriter, type Sink, type SourceRecord } from './types.ts'

/** Deeper than this, a document is refused before `JSON.parse` would exhaust the stack. */
export const MAX_DEPTH = 2000

/** Where the reader is in the document's structure, between the values it cuts out. */
const enum Mode {
  Start, // before the top-level value
  TopArray, // inside the top-level array: elements are records
  TopObjectKey, // inside the top-level object, expecting a key (or `}`)
  TopObjectColon,
  TopObjectValue, // expecting the value of `currentKey`
  RecordArray, // inside the array under a record key
  AfterTopObjectValue, // expecting `,` or `}`
  Done,
}

export async function* readJson(source: ByteSource, options: ReadOptions): AsyncGenerator<SourceRecord> {
  const cutter = new RecordCutter(options)
  for await (const chunk of source) {
    const text = cutter.startChunk(typeof chunk === 'string' ? chunk : chunk.toString('utf8'))
    for (let i = 0; i < text.length; ) {
      i = cutter.cutting ? cutter.cut(text, i) : cutter.walk(text, i)
      const record = cutter.record
      if (record) {
        cutter.record = undefined
        yield record
      }
    }
    cutter.endChunk(text)
  }
  const single = cutter.end()
  if (single) yield single
}

/**
 * Scans a JSON document chunk by chunk: `walk` reads the structure around the record list (the
 * top-level array, or the object and its keys), `cut` follows one value to its end, which
 * `complete` parses into a record (or a header key's value). A value may span chunks.
 */
class RecordCutter {
  private readonly file: string
  private readonly recordKeys: string[]
  private readonly header: JsonObject
  private mode: Mode = Mode.Start
  private line = 1
  private index = 0
  private topIsObject = false
  private sawRecordKey = false
  private currentKey = ''
  /** In a list: whether a `,` (or the opening bracket) came since the last element. */
  private lastWasSeparator = true
  /** In a list: whether the last thing was a `,`. */
  private afterComma = false
  /** A key of the top-level object that runs past the chunk: read with the next one. */
  private keyTail = ''
  /** The file's own header keys (`header` may hold an earlier reading's keys). */
  private readonly headerKeys = new Set<string>()
  /** Records before the range are cut out but not parsed: a shard checks only its own. */
  private readonly skipBefore: number

  // The value being cut out: its text so far (across chunks), depth inside it, and string state.
  cutting = false
  private captured = ''
  /** Where the value starts in the chunk (0: in an earlier chunk; -1: no value). */
  private captureStart = -1
  private captureLine = 0
  /**
   * Where the current line starts in the chunk being read (0 or less: in an earlier chunk), for a
   * record's column where several records share a line (a list written on one line).
   */
  private lineStart = 0
  private captureColumn = 0
  private lastRecordLine = 0
  private depth = 0
  private inString = false
  private escaped = false
  private capturedIsScalar = false
  /**
   * The chunk's next backslash at or after the last search (the chunk's length: none): searched
   * again only once passed, so text without escapes is not searched to the chunk's end at every string.
   */
  private backslash = -1
  /** The record a value just cut out made, for the reader to hand on. */
  record: SourceRecord | undefined

  constructor(private readonly options: ReadOptions) {
    this.file = options.file
    this.recordKeys = options.recordKeys
    this.header = options.header
    this.skipBefore = options.recordRange?.[0] ?? 0
  }

  private fail(message: string, at = this.line): never {
    throw new DataError('E_PARSE', message, { file: this.file, line: at })
  }

  private isRecordList(): boolean {
    return this.mode === Mode.TopArray || this.mode === Mode.RecordArray
  }

  /** The chunk's text, after what the last one left unread. */
  startChunk(chunk: string): string {
    const text = this.keyTail + chunk
    this.keyTail = ''
    this.captureStart = this.cutting ? 0 : -1
    this.backslash = -1
    return text
  }

  /** Follows the value being cut out from `i`: to its end, where it is completed, or to the chunk's. Returns where it stopped. */
  cut(text: string, i: number): number {
    const n = text.length
    let line = this.line
    let depth = this.depth
    let inString = this.inString
    let escaped = this.escaped
    let backslash = this.backslash
    // Where the value ends (exclusive), once a character ends it.
    let valueEnd = -1
    while (i < n) {
      const c = text.charCodeAt(i)
      if (inString) {
        // Jump to the next quote or backslash: strings are most of the bytes.
        if (escaped) {
          escaped = false
          i++
          continue
        }
        if (c === 0x5c) {
          escaped = true
          i++
          continue
        }
        if (c === 0x22) {
          inString = false
          i++
          if (!(this.capturedIsScalar && depth === 0)) continue
          valueEnd = i
          break
        }
        if (c === 0x0a) line++
        const q = text.indexOf('"', i)
        if (backslash < i) {
          backslash = text.indexOf('\\', i)
          if (backslash === -1) backslash = n
        }
        const next = q === -1 || backslash < q ? backslash : q
        line += countNewlines(text, i + 1, next)
        i = next
        continue
      }
      if (c === 0x22) {
        inString = true
      } else if (c === 0x7b || c === 0x5b) {
        depth++
        if (depth > MAX_DEPTH) {
          this.line = line
          this.fail(`nested deeper than ${MAX_DEPTH} levels`)
        }
      } else if (c === 0x7d || c === 0x5d) {
        // A scalar ends at the bracket that closes its list, which is then read as structure.
        if (this.capturedIsScalar) {
          valueEnd = i
          break
        }
        if (--depth === 0) {
          valueEnd = ++i
          break
        }
      } else if (c === 0x2c && this.capturedIsScalar && depth === 0) {
        valueEnd = i
        break
      } else if (c === 0x0a) {
        line++
        this.lineStart = i + 1
      }
      i++
    }
    this.line = line
    this.depth = depth
    this.inString = inString
    this.escaped = escaped
    this.backslash = backslash
    if (valueEnd === -1) return i
    const captured = this.captured + text.slice(this.captureStart, valueEnd)
    this.captureStart = -1
    this.captured = ''
    this.complete(this.capturedIsScalar ? captured.trimEnd() : captured)
    return i
  }

  /** Reads the structure between values from `i`: to the start of the next value, which it begins cutting out, or to the chunk's end. */
  walk(text: string, i: number): number {
    const n = text.length
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x0a) {
        this.line++
        this.lineStart = ++i
        continue
      }
      if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0xfeff) {
        i++
        continue
      }
      const next = this.structure(text, i, c)
      if (next === undefined) return this.startValue(i, c)
      i = next
    }
    return i
  }

  /** Reads the structural character `c` at `i`; returns where to go on, or undefined where a value starts there. */
  private structure(text: string, i: number, c: number): number | undefined {
    switch (this.mode) {
      case Mode.Start:
        if (c === 0x5b) {
          this.mode = Mode.TopArray
          this.lastWasSeparator = true
        } else if (c === 0x7b) {
          this.mode = Mode.TopObjectKey
          this.topIsObject = true
        } else this.fail(`expected a JSON array or object, found ${describeChar(c)}`)
        return i + 1
      case Mode.TopObjectKey:
        return this.topKey(text, i, c)
      case Mode.TopObjectColon:
        if (c !== 0x3a) this.fail(`expected ':' after key "${this.currentKey}"`)
        this.mode = Mode.TopObjectValue
        return i + 1
      case Mode.TopObjectValue:
        if (c === 0x5b && this.recordKeys.includes(this.currentKey)) {
          this.sawRecordKey = true
          this.mode = Mode.RecordArray
          this.lastWasSeparator = true
          return i + 1
        }
        // The value is cut out, into `header`.
        return undefined
      case Mode.AfterTopObjectValue:
        if (c === 0x2c) {
          this.mode = Mode.TopObjectKey
          this.afterComma = true
        } else if (c === 0x7d) this.mode = Mode.Done
        else this.fail(`expected ',' or '}' after the value of "${this.currentKey}", found ${describeChar(c)}`)
        return i + 1
      case Mode.TopArray:
      case Mode.RecordArray:
        if (c === 0x2c) {
          if (this.lastWasSeparator) this.fail(`unexpected ',' in the list of records`)
          this.lastWasSeparator = true
          this.afterComma = true
          return i + 1
        }
        if (c === 0x5d) {
          if (this.afterComma) this.fail(`unexpected ']' after ',': a trailing comma is not JSON`)
          this.mode = this.mode === Mode.TopArray ? Mode.Done : Mode.AfterTopObjectValue
          return i + 1
        }
        if (!this.lastWasSeparator) this.fail(`expected ',' between records, found ${describeChar(c)}`)
        return undefined
      case Mode.Done:
        this.fail(`unexpected ${describeChar(c)} after the end of the JSON document`)
    }
  }

  /** A key of the top-level object (or its `}`) at `i`; a key that runs past the chunk waits for the next. */
  private topKey(text: string, i: number, c: number): number {
    if (c === 0x7d) {
      if (this.afterComma) this.fail(`unexpected '}' after ',': a trailing comma is not JSON`)
      this.mode = Mode.Done
      return i + 1
    }
    if (c === 0x2c) this.fail(`unexpected ',' in the top-level object`)
    this.afterComma = false
    if (c !== 0x22) this.fail(`expected a key in the top-level object, found ${describeChar(c)}`)
    const end = findStringEnd(text, i + 1)
    if (end === -1) {
      this.keyTail = text.slice(i)
      return text.length
    }
    try {
      this.currentKey = JSON.parse(text.slice(i, end + 1)) as string
    } catch (error) {
      // A line end or another control character inside the quotes, or a bad escape.
      this.fail(`a key in the top-level object is not a JSON string: ${parserWords(error)}`)
    }
    this.mode = Mode.TopObjectColon
    return end + 1
  }

  /** Begins cutting out the value whose first character `c` is at `i`; returns where its cutting goes on. */
  private startValue(i: number, c: number): number {
    this.afterComma = false
    this.cutting = true
    this.captured = ''
    this.captureStart = i
    this.captureLine = this.line
    this.captureColumn = i - this.lineStart + 1
    this.escaped = false
    this.capturedIsScalar = c !== 0x7b && c !== 0x5b
    this.inString = c === 0x22
    this.depth = this.capturedIsScalar ? 0 : 1
    return i + 1
  }

  /** Keeps the part of the value the chunk holds, and checks what is held against the limits. */
  endChunk(text: string): void {
    if (this.cutting && this.captureStart !== -1) this.captured += text.slice(this.captureStart)
    this.lineStart -= text.length - this.keyTail.length
    if (this.captured.length > MAX_RECORD_CHARS) this.fail(tooLong(this.isRecordList() ? 'record' : 'value'), this.captureLine)
    if (this.keyTail.length > MAX_RECORD_CHARS) this.fail(tooLong('key'))
  }

  /** A value cut out whole: a record of the list, or the value of a header key. */
  private complete(text: string): void {
    this.cutting = false
    if (this.isRecordList()) {
      const { value, kept } = this.index < this.skipBefore ? { value: null, kept: undefined } : this.parse(text)
      const record: SourceRecord = { value, line: this.captureLine, index: this.index++, raw: text, fieldLine: jsonFieldLine }
      if (this.captureLine === this.lastRecordLine) record.column = this.captureColumn
      this.lastRecordLine = this.captureLine
      if (kept) record.warnings = kept.map(keptWarning)
      this.lastWasSeparator = false
      this.record = record
      return
    }
    const { value, kept } = this.parse(text)
    const key = this.currentKey
    // As in a record: JSON.parse would keep the last of the two values, and lose the first.
    if (this.headerKeys.has(key)) {
      throw new DataError('E_PARSE', `duplicate key "${key}": JSON keeps only the last, so a value would be lost`, { file: this.file, line: this.captureLine, field: key })
    }
    this.headerKeys.add(key)
    this.header[key] = value
    for (const digits of kept ?? []) this.options.headerWarnings?.push({ message: keptWarning(digits), line: this.captureLine, field: key })
    this.mode = Mode.AfterTopObjectValue
  }

  /** The value of `text`, and the integers kept as text in it. */
  private parse(text: string): { value: JsonValue; kept?: string[] } {
    try {
      const parsed = parseExact(text)
      checkDuplicateKeys(text, parsed.value, this.file, this.captureLine)
      return parsed as { value: JsonValue; kept?: string[] }
    } catch (error) {
      if (error instanceof DataError) throw error
      const where = positionIn(text, error)
      throw new DataError('E_PARSE', `invalid JSON: ${parserWords(error)}`, {
        file: this.file,
        line: this.captureLine + where.line,
        ...(where.line === 0 ? {} : { column: where.column }),
      })
    }
  }

  /** The end of the file: a document left open is an error; a top-level object with no record list is one record. */
  end(): SourceRecord | undefined {
    if (this.cutting) {
      if (this.capturedIsScalar && this.depth === 0 && !this.inString && this.mode === Mode.TopObjectValue) {
        this.fail('unexpected end of file inside the top-level object')
      }
      this.fail(`unexpected end of file: the ${this.isRecordList() ? 'record' : 'value'} starting at line ${this.captureLine} is not closed`)
    }
    if (this.mode === Mode.Start) this.fail('the file is empty; expected a JSON array or object')
    if (this.mode !== Mode.Done) this.fail('unexpected end of file: the JSON document is not closed')
    if (!this.topIsObject || this.sawRecordKey) return undefined
    const record = { ...this.header }
    for (const key of Object.keys(this.header)) delete this.header[key]
    this.header[SINGLE_KEY] = true
    return { value: record, line: 1, index: 0 }
  }
}

function findStringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x5c) i++
    else if (c === 0x22) return i
  }
  return -1
}

function describeChar(c: number): string {
  return `'${String.fromCharCode(c)}'`
}

/** Keys in parsed JSON: fewer than the text names means a key was given twice. */
function countKeys(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  let n = 0
  if (Array.isArray(value)) {
    for (const item of value) n += countKeys(item)
    return n
  }
  for (const key in value) n += 1 + countKeys((value as Record<string, unknown>)[key])
  return n
}

/** Keys named in JSON text: strings followed by a colon. */
function countKeysInText(text: string): number {
  let n = 0
  let i = text.indexOf('"')
  while (i !== -1) {
    let end = text.indexOf('"', i + 1)
    while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1)
    if (end === -1) return n
    let after = end + 1
    while (after < text.length && (text.charCodeAt(after) === 0x20 || text.charCodeAt(after) === 0x0a || text.charCodeAt(after) === 0x0d || text.charCodeAt(after) === 0x09)) after++
    if (text.charCodeAt(after) === 0x3a) n++
    i = text.indexOf('"', after)
  }
  return n
}

function isEscaped(text: string, quote: number): boolean {
  let backslashes = 0
  for (let b = quote - 1; b >= 0 && text.charCodeAt(b) === 0x5c; b--) backslashes++
  return backslashes % 2 === 1
}

/**
 * `JSON.parse` keeps the last of two equal keys without a word, which would lose data silently:
 * a record whose text names more keys than its value holds is refused, naming the key and its line.
 */
export function checkDuplicateKeys(text: string, value: unknown, file: string, firstLine: number): void {
  refuseProtoKey(text, file, firstLine)
  if (countKeys(value) === countKeysInText(text)) return
  const found = findDuplicateKey(text)
  if (!found) return
  const where = positionIn(text, new Error(`position ${found.offset}`))
  throw new DataError('E_PARSE', `duplicate key "${found.key}": JSON keeps only the last, so a value would be lost`, {
    file,
    line: firstLine + where.line,
    column: where.column,
    field: found.path,
  })
}

/** `"__proto__"` with any of its characters written as a `\u` escape, as `JSON.parse` reads it alike. */
const ESCAPED_PROTO = /"(?:_|\\u005[fF]){2}(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[fF])(?:t|\\u0074)(?:o|\\u006[fF])(?:_|\\u005[fF]){2}"\s*:/

/**
 * An escape of one of `__proto__`'s letters (`\u005f`, `\u0070`, `\u006F`...): text that Python's
 * json wrote with its other characters escaped (`\u00e9`, `\u4e2d`) rarely has one, and the search
 * for the whole key, which stops at every quote, is then not made.
 */
const ESCAPED_PROTO_LETTER = /\\u00[5-7]/

/** A key `__proto__` is refused where it is read (see `protoRefused`), naming its line. */
function refuseProtoKey(text: string, file: string, firstLine: number): void {
  const match = (text.includes('"__proto__"') ? /"__proto__"\s*:/.exec(text) : null) ?? (ESCAPED_PROTO_LETTER.test(text) ? ESCAPED_PROTO.exec(text) : null)
  if (!match) return
  const where = positionIn(text, new Error(`position ${match.index}`))
  throw new DataError('E_FIELD', protoRefused(), {
    file,
    line: firstLine + where.line,
    column: where.column,
    field: '__proto__',
  })
}

/** The first key given twice in one object of `text` (valid JSON), with its path and offset. */
function findDuplicateKey(text: string): { key: string; path: string; offset: number } | undefined {
  const pattern = /"(?:[^"\\]|\\.)*"|[{}\[\]:,]/g
  const stack: { keys: Set<string> | undefined; path: string; index: number; pendingKey?: string }[] = []
  let expectKey = false
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    const token = m[0]
    const top = stack[stack.length - 1]
    const childPath = (): string => {
      if (!top) return ''
      if (top.keys) return top.pendingKey === undefined ? top.path : top.path ? `${top.path}.${top.pendingKey}` : top.pendingKey
      return `${top.path}[${top.index}]`
    }
    if (token === '{' || token === '[') {
      stack.push({ keys: token === '{' ? new Set() : undefined, path: childPath(), index: 0 })
      expectKey = token === '{'
    } else if (token === '}' || token === ']') {
      stack.pop()
      expectKey = false
    } else if (token === ',') {
      if (top?.keys) expectKey = true
      else if (top) top.index++
    } else if (token === ':') {
      expectKey = false
    } else if (expectKey && top?.keys) {
      const key = JSON.parse(token) as string
      if (top.keys.has(key)) return { key, path: top.path ? `${top.path}.${key}` : key, offset: m.index }
      top.keys.add(key)
      top.pendingKey = key
    }
  }
  return undefined
}

/** `SourceRecord.fieldLine` of a record read with its JSON text: one function for all, no closure a record. */
function jsonFieldLine(this: SourceRecord, field: string): number | undefined {
  const at = this.raw === undefined ? undefined : offsetOf(this.raw, fieldPath(field))
  return at === undefined || this.line === undefined ? undefined : this.line + countNewlines(this.raw!.slice(0, at))
}

/**
 * Where in the JSON text of a record the field at `path` is written: the offset of its key in an
 * object, of its item in a list; undefined when the path leads nowhere in it.
 */
export function offsetOf(text: string, path: (string | number)[]): number | undefined {
  let i = 0
  const space = (): void => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++
  }
  const string = (): void => {
    for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++
    i++
  }
  const value = (): void => {
    space()
    if (text[i] === '"') return string()
    let depth = 0
    for (; i < text.length; i++) {
      const c = text[i]
      if (c === '"') {
        string()
        i--
      } else if (c === '{' || c === '[') depth++
      else if (c === '}' || c === ']' || c === ',') {
        if (depth === 0) return
        if (c !== ',' && --depth === 0) return void i++
      }
    }
  }
  let at: number | undefined
  for (const step of path) {
    space()
    if (text[i] === '{' && typeof step === 'string') {
      i++
      for (;;) {
        space()
        if (text[i] !== '"') return undefined
        const key = i
        string()
        const name = JSON.parse(text.slice(key, i)) as string
        space()
        i++ // the colon
        if (name === step) {
          at = key
          break
        }
        value()
        space()
        if (text[i++] !== ',') return undefined
      }
    } else if (text[i] === '[' && typeof step === 'number') {
      i++
      for (let k = 0; k < step; k++) {
        value()
        space()
        if (text[i++] !== ',') return undefined
      }
      space()
      at = i
    } else return undefined
  }
  return at
}

/** The 0-based line and 1-based column inside `text` where its JSON first goes wrong. */
export function positionIn(text: string, error: unknown): { line: number; column: number } {
  // V8 names the position only for some errors, so find it by scanning (only on the failure path).
  const match = /position (\d+)/.exec((error as Error)?.message ?? '')
  const offset = match ? Number(match[1]) : firstJsonError(text)
  let line = 0
  let lineStart = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++
      lineStart = i + 1
    }
  }
  return { line, column: offset - lineStart + 1 }
}

/** The offset of the first character that makes `text` invalid JSON (its length if it ends early). */
function firstJsonError(text: string): number {
  let i = 0
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++
  }
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) throw i
      i++
    }
  }
  const string = () => {
    i++
    while (i < text.length) {
      const c = text[i]!
      if (c === '"') {
        i++
        return
      }
      if (c === '\\') i++
      else if (c < ' ') throw i
      i++
    }
    throw i
  }
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400))
    if (!m || m[0] === '' || m[0] === '-') throw i
    i += m[0].length
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === '{') {
      i++
      ws()
      if (text[i] === '}') {
        i++
        return
      }
      for (;;) {
        ws()
        if (text[i] !== '"') throw i
        string()
        ws()
        if (text[i] !== ':') throw i
        i++
        value()
        ws()
        if (text[i] === ',') i++
        else if (text[i] === '}') {
          i++
          return
        } else throw i
      }
    } else if (c === '[') {
      i++
      ws()
      if (text[i] === ']') {
        i++
        return
      }
      for (;;) {
        value()
        ws()
        if (text[i] === ',') i++
        else if (text[i] === ']') {
          i++
          return
        } else throw i
      }
    } else if (c === '"') string()
    else if (c === 't') literal('true')
    else if (c === 'f') literal('false')
    else if (c === 'n') literal('null')
    else number()
  }
  try {
    value()
    ws()
    return i < text.length ? i : text.length
  } catch (at) {
    return typeof at === 'number' ? at : text.length
  }
}

/** A bigint as a number when one holds it exactly, else as the text of its digits. */
export function bigintToJson(v: bigint): number | string {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()
}

/** The warning for an integer kept as text. */
export function keptWarning(digits: string): string {
  return `the integer ${digits} is past what a number holds exactly: kept as text, every digit`
}

/** Numbers `someNumber` looks for: past ±2^53 (perhaps an integer whose last digits were rounded), or NaN and the infinities. */
const enum Unusual {
  Huge,
  NonFinite,
}

/**
 * Whether `value` holds a number of the kind `kind`. It walks every record read or written: told
 * by a constant, not a test function each caller makes, without making arrays, and no deeper than
 * `MAX_DEPTH`, past which the value is refused anyway.
 */
function someNumber(value: unknown, kind: Unusual, depth = 0): boolean {
  if (typeof value === 'number') return kind === Unusual.Huge ? Math.abs(value) > Number.MAX_SAFE_INTEGER : !Number.isFinite(value)
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (someNumber(value[i], kind, depth + 1)) return true
    return false
  }
  for (const key in value) if (someNumber((value as Record<string, unknown>)[key], kind, depth + 1)) return true
  return false
}

/** What Python's json writes for NaN and the infinities (and reads), where JSON has no words for them. */
const NON_FINITE = /NaN|Infinity/

/** Marks a non-finite number in text on its way through `JSON.parse` or `JSON.stringify`. */
const NON_FINITE_MARK = `\u{e000}evalferry-${Math.random().toString(36).slice(2)}:`

/**
 * Whether `text` can be JSON as `parseExact` reads it, told from its first character after JSON's
 * whitespace: false for most prose, without the cost of a parse that throws (a wide table asks
 * this of every cell).
 */
export function mayBeJson(text: string): boolean {
  let i = 0
  let c = text.charCodeAt(0)
  while (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) c = text.charCodeAt(++i)
  // { [ " - 0-9, and true, false, null, NaN, Infinity
  return c === 0x7b || c === 0x5b || c === 0x22 || c === 0x2d || (c >= 0x30 && c <= 0x39) || c === 0x74 || c === 0x66 || c === 0x6e || c === 0x4e || c === 0x49
}

/**
 * `JSON.parse` of JSON as Python's json writes it: an integer past what a number holds exactly
 * (beyond ±2^53) is read as the text of its digits, as Python keeps every digit, rather than
 * rounded (`kept` lists them), and `NaN`, `Infinity` and `-Infinity` are the numbers they name.
 */
export function parseExact(text: string): { value: unknown; kept?: string[] } {
  let value: unknown
  let invalid: unknown
  try {
    value = JSON.parse(text)
    // A walk of the values costs less than a search of the text, which is mostly strings.
    if (!someNumber(value, Unusual.Huge)) return { value }
  } catch (error) {
    if (!NON_FINITE.test(text)) throw error
    invalid = error
  }
  const spans = specialTokens(text)
  if (!spans.length) {
    if (invalid) throw invalid
    return { value }
  }
  let replaced = ''
  let at = 0
  const kept: string[] = []
  for (const [start, end, integer] of spans) {
    const token = text.slice(start, end)
    if (integer) kept.push(token)
    replaced += `${text.slice(at, start)}"${integer ? token : NON_FINITE_MARK + token}"`
    at = end
  }
  replaced += text.slice(at)
  try {
    value = invalid ? JSON.parse(replaced, reviveNonFinite) : JSON.parse(replaced)
  } catch (error) {
    throw invalid ?? error
  }
  return kept.length ? { value, kept } : { value }
}

function reviveNonFinite(_key: string, value: unknown): unknown {
  return typeof value === 'string' && value.startsWith(NON_FINITE_MARK) ? Number(value.slice(NON_FINITE_MARK.length)) : value
}

/**
 * Where, outside strings, `text` has integers that are not safe integers (`true` in the third
 * place), and `NaN`, `Infinity` or `-Infinity`.
 */
function specialTokens(text: string): [number, number, boolean][] {
  const spans: [number, number, boolean][] = []
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      for (i++; i < n && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++
    } else if (c === 0x4e && text.startsWith('NaN', i)) {
      spans.push([i, i + 3, false])
      i += 2
    } else if (c === 0x49 && text.startsWith('Infinity', i)) {
      spans.push([i, i + 8, false])
      i += 7
    } else if (c === 0x2d && text.startsWith('-Infinity', i)) {
      spans.push([i, i + 9, false])
      i += 8
    } else if (c === 0x2d || isDigit(c)) {
      let end = i + 1
      while (isDigit(text.charCodeAt(end))) end++
      const next = text.charCodeAt(end)
      const integer = next !== 0x2e && next !== 0x65 && next !== 0x45 // no fraction, no exponent
      if (integer && !Number.isSafeInteger(Number(text.slice(i, end)))) spans.push([i, end, true])
      while (end < n && '0123456789.eE+-'.includes(text[end]!)) end++
      i = end - 1
    }
  }
  return spans
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}

/** JSON.parse's message without its offset into the text parsed, which the error's line and column say better. */
export function parserWords(error: unknown): string {
  return (error as Error).message.replace(/ in JSON at position \d+(?: \(line \d+ column \d+\))?$/, '')
}

/**
 * `JSON.stringify` with Python's `json.dumps` spacing: `", "` and `": "` on one line, or the same
 * indented layout as `json.dumps(indent=n)`; non-ASCII kept as `ensure_ascii=False` keeps it.
 */
/** `onNonFinite`: told when the text holds NaN or an infinity, which strict JSON readers refuse. */
export function stringifyJson(value: unknown, options: { indent?: number; pythonSpacing?: boolean; onNonFinite?: () => void } = {}): string {
  const { indent, pythonSpacing } = options
  if (pythonSpacing && !indent) return pythonDumps(value)
  const text = JSON.stringify(value, null, indent)
  // JSON.stringify writes NaN and the infinities as null; Python's json writes (and reads) their names.
  // Told by walking the value, not by looking for `null` in the text: a search of a record's text
  // stops at every `n` of its prose, and took half as long as JSON.stringify itself.
  if (!someNumber(value, Unusual.NonFinite)) return text
  options.onNonFinite?.()
  return JSON.stringify(value, markNonFinite, indent).replace(NON_FINITE_TEXT, '$1')
}

/** The dotted path of the first NaN or infinity in `value` (`metadata.scores[1]`), '' at the top. */
export function nonFinitePath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path
  if (typeof value !== 'object' || value === null) return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFinitePath(value[i], `${path}[${i}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  for (const [key, item] of Object.entries(value)) {
    const found = nonFinitePath(item, path ? `${path}.${key}` : key)
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * Lists whose JSON text is known to be exactly what `JSON.stringify` makes of them (a list read
 * from a table cell's compact JSON), and which a JSON Lines record writes as that text rather than
 * making it again. A case's values are never changed once read, so the text stays true.
 */
const knownTexts = new WeakMap<object, string>()

/**
 * Below this many characters, a list's text is made again: finding a spliced text costs a search
 * of the record's text, which a short list does not repay.
 */
const SPLICED_CHARS = 256

/** Tells that `text` is exactly `JSON.stringify(list)`, for `splicedJson`. */
export function knowJsonText(list: readonly unknown[], text: string): void {
  if (text.length >= SPLICED_CHARS) knownTexts.set(list, text)
}

/** What stands for a known text in the record stringified, followed by one digit, its index (exported for tests). */
export const SPLICE_MARK = `evalferry-${Math.random().toString(36).slice(2, 10)}:`
const SPLICE_MARK_LENGTH = SPLICE_MARK.length + 1
const MOST_SPLICES = 10

interface Splicing {
  texts: string[]
  /** A NaN or infinity, which `stringifyJson` writes its own way. */
  nonFinite: boolean
  /** A key or string that is a mark: the marks could not be told from it. */
  clash: boolean
}

/** `value`, with each list whose text is known replaced by a mark, copied only along the way to one. */
function marked(value: unknown, splicing: Splicing, depth: number): unknown {
  if (typeof value === 'string') {
    if (value.length === SPLICE_MARK_LENGTH && value.startsWith(SPLICE_MARK)) splicing.clash = true
    return value
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) splicing.nonFinite = true
    return value
  }
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value
  if (Array.isArray(value)) {
    // Only lists are told their text (a lookup costs more than the rest of an object's visit).
    const known = knownTexts.get(value)
    if (known !== undefined && splicing.texts.length < MOST_SPLICES) {
      // Let go once taken: a text is a slice of the chunk its cell was read from, and kept until the
      // collector clears the entry it would keep that chunk (8 CSV tables of 10 MB: 5 MB more peak).
      knownTexts.delete(value)
      return SPLICE_MARK + (splicing.texts.push(known) - 1)
    }
    let copy: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      const done = marked(item, splicing, depth + 1)
      if (done !== item) (copy ??= value.slice())[i] = done
    }
    return copy ?? value
  }
  let copy: Record<string, unknown> | undefined
  for (const key in value) {
    if (key.length === SPLICE_MARK_LENGTH && key.startsWith(SPLICE_MARK)) splicing.clash = true
    const item: unknown = (value as Record<string, unknown>)[key]
    const done = marked(item, splicing, depth + 1)
    if (done !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = done
  }
  return copy ?? value
}

/**
 * A JSON Lines record's text, from one walk of it: `JSON.stringify(record)` as pieces to write one
 * after the other, the known texts of its lists (see `knowJsonText`) spliced in rather than made
 * again, or as one text where it holds none; undefined where it holds NaN or an infinity, which
 * `stringifyJson` writes its own way. Each mark is a string no key or value of the record is, so its
 * quoted text appears once in the record's text, where the list stands.
 */
export function recordJson(record: JsonObject): string | string[] | undefined {
  const splicing: Splicing = { texts: [], nonFinite: false, clash: false }
  const copy = marked(record, splicing, 0)
  if (splicing.nonFinite) return undefined
  // A text taken here but not spliced is lost to the record, not to its text: JSON.stringify makes it.
  if (splicing.clash || splicing.texts.length === 0) return JSON.stringify(record)
  const text = JSON.stringify(copy)
  const pieces: string[] = []
  let from = 0
  for (let i = 0; i < splicing.texts.length; i++) {
    // Marks come in the order JSON.stringify visits the values, which is the walk's.
    const quoted = `"${SPLICE_MARK}${i}"`
    const at = text.indexOf(quoted, from)
    pieces.push(text.slice(from, at), splicing.texts[i]!)
    from = at + quoted.length
  }
  pieces.push(text.slice(from))
  return pieces
}

/** `recordJson`'s pieces, undefined where nothing was spliced (for tests). */
export function splicedJson(record: JsonObject): string[] | undefined {
  const made = recordJson(record)
  return Array.isArray(made) ? made : undefined
}

/**
 * The options a writer stringifies its records with: a file that Python's json does not write (the
 * layout has no `pythonSpacing`) warns of each record whose text holds NaN or an infinity.
 */
export function recordTextOptions(layout: { indent?: number; pythonSpacing?: boolean }, warn?: (message: string, field: string) => void) {
  const options = { indent: layout.indent, pythonSpacing: layout.pythonSpacing ?? false, record: undefined as unknown, onNonFinite: undefined as (() => void) | undefined }
  if (warn && !layout.pythonSpacing) options.onNonFinite = () => warn(NON_FINITE_WRITTEN, nonFinitePath(options.record) ?? '')
  return options
}

const NON_FINITE_TEXT = new RegExp(`"${NON_FINITE_MARK}(NaN|-?Infinity)"`, 'g')

function markNonFinite(_key: string, value: unknown): unknown {
  return typeof value === 'number' && !Number.isFinite(value) ? NON_FINITE_MARK + String(value) : value
}

function pythonDumps(value: unknown): string {
  // JSON.stringify's text for every leaf, with `, ` and `: ` between the parts of lists and objects.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value)
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      out += (i ? ', ' : '') + (item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : pythonDumps(item))
    }
    return out + ']'
  }
  let out = '{'
  let first = true
  // for-in visits an object's own keys in JSON.stringify's order: plain data has no inherited ones.
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key]
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue
    out += (first ? '' : ', ') + keyText(key) + pythonDumps(item)
    first = false
  }
  return out + '}'
}

/** `"key": `, remembered for the first few thousand keys: records repeat their keys. */
const keyTexts = new Map<string, string>()
function keyText(key: string): string {
  let text = keyTexts.get(key)
  if (text === undefined) {
    text = `${JSON.stringify(key)}: `
    if (keyTexts.size < 4096) keyTexts.set(key, text)
  }
  return text
}

/**
 * Whether `text`, which `JSON.parse` reads as the strings `list`, is exactly `JSON.stringify(list)`,
 * told without writing it again; undefined when it cannot be told so. With no `\u` escape and no
 * lone surrogate in the text, every escape in it stands for a character that must be escaped, as
 * `JSON.stringify` escapes it, except `\/`. The two texts can then differ only by spaces between
 * the items or by `\/`, and the length tells the spaces.
 */
export function isCompactJson(text: string, list: readonly string[]): boolean | undefined {
  if (!text.isWellFormed()) return undefined
  let length = 2 + Math.max(list.length - 1, 0)
  for (const item of list) length += item.length + 2
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i + 2)) {
    const escaped = text.charCodeAt(i + 1)
    if (escaped === 0x75) return undefined // \u
    if (escaped === 0x2f) return false // \/
    length++
  }
  return length === text.length
}

/** A JSON document: a top-level array, or an object with header keys and the list under `listKey`. */
export function jsonWriter(
  sink: Sink,
  layout: { header?: JsonObject; listKey?: string; indent?: number; pythonSpacing?: boolean; single?: boolean },
  warn?: (message: string, field: string) => void,
): RecordWriter {
  const indent = layout.indent ?? 2
  const text = recordTextOptions({ ...layout, indent }, warn)
  if (layout.single) return singleWriter(sink, text)
  const pad = ' '.repeat(indent)
  const nested = layout.listKey !== undefined
  const itemPad = nested ? pad + pad : pad
  let count = 0
  let opened = false

  const open = async (): Promise<void> => {
    opened = true
    if (!nested) {
      await sink.write('[')
      return
    }
    let head = '{'
    for (const [key, value] of Object.entries(layout.header ?? {})) {
      head += `\n${pad}${JSON.stringify(key)}: ${reindent(JSON.stringify(value, null, indent), pad)},`
    }
    await sink.write(`${head}\n${pad}${JSON.stringify(layout.listKey)}: [`)
  }

  // Made inside lists as deep as its place, the record's text comes indented by JSON.stringify, and
  // is written as a slice of that text: not copied again to indent it, nor to join it to its comma.
  const [head, tail] = nested ? [indent + 4, indent + 4] : [2, 2]
  return {
    async write(record) {
      if (!opened) await open()
      text.record = record
      if (indent > 0) {
        const placed = stringifyJson(nested ? [[record]] : [record], text)
        await sink.write(count++ ? ',\n' : '\n')
        await sink.write(placed.slice(head, placed.length - tail))
        return
      }
      await sink.write(`${count++ ? ',' : ''}\n${itemPad}${reindent(stringifyJson(record, text), itemPad)}`)
    },
    async end() {
      if (!opened) await open()
      const close = count ? `\n${nested ? pad : ''}]` : ']'
      await sink.write(nested ? `${close}\n}\n` : close)
    },
  }
}

/** A document of one record: the object alone, as it was read. */
function singleWriter(sink: Sink, text: ReturnType<typeof recordTextOptions>): RecordWriter {
  let written = false
  return {
    async write(record) {
      if (written) throw new Error('a layout of one object was given a second record')
      written = true
      text.record = record
      await sink.write(stringifyJson(record, text) + '\n')
    },
    async end() {
      if (!written) throw new Error('a layout of one object was given no record')
    },
  }
}

function reindent(text: string, pad: string): string {
  return text.includes('\n') ? text.replace(/\n/g, '\n' + pad) : text
}
