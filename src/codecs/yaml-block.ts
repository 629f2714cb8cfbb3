/**
 * One item of a YAML record list, read as the `yaml` package reads it, made faster. `yaml` lexes,
 * parses and composes a document of nodes for every item, then turns it into values (2.3 s for a
 * 10 MB file of eval cases; js-yaml reads it in 0.4 s). Datasets are written in a small part of
 * YAML: mappings and lists by indentation, plain, quoted and block scalars, one-line flow lists and
 * mappings, comments, the anchors and aliases PyYAML writes for a value used twice (`&id001`,
 * `*id001`), across items too, and the merge key (`<<: *defaults`). That part is read here,
 * straight into values. Whatever else an item holds (tags, `?` keys, a key given twice, tabs
 * outside block scalars, an alias in a flow collection, anything `yaml` would refuse) makes
 * `readBlockItem` decline, and the caller hands the item to `yaml`. A property test holds the
 * values read here to `yaml`'s own, item by item.
 */

/** Thrown (never seen outside) when the item holds what this reader leaves to `yaml`. */
const DECLINED: unknown = Object.freeze({ declined: true })

/**
 * An anchor whose value this reader leaves to `yaml`: one set on a node that holds an alias (the
 * caller's table may say so of anchors `yaml` read). An alias to it makes the item declined.
 */
export const LEFT_TO_YAML: unknown = Object.freeze({ leftToYaml: true })
/** An anchor whose node is being read: an alias to it inside that node is `yaml`'s to judge. */
const OPEN: unknown = Object.freeze({ open: true })
/**
 * Uses of one anchor in one item. `yaml` refuses an item whose aliases to an anchor, counted with
 * the anchor's own node and weighed by the aliases inside it, pass 1000 (an alias bomb); the anchors
 * read here hold no alias, so past this many uses `yaml` judges.
 */
const MAX_ALIAS_USES = 999
/** An anchor's name as read here: what PyYAML and people write (`id001`, `defaults`). */
const ANCHOR_NAME = /[A-Za-z0-9_.-]+/y

/** The values of plain scalars that are not text, in the YAML 1.2 core schema `yaml` reads with. */
const NULL = /^(?:~|[Nn]ull|NULL)?$/
const BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/
const INT_OCT = /^0o[0-7]+$/
const INT = /^[-+]?[0-9]+$/
const INT_HEX = /^0x[0-9a-fA-F]+$/
const FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/
const FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/

/**
 * Integers this long are left to `yaml`, which reads them as bigints where the text holds 16
 * digits in a row (see `readYaml`), so that one past what a number holds exactly is kept.
 */
const LONG_INT = 16

/** Characters the reader leaves to `yaml` wherever they stand: controls, line and byte-order marks, noncharacters. */
const UNUSUAL = /[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]/

/** Nesting deeper than this is left to `yaml`, which has its own limits. */
const MAX_DEPTH = 200

/** An implicit key is at most this long (YAML 1.2, 7.4.2). */
const MAX_KEY = 1024

const enum C {
  Tab = 9,
  Space = 32,
  Quote = 34,
  Hash = 35,
  Ampersand = 38,
  Apostrophe = 39,
  Star = 42,
  Plus = 43,
  Comma = 44,
  Dash = 45,
  Colon = 58,
  Greater = 62,
  Question = 63,
  OpenBracket = 91,
  Backslash = 92,
  CloseBracket = 93,
  OpenBrace = 123,
  Pipe = 124,
  CloseBrace = 125,
}

/** First characters of a plain scalar that make it something else, or that `yaml` refuses. */
function isIndicator(code: number): boolean {
  switch (code) {
    case 33: // !
    case 37: // %
    case 38: // &
    case 42: // *
    case 44: // ,
    case 58: // :
    case C.Greater:
    case C.Question:
    case 64: // @
    case 91: // [
    case 93: // ]
    case 96: // `
    case 123: // {
    case C.Pipe:
    case 125: // }
    case C.Hash:
    case C.Quote:
    case C.Apostrophe:
      return true
    default:
      return false
  }
}

/** The value of a plain scalar's text, as the core schema resolves it. */
function plainValue(text: string): unknown {
  const first = text.charCodeAt(0)
  // Only text that starts with a digit, a sign, a dot, `~`, or the first letter of null, true or false can be other than text.
  const digit = first >= 48 && first <= 57
  if (!(digit || first === C.Plus || first === C.Dash || first === 46 || first === 126 || first === 110 || first === 78 || first === 116 || first === 84 || first === 102 || first === 70)) return text
  if (NULL.test(text)) return null
  if (BOOL.test(text)) return first === 116 || first === 84
  if (INT_OCT.test(text)) return longInt(text, parseInt(text.slice(2), 8))
  if (INT.test(text)) {
    const value = longInt(text, parseInt(text, 10))
    // `yaml` reads `-0` as -0 as a number, as 0 as a bigint: which one depends on the rest of the text.
    if (Object.is(value, -0)) throw DECLINED
    return value
  }
  if (INT_HEX.test(text)) return longInt(text, parseInt(text.slice(2), 16))
  if (FLOAT_NAN.test(text)) return text.slice(-3).toLowerCase() === 'nan' ? NaN : first === C.Dash ? -Infinity : Infinity
  if (FLOAT_EXP.test(text) || FLOAT.test(text)) return parseFloat(text)
  return text
}

function longInt(text: string, value: number): number {
  if (text.length >= LONG_INT) throw DECLINED
  return value
}

const ESCAPES: Record<string, string> = {
  '0': '\0',
  a: '\x07',
  b: '\b',
  e: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  N: '\u0085',
  _: '\u00a0',
  L: '\u2028',
  P: '\u2029',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
}

/** The text of a double-quoted scalar, its source from quote to quote with lines joined by `\n`. */
function doubleQuoted(source: string): string {
  let out = ''
  let from = 1
  const end = source.length - 1
  for (let i = 1; i < end; i++) {
    const ch = source.charCodeAt(i)
    if (ch === C.Backslash) {
      out += source.slice(from, i)
      const next = source[++i]!
      const escape = ESCAPES[next]
      if (escape !== undefined) out += escape
      else if (next === '\n') {
        // An escaped line break joins the lines, dropping the next line's indentation.
        while (source.charCodeAt(i + 1) === C.Space) i++
      } else if (next === 'x' || next === 'u' || next === 'U') {
        const length = next === 'x' ? 2 : next === 'u' ? 4 : 8
        const hex = source.slice(i + 1, i + 1 + length)
        if (hex.length !== length || !/^[0-9a-fA-F]+$/.test(hex)) throw DECLINED
        const code = parseInt(hex, 16)
        if (code > 0x10ffff) throw DECLINED
        out += String.fromCodePoint(code)
        i += length
      } else throw DECLINED
      from = i + 1
    } else if (ch === 10) {
      // A line break folds: into a space, or n - 1 breaks for n; the spaces around it are dropped.
      let text = source.slice(from, i)
      let trim = text.length
      while (trim > 0 && text.charCodeAt(trim - 1) === C.Space) trim--
      text = text.slice(0, trim)
      let breaks = 0
      while (source.charCodeAt(i + 1) === C.Space || source.charCodeAt(i + 1) === 10) if (source.charCodeAt(++i) === 10) breaks++
      out += text + (breaks ? '\n'.repeat(breaks) : ' ')
      from = i + 1
    }
  }
  return out + source.slice(from, end)
}

/** Lines of a single-quoted or plain scalar joined as YAML folds them (`yaml`'s `unfoldLines`). */
function unfold(source: string): string {
  if (!source.includes('\n')) return source
  const lines = source.split('\n')
  let out = trimEnd(lines[0]!)
  let separator = ' '
  for (let k = 1; k < lines.length; k++) {
    const last = k === lines.length - 1
    const line = last ? trimStart(lines[k]!) : trimStart(trimEnd(lines[k]!))
    if (line === '' && !last) {
      if (separator === '\n') out += separator
      else separator = '\n'
    } else {
      out += separator + line
      separator = ' '
    }
  }
  return out
}

function trimEnd(text: string): string {
  let end = text.length
  while (end > 0 && text.charCodeAt(end - 1) === C.Space) end--
  return end === text.length ? text : text.slice(0, end)
}

function trimStart(text: string): string {
  let start = 0
  while (start < text.length && text.charCodeAt(start) === C.Space) start++
  return start ? text.slice(start) : text
}

function indentOf(line: string): number {
  let i = 0
  while (line.charCodeAt(i) === C.Space) i++
  return i
}

/** Whether a line holds nothing but spaces, or a comment. */
function isBlank(line: string, indent: number): boolean {
  return indent === line.length || line.charCodeAt(indent) === C.Hash
}

/** Whether the line holds a list item's `-` at `at`. */
function isDash(line: string, at: number): boolean {
  return line.charCodeAt(at) === C.Dash && (at + 1 === line.length || line.charCodeAt(at + 1) === C.Space)
}

/** `Reader.key` of the merge key. */
const MERGE = Symbol('<<')

/**
 * The mappings a merge key's value names (one, or a list of them) put into `map`, the first one's
 * keys before the next's, each key that `map` does not hold yet, as `yaml` merges them.
 */
function mergeInto(map: Record<string, unknown>, value: unknown): void {
  for (const source of Array.isArray(value) ? value : [value]) {
    if (typeof source !== 'object' || source === null || Array.isArray(source)) throw DECLINED
    for (const key in source) {
      // A null key merged is named "null" by `yaml`, not "" as elsewhere: the key '' may have been either.
      if (key === '') throw DECLINED
      if (!Object.hasOwn(map, key)) map[key] = (source as Record<string, unknown>)[key]
    }
  }
}

/** The name of the anchor or alias whose `&` or `*` is at column `i`, and the column after it. */
function anchorName(line: string, i: number): [string, number] {
  ANCHOR_NAME.lastIndex = i + 1
  const match = ANCHOR_NAME.exec(line)
  const end = i + 1 + (match?.[0].length ?? 0)
  if (end === i + 1 || (end < line.length && line.charCodeAt(end) !== C.Space)) throw DECLINED
  return [match![0], end]
}

/** A value read here, copied: an alias's value is its own, as each record `yaml` reads is. */
function copyOf(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map(copyOf)
  const out: Record<string, unknown> = {}
  for (const key in value) out[key] = copyOf((value as Record<string, unknown>)[key])
  return out
}

/** Whether text from `i` on is only spaces, or spaces and then a comment. */
function restIsEmpty(line: string, i: number): boolean {
  while (line.charCodeAt(i) === C.Space) i++
  return i === line.length || line.charCodeAt(i) === C.Hash
}

class Reader {
  private readonly lines: string[]
  /** The next line not read yet. */
  private at = 0
  private depth = 0
  /** The line where the item's value starts, set by the first call to `after`. */
  private valueLine = -1
  private readonly endsWithBreak: boolean
  /** The anchors this item sets, by name: a copy of the node's value, or `LEFT_TO_YAML`. */
  readonly anchors = new Map<string, unknown>()
  /** Aliases read so far: an anchored node that reads one holds an alias. */
  private aliases = 0
  private uses: Map<string, number> | undefined
  /** The names of the earlier items' anchors that this item's aliases use. */
  readonly used = new Set<string>()

  /** `earlier`: the anchors of the items before, as `anchors` gives them. */
  constructor(
    text: string,
    private readonly earlier: ReadonlyMap<string, unknown> | undefined,
  ) {
    const lines = text.split('\n')
    this.endsWithBreak = lines[lines.length - 1] === ''
    if (this.endsWithBreak) lines.pop()
    if (text.includes('\r')) {
      for (let k = 0; k < lines.length; k++) {
        const line = lines[k]!
        lines[k] = line.endsWith('\r') ? line.slice(0, -1) : line
        if (lines[k]!.includes('\r')) throw DECLINED
      }
    }
    this.lines = lines
  }

  /** The item's value, and the line its node starts on. */
  item(): { value: unknown; line: number } {
    const first = this.line(0)
    const dash = indentOf(first)
    if (!isDash(first, dash)) throw DECLINED
    const value = this.after(0, dash + 1, dash, true, false)
    if (this.nextContent(this.at) < this.lines.length) throw DECLINED
    return { value, line: this.valueLine }
  }

  /** Line `k`, refused when it holds a tab (outside block scalars, whose lines are read apart). */
  private line(k: number): string {
    const line = this.lines[k]!
    if (line.includes('\t')) throw DECLINED
    return line
  }

  /** The first line from `k` on that holds more than spaces and a comment. */
  private nextContent(k: number): number {
    const lines = this.lines
    for (; k < lines.length; k++) {
      const line = lines[k]!
      if (!isBlank(line, indentOf(line))) return k
    }
    return k
  }

  /**
   * The value after a `-` or a key's `:` on line `k`, from column `i`: on the same line, or on the
   * lines after, indented past `parent` (the column of the `-` or the key). `entry`: after a `-`,
   * where a key starts a mapping; `sameIndentList`: after a key, whose list may stand at its column.
   */
  private after(k: number, i: number, parent: number, entry: boolean, sameIndentList: boolean): unknown {
    const line = this.lines[k]!
    while (line.charCodeAt(i) === C.Space) i++
    if (line.charCodeAt(i) === C.Ampersand) return this.anchored(k, i, parent, entry, sameIndentList)
    if (line.charCodeAt(i) === C.Star) return this.alias(k, i, parent)
    if (i === line.length || line.charCodeAt(i) === C.Hash) {
      const next = this.nextContent(k + 1)
      if (this.valueLine < 0) this.valueLine = next < this.lines.length ? next : k
      if (next < this.lines.length) {
        const text = this.line(next)
        const indent = indentOf(text)
        if (indent > parent || (sameIndentList && indent === parent && isDash(text, indent))) return this.block(next, indent)
      }
      this.at = next
      return null
    }
    if (this.valueLine < 0) this.valueLine = k
    const ch = line.charCodeAt(i)
    if (ch === C.Quote || ch === C.Apostrophe) {
      const [value, endLine, end] = this.quoted(k, i, parent)
      const text = this.lines[endLine]!
      let j = end
      while (text.charCodeAt(j) === C.Space) j++
      if (text.charCodeAt(j) === C.Colon && (j + 1 === text.length || text.charCodeAt(j + 1) === C.Space)) {
        // A quoted key: a mapping after a `-`, at the quote's column.
        if (!entry || endLine !== k) throw DECLINED
        return this.mapping(k, i)
      }
      if (j < text.length && (text.charCodeAt(j) !== C.Hash || j === end)) throw DECLINED
      this.endScalar(endLine + 1, parent)
      return value
    }
    if (ch === C.Pipe || ch === C.Greater) return this.blockScalar(k, i, parent)
    if (ch === C.OpenBracket || ch === C.OpenBrace) {
      const flow = new Flow(line, i)
      const value = flow.value()
      if (!restIsEmpty(line, flow.i) || (flow.i < line.length && line.charCodeAt(flow.i) === C.Hash)) throw DECLINED
      this.endScalar(k + 1, parent)
      return value
    }
    if (isDash(line, i)) {
      // A list in a list, its first item on the line of the outer item's `-`.
      if (!entry) throw DECLINED
      return this.block(k, i)
    }
    if (isIndicator(ch)) throw DECLINED
    // A plain scalar, or a key.
    let j = i
    let end = line.length
    let comment = false
    for (; j < line.length; j++) {
      const c = line.charCodeAt(j)
      if (c === C.Colon) {
        if (j + 1 === line.length || line.charCodeAt(j + 1) === C.Space) {
          if (!entry) throw DECLINED
          return this.mapping(k, i)
        }
      } else if (c === C.Hash && line.charCodeAt(j - 1) === C.Space) {
        end = j
        comment = true
        break
      }
    }
    let text = trimEnd(line.slice(i, end))
    if (comment) {
      this.endScalar(k + 1, parent)
      return plainValue(text)
    }
    // Lines indented past `parent` go on with the scalar, folded.
    const lines = this.lines
    let last = k
    let breaks = 0
    for (let n = k + 1; n < lines.length; n++) {
      const next = lines[n]!
      const indent = indentOf(next)
      if (indent === next.length) {
        breaks++
        continue
      }
      if (indent <= parent || next.charCodeAt(indent) === C.Hash) break
      // A line of a plain scalar may start with any character but those that would start a key, a list item or a comment.
      const first = next.charCodeAt(indent)
      const spaced = indent + 1 === next.length || next.charCodeAt(indent + 1) === C.Space
      if (next.includes('\t') || first === C.Colon || ((first === C.Dash || first === C.Question) && spaced)) throw DECLINED
      const more = trimEnd(next.slice(indent))
      // A key, or a comment, inside a scalar of several lines is for `yaml` to judge.
      if (more.includes(': ') || more.endsWith(':') || more.includes(' #')) throw DECLINED
      text += (breaks ? '\n'.repeat(breaks) : ' ') + more
      breaks = 0
      last = n
    }
    this.endScalar(last + 1, parent)
    return last === k ? plainValue(text) : text
  }

  /** A node with an anchor at column `i` of line `k`: its value, which the anchor's name keeps. */
  private anchored(k: number, i: number, parent: number, entry: boolean, sameIndentList: boolean): unknown {
    const line = this.lines[k]!
    const [name, end] = anchorName(line, i)
    let next = end
    while (line.charCodeAt(next) === C.Space) next++
    // A second anchor, or an alias, cannot take this one.
    if (line.charCodeAt(next) === C.Ampersand || line.charCodeAt(next) === C.Star) throw DECLINED
    this.anchors.set(name, OPEN)
    const aliases = this.aliases
    // `- &a key: value` anchors the key, which is `yaml`'s to read: a node on the anchor's line is no mapping.
    const value = this.after(k, end, parent, entry && restIsEmpty(line, end), sameIndentList)
    this.anchors.set(name, this.aliases === aliases ? copyOf(value) : LEFT_TO_YAML)
    return value
  }

  /** An alias at column `i` of line `k`: a copy of its anchor's value, set earlier in this item or before it. */
  private alias(k: number, i: number, parent: number): unknown {
    const line = this.lines[k]!
    const [name, end] = anchorName(line, i)
    if (!restIsEmpty(line, end)) throw DECLINED
    const own = this.anchors.has(name)
    const value = own ? this.anchors.get(name) : this.earlier?.has(name) ? this.earlier.get(name) : OPEN
    if (value === OPEN || value === LEFT_TO_YAML) throw DECLINED
    if (!own) this.used.add(name)
    const uses = (this.uses ??= new Map()).get(name) ?? 0
    if (uses === MAX_ALIAS_USES) throw DECLINED
    this.uses.set(name, uses + 1)
    this.aliases++
    if (this.valueLine < 0) this.valueLine = k
    this.endScalar(k + 1, parent)
    return copyOf(value)
  }

  /** After a scalar ending before line `k`: what follows must not be indented past `parent`. */
  private endScalar(k: number, parent: number): void {
    const next = this.nextContent(k)
    if (next < this.lines.length && indentOf(this.lines[next]!) > parent) throw DECLINED
    this.at = next
  }

  /** A mapping or list whose first line, `k`, is indented `indent`. */
  private block(k: number, indent: number): unknown {
    if (++this.depth > MAX_DEPTH) throw DECLINED
    const value = isDash(this.lines[k]!, indent) ? this.list(k, indent) : this.mapping(k, indent)
    this.depth--
    return value
  }

  /** A block list whose items' `-` stand at column `indent`, from line `k`. */
  private list(k: number, indent: number): unknown[] {
    const items: unknown[] = []
    for (;;) {
      items.push(this.after(k, indent + 1, indent, true, false))
      k = this.at
      if (k >= this.lines.length) return items
      const line = this.line(k)
      const next = indentOf(line)
      if (next > indent) throw DECLINED
      if (next < indent || !isDash(line, indent)) return items
    }
  }

  /** A block mapping whose keys stand at column `indent`, the first on line `k`. */
  private mapping(k: number, indent: number): Record<string, unknown> {
    if (++this.depth > MAX_DEPTH) throw DECLINED
    const map: Record<string, unknown> = {}
    /** The keys written in the mapping, once a merge key has put others in. */
    let written: Set<string> | undefined
    for (;;) {
      const line = this.line(k)
      const [key, colon] = this.key(line, indent)
      if (key === MERGE) {
        // A second merge key is `yaml`'s to judge.
        if (written) throw DECLINED
        written = new Set(Object.keys(map))
        mergeInto(map, this.after(k, colon + 1, indent, false, true))
      } else {
        // A key `__proto__`, however it is written, is refused by the caller, from the node `yaml` reads.
        if ((written ? written.has(key) : Object.hasOwn(map, key)) || key === '__proto__') throw DECLINED
        written?.add(key)
        // A key a merge put in keeps its place, and takes the value written here.
        map[key] = this.after(k, colon + 1, indent, false, true)
      }
      k = this.at
      if (k >= this.lines.length) break
      const next = indentOf(this.lines[k]!)
      if (next > indent || (next === indent && isDash(this.lines[k]!, indent))) throw DECLINED
      if (next < indent) break
    }
    this.depth--
    return map
  }

  /** The key at column `i` of `line` (`MERGE` for the merge key), and the column of its `:`. */
  private key(line: string, i: number): [string | typeof MERGE, number] {
    const ch = line.charCodeAt(i)
    let key: string
    let j: number
    if (ch === C.Quote || ch === C.Apostrophe) {
      j = closingQuote(line, i)
      if (j < 0) throw DECLINED
      key = ch === C.Quote ? doubleQuoted(line.slice(i, j)) : line.slice(i + 1, j - 1).replaceAll("''", "'")
      while (line.charCodeAt(j) === C.Space) j++
      if (line.charCodeAt(j) !== C.Colon) throw DECLINED
    } else {
      if (isIndicator(ch) || isDash(line, i) || i === line.length) throw DECLINED
      for (j = i; ; j++) {
        if (j === line.length) throw DECLINED
        const c = line.charCodeAt(j)
        if (c === C.Colon && (j + 1 === line.length || line.charCodeAt(j + 1) === C.Space)) break
        if (c === C.Hash && line.charCodeAt(j - 1) === C.Space) throw DECLINED
      }
      key = trimEnd(line.slice(i, j))
      // The merge key is `<<` unquoted. A key read as null, a boolean or a number is named by its text in JavaScript, as `yaml` names it.
      if (key === '<<') return [MERGE, j]
      const value = plainValue(key)
      if (value !== key) key = value === null ? '' : String(value)
    }
    if (j - i > MAX_KEY || (j + 1 < line.length && line.charCodeAt(j + 1) !== C.Space)) throw DECLINED
    return [key, j]
  }

  /**
   * A quoted scalar opening at column `i` of line `k`, which may go on over lines indented past
   * `parent`: its text, and the line and column after its closing quote.
   */
  private quoted(k: number, i: number, parent: number): [string, number, number] {
    const line = this.lines[k]!
    const quote = line.charCodeAt(i)
    let end = closingQuote(line, i)
    if (end >= 0) {
      const inner = line.slice(i + 1, end - 1)
      if (quote === C.Apostrophe) return [inner.includes("'") ? inner.replaceAll("''", "'") : inner, k, end]
      return [inner.includes('\\') ? doubleQuoted(line.slice(i, end)) : inner, k, end]
    }
    let source = line.slice(i)
    let n = k
    for (;;) {
      if (++n >= this.lines.length) throw DECLINED
      const next = this.line(n)
      const indent = indentOf(next)
      if (indent < next.length && indent <= parent) throw DECLINED
      end = closingQuoteFrom(next, 0, quote)
      if (end >= 0) {
        source += '\n' + next.slice(0, end)
        break
      }
      source += '\n' + next
    }
    if (quote === C.Quote) return [doubleQuoted(source), n, end]
    return [unfold(source.slice(1, -1)).replaceAll("''", "'"), n, end]
  }

  /** A block scalar whose header (`|`, `>-`, `|2`…) stands at column `i` of line `k`, its lines indented past `parent`. */
  private blockScalar(k: number, i: number, parent: number): string {
    const header = this.lines[k]!
    const folded = header.charCodeAt(i) === C.Greater
    let chomp = ''
    let indicator = 0
    let j = i + 1
    for (; j < i + 3 && j < header.length; j++) {
      const c = header.charCodeAt(j)
      if (!chomp && (c === C.Dash || c === C.Plus)) chomp = header[j]!
      else if (!indicator && c >= 49 && c <= 57) indicator = c - 48
      else break
    }
    if (j < header.length && (header.charCodeAt(j) !== C.Space || !restIsEmpty(header, j))) throw DECLINED
    const lines = this.lines
    let n = k + 1
    for (; n < lines.length; n++) {
      const line = lines[n]!
      const indent = indentOf(line)
      if (indent < line.length && indent <= parent) break
      // Spaces after the text's last line break, no further than `parent`, end it too.
      if (n === lines.length - 1 && !this.endsWithBreak && indent <= parent) break
    }
    this.at = this.nextContent(n)
    // Where an indentation indicator is given, `yaml` reads a line of spaces in ways of its own.
    if (indicator) for (let m = k + 1; m < n; m++) if (lines[m]!.length && indentOf(lines[m]!) === lines[m]!.length) throw DECLINED
    // As `yaml` reads the lines from k + 1 to n (resolve-block-scalar), and after them the empty
    // line that the break ending the last one starts.
    const count = n === k + 1 ? 0 : n - k - (n < lines.length || this.endsWithBreak ? 0 : 1)
    const at = (m: number): string => (m < n ? lines[m]! : '')
    const end = k + 1 + count
    let chompStart = end
    while (chompStart > k + 1 && indentOf(at(chompStart - 1)) === at(chompStart - 1).length) chompStart--
    if (chompStart === k + 1) return chomp === '+' && count > 0 ? '\n'.repeat(Math.max(1, count - 1)) : ''
    let trim = parent + indicator
    let contentStart = k + 1
    for (; ; contentStart++) {
      const line = lines[contentStart]!
      const indent = indentOf(line)
      if (indent < line.length) {
        if (indent < trim) throw DECLINED
        if (!indicator) trim = indent
        break
      }
      if (!indicator && indent > trim) trim = indent
    }
    for (let m = end - 1; m >= chompStart; m--) {
      if (at(m).length > trim) {
        chompStart = m + 1
        break
      }
    }
    let value = ''
    for (let m = k + 1; m < contentStart; m++) value += lines[m]!.slice(trim) + '\n'
    let separator = ''
    let moreIndented = false
    for (let m = contentStart; m < chompStart; m++) {
      const line = at(m)
      const indent = indentOf(line)
      if (indent < trim && indent < line.length) throw DECLINED
      if (line.charCodeAt(indent) === C.Tab) throw DECLINED
      if (!folded) {
        value += separator + line.slice(trim)
        separator = '\n'
      } else if (indent > trim) {
        if (separator === ' ') separator = '\n'
        else if (!moreIndented && separator === '\n') separator = '\n\n'
        value += separator + line.slice(trim)
        separator = '\n'
        moreIndented = true
      } else if (indent === line.length) {
        if (separator === '\n') value += '\n'
        else separator = '\n'
      } else {
        value += separator + line.slice(trim)
        separator = ' '
        moreIndented = false
      }
    }
    if (chomp === '+') {
      for (let m = chompStart; m < end; m++) value += '\n' + at(m).slice(trim)
      if (!value.endsWith('\n')) value += '\n'
    } else if (chomp === '') value += '\n'
    return value
  }
}

/** The column after the quote that closes the one at column `i`, or -1 when it is not on this line. */
function closingQuote(line: string, i: number): number {
  return closingQuoteFrom(line, i + 1, line.charCodeAt(i))
}

/**
 * The column after the closing `quote` from column `i` on, or -1. A backslash that ends a line
 * escapes its line break, so each line is read from its start.
 */
function closingQuoteFrom(line: string, i: number, quote: number): number {
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (quote === C.Quote && c === C.Backslash) i++
    else if (c === quote) {
      if (quote === C.Apostrophe && line.charCodeAt(i + 1) === C.Apostrophe) i++
      else return i + 1
    }
  }
  return -1
}

/** A flow list or mapping on one line, from column `i`. */
class Flow {
  private depth = 0

  constructor(
    private readonly line: string,
    public i: number,
  ) {}

  private space(): void {
    while (this.line.charCodeAt(this.i) === C.Space) this.i++
  }

  /** After an entry: true past a `,` that leads to another, false at the collection's `close`. */
  private more(close: number): boolean {
    this.space()
    const next = this.line.charCodeAt(this.i)
    if (next === close) return false
    if (next !== C.Comma) throw DECLINED
    this.i++
    return true
  }

  value(): unknown {
    if (++this.depth > MAX_DEPTH) throw DECLINED
    const value = this.node()
    this.depth--
    return value
  }

  private node(): unknown {
    const line = this.line
    this.space()
    const ch = line.charCodeAt(this.i)
    if (ch === C.OpenBracket) {
      this.i++
      const items: unknown[] = []
      for (;;) {
        this.space()
        if (line.charCodeAt(this.i) === C.CloseBracket) break
        items.push(this.value())
        if (!this.more(C.CloseBracket)) break
      }
      this.i++
      return items
    }
    if (ch === C.OpenBrace) {
      this.i++
      const map: Record<string, unknown> = {}
      for (;;) {
        this.space()
        if (line.charCodeAt(this.i) === C.CloseBrace) break
        const key = this.value()
        if (typeof key !== 'string' || Object.hasOwn(map, key) || key === '<<' || key === '__proto__') throw DECLINED
        this.space()
        if (line.charCodeAt(this.i) !== C.Colon || line.charCodeAt(this.i + 1) !== C.Space) throw DECLINED
        this.i++
        map[key] = this.value()
        if (!this.more(C.CloseBrace)) break
      }
      this.i++
      return map
    }
    if (ch === C.Quote || ch === C.Apostrophe) {
      const end = closingQuote(line, this.i)
      if (end < 0) throw DECLINED
      const source = line.slice(this.i, end)
      this.i = end
      return ch === C.Quote ? doubleQuoted(source) : source.slice(1, -1).replaceAll("''", "'")
    }
    if (isIndicator(ch) || isDash(line, this.i) || Number.isNaN(ch)) throw DECLINED
    const start = this.i
    for (; this.i < line.length; this.i++) {
      const c = line.charCodeAt(this.i)
      if (c === C.Comma || c === C.OpenBracket || c === C.CloseBracket || c === C.OpenBrace || c === C.CloseBrace || c === C.Hash) break
      if (c === C.Colon) {
        const after = line.charCodeAt(this.i + 1)
        if (after === C.Space || after === C.Comma || after === C.CloseBracket || after === C.CloseBrace || Number.isNaN(after)) break
      }
    }
    if (line.charCodeAt(this.i) === C.Hash) throw DECLINED
    const value = plainValue(trimEnd(line.slice(start, this.i)))
    return value
  }
}

/** What `readBlockItem` reads of an item. */
export interface BlockItem {
  value: unknown
  line: number
  anchors?: Map<string, unknown>
  used?: Set<string>
}

/**
 * The value of one list item (`- …` and the lines under it), as `yaml` reads that text, and the
 * line (from 0) where the value's node starts; undefined when the item holds what is left to `yaml`.
 * `earlier`: the anchors set before the item, by name (see `Reader.anchors`), which its aliases
 * may use. When the item sets anchors, `anchors` are its own, for the items after it; when it uses
 * earlier ones, `used` names them.
 */
export function readBlockItem(text: string, earlier?: ReadonlyMap<string, unknown>): BlockItem | undefined {
  if (UNUSUAL.test(text)) return undefined
  try {
    const reader = new Reader(text, earlier)
    const item: BlockItem = reader.item()
    if (reader.anchors.size) item.anchors = reader.anchors
    if (reader.used.size) item.used = reader.used
    return item
  } catch (error) {
    if (error === DECLINED) return undefined
    throw error
  }
}
