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
import type { Document, Node, Pair, Scalar, YAMLMap, YAMLSeq } from 'yaml'
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
  const { file, recordKeys, header } = options
  const decoder = new StringDecoder('utf8')
  const out: SourceRecord[] = []

  /**
   * Parses `prefix + text`, where `prefix` starts the file and `text` starts on file line `line`.
   * `many`: the text holds many records, whose lines are looked up in an index of line starts;
   * one list item's few lines are counted when asked for instead, which costs less than the index.
   */
  const parse = (prefix: string, text: string, line: number, many = true, check = true) => {
    const source = prefix + text
    const { LineCounter, parseDocument } = yamlPackage()
    const lineCounter = many ? new LineCounter() : undefined
    // Integers too long for a number are read as bigints, then kept as their digits (see plainValues).
    const long = LONG_DIGITS.test(source)
    // Merge keys, which cost a test of every plain scalar, only where the text can hold one.
    const base = source.includes('<<') ? MERGE_OPTIONS : PARSE_OPTIONS
    const options = long ? { ...base, intAsBigInt: true } : base
    const doc = parseDocument(source, lineCounter ? { ...options, lineCounter } : options)
    const prefixLines = countNewlines(prefix)
    const lines = lineCounter ? undefined : new Lines(source)
    const where = (offset: number | undefined) => {
      const pos = lineCounter ? lineCounter.linePos(offset ?? 0) : lines!.at(offset ?? 0)
      return { file, line: (offset ?? 0) < prefix.length ? pos.line : pos.line - prefixLines - 1 + line, column: pos.col }
    }
    const firstError = doc.errors[0]
    if (firstError && check) {
      // The parser's own words for this one speak to a programmer.
      const what = firstError.code === 'MULTIPLE_DOCS' ? 'the file holds several documents (--- between them); a dataset is one' : parserWords(firstError.message)
      throw new DataError('E_PARSE', `invalid YAML: ${what}${duplicateKey(firstError, source)}`, where(firstError.pos[0]))
    }
    const binary = source.includes('!!binary')
    const toJs = (node: unknown, notes?: string[], field = ''): unknown => {
      // A key with no value (`? version`) has no node.
      if (node === null || node === undefined) return null
      refuseTextlessKey(firstTextlessKey(node, doc as Document, field, source), where)
      let value: unknown
      try {
        value = (node as Node).toJS ? (node as Node).toJS(doc as Document, { maxAliasCount: MAX_ALIASES }) : node
      } catch (error) {
        throw new DataError('E_PARSE', `invalid YAML: ${parserWords((error as Error).message)}`, where((node as Node).range?.[0]))
      }
      refuseTooDeep(value, source, where((node as Node).range?.[0]))
      return long || binary ? plainValues(value, notes ?? []) : value
    }
    // A double-quoted key may write it with escapes (`"\x5f_proto__"`).
    const mayHoldProto = source.includes('__proto__') || source.includes('\\')
    const record = (node: Node): SourceRecord => {
      const notes: string[] = []
      const value = toJs(node, notes)
      if (mayHoldProto && hasProtoKey(value)) throw new DataError('E_FIELD', protoRefused(), { ...where(node.range?.[0]), field: '__proto__' })
      const read: SourceRecord = { value, line: where(node.range?.[0]).line, index: index++ }
      read.fieldLine = fieldLines(node, source, prefix.length, prefixLines, line)
      if (notes.length) read.warnings = notes
      return read
    }
    return { doc, source, where, toJs, record }
  }
  const keyOf = (key: unknown) => String((key as Node & { value?: unknown })?.toJSON?.() ?? key)
  /** A header key's value; what reading it changed is told at its line. */
  const headerValue = (key: string, node: Node, toJs: (node: unknown, notes?: string[], field?: string) => unknown, where: (offset: number | undefined) => { line: number }) => {
    const notes: string[] = []
    const value = toJs(node, notes, key)
    if (key === '__proto__' || hasProtoKey(value)) throw new DataError('E_FIELD', protoRefused(), { ...where(node?.range?.[0]), field: key })
    for (const message of notes) options.headerWarnings?.push({ message, line: where(node?.range?.[0]).line, field: key })
    return value
  }

  // `pre`: before the record list, whose text is kept; `list`: inside it, item by item; `raw`: the rest is kept and parsed whole.
  let mode = 'pre' as 'pre' | 'list' | 'raw'
  const carry = new PendingLine()
  let lineNo = 0
  let block = -1
  let index = 0
  let head = ''
  let sawContent = false
  let keyLine: { text: string; key: string } | undefined
  let held = ''
  let prefix = ''
  let listKey: string | undefined
  let keyIndent = -1
  let itemIndent = 0
  let itemPrefix = ''
  let item = ''
  let itemLine = 0
  // Items cut but not parsed yet: a few are parsed together, which costs less than one by one.
  let batch: { text: string; line: number }[] = []
  let batchChars = 0
  let raw = ''
  let rawLine = 1
  let rawKind = 'whole' as 'whole' | 'tail' | 'after'
  const anchors = new ItemAnchors()
  /** Items of the whole-document parse's list put before the rest for their anchors, read already. */
  let rawSetters = 0
  // The first comment's line (see `ReadOptions.comments`): most are told by the lines the cutter
  // scans; a `#` in the lines of a quoted text or flow collection that goes on past its first line,
  // which it does not scan, is left to `yaml`'s lexer once the head or item holding it is cut.
  const comments = options.comments
  const commentAt = (line: number): void => {
    if (comments && comments.line === undefined) comments.line = line
  }
  let continues = false
  let unscannedHash = false
  /** The first comment of `text`, which starts on `line`, unless one was told before it (a line of it the cutter scanned may have been). */
  const lexComment = (text: string, line: number): void => {
    unscannedHash = false
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
  /** What a scanned line told of comments and of lines it does not scan. */
  const afterScan = (text: string): void => {
    if (scanned.comment) commentAt(lineNo)
    continues = scanned.continues
    if (continues && comments && text.includes('#')) unscannedHash = true
  }

  const documentTooLong = (line: number) =>
    new DataError('E_PARSE', `the YAML document is longer than ${MAX_RECORD_CHARS / (1024 * 1024)} MiB; YAML is read whole, so write datasets this large as JSON Lines`, { file, line })
  const itemTooLong = (line: number) =>
    new DataError('E_PARSE', `the YAML document is longer than ${MAX_RECORD_CHARS / (1024 * 1024)} MiB in one list item; evalferry holds one record in memory at a time and refuses larger ones`, { file, line })

  /** Hands the rest of the file to the whole-document parser, from the start or from the pending item. */
  const unsure = (line: string) => {
    if (mode === 'pre') {
      raw = head + (keyLine?.text ?? '') + held + line
      rawKind = 'whole'
      prefix = ''
      rawLine = 1
    } else {
      // Items before are records whatever comes; from the first that does not read alone on, the rest is parsed whole.
      const rest = flushBatch()
      raw = (rest?.text ?? '') + item + line
      rawKind = 'tail'
      rawLine = rest ? rest.line : item ? itemLine : lineNo
      // After the items that set the anchors it may use.
      const setters = anchors.before('', true)
      prefix += setters.text
      rawSetters = setters.items
    }
    head = held = item = ''
    mode = 'raw'
  }

  /**
   * Parses the items cut so far, several at once when they read as that many list items, else
   * each alone (which names a bad item's own error). Returns the text from the first item that
   * does not read as one list item on, with its line, for the whole-document parser.
   */
  const flushBatch = (): { text: string; line: number } | undefined => {
    let items = batch
    batch = []
    batchChars = 0
    // Items in the YAML that datasets are written in are read without `yaml`; from the first that is not, the rest go to it.
    let read = 0
    for (const { text, line } of items) {
      const item = readBlockItem(text, anchors.size ? anchors.values : undefined)
      if (!item) break
      if (item.used) anchors.touch(item.used)
      if (item.anchors) anchors.set(item.anchors, text, line)
      out.push({ value: item.value, line: line + item.line, index: index++, fieldLine: (field) => itemFieldLine(text, line, field) })
      read++
    }
    if (read === items.length) return undefined
    if (read) items = items.slice(read)
    if (items.length > 1 && !anchors.size) {
      const { doc, record } = parse('', items.map((i) => i.text).join(''), items[0]!.line, false, false)
      const list = doc.contents
      if (!doc.errors.length && isSeq(list) && list.items.length === items.length) {
        for (const [k, node] of list.items.entries()) {
          out.push(record(node as Node))
          keepAnchors(node as Node, items[k]!)
        }
        return undefined
      }
    }
    for (const [k, { text, line }] of items.entries()) {
      const node = anchors.size && text.includes('*') ? afterAnchors(text, line, false) : alone(text, line)
      if (!node) return { text: items.slice(k).map((i) => i.text).join(''), line }
      out.push(node.record)
      keepAnchors(node.node, { text, line })
    }
    return undefined
  }

  /** The anchors an item `yaml` read sets, for the items after it. */
  const keepAnchors = (node: Node, item: { text: string; line: number }): void => {
    if (item.text.includes('&')) anchors.set(anchorsIn(node), item.text, item.line)
  }

  /** An item `yaml` reads alone; undefined when it does not read as one list item. */
  const alone = (text: string, line: number): { node: Node; record: SourceRecord } | undefined => {
    const { doc, record } = parse('', text, line, false)
    const list = doc.contents
    if (!isSeq(list) || list.items.length !== 1) return undefined
    const node = list.items[0] as Node
    return { node, record: record(node) }
  }

  /**
   * An item `yaml` reads after the header and the items that set the anchors it uses (with `all`,
   * every item kept: see `ItemAnchors.before`); undefined when it does not read as one list item.
   */
  const afterAnchors = (text: string, line: number, all: boolean): { node: Node; record: SourceRecord } | undefined => {
    const setters = anchors.before(text, all)
    const { doc, record } = parse(prefix + setters.text, text, line, false)
    const contents = doc.contents
    const list = isMap(contents) ? contents.items.find((pair) => keyOf(pair.key) === listKey)?.value : contents
    if (!isSeq(list) || list.items.length !== setters.items + 1) return undefined
    const node = list.items[setters.items] as Node
    try {
      return { node, record: record(node) }
    } catch (error) {
      const unresolved = error instanceof DataError ? UNRESOLVED.exec(error.message) : null
      if (unresolved && !all) return afterAnchors(text, line, true)
      if (unresolved && anchors.letGo) {
        const message = `the alias *${unresolved[1]} names no anchor set in the last ${ANCHOR_TEXT_CHARS >> 20} MiB of items that set anchors; evalferry keeps no more of a file's anchors`
        throw new DataError('E_PARSE', message, (error as DataError).location)
      }
      throw error
    }
  }

  /**
   * Ends the pending item; its batch is parsed once large enough, or with `last`. False when an
   * item does not read as one list item: it and the items after it are then the pending item.
   */
  const finishItem = (last = false): boolean => {
    if (item) {
      if (unscannedHash) lexComment(item, itemLine)
      batch.push({ text: item, line: itemLine })
      batchChars += item.length
      item = ''
    }
    if (!last && batch.length < BATCH_ITEMS && batchChars < BATCH_CHARS) return true
    const rest = flushBatch()
    if (!rest) return true
    item = rest.text
    itemLine = rest.line
    return false
  }

  /** Parses the header keys before the list; false when the whole document must be parsed instead. */
  const startList = (): boolean => {
    if (unscannedHash) lexComment(head, 1)
    // The list key given twice, or an earlier record list, is for the whole-document parser to judge.
    const wholeDocumentKey = (key: string, isList: boolean): boolean => key === keyLine!.key || (recordKeys.includes(key) && isList)
    const plain = plainHead(head)
    if (plain) {
      if (Object.entries(plain).some(([key, value]) => wholeDocumentKey(key, Array.isArray(value)))) return false
      Object.assign(header, plain)
      header[LIST_KEY] = keyLine!.key
      return true
    }
    const { doc, toJs, where } = parse('', head, 1)
    const contents = doc.contents
    const pairs: [string, unknown][] = []
    // Comments alone, or a leading `---`, read as no node or as a null scalar.
    if (contents !== null && !(isScalar(contents) && contents.value === null)) {
      if (!isMap(contents)) return false
      for (const pair of contents.items) {
        refuseTextlessKey(textlessKey(pair, doc as Document, '', head), where)
        const key = keyOf(pair.key)
        if (wholeDocumentKey(key, isSeq(pair.value))) return false
        pairs.push([key, headerValue(key, pair.value as Node, toJs, where)])
      }
    }
    for (const [key, value] of pairs) header[key] = value as JsonObject[string]
    header[LIST_KEY] = keyLine!.key
    // Anchors above the list, for its items (`defaults: &defaults`, then `<<: *defaults` in each).
    if (head.includes('&')) {
      const { visit } = yamlPackage()
      const set = new Map<string, unknown>()
      visit(doc, {
        Node(_, node) {
          if (!node.anchor) return
          let plain = true
          visit(node, { Alias: () => void (plain = false) })
          set.set(node.anchor, plain ? toJs(node) : LEFT_TO_YAML)
        },
      })
      anchors.setAbove(set)
    }
    return true
  }

  const onLine = (line: string) => {
    lineNo++
    let text = line.endsWith('\n') ? line.slice(0, -1) : line
    if (text.endsWith('\r')) text = text.slice(0, -1)
    let indent = 0
    while (text[indent] === ' ') indent++
    const blank = /^[ \t]*$/.test(text)
    // The line ends a block scalar, or a quoted text or flow collection over several lines.
    const ending = block >= 0
    if (block >= 0) {
      if (blank || indent > block) {
        if (continues && comments && text.includes('#')) unscannedHash = true
        if (mode === 'pre') head += line
        else item += line
        return
      }
      block = -1
    }
    if (mode === 'pre') {
      if (blank || text[indent] === '#') {
        if (!blank) commentAt(lineNo)
        if (keyLine) held += line
        else head += line
        return
      }
      if (text[indent] === '\t') return unsure(line)
      if (indent === 0 && (DOCUMENT_MARKER.test(text) || text[0] === '%')) {
        if (sawContent || !LEADING_MARKER.test(text)) return unsure(line)
        if (text.includes('#')) commentAt(lineNo)
        head += line
        return
      }
      const dash = text[indent] === '-' && (text.length === indent + 1 || text[indent + 1] === ' ')
      if (dash && (keyLine || !sawContent)) {
        if (keyLine) {
          if (!startList()) return unsure(line)
          prefix = head + keyLine.text
          listKey = keyLine.key
          keyIndent = 0
        } else {
          header[LIST_KEY] = ''
          prefix = ''
          keyIndent = -1
        }
        head = held = ''
        keyLine = undefined
        mode = 'list'
        itemIndent = indent
        itemPrefix = ' '.repeat(indent) + '-'
      } else {
        if (keyLine) {
          head += keyLine.text + held
          keyLine = undefined
          held = ''
        }
        if (indent > 0 && !sawContent) return unsure(line)
        sawContent = true
        const key = indent === 0 ? KEY_LINE.exec(text)?.[1] : undefined
        const name = key?.startsWith('"') ? key.slice(1, -1) : key?.startsWith("'") ? key.slice(1, -1).replaceAll("''", "'") : key
        if (name !== undefined && recordKeys.includes(name)) {
          if (text.includes('#', key!.length)) commentAt(lineNo)
          keyLine = { text: line, key: name }
          return
        }
        const scan = scanLine(text, indent)
        if (scan === UNSURE) return unsure(line)
        afterScan(text)
        head += line
        block = scan
        return
      }
    }
    // Inside the list.
    if (blank || text[indent] === '#') {
      if (!blank) commentAt(lineNo)
      item += line
      return
    }
    if (indent === 0 && (DOCUMENT_MARKER.test(text) || text[0] === '%')) return unsure(line)
    if (text[indent] === '\t') {
      // Tabs after the item's indentation (a plain text's next line, or what `yaml` refuses): the
      // line is the item's, which `yaml` reads alone, unless it opens what goes on past it, or ends
      // what did (where `yaml` may read the tab as indentation, whole, though it refuses that alone).
      if (ending || indent <= itemIndent || scanLine(text, TABS.exec(text)![0].length, true) !== DONE) return unsure(line)
      afterScan(text)
      item += line
      return
    }
    const dash = text[indent] === '-' && (text.length === indent + 1 || text[indent + 1] === ' ')
    if (indent === itemIndent && dash) {
      if (!finishItem()) return unsure(line)
      itemLine = lineNo
    } else if (indent <= keyIndent && !dash) {
      if (!finishItem(true)) return unsure(line)
      // The list has ended; the keys after it are kept and parsed at the end, after the list key.
      raw = line
      // A value for the list key: after an empty one, `yaml` places a duplicate key's error on the line above.
      prefix += '  []\n'
      rawKind = 'after'
      rawLine = lineNo
      mode = 'raw'
      return
    } else if (indent <= itemIndent) return unsure(line)
    // The item holding an explicit key is read by `yaml`, alone.
    const scan = scanLine(text, indent, true)
    if (scan === UNSURE) return unsure(line)
    afterScan(text)
    block = scan
    item += line
    if (item.length > MAX_RECORD_CHARS) throw itemTooLong(lineNo)
  }

  // A function, so that TypeScript does not keep `mode` narrowed across calls that change it.
  const isRaw = (): boolean => mode === 'raw'
  const checkRaw = () => {
    if (prefix.length + raw.length > MAX_RECORD_CHARS) throw documentTooLong(rawLine + countNewlines(raw))
  }

  const feed = (chunk: string) => {
    if (mode === 'raw') {
      raw += chunk
      return checkRaw()
    }
    let start = 0
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      const end = chunk.slice(start, nl + 1)
      onLine(carry.take(end))
      start = nl + 1
      if (isRaw()) {
        raw += chunk.slice(start)
        return checkRaw()
      }
    }
    carry.add(start ? chunk.slice(start) : chunk)
    if (mode === 'pre') {
      if (head.length + held.length + (keyLine?.text.length ?? 0) + carry.length > MAX_RECORD_CHARS) throw documentTooLong(lineNo + 1)
    } else if ((carry.startsWith(itemPrefix) ? 0 : item.length) + carry.length > MAX_RECORD_CHARS) throw itemTooLong(lineNo + 1)
  }

  // A lone CR breaks a line in YAML (PyYAML reads it so; `yaml` does not), and every break in a
  // value reads as LF: each becomes an LF. A CR that ends a chunk waits for the next character.
  let heldCr = false
  const lineBreaks = (text: string): string => {
    if (heldCr) {
      heldCr = false
      text = '\r' + text
    }
    if (!text.includes('\r')) return text
    if (text.endsWith('\r')) {
      heldCr = true
      text = text.slice(0, -1)
    }
    return text.replace(LONE_CR, '\n')
  }

  let started = false
  for await (const chunk of source) {
    let text = lineBreaks(typeof chunk === 'string' ? chunk : decoder.write(chunk))
    if (!started && text) {
      started = true
      // `yaml` counts a byte-order mark as a column and refuses one before a bare list's `-`.
      if (text.startsWith('\uFEFF')) text = text.slice(1)
    }
    try {
      feed(text)
    } catch (error) {
      // The records before the one that failed are still delivered, in order.
      yield* out
      throw error
    }
    yield* out
    out.length = 0
  }
  const tail = lineBreaks(decoder.end()) + (heldCr ? '\n' : '')
  if (tail) feed(tail)
  if (mode !== 'raw' && carry.length) {
    onLine(carry.take())
    if (isRaw()) checkRaw()
  }
  yield* out
  out.length = 0
  if (mode === 'list' && !finishItem(true)) unsure('')
  if (mode === 'pre') unsure('')
  yield* out
  out.length = 0
  if (mode !== 'raw') return

  lexComment(raw, rawLine)
  const { doc, source: parsed, where, toJs, record } = parse(prefix, raw, rawLine)
  raw = ''
  const contents = doc.contents
  const whole = rawKind === 'whole'
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
    for (const pair of contents.items) {
      refuseTextlessKey(textlessKey(pair, doc as Document, '', parsed), where)
      const key = keyOf(pair.key)
      if (((pair.key as Node | null)?.range?.[0] ?? 0) < prefix.length) {
        // Read already, before the list; only the list's own items, from the pending one on, are new.
        if (rawKind === 'tail' && key === listKey && isSeq(pair.value)) items = pair.value.items as Node[]
      } else if (recordKeys.includes(key) && isSeq(pair.value)) {
        const first = whole ? (header[LIST_KEY] as string | undefined) : listKey
        if (first !== undefined) {
          // AgentV runs the cases of one list; which one the file means, only its author knows.
          throw new DataError('E_PARSE', `a second list of cases, after "${first}": a file holds one; move these cases into "${first}" or into a file of their own`, {
            ...where((pair.key as Node | null)?.range?.[0]),
            field: key,
          })
        }
        items = pair.value.items as Node[]
        header[LIST_KEY] = key
      } else {
        header[key] = headerValue(key, pair.value as Node, toJs, where) as JsonObject[string]
      }
    }
    if (whole && items === undefined) {
      // A record key that holds no list is a list gone wrong (a forgotten `-`), not one record, unless it names a file of them.
      const wrong = contents.items.find((pair) => recordKeys.includes(keyOf(pair.key)) && !isSeq(pair.value))
      const named = wrong && options.casesFiles && isScalar(wrong.value) && typeof wrong.value.value === 'string' && wrong.value.value.trim() !== '' ? wrong.value.value : undefined
      if (named !== undefined) {
        header[LIST_KEY] = keyOf(wrong!.key)
        header[CASES_FILE_KEY] = named
        yield { value: named, line: where((wrong!.value as Node).range?.[0]).line ?? 1, index: 0 }
        return
      }
      if (wrong) {
        const value = (wrong.value as Node | null)
        const got = isMap(value) ? 'a mapping' : value === null || (isScalar(value) && value.value === null) ? 'nothing' : 'a single value'
        throw new DataError('E_PARSE', `expected a list of cases (each item starting with "- "), got ${got}`, { ...where((wrong.key as Node | null)?.range?.[0]), field: keyOf(wrong.key) })
      }
      // A mapping with no record list is one record.
      const single = { ...header }
      for (const key of Object.keys(header)) delete header[key]
      yield { value: single, line: 1, index: 0 }
      return
    }
  } else {
    throw new DataError('E_PARSE', 'expected a YAML mapping or list at the top of the document', where(0))
  }
  for (const node of (items ?? []).slice(rawSetters)) yield record(node)
}
