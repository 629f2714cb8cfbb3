/**
 * DeepEval goldens and test cases, single- and multi-turn, as `EvaluationDataset.save_as` writes
 * them (JSON, JSON Lines, CSV) and as Confident AI's API spells them (camelCase keys in
 * `{finalized, version?, goldens | conversationalGoldens}`, read, and written as save_as writes
 * them: DeepEval's loaders read no other), plus the older forms DeepEval's own loaders still read
 * (turns as JSON text, missing columns, tool calls with an `input` key).
 *
 * Canonical mapping: `input` is one user message and `expected_output` one assistant message
 * (older multimodal lists become text and `image` blocks); `additional_metadata` (test cases:
 * `metadata`) is `metadata`; tool calls' `inputParameters` is `arguments`. What has no canonical
 * field (`source_file`, `custom_column_key_values`, MCP servers and case-level MCP calls, unknown
 * keys) stays in `extras.deepeval` under its own key and is written back.
 *
 * Markers in `extras.deepeval` (per record, per turn, per tool call, per persona), written only
 * where the source differs from what this adapter would write anyway:
 * - `$keys`: the keys as the record wrote them, in order (absent vs null, camelCase, aliases);
 * - `$form`: a list written joined with `|` where the container holds lists, or the other way
 *   round; `'text'` for turns or a tool-call list written as a JSON string;
 * - `$text`: the exact text of a cell (CSV) or string (turns) whose value re-serialised
 *   differently (other spacing, escaped non-ASCII, a Python literal); used again while the value is unchanged;
 * - `$image`: older `MLLMImage` objects by position, used again while the URL is unchanged;
 * - `$columns`: on the first case of a CSV file, its columns when they are not save_as's.
 *
 * Arena test cases (`{contestants: [{name, test_case, hyperparameters?}]}`) read as one case per
 * contestant with `metadata.arena = {group, contestant, hyperparameters?}`; consecutive cases of one
 * group are written back as one arena record (in CSV, as plain test cases that keep that metadata).
 */
import { extrasOf, fieldChecks, pandasReadsAs, under, warnPandasMissing } from './fields.ts'
import { deepEqual } from '../src/carry.ts'
import { parseExact, stringifyJson } from '../src/codecs/json.ts'
import { parsePythonLiteral } from '../src/codecs/python-literal.ts'
import { fieldError } from '../src/errors.ts'
import {
  CARRY_KEY,
  contentText,
  holdsContent,
  textOrJson,
  isJsonObject,
  isMessageList,
  singleText,
  type ContentBlock,
  type EvalCase,
  type JsonObject,
  type JsonValue,
  type Message,
  type Persona,
  type Role,
  type ToolCall,
  type Turn,
} from '../src/model.ts'
import type { Adapter, Container, DecodeContext, EncodeContext, FileLayout, SniffSample } from './types.ts'

const FORMAT = 'deepeval'
/** pandas reads an empty input cell as missing, and the golden it makes fails its own validation, taking the file with it. */
const CSV_INPUT_REFUSED = "which DeepEval's CSV loader reads as a missing input, and so refuses the whole file"
/** What follows, for a golden's CSV row, from an input cell pandas reads as missing (`NA`). */
const MISSING_INPUT = { input: "; DeepEval's CSV loader refuses the whole file over a missing input" }
const { describeType, expectString, expectObject } = fieldChecks()
const { toExtraKey, fromExtraKey, ownExtras: own, setExtras: withExtras } = extrasOf(FORMAT)
const KEYS = '$keys'
const FORM = '$form'
const TEXT = '$text'
const IMAGE = '$image'
const COLUMNS = '$columns'

type Kind = 'single' | 'multi'

/** The keys of one kind of object: those save_as always writes, those written only when set. */
interface Shape {
  always: readonly string[]
  optional: readonly string[]
  /** Known keys never written unless the source had them (persona in CSV). */
  hidden?: readonly string[]
  /** Other spellings of a key, to the written name. */
  aliases: Readonly<Record<string, string>>
  /** The camelCase spelling of a written name (Confident AI's API shape). */
  camel?: Readonly<Record<string, string>>
}

/** The camelCase spelling of each save_as name that has one: Confident AI's API spelling. */
export const CAMEL: Record<string, string> = {
  actual_output: 'actualOutput',
  expected_output: 'expectedOutput',
  retrieval_context: 'retrievalContext',
  additional_metadata: 'additionalMetadata',
  tools_called: 'toolsCalled',
  expected_tools: 'expectedTools',
  source_file: 'sourceFile',
  custom_column_key_values: 'customColumnKeyValues',
  token_cost: 'tokenCost',
  completion_time: 'completionTime',
  expected_outcome: 'expectedOutcome',
  user_description: 'userDescription',
  chatbot_role: 'chatbotRole',
  mcp_servers: 'mcpServers',
  mcp_tools_called: 'mcpToolsCalled',
  mcp_resources_called: 'mcpResourcesCalled',
  mcp_prompts_called: 'mcpPromptsCalled',
}

const RECORD_ALIASES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(CAMEL).map(([snake, camel]) => [camel, snake])),
  // test cases call it `metadata`; the `expected` key is what some hand-written files use
  metadata: 'additional_metadata',
  expected: 'expected_output',
}

const SINGLE: Shape = {
  always: [
    'input', 'actual_output', 'expected_output', 'retrieval_context', 'context', 'name', 'comments',
    'source_file', 'tools_called', 'expected_tools', 'additional_metadata', 'custom_column_key_values',
  ],
  optional: ['token_cost', 'completion_time', 'tags', 'mcp_servers', 'mcp_tools_called', 'mcp_resources_called', 'mcp_prompts_called'],
  aliases: RECORD_ALIASES,
  camel: CAMEL,
}

const MULTI: Shape = {
  always: [
    'scenario', 'turns', 'expected_outcome', 'user_description', 'persona', 'context', 'name', 'comments',
    'additional_metadata', 'custom_column_key_values',
  ],
  optional: ['chatbot_role', 'tags', 'mcp_servers'],
  aliases: RECORD_ALIASES,
  camel: CAMEL,
}

/** save_as writes no persona column in CSV. */
const MULTI_CSV: Shape = { ...MULTI, always: MULTI.always.filter((k) => k !== 'persona'), hidden: ['persona'] }

const TURN: Shape = {
  always: ['role', 'content', 'user_id', 'retrieval_context', 'tools_called', 'mcp_tools_called', 'mcp_resources_called', 'mcp_prompts_called', 'metadata'],
  optional: [],
  aliases: {
    userId: 'user_id',
    retrievalContext: 'retrieval_context',
    toolsCalled: 'tools_called',
    mcpToolsCalled: 'mcp_tools_called',
    mcpResourcesCalled: 'mcp_resources_called',
    mcpPromptsCalled: 'mcp_prompts_called',
    additional_metadata: 'metadata', // before DeepEval 3.9.9
    additionalMetadata: 'metadata',
  },
}

const TOOL: Shape = {
  always: [],
  optional: ['name', 'type', 'description', 'reasoning', 'output', 'inputParameters'],
  // `input` is what some Confident AI exports hold
  aliases: { input_parameters: 'inputParameters', input: 'inputParameters' },
}

const PERSONA: Shape = { always: [], optional: ['name', 'characteristics'], aliases: {} }

/** Record fields whose CSV cell is JSON text. */
const JSON_CELLS = new Set([
  'turns', 'persona', 'tools_called', 'expected_tools', 'additional_metadata', 'custom_column_key_values',
  'mcp_servers', 'mcp_tools_called', 'mcp_resources_called', 'mcp_prompts_called',
])

/** Record fields with no canonical home: kept in `extras.deepeval` under their own name. */
const EXTRA_FIELDS = ['source_file', 'custom_column_key_values', 'mcp_servers', 'mcp_tools_called', 'mcp_resources_called', 'mcp_prompts_called']

const DELIMITER = '|'

// ---------------------------------------------------------------------------------------------
// keys and extras

function shapeOf(kind: Kind, container: Container): Shape {
  if (kind === 'single') return SINGLE
  return container === 'csv' ? MULTI_CSV : MULTI
}

/** Each shape's keys and their other spellings, to the written names: looked up for every key of every record. */
const writtenNames = new WeakMap<Shape, Map<string, string>>()

/** The written name of a source key, or undefined for a key this shape does not know. */
function resolveKey(shape: Shape, key: string): string | undefined {
  let names = writtenNames.get(shape)
  if (!names) {
    names = new Map()
    for (const name of [...shape.always, ...shape.optional, ...(shape.hidden ?? [])]) names.set(name, name)
    for (const [alias, name] of Object.entries(shape.aliases)) if (!names.has(alias) && names.get(name) === name) names.set(alias, name)
    writtenNames.set(shape, names)
  }
  return names.get(key)
}

function objectOf(value: JsonValue | undefined): JsonObject {
  return isJsonObject(value) ? value : {}
}

function stringsOf(value: JsonValue | undefined): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined
}

/** Sets a marker entry (`$form.context = 'list'`) in extras. */
function mark(extras: JsonObject, marker: string, field: string, value: JsonValue): void {
  const entries = objectOf(extras[marker])
  entries[field] = value
  extras[marker] = entries
}

interface Split {
  /** Written name to the source key and value; null (and, in CSV, empty) values are left out. */
  fields: Map<string, { key: string; value: JsonValue }>
  unknown: [string, JsonValue][]
}

/**
 * The written name of each of `keys`, or undefined for a key the shape does not know or whose name
 * an earlier key took (an alias beside its name), kept for the last few key lists each shape was
 * given: the records of a file name the same keys in the same order, and so do the records written
 * from them, which are read back to check them.
 */
function namesOf(shape: Shape, keys: string[]): (string | undefined)[] {
  let kept = keptNames.get(shape)
  if (!kept) keptNames.set(shape, (kept = []))
  for (const entry of kept) if (entry.keys.length === keys.length && entry.keys.every((key, i) => key === keys[i])) return entry.names
  const seen = new Set<string>()
  const names = keys.map((key) => {
    const name = resolveKey(shape, key)
    if (name === undefined || seen.has(name)) return undefined
    seen.add(name)
    return name
  })
  kept.unshift({ keys, names })
  if (kept.length > KEPT_KEY_LISTS) kept.pop()
  return names
}

const keptNames = new WeakMap<Shape, { keys: string[]; names: (string | undefined)[] }[]>()
const KEPT_KEY_LISTS = 4

function splitKeys(shape: Shape, record: JsonObject, blankIsAbsent: boolean): Split {
  const split: Split = { fields: new Map(), unknown: [] }
  const keys = Object.keys(record)
  const names = namesOf(shape, keys)
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!
    const value = record[key]!
    const name = names[i]
    if (name === undefined) {
      split.unknown.push([key, value])
      continue
    }
    if (value === null || (blankIsAbsent && value === '')) continue
    split.fields.set(name, { key, value })
  }
  return split
}

/** The keys this adapter writes for an object whose set fields are `present`. */
function defaultKeys(shape: Shape, present: (name: string) => boolean): string[] {
  return [...shape.always, ...shape.optional.filter(present)]
}

/** Remembers the source's keys when they differ from what would be written. */
function rememberKeys(shape: Shape, record: JsonObject, split: Split, extras: JsonObject): void {
  const keys = Object.keys(record)
  const expected = defaultKeys(shape, (name) => split.fields.get(name)?.key === name)
  if (keys.length !== expected.length || keys.some((k, i) => k !== expected[i])) extras[KEYS] = keys
}

/** Unknown source keys into extras; a null one needs no entry, since `$keys` brings it back. */
function keepUnknown(split: Split, extras: JsonObject): void {
  for (const [key, value] of split.unknown) if (value !== null) extras[toExtraKey(key)] = value
}

/** The camelCase spellings of a shape's names, looked up for every key of every record. */
const camelSpellings = new WeakMap<Readonly<Record<string, string>>, Set<string>>()

function camelNames(camel: Readonly<Record<string, string>>): Set<string> {
  let names = camelSpellings.get(camel)
  if (!names) camelSpellings.set(camel, (names = new Set(Object.values(camel))))
  return names
}

/**
 * The object to write: the remembered keys in their order (null where the value is unset), else
 * the shape's keys; then set fields the source did not have, then unknown keys from extras.
 */
function assemble(shape: Shape, values: Record<string, JsonValue | undefined>, extras: JsonObject): JsonObject {
  const out: JsonObject = {}
  const used = new Set<string>()
  const keys = stringsOf(extras[KEYS])
  const camel = shape.camel
  const camelCase = keys !== undefined && camel !== undefined && keys.some((k) => camelNames(camel).has(k))
  if (keys) {
    for (const key of keys) {
      const name = resolveKey(shape, key)
      if (name !== undefined && !used.has(name)) {
        used.add(name)
        out[key] = values[name] ?? null
      } else {
        out[key] = extras[toExtraKey(key)] ?? null
      }
    }
  } else {
    for (const name of shape.always) {
      used.add(name)
      out[name] = values[name] ?? null
    }
  }
  for (const name of [...shape.always, ...shape.optional, ...(shape.hidden ?? [])]) {
    const value = values[name]
    if (used.has(name) || value === undefined || (shape.hidden?.includes(name) && !keys)) continue
    out[camelCase ? (camel?.[name] ?? name) : name] = value
  }
  for (const [extraKey, value] of Object.entries(extras)) {
    const key = fromExtraKey(extraKey)
    if (key === undefined || Object.hasOwn(out, key) || resolveKey(shape, key) !== undefined) continue
    out[key] = value
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// decoding

function expectList(value: JsonValue, field: string): JsonValue[] {
  if (!Array.isArray(value)) throw fieldError(field, `expected a list, got ${describeType(value)}`)
  return value
}

function expectStrings(value: JsonValue, field: string): string[] {
  return expectList(value, field).map((item, i) => expectString(item, `${field}[${i}]`))
}

/** The text of a CSV cell (or old turns string) as its value; the text is remembered when it re-serialises differently. */
function parseText(text: string, name: string, key: string, extras: JsonObject): JsonValue {
  let value: JsonValue
  try {
    value = readText(text, name)
  } catch (error) {
    throw fieldError(key, (error as Error).message)
  }
  if (pythonJson(value) !== text) mark(extras, TEXT, name, text)
  return value
}

/**
 * Columns DeepEval's CSV loader reads as JSON or, where that fails, as a Python literal
 * (`ast.literal_eval`): a cell pandas wrote from a dict (`{'topic': 'billing', 'ok': True}`).
 */
const LITERAL_COLUMNS = new Set(['additional_metadata', 'custom_column_key_values'])

/** A comma before a closing `]` or `}`, which DeepEval's JSON reading strips when the text does not parse as it is. */
const TRAILING_COMMA = /,\s*([\]}])/g

/** The value of a cell's or string's text, as DeepEval reads that field; an error says why not. */
function readText(text: string, name: string): JsonValue {
  try {
    return parseExact(text).value as JsonValue
  } catch (error) {
    // DeepEval's trimAndLoadJson: stripped, and on failure parsed again without trailing commas.
    const trimmed = text.trim().replace(TRAILING_COMMA, '$1')
    if (trimmed !== text) {
      try {
        return parseExact(trimmed).value as JsonValue
      } catch {
        // told below, as the text was written
      }
    }
    if (!LITERAL_COLUMNS.has(name)) throw new Error(`expected JSON text: ${(error as Error).message}`)
    try {
      return parsePythonLiteral(text)
    } catch (literalError) {
      // The likelier of the two readings names the fault: Python's where the text has its quotes or names.
      const python = /'|\b(?:True|False|None)\b/.test(text)
      throw new Error(python ? `expected a Python literal (as DeepEval reads this column when it is not JSON): ${(literalError as Error).message}` : `expected JSON text: ${(error as Error).message}`)
    }
  }
}

function pythonJson(value: JsonValue): string {
  return stringifyJson(value, { pythonSpacing: true })
}

function splitJoined(text: string): string[] {
  return text === '' ? [] : text.split(DELIMITER)
}

/** Whether DeepEval's split of the list joined with `|` gives it back: no item holds `|`, and it is not one empty item. */
function joinsExactly(items: unknown[]): boolean {
  return items.every((item) => typeof item === 'string' && !item.includes(DELIMITER)) && !(items.length === 1 && items[0] === '')
}

/** Whether the container writes this list field `|`-joined. */
function joinedByDefault(name: string, kind: Kind, container: Container): boolean {
  if (container === 'csv') return true
  return container === 'jsonl' && kind === 'single' && (name === 'context' || name === 'retrieval_context')
}

interface Reader {
  kind: Kind
  container: Container
  extras: JsonObject
}

/** A list of strings, joined or not; a list holding older image objects stays raw in extras. */
function readStrings(r: Reader, name: string, key: string, value: JsonValue): string[] | undefined {
  const joined = joinedByDefault(name, r.kind, r.container)
  if (typeof value === 'string') {
    if (!joined) mark(r.extras, FORM, name, 'joined')
    return splitJoined(value)
  }
  const list = expectList(value, key)
  // A list no join would give back is how JSON Lines is written for it: no mark.
  if (joined && (r.container === 'csv' || joinsExactly(list))) mark(r.extras, FORM, name, 'list')
  if (list.some((item) => isImageObject(item))) {
    list.forEach((item, i) => {
      if (typeof item !== 'string' && !isImageObject(item)) throw fieldError(`${key}[${i}]`, `expected a string or an image, got ${describeType(item)}`)
    })
    r.extras[name] = list
    return undefined
  }
  return expectStrings(list, key)
}

/**
 * A structured field: JSON text in CSV cells, the value itself elsewhere, except tool calls, which
 * DeepEval's JSON Lines loader also takes as JSON text (kept as text when written back).
 */
function readStructured(r: Reader, name: string, key: string, value: JsonValue): JsonValue {
  if (typeof value !== 'string') return value
  if (r.container === 'csv') return parseText(value, name, key, r.extras)
  if (name !== 'tools_called' && name !== 'expected_tools') return value
  mark(r.extras, FORM, name, 'text')
  return parseText(value, name, key, r.extras)
}

function isImageObject(value: JsonValue): value is JsonObject {
  return isJsonObject(value) && (typeof value.url === 'string' || typeof value.dataBase64 === 'string')
}

/** Text, or the older multimodal list of strings and `MLLMImage` objects, as message content. */
function readContent(r: Reader, name: string, key: string, value: JsonValue): Message['content'] {
  if (typeof value === 'string') return value
  // DeepEval's multimodal content: a list of texts and images.
  if (!Array.isArray(value)) throw fieldError(key, `expected a string (or a list of texts and images), got ${describeType(value)}`)
  return value.map((item, i): ContentBlock => {
    if (typeof item === 'string') return { type: 'text', value: item }
    if (!isImageObject(item)) throw fieldError(`${key}[${i}]`, `expected a string or an image {url, local}, got ${describeType(item)}`)
    const value = typeof item.url === 'string' ? item.url : (item.dataBase64 as string)
    const block: ContentBlock = typeof item.mimeType === 'string' ? { type: 'image', value, mime_type: item.mimeType } : { type: 'image', value }
    if (!deepEqual(item, defaultImage(value, block.mime_type))) mark(r.extras, IMAGE, `${name}[${i}]`, item)
    return block
  })
}

function readNumber(r: Reader, name: string, key: string, value: JsonValue): number {
  if (typeof value === 'number') return value
  if (r.container === 'csv' && typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
    const n = Number(value)
    if (String(n) !== value) mark(r.extras, TEXT, name, value)
    return n
  }
  // The JSON readers keep such an integer as its digits: the value may have been a number in the file.
  const huge = typeof value === 'string' && /^-?\d+$/.test(value) && !Number.isSafeInteger(Number(value))
  throw fieldError(key, `expected a number, got ${describeType(value)}${huge ? ' (an integer past 2^53 is read as text, every digit kept, since no number holds it exactly)' : ''}`)
}

function readTools(r: Reader, name: string, key: string, value: JsonValue): ToolCall[] {
  const list = expectList(readStructured(r, name, key, value), key)
  return list.map((item, i) => under(`${key}[${i}]`, () => decodeTool(item)))
}

function decodeTool(value: JsonValue): ToolCall {
  const record = expectObject(value, '')
  const split = splitKeys(TOOL, record, false)
  const extras: JsonObject = {}
  const field = (n: string) => split.fields.get(n)
  const name = field('name')
  if (!name) throw fieldError('name', 'a tool call needs a name')
  const tool: ToolCall = { name: expectString(name.value, name.key) }
  const type = field('type')
  if (type) tool.type = expectString(type.value, type.key)
  const description = field('description')
  if (description) tool.description = expectString(description.value, description.key)
  const reasoning = field('reasoning')
  if (reasoning) tool.reasoning = expectString(reasoning.value, reasoning.key)
  const output = field('output')
  if (output) tool.output = output.value
  const args = field('inputParameters')
  if (args) tool.arguments = args.value
  keepUnknown(split, extras)
  rememberKeys(TOOL, record, split, extras)
  return withExtras(tool, extras)
}

function decodePersona(value: JsonValue): Persona {
  const record = expectObject(value, '')
  const split = splitKeys(PERSONA, record, false)
  const extras: JsonObject = {}
  const persona: Persona = {}
  const name = split.fields.get('name')
  if (name) persona.name = expectString(name.value, name.key)
  const characteristics = split.fields.get('characteristics')
  if (characteristics) persona.characteristics = expectString(characteristics.value, characteristics.key)
  keepUnknown(split, extras)
  rememberKeys(PERSONA, record, split, extras)
  return withExtras(persona, extras)
}

function decodeTurn(value: JsonValue): Turn {
  const record = expectObject(value, '')
  const split = splitKeys(TURN, record, false)
  const extras: JsonObject = {}
  const field = (n: string) => split.fields.get(n)
  const role = field('role')
  if (!role) throw fieldError('role', 'a turn needs a role (user or assistant)')
  if (role.value !== 'user' && role.value !== 'assistant') {
    throw fieldError(role.key, `expected "user" or "assistant", got ${describeType(role.value)}`)
  }
  const content = field('content')
  if (!content) throw fieldError('content', 'a turn needs content')
  const turn: Turn = { role: role.value, content: expectString(content.value, content.key) }
  const userId = field('user_id')
  if (userId) turn.user_id = expectString(userId.value, userId.key)
  const retrieval = field('retrieval_context')
  if (retrieval) turn.retrieval_context = expectStrings(retrieval.value, retrieval.key)
  const tools = field('tools_called')
  if (tools) turn.tools_called = expectList(tools.value, tools.key).map((t, i) => under(`${tools.key}[${i}]`, () => decodeTool(t)))
  for (const name of ['mcp_tools_called', 'mcp_resources_called', 'mcp_prompts_called'] as const) {
    const calls = field(name)
    if (calls) turn[name] = expectList(calls.value, calls.key)
  }
  const metadata = field('metadata')
  if (metadata) turn.metadata = expectObject(metadata.value, metadata.key)
  keepUnknown(split, extras)
  rememberKeys(TURN, record, split, extras)
  return withExtras(turn, extras)
}

function readTurns(r: Reader, key: string, value: JsonValue): Turn[] {
  let list: JsonValue = value
  if (typeof value === 'string') {
    // CSV cells, and JSON files of DeepEval 3.5–3.6.8, hold the turns as JSON text
    if (r.container !== 'csv') mark(r.extras, FORM, 'turns', 'text')
    list = parseText(value, 'turns', key, r.extras)
  }
  return expectList(list, key).map((t, i) => under(`${key}[${i}]`, () => decodeTurn(t)))
}

/** The fields both kinds share, in the canonical case. */
function readCommon(r: Reader, c: EvalCase, split: Split): void {
  for (const [name, { key, value }] of split.fields) {
    switch (name) {
      case 'name':
        c.name = expectString(value, key)
        break
      case 'comments':
        c.comments = expectString(value, key)
        break
      case 'context': {
        const items = readStrings(r, name, key, value)
        if (items) c.context = items
        break
      }
      case 'retrieval_context': {
        const items = readStrings(r, name, key, value)
        if (items) c.retrieval_context = items
        break
      }
      case 'tags': {
        const items = readStrings(r, name, key, value)
        if (items) c.tags = items
        break
      }
      case 'additional_metadata':
        c.metadata = expectObject(readStructured(r, name, key, value), key)
        break
      case 'custom_column_key_values':
        r.extras[name] = expectObject(readStructured(r, name, key, value), key)
        break
      case 'source_file':
        r.extras[name] = expectString(value, key)
        break
      case 'mcp_servers':
      case 'mcp_tools_called':
      case 'mcp_resources_called':
      case 'mcp_prompts_called':
        r.extras[name] = expectList(readStructured(r, name, key, value), key)
        break
    }
  }
}

/**
 * CSV cells are text, so an empty cell under the input column is the empty input (what this
 * adapter writes for a case without one), not a missing input; DeepEval's pandas reader would
 * read NaN there. A record without an input column, or a JSON input that is null or absent, has none.
 */
function blankInput(record: JsonObject, container: Container): { key: string; value: JsonValue } | undefined {
  if (container !== 'csv') return undefined
  const key = Object.keys(record).find((k) => resolveKey(SINGLE, k) === 'input')
  return key !== undefined && (record[key] === '' || record[key] === null) ? { key, value: '' } : undefined
}

function decodeSingle(record: JsonObject, container: Container): EvalCase {
  const extras: JsonObject = {}
  const r: Reader = { kind: 'single', container, extras }
  const split = splitKeys(SINGLE, record, container === 'csv')
  const field = (n: string) => split.fields.get(n)
  const input = field('input') ?? blankInput(record, container)
  if (!input) throw fieldError('input', 'a single-turn golden needs an input (a string)')
  const c: EvalCase = { input: [{ role: 'user', content: readContent(r, 'input', input.key, input.value) }] }
  const actual = field('actual_output')
  if (actual) {
    if (typeof actual.value === 'string') c.actual_output = actual.value
    else if (Array.isArray(actual.value)) extras.actual_output = actual.value // older multimodal list
    else throw fieldError(actual.key, `expected a string, got ${describeType(actual.value)}`)
  }
  const expected = field('expected_output')
  if (expected) c.expected_output = [{ role: 'assistant', content: readContent(r, 'expected_output', expected.key, expected.value) }]
  for (const name of ['tools_called', 'expected_tools'] as const) {
    const tools = field(name)
    if (tools) c[name] = readTools(r, name, tools.key, tools.value)
  }
  for (const name of ['token_cost', 'completion_time'] as const) {
    const n = field(name)
    if (n) c[name] = readNumber(r, name, n.key, n.value)
  }
  readCommon(r, c, split)
  keepUnknown(split, extras)
  if (container !== 'csv') rememberKeys(SINGLE, record, split, extras)
  return withExtras(c, extras)
}

function decodeMulti(record: JsonObject, container: Container): EvalCase {
  const extras: JsonObject = {}
  const r: Reader = { kind: 'multi', container, extras }
  const shape = shapeOf('multi', container)
  const split = splitKeys(shape, record, container === 'csv')
  const c: EvalCase = {}
  for (const [name, { key, value }] of split.fields) {
    if (name === 'scenario') c.scenario = expectString(value, key)
    else if (name === 'turns') c.turns = readTurns(r, key, value)
    else if (name === 'expected_outcome') c.expected_outcome = expectString(value, key)
    else if (name === 'user_description') c.user_description = expectString(value, key)
    else if (name === 'chatbot_role') c.chatbot_role = expectString(value, key)
    else if (name === 'persona') c.persona = under(key, () => decodePersona(readStructured(r, name, key, value)))
  }
  readCommon(r, c, split)
  keepUnknown(split, extras)
  if (container !== 'csv') rememberKeys(shape, record, split, extras)
  return withExtras(c, extras)
}

function decodeArena(record: JsonObject, ctx: DecodeContext): EvalCase[] {
  const contestants = expectList(record.contestants ?? null, 'contestants')
  const group = `arena-${ctx.index + 1}`
  return contestants.map((item, i) =>
    under(`contestants[${i}]`, () => {
      const contestant = expectObject(item, '')
      const name = expectString(contestant.name ?? null, 'name')
      const c = under('test_case', () => decodeSingle(expectObject(contestant.test_case ?? null, ''), ctx.container))
      const arena: JsonObject = { group, contestant: name }
      if (contestant.hyperparameters !== undefined && contestant.hyperparameters !== null) arena.hyperparameters = contestant.hyperparameters
      c.metadata = { ...(c.metadata ?? {}), arena }
      return c
    }),
  )
}

/** Multi-turn: a non-empty scenario, or (test cases) turns without an input. */
function recordKind(record: JsonObject): Kind {
  const scenario = record.scenario
  if (typeof scenario === 'string' && scenario !== '') return 'multi'
  const turns = record.turns
  if (!('input' in record) && turns !== undefined && turns !== null && turns !== '') return 'multi'
  return 'single'
}

const CSV_DEFAULT = { single: SINGLE, multi: MULTI_CSV }

/** True when `columns` are save_as's, followed by optional columns in their order. */
function defaultColumns(shape: Shape, columns: string[]): boolean {
  if (columns.length < shape.always.length || shape.always.some((k, i) => columns[i] !== k)) return false
  let at = 0
  for (const column of columns.slice(shape.always.length)) {
    const found = shape.optional.indexOf(column, at)
    if (found === -1) return false
    at = found + 1
  }
  return true
}

function decode(record: unknown, ctx: DecodeContext): EvalCase | EvalCase[] {
  if (!isJsonObject(record)) throw fieldError('', `expected an object per golden, got ${describeType(record as JsonValue)}`)
  const arena = Array.isArray(record.contestants) && !('input' in record) && !('scenario' in record)
  const kind = arena ? 'single' : recordKind(record)
  const first = ctx.state.deepevalKind
  if (first === undefined) ctx.state.deepevalKind = kind
  else if (first !== kind) {
    throw fieldError(
      'scenario',
      kind === 'multi'
        ? 'a multi-turn golden (it has a scenario) in a file of single-turn goldens; a DeepEval file holds one kind only'
        : 'a single-turn golden (no scenario) in a file of multi-turn goldens; a DeepEval file holds one kind only',
    )
  }
  if (arena) return decodeArena(record, ctx)
  const c = kind === 'multi' ? decodeMulti(record, ctx.container) : decodeSingle(record, ctx.container)
  if (ctx.container === 'csv' && ctx.index === 0) {
    const columns = ctx.columns?.length ? ctx.columns : Object.keys(record)
    if (!defaultColumns(CSV_DEFAULT[kind], columns)) {
      c.extras = { ...c.extras, [FORMAT]: { ...own(c), [COLUMNS]: [...columns] } }
    }
  }
  return c
}

// ---------------------------------------------------------------------------------------------
// encoding

/** A conversation: a case with a scenario or turns, or whose input holds more than one user or assistant message. */
function caseKind(c: EvalCase | undefined): Kind {
  if (!c) return 'single'
  if (c.scenario !== undefined || c.turns !== undefined) return 'multi'
  let said = 0
  for (const m of c.input ?? []) if ((m.role === 'user' || m.role === 'assistant') && ++said > 1) return 'multi'
  return 'single'
}

/** The kind each layout chose for its file, which holds one kind only. */
const fileKinds = new WeakMap<FileLayout, Kind>()

/**
 * The kind of a file: conversational when any of its first cases is a conversation. A conversation
 * written as a golden would lose its earlier turns to DeepEval; a single-turn case written as a
 * conversation of its one turn keeps its input and its criterion, and only its expected output is
 * left to the carry.
 */
function fileKind(sample: EvalCase[]): Kind {
  return sample.some((c) => caseKind(c) === 'multi') ? 'multi' : 'single'
}

/**
 * Input messages as DeepEval turns: the user's and the assistant's, their text; an assistant's tool
 * calls are the turn's, and a tool message's answer the output of the call it answers. A system
 * prompt has no turn (the carry keeps it).
 */
function turnsOf(messages: Message[]): Turn[] {
  const turns: Turn[] = []
  for (const m of messages) {
    if (m.role === 'user' || m.role === 'assistant') {
      const turn: Turn = { role: m.role, content: contentText(m.content) }
      if (m.tool_calls?.length) turn.tools_called = m.tool_calls.map((call) => ({ ...call }))
      turns.push(turn)
    } else if (m.role === 'tool') {
      const call = turns.at(-1)?.tools_called?.find((t) => t.id !== undefined && t.id === m.tool_call_id)
      if (call && call.output === undefined) call.output = contentText(m.content)
    }
  }
  return turns
}

/** A conversation's turns as the messages a single-turn golden takes its input from. */
function messagesOf(turns: Turn[] | undefined): Message[] | undefined {
  return turns?.length ? turns.map((t) => ({ role: t.role, content: t.content })) : undefined
}

/**
 * The scenario a ConversationalGolden requires, for a case without one: its description, else its
 * first user message, else its name or id, else its place in the file.
 */
function scenarioOf(c: EvalCase, turns: Turn[] | undefined, index: number): string {
  const said = turns?.find((t) => t.role === 'user' && t.content !== '')?.content
  for (const text of [c.description, said, c.name, c.id]) if (text !== undefined && text !== '') return text
  return `Conversation ${index + 1}`
}

interface Writer {
  kind: Kind
  container: Container
  extras: JsonObject
  ctx: EncodeContext
  /** Fields the pipeline already carries under `evalferry` (no second warning for them). */
  carried: JsonObject
}

/**
 * A list field in the container's form. A `|` inside an item does not survive DeepEval's split: in
 * JSON Lines, whose loader takes a list as it is, such a list is written as one; in CSV it is warned of.
 */
function writeStrings(w: Writer, name: string, items: string[] | undefined): JsonValue | undefined {
  if (items === undefined) {
    const raw = w.extras[name] // a list with images, kept raw
    return raw === undefined ? undefined : writeStructured(w, name, raw)
  }
  const form = objectOf(w.extras[FORM])[name]
  // Only DeepEval's CSV and JSON Lines readers split a joined list: in JSON it is written as a list, its form carried.
  const joined = w.container === 'csv' || (w.container === 'jsonl' && (form === 'list' ? false : form === 'joined' || joinedByDefault(name, w.kind, w.container)))
  if (!joined || (w.container === 'jsonl' && !joinsExactly(items))) return items
  const piped = items.findIndex((item) => item.includes(DELIMITER))
  if (piped !== -1 && !Object.hasOwn(w.carried, name)) {
    w.ctx.warn(`item ${piped + 1} of ${name} contains "|", which DeepEval splits on when reading; the exact list is carried under evalferry`, name)
  }
  return items.join(DELIMITER)
}

/** JSON text where the container needs it (CSV cells, old-style turns), reusing the source's text. */
function writeStructured(w: Writer, name: string, value: JsonValue | undefined): JsonValue | undefined {
  if (value === undefined) return undefined
  const asText = w.container === 'csv' || objectOf(w.extras[FORM])[name] === 'text'
  if (!asText) return value
  const remembered = objectOf(w.extras[TEXT])[name]
  if (typeof remembered === 'string' && readsAs(remembered, name, value)) return remembered
  return pythonJson(value)
}

/** Whether `text` reads as `value`, read as `parseText` reads it (an integer past 2^53 as its digits). */
function readsAs(text: string, name: string, value: JsonValue): boolean {
  try {
    return deepEqual(readText(text, name), value)
  } catch {
    return false
  }
}

function writeNumber(w: Writer, name: string, n: number | undefined): JsonValue | undefined {
  if (n === undefined) return undefined
  if (w.container !== 'csv') return n
  const remembered = objectOf(w.extras[TEXT])[name]
  return typeof remembered === 'string' && Number(remembered) === n ? remembered : String(n)
}

function writeImage(w: Writer, name: string, index: number, block: { value: string; mime_type?: string }): JsonObject {
  const remembered = objectOf(w.extras[IMAGE])[`${name}[${index}]`]
  if (isImageObject(remembered ?? null)) {
    const r = remembered as JsonObject
    if ((r.url ?? r.dataBase64) === block.value && (block.mime_type === undefined || r.mimeType === block.mime_type)) return r
  }
  return defaultImage(block.value, block.mime_type)
}

/** An image as the older `MLLMImage` wrote it: base64 data with its type, or a URL or local path. */
function defaultImage(value: string, mimeType: string | undefined): JsonObject {
  if (mimeType !== undefined && !/^(https?:|file:|\.{0,2}\/)/.test(value)) return { dataBase64: value, mimeType }
  return { url: value, local: !/^https?:\/\//.test(value) }
}

/** One message of `role` as DeepEval text, or as the older list of text and images. */
function writeMessage(w: Writer, name: string, messages: Message[] | undefined, role: Role): JsonValue | undefined {
  if (messages === undefined) return undefined
  const text = singleText(messages, role)
  if (text !== undefined) return text
  const [only] = messages
  if (
    w.container !== 'csv' &&
    messages.length === 1 &&
    only &&
    only.role === role &&
    Array.isArray(only.content) &&
    Object.keys(only).every((k) => k === 'role' || k === 'content') &&
    only.content.every((b) => b.type === 'text' || b.type === 'image')
  ) {
    return only.content.map((b, i) => (b.type === 'image' ? writeImage(w, name, i, b) : (b.value as string)))
  }
  // Not expressible (several messages, a system prompt): the text of the last message of `role`,
  // and the carry keeps the exact messages.
  const last = [...messages].reverse().find((m) => m.role === role) ?? messages[messages.length - 1]
  return last ? textOrJson(last.content, pythonJson) : ''
}

function writeExpected(w: Writer, expected: EvalCase['expected_output']): JsonValue | undefined {
  if (expected === undefined) return undefined
  if (typeof expected === 'string') return expected
  if (isMessageList(expected)) {
    const messages = expected
    if (messages.some((m) => typeof m.content === 'string' || m.content.some((b) => b.type === 'text'))) return writeMessage(w, 'expected_output', messages, 'assistant')
    // No text to give: a JSON answer as its JSON text, as a structured answer is written; files or
    // images alone are no answer DeepEval reads, so none is written (not an empty one). The carry keeps the blocks.
    const values = messages.flatMap((m) => (m.content as ContentBlock[]).flatMap((b) => (b.type === 'json' ? [b.value] : [])))
    return values.length === 0 ? undefined : pythonJson(values.length === 1 ? values[0]! : values)
  }
  // A structured answer has no DeepEval form: its JSON text, with the value carried exactly.
  return pythonJson(expected as JsonValue)
}

function encodeTool(tool: ToolCall): JsonObject {
  const values: Record<string, JsonValue | undefined> = {
    name: tool.name,
    // DeepEval's ToolCall takes only its own types (an OpenAI call's "function" fails its validation); another is carried.
    type: tool.type === 'FUNCTION' || tool.type === 'MCP' ? tool.type : undefined,
    description: tool.description,
    reasoning: tool.reasoning,
    output: tool.output,
    // DeepEval's input_parameters is a dict (or None): other arguments (text, a list) are carried.
    inputParameters: isJsonObject(tool.arguments) || tool.arguments === null ? tool.arguments : undefined,
  }
  return assemble(TOOL, values, own(tool))
}

function writeTools(w: Writer, name: string, tools: ToolCall[] | undefined): JsonValue | undefined {
  return tools === undefined ? undefined : writeStructured(w, name, tools.map(encodeTool))
}

function encodePersona(persona: Persona): JsonObject {
  return assemble(PERSONA, { name: persona.name, characteristics: persona.characteristics }, own(persona))
}

function encodeTurn(turn: Turn): JsonObject {
  const values: Record<string, JsonValue | undefined> = {
    role: turn.role,
    content: turn.content,
    user_id: turn.user_id,
    retrieval_context: turn.retrieval_context,
    tools_called: turn.tools_called?.map(encodeTool),
    mcp_tools_called: turn.mcp_tools_called,
    mcp_resources_called: turn.mcp_resources_called,
    mcp_prompts_called: turn.mcp_prompts_called,
    metadata: turn.metadata,
  }
  return assemble(TURN, values, own(turn))
}

/**
 * The case's metadata, with its carry. A record whose remembered `$keys` have no
 * `additional_metadata` gets that key for the carry alone, and reading it back would remember it
 * (as null, once the carry is taken off): so the carry then also takes the case's own extras,
 * whose `$keys` leave the key out again.
 */
function metadataOf(c: EvalCase, w: Writer): JsonObject | undefined {
  const carry = c.metadata?.[CARRY_KEY]
  const keys = stringsOf(w.extras[KEYS])
  if (w.container === 'csv' || !isJsonObject(carry) || keys === undefined) return c.metadata
  const shape = shapeOf(w.kind, w.container)
  const extras = objectOf(carry.extras)
  if (keys.some((k) => resolveKey(shape, k) === 'additional_metadata') || extras[FORMAT] !== undefined) return c.metadata
  return { ...c.metadata, [CARRY_KEY]: { ...carry, extras: { ...extras, [FORMAT]: w.extras } } }
}

/**
 * `extras` with the record's remembered keys in snake_case: the camelCase spelling is Confident AI's
 * JSON, and DeepEval's loaders take only save_as's names (the spelling is carried).
 */
function snakeKeys(shape: Shape, extras: JsonObject): JsonObject {
  const keys = stringsOf(extras[KEYS])
  const camel = shape.camel
  if (keys === undefined || camel === undefined || !keys.some((k) => camelNames(camel).has(k))) return extras
  return { ...extras, [KEYS]: keys.map((k) => (camelNames(camel).has(k) ? (resolveKey(shape, k) ?? k) : k)) }
}

/** The value of every known field of the record, in the container's form; undefined when unset. */
function recordValues(c: EvalCase, w: Writer): Record<string, JsonValue | undefined> {
  const x = w.extras
  const values: Record<string, JsonValue | undefined> = {
    context: writeStrings(w, 'context', c.context),
    name: c.name,
    comments: c.comments,
    additional_metadata: writeStructured(w, 'additional_metadata', metadataOf(c, w)),
    tags: writeStrings(w, 'tags', c.tags),
  }
  for (const name of EXTRA_FIELDS) {
    const value = x[name]
    values[name] = name === 'source_file' || value === undefined ? value : writeStructured(w, name, value)
  }
  if (w.kind === 'single') {
    // A golden's input is required: a case without one (a scenario of its own, say) is written with an empty one.
    // A conversation of turns alone (in a file of goldens) gives its last user turn.
    const input = c.input ?? messagesOf(c.turns)
    if (input === undefined) {
      // pandas reads an empty cell as missing, and the golden refuses it there too.
      const written = w.container === 'csv' ? `as an empty cell, ${CSV_INPUT_REFUSED}` : 'as ""'
      w.ctx.warn(`the case has no input, which a DeepEval golden requires: written ${written}`, 'input')
    }
    values.input = writeMessage(w, 'input', input, 'user') ?? ''
    if (input !== undefined && values.input === '') {
      if (w.container === 'csv') w.ctx.warn(`the input is empty: written as an empty cell, ${CSV_INPUT_REFUSED}`, 'input')
      else if (holdsContent(input)) w.ctx.warn('the input holds no text, only files, which a DeepEval golden cannot take: written as ""', 'input')
    }
    values.actual_output = c.actual_output ?? (x.actual_output === undefined ? undefined : writeStructured(w, 'actual_output', x.actual_output))
    values.expected_output = writeExpected(w, c.expected_output)
    values.retrieval_context = writeStrings(w, 'retrieval_context', c.retrieval_context)
    values.tools_called = writeTools(w, 'tools_called', c.tools_called)
    values.expected_tools = writeTools(w, 'expected_tools', c.expected_tools)
    values.token_cost = writeNumber(w, 'token_cost', c.token_cost)
    values.completion_time = writeNumber(w, 'completion_time', c.completion_time)
  } else {
    // A conversation of input messages gives its turns, and a scenario, which a ConversationalGolden requires.
    const derived = c.turns === undefined && c.input !== undefined ? turnsOf(c.input) : undefined
    const turns = c.turns ?? (derived?.length ? derived : undefined)
    values.scenario = c.scenario ?? (c.turns === undefined ? scenarioOf(c, turns, w.ctx.index) : undefined)
    values.turns = writeStructured(w, 'turns', turns?.map(encodeTurn))
    values.expected_outcome = c.expected_outcome
    // A CSV has no persona column: DeepEval's reader takes the simulated user from user_description,
    // which DeepEval itself keeps equal to the persona's characteristics.
    values.user_description = c.user_description ?? (w.container === 'csv' ? c.persona?.characteristics : undefined)
    values.persona = c.persona === undefined ? undefined : writeStructured(w, 'persona', encodePersona(c.persona))
    values.chatbot_role = c.chatbot_role
  }
  return values
}

/** A CSV cell: text as is, anything else as JSON text. */
function cell(value: JsonValue | undefined): JsonValue {
  if (value === undefined || value === null) return null
  return typeof value === 'string' ? value : pythonJson(value)
}

function encode(c: EvalCase, ctx: EncodeContext): JsonObject {
  const own_ = caseKind(c)
  const kind = (ctx.layout && fileKinds.get(ctx.layout)) ?? own_
  let extras = own(c)
  if (own_ !== kind) {
    // The other kind's record: its keys are not this kind's (the carry keeps how it was spelled).
    if (extras[KEYS] !== undefined) {
      extras = { ...extras }
      delete extras[KEYS]
    }
    ctx.warn(
      kind === 'multi'
        ? 'a single-turn case in a file of conversations (a DeepEval file holds one kind only): written as a ConversationalGolden of its turn, its expected output carried under evalferry'
        : 'a conversation in a file of single-turn goldens (a DeepEval file holds one kind only, chosen by its first cases): written as the golden of its last user message, the conversation carried under evalferry',
      kind === 'multi' ? 'input' : 'turns',
    )
  }
  const w: Writer = { kind, container: ctx.container, extras, ctx, carried: objectOf(c.metadata?.[CARRY_KEY]) }
  const values = recordValues(c, w)
  const shape = shapeOf(kind, ctx.container)
  if (ctx.container !== 'csv') return assemble(shape, values, snakeKeys(shape, w.extras))
  const columns = ctx.layout?.columns ?? csvColumns(kind, [c])
  const record: JsonObject = {}
  const used = new Set<string>()
  for (const column of columns) {
    const name = resolveKey(shape, column)
    if (name !== undefined && !used.has(name)) {
      used.add(name)
      record[column] = cell(values[name])
    } else {
      record[column] = cell(w.extras[toExtraKey(column)])
    }
  }
  warnPandasMissing(record, ctx, "DeepEval's CSV reader", kind === 'single' ? MISSING_INPUT : undefined)
  return record
}

/** The arena a case is a contestant of; a CSV row holds no contestants, so there it is a plain test case. */
function arenaGroup(c: EvalCase, container: Container): string | undefined {
  const arena = c.metadata?.arena
  if (container === 'csv' || !isJsonObject(arena) || typeof arena.group !== 'string' || typeof arena.contestant !== 'string') return undefined
  return arena.group
}

/** The contestants of one arena as the record they were read from. */
function encodeArena(cases: EvalCase[], ctx: EncodeContext): JsonObject {
  const contestants = cases.map((c): JsonObject => {
    const arena = c.metadata?.arena as JsonObject
    const metadata = { ...c.metadata }
    delete metadata.arena
    const testCase: EvalCase = { ...c }
    if (Object.keys(metadata).length) testCase.metadata = metadata
    else delete testCase.metadata
    const out: JsonObject = { name: arena.contestant as string, test_case: encode(testCase, ctx) }
    if (arena.hyperparameters !== undefined) out.hyperparameters = arena.hyperparameters
    return out
  })
  return { contestants }
}

function hasField(c: EvalCase, name: string): boolean {
  const value = (c as Record<string, unknown>)[name]
  return value !== undefined || own(c)[name] !== undefined
}

/** save_as's columns, then optional and unknown columns that the sample's cases use. */
function csvColumns(kind: Kind, sample: EvalCase[]): string[] {
  const shape = CSV_DEFAULT[kind]
  // A set keeps the order they come in: a wide table's sample has thousands of columns in each case.
  const columns = new Set([...shape.always, ...shape.optional.filter((name) => sample.some((c) => hasField(c, name)))])
  for (const c of sample) {
    for (const extraKey of Object.keys(own(c))) {
      const key = fromExtraKey(extraKey)
      if (key !== undefined && resolveKey(shape, key) === undefined) columns.add(key)
    }
  }
  return [...columns]
}

/** The text columns of a golden, as its CSV row holds them. */
const TEXT_COLUMNS: [string, (c: EvalCase) => unknown][] = [
  ['input', (c) => (c.input ? singleText(c.input, 'user') : undefined)],
  ['expected_output', (c) => (isMessageList(c.expected_output) ? singleText(c.expected_output, 'assistant') : c.expected_output)],
  ['actual_output', (c) => c.actual_output],
  ['name', (c) => c.name],
  ['comments', (c) => c.comments],
  // Golden's source_file is text too: a column of 7 and 8 fails its validation.
  ['source_file', (c) => c.extras?.deepeval?.source_file],
]

/**
 * A text column whose every cell among the first cases is one pandas (DeepEval's CSV reader) reads
 * as a number or a boolean is read as numbers or booleans, which DeepEval's text fields refuse, and
 * its loader with them the whole file: warned of once. The cells are written as they are; a column
 * that holds other text too is read as text.
 */
function warnNumberColumns(sample: EvalCase[], ctx: EncodeContext): void {
  for (const [column, textOf] of TEXT_COLUMNS) {
    const cells = sample.map(textOf).filter((v) => v !== undefined && v !== '')
    const reads = typeof cells[0] === 'string' ? pandasReadsAs(cells[0]) : undefined
    if (reads && cells.every((v) => typeof v === 'string' && pandasReadsAs(v) === reads)) {
      ctx.warn(`every cell of the column among the first cases reads as ${reads} ("${cells[0]}"): pandas, which DeepEval reads CSV with, gives ${reads === 'a number' ? 'numbers' : 'booleans'}, which DeepEval's text fields refuse, and its CSV loader the whole file`, column)
    }
  }
}

function layout(container: Container, sample: EvalCase[], ctx: EncodeContext): FileLayout {
  const first = sample[0]
  const kind = fileKind(sample)
  const result: FileLayout = { indent: 4, pythonSpacing: true, newline: '\r\n' }
  fileKinds.set(result, kind)
  const extras = own(first)
  // Confident AI's `{finalized, goldens: [...]}` is not what DeepEval's JSON loader reads (a list of
  // goldens in save_as's names): its file keys and spellings are carried, the file written as save_as writes it.
  if (container === 'csv') {
    // A DeepEval CSV's own columns, where they are of the file's kind.
    result.columns = (caseKind(first) === kind ? stringsOf(extras[COLUMNS]) : undefined) ?? csvColumns(kind, sample)
    warnNumberColumns(sample, ctx)
  }
  warnUnread(sample, ctx)
  return result
}

/** Fields of DeepEval's test cases that no dataset loader of it reads (a Golden has none of them). */
const UNREAD_FIELDS = ['tags', 'token_cost', 'completion_time'] as const

/**
 * Written as the record's own keys, where evalferry reads them back, but DeepEval's loaders pass
 * them over: told once a file, for the first cases that hold one.
 */
function warnUnread(sample: EvalCase[], ctx: EncodeContext): void {
  for (const field of UNREAD_FIELDS) {
    if (sample.some((c) => c[field] !== undefined)) {
      ctx.warn(`DeepEval's dataset loaders do not read \`${field}\` (a Golden has no such field): it is written as the record's key, which evalferry reads back and DeepEval passes over`, field)
    }
  }
}

// ---------------------------------------------------------------------------------------------
// sniffing

const SINGLE_MARKERS = [
  'actual_output', 'retrieval_context', 'additional_metadata', 'tools_called', 'expected_tools', 'source_file',
  'custom_column_key_values', 'actualOutput', 'expectedOutput', 'retrievalContext', 'additionalMetadata',
  'toolsCalled', 'expectedTools', 'sourceFile', 'customColumnKeyValues',
]
const MULTI_MARKERS = ['turns', 'expected_outcome', 'expectedOutcome', 'user_description', 'userDescription', 'persona']

function sniff(sample: SniffSample): number {
  if (!['json', 'jsonl', 'csv'].includes(sample.container)) return 0
  const keySets: string[][] = sample.records.filter(isJsonObject).map((r) => Object.keys(r))
  if (sample.columns?.length) keySets.push(sample.columns)
  // A carry beside the fields is a table's or rows' that evalferry wrote; DeepEval's sits in additional_metadata.
  if (keySets.some((keys) => keys.includes(CARRY_KEY))) return 0.1
  let score = 0
  for (const keys of keySets) {
    if (keys.includes('scenario') && MULTI_MARKERS.some((k) => keys.includes(k))) score = Math.max(score, 0.95)
    else if (keys.includes('contestants')) score = Math.max(score, 0.8)
    else if (keys.includes('input')) {
      if (SINGLE_MARKERS.some((k) => keys.includes(k))) score = Math.max(score, 0.9)
      else if (keys.includes('expected_output') && !keys.includes('id')) score = Math.max(score, 0.5)
      else score = Math.max(score, 0.2)
    }
  }
  if (score > 0 && 'finalized' in sample.header) score = Math.max(score, 0.95)
  return score
}

const deepeval: Adapter = {
  name: FORMAT,
  aliases: [],
  title: 'DeepEval goldens and test cases (save_as JSON, JSON Lines, CSV; Confident AI camelCase)',
  reads: ['json', 'jsonl', 'csv'],
  writes: ['json', 'jsonl', 'csv'],
  recordKeys: ['goldens', 'conversationalGoldens', 'conversational_goldens', 'test_cases', 'testCases'],
  holdsTurns: true,
  holdsExpectedTools: true,
  decode,
  encode,
  layout,
  sniff,
  group: arenaGroup,
  encodeGroup: encodeArena,
}

export default deepeval
