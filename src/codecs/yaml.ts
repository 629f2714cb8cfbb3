/**
 * YAML documents. Reading cuts a plain block list into its items and reads each alone, so only the
 * current record's text is held: with `readBlockItem` (yaml-block.ts) where the item (or the keys
 * above the list, `plainHead`) is in the YAML datasets are written in, else with the `yaml`
 * package, loaded only then. Anchors set in one item and used in later ones are kept for them
 * (`ItemAnchors`). Lines end at an LF, a CRLF or a lone CR. Whatever the cutter is not sure of
 * (several documents, a `?` key or a line that starts with a tab above the list or at the list's
 * own indentation) is parsed whole by `yaml`, from the item where it began. Positions are kept, so
 * an error names the file's line. Writing is yaml-emit.ts's.
 */
import { StringDecoder } from 'node:string_decoder'
import type { Document, LineCounter, Node, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
import { LEFT_TO_YAML, readBlockItem } from './yaml-block.ts'
import { MAX_DEPTH, yamlPackage } from './yaml-emit.ts'
import { DataError, type Location } from '../errors.ts'
import { bigintToJson, keptWarning } from './json.ts'
import { hasKeys, isJsonObject, type JsonObject } from '../model.ts'
import { CASES_FILE_KEY, countNewlines, depthOver, fieldPath, hasProtoKey, LIST_KEY, MAX_RECORD_CHARS, PendingLine, protoRefused, type ByteSource, type ReadOptions, type SourceRecord } from './types.ts'

/** Text that may hold an integer past what a number holds exactly. */
const LONG_DIGITS = /\d{16}/

/** What a YAML `!!binary` value is read as: JSON has no bytes. */
const BINARY_TEXT = 'a !!binary value is read as its base64 text'

/**
 * `value` as JSON data: bigints as numbers, or, past what a number holds exactly, as their digits;
 * `!!binary` bytes as base64 text. Each such change is told in `notes`.
 */
function plainValues(value: unknown, notes: string[]): unknown {
  if (typeof value === 'bigint') {
    const exact = bigintToJson(value)
    if (typeof exact === 'string') notes.push(keptWarning(exact))
    return exact
  }
  if (value instanceof Uint8Array) {
    notes.push(BINARY_TEXT)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')
  }
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return value.map((item) => plainValues(item, notes))
  const out: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) out[key] = plainValues(item, notes)
  return out
}

// `yaml` is loaded when a file needs it (see `yamlPackage`): most items are read without it.
const isMap = (node: unknown): node is YAMLMap => yamlPackage().isMap(node)
const isSeq = (node: unknown): node is YAMLSeq => yamlPackage().isSeq(node)
const isScalar = (node: unknown): node is Scalar => yamlPackage().isScalar(node)

const TOO_DEEP = `lists or mappings nested deeper than ${MAX_DEPTH} levels`

/** A key `yaml` would write as its YAML text, with a warning of its own on the process: where it stands. */
interface TextlessKey {
  /** The path of the mapping that holds the key. */
  field: string
  start: number
  /** The key as JSON would write it (a list or a mapping), or its text in the file and its tag. */
  shown: string
}

/** The key of `pair` if it is a list, a mapping (`? [a, b]`, `[a, b]: c`) or binary data (`!!binary` gives bytes). */
function textlessKey(pair: Pair, doc: Document, path: string, source: string): TextlessKey | undefined {
  const written = pair.key as Node | null
  const key = yamlPackage().isAlias(written) ? written.resolve(doc) : written
  const start = written?.range?.[0] ?? 0
  if (isMap(key) || isSeq(key)) return { field: path, start, shown: JSON.stringify(key.toJSON()) }
  if (!isScalar(key) || typeof key.value !== 'object' || key.value === null) return undefined
  const tag = key.tag ? `!!${key.tag.slice(key.tag.lastIndexOf(':') + 1)} ` : ''
  return { field: path, start, shown: tag + source.slice(start, written!.range?.[1] ?? start).trim() }
}

/** The first key under `node` that is a list, a mapping or binary data (see `textlessKey`), found before `yaml` reads the node. */
function firstTextlessKey(node: unknown, doc: Document, path: string, source: string): TextlessKey | undefined {
  if (isSeq(node)) {
    for (let i = 0; i < node.items.length; i++) {
      const found = firstTextlessKey(node.items[i], doc, `${path}[${i}]`, source)
      if (found) return found
    }
  } else if (isMap(node)) {
    for (const pair of node.items) {
      const bad = textlessKey(pair, doc, path, source)
      if (bad) return bad
      const name = String(isScalar(pair.key) ? pair.key.value : pair.key)
      const found = firstTextlessKey(pair.value, doc, path ? `${path}.${name}` : name, source)
      if (found) return found
    }
  }
  return undefined
}

/** Refuses `found`, a key that is not text: JSON, and every format written, has text keys only. */
function refuseTextlessKey(found: TextlessKey | undefined, where: (offset: number) => Location): void {
  if (!found) return
  const shown = found.shown.length > 40 ? `${found.shown.slice(0, 39)}…` : found.shown
  const message = `a key that is a list, a mapping or binary data (${shown}) cannot be kept: JSON, and every format evalferry writes, takes text keys only; write the key as text`
  throw new DataError('E_FIELD', message, { ...where(found.start), ...(found.field ? { field: found.field } : {}) })
}

/**
 * Refuses `value`, read from `text`, if it is nested past `MAX_DEPTH`. Each level takes at least
 * two characters of text, so a shorter text is not walked.
 */
function refuseTooDeep(value: unknown, text: string, location: Location): void {
  if (text.length > 2 * MAX_DEPTH && depthOver(value, MAX_DEPTH)) throw new DataError('E_PARSE', `invalid YAML: ${TOO_DEEP}`, location)
}

/** Aliases expanded per document before it is refused as an alias bomb. */
const MAX_ALIASES = 1000

const PARSE_OPTIONS = { uniqueKeys: true, prettyErrors: false, strict: true } as const
/** A `<<: *defaults` key merges the anchored mapping in, as AgentV's loader reads it. */
const MERGE_OPTIONS = { ...PARSE_OPTIONS, merge: true } as const

/** The key a duplicate-key error is about (`: "input" is given twice`), read off the text at its position. */
/** The first line of the parser's message; its stack running out is said as what the text did. */
function parserWords(message: string): string {
  const first = message.split('\n')[0]!
  return first.includes('Maximum call stack size exceeded') ? TOO_DEEP : first
}

function duplicateKey(error: { code: string; pos: [number, number] }, text: string): string {
  if (error.code !== 'DUPLICATE_KEY') return ''
  const key = /^\s*("(?:[^"\\]|\\.)*"|'[^']*'|[^:\n]+?)\s*:/.exec(text.slice(error.pos[0]))?.[1]
  return key === undefined ? '' : `: ${JSON.stringify(key.replace(/^["']|["']$/g, ''))} is given twice`
}

/**
 * A small YAML document read whole (a sidecar of file keys); a fault, or a key `__proto__` (see
 * `protoRefused`), is an error at its line in `file`.
 */
export function parseYamlDocument(text: string, file: string): unknown {
  // Keys as datasets write them (a sidecar's description and execution) are read without `yaml`.
  const plain = plainHead(text)
  if (plain !== undefined && hasKeys(plain)) return plain
  const { LineCounter, parseDocument, visit } = yamlPackage()
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { ...MERGE_OPTIONS, lineCounter })
  const error = doc.errors[0]
  if (error) {
    const { line, col } = lineCounter.linePos(error.pos[0])
    throw new DataError('E_PARSE', `invalid YAML: ${parserWords(error.message)}${duplicateKey(error, text)}`, { file, line, column: col })
  }
  refuseTextlessKey(firstTextlessKey(doc.contents, doc, '', text), (offset) => ({ file, line: lineCounter.linePos(offset).line }))
  let value: unknown
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES })
  } catch (e) {
    throw new DataError('E_PARSE', `invalid YAML: ${parserWords((e as Error).message)}`, { file })
  }
  refuseTooDeep(value, text, { file })
  if (hasProtoKey(value)) {
    let at = 0
    visit(doc, {
      Pair(_, pair) {
        if (!isScalar(pair.key) || pair.key.value !== '__proto__') return undefined
        at = pair.key.range?.[0] ?? 0
        return visit.BREAK
      },
    })
    throw new DataError('E_FIELD', protoRefused(), { file, line: lineCounter.linePos(at).line, field: '__proto__' })
  }
  return value
}

/** The names after `*` in a text: the aliases it may hold (or text that looks like them). */
const ALIAS_NAMES = /\*([^\s,[\]{}]+)/g

/** The texts of items that set anchors, kept for the items after them that `yaml` reads (see `ItemAnchors`). */
const ANCHOR_TEXT_CHARS = 16 << 20

/** An item that set anchors: its text, its first line, and the names it set. */
interface AnchorSetter {
  text: string
  line: number
  names: string[]
}

/**
 * The anchors set in a file so far, for the items after them: PyYAML writes `&id001` on a value the
 * first time it meets it and `*id001` each later time, in whichever record that is. The block
 * reader takes each name's value from `values`. `yaml`, which reads an item whole, reads one that
 * uses earlier anchors after the texts of the items that set them. Those texts are kept up to
 * `ANCHOR_TEXT_CHARS`, the least recently used let go first; an alias `yaml` cannot resolve once
 * some were let go is an error that says so.
 */
class ItemAnchors {
  /** Each name's value as the block reader read it, or `LEFT_TO_YAML`. */
  readonly values = new Map<string, unknown>()
  /** Where each name was set last: an item, or the header above the list, which `yaml` reads before every item anyway. */
  private readonly setters = new Map<string, AnchorSetter | 'header'>()
  /** Items whose texts are kept, least recently used first. */
  private readonly kept = new Set<AnchorSetter>()
  private chars = 0
  /** Whether the texts of some items were let go. */
  letGo = false

  get size(): number {
    return this.values.size
  }

  /** The anchors, with their values, that the file's keys above the list set. */
  setAbove(anchors: ReadonlyMap<string, unknown>): void {
    for (const [name, value] of anchors) {
      this.setters.set(name, 'header')
      this.values.set(name, value)
    }
  }

  /** The anchors, with their values, that the item of `text` from `line` set. */
  set(anchors: ReadonlyMap<string, unknown>, text: string, line: number): void {
    if (!anchors.size) return
    const setter: AnchorSetter = { text, line, names: [...anchors.keys()] }
    for (const [name, value] of anchors) {
      this.setters.set(name, setter)
      this.values.set(name, value)
    }
    // An item whose anchors were all set again is kept still: the anchors of items after it may hold its aliases.
    this.kept.add(setter)
    this.chars += setter.text.length
    for (const oldest of this.kept) {
      if (this.chars <= ANCHOR_TEXT_CHARS) break
      this.kept.delete(oldest)
      this.chars -= oldest.text.length
      this.letGo = true
      for (const name of oldest.names) {
        if (this.setters.get(name) !== oldest) continue
        this.setters.delete(name)
        this.values.delete(name)
      }
    }
  }

  /** The items that set these names were used now: they are let go last. */
  touch(names: Iterable<string>): void {
    for (const name of names) {
      const setter = this.setters.get(name)
      if (setter && setter !== 'header' && this.kept.delete(setter)) this.kept.add(setter)
    }
  }

  /**
   * The texts, in file order, of the items that set the anchors `text` may use, and of those their
   * own aliases use; with `all`, of every item kept (an anchor set again later hides the one an
   * earlier item used).
   */
  before(text: string, all: boolean): { text: string; items: number } {
    const wanted = new Set<AnchorSetter>(all ? this.kept : [])
    const sources = [text]
    while (!all && sources.length) {
      for (const [, name] of sources.pop()!.matchAll(ALIAS_NAMES)) {
        const setter = this.setters.get(name!)
        if (setter === undefined || setter === 'header' || wanted.has(setter)) continue
        wanted.add(setter)
        sources.push(setter.text)
      }
    }
    const setters = [...wanted].sort((a, b) => a.line - b.line)
    return { text: setters.map((s) => s.text).join(''), items: setters.length }
  }
}

/** A line that starts a key of the mapping above the record list: `name:`, `description: …`. */
const HEAD_KEY = /^[A-Za-z_$][\w$.-]*:(?: |$)/
/** A line of a head that holds nothing: blank, or a comment. */
const EMPTY_LINE = /^[ \t]*(?:#.*)?$/

/**
 * The keys above a file's record list (its head), read without `yaml` where they are written as
 * datasets write them: each key at the start of its line, the values under it indented, nothing
 * the block reader leaves to `yaml`. The head is read as a list item: `- ` before its first key,
 * its lines indented by two, which is the same mapping one level in. Undefined where `yaml` must
 * judge (any other line at the start, anchors or aliases, a merge key, a key `yaml` names apart
 * from its value, `__proto__`).
 */
export function plainHead(head: string): JsonObject | undefined {
  if (head.search(LONE_CR) !== -1 || head.includes('<<')) return undefined
  // Lines without their CR, where they end in CRLF; the item keeps it.
  const lines = head.split('\n')
  const bare = lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line))
  let first = 0
  while (first < lines.length && EMPTY_LINE.test(bare[first]!)) first++
  if (first === lines.length) return {}
  if (!HEAD_KEY.test(bare[first]!)) return undefined
  const item: string[] = []
  for (let k = first; k < lines.length; k++) {
    const line = bare[k]!
    if (line !== '' && line[0] !== ' ' && line[0] !== '#' && !HEAD_KEY.test(line)) return undefined
    item.push(line === '' ? lines[k]! : `${k === first ? '- ' : '  '}${lines[k]}`)
  }
  const read = readBlockItem(item.join('\n'))
  if (!read || read.anchors || read.used || !isJsonObject(read.value)) return undefined
  // A key read as null is named '' by a mapping's values and 'null' by the head's keys (see `keyOf`).
  if (Object.hasOwn(read.value, '') || hasProtoKey(read.value)) return undefined
  return read.value
}

/** `yaml`'s words for an alias it finds no anchor for, and the alias's name. */
const UNRESOLVED = /Unresolved alias [^:]*: (.*)$/

/** The anchors set on `node` and inside it, each left to `yaml`. */
function anchorsIn(node: Node): Map<string, unknown> {
  const anchors = new Map<string, unknown>()
  yamlPackage().visit(node, {
    Node(_, inner) {
      if (inner.anchor) anchors.set(inner.anchor, LEFT_TO_YAML)
    },
  })
  return anchors
}

/** Cut list items are parsed this many, or this many characters, at a time. */
const BATCH_ITEMS = 8
const BATCH_CHARS = 16 << 10

/** `scanLine`: the line needs the whole-document parser. */
const UNSURE = -2
/** `scanLine`: the line holds nothing that spans lines. */
const DONE = -1

const BLOCK_HEADER = /^[|>](?:[1-9][+-]?|[+-][1-9]?)?(?:[ \t]+#.*)?[ \t]*$/
const DOCUMENT_MARKER = /^(?:---|\.\.\.)(?:[ \t]|$)/
const LEADING_MARKER = /^---[ \t]*(?:#.*)?$/
/** A CR that is not half of a CRLF. */
const LONE_CR = /\r(?!\n)/g
/** The spaces and tabs a line starts with. */
const TABS = /^[ \t]*/
const KEY_LINE = /^("[^"\\]*"|'(?:[^']|'')*'|[^\s'"#][^#]*?)[ \t]*:(?:[ \t]+#.*)?[ \t]*$/

/** The index after the quoted scalar that opens at `i`, or -1 when it goes on past the line. */
function skipQuoted(line: string, i: number): number {
  const quote = line[i]
  for (let j = i + 1; j < line.length; j++) {
    const c = line[j]
    if (quote === '"' && c === '\\') j++
    else if (c === quote) {
      if (quote === "'" && line[j + 1] === "'") j++
      else return j + 1
    }
  }
  return -1
}

/** The index after the flow collection that opens at `i`, or -1 when it goes on past the line or holds an anchor, alias or tag. */
function skipFlow(line: string, i: number): number {
  let depth = 0
  while (i < line.length) {
    const c = line[i]!
    if (c === ' ' || c === ',' || c === ':') i++
    else if (c === '[' || c === '{') {
      depth++
      i++
    } else if (c === ']' || c === '}') {
      i++
      if (--depth === 0) return i
    } else if (c === '"' || c === "'") {
      i = skipQuoted(line, i)
      if (i < 0) return -1
    } else if ('#&*!?%@`|>\t'.includes(c)) return -1
    else {
      for (; i < line.length; i++) {
        const d = line[i]!
        if (d === ',' || d === '[' || d === ']' || d === '{' || d === '}') break
        if (d === ':' && (i + 1 === line.length || ' ,[]{}'.includes(line[i + 1]!))) break
        if (d === ' ' && line[i + 1] === '#') break
      }
    }
  }
  return -1
}

/**
 * What `scanLine` saw besides its answer: a comment, or a quoted text or flow collection that goes
 * on past the line (whose next lines it does not scan).
 */
const scanned = { comment: false, continues: false }

/**
 * What one line outside block scalars holds, from its indentation `i` on: `UNSURE`, `DONE`, or
 * the indentation a block scalar it opens must exceed (the column of its key, `-`, `?` or `:`).
 * `explicitKeys`: a `? ` or `: ` indicator (PyYAML writes a key of 128 characters or more as
 * `? key`, its value on the next line as `: value`) opens a node as `- ` does; else it is unsure.
 */
function scanLine(line: string, i: number, explicitKeys = false): number {
  scanned.comment = scanned.continues = false
  let node = i
  for (;;) {
    while (line[i] === ' ') i++
    const c = line[i]
    if (c === undefined || c === '#') {
      scanned.comment = c === '#'
      return DONE
    }
    const next = line[i + 1]
    const spaced = next === undefined || next === ' '
    if ((c === '-' || c === '?' || c === ':') && next === '\t') return UNSURE
    if ((c === '-' || (explicitKeys && (c === '?' || c === ':'))) && spaced) {
      node = i++
      continue
    }
    if ((c === '?' || c === ':') && spaced) return UNSURE
    if (c === '&' || c === '*' || c === '!') {
      // An anchor or a tag is a property of the node after it; an alias is a node of its own, and ends the line.
      const end = line.slice(i).search(/[\s,[\]{}]|$/) + i
      if (end === i + 1) return UNSURE
      i = end
      if (c !== '*') continue
      while (line[i] === ' ') i++
      if (line[i] === '#') scanned.comment = true
      return i === line.length || line[i] === '#' ? DONE : UNSURE
    }
    if ('%@`\t'.includes(c)) return UNSURE
    if (c === '|' || c === '>') {
      if (!BLOCK_HEADER.test(line.slice(i))) return UNSURE
      scanned.comment = line.includes('#', i)
      return node
    }
    const start = i
    if (c === '"' || c === "'") i = skipQuoted(line, i)
    else if (c === '[' || c === '{') i = skipFlow(line, i)
    else {
      // A plain scalar may hold anything but `: ` (a key) and ` #` (a comment).
      for (; ; i++) {
        if (i >= line.length) return DONE
        const d = line[i]
        if (d === ':') {
          const after = line[i + 1]
          if (after === undefined || after === ' ') break
          if (after === '\t') return UNSURE
        } else if ((d === ' ' || d === '\t') && line[i + 1] === '#') {
          scanned.comment = true
          return DONE
        }
      }
      node = start
      i++
      continue
    }
    // A quoted scalar or flow collection that goes on past the line (PyYAML folds long text so)
    // goes on in the lines indented past its key, as a block scalar does; the parser judges it.
    if (i < 0) {
      scanned.continues = true
      return node
    }
    while (line[i] === ' ') i++
    if (i >= line.length || line[i] === '#') {
      scanned.comment = line[i] === '#'
      return DONE
    }
    if (line[i] === ':' && (line[i + 1] === undefined || line[i + 1] === ' ')) {
      node = start
      i++
      continue
    }
    return UNSURE
  }
}

/**
 * 1-based lines and columns of offsets in a text, as `LineCounter.linePos` gives them, counted
 * when asked for: offsets asked for in order are counted on from the last one.
 */
class Lines {
  private offset = 0
  private line = 1
  private start = 0

  constructor(private readonly text: string) {}

  at(offset: number): { line: number; col: number } {
    if (offset < this.offset) {
      this.offset = this.start = 0
      this.line = 1
    }
    const text = this.text
    for (let i = text.indexOf('\n', this.offset); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
      this.line++
      this.start = i + 1
    }
    this.offset = offset
    return { line: this.line, col: offset - this.start + 1 }
  }
}

/**
 * The offset where the field at `path` is written in a record's node: its key in a mapping, its
 * item in a list; undefined when the path leads nowhere in it.
 */
function nodeAt(node: unknown, path: (string | number)[]): number | undefined {
  let at: number | undefined
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => String(isScalar(p.key) ? p.key.value : p.key) === String(step))
      if (!pair) return undefined
      at = (pair.key as Node | null)?.range?.[0]
      node = pair.value
    } else if (isSeq(node) && typeof step === 'number') {
      node = node.items[step]
      at = (node as Node | undefined)?.range?.[0]
    } else return undefined
    if (at === undefined) return undefined
  }
  return at
}

/**
 * `SourceRecord.fieldLine` of an item parsed from `source` (`prefix` and text from file line
 * `line`). Made here, where it holds the item's node and text but not the parse's document.
 */
function fieldLines(node: Node, source: string, prefixLength: number, prefixLines: number, line: number): (field: string) => number | undefined {
  return (field) => {
    const at = nodeAt(node, fieldPath(field))
    if (at === undefined) return undefined
    const sourceLine = countNewlines(source.slice(0, at)) + 1
    return at < prefixLength ? sourceLine : sourceLine - prefixLines - 1 + line
  }
}

/** `SourceRecord.fieldLine` of a list item read without `yaml`, whose text (from file line `line`) `yaml` reads when asked. */
function itemFieldLine(text: string, line: number, field: string): number | undefined {
  const list = yamlPackage().parseDocument(text, PARSE_OPTIONS).contents
  return isSeq(list) ? fieldLines(list.items[0] as Node, text, 0, 0, line)(field) : undefined
}

export async function* readYaml(source: ByteSource, options: ReadOptions): AsyncGenerator<SourceRecord> {
  const decoder = new StringDecoder('utf8')
  const breaks = new LineBreaks()
  const cutter = new ListCutter(options)
  let started = false
  for await (const chunk of source) {
    let text = breaks.of(typeof chunk === 'string' ? chunk : decoder.write(chunk))
    if (!started && text) {
      started = true
      // `yaml` counts a byte-order mark as a column and refuses one before a bare list's `-`.
      if (text.startsWith('\uFEFF')) text = text.slice(1)
    }
    try {
      cutter.feed(text)
    } catch (error) {
      // The records before the one that failed are still delivered, in order.
      yield* cutter.take()
      throw error
    }
    yield* cutter.take()
  }
  const tail = breaks.end(decoder.end())
  if (tail) cutter.feed(tail)
  cutter.lastLine()
  yield* cutter.take()
  const rest = cutter.finish()
  yield* cutter.take()
  if (rest) yield* restRecords(rest, options)
}

/**
 * A lone CR breaks a line in YAML (PyYAML reads it so; `yaml` does not), and every break in a
 * value reads as LF: each becomes an LF. A CR that ends a chunk waits for the next character.
 */
class LineBreaks {
  private heldCr = false

  of(text: string): string {
    if (this.heldCr) {
      this.heldCr = false
      text = '\r' + text
    }
    if (!text.includes('\r')) return text
    if (text.endsWith('\r')) {
      this.heldCr = true
      text = text.slice(0, -1)
    }
    return text.replace(LONE_CR, '\n')
  }

  /** The last text, and the CR held, which nothing follows. */
  end(text: string): string {
    const last = this.of(text)
    return last + (this.heldCr ? '\n' : '')
  }
}

type ParsedDocument = ReturnType<ReturnType<typeof yamlPackage>['parseDocument']>

/**
 * `prefix + text` as `yaml` parses it, where `prefix` starts the file and `text` starts on file
 * line `line`, with the file's lines of its offsets and its nodes as JSON data. `many`: the text
 * holds many records, whose lines are looked up in an index of line starts; one list item's few
 * lines are counted when asked for instead, which costs less than the index. `check`: the
 * parser's first error is thrown.
 */
class ParsedYaml {
  readonly doc: ParsedDocument
  readonly source: string
  private readonly prefixLength: number
  private readonly prefixLines: number
  private readonly lineCounter: LineCounter | undefined
  private readonly lines: Lines | undefined
  /** Integers too long for a number are read as bigints, then kept as their digits (see plainValues). */
  private readonly long: boolean
  private readonly binary: boolean
  /** A double-quoted key may write it with escapes (`"\x5f_proto__"`). */
  private readonly mayHoldProto: boolean

  constructor(
    private readonly file: string,
    prefix: string,
    text: string,
    private readonly line: number,
    many = true,
    check = true,
  ) {
    const source = (this.source = prefix + text)
    const { LineCounter, parseDocument } = yamlPackage()
    this.lineCounter = many ? new LineCounter() : undefined
    this.long = LONG_DIGITS.test(source)
    // Merge keys, which cost a test of every plain scalar, only where the text can hold one.
    const base = source.includes('<<') ? MERGE_OPTIONS : PARSE_OPTIONS
    const options = this.long ? { ...base, intAsBigInt: true } : base
    this.doc = parseDocument(source, this.lineCounter ? { ...options, lineCounter: this.lineCounter } : options)
    this.prefixLength = prefix.length
    this.prefixLines = countNewlines(prefix)
    this.lines = this.lineCounter ? undefined : new Lines(source)
    const firstError = this.doc.errors[0]
    if (firstError && check) {
      // The parser's own words for this one speak to a programmer.
      const what = firstError.code === 'MULTIPLE_DOCS' ? 'the file holds several documents (--- between them); a dataset is one' : parserWords(firstError.message)
      throw new DataError('E_PARSE', `invalid YAML: ${what}${duplicateKey(firstError, source)}`, this.where(firstError.pos[0]))
    }
    this.binary = source.includes('!!binary')
    this.mayHoldProto = source.includes('__proto__') || source.includes('\\')
  }

  /** The file's line and column of an offset in the source. */
  readonly where = (offset: number | undefined): { file: string; line: number; column: number } => {
    const pos = this.lineCounter ? this.lineCounter.linePos(offset ?? 0) : this.lines!.at(offset ?? 0)
    return { file: this.file, line: (offset ?? 0) < this.prefixLength ? pos.line : pos.line - this.prefixLines - 1 + this.line, column: pos.col }
  }

  /** A node as JSON data; what that changed (a long integer kept as text) goes to `notes`. */
  readonly toJs = (node: unknown, notes?: string[], field = ''): unknown => {
    // A key with no value (`? version`) has no node.
    if (node === null || node === undefined) return null
    refuseTextlessKey(firstTextlessKey(node, this.doc as Document, field, this.source), this.where)
    let value: unknown
    try {
      value = (node as Node).toJS ? (node as Node).toJS(this.doc as Document, { maxAliasCount: MAX_ALIASES }) : node
    } catch (error) {
      throw new DataError('E_PARSE', `invalid YAML: ${parserWords((error as Error).message)}`, this.where((node as Node).range?.[0]))
    }
    refuseTooDeep(value, this.source, this.where((node as Node).range?.[0]))
    return this.long || this.binary ? plainValues(value, notes ?? []) : value
  }

  /** The record of a list item's node, numbered `index`. */
  record(node: Node, index: number): SourceRecord {
    const notes: string[] = []
    const value = this.toJs(node, notes)
    if (this.mayHoldProto && hasProtoKey(value)) throw new DataError('E_FIELD', protoRefused(), { ...this.where(node.range?.[0]), field: '__proto__' })
    const read: SourceRecord = { value, line: this.where(node.range?.[0]).line, index }
    read.fieldLine = fieldLines(node, this.source, this.prefixLength, this.prefixLines, this.line)
    if (notes.length) read.warnings = notes
    return read
  }
}

function keyOf(key: unknown): string {
  return String((key as Node & { value?: unknown })?.toJSON?.() ?? key)
}

/** A header key's value; what reading it changed is told at its line, in `warnings`. */
function headerValue(key: string, node: Node, parsed: ParsedYaml, warnings: ReadOptions['headerWarnings']): unknown {
  const notes: string[] = []
  const value = parsed.toJs(node, notes, key)
  if (key === '__proto__' || hasProtoKey(value)) throw new DataError('E_FIELD', protoRefused(), { ...parsed.where(node?.range?.[0]), field: key })
  for (const message of notes) warnings?.push({ message, line: parsed.where(node?.range?.[0]).line, field: key })
  return value
}

/**
 * The first comment's line (see `ReadOptions.comments`): most are told by the lines the cutter
 * scans; a `#` in the lines of a quoted text or flow collection that goes on past its first line,
 * which it does not scan, is left to `yaml`'s lexer once the head or item holding it is cut.
 */
class FirstComment {
  /** The last line scanned opens a text or collection that goes on past it. */
  private continues = false
  /** A `#` in a line not scanned, for `lex` to tell. */
  unscannedHash = false

  constructor(private readonly comments: { line?: number } | undefined) {}

  at(line: number): void {
    if (this.comments && this.comments.line === undefined) this.comments.line = line
  }

  /** A line the cutter does not scan, inside what a scanned one opened. */
  unscanned(text: string): void {
    if (this.continues && this.comments && text.includes('#')) this.unscannedHash = true
  }

  /** What a scanned line, `line` of the file, told of comments and of lines it does not scan. */
  afterScan(text: string, line: number): void {
    if (scanned.comment) this.at(line)
    this.continues = scanned.continues
    this.unscanned(text)
  }

  /** The first comment of `text`, which starts on `line`, unless one was told before it (a line of it the cutter scanned may have been). */
  lex(text: string, line: number): void {
    this.unscannedHash = false
    const comments = this.comments
    if (!comments || (comments.line !== undefined && comments.line < line) || !text.includes('#')) return
    let previous = ''
    const { CST, Lexer } = yamlPackage()
    for (const token of new Lexer().lex(text)) {
      if (token[0] === '#' && previous !== CST.SCALAR) {
        comments.line = Math.min(line, comments.line ?? line)
        return
      }
      line += countNewlines(token)
      previous = token
    }
  }
}

/** Whether a line's content, at `indent`, starts a list item. */
function isDash(text: string, indent: number): boolean {
  return text[indent] === '-' && (text.length === indent + 1 || text[indent + 1] === ' ')
}

/** What the cutter leaves to the whole-document parser (see `restRecords`). */
interface Rest {
  /** Read already: the keys above the list and its key, and the items that set the anchors the text may use. */
  prefix: string
  text: string
  /** The file line `text` starts on. */
  line: number
  /** `whole`: the file from its start; `tail`: the list from the item the cutter was unsure of on; `after`: the keys after the list. */
  kind: 'whole' | 'tail' | 'after'
  listKey: string | undefined
  /** Items of the list in `prefix`, for their anchors, read already. */
  setters: number
  /** Records read before the text. */
  index: number
}

/**
 * Cuts a YAML file, line by line, into the keys above its record list and the list's items, and
 * reads each item alone (several at once where they read so). From a line it is not sure of, the
 * rest of the file is kept for the whole-document parser (`finish`).
 */
class ListCutter {
  private readonly file: string
  private readonly recordKeys: string[]
  private readonly header: JsonObject
  private readonly headerWarnings: ReadOptions['headerWarnings']
  private readonly comments: FirstComment
  /** Records read, for the reader to hand on. */
  private out: SourceRecord[] = []
  // `pre`: before the record list, whose text is kept; `list`: inside it, item by item; `raw`: the rest is kept and parsed whole.
  private mode = 'pre' as 'pre' | 'list' | 'raw'
  private readonly carry = new PendingLine()
  private lineNo = 0
  /** The indentation the lines of an open block scalar (or a text going on over lines) are deeper than; -1: none. */
  private block = -1
  private index = 0
  private head = ''
  private sawContent = false
  private keyLine: { text: string; key: string } | undefined
  private held = ''
  private prefix = ''
  private listKey: string | undefined
  private keyIndent = -1
  private itemIndent = 0
  private itemPrefix = ''
  private item = ''
  private itemLine = 0
  // Items cut but not parsed yet: a few are parsed together, which costs less than one by one.
  private batch: { text: string; line: number }[] = []
  private batchChars = 0
  private raw = ''
  private rawLine = 1
  private rawKind: Rest['kind'] = 'whole'
  private readonly anchors = new ItemAnchors()
  /** Items of the whole-document parse's list put before the rest for their anchors, read already. */
  private rawSetters = 0

  constructor(options: ReadOptions) {
    this.file = options.file
    this.recordKeys = options.recordKeys
    this.header = options.header
    this.headerWarnings = options.headerWarnings
    this.comments = new FirstComment(options.comments)
  }

  /** The records read since the last call. */
  take(): SourceRecord[] {
    const out = this.out
    if (out.length) this.out = []
    return out
  }

  private parse(prefix: string, text: string, line: number, many?: boolean, check?: boolean): ParsedYaml {
    return new ParsedYaml(this.file, prefix, text, line, many, check)
  }

  /** The record of a node `yaml` read, numbered next. */
  private recordOf(parsed: ParsedYaml, node: Node): SourceRecord {
    const record = parsed.record(node, this.index)
    this.index++
    return record
  }

  // A method, so that TypeScript does not keep `mode` narrowed across calls that change it.
  private isRaw(): boolean {
    return this.mode === 'raw'
  }

  feed(chunk: string): void {
    if (this.mode === 'raw') {
      this.raw += chunk
      return this.checkRaw()
    }
    let start = 0
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      const end = chunk.slice(start, nl + 1)
      this.onLine(this.carry.take(end))
      start = nl + 1
      if (this.isRaw()) {
        this.raw += chunk.slice(start)
        return this.checkRaw()
      }
    }
    const carry = this.carry
    carry.add(start ? chunk.slice(start) : chunk)
    if (this.mode === 'pre') {
      if (this.head.length + this.held.length + (this.keyLine?.text.length ?? 0) + carry.length > MAX_RECORD_CHARS) throw this.documentTooLong(this.lineNo + 1)
    } else if ((carry.startsWith(this.itemPrefix) ? 0 : this.item.length) + carry.length > MAX_RECORD_CHARS) throw this.itemTooLong(this.lineNo + 1)
  }

  /** The file's last line, which no line end closed. */
  lastLine(): void {
    if (this.mode === 'raw' || !this.carry.length) return
    this.onLine(this.carry.take())
    if (this.isRaw()) this.checkRaw()
  }

  /** Ends the list at the end of the file; what is left for the whole-document parser, if anything. */
  finish(): Rest | undefined {
    if (this.mode === 'list' && !this.finishItem(true)) this.unsure('')
    if (this.mode === 'pre') this.unsure('')
    if (!this.isRaw()) return undefined
    this.comments.lex(this.raw, this.rawLine)
    const rest: Rest = { prefix: this.prefix, text: this.raw, line: this.rawLine, kind: this.rawKind, listKey: this.listKey, setters: this.rawSetters, index: this.index }
    this.raw = ''
    return rest
  }

  private checkRaw(): void {
    if (this.prefix.length + this.raw.length > MAX_RECORD_CHARS) throw this.documentTooLong(this.rawLine + countNewlines(this.raw))
  }

  private documentTooLong(line: number): DataError {
    return new DataError('E_PARSE', `the YAML document is longer than ${MAX_RECORD_CHARS / (1024 * 1024)} MiB; YAML is read whole, so write datasets this large as JSON Lines`, { file: this.file, line })
  }

  private itemTooLong(line: number): DataError {
    return new DataError('E_PARSE', `the YAML document is longer than ${MAX_RECORD_CHARS / (1024 * 1024)} MiB in one list item; evalferry holds one record in memory at a time and refuses larger ones`, { file: this.file, line })
  }

  private onLine(line: string): void {
    this.lineNo++
    let text = line.endsWith('\n') ? line.slice(0, -1) : line
    if (text.endsWith('\r')) text = text.slice(0, -1)
    let indent = 0
    while (text[indent] === ' ') indent++
    const blank = /^[ \t]*$/.test(text)
    // The line ends a block scalar, or a quoted text or flow collection over several lines.
    const ending = this.block >= 0
    if (ending) {
      if (blank || indent > this.block) {
        this.comments.unscanned(text)
        if (this.mode === 'pre') this.head += line
        else this.item += line
        return
      }
      this.block = -1
    }
    // The line that starts the list is its first item's too.
    if (this.mode === 'pre' && !this.lineBeforeList(line, text, indent, blank)) return
    this.lineInList(line, text, indent, blank, ending)
  }

  /** A line above the record list; true when it starts the list. */
  private lineBeforeList(line: string, text: string, indent: number, blank: boolean): boolean {
    if (blank || text[indent] === '#') {
      if (!blank) this.comments.at(this.lineNo)
      if (this.keyLine) this.held += line
      else this.head += line
      return false
    }
    if (text[indent] === '\t') return this.unsure(line)
    if (indent === 0 && (DOCUMENT_MARKER.test(text) || text[0] === '%')) {
      if (this.sawContent || !LEADING_MARKER.test(text)) return this.unsure(line)
      if (text.includes('#')) this.comments.at(this.lineNo)
      this.head += line
      return false
    }
    if (isDash(text, indent) && (this.keyLine || !this.sawContent)) return this.beginList(line, indent)
    this.headLine(line, text, indent)
    return false
  }

  /** The first item of the list, after its key or at the top: the keys above it are read. */
  private beginList(line: string, indent: number): boolean {
    if (this.keyLine) {
      if (!this.startList()) return this.unsure(line)
      this.prefix = this.head + this.keyLine.text
      this.listKey = this.keyLine.key
      this.keyIndent = 0
    } else {
      this.header[LIST_KEY] = ''
      this.prefix = ''
      this.keyIndent = -1
    }
    this.head = this.held = ''
    this.keyLine = undefined
    this.mode = 'list'
    this.itemIndent = indent
    this.itemPrefix = ' '.repeat(indent) + '-'
    return true
  }

  /** A line of the keys above the list, or the line of a record key that may hold it. */
  private headLine(line: string, text: string, indent: number): void {
    if (this.keyLine) {
      this.head += this.keyLine.text + this.held
      this.keyLine = undefined
      this.held = ''
    }
    if (indent > 0 && !this.sawContent) return void this.unsure(line)
    this.sawContent = true
    const key = indent === 0 ? KEY_LINE.exec(text)?.[1] : undefined
    const name = key?.startsWith('"') ? key.slice(1, -1) : key?.startsWith("'") ? key.slice(1, -1).replaceAll("''", "'") : key
    if (name !== undefined && this.recordKeys.includes(name)) {
      if (text.includes('#', key!.length)) this.comments.at(this.lineNo)
      this.keyLine = { text: line, key: name }
      return
    }
    const scan = scanLine(text, indent)
    if (scan === UNSURE) return void this.unsure(line)
    this.comments.afterScan(text, this.lineNo)
    this.head += line
    this.block = scan
  }

  /** A line inside the list: of the item being cut, or the start of the next, or the end of the list. */
  private lineInList(line: string, text: string, indent: number, blank: boolean, ending: boolean): void {
    if (blank || text[indent] === '#') {
      if (!blank) this.comments.at(this.lineNo)
      this.item += line
      return
    }
    if (indent === 0 && (DOCUMENT_MARKER.test(text) || text[0] === '%')) return void this.unsure(line)
    if (text[indent] === '\t') {
      // Tabs after the item's indentation (a plain text's next line, or what `yaml` refuses): the
      // line is the item's, which `yaml` reads alone, unless it opens what goes on past it, or ends
      // what did (where `yaml` may read the tab as indentation, whole, though it refuses that alone).
      if (ending || indent <= this.itemIndent || scanLine(text, TABS.exec(text)![0].length, true) !== DONE) return void this.unsure(line)
      this.comments.afterScan(text, this.lineNo)
      this.item += line
      return
    }
    const dash = isDash(text, indent)
    if (indent === this.itemIndent && dash) {
      if (!this.finishItem()) return void this.unsure(line)
      this.itemLine = this.lineNo
    } else if (indent <= this.keyIndent && !dash) {
      if (!this.finishItem(true)) return void this.unsure(line)
      // The list has ended; the keys after it are kept and parsed at the end, after the list key.
      this.raw = line
      // A value for the list key: after an empty one, `yaml` places a duplicate key's error on the line above.
      this.prefix += '  []\n'
      this.rawKind = 'after'
      this.rawLine = this.lineNo
      this.mode = 'raw'
      return
    } else if (indent <= this.itemIndent) return void this.unsure(line)
    // The item holding an explicit key is read by `yaml`, alone.
    const scan = scanLine(text, indent, true)
    if (scan === UNSURE) return void this.unsure(line)
    this.comments.afterScan(text, this.lineNo)
    this.block = scan
    this.item += line
    if (this.item.length > MAX_RECORD_CHARS) throw this.itemTooLong(this.lineNo)
  }

  /** Hands the rest of the file to the whole-document parser, from the start or from the pending item. */
  private unsure(line: string): false {
    if (this.mode === 'pre') {
      this.raw = this.head + (this.keyLine?.text ?? '') + this.held + line
      this.rawKind = 'whole'
      this.prefix = ''
      this.rawLine = 1
    } else {
      // Items before are records whatever comes; from the first that does not read alone on, the rest is parsed whole.
      const rest = this.flushBatch()
      this.raw = (rest?.text ?? '') + this.item + line
      this.rawKind = 'tail'
      this.rawLine = rest ? rest.line : this.item ? this.itemLine : this.lineNo
      // After the items that set the anchors it may use.
      const setters = this.anchors.before('', true)
      this.prefix += setters.text
      this.rawSetters = setters.items
    }
    this.head = this.held = this.item = ''
    this.mode = 'raw'
    return false
  }

  /**
   * Ends the pending item; its batch is parsed once large enough, or with `last`. False when an
   * item does not read as one list item: it and the items after it are then the pending item.
   */
  private finishItem(last = false): boolean {
    if (this.item) {
      if (this.comments.unscannedHash) this.comments.lex(this.item, this.itemLine)
      this.batch.push({ text: this.item, line: this.itemLine })
      this.batchChars += this.item.length
      this.item = ''
    }
    if (!last && this.batch.length < BATCH_ITEMS && this.batchChars < BATCH_CHARS) return true
    const rest = this.flushBatch()
    if (!rest) return true
    this.item = rest.text
    this.itemLine = rest.line
    return false
  }

  /**
   * Parses the items cut so far, several at once when they read as that many list items, else
   * each alone (which names a bad item's own error). Returns the text from the first item that
   * does not read as one list item on, with its line, for the whole-document parser.
   */
  private flushBatch(): { text: string; line: number } | undefined {
    let items = this.batch
    this.batch = []
    this.batchChars = 0
    const anchors = this.anchors
    // Items in the YAML that datasets are written in are read without `yaml`; from the first that is not, the rest go to it.
    let read = 0
    for (const { text, line } of items) {
      const item = readBlockItem(text, anchors.size ? anchors.values : undefined)
      if (!item) break
      if (item.used) anchors.touch(item.used)
      if (item.anchors) anchors.set(item.anchors, text, line)
      this.out.push({ value: item.value, line: line + item.line, index: this.index++, fieldLine: (field) => itemFieldLine(text, line, field) })
      read++
    }
    if (read === items.length) return undefined
    if (read) items = items.slice(read)
    if (items.length > 1 && !anchors.size) {
      const parsed = this.parse('', items.map((i) => i.text).join(''), items[0]!.line, false, false)
      const list = parsed.doc.contents
      if (!parsed.doc.errors.length && isSeq(list) && list.items.length === items.length) {
        for (const [k, node] of list.items.entries()) {
          this.out.push(this.recordOf(parsed, node as Node))
          this.keepAnchors(node as Node, items[k]!)
        }
        return undefined
      }
    }
    for (const [k, { text, line }] of items.entries()) {
      const node = anchors.size && text.includes('*') ? this.afterAnchors(text, line, false) : this.alone(text, line)
      if (!node) return { text: items.slice(k).map((i) => i.text).join(''), line }
      this.out.push(node.record)
      this.keepAnchors(node.node, { text, line })
    }
    return undefined
  }

  /** The anchors an item `yaml` read sets, for the items after it. */
  private keepAnchors(node: Node, item: { text: string; line: number }): void {
    if (item.text.includes('&')) this.anchors.set(anchorsIn(node), item.text, item.line)
  }

  /** An item `yaml` reads alone; undefined when it does not read as one list item. */
  private alone(text: string, line: number): { node: Node; record: SourceRecord } | undefined {
    const parsed = this.parse('', text, line, false)
    const list = parsed.doc.contents
    if (!isSeq(list) || list.items.length !== 1) return undefined
    const node = list.items[0] as Node
    return { node, record: this.recordOf(parsed, node) }
  }

  /**
   * An item `yaml` reads after the header and the items that set the anchors it uses (with `all`,
   * every item kept: see `ItemAnchors.before`); undefined when it does not read as one list item.
   */
  private afterAnchors(text: string, line: number, all: boolean): { node: Node; record: SourceRecord } | undefined {
    const setters = this.anchors.before(text, all)
    const parsed = this.parse(this.prefix + setters.text, text, line, false)
    const contents = parsed.doc.contents
    const list = isMap(contents) ? contents.items.find((pair) => keyOf(pair.key) === this.listKey)?.value : contents
    if (!isSeq(list) || list.items.length !== setters.items + 1) return undefined
    const node = list.items[setters.items] as Node
    try {
      return { node, record: this.recordOf(parsed, node) }
    } catch (error) {
      const unresolved = error instanceof DataError ? UNRESOLVED.exec(error.message) : null
      if (unresolved && !all) return this.afterAnchors(text, line, true)
      if (unresolved && this.anchors.letGo) {
        const message = `the alias *${unresolved[1]} names no anchor set in the last ${ANCHOR_TEXT_CHARS >> 20} MiB of items that set anchors; evalferry keeps no more of a file's anchors`
        throw new DataError('E_PARSE', message, (error as DataError).location)
      }
      throw error
    }
  }

  /** Parses the header keys before the list; false when the whole document must be parsed instead. */
  private startList(): boolean {
    const head = this.head
    const listKey = this.keyLine!.key
    if (this.comments.unscannedHash) this.comments.lex(head, 1)
    // The list key given twice, or an earlier record list, is for the whole-document parser to judge.
    const wholeDocumentKey = (key: string, isList: boolean): boolean => key === listKey || (this.recordKeys.includes(key) && isList)
    const plain = plainHead(head)
    if (plain) {
      if (Object.entries(plain).some(([key, value]) => wholeDocumentKey(key, Array.isArray(value)))) return false
      Object.assign(this.header, plain)
      this.header[LIST_KEY] = listKey
      return true
    }
    const parsed = this.parse('', head, 1)
    const contents = parsed.doc.contents
    const pairs: [string, unknown][] = []
    // Comments alone, or a leading `---`, read as no node or as a null scalar.
    if (contents !== null && !(isScalar(contents) && contents.value === null)) {
      if (!isMap(contents)) return false
      for (const pair of contents.items) {
        refuseTextlessKey(textlessKey(pair, parsed.doc as Document, '', head), parsed.where)
        const key = keyOf(pair.key)
        if (wholeDocumentKey(key, isSeq(pair.value))) return false
        pairs.push([key, headerValue(key, pair.value as Node, parsed, this.headerWarnings)])
      }
    }
    for (const [key, value] of pairs) this.header[key] = value as JsonObject[string]
    this.header[LIST_KEY] = listKey
    // Anchors above the list, for its items (`defaults: &defaults`, then `<<: *defaults` in each).
    if (head.includes('&')) this.anchors.setAbove(anchorsAbove(parsed))
    return true
  }
}

/** The anchors a document sets, each as its value where it holds no alias, else left to `yaml`. */
function anchorsAbove(parsed: ParsedYaml): Map<string, unknown> {
  const { visit } = yamlPackage()
  const set = new Map<string, unknown>()
  visit(parsed.doc, {
    Node(_, node) {
      if (!node.anchor) return
      let plain = true
      visit(node, { Alias: () => void (plain = false) })
      set.set(node.anchor, plain ? parsed.toJs(node) : LEFT_TO_YAML)
    },
  })
  return set
}

/** The records of what the cutter left to the whole-document parser. */
function* restRecords(rest: Rest, options: ReadOptions): Generator<SourceRecord> {
  const { file, header } = options
  const parsed = new ParsedYaml(file, rest.prefix, rest.text, rest.line)
  const contents = parsed.doc.contents
  const whole = rest.kind === 'whole'
  if (contents === null) {
    if (whole) throw new DataError('E_PARSE', 'the file is empty; expected a YAML mapping or list', { file, line: 1 })
    return
  }
  let items: Node[] | undefined
  if (isSeq(contents)) {
    items = contents.items as Node[]
    // An empty list key marks a bare list (an included case file), so a writer can keep it bare.
    if (whole) header[LIST_KEY] = ''
  } else if (isMap(contents)) {
    items = listOfMapping(contents, parsed, rest, options)
    if (whole && items === undefined) {
      yield listlessMapping(contents, parsed, options)
      return
    }
  } else {
    throw new DataError('E_PARSE', 'expected a YAML mapping or list at the top of the document', parsed.where(0))
  }
  let index = rest.index
  for (const node of (items ?? []).slice(rest.setters)) yield parsed.record(node, index++)
}

/** The record list of a top-level mapping, if it has one; its other keys go to the header. */
function listOfMapping(contents: YAMLMap, parsed: ParsedYaml, rest: Rest, options: ReadOptions): Node[] | undefined {
  const { recordKeys, header } = options
  let items: Node[] | undefined
  for (const pair of contents.items) {
    refuseTextlessKey(textlessKey(pair, parsed.doc as Document, '', parsed.source), parsed.where)
    const key = keyOf(pair.key)
    if (((pair.key as Node | null)?.range?.[0] ?? 0) < rest.prefix.length) {
      // Read already, before the list; only the list's own items, from the pending one on, are new.
      if (rest.kind === 'tail' && key === rest.listKey && isSeq(pair.value)) items = pair.value.items as Node[]
    } else if (recordKeys.includes(key) && isSeq(pair.value)) {
      const first = rest.kind === 'whole' ? (header[LIST_KEY] as string | undefined) : rest.listKey
      if (first !== undefined) {
        // AgentV runs the cases of one list; which one the file means, only its author knows.
        throw new DataError('E_PARSE', `a second list of cases, after "${first}": a file holds one; move these cases into "${first}" or into a file of their own`, {
          ...parsed.where((pair.key as Node | null)?.range?.[0]),
          field: key,
        })
      }
      items = pair.value.items as Node[]
      header[LIST_KEY] = key
    } else {
      header[key] = headerValue(key, pair.value as Node, parsed, options.headerWarnings) as JsonObject[string]
    }
  }
  return items
}

/**
 * A mapping with no record list: the file of cases a record key names, or one record. A record key
 * that holds no list is a list gone wrong (a forgotten `-`), not one record.
 */
function listlessMapping(contents: YAMLMap, parsed: ParsedYaml, options: ReadOptions): SourceRecord {
  const { recordKeys, header } = options
  const wrong = contents.items.find((pair) => recordKeys.includes(keyOf(pair.key)) && !isSeq(pair.value))
  const named = wrong && options.casesFiles && isScalar(wrong.value) && typeof wrong.value.value === 'string' && wrong.value.value.trim() !== '' ? wrong.value.value : undefined
  if (named !== undefined) {
    header[LIST_KEY] = keyOf(wrong!.key)
    header[CASES_FILE_KEY] = named
    return { value: named, line: parsed.where((wrong!.value as Node).range?.[0]).line ?? 1, index: 0 }
  }
  if (wrong) {
    const value = wrong.value as Node | null
    const got = isMap(value) ? 'a mapping' : value === null || (isScalar(value) && value.value === null) ? 'nothing' : 'a single value'
    throw new DataError('E_PARSE', `expected a list of cases (each item starting with "- "), got ${got}`, { ...parsed.where((wrong.key as Node | null)?.range?.[0]), field: keyOf(wrong.key) })
  }
  const single = { ...header }
  for (const key of Object.keys(header)) delete header[key]
  return { value: single, line: 1, index: 0 }
}
