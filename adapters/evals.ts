/**
 * The EvalCase JSON Schema of api-evangelist/evals (`evals-schema.json`, kept as the published
 * data): one object per case, in a JSON array, JSON Lines or a single-object file. Every record is
 * validated against the schema when read and when written; errors name the field path.
 *
 * Canonical mapping:
 * - `input` (a string) ⇄ one user message. `input_structured.messages`, when it is a list of plain
 *   messages (`role`, string `content`, `name`, `tool_call_id`), is the canonical `input` instead,
 *   and `input` then holds the last user message's text; any other `input_structured` stays in
 *   `extras.evals`.
 * - `expected` ⇄ one assistant message. `expected_structured` ⇄ `expected_tools` (its
 *   `tool_calls: [{name, arguments}]`), expected messages (its `messages`), or else, when there is no
 *   `expected`, a structured `expected_output`; what is left stays in `extras.evals`.
 * - `context`, `tags`, `metadata` ⇄ the canonical fields of the same names.
 * Writing, a metadata key the schema refuses (a `difficulty` outside easy|medium|hard, a `source`
 * that is no URI) is left out with a warning; the carry keeps the original under `evalferry`.
 */
import schemaDocument from './evals-schema.json' with { type: 'json' }
import { stringifyJson } from '../src/codecs/json.ts'
import { SINGLE_KEY } from '../src/codecs/types.ts'
import { fieldError } from '../src/errors.ts'
import {
  CARRY_KEY,
  holdsContent,
  textOrJson,
  isJsonObject,
  isMessageList,
  singleText,
  type EvalCase,
  type JsonObject,
  type JsonValue,
  type Message,
  type ToolCall,
} from '../src/model.ts'
import type { Adapter, Container, EncodeContext, FileLayout, SniffSample } from './types.ts'

const FORMAT = 'evals'

// ---------------------------------------------------------------------------------------------
// the schema and a validator for the keywords it uses

interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  enum?: JsonValue[]
  items?: Schema
  format?: string
}

/** Keywords that only describe; the validator reads every other keyword or refuses the schema. */
const ANNOTATIONS = new Set(['$schema', '$id', 'title', 'description', 'example', 'examples', 'default'])
const KEYWORDS = new Set(['type', 'properties', 'required', 'enum', 'items', 'format'])

/** Checks once that the schema uses only keywords this validator implements. */
function checkSchema(schema: unknown, at: string): Schema {
  if (!isJsonObject(schema)) throw new Error(`evals schema: ${at || 'root'} is not a schema object`)
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key)) throw new Error(`evals schema: keyword "${key}" at ${at || 'root'} is not implemented`)
  }
  if (isJsonObject(schema.properties)) for (const [k, v] of Object.entries(schema.properties)) checkSchema(v, `${at}.properties.${k}`)
  if (schema.items !== undefined) checkSchema(schema.items, `${at}.items`)
  return schema as Schema
}

export const EVALS_SCHEMA: Schema & { $id?: string } = checkSchema(schemaDocument, '')

export interface SchemaViolation {
  /** Dotted field path (`metadata.difficulty`, `context[1]`); empty for the record itself. */
  path: string
  message: string
}

/** An absolute URI (RFC 3986): a scheme, a colon, and no whitespace. */
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]*$/

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function hasType(value: unknown, type: string): boolean {
  const actual = typeOf(value)
  return actual === type || (type === 'number' && actual === 'integer')
}

/** A field's place in a record, as a chain back to the record: its text is made only for a fault. */
interface Place {
  parent: Place | undefined
  key: string | number
}

function pathOf(place: Place | undefined): string {
  if (!place) return ''
  const parent = pathOf(place.parent)
  if (typeof place.key === 'number') return `${parent}[${place.key}]`
  return parent === '' ? place.key : `${parent}.${place.key}`
}

/** What the validator reads of a schema, worked out once per schema object. */
interface Compiled {
  types: string[] | undefined
  /** The enum's values as JSON text. */
  enumTexts: Set<string> | undefined
  properties: [string, Schema][]
}

const compiled = new WeakMap<Schema, Compiled>()

function compile(schema: Schema): Compiled {
  let c = compiled.get(schema)
  if (!c) {
    c = {
      types: schema.type === undefined ? undefined : Array.isArray(schema.type) ? schema.type : [schema.type],
      enumTexts: schema.enum && new Set(schema.enum.map((e) => JSON.stringify(e))),
      properties: Object.entries(schema.properties ?? {}),
    }
    compiled.set(schema, c)
  }
  return c
}

/** The faults of `value` against `schema` (the EvalCase schema unless given), each with its field path. */
export function validate(value: unknown, schema: Schema = EVALS_SCHEMA, path = '', out: SchemaViolation[] = []): SchemaViolation[] {
  check(value, schema, path === '' ? undefined : { parent: undefined, key: path }, out)
  return out
}

function check(value: unknown, schema: Schema, place: Place | undefined, out: SchemaViolation[]): void {
  const { types, enumTexts, properties } = compile(schema)
  if (types !== undefined && !types.some((t) => hasType(value, t))) {
    out.push({ path: pathOf(place), message: `expected ${types.join(' or ')}, got ${describe(value)}` })
    return
  }
  if (enumTexts !== undefined && !enumTexts.has(JSON.stringify(value))) {
    out.push({ path: pathOf(place), message: `expected one of ${[...enumTexts].join(', ')}, got ${describe(value)}` })
  }
  if (schema.format === 'uri' && typeof value === 'string' && !URI.test(value)) {
    out.push({ path: pathOf(place), message: `expected a URI (scheme:...), got ${JSON.stringify(value)}` })
  }
  if (isJsonObject(value)) {
    if (schema.required) for (const key of schema.required) if (!Object.hasOwn(value, key)) out.push({ path: pathOf({ parent: place, key }), message: 'is missing' })
    for (const [key, sub] of properties) if (key in value) check(value[key], sub, { parent: place, key }, out)
  }
  if (Array.isArray(value) && schema.items) for (let i = 0; i < value.length; i++) check(value[i], schema.items, { parent: place, key: i }, out)
}

function describe(value: unknown): string {
  const type = typeOf(value)
  if (type === 'object' || type === 'array') return `an ${type === 'array' ? 'array' : 'object'}`
  if (type === 'null') return 'null'
  return `${type === 'integer' ? 'number' : type} ${JSON.stringify(value)}`
}

/** Refuses a record the schema does not take, naming the first fault's field and `so` what follows from it. */
function assertValid(record: unknown, so: string): void {
  const [first, ...more] = validate(record)
  if (!first) return
  const also = more.length ? ` (and ${more.length} more: ${more.map((v) => v.path || 'record').join(', ')})` : ''
  throw fieldError(first.path, `${first.message}, so ${so}${also}`)
}

// ---------------------------------------------------------------------------------------------
// mapping

const PLAIN_MESSAGE_KEYS = ['role', 'content', 'name', 'tool_call_id']

/** Messages the schema's free-form objects can hold as they are: string content, no tool calls or extras. */
function isPlainMessages(value: unknown): value is Message[] {
  return (
    isMessageList(value) &&
    value.every((m) => typeof m.content === 'string' && Object.keys(m).every((k) => PLAIN_MESSAGE_KEYS.includes(k)) && [m.name, m.tool_call_id].every((v) => v === undefined || typeof v === 'string'))
  )
}

function plainMessages(messages: Message[]): JsonObject[] {
  return messages.map((m) => ({ ...m }) as unknown as JsonObject)
}

/** The `input` string of a conversation: its last user message's text. */
function inputText(messages: Message[]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user') ?? messages[messages.length - 1]
  return lastUser ? textOrJson(lastUser.content, (value) => stringifyJson(value)) : ''
}

function isToolCallList(value: unknown): value is JsonObject[] {
  return Array.isArray(value) && value.every((t) => isJsonObject(t) && typeof t.name === 'string')
}

function decodeToolCall(t: JsonObject): ToolCall {
  const tc: ToolCall = { name: t.name as string }
  if (typeof t.id === 'string') tc.id = t.id
  if (t.arguments !== undefined) tc.arguments = t.arguments
  const extras: JsonObject = {}
  for (const [k, v] of Object.entries(t)) if (!['name', 'arguments'].includes(k) && !(k === 'id' && tc.id !== undefined)) extras[k] = v
  if (Object.keys(extras).length) tc.extras = { [FORMAT]: extras }
  return tc
}

function encodeToolCall(tc: ToolCall): JsonObject {
  const out: JsonObject = {}
  if (tc.id !== undefined) out.id = tc.id
  out.name = tc.name
  if (tc.arguments !== undefined) out.arguments = tc.arguments
  for (const [k, v] of Object.entries(tc.extras?.[FORMAT] ?? {})) if (!Object.hasOwn(out, k)) out[k] = v
  return out
}

const SCHEMA_KEYS = ['id', 'input', 'input_structured', 'expected', 'expected_structured', 'context', 'metadata', 'tags']

function decodeRecord(record: unknown): EvalCase {
  assertValid(record, 'the record is not an EvalCase')
  const r = record as JsonObject
  const c: EvalCase = { id: r.id as string }
  const extras: JsonObject = {}
  const input = r.input as string

  const structured = r.input_structured
  if (isJsonObject(structured) && isPlainMessages(structured.messages)) {
    c.input = structured.messages.map((m) => ({ ...m }))
    const rest = { ...structured }
    delete rest.messages
    if (Object.keys(rest).length) extras.input_structured = rest
    if (input !== inputText(c.input)) extras.$input = input
    if (singleText(c.input, 'user') !== undefined) extras.$input_messages = true
  } else {
    c.input = [{ role: 'user', content: input }]
    if (structured !== undefined) extras.input_structured = structured
  }

  if (typeof r.expected === 'string') c.expected_output = [{ role: 'assistant', content: r.expected }]
  if (isJsonObject(r.expected_structured)) {
    const rest = { ...r.expected_structured }
    if (isToolCallList(rest.tool_calls)) {
      c.expected_tools = rest.tool_calls.map(decodeToolCall)
      delete rest.tool_calls
    }
    if (c.expected_output === undefined && isPlainMessages(rest.messages)) {
      c.expected_output = rest.messages.map((m) => ({ ...m }))
      delete rest.messages
      if (singleText(c.expected_output, 'assistant') !== undefined) extras.$expected_messages = true
    }
    if (c.expected_output === undefined && Object.keys(rest).length) c.expected_output = rest
    else if (Object.keys(rest).length || c.expected_tools === undefined) extras.expected_structured = rest
  }

  if (r.context !== undefined) c.context = r.context as string[]
  if (r.tags !== undefined) c.tags = r.tags as string[]
  if (r.metadata !== undefined) c.metadata = r.metadata as JsonObject
  for (const [k, v] of Object.entries(r)) if (!SCHEMA_KEYS.includes(k)) extras[k.startsWith('$') ? '$' + k : k] = v
  if (Object.keys(extras).length) c.extras = { ...c.extras, [FORMAT]: extras }
  return c
}

/** Metadata without the keys the schema refuses (reported), so a foreign case still writes. */
function validMetadata(metadata: JsonObject, ctx: EncodeContext): JsonObject {
  const schema = EVALS_SCHEMA.properties?.metadata
  if (!schema) return metadata
  const out = { ...metadata }
  // The pipeline encodes again with the carry added; by then the refusal has been reported.
  const carry = metadata[CARRY_KEY]
  const reported = isJsonObject(carry) && 'metadata' in carry
  for (const v of validate(metadata, schema)) {
    const key = v.path.split(/[.[]/)[0]
    if (key && Object.hasOwn(out, key)) {
      delete out[key]
      if (!reported) ctx.warn(`${v.message}; the schema refuses it, so the written metadata leaves it out`, `metadata.${key}`)
    }
  }
  return out
}

function encodeCase(c: EvalCase, ctx: EncodeContext): JsonObject {
  const extras = c.extras?.[FORMAT] ?? {}
  const out: JsonObject = {}
  if (c.id !== undefined) out.id = c.id

  let inputStructured: JsonObject | undefined = isJsonObject(extras.input_structured) ? { ...extras.input_structured } : undefined
  if (c.input !== undefined) {
    const text = singleText(c.input, 'user')
    if (text !== undefined && extras.$input_messages !== true) out.input = text
    else {
      out.input = typeof extras.$input === 'string' ? extras.$input : inputText(c.input)
      if (out.input === '' && holdsContent(c.input)) ctx.warn('the input holds no text, only files or images, which the EvalCase schema cannot take: written as ""', 'input')
      if (isPlainMessages(c.input)) inputStructured = { messages: plainMessages(c.input), ...(inputStructured ?? {}) }
    }
  } else {
    // The schema requires an input; a multi-turn case without one offers its scenario.
    out.input = c.scenario ?? ''
    if (c.scenario === undefined) ctx.warn('the case has no input, which the EvalCase schema requires: written as ""', 'input')
  }
  if (inputStructured !== undefined) out.input_structured = inputStructured

  let expectedStructured: JsonObject | undefined = isJsonObject(extras.expected_structured) ? { ...extras.expected_structured } : undefined
  const expected = c.expected_output
  if (isMessageList(expected)) {
    const text = singleText(expected, 'assistant')
    if (text !== undefined && extras.$expected_messages !== true) out.expected = text
    else if (isPlainMessages(expected)) expectedStructured = { ...(expectedStructured ?? {}), messages: plainMessages(expected) }
  } else if (isJsonObject(expected)) {
    expectedStructured = { ...expected, ...(expectedStructured ?? {}) }
  }
  if (c.expected_tools !== undefined) expectedStructured = { ...(expectedStructured ?? {}), tool_calls: c.expected_tools.map(encodeToolCall) }
  if (expectedStructured !== undefined) out.expected_structured = expectedStructured

  if (c.context !== undefined) out.context = c.context
  if (c.metadata !== undefined) out.metadata = validMetadata(c.metadata, ctx)
  if (c.tags !== undefined) out.tags = c.tags
  for (const [k, v] of Object.entries(extras)) {
    if (k.startsWith('$') && !k.startsWith('$$')) continue
    const key = k.startsWith('$$') ? k.slice(1) : k
    if (SCHEMA_KEYS.includes(key)) continue
    if (!Object.hasOwn(out, key)) out[key] = v
  }
  assertValid(out, 'the written record would not be an EvalCase')
  return out
}

// ---------------------------------------------------------------------------------------------

function sniff(sample: SniffSample): number {
  if (sample.container !== 'json' && sample.container !== 'jsonl') return 0
  let best = 0
  // One record with evalcase's own keys makes the file evalcase: the others only lack what they had none of (an expected output, say).
  let evalcaseKeys = false
  for (const r of sample.records) {
    if (!isJsonObject(r) || typeof r.id !== 'string' || typeof r.input !== 'string' || 'inputs' in r) continue
    const own = ['expected', 'expected_structured', 'input_structured'].some((k) => k in r)
    const shared = ['tags', 'context'].some((k) => k in r) || (isJsonObject(r.metadata) && ['difficulty', 'domain', 'persona', 'source'].some((k) => k in (r.metadata as JsonObject)))
    // evalcase's own keys (the schema's answer is `expected`, evalcase's `expected_output`).
    const evalcaseMarkers = ['expected_output', 'expected_outcome', 'criteria', 'rubrics', 'input_messages', 'expected_messages', 'conversation_id'].some((k) => k in r)
    let score = own ? 0.9 : shared ? 0.75 : 0.5
    if (evalcaseMarkers) evalcaseKeys = true
    if (validate(r).length) score = Math.min(score, 0.3)
    best = Math.max(best, score)
  }
  return evalcaseKeys ? Math.min(best, 0.2) : best
}

function layout(container: Container, sample: EvalCase[]): FileLayout {
  if (container !== 'json') return {}
  // A file that was one case, and still is, stays one object.
  const fileKeys = sample.length === 1 ? sample[0]!.extras?.[FORMAT]?.$file : undefined
  const single = isJsonObject(fileKeys) && fileKeys[SINGLE_KEY] === true
  return single ? { indent: 2, single } : { indent: 2 }
}

const evals: Adapter = {
  name: 'evals',
  aliases: ['evalcase_json'],
  title: 'EvalCase JSON Schema (api-evangelist/evals): id, input, expected, context, metadata, tags',
  reads: ['json', 'jsonl'],
  writes: ['json', 'jsonl'],
  recordKeys: [],
  requires: ['id'],
  holdsExpectedTools: true,
  singleRecord: true,

  decode(record) {
    return decodeRecord(record)
  },

  encode(c, ctx) {
    return encodeCase(c, ctx)
  },

  layout,
  sniff,
}

export default evals
