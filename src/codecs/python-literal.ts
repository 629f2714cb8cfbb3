/**
 * Python literals as `ast.literal_eval` reads them (Python 3.11), limited to the values JSON holds:
 * dicts, lists and tuples (as lists), text, numbers, `True`, `False` and `None`. DeepEval reads a
 * CSV cell of `additional_metadata` this way when it is not JSON, and pandas' `to_csv` writes a
 * column of dicts so (`{'topic': 'billing', 'reviewed': True}`).
 *
 * What Python reads but JSON cannot hold is refused by name: sets, bytes, complex numbers,
 * `...`, keys that are tuples or numbers with a point. Keys that are whole numbers, `True`,
 * `False` or `None` become the text `json.dumps` gives them (`"1"`, `"true"`, `"null"`).
 * Integers past 2^53 are kept as their decimal digits, as `parseExact` keeps them in JSON.
 * Numpy's text of an array (`['a' 'b']`), which pandas writes for a column of arrays, is read by
 * the same reader, its items split where Python would join them.
 */
import { protoRefused } from './types.ts'

/** Python's parser refuses brackets nested deeper than this ("too many nested parentheses"). */
const MAX_NESTING = 200

const NUMBER = /(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?)/y
const NAME = /[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}_]*/uy
/** String prefixes Python takes: `u` and `r` give text; `b` bytes and `f` f-strings, which are refused. */
const PREFIX = /^(?:[rRuUbBfF]|[bB][rR]|[rR][bBfF]|[fF][rR])$/
/** A string's plain characters: by quote (`'`, `"`), then one-line or triple-quoted. */
const PLAIN = [
  [/[^\\'\n]+/y, /[^\\']+/y],
  [/[^\\"\n]+/y, /[^\\"]+/y],
]
const DECIMAL_INTEGER = /^(?:0(?:_?0)*|[1-9](?:_?\d)*)$/

type Value = string | number | boolean | null | Value[] | { [key: string]: Value }

/** A number's value (an integer past 2^53 as its digits), and whether Python reads it as an int. */
interface PyNumber {
  value: number | string
  integer: boolean
}

/**
 * A Python literal's value, or an error whose message names what is wrong and at which character.
 * `joinStrings: false` refuses strings side by side (`['a' 'b']`), which Python joins into one but
 * numpy writes for an array of two.
 */
export function parsePythonLiteral(source: string, options: { joinStrings?: boolean } = {}): Value {
  return new LiteralReader(source, options.joinStrings === false ? 'refuse' : 'join').read()
}

/**
 * The items of a one-dimensional numpy array as `str()` writes it, and so pandas' `to_csv` for a
 * column of arrays (what `datasets`' `to_csv` writes for a list column): Python literals between
 * brackets, separated by spaces and line breaks, not commas (`['a' "it's"\n 'c']`). An array numpy
 * shortened (`['a' 'b' ... 'y' 'z']`, past a thousand items) is refused: its middle is not there.
 */
export function parseNumpyArray(source: string): Value[] {
  return new LiteralReader(source, 'split').readArray()
}

/** What strings side by side are: one string, as Python reads them; an error; or items of an array. */
type SideBySide = 'join' | 'refuse' | 'split'

class LiteralReader {
  private readonly text: string
  /** The leading spaces and tabs `literal_eval` strips. */
  private readonly lead: number
  private at = 0
  private depth = 0

  constructor(
    private readonly source: string,
    private readonly sideBySide: SideBySide,
  ) {
    this.lead = /^[ \t]*/.exec(source)![0].length
    // Python reads its source with universal newlines.
    this.text = source.slice(this.lead).replace(/\r\n?/g, '\n')
  }

  read(): Value {
    if (this.text.includes('\0')) this.fail('a NUL character, which Python source cannot hold', this.text.indexOf('\0'))
    if (!this.text.isWellFormed()) this.fail('half a character (a lone surrogate), which Python source cannot hold', this.text.search(/\p{Cs}/u))
    // Before the value: blank lines and lines a backslash joins; the value's line has no indent.
    for (;;) {
      this.skipBlankLines()
      if (/[ \t\f]/.test(this.text[this.at] ?? '')) this.fail('unexpected indent')
      if (!this.text.startsWith('\\\n', this.at)) break
      this.at += 2
    }
    let value = this.value()
    this.space()
    // Values separated by commas at the top are a tuple: `1, 2` is `(1, 2)`.
    if (this.text[this.at] === ',') {
      const tuple = [value]
      do {
        this.at++
        this.space()
        if (this.at === this.text.length || this.text[this.at] === '\n') break
        tuple.push(this.value())
        this.space()
      } while (this.text[this.at] === ',')
      value = tuple
    }
    this.skipBlankLines()
    if (this.at < this.text.length) this.fail(`unexpected ${this.describe()} after the value`)
    return value
  }

  readArray(): Value[] {
    this.space()
    if (this.text[this.at] !== '[') this.fail(`expected "[", found ${this.describe()}`)
    this.open()
    const items: Value[] = []
    for (;;) {
      this.space()
      const c = this.text[this.at]
      if (c === ']') break
      if (this.text.startsWith('...', this.at)) this.fail('an array numpy shortened ("..."): its middle items are not there')
      if (c === ',') this.fail('a comma between the items, where numpy writes none')
      items.push(this.value())
      // A space after each item (a string's own is already read), or the end of the array.
      if (!/[\s\]]/.test(this.text[this.at] ?? '') && !/\s/.test(this.text[this.at - 1]!)) this.fail(`expected a space or "]", found ${this.describe()}`)
    }
    this.close()
    this.space()
    this.skipBlankLines()
    if (this.at < this.text.length) this.fail(`unexpected ${this.describe()} after the array`)
    return items
  }

  private fail(message: string, at = this.at): never {
    throw new Error(`${message} at character ${this.place(at) + 1}`)
  }

  /** Where the character at `at` of the text read is in the text given (its CRLFs read as one line break). */
  private place(at: number): number {
    let i = this.lead
    for (let n = 0; n < at && i < this.source.length; n++) i += this.source.startsWith('\r\n', i) ? 2 : 1
    return i
  }

  private describe(): string {
    const c = this.text[this.at]
    return c === undefined ? 'end of text' : c === '\n' ? 'line break' : JSON.stringify(c)
  }

  /** Lines holding only spaces and comments, before the value or after it. */
  private skipBlankLines(): void {
    for (;;) {
      const start = this.at
      this.space()
      if (this.text[this.at] === '\n') {
        this.at++
        continue
      }
      if (this.at < this.text.length) this.at = start
      // A last line of nothing but spaces, after a line break, is an indent to Python.
      else if (this.at > start && this.text[start - 1] === '\n' && !this.text.includes('#', start)) this.fail('unexpected indent', start)
      return
    }
  }

  /** Spaces, tabs, form feeds, a comment and lines joined by a backslash; line breaks too inside brackets. */
  private space(): void {
    for (;;) {
      const c = this.text[this.at]
      if (c === ' ' || c === '\t' || c === '\f') this.at++
      else if (c === '#') {
        const end = this.text.indexOf('\n', this.at)
        this.at = end < 0 ? this.text.length : end
      } else if (c === '\\' && this.text[this.at + 1] === '\n') {
        if (this.at + 2 === this.text.length) this.fail('a backslash that joins the last line to nothing')
        this.at += 2
      } else if (c === '\n' && this.depth > 0) this.at++
      else return
    }
  }

  private value(): Value {
    this.space()
    const c = this.text[this.at]
    if (c === '{') return this.dict()
    if (c === '[') return this.list(']')
    if (c === '(') return this.parenthesised()
    if (c === '-' || c === '+') return this.signedNumber().value
    if (c === "'" || c === '"') return this.strings('')
    if (c !== undefined && /[0-9.]/.test(c)) return this.number().value
    NAME.lastIndex = this.at
    const name = NAME.exec(this.text)?.[0]
    if (name !== undefined) {
      const quote = this.text[this.at + name.length]
      if ((quote === "'" || quote === '"') && PREFIX.test(name)) return this.strings(name)
      this.at += name.length
      if (name === 'True') return true
      if (name === 'False') return false
      if (name === 'None') return null
      this.fail(`the name ${name}, which is no literal${name === 'set' || name === 'nan' || name === 'inf' ? ' JSON can hold' : ''}`, this.at - name.length)
    }
    if (c === undefined) this.fail('expected a value, found the end of the text')
    return this.fail(`expected a value, found ${this.describe()}`)
  }

  private open(): void {
    if (++this.depth > MAX_NESTING) this.fail(`more than ${MAX_NESTING} nested brackets, which Python refuses`)
    this.at++
  }

  private close(): void {
    this.depth--
    this.at++
  }

  /** Items up to `end`, separated by commas, a comma after the last allowed. */
  private items(end: string, item: () => void): void {
    for (;;) {
      this.space()
      if (this.text[this.at] === end) return
      item()
      this.space()
      if (this.text[this.at] === ',') this.at++
      else if (this.text[this.at] !== end) this.fail(`expected "," or "${end}", found ${this.describe()}`)
    }
  }

  private list(end: string): Value[] {
    this.open()
    const list: Value[] = []
    this.items(end, () => list.push(this.value()))
    this.close()
    return list
  }

  /** `(1)` is the value 1; `()`, `(1,)` and `(1, 2)` are tuples, read as lists. */
  private parenthesised(): Value {
    this.open()
    this.space()
    if (this.text[this.at] === ')') {
      this.close()
      return []
    }
    const first = this.value()
    this.space()
    if (this.text[this.at] === ')') {
      this.close()
      return first
    }
    if (this.text[this.at] !== ',') this.fail(`expected "," or ")", found ${this.describe()}`)
    this.at++
    const tuple: Value[] = [first]
    this.items(')', () => tuple.push(this.value()))
    this.close()
    return tuple
  }

  private dict(): { [key: string]: Value } {
    const start = this.at
    this.open()
    const dict: { [key: string]: Value } = {}
    // Keys Python takes for one (1 and True, 0 and False) keep the JSON key of the first.
    const names = new Map<string, string>()
    this.items('}', () => {
      this.space()
      const keyAt = this.at
      const key = this.key()
      this.space()
      if (this.text[this.at] !== ':') {
        if (this.text[this.at] === ',' || this.text[this.at] === '}') this.fail('a set, which JSON cannot hold', start)
        this.fail(`expected ":", found ${this.describe()}`)
      }
      this.at++
      if (key.name === '__proto__') this.fail(protoRefused(), keyAt)
      const name = names.get(key.id) ?? key.name
      names.set(key.id, name)
      // A key given twice keeps its first place and its last value, as in a Python dict.
      dict[name] = this.value()
    })
    this.close()
    return dict
  }

  /**
   * A dict key: the JSON key `json.dumps` writes for it (`1` as `"1"`, `True` as `"true"`), and
   * what Python tells keys apart by.
   */
  private key(): { name: string; id: string } {
    const at = this.at
    const c = this.text[at] ?? ''
    const refused = (): never => this.fail('a key that is not text, a whole number, True, False or None, which a JSON key cannot be', at)
    if (c === '(') {
      this.open()
      this.space()
      const key = this.key()
      this.space()
      if (this.text[this.at] !== ')') refused()
      this.close()
      return key
    }
    if (/[-+0-9.]/.test(c)) {
      const { value, integer } = c === '-' || c === '+' ? this.signedNumber() : this.number()
      return integer ? { name: String(value), id: `int ${String(value)}` } : refused()
    }
    const key = this.value()
    if (typeof key === 'string') return { name: key, id: `str ${key}` }
    if (typeof key === 'boolean') return { name: String(key), id: `int ${key ? 1 : 0}` }
    if (key === null) return { name: 'null', id: 'None' }
    return refused()
  }

  /** A number after `-` or `+`, possibly in brackets: `literal_eval` takes a sign on nothing else. */
  private signedNumber(): PyNumber {
    const negative = this.text[this.at] === '-'
    const signAt = this.at
    this.at++
    this.space()
    let brackets = 0
    while (this.text[this.at] === '(') {
      this.open()
      brackets++
      this.space()
    }
    if (!/[0-9.]/.test(this.text[this.at] ?? '')) this.fail('a sign before something that is not a number, which literal_eval refuses', signAt)
    const n = this.number()
    for (; brackets > 0; brackets--) {
      this.space()
      if (this.text[this.at] !== ')') this.fail(`expected ")", found ${this.describe()}`)
      this.close()
    }
    if (!negative) return n
    const { value, integer } = n
    if (typeof value === 'string') return { value: `-${value}`, integer }
    // An integer has no negative zero; a float has.
    return { value: integer && value === 0 ? 0 : -value, integer }
  }

  private number(): PyNumber {
    const start = this.at
    NUMBER.lastIndex = start
    const token = NUMBER.exec(this.text)?.[0]
    if (!token || token === '.') this.fail(`expected a value, found ${this.describe()}`)
    this.at += token.length
    const next = this.text[this.at]
    if (next === 'j' || next === 'J') this.fail('a complex number, which JSON cannot hold', start)
    if (next !== undefined && /[\p{L}\p{N}_]/u.test(next)) this.fail('an invalid number', start)
    const digits = token.replace(/_/g, '')
    const radix = /^0[xXoObB]/.test(digits)
    if (!radix && /[.eE]/.test(digits)) return { value: Number(digits), integer: false }
    if (!radix && !DECIMAL_INTEGER.test(token)) this.fail('leading zeros in an integer, which Python refuses', start)
    const n = Number(digits)
    return { value: Number.isSafeInteger(n) ? n : BigInt(digits).toString(), integer: true }
  }

  /** One string or several side by side (`'a' 'b'` is `'ab'`). */
  private strings(prefix: string): string {
    let text = ''
    for (;;) {
      if (/[bB]/.test(prefix)) this.fail('bytes, which JSON cannot hold')
      if (/[fF]/.test(prefix)) this.fail('an f-string, which literal_eval refuses')
      this.at += prefix.length
      text += this.string(/[rR]/.test(prefix))
      this.space()
      NAME.lastIndex = this.at
      const name = NAME.exec(this.text)?.[0]
      const c = this.text[this.at]
      if (c === "'" || c === '"') prefix = ''
      else if (name !== undefined && PREFIX.test(name) && /['"]/.test(this.text[this.at + name.length] ?? '')) prefix = name
      else return text
      if (this.sideBySide === 'split') return text
      if (this.sideBySide === 'refuse') this.fail('strings side by side, as numpy writes an array, where a list has commas')
    }
  }

  private string(raw: boolean): string {
    const start = this.at
    const quote = this.text[this.at]!
    const triple = this.text.startsWith(quote.repeat(3), this.at)
    const close = triple ? quote.repeat(3) : quote
    this.at += close.length
    // Runs of characters up to the next backslash, quote or line break are taken whole.
    const plain = PLAIN[quote === "'" ? 0 : 1]![triple ? 1 : 0]!
    const parts: string[] = []
    for (;;) {
      plain.lastIndex = this.at
      const run = plain.exec(this.text)?.[0]
      if (run) {
        parts.push(run)
        this.at += run.length
      }
      const c = this.text[this.at]
      if (c === undefined || (c === '\n' && !triple)) this.fail('a string that does not end', start)
      if (this.text.startsWith(close, this.at)) {
        this.at += close.length
        return parts.join('')
      }
      if (c !== '\\') {
        // A quote that does not end a triple-quoted string, or a line break inside one.
        parts.push(c)
        this.at++
        continue
      }
      const next = this.text[this.at + 1]
      if (next === undefined) this.fail('a string that does not end', start)
      if (raw) {
        // A raw string keeps the backslash; it still keeps the quote after it from ending the string.
        parts.push(c + next)
        this.at += 2
        continue
      }
      this.at += 2
      parts.push(this.escape(next))
    }
  }

  private escape(c: string): string {
    const simple = ESCAPES[c]
    if (simple !== undefined) return simple
    if (c >= '0' && c <= '7') {
      let digits = c
      while (digits.length < 3 && /[0-7]/.test(this.text[this.at] ?? '')) digits += this.text[this.at++]
      return String.fromCodePoint(parseInt(digits, 8))
    }
    const width = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0
    if (width) {
      const hex = this.text.slice(this.at, this.at + width)
      if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(hex)) this.fail(`a \\${c} escape without ${width} hex digits`, this.at - 2)
      const code = parseInt(hex, 16)
      if (code > 0x10ffff) this.fail(`a \\${c} escape past the last Unicode character`, this.at - 2)
      this.at += width
      return String.fromCodePoint(code)
    }
    if (c === 'N') this.fail('a \\N{...} escape (a character by its Unicode name), which is not read here: write the character itself', this.at - 2)
    // Python keeps an unknown escape as it is, backslash and all.
    return `\\${c}`
  }
}

const ESCAPES: Record<string, string> = {
  '\n': '',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
}
