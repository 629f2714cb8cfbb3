/**
 * The field mapping of tables (SPEC section 4), shared by every adapter whose records are rows of
 * arbitrary columns: plain CSV, Hugging Face rows and LangSmith `inputs`/`outputs`.
 *
 * Reading, a row becomes one canonical case: the columns named by `--map` (or, without it, by the
 * well-known names) fill canonical fields; every other column goes to `metadata` under its own
 * name, so nothing is lost. Writing is the inverse: a case becomes a row under a header, either
 * the header the table was read with (so a table round-trips with its own column names) or the
 * default header, whose columns are named after the canonical fields.
 *
 * Cells of a text table (CSV) stay text: a list field (`context`, `tags`) holds a JSON array when
 * the cell starts with `[`, else the cell is its one item; an empty cell is an absent field.
 */
import type { FieldMapping, RowMapper } from '../adapters/types.ts'
import { deepEqual, isCarry } from './carry.ts'
import { isCompactJson, knowJsonText, parseExact, stringifyJson } from './codecs/json.ts'
import { parseNumpyArray, parsePythonLiteral } from './codecs/python-literal.ts'
import { UsageError, fieldError } from './errors.ts'
import { CARRY_KEY, hasKeys, isJsonObject, isMessageList, own, singleText, type EvalCase, type Extras, type JsonObject, type JsonValue, type Message } from './model.ts'

type Kind = 'input' | 'expected' | 'messages' | 'text' | 'list' | 'split' | 'number'

/** The canonical fields a column can fill, in the order the default header lists them. */
const FIELD_KINDS = {
  id: 'text',
  name: 'text',
  description: 'text',
  tags: 'list',
  split: 'split',
  conversation_id: 'text',
  input: 'input',
  messages: 'messages',
  expected_output: 'expected',
  expected_outcome: 'text',
  actual_output: 'text',
  token_cost: 'number',
  completion_time: 'number',
  context: 'list',
  retrieval_context: 'list',
  scenario: 'text',
  user_description: 'text',
  chatbot_role: 'text',
  comments: 'text',
  note: 'text',
} as const satisfies Record<string, Kind>

export type MappedField = keyof typeof FIELD_KINDS

/** Canonical fields a `--map` key may name (`messages` is the chat column: input and expected messages). */
export const MAPPED_FIELDS = Object.keys(FIELD_KINDS) as MappedField[]

/** Fields that come after the metadata columns in the default header. */
const AFTER_METADATA = new Set<string>(['comments', 'note'])

/**
 * Column names recognised without `--map`, after a column named like a canonical field, first
 * listed first; matched as people write headers, whatever their case, spaces, `-` and `_`
 * (`Question`, `Best Answer`, `expected-output`). A name in two lists (`response`) goes to the
 * first field that has no column yet: ragas' `response` beside its `reference` is the answer the
 * model gave, a `response` alone the expected one.
 */
export const WELL_KNOWN_NAMES: Readonly<Partial<Record<MappedField, readonly string[]>>> = {
  id: ['id', 'task_id', 'example_id'],
  input: ['input', 'question', 'prompt', 'query', 'user_input', 'instruction'],
  expected_output: ['expected_output', 'answer', 'target', 'reference', 'ground_truth', 'output', 'completion', 'ideal', 'best_answer', '__expected', 'response'],
  actual_output: ['actual_output', 'response'],
  context: ['context', 'contexts', 'reference_contexts'],
  retrieval_context: ['retrieval_context', 'retrieved_contexts'],
  messages: ['messages'],
}

/** A column name as it is matched against the canonical and well-known names: `Best Answer` is `bestanswer`, as `best_answer` is. */
function headerKey(name: string): string {
  return name.toLowerCase().replace(/[\s_-]+/g, '')
}

/** Of `keys`, the one that `fits` and is the first of `names` (a key spelled exactly as it first, then as headers are matched). */
export function wellKnownKey(keys: readonly string[], names: readonly string[], fits: (key: string) => boolean): string | undefined {
  let spelled: string[] | undefined
  for (const name of names) {
    if (keys.includes(name) && fits(name)) return name
    const want = headerKey(name)
    spelled ??= keys.map(headerKey)
    const at = keys.findIndex((k, i) => k !== name && spelled![i] === want && fits(k))
    if (at !== -1) return keys[at]
  }
  return undefined
}

/** Whether `column` is one of `names` as headers are matched (`headerKey`). */
export function isWellKnown(column: string, names: readonly string[]): boolean {
  const key = headerKey(column)
  return names.some((name) => headerKey(name) === key)
}

/** Names a metadata key may not take as a column of its own (however it is written): reading would give it to a field. */
const RESERVED = new Set<string>([...MAPPED_FIELDS, ...Object.values(WELL_KNOWN_NAMES).flat()].map(headerKey))

function isReserved(column: string): boolean {
  return column === CARRY_KEY || RESERVED.has(headerKey(column))
}

/** A mapping resolved against one table's columns: which column (or dotted path) fills which field. */
export interface ResolvedMapping {
  /** Canonical field to the column name or dotted path that fills it, in canonical order. */
  fields: [MappedField, string][]
  /** Fields the user's mapping named: a row without their column is an error. */
  explicit: Set<MappedField>
  /** Columns that go to `metadata` even though a well-known name would claim them. */
  metadata: string[]
  /** Columns left out. */
  ignore: string[]
  /** The column names and paths of `fields`: only these can be taken off a row's metadata. */
  paths: Set<string>
  /** Fields the user's mapping named by a column the columns resolved against lack, with that column. */
  absent: [MappedField, string][]
}

/** How a row's values are held. */
export interface RowOptions {
  /** The extras key of the format reading or writing the row (`csv`, `hf`, `langsmith`). */
  format: string
  /** Every cell is text (CSV): lists are JSON text, numbers are digits, an empty cell is absent. */
  text?: boolean
  /** A null value is an absent field, in `metadata` too (Parquet, where every row has every column). */
  nullIsAbsent?: boolean
}

/** What `mapRow` reads a row with: the table's columns, and whether they are a header every row shares. */
export type RowReadOptions = RowOptions & { columns?: readonly string[]; header?: boolean }
/** What `caseToRow` writes a row with: the layout's mapping, and whether every column gets a cell. */
export type RowWriteOptions = RowOptions & { map?: FieldMapping; fill?: boolean }

/** The options `mapRow` reads a row with: `base`, and the table's header if it has one. */
export function readRowOptions(base: RowOptions, columns: readonly string[] | undefined, header: boolean): RowReadOptions {
  // Every field written out, set or not, rather than spread from `base`: spread options took a new
  // shape for each file, and the code reading them was compiled again for each file of a batch.
  return { format: base.format, text: base.text, nullIsAbsent: base.nullIsAbsent, columns, header }
}

/** The options `caseToRow` writes a row with: `base`, whether to fill every column, and the layout's mapping. */
export function writeRowOptions(base: RowOptions, fill: boolean, map: FieldMapping | undefined): RowWriteOptions {
  return { format: base.format, text: base.text, nullIsAbsent: base.nullIsAbsent, fill, map }
}

function isMappedField(name: string): name is MappedField {
  return Object.hasOwn(FIELD_KINDS, name)
}

/**
 * Parses `--map` arguments (`input=question`, `metadata=difficulty,domain`, `ignore=row_hash`,
 * `input=inputs.question`) into a mapping. `metadata` and `ignore` take comma-separated lists and
 * may repeat; every other key names one canonical field once. Bad syntax is a usage error.
 */
export function parseMapArgs(args: readonly string[]): FieldMapping {
  const mapping: FieldMapping = {}
  for (const arg of args) {
    const eq = arg.indexOf('=')
    const key = eq === -1 ? '' : arg.slice(0, eq).trim()
    const value = eq === -1 ? '' : arg.slice(eq + 1).trim()
    if (!key || !value) throw new UsageError(`--map expects field=column (e.g. input=question), got "${arg}"`)
    // `inputs`/`outputs` are LangSmith's upload_csv input_keys/output_keys: lists, like metadata.
    if (key === 'metadata' || key === 'ignore' || key === 'inputs' || key === 'outputs') {
      const columns = value.split(',').map((c) => c.trim())
      if (columns.some((c) => c === '')) throw new UsageError(`--map ${key}= expects comma-separated column names, got "${value}"`)
      mapping[key] = [...(mapping[key] ?? []), ...columns]
      continue
    }
    if (!isMappedField(key)) {
      throw new UsageError(`--map: unknown field "${key}"; expected one of ${[...MAPPED_FIELDS, 'metadata', 'ignore', 'inputs', 'outputs'].join(', ')}`)
    }
    if (mapping[key] !== undefined) throw new UsageError(`--map ${key} is given twice`)
    mapping[key] = value
  }
  // A column ignored and used: which was meant cannot be told (and the report would call it dropped).
  for (const column of mapping.ignore ?? []) {
    const user = Object.entries(mapping).find(([key, value]) => key !== 'ignore' && (Array.isArray(value) ? value.includes(column) : value === column || firstPart(value!) === column))
    if (user) throw new UsageError(`--map names the column "${column}" in ignore= and in ${user[0]}=; give it one place`)
  }
  return mapping
}

/** True when the library was handed a function per row rather than a field mapping. */
export function isRowMapper(map: FieldMapping | RowMapper | undefined): map is RowMapper {
  return typeof map === 'function'
}

/** The top-level column a path reads: the path itself when a column has that name (`inputs.question` in a flat export). */
export function columnOf(path: string, columns: readonly string[]): string {
  return columns.includes(path) ? path : firstPart(path)
}

/** The part of a dotted path before its first dot. */
function firstPart(path: string): string {
  const dot = path.indexOf('.')
  return dot === -1 ? path : path.slice(0, dot)
}

/** The value at a column name or dotted path of `row` (a column named with the dots wins). */
export function getPath(row: JsonObject, path: string): JsonValue | undefined {
  if (Object.hasOwn(row, path)) return row[path]
  let value: JsonValue | undefined = row
  for (const part of path.split('.')) {
    if (!isJsonObject(value) || !Object.hasOwn(value, part)) return undefined
    value = value[part]
  }
  return value
}

/** Sets a dotted path of `row`, creating (or copying) the objects on the way. */
function setPath(row: JsonObject, path: string, value: JsonValue, literal: boolean): void {
  if (literal || !path.includes('.')) {
    row[path] = value
    return
  }
  const parts = path.split('.')
  let target = row
  for (const part of parts.slice(0, -1)) {
    const next = target[part]
    const copy: JsonObject = isJsonObject(next) ? { ...next } : {}
    target[part] = copy
    target = copy
  }
  target[parts[parts.length - 1]!] = value
}

/** `value` without the sub-paths a mapping took out of it; undefined when nothing is left. */
function withoutPaths(value: JsonValue, paths: string[][]): JsonValue | undefined {
  if (!isJsonObject(value)) return value
  const copy: JsonObject = { ...value }
  for (const path of paths) {
    const [head, ...rest] = path
    if (head === undefined || !Object.hasOwn(copy, head)) continue
    if (rest.length === 0) delete copy[head]
    else {
      const inner = withoutPaths(copy[head]!, [rest])
      if (inner === undefined) delete copy[head]
      else copy[head] = inner
    }
  }
  return Object.keys(copy).length ? copy : undefined
}

/**
 * Which column fills which field, for a table with `columns`. A user mapping comes first; then a
 * column named like a canonical field fills it; then the well-known names, first listed first,
 * each matched by `headerKey` (a `messages` column stands for the input and expected messages, so it turns the input
 * and expected aliases off). Columns left over go to `metadata`.
 */
export function resolveMapping(columns: readonly string[], map: FieldMapping = {}): ResolvedMapping {
  const claimed = new Set<string>()
  const fields = new Map<MappedField, string>()
  const explicit = new Set<MappedField>()
  const metadata = map.metadata ?? []
  const ignore = map.ignore ?? []
  for (const c of [...metadata, ...ignore]) claimed.add(c)
  for (const [key, value] of Object.entries(map)) {
    if (key === 'metadata' || key === 'ignore' || value === undefined) continue
    if (!isMappedField(key)) throw new UsageError(`field mapping: unknown field "${key}"`)
    if (typeof value !== 'string') throw new UsageError(`field mapping: ${key} takes one column name, got a list`)
    fields.set(key, value)
    explicit.add(key)
    claimed.add(columnOf(value, columns))
  }
  const claim = (field: MappedField, column: string): void => {
    fields.set(field, column)
    claimed.add(column)
  }
  // Each header key's columns, in order: the column spelled exactly as a name is taken before another spelling of it.
  const byKey = new Map<string, string[]>()
  for (const column of columns) {
    const key = headerKey(column)
    byKey.set(key, [...(byKey.get(key) ?? []), column])
  }
  const unclaimed = (name: string): string | undefined => {
    if (columns.includes(name) && !claimed.has(name)) return name
    return byKey.get(headerKey(name))?.find((column) => !claimed.has(column))
  }
  for (const field of MAPPED_FIELDS) {
    if (fields.has(field)) continue
    const column = unclaimed(field)
    if (column !== undefined) claim(field, column)
  }
  const chat = fields.has('messages')
  for (const [field, names] of Object.entries(WELL_KNOWN_NAMES) as [MappedField, string[]][]) {
    if (fields.has(field) || (chat && (field === 'input' || field === 'expected_output'))) continue
    for (const name of names) {
      const column = unclaimed(name)
      if (column === undefined) continue
      claim(field, column)
      break
    }
  }
  const ordered = MAPPED_FIELDS.filter((f) => fields.has(f)).map((f): [MappedField, string] => [f, fields.get(f)!])
  const absent = ordered.filter(([field, path]) => explicit.has(field) && !columns.includes(columnOf(path, columns)))
  return { fields: ordered, explicit, metadata, ignore, paths: new Set(ordered.map(([, path]) => path)), absent }
}

// ---------------------------------------------------------------------------------------------
// cells to canonical values and back

function isAbsent(value: JsonValue | undefined, options: RowOptions): boolean {
  return value === undefined || value === null || (options.text === true && value === '')
}

/**
 * The list a cell's text is: a JSON array; a Python list as pandas' `to_csv` writes one (`['a',
 * "it's"]`, what RAG datasets built in pandas hold); or a numpy array as it writes one of those
 * (`['a' 'b']`, what `datasets`' `to_csv` writes for a list column), which Python itself would read
 * as one joined string. Undefined for any other text.
 */
function parseListCell(text: string): JsonValue[] | undefined {
  if (!text.startsWith('[')) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = pythonList(text)
    if (parsed) fromPython.add(parsed)
  }
  return Array.isArray(parsed) ? (parsed as JsonValue[]) : undefined
}

function pythonList(text: string): JsonValue[] | undefined {
  try {
    const list = parsePythonLiteral(text, { joinStrings: false })
    return Array.isArray(list) ? list : undefined
  } catch {
    try {
      return parseNumpyArray(text)
    } catch {
      return undefined
    }
  }
}

/** Lists read from Python's text, whose cell `givesBack` cannot tell from the JSON text's length. */
const fromPython = new WeakSet<object>()

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string')
}

/**
 * A cell's chat messages as canonical messages: as they are, or in the shapes chat datasets write
 * them (`datasets` gives every message every key of the column's struct, null where it has none;
 * content as OpenAI's text parts `{type: "text", text}`). Undefined when they are neither. A cell
 * changed here does not give itself back, so the row keeps it as it was (see `givesBack`).
 */
function chatMessages(value: unknown): Message[] | undefined {
  if (isMessageList(value)) return value
  if (!Array.isArray(value)) return undefined
  const messages = value.map((m): unknown => {
    if (!isJsonObject(m)) return m
    const out: JsonObject = {}
    for (const [key, v] of Object.entries(m)) {
      if (v === null && key !== 'content') continue
      out[key] = key === 'content' ? chatContent(v) : v
    }
    return out
  })
  return isMessageList(messages) ? messages : undefined
}

function chatContent(content: JsonValue): JsonValue {
  if (content === null) return ''
  if (!Array.isArray(content)) return content
  return content.map((part) => (isJsonObject(part) && part.type === 'text' && typeof part.text === 'string' && !('value' in part) && Object.keys(part).length === 2 ? { type: 'text', value: part.text } : part))
}

/** The canonical value of one cell for `field`, or undefined when the cell does not fit the field. */
function cellToField(field: MappedField, value: JsonValue, options: RowOptions): unknown {
  const kind: Kind = FIELD_KINDS[field]
  switch (kind) {
    case 'text':
      if (typeof value === 'string') return value
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined
    case 'number': {
      if (typeof value === 'number') return value
      if (typeof value !== 'string' || value.trim() === '') return undefined
      const n = Number(value)
      return Number.isFinite(n) ? n : undefined
    }
    case 'list':
    case 'split': {
      if (isStringList(value)) return value
      if (typeof value !== 'string') return undefined
      const list = options.text ? parseListCell(value) : undefined
      if (list) return isStringList(list) ? list : undefined
      return kind === 'split' ? value : [value]
    }
    case 'input':
      if (typeof value === 'string') return [{ role: 'user', content: value }]
      return chatMessages(value) ?? [{ role: 'user', content: [{ type: 'json', value }] }]
    case 'expected':
      if (typeof value === 'string') return [{ role: 'assistant', content: value }]
      return chatMessages(value) ?? value
    case 'messages': {
      const list = typeof value === 'string' && options.text ? parseListCell(value) : value
      return chatMessages(list)
    }
  }
}

/** The cell that holds `value` of `field`, for a row of `options`' kind. */
function fieldToCell(field: MappedField, value: unknown, options: RowOptions): JsonValue {
  const kind: Kind = FIELD_KINDS[field]
  let cell: JsonValue
  switch (kind) {
    case 'list':
      cell = value as JsonValue
      if (options.text && isStringList(value) && value.length === 1 && value[0] !== '' && !value[0]!.startsWith('[')) cell = value[0]!
      break
    case 'input': {
      const messages = value as Message[]
      const text = singleText(messages, 'user')
      const only = messages.length === 1 ? messages[0] : undefined
      const block = only && only.role === 'user' && Array.isArray(only.content) && only.content.length === 1 ? only.content[0] : undefined
      if (text !== undefined) cell = text
      else if (block?.type === 'json' && Object.keys(only!).length === 2) cell = block.value
      else cell = messages as unknown as JsonValue
      break
    }
    case 'expected': {
      const text = isMessageList(value) ? singleText(value, 'assistant') : undefined
      cell = text ?? (value as JsonValue)
      break
    }
    default:
      cell = value as JsonValue
  }
  if (options.text && typeof cell !== 'string') return cell === null ? '' : stringifyJson(cell)
  return cell
}

/** Whether writing `canonical` to a cell of `field` gives `value` back. */
function givesBack(field: MappedField, canonical: unknown, value: JsonValue, options: RowOptions): boolean {
  const kind = FIELD_KINDS[field]
  // A list read from its JSON text (not a text taken as a one-item list) is told without writing that text again.
  if ((kind === 'list' || kind === 'split') && options.text && typeof value === 'string' && isStringList(canonical) && canonical[0] !== value && !fromPython.has(canonical)) {
    // A list of one plain text is written as that text.
    const asText = kind === 'list' && canonical.length === 1 && canonical[0] !== '' && !canonical[0]!.startsWith('[')
    const compact = isCompactJson(value, canonical)
    // The list's JSON text is then the cell's, which a JSON Lines record writes as it is.
    if (compact) knowJsonText(canonical, value)
    const same = asText ? false : compact
    if (same !== undefined) return same
  }
  return deepEqual(fieldToCell(field, canonical, options), value)
}

/** A chat list split as reading does: the last message, when the assistant's, is the expected output. */
function splitMessages(messages: Message[]): { input?: Message[]; expected_output?: Message[] } {
  const last = messages[messages.length - 1]
  if (last?.role !== 'assistant') return { input: messages }
  const rest = messages.slice(0, -1)
  return rest.length ? { input: rest, expected_output: [last] } : { expected_output: [last] }
}

/** Marker keys in a case's `extras[format]`: source values a canonical field cannot show as they were. */
const RAW = '$raw'

function ownExtras(c: EvalCase, format: string): JsonObject | undefined {
  return c.extras?.[format]
}

/**
 * `c` with the source cells another table format kept (`extras[from].$raw`: a list's JSON text as
 * it was spelled) taken as the writer's own (`options.format`'s), where it has none of that column
 * and writing the field would not give the cell: a table read as one format and written as the
 * other writes its cells as they were, with nothing carried for them.
 */
export function withCellsOf(c: EvalCase, from: readonly string[], options: RowOptions): EvalCase {
  const extras = c.extras
  if (!extras) return c
  const format = options.format
  let adopted: Extras | undefined
  for (const source of from) {
    const theirs = extras[source]?.[RAW]
    if (!isJsonObject(theirs)) continue
    const fields = new Map(resolvedFor(Object.keys(theirs), undefined).fields.map(([field, path]) => [path, field]))
    const own = isJsonObject(extras[format]?.[RAW]) ? (extras[format]![RAW] as JsonObject) : {}
    const taken: JsonObject = {}
    const left: JsonObject = {}
    let asText = false
    for (const [path, cell] of Object.entries(theirs)) {
      const field = fields.get(path)
      const canonical = field && (field === 'messages' ? undefined : (c as Record<string, unknown>)[field])
      // A list of one text the other table held as text is a CSV cell of that text, read back as one (see `textCellColumns`).
      if (options.text && field !== undefined && isTextCell(field, canonical, cell)) {
        asText = true
        continue
      }
      // The value read from the cell, not the case's equal one: how a list was read (from Python's text) tells whether its cell gives it back.
      const back = field !== undefined && canonical !== undefined && cell !== null && !Object.hasOwn(own, path) ? cellToField(field, cell, options) : undefined
      const needed = back !== undefined && deepEqual(back, canonical) && !givesBack(field!, back, cell, options)
      ;(needed ? taken : left)[path] = cell
    }
    const took = hasKeys(taken)
    if (!took && !asText) continue
    adopted ??= { ...extras }
    if (took) adopted[format] = { ...adopted[format], [RAW]: { ...taken, ...own } }
    const { [RAW]: _theirs, ...rest } = adopted[source]!
    if (Object.keys(left).length) adopted[source] = { ...rest, [RAW]: left }
    else if (Object.keys(rest).length) adopted[source] = rest
    else delete adopted[source]
  }
  if (!adopted) return c
  if (hasKeys(adopted)) return { ...c, extras: adopted }
  const { extras: _none, ...rest } = c
  return rest
}

/** Whether `cell` is the one text of list `field`'s `value`, as a CSV cell holds it. */
function isTextCell(field: MappedField, value: unknown, cell: JsonValue): boolean {
  return FIELD_KINDS[field] === 'list' && typeof cell === 'string' && cell !== '' && !cell.startsWith('[') && isStringList(value) && value.length === 1 && value[0] === cell
}

/** A list field and the column that holds it. */
export type TextColumn = readonly [MappedField, string]

/** The list fields each case read from a CSV held as one text in its cell (a `context` of one passage), not as a JSON list. */
const textCells = new WeakMap<EvalCase, MappedField[]>()

/**
 * The list columns of `header` (absent: the fields' own names) that the cases held as one text in
 * a CSV cell wherever they have a value: written as typed rows (Parquet, JSON Lines), each is a
 * text column, as `datasets` reads the CSV, not a list of one (see `withTextCells`).
 */
export function textCellColumns(cases: readonly EvalCase[], header: readonly string[] | undefined): TextColumn[] {
  return resolvedFor(header ?? LIST_FIELDS, undefined).fields.filter(([field]) => {
    if (FIELD_KINDS[field] !== 'list') return false
    let held = false
    for (const c of cases) {
      if ((c as Record<string, unknown>)[field] === undefined) continue
      if (!textCells.get(c)?.includes(field)) return false
      held = true
    }
    return held
  })
}

const LIST_FIELDS = MAPPED_FIELDS.filter((f) => FIELD_KINDS[f] === 'list')

/**
 * `c` with its lists of one text in `columns` kept as that text (`extras[format].$raw`), where it
 * keeps no cell of that column already: the row holds the text itself.
 */
export function withTextCells(c: EvalCase, columns: readonly TextColumn[], format: string): EvalCase {
  const own = c.extras?.[format]
  const kept = isJsonObject(own?.[RAW]) ? (own![RAW] as JsonObject) : undefined
  let cells: JsonObject | undefined
  for (const [field, path] of columns) {
    const value = (c as Record<string, unknown>)[field]
    if (!isStringList(value) || value.length !== 1 || value[0] === '' || (kept && Object.hasOwn(kept, path))) continue
    ;(cells ??= {})[path] = value[0]!
  }
  if (!cells) return c
  return { ...c, extras: { ...c.extras, [format]: { ...own, [RAW]: { ...kept, ...cells } } } }
}

/**
 * One row to one canonical case under a resolved mapping. A column a well-known name claims but
 * whose value does not fit the field (an object where text belongs) goes to `metadata` instead; a
 * column the user mapped must be there and fit, or the row is an error naming the field.
 */
export function rowToCase(row: JsonObject, resolved: ResolvedMapping, options: RowOptions): EvalCase {
  const c: EvalCase = {}
  const target = c as Record<string, unknown>
  let raw: JsonObject | undefined
  let textFields: MappedField[] | undefined
  // Columns a field took whole (at most one per field), and parts of columns taken by dotted paths.
  const taken: string[] = []
  let takenPaths: Map<string, string[][]> | undefined

  for (const [field, path] of resolved.fields) {
    const value = getPath(row, path)
    if (value === undefined) {
      if (resolved.explicit.has(field)) throw fieldError(path, `the column "${path}" mapped to ${field} is missing from this row`)
      continue
    }
    // The column holding the value: the path itself, or the first part of a dotted path into a nested value.
    const whole = Object.hasOwn(row, path)
    if (isAbsent(value, options)) {
      if (whole) taken.push(path)
      // A JSON null in a typed row is kept so that writing gives it back.
      if (value === null && !options.nullIsAbsent) (raw ??= {})[path] = null
      continue
    }
    const canonical = cellToField(field, value, options)
    if (canonical === undefined) {
      if (resolved.explicit.has(field)) throw fieldError(path, `the column "${path}" does not hold a value for ${field}`)
      continue
    }
    if (whole) taken.push(path)
    else {
      const column = firstPart(path)
      takenPaths ??= new Map()
      takenPaths.set(column, [...(takenPaths.get(column) ?? []), path.split('.').slice(1)])
    }
    if (field === 'messages') Object.assign(target, splitMessages(canonical as Message[]))
    else target[field] = canonical
    if (options.text && FIELD_KINDS[field] === 'list' && typeof value === 'string' && (canonical as string[])[0] === value) (textFields ??= []).push(field)
    // Text read as text, or as a one-message input or expected output, gives the same cell back; other kinds need the comparison.
    if (!(typeof value === 'string' && TEXT_KINDS.has(FIELD_KINDS[field])) && !givesBack(field, canonical, value, options)) (raw ??= {})[path] = value
  }

  let metadata: JsonObject | undefined
  for (const column in row) {
    if ((resolved.paths.has(column) && taken.includes(column)) || resolved.ignore.includes(column)) continue
    let value: JsonValue | undefined = row[column]
    const paths = takenPaths?.get(column)
    if (paths && value !== undefined) value = withoutPaths(value, paths)
    if (value === undefined || (options.text && value === '') || (value === null && options.nullIsAbsent)) continue
    // The carry column holds what the case has at `metadata.evalferry`: a carry, or a value of its own.
    if (column === CARRY_KEY && typeof value === 'string') value = options.text ? parseCarry(value) : carryOrText(value)
    metadata ??= {}
    metadata[column] = value
  }
  // Canonical fields first, then metadata, as the model lists them.
  if (metadata) c.metadata = metadata
  if (raw) c.extras = { [options.format]: { [RAW]: raw } }
  if (textFields) textCells.set(c, textFields)
  return c
}

/**
 * Kinds whose string cell always gives itself back: text as it is, and an input or expected
 * output read from text as one message of that text, which writing makes that text again.
 */
const TEXT_KINDS = new Set<Kind>(['text', 'input', 'expected'])

/** A typed row's carry may still be JSON text (a Parquet column without its feature); other text is the case's own. */
function carryOrText(text: string): JsonValue {
  if (!text.startsWith('{')) return text
  try {
    const value = parseExact(text).value
    return isCarry(value) ? value : text
  } catch {
    return text
  }
}

function parseCarry(text: string): JsonValue {
  try {
    return parseExact(text).value as JsonValue
  } catch {
    throw fieldError(CARRY_KEY, `expected the JSON text of carried fields, got ${JSON.stringify(text.slice(0, 40))}`)
  }
}

const TEXT_FIELDS = ['id', 'name', 'description', 'conversation_id', 'expected_outcome', 'actual_output', 'scenario', 'user_description', 'chatbot_role', 'comments', 'note']
const TEXT_LIST_FIELDS = ['tags', 'context', 'retrieval_context']
const OBJECT_FIELDS = ['metadata', 'execution', 'persona', 'extras']
const OBJECT_LIST_FIELDS = ['turns', 'rubrics', 'expected_tools', 'tools_called']

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'a list'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/**
 * Checks that `value` has a case's shape where the engine relies on it (a list of messages as
 * `input`, text where text goes, lists and objects where they go), so that a case made by code
 * fails naming the field, not in the engine's words. `who` starts the message:
 * `the row mapper returned`.
 */
export function checkCaseShape(value: unknown, who: string): void {
  if (!isJsonObject(value)) throw fieldError('', `${who} ${kindOf(value)}; expected a case (an object with input, expected_output…)`)
  const wrong = (field: string, expected: string): never => {
    const got = value[field]
    throw fieldError(field, Array.isArray(got) ? `${who} a list, but not ${expected}` : `${who} ${kindOf(got)}; expected ${expected}`)
  }
  const input = value.input
  if (input !== undefined) {
    const messages = Array.isArray(input) && input.every((m) => isJsonObject(m) && (typeof m.content === 'string' || Array.isArray(m.content)))
    if (!messages || (input.length > 0 && !isMessageList(input))) wrong('input', 'a list of messages ({role, content}; role system, user, assistant or tool)')
  }
  for (const field of TEXT_FIELDS) if (value[field] !== undefined && typeof value[field] !== 'string') wrong(field, 'text')
  for (const field of TEXT_LIST_FIELDS) {
    const v = value[field]
    if (v !== undefined && !(Array.isArray(v) && v.every((x) => typeof x === 'string'))) wrong(field, 'a list of texts')
  }
  const split = value.split
  if (split !== undefined && typeof split !== 'string' && !(Array.isArray(split) && split.every((x) => typeof x === 'string'))) wrong('split', 'text or a list of texts')
  for (const field of OBJECT_FIELDS) if (value[field] !== undefined && !isJsonObject(value[field])) wrong(field, 'an object')
  for (const field of OBJECT_LIST_FIELDS) {
    const v = value[field]
    if (v !== undefined && !(Array.isArray(v) && v.every(isJsonObject))) wrong(field, 'a list of objects')
  }
  for (const field of ['token_cost', 'completion_time']) if (value[field] !== undefined && typeof value[field] !== 'number') wrong(field, 'a number')
}

/**
 * Rows to cases with `map`: a function is called as it is; a field mapping (or none: the
 * well-known names) is resolved against `columns` (the table's header; a JSON row's own keys when
 * absent) and applied.
 */
export function mapRow(
  row: JsonObject,
  map: FieldMapping | RowMapper | undefined,
  options: RowReadOptions,
): EvalCase | EvalCase[] {
  if (isRowMapper(map)) {
    const made = map(row)
    for (const c of Array.isArray(made) ? made : [made]) checkCaseShape(c, 'the row mapper returned')
    return made
  }
  const columns = options.columns?.length ? options.columns : Object.keys(row)
  const resolved = resolvedFor(columns, map)
  // A table's header is every row's: a mapped column it lacks is a mistake in the mapping, said once, not a fault of every row.
  if (options.header && resolved.absent.length) {
    const [field, path] = resolved.absent[0]!
    throw new UsageError(`--map ${field}=${path}: the table has no column "${columnOf(path, columns)}" (its columns: ${columns.join(', ')})`)
  }
  return rowToCase(row, resolved, options)
}

/**
 * The last headers each mapping (or none) was resolved against, and the results: rows of one table
 * share one. Several are kept, the last met first: reading a table and checking what is written
 * alternate, and the rows written (hf JSON Lines, say) have keys of their own, a row with an empty
 * cell or a carry column another header. With four kept, a CSV table of 100 MB whose rows were
 * written under five resolved the mapping again for one row in ten, a twentieth of its time.
 */
const lastResolved = new WeakMap<FieldMapping, { columns: string[]; resolved: ResolvedMapping }[]>()
const NO_MAP: FieldMapping = {}
const KEPT_HEADERS = 16

/** How many times a header was resolved, not found among those kept. */
export const mappingStats = { resolved: 0 }

/** `resolveMapping`, resolved once per table rather than once per row. */
export function resolvedFor(columns: readonly string[], map: FieldMapping | undefined): ResolvedMapping {
  const key = map ?? NO_MAP
  let kept = lastResolved.get(key)
  if (!kept) lastResolved.set(key, (kept = []))
  for (let i = 0; i < kept.length; i++) {
    const last = kept[i]!
    if (!sameColumns(last.columns, columns)) continue
    // The header met last is looked at first next time.
    if (i > 0) kept.copyWithin(1, 0, i)[0] = last
    return last.resolved
  }
  const resolved = resolveMapping(columns, map)
  mappingStats.resolved++
  kept.unshift({ columns: [...columns], resolved })
  if (kept.length > KEPT_HEADERS) kept.pop()
  return resolved
}

function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

// ---------------------------------------------------------------------------------------------
// writing

/** Whether `input` reads back from a plain `input` column (one user message of text, or one JSON value). */
function plainInput(input: Message[], options: RowOptions): boolean {
  if (singleText(input, 'user') !== undefined) return true
  if (options.text) return false
  const cell = fieldToCell('input', input, options)
  return !isMessageList(cell)
}

/**
 * The header a case would be written under when no table header travels with it: the canonical
 * fields it holds by their own names (a chat as `messages`), its metadata keys, then `evalferry`
 * when it carries anything. Reading that header gives the same fields back without a mapping.
 */
export function defaultColumns(c: EvalCase, options: RowOptions): string[] {
  const columns: string[] = []
  const has = (f: string): boolean => (c as Record<string, unknown>)[f] !== undefined
  const chat = c.input !== undefined && !plainInput(c.input, options)
  const after: string[] = []
  for (const field of MAPPED_FIELDS) {
    const into = AFTER_METADATA.has(field) ? after : columns
    if (field === 'messages') {
      if (chat) into.push('messages')
    } else if (field === 'input') {
      if (c.input !== undefined && !chat) into.push('input')
    } else if (field === 'expected_output') {
      if (has(field) && !(chat && isMessageList(c.expected_output))) into.push(field)
    } else if (has(field)) into.push(field)
  }
  for (const key of Object.keys(c.metadata ?? {})) if (!isReserved(key)) columns.push(key)
  columns.push(...after)
  if (c.metadata?.[CARRY_KEY] !== undefined) columns.push(CARRY_KEY)
  return columns
}

/**
 * `header` and, before any carry column, the metadata keys of `c` that it lacks: a JSON Lines row
 * keeps the keys of its own that the file's first row did not have, where a table's header is fixed.
 */
export function withOwnColumns(header: string[], c: EvalCase): string[] {
  const keys = Object.keys(c.metadata ?? {})
  if (!keys.length) return header
  // Sets, not lists: a wide table has thousands of columns, each looked up on every row.
  const columns = new Set(header)
  let out = header
  for (const key of keys) {
    if (isReserved(key) || columns.has(key)) continue
    if (out === header) out = header.filter((column) => column !== CARRY_KEY)
    out.push(key)
  }
  if (out !== header && columns.has(CARRY_KEY)) out.push(CARRY_KEY)
  return out
}

/** Where a column sits in a default header: canonical fields in order, metadata between them. */
function rank(column: string): number {
  if (column === CARRY_KEY) return MAPPED_FIELDS.length + 1
  const i = MAPPED_FIELDS.indexOf(column as MappedField)
  if (i !== -1) return AFTER_METADATA.has(column) ? MAPPED_FIELDS.length - AFTER_METADATA.size + i : i
  return MAPPED_FIELDS.indexOf('chatbot_role') + 0.5
}

/** The header of several cases written together with default headers: their union, in default order. */
export function unionColumns(headers: Iterable<readonly string[]>): string[] {
  const union = new Set<string>()
  for (const header of headers) for (const column of header) union.add(column)
  let seen = [...union]
  // With a chat column, plain inputs and answers are written as a chat too, as reading expects.
  if (seen.includes('messages')) seen = seen.filter((c) => c !== 'input' && c !== 'expected_output')
  return seen.map((column, i) => ({ column, i })).sort((a, b) => rank(a.column) - rank(b.column) || a.i - b.i).map((x) => x.column)
}

/**
 * True when `columns` is a header that default headers give: canonical names in order, metadata
 * columns between them, `evalferry` last. Such a header need not travel with the cases: writing
 * them again without it gives it back. Any other header (its own names, its own order) does.
 */
export function isDefaultHeader(columns: readonly string[]): boolean {
  for (let i = 1; i < columns.length; i++) if (rank(columns[i - 1]!) > rank(columns[i]!)) return false
  const chat = columns.includes('messages')
  // An alias column would be read as its field, and with `messages` an `input` column is metadata.
  return columns.every((c) => isMappedField(c) || !isReserved(c)) && !(chat && columns.includes('input'))
}

/**
 * One case to a row under `header` (a source table's header and the mapping it was read with, or
 * a default header). Cells for the header's columns come from the fields and metadata keys that
 * reading the header would fill them from; a value a source cell held in another form (a number
 * id, `["a", "b"]` with spaces) is written as it was. Every header column gets a cell (absent:
 * `''` in text, null otherwise, when `fill` is set); the rest of the case is left out, for the
 * case encoder to carry under `evalferry`.
 */
export function caseToRow(
  c: EvalCase,
  header: readonly string[],
  options: RowWriteOptions,
): JsonObject {
  const resolved = resolvedFor(header, options.map)
  const raw = ownExtras(c, options.format)?.[RAW]
  const rawCells = isJsonObject(raw) ? raw : {}
  const source = c as Record<string, unknown>
  const values: JsonObject = {}
  const taken = new Set<string>()

  for (const [field, path] of resolved.fields) {
    const literal = header.includes(path)
    taken.add(columnOf(path, header))
    let canonical: unknown
    if (field === 'messages') {
      if (c.input === undefined && !isMessageList(c.expected_output)) continue
      canonical = [...(c.input ?? []), ...(isMessageList(c.expected_output) ? c.expected_output : [])]
    } else canonical = source[field]
    const before = own(rawCells, path)
    // A text table writes text: a typed source value (a number id) cannot stand in a cell as it was.
    if (before !== undefined && (!options.text || typeof before === 'string') && readsAs(field, before, canonical, options)) {
      setPath(values, path, before, literal)
      continue
    }
    if (canonical === undefined) continue
    setPath(values, path, fieldToCell(field, canonical, options), literal)
  }

  const metadata = c.metadata ?? {}
  for (const column of header) {
    if (resolved.ignore.includes(column)) continue
    let value = own(metadata, column)
    if (value === undefined) continue
    if (column === CARRY_KEY) {
      if (options.text) value = stringifyJson(value)
    } else if (isJsonObject(own(values, column)) && isJsonObject(value)) {
      // A column a dotted path reached into: the mapped keys join the rest of its object.
      value = { ...value, ...(values[column] as JsonObject) }
    } else {
      if (taken.has(column) && own(values, column) !== undefined) continue
      if (options.text && typeof value !== 'string') value = stringifyJson(value)
      if (taken.has(column) && !leftToMetadata(resolved, column, value, options)) continue
    }
    values[column] = value
  }

  const row: JsonObject = {}
  for (const column of header) {
    const value = own(values, column)
    if (value !== undefined) row[column] = value
    else if (options.fill) row[column] = options.text ? '' : null
  }
  return row
}

/**
 * Whether reading `cell` in `column` gives it to the metadata under the column's name, as a cell
 * that the field a well-known name gives the column cannot take (`[1, 2]` in `context`).
 */
function leftToMetadata(resolved: ResolvedMapping, column: string, cell: JsonValue, options: RowOptions): boolean {
  const field = resolved.fields.find(([, path]) => path === column)?.[0]
  return field !== undefined && !resolved.explicit.has(field) && !isAbsent(cell, options) && cellToField(field, cell, options) === undefined
}

/** Whether the source cell `before` still reads as `canonical` (so writing it keeps the source's form). */
function readsAs(field: MappedField, before: JsonValue, canonical: unknown, options: RowOptions): boolean {
  if (before === null || (options.text && before === '')) return canonical === undefined
  if (canonical === undefined) return false
  const back = cellToField(field, before, options)
  return deepEqual(back, canonical)
}
