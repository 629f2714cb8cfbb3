/**
 * The canonical evaluation case: the one vocabulary every adapter decodes into and encodes from.
 * Field names follow the users' words (SPEC section 3). A field that is absent was not in the source;
 * adapters never invent empty values, so that a round trip gives back exactly what it read.
 */

export type JsonPrimitive = string | number | boolean | null
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue }
export type JsonObject = { [key: string]: JsonValue }

export type Role = 'system' | 'user' | 'assistant' | 'tool'
export const ROLES: readonly Role[] = ['system', 'user', 'assistant', 'tool']

/** A block of message content. `file` and `image` values are paths, URLs or (images) base64 data. */
export type ContentBlock =
  | { type: 'text'; value: string }
  | { type: 'file'; value: string }
  | { type: 'image'; value: string; mime_type?: string }
  | { type: 'json'; value: JsonValue }

export type Content = string | ContentBlock[]

/**
 * A tool call, as an assistant made it or as a case expects it. `arguments` is the parsed value
 * (OpenAI-style files carry it as JSON text; DeepEval as `input_parameters`).
 */
export interface ToolCall {
  id?: string
  name: string
  /** DeepEval's `FUNCTION` or `MCP`; OpenAI's `function`. */
  type?: string
  arguments?: JsonValue
  output?: JsonValue
  description?: string
  reasoning?: string
  /** What a source tool call held beyond the fields above, kept per source format. */
  extras?: Extras
}

export interface Message {
  role: Role
  content: Content
  /** A tool message: the call it answers. */
  tool_call_id?: string
  /** A tool message: the tool's name; otherwise the speaker's name. */
  name?: string
  /** An assistant message: the calls it made. */
  tool_calls?: ToolCall[]
  extras?: Extras
}

/** One turn of a multi-turn conversation (DeepEval `Turn`). */
export interface Turn {
  role: 'user' | 'assistant'
  content: string
  user_id?: string
  retrieval_context?: string[]
  tools_called?: ToolCall[]
  mcp_tools_called?: JsonValue[]
  mcp_resources_called?: JsonValue[]
  mcp_prompts_called?: JsonValue[]
  metadata?: JsonObject
  extras?: Extras
}

export interface Rubric {
  id?: string
  expected_outcome: string
  weight?: number
  required?: boolean
  /** Scores on a 0–10 scale to descriptions, keys as written (`"0"`, `"5"`, `"10"` or ranges). */
  score_ranges?: JsonValue
  extras?: Extras
}

export interface Persona {
  name?: string
  characteristics?: string
  extras?: Extras
}

/**
 * What a source record held that no canonical field names, kept per source format (the key is the
 * format's name) so that the same adapter can write it back.
 */
export type Extras = { [format: string]: JsonObject }

export interface EvalCase {
  // identity
  id?: string
  name?: string
  description?: string
  tags?: string[]
  split?: string | string[]
  conversation_id?: string

  // input
  input?: Message[]

  // expectations
  /** Messages, or a structured JSON answer (an object that is not a message). */
  expected_output?: Message[] | JsonValue
  expected_outcome?: string
  rubrics?: Rubric[]
  expected_tools?: ToolCall[]

  // observed
  actual_output?: string
  tools_called?: ToolCall[]
  token_cost?: number
  completion_time?: number

  // retrieval
  context?: string[]
  retrieval_context?: string[]

  // multi-turn
  scenario?: string
  turns?: Turn[]
  user_description?: string
  persona?: Persona
  chatbot_role?: string

  metadata?: JsonObject
  comments?: string
  note?: string
  /** Per-case tool settings (evalcase `execution`: target, evaluators, timeout_seconds). */
  execution?: JsonObject
  /** An object handed to evaluators (evalcase `sidecar`). */
  sidecar?: JsonObject

  extras?: Extras

  /** Field names whose values were generated because a format requires them (an id, say). */
  generated?: string[]
}

/** The key under which a format's free-form slot carries what the format cannot express. */
export const CARRY_KEY = 'evalferry'

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Whether a plain object has a key: `Object.keys(o).length > 0` without making the list, which a record's checks would make for every record. */
export function hasKeys(object: object): boolean {
  for (const _ in object) return true
  return false
}

/** `object[key]` when the object has that key itself: a data key like `constructor` never finds what every object inherits. */
export function own<T>(object: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined
}

/** A message list that is just one message of `role` with string content: what shorthands express. */
export function singleText(messages: Message[] | undefined, role: Role): string | undefined {
  if (!messages || messages.length !== 1) return undefined
  const [only] = messages
  if (!only || only.role !== role || typeof only.content !== 'string') return undefined
  for (const key in only) if (key !== 'role' && key !== 'content') return undefined
  return only.content
}

/**
 * True when `value` is a canonical message list: every item an object with a known role and
 * content as `Message` types it, and no other keys. A list of another shape (OpenAI content parts,
 * a key held null) is a plain value to every format, never taken for messages half-way.
 */
export function isMessageList(value: unknown): value is Message[] {
  return Array.isArray(value) && value.length > 0 && value.every(isMessage)
}

const MESSAGE_KEYS = new Set(['role', 'content', 'tool_call_id', 'name', 'tool_calls', 'extras'])
const BLOCK_TYPES = new Set(['text', 'file', 'image'])

function isMessage(m: unknown): boolean {
  if (!isJsonObject(m) || typeof m.role !== 'string' || !(ROLES as readonly string[]).includes(m.role)) return false
  for (const key in m) if (!MESSAGE_KEYS.has(key)) return false
  const { content, name, tool_call_id: callId, tool_calls: calls, extras } = m
  if (typeof content !== 'string' && !(Array.isArray(content) && content.every(isContentBlock))) return false
  if ((name !== undefined && typeof name !== 'string') || (callId !== undefined && typeof callId !== 'string')) return false
  if (calls !== undefined && !(Array.isArray(calls) && calls.every((c) => isJsonObject(c) && typeof c.name === 'string'))) return false
  return extras === undefined || isJsonObject(extras)
}

function isContentBlock(b: unknown): boolean {
  if (!isJsonObject(b) || !('value' in b)) return false
  if (b.type === 'json') return true
  return typeof b.type === 'string' && BLOCK_TYPES.has(b.type) && typeof b.value === 'string'
}

/** The plain text of message content: strings as they are, text blocks joined by newlines. */
export function contentText(content: Content): string {
  if (typeof content === 'string') return content
  return content
    .filter((b): b is { type: 'text'; value: string } => b.type === 'text')
    .map((b) => b.value)
    .join('\n')
}

/**
 * The text a field of text only gives message content: its text, or where it has none, its JSON
 * values as JSON text (`json` writes one), as a structured expected answer is written: a JSON input
 * (a question as an object) is never written as empty text.
 */
export function textOrJson(content: Content, json: (value: JsonValue) => string): string {
  const text = contentText(content)
  if (text !== '' || typeof content === 'string') return text
  const values = content.flatMap((b) => (b.type === 'json' ? [b.value] : []))
  return values.length === 0 ? '' : json(values.length === 1 ? values[0]! : values)
}

/** Whether messages hold anything: text that is not empty, or a block. */
export function holdsContent(messages: Message[]): boolean {
  return messages.some((m) => (typeof m.content === 'string' ? m.content !== '' : m.content.length > 0))
}

/** `c` without `extras[format].$file`: the file-level keys that ride on a file's first case. */
export function withoutFileKeys(c: EvalCase, format: string): EvalCase {
  const own = c.extras?.[format]
  if (!own || !('$file' in own)) return c
  const rest = { ...own }
  delete rest.$file
  const extras = { ...c.extras }
  if (Object.keys(rest).length) extras[format] = rest
  else delete extras[format]
  const copy = { ...c }
  if (Object.keys(extras).length) copy.extras = extras
  else delete copy.extras
  return copy
}

/**
 * `c` with the header another table format read (`extras[from].$file.columns`) as `format`'s own,
 * when it has none of `format`'s: a table written as the other keeps its column names, and what
 * else the other format's file keys hold stays with them. A header read with a mapping (`--map`)
 * stays too: rows written under it would read back only with that mapping again, so the target's
 * own header takes its place.
 */
export function withHeaderOf(c: EvalCase, format: string, from: readonly string[]): EvalCase {
  const extras = c.extras
  const header = (f: string): JsonObject | undefined => {
    const keys = extras?.[f]?.$file
    return isJsonObject(keys) && Array.isArray(keys.columns) ? keys : undefined
  }
  if (!extras || header(format)) return c
  const source = from.find((f) => header(f) && !('map' in header(f)!))
  if (source === undefined) return c
  const { columns, ...theirs } = extras[source]!.$file as JsonObject
  const { $file: _theirs, ...rest } = extras[source]!
  const own = extras[format]?.$file
  const adopted: Extras = { ...extras, [format]: { ...extras[format], $file: { ...(isJsonObject(own) ? own : {}), columns: columns! } } }
  if (Object.keys(theirs).length) adopted[source] = { ...rest, $file: theirs }
  else if (Object.keys(rest).length) adopted[source] = rest
  else delete adopted[source]
  return { ...c, extras: adopted }
}

/** A copy of `c` without the fields a format generated for it (and without the marker). */
export function withoutGenerated(c: EvalCase): EvalCase {
  const copy: EvalCase = { ...c }
  if (c.generated) {
    for (const field of c.generated) delete (copy as Record<string, unknown>)[field]
    delete copy.generated
  }
  return copy
}

/** A cheap estimate of a value's size in memory, in bytes: to stop holding very large records early. */
export function roughSize(value: unknown): number {
  if (typeof value === 'string') return 16 + value.length * 2
  if (value === null || typeof value !== 'object') return 8
  let size = 16
  if (Array.isArray(value)) for (const item of value) size += roughSize(item)
  else for (const key in value) size += key.length * 2 + roughSize((value as Record<string, unknown>)[key])
  return size
}

/** Every field of a case, at run time. */
export const CASE_FIELDS = [
  'id', 'name', 'description', 'tags', 'split', 'conversation_id', 'input', 'expected_output', 'expected_outcome', 'rubrics',
  'expected_tools', 'actual_output', 'tools_called', 'token_cost', 'completion_time', 'context', 'retrieval_context', 'scenario',
  'turns', 'user_description', 'persona', 'chatbot_role', 'metadata', 'comments', 'note', 'execution', 'sidecar', 'extras', 'generated',
] as const satisfies readonly (keyof EvalCase)[]

// Every field of EvalCase is in the list: a field added to the type and not to the list fails to compile here.
const everyField: Exclude<keyof EvalCase, (typeof CASE_FIELDS)[number]> extends never ? true : never = true
void everyField
