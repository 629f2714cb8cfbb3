/**
 * LangSmith examples (`id`, `dataset_id`, `inputs`, `outputs`, `metadata`, `split`, `created_at`,
 * `modified_at`, `source_run_id`, `attachments`) in kv, llm and chat datasets.
 *
 * Canonical mapping:
 * - `inputs`: the current chat shape (`messages`, OpenAI-style) and the legacy one (`input`, a list
 *   of LangChain `{type, data}` messages) become `input` messages; otherwise the first well-known
 *   input key holding a string (`input`, `question`, `prompt`...) becomes one user message (the llm
 *   shape `{input: "prompt"}` is this case), and a well-known context key holding strings `context`.
 * - `outputs`: `message`/`messages` (chat), a LangChain message under `output` (legacy), else the
 *   first well-known expected key (`output`, `answer`...): a string is one assistant message, any
 *   other value a structured `expected_output`.
 * - `metadata` ⇄ `metadata`, except `metadata.dataset_split` (a list) ⇄ `split` (one split as a string).
 * - The other keys of `inputs` and `outputs` are metadata, as a table's other columns are (their
 *   names under `$form`'s `input_keys`/`output_keys`, so that they go back where they were); one
 *   the metadata has already, or the carry's or the split's key, stays in `extras.langsmith` under
 *   `$inputs`/`$outputs`.
 * - Everything else stays in `extras.langsmith`: which key and message style each field came from
 *   under `$form`, and the example's other keys as they are (`dataset_id`, timestamps,
 *   `source_run_id`, `attachments`).
 *   Attachments keep name, MIME type and presigned URL and are never fetched: the URLs expire, so
 *   they are not turned into `file` blocks that a resolver would try to follow.
 *
 * Cases from other formats are written in the chat shape (`inputs.messages`, `outputs.message`)
 * when their input is a conversation, else as `inputs.question` / `outputs.answer`.
 *
 * JSON: a list of examples, or an export that wraps them with keys of its own (`{"name": …,
 * "examples": [ … ]}`, as LangSmith-era datasets are kept): the other keys are the file's, and are
 * written back around the examples.
 *
 * CSV: evalferry's own columns are `inputs.<key>`, `outputs.<key>`, `metadata.<key>` and the
 * example's other keys; a cell holds a string as it is, anything else (and a string that would read
 * as JSON) as JSON text; an empty cell is an absent key. Any other CSV is read the way
 * `upload_csv(input_keys, output_keys)` takes it: `--map inputs=question,context --map
 * outputs=answer [--map metadata=a,b] [--map id=col] [--map split=col] [--map ignore=col]`
 * (`input=`, `expected_output=` and `context=` add one column each); without a map the well-known
 * column names decide, and every other column goes to `metadata`.
 */
import { A_CASE, extrasOf, fieldChecks, under } from './fields.ts'
import { applyCarry, deepEqual, lostFields, withCarry } from '../src/carry.ts'
import { mayBeJson, parseExact, stringifyJson } from '../src/codecs/json.ts'
import { fieldError, UsageError } from '../src/errors.ts'
import { isWellKnown, wellKnownKey, WELL_KNOWN_NAMES } from '../src/mapping.ts'
import {
  CARRY_KEY,
  isJsonObject,
  isMessageList,
  own,
  ROLES,
  singleText,
  type Content,
  type ContentBlock,
  type EvalCase,
  type JsonObject,
  type JsonValue,
  type Message,
  type Role,
  type ToolCall,
} from '../src/model.ts'
import type { Adapter, Container, DecodeContext, FieldMapping, FileLayout, SniffSample } from './types.ts'

const FORMAT = 'langsmith'
const { describeType, expectString, expectObject } = fieldChecks()
const { toExtraKey, fromExtraKey, ownExtras, writeExtras, setExtras } = extrasOf(FORMAT)

/** Markers in `extras.langsmith`; source keys starting with `$` get one more `$`. */
const FORM = '$form'
const INPUTS = '$inputs'
const OUTPUTS = '$outputs'
const FILE = '$file'

/** Well-known keys (SPEC section 4) that `inputs`/`outputs` keys and plain CSV columns are matched against. */
const INPUT_KEYS: readonly string[] = WELL_KNOWN_NAMES.input ?? []
const EXPECTED_KEYS: readonly string[] = WELL_KNOWN_NAMES.expected_output ?? []
const CONTEXT_KEYS: readonly string[] = WELL_KNOWN_NAMES.context ?? []
const ID_KEYS: readonly string[] = WELL_KNOWN_NAMES.id ?? []

/** Keys written for cases that never were LangSmith examples. */
const DEFAULT_INPUT_KEY = 'question'
const DEFAULT_EXPECTED_KEY = 'answer'

/** Example keys that map to canonical fields; every other key is kept as it is. */
const EXAMPLE_KEYS = ['id', 'inputs', 'outputs', 'metadata']
/** Objects whose keys become `<key>.<sub>` columns in evalferry's own CSV. */
const NESTED = ['inputs', 'outputs', 'metadata']

// ---------------------------------------------------------------------------------------------
// small helpers

function without(obj: JsonObject, keys: (string | undefined)[]): JsonObject {
  const out: JsonObject = {}
  for (const [k, v] of Object.entries(obj)) if (!keys.includes(k)) out[k] = v
  return out
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string')
}

/** A LangChain message as `messages_to_dict` writes it. */
function isLangChainMessage(value: unknown): value is JsonObject {
  if (!isJsonObject(value) || typeof value.type !== 'string') return false
  if (isJsonObject(value.data)) return true
  if (value.type === 'constructor') return value.lc !== undefined && isJsonObject(value.kwargs)
  // A message model dumped flat: its type names it, beside its content.
  return 'content' in value && (Object.hasOwn(LANGCHAIN_ROLES, value.type) || value.type === 'chat')
}

function isOpenAIMessage(value: unknown): value is JsonObject {
  return isJsonObject(value) && typeof value.role === 'string'
}

// ---------------------------------------------------------------------------------------------
// content and messages (OpenAI-style, as the current chat shape and LangChain's `content` hold them)

function decodePart(part: unknown): ContentBlock {
  if (isJsonObject(part)) {
    const keys = Object.keys(part)
    if (part.type === 'text' && typeof part.text === 'string' && keys.length === 2) return { type: 'text', value: part.text }
    if (part.type === 'image_url' && keys.length === 2 && isJsonObject(part.image_url)) {
      const image = part.image_url
      if (typeof image.url === 'string' && Object.keys(image).length === 1) return { type: 'image', value: image.url }
    }
  }
  // Parts with more than evalferry's blocks say (detail, audio, files) travel whole.
  return { type: 'json', value: part as JsonValue }
}

function encodePart(block: ContentBlock): JsonValue {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.value }
    case 'image':
      return { type: 'image_url', image_url: { url: block.value } }
    case 'file':
      return { type: 'file', file: { url: block.value } }
    case 'json':
      return block.value
  }
}

/** Content; `kind` marks what was written when it was not a string or a list of parts. */
function decodeContent(raw: unknown): { content: Content; kind?: string } {
  if (typeof raw === 'string') return { content: raw }
  if (raw === undefined) return { content: '', kind: 'absent' }
  if (raw === null) return { content: '', kind: 'null' }
  if (Array.isArray(raw)) return { content: raw.map(decodePart) }
  return { content: [{ type: 'json', value: raw as JsonValue }], kind: 'object' }
}

function encodeContent(m: Message): JsonValue | undefined {
  const kind = ownExtras(m).$content
  const { content } = m
  if (kind === 'absent' && content === '') return undefined
  if (kind === 'null' && content === '') return null
  if (kind === 'object' && Array.isArray(content) && content.length === 1 && content[0]?.type === 'json') return content[0].value
  if (typeof content === 'string') return content
  return content.map(encodePart)
}

/** OpenAI's `arguments` is JSON text: the parsed value is canonical, the exact text is kept when it differs. */
function decodeArguments(raw: JsonValue, extras: JsonObject): JsonValue {
  if (typeof raw !== 'string') {
    extras.$arguments_text = null
    return raw
  }
  try {
    const parsed = JSON.parse(raw) as JsonValue
    if (JSON.stringify(parsed) !== raw) extras.$arguments_text = raw
    return parsed
  } catch {
    extras.$arguments_text = raw
    return raw
  }
}

function encodeArguments(args: JsonValue, extras: JsonObject): JsonValue {
  const text = extras.$arguments_text
  if (text === null) return args
  if (typeof text === 'string') {
    if (text === args) return text
    try {
      if (deepEqual(JSON.parse(text), args)) return text
    } catch {
      // The kept text no longer matches the arguments; write them afresh.
    }
  }
  return JSON.stringify(args)
}

function decodeOpenAIToolCall(raw: unknown): ToolCall {
  const call = expectObject(raw, '')
  const fn = expectObject(call.function, 'function')
  const extras: JsonObject = {}
  const tc: ToolCall = { name: expectString(fn.name, 'function.name') }
  if (call.id !== undefined) tc.id = expectString(call.id, 'id')
  if (call.type !== undefined) tc.type = expectString(call.type, 'type')
  if (fn.arguments !== undefined) tc.arguments = decodeArguments(fn.arguments, extras)
  for (const [k, v] of Object.entries(fn)) if (k !== 'name' && k !== 'arguments') extras[`$function.${k}`] = v
  for (const [k, v] of Object.entries(call)) if (!['id', 'type', 'function'].includes(k)) extras[toExtraKey(k)] = v
  return setExtras(tc, extras)
}

function encodeOpenAIToolCall(tc: ToolCall): JsonObject {
  const extras = ownExtras(tc)
  const out: JsonObject = {}
  if (tc.id !== undefined) out.id = tc.id
  // OpenAI's calls are of type `function`: DeepEval's own types (FUNCTION, MCP) are no OpenAI type, and are carried.
  out.type = tc.type === undefined || tc.type === 'FUNCTION' || tc.type === 'MCP' ? 'function' : tc.type
  const fn: JsonObject = { name: tc.name }
  if (tc.arguments !== undefined) fn.arguments = encodeArguments(tc.arguments, extras)
  for (const [k, v] of Object.entries(extras)) if (k.startsWith('$function.')) fn[k.slice('$function.'.length)] = v
  out.function = fn
  writeExtras(out, extras)
  return out
}

/** OpenAI roles evalferry names differently, kept so they are written back. */
/** Roles other than the four, as LangChain's message coercion takes them too. */
const OPENAI_ROLE_ALIASES: Record<string, Role> = { developer: 'system', function: 'tool', human: 'user', ai: 'assistant' }

function decodeOpenAIMessage(raw: unknown): Message {
  const m = expectObject(raw, '')
  const extras: JsonObject = {}
  let role: Role
  if (typeof m.role === 'string' && (ROLES as readonly string[]).includes(m.role)) role = m.role as Role
  else if (typeof m.role === 'string' && Object.hasOwn(OPENAI_ROLE_ALIASES, m.role)) {
    role = OPENAI_ROLE_ALIASES[m.role]!
    extras.$role = m.role
  } else throw fieldError('role', `expected one of ${[...ROLES, 'developer', 'function'].join(', ')}, got ${describeType(m.role)}`)
  const { content, kind } = under('content', () => decodeContent(m.content))
  const message: Message = { role, content }
  if (kind !== undefined) extras.$content = kind
  if (typeof m.tool_call_id === 'string') message.tool_call_id = m.tool_call_id
  if (typeof m.name === 'string') message.name = m.name
  if (Array.isArray(m.tool_calls)) message.tool_calls = m.tool_calls.map((t, i) => under(`tool_calls[${i}]`, () => decodeOpenAIToolCall(t)))
  for (const [k, v] of Object.entries(m)) {
    if (k === 'role' || k === 'content') continue
    if (k === 'tool_call_id' && message.tool_call_id !== undefined) continue
    if (k === 'name' && message.name !== undefined) continue
    if (k === 'tool_calls' && message.tool_calls !== undefined) continue
    extras[toExtraKey(k)] = v
  }
  return setExtras(message, extras)
}

function encodeOpenAIMessage(m: Message): JsonObject {
  const extras = ownExtras(m)
  const out: JsonObject = { role: typeof extras.$role === 'string' ? extras.$role : m.role }
  const content = encodeContent(m)
  if (content !== undefined) out.content = content
  if (m.name !== undefined) out.name = m.name
  if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls.map(encodeOpenAIToolCall)
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id
  writeExtras(out, extras)
  return out
}

// LangChain messages: `{type, data: {content, additional_kwargs, ...}}`, and their other shapes (see decodeLangChainMessage).

const LANGCHAIN_ROLES: Record<string, Role> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool', function: 'tool' }
const LANGCHAIN_TYPES: Record<Role, string> = { user: 'human', assistant: 'ai', system: 'system', tool: 'tool' }

function decodeLangChainToolCall(raw: unknown): ToolCall {
  const call = expectObject(raw, '')
  const tc: ToolCall = { name: expectString(call.name, 'name') }
  if (typeof call.id === 'string') tc.id = call.id
  if (call.args !== undefined) tc.arguments = call.args
  const extras: JsonObject = {}
  for (const [k, v] of Object.entries(call)) {
    if (k === 'name' || k === 'args' || (k === 'id' && tc.id !== undefined)) continue
    extras[toExtraKey(k)] = v
  }
  return setExtras(tc, extras)
}

function encodeLangChainToolCall(tc: ToolCall): JsonObject {
  const extras = ownExtras(tc)
  const out: JsonObject = { name: tc.name }
  if (tc.arguments !== undefined) out.args = tc.arguments
  if (tc.id !== undefined) out.id = tc.id
  // LangChain's own calls say `type: tool_call`; a call from elsewhere gets the same.
  if (!('type' in extras)) out.type = 'tool_call'
  writeExtras(out, extras)
  return out
}

/**
 * A LangChain message in any of the shapes LangSmith holds: `messages_to_dict`'s `{type, data}`,
 * a message model dumped flat (`{type: "human", content, additional_kwargs, …}`, as the Python SDK
 * writes `BaseMessage` objects), or `dumpd`'s `{lc: 1, type: "constructor", id, kwargs}`. The
 * shape is kept, so the message is written back as it came.
 */
function decodeLangChainMessage(raw: unknown): Message {
  const m = expectObject(raw, '')
  const extras: JsonObject = {}
  let fields: JsonObject
  let prefix: string
  let type: string
  if (m.type === 'constructor' && m.lc !== undefined) {
    fields = expectObject(m.kwargs, 'kwargs')
    prefix = 'kwargs.'
    type = typeof fields.type === 'string' ? fields.type : constructorType(m.id)
    extras.$shape = 'constructor'
  } else if (m.data !== undefined) {
    type = expectString(m.type, 'type')
    fields = expectObject(m.data, 'data')
    prefix = 'data.'
  } else {
    type = expectString(m.type, 'type')
    fields = m
    prefix = ''
    extras.$shape = 'flat'
  }
  let role = own(LANGCHAIN_ROLES, type)
  if (type === 'chat' && typeof fields.role === 'string' && (ROLES as readonly string[]).includes(fields.role)) role = fields.role as Role
  if (role === undefined) throw fieldError(prefix === 'kwargs.' ? 'kwargs.type' : 'type', `expected one of ${Object.keys(LANGCHAIN_ROLES).join(', ')} or chat, got ${describeType(type)}`)
  if (LANGCHAIN_TYPES[role] !== type) extras.$type = type
  const { content, kind } = under(`${prefix}content`, () => decodeContent(fields.content))
  const message: Message = { role, content }
  if (kind !== undefined) extras.$content = kind
  if (typeof fields.name === 'string') message.name = fields.name
  if (typeof fields.tool_call_id === 'string') message.tool_call_id = fields.tool_call_id
  if (Array.isArray(fields.tool_calls) && fields.tool_calls.length > 0) {
    message.tool_calls = fields.tool_calls.map((t, i) => under(`${prefix}tool_calls[${i}]`, () => decodeLangChainToolCall(t)))
  }
  const rest: JsonObject = {}
  for (const [k, v] of Object.entries(fields)) {
    // A flat message's type stays among the rest, so that it is written back in its place.
    if (k === 'content') continue
    if (k === 'name' && message.name !== undefined) continue
    if (k === 'tool_call_id' && message.tool_call_id !== undefined) continue
    if (k === 'tool_calls' && message.tool_calls !== undefined) continue
    rest[k] = v
  }
  extras.$data = rest
  if (fields !== m) for (const [k, v] of Object.entries(m)) if (k !== 'type' && k !== 'data' && k !== 'kwargs') extras[toExtraKey(k)] = v
  return setExtras(message, extras)
}

/** The message type a `dumpd` constructor names by its class (`[…, "HumanMessage"]`). */
function constructorType(id: unknown): string {
  const name = Array.isArray(id) ? id[id.length - 1] : undefined
  const type = typeof name === 'string' ? own(CONSTRUCTOR_TYPES, name.replace(/Chunk$/, '')) : undefined
  if (type === undefined) throw fieldError('id', `expected a LangChain message class (${Object.keys(CONSTRUCTOR_TYPES).join(', ')}), got ${describeType(name)}`)
  return type
}

const CONSTRUCTOR_TYPES: Record<string, string> = {
  HumanMessage: 'human',
  AIMessage: 'ai',
  SystemMessage: 'system',
  ToolMessage: 'tool',
  FunctionMessage: 'function',
  ChatMessage: 'chat',
}

function encodeLangChainMessage(m: Message): JsonObject {
  const extras = ownExtras(m)
  const type = typeof extras.$type === 'string' ? extras.$type : LANGCHAIN_TYPES[m.role]
  const shape = extras.$shape
  const fields: JsonObject = {}
  const content = encodeContent(m)
  if (content !== undefined) fields.content = content
  const rest = isJsonObject(extras.$data) ? extras.$data : shape === 'flat' ? {} : { type }
  for (const [k, v] of Object.entries(rest)) fields[k] = v
  if (shape === 'flat') fields.type = type
  if (m.name !== undefined) fields.name = m.name
  if (m.tool_calls !== undefined) fields.tool_calls = m.tool_calls.map(encodeLangChainToolCall)
  if (m.tool_call_id !== undefined) fields.tool_call_id = m.tool_call_id
  if (shape === 'flat') return fields
  const out: JsonObject = shape === 'constructor' ? { lc: extras.lc ?? 1, type: 'constructor', id: extras.id ?? [], kwargs: fields } : { type, data: fields }
  writeExtras(out, extras)
  return out
}

type Style = 'openai' | 'langchain'

function decodeMessages(raw: unknown[], style: Style, field: string): Message[] {
  const one = style === 'openai' ? decodeOpenAIMessage : decodeLangChainMessage
  return raw.map((m, i) => under(`${field}[${i}]`, () => one(m)))
}

function encodeMessages(messages: Message[], style: Style): JsonObject[] {
  return messages.map(style === 'openai' ? encodeOpenAIMessage : encodeLangChainMessage)
}

/** The message style of a list under `key`, or undefined when it is not a message list. */
function listStyle(key: string, value: unknown): Style | undefined {
  if (!Array.isArray(value)) return undefined
  if (value.length > 0 && value.every(isLangChainMessage)) return 'langchain'
  if (value.length > 0 && value.every(isOpenAIMessage)) return 'openai'
  // `inputs.messages` is the chat shape even when empty or malformed: decoding names the bad item.
  return key === 'messages' ? 'openai' : undefined
}

// ---------------------------------------------------------------------------------------------
// decoding an example

interface Preferred {
  input?: string
  expected?: string
  context?: string
}

function decodeInputs(inputs: JsonObject, c: EvalCase, form: JsonObject, preferred: Preferred): JsonObject {
  const messageKey = ['messages', 'input'].find((k) => listStyle(k, inputs[k]) !== undefined)
  let taken: string | undefined
  if (messageKey !== undefined && (preferred.input === undefined || preferred.input === messageKey)) {
    const style = listStyle(messageKey, inputs[messageKey])!
    c.input = decodeMessages(inputs[messageKey] as unknown[], style, `inputs.${messageKey}`)
    form.input_key = messageKey
    form.input_style = style
    taken = messageKey
  } else {
    const isText = (k: string): boolean => typeof inputs[k] === 'string'
    taken = preferred.input !== undefined ? [preferred.input].find(isText) : wellKnownKey(Object.keys(inputs), INPUT_KEYS, isText)
    if (taken !== undefined) {
      c.input = [{ role: 'user', content: inputs[taken] as string }]
      form.input_key = taken
    }
  }
  const contextKey = (preferred.context !== undefined ? [preferred.context] : CONTEXT_KEYS).find((k) => k !== taken && isStringList(inputs[k]))
  if (contextKey !== undefined) {
    c.context = inputs[contextKey] as string[]
    if (contextKey !== CONTEXT_KEYS[0]) form.context_key = contextKey
  }
  return without(inputs, [taken, contextKey])
}

function decodeOutputs(outputs: JsonObject, c: EvalCase, form: JsonObject, preferred: Preferred): JsonObject {
  let taken: string | undefined
  if (preferred.expected === undefined && isOpenAIMessage(outputs.message)) {
    c.expected_output = [under('outputs.message', () => decodeOpenAIMessage(outputs.message))]
    taken = 'message'
  } else if (preferred.expected === undefined && isLangChainMessage(outputs.output)) {
    c.expected_output = [under('outputs.output', () => decodeLangChainMessage(outputs.output))]
    taken = 'output'
    form.expected_style = 'langchain'
  } else {
    const listKey = preferred.expected === undefined ? ['messages', 'output'].find((k) => listStyle(k, outputs[k]) !== undefined && (outputs[k] as unknown[]).length > 0) : undefined
    if (listKey !== undefined) {
      const style = listStyle(listKey, outputs[listKey])!
      c.expected_output = decodeMessages(outputs[listKey] as unknown[], style, `outputs.${listKey}`)
      if (style === 'langchain') form.expected_style = 'langchain'
      form.expected_list = true
      taken = listKey
    } else {
      const isSet = (k: string): boolean => outputs[k] !== undefined && outputs[k] !== null
      taken = preferred.expected !== undefined ? [preferred.expected].find(isSet) : wellKnownKey(Object.keys(outputs), EXPECTED_KEYS, isSet)
      if (taken !== undefined) {
        const value = outputs[taken] as JsonValue
        c.expected_output = typeof value === 'string' ? [{ role: 'assistant', content: value }] : value
      }
    }
  }
  if (taken !== undefined) form.expected_key = taken
  return without(outputs, [taken])
}

function decodeSplit(r: JsonObject, metadata: JsonObject | undefined, c: EvalCase, form: JsonObject): string | undefined {
  const listed = metadata?.dataset_split
  if (isStringList(listed) && listed.length > 0) {
    c.split = listed.length === 1 ? listed[0]! : listed
    return 'dataset_split'
  }
  if (typeof listed === 'string') {
    c.split = listed
    form.split = 'string'
    return 'dataset_split'
  }
  if (listed === undefined && (typeof r.split === 'string' || (isStringList(r.split) && r.split.length > 0))) {
    c.split = r.split
    form.split = 'top'
    return undefined
  }
  return undefined
}

function preferredKeys(map: DecodeContext['map']): Preferred {
  if (!map || typeof map === 'function') return {}
  const pick = (value: string | string[] | undefined, prefix: string): string | undefined => {
    const first = Array.isArray(value) ? value[0] : value
    if (first === undefined) return undefined
    return first.startsWith(prefix + '.') ? first.slice(prefix.length + 1) : first
  }
  const out: Preferred = {}
  const input = pick(map.input, 'inputs')
  const expected = pick(map.expected_output, 'outputs')
  const context = pick(map.context, 'inputs')
  if (input !== undefined) out.input = input
  if (expected !== undefined) out.expected = expected
  if (context !== undefined) out.context = context
  return out
}

function decodeExample(record: unknown, ctx: DecodeContext): EvalCase {
  let r = expectObject(record, '')
  let preferred = preferredKeys(ctx.map)
  if (ctx.container === 'csv' && isOwnTable(Object.keys(r))) r = fromOwnRow(r)
  else if (ctx.container === 'csv') ({ record: r, preferred } = fromPlainRow(r, ctx.map))
  const c: EvalCase = {}
  const extras: JsonObject = {}
  const form: JsonObject = {}

  if (r.id !== undefined) c.id = expectString(r.id, 'id')
  // A file's own id that is no UUID (a hand-made file) is written back as it was.
  if (c.id !== undefined && !UUID.test(c.id)) form.id = 'as written'
  if (r.inputs === undefined) throw fieldError('inputs', 'an example needs `inputs` (an object)')
  const inputs = expectObject(r.inputs, 'inputs')
  const restInputs = decodeInputs(inputs, c, form, preferred)
  let restOutputs: JsonObject | undefined
  if (isJsonObject(r.outputs)) restOutputs = decodeOutputs(r.outputs, c, form, preferred)
  else if (r.outputs !== undefined && r.outputs !== null) throw fieldError('outputs', `expected an object or null, got ${describeType(r.outputs)}`)

  let metadata: JsonObject | undefined
  if (isJsonObject(r.metadata)) metadata = r.metadata
  else if (r.metadata !== undefined && r.metadata !== null) throw fieldError('metadata', `expected an object or null, got ${describeType(r.metadata)}`)
  const splitKey = decodeSplit(r, metadata, c, form)
  if (metadata) {
    const rest = without(metadata, [splitKey])
    // An empty metadata object is kept; one that only held the split is implied by it.
    if (Object.keys(rest).length || splitKey === undefined) c.metadata = rest
  }

  // The other keys of inputs and outputs join the metadata; those that cannot stay as they were.
  const hadMetadata = c.metadata !== undefined
  const keptInputs = toMetadata(restInputs, c, form, 'input_keys')
  if (Object.keys(keptInputs).length) extras[INPUTS] = keptInputs
  if (restOutputs !== undefined) {
    const keptOutputs = toMetadata(restOutputs, c, form, 'output_keys')
    if (Object.keys(keptOutputs).length || c.expected_output === undefined) extras[OUTPUTS] = keptOutputs
  }
  if (!hadMetadata && c.metadata !== undefined) form.metadata = 'moved'

  for (const [k, v] of Object.entries(r)) {
    if (EXAMPLE_KEYS.includes(k) && !(k !== 'id' && v === null)) continue
    if (k === 'split' && form.split === 'top') continue
    extras[toExtraKey(k)] = v
  }
  trimForm(c, form)
  if (Object.keys(form).length) extras[FORM] = form
  return setExtras(c, extras)
}

/**
 * Moves the keys of `rest` (inputs' or outputs' other keys) into the case's metadata, their names
 * listed in `form[listKey]`; gives back those that cannot go there (a key the metadata has, the
 * carry's key, the split's).
 */
function toMetadata(rest: JsonObject, c: EvalCase, form: JsonObject, listKey: 'input_keys' | 'output_keys'): JsonObject {
  const kept: JsonObject = {}
  const moved: string[] = []
  // Keys are own data keys here: the codecs refuse `__proto__` where they parse.
  const metadata: JsonObject = { ...c.metadata }
  for (const [k, v] of Object.entries(rest)) {
    if (k === CARRY_KEY || k === 'dataset_split' || Object.hasOwn(metadata, k)) kept[k] = v
    else {
      metadata[k] = v
      moved.push(k)
    }
  }
  if (moved.length) {
    c.metadata = metadata
    form[listKey] = moved
  }
  return kept
}

/** The metadata keys `form[listKey]` names, taken out of `metadata` (in place) with their values. */
function fromMetadata(metadata: JsonObject | undefined, form: JsonObject, listKey: 'input_keys' | 'output_keys'): JsonObject {
  const taken: JsonObject = {}
  const keys = form[listKey]
  if (!metadata || !Array.isArray(keys)) return taken
  for (const k of keys) {
    if (typeof k !== 'string' || !Object.hasOwn(metadata, k)) continue
    taken[k] = metadata[k]!
    delete metadata[k]
  }
  return taken
}

/** Forgets the spellings that encoding would choose anyway, so a case from elsewhere reads back unmarked. */
function trimForm(c: EvalCase, form: JsonObject): void {
  const inputText = c.input === undefined ? undefined : singleText(c.input, 'user')
  if (form.input_key === DEFAULT_INPUT_KEY && form.input_style === undefined) delete form.input_key
  if (form.input_key === 'messages' && form.input_style === 'openai' && c.input !== undefined && inputText === undefined) {
    delete form.input_key
    delete form.input_style
  }
  const expected = c.expected_output
  if (expected === undefined) return
  if (!isMessageList(expected)) {
    if (form.expected_key === DEFAULT_EXPECTED_KEY) delete form.expected_key
    return
  }
  if (form.expected_style === 'langchain') return
  const conversation = form.input_style !== undefined || (c.input !== undefined && inputText === undefined)
  const kv = singleText(expected, 'assistant') !== undefined && !conversation
  if (form.expected_list === true) {
    if (form.expected_key === 'messages' && expected.length !== 1) {
      delete form.expected_key
      delete form.expected_list
    }
  } else if (kv ? form.expected_key === DEFAULT_EXPECTED_KEY : form.expected_key === 'message' && expected.length === 1) {
    delete form.expected_key
  }
}

// ---------------------------------------------------------------------------------------------
// encoding a case

function encodeInputs(c: EvalCase, form: JsonObject, extras: JsonObject, moved: JsonObject): JsonObject {
  const inputs: JsonObject = {}
  const key = typeof form.input_key === 'string' ? form.input_key : undefined
  const style = form.input_style === 'langchain' ? 'langchain' : form.input_style === 'openai' ? 'openai' : undefined
  if (c.input !== undefined) {
    const text = singleText(c.input, 'user')
    if (style !== undefined && key !== undefined) inputs[key] = encodeMessages(c.input, style)
    else if (text !== undefined) inputs[key ?? DEFAULT_INPUT_KEY] = text
    else inputs.messages = encodeMessages(c.input, 'openai')
  }
  if (c.context !== undefined) {
    const contextKey = typeof form.context_key === 'string' ? form.context_key : CONTEXT_KEYS[0]!
    if (!Object.hasOwn(inputs, contextKey)) inputs[contextKey] = c.context
  }
  const rest = extras[INPUTS]
  for (const [k, v] of Object.entries(moved)) if (!Object.hasOwn(inputs, k)) inputs[k] = v
  if (isJsonObject(rest)) for (const [k, v] of Object.entries(rest)) if (!Object.hasOwn(inputs, k)) inputs[k] = v
  return inputs
}

function encodeOutputs(c: EvalCase, form: JsonObject, extras: JsonObject, moved: JsonObject): JsonObject | undefined {
  const rest = extras[OUTPUTS]
  const expected = c.expected_output
  if (expected === undefined && !isJsonObject(rest) && !Object.keys(moved).length) return undefined
  const outputs: JsonObject = {}
  const key = typeof form.expected_key === 'string' ? form.expected_key : undefined
  if (expected !== undefined) {
    if (!isMessageList(expected)) outputs[key ?? DEFAULT_EXPECTED_KEY] = expected as JsonValue
    else {
      const text = singleText(expected, 'assistant')
      const langchain = form.expected_style === 'langchain'
      const list = form.expected_list === true
      const kvKey = key !== undefined && key !== 'message' && key !== 'messages' && !langchain && !list ? key : undefined
      const conversation = form.input_style !== undefined || (c.input !== undefined && singleText(c.input, 'user') === undefined)
      if (text !== undefined && kvKey !== undefined) outputs[kvKey] = text
      else if (text !== undefined && key === undefined && !conversation) outputs[DEFAULT_EXPECTED_KEY] = text
      else if (langchain) outputs[key ?? 'output'] = list ? encodeMessages(expected, 'langchain') : encodeLangChainMessage(expected[0]!)
      else if (list || expected.length !== 1) outputs[list && key ? key : 'messages'] = encodeMessages(expected, 'openai')
      else outputs.message = encodeOpenAIMessage(expected[0]!)
    }
  }
  for (const [k, v] of Object.entries(moved)) if (!Object.hasOwn(outputs, k)) outputs[k] = v
  if (isJsonObject(rest)) for (const [k, v] of Object.entries(rest)) if (!Object.hasOwn(outputs, k)) outputs[k] = v
  return outputs
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function encodeExample(c: EvalCase): JsonObject {
  const extras = ownExtras(c)
  const form = isJsonObject(extras[FORM]) ? extras[FORM] : {}
  const out: JsonObject = {}
  // LangSmith's example ids are UUIDs, and an upload with any other is refused: an id from another
  // format that is none is carried; one a LangSmith file had is written back as it was.
  if (c.id !== undefined && (UUID.test(c.id) || form.id === 'as written')) out.id = c.id
  // The metadata that came from inputs and outputs goes back there.
  let metadata: JsonObject | undefined = c.metadata === undefined ? undefined : { ...c.metadata }
  const movedInputs = fromMetadata(metadata, form, 'input_keys')
  const movedOutputs = fromMetadata(metadata, form, 'output_keys')
  if (form.metadata === 'moved' && metadata !== undefined && !Object.keys(metadata).length) metadata = undefined
  out.inputs = encodeInputs(c, form, extras, movedInputs)
  const outputs = encodeOutputs(c, form, extras, movedOutputs)
  if (outputs !== undefined) out.outputs = outputs

  if (c.split !== undefined) {
    if (form.split === 'top') out.split = c.split
    else {
      metadata ??= {}
      metadata.dataset_split = form.split === 'string' && typeof c.split === 'string' ? c.split : typeof c.split === 'string' ? [c.split] : c.split
    }
  }
  if (metadata !== undefined) out.metadata = metadata
  for (const [k, v] of Object.entries(extras)) {
    const original = fromExtraKey(k)
    if (original !== undefined && !Object.hasOwn(out, original)) out[original] = v
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// CSV rows

function isOwnTable(columns: string[]): boolean {
  return columns.some((k) => k === 'inputs' || k.startsWith('inputs.'))
}

/**
 * A value as one cell: JSON as Python's json writes it (NaN and the infinities by name), strings
 * as they are unless they would read back as JSON (or are empty).
 */
function toCell(value: JsonValue): string {
  if (typeof value !== 'string') return stringifyJson(value)
  if (value === '') return '""'
  if (!mayBeJson(value)) return value
  try {
    parseExact(value)
    return JSON.stringify(value)
  } catch {
    return value
  }
}

function fromCell(cell: string): JsonValue {
  if (!mayBeJson(cell)) return cell
  try {
    return parseExact(cell).value as JsonValue
  } catch {
    return cell
  }
}

function toRow(record: JsonObject): JsonObject {
  const row: JsonObject = {}
  for (const [k, v] of Object.entries(record)) {
    if (NESTED.includes(k) && isJsonObject(v) && Object.keys(v).length) {
      for (const [sub, sv] of Object.entries(v)) row[`${k}.${sub}`] = toCell(sv)
    } else row[k] = toCell(v)
  }
  return row
}

function fromOwnRow(row: JsonObject): JsonObject {
  const record: JsonObject = {}
  for (const [column, cell] of Object.entries(row)) {
    if (typeof cell !== 'string' || cell === '') continue
    const dot = column.indexOf('.')
    const group = dot === -1 ? undefined : column.slice(0, dot)
    if (group !== undefined && NESTED.includes(group)) {
      const holder = isJsonObject(record[group]) ? record[group] : (record[group] = {})
      holder[column.slice(dot + 1)] = fromCell(cell)
    } else if (NESTED.includes(column) && isJsonObject(record[column])) {
      Object.assign(record[column], expectObject(fromCell(cell), column))
    } else record[column] = fromCell(cell)
  }
  return record
}

function columnList(value: string | string[] | undefined): string[] {
  if (value === undefined) return []
  const items = Array.isArray(value) ? value : [value]
  return items.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '')
}

/** A plain table cell: text, except a JSON list (a context list, say). */
function plainCell(cell: JsonValue): JsonValue {
  if (typeof cell === 'string' && cell.startsWith('[')) {
    try {
      return JSON.parse(cell) as JsonValue
    } catch {
      return cell
    }
  }
  return cell
}

/** Any table, as `upload_csv(input_keys, output_keys)` would take it; the map names the columns. */
function fromPlainRow(row: JsonObject, map: DecodeContext['map']): { record: JsonObject; preferred: Preferred } {
  const m: FieldMapping = map && typeof map !== 'function' ? map : {}
  const columns = Object.keys(row)
  let inputKeys = [...columnList(m.inputs), ...columnList(m.input), ...columnList(m.context)]
  let outputKeys = [...columnList(m.outputs), ...columnList(m.expected_output)]
  // Headers as people write them: `Question` and `Best Answer` are well-known names too.
  if (!inputKeys.length) inputKeys = columns.filter((k) => isWellKnown(k, INPUT_KEYS) || isWellKnown(k, CONTEXT_KEYS) || k === 'messages')
  if (!outputKeys.length) outputKeys = columns.filter((k) => isWellKnown(k, EXPECTED_KEYS) && !inputKeys.includes(k))
  const ignore = columnList(m.ignore)
  const idColumn = columnList(m.id)[0] ?? columns.find((k) => isWellKnown(k, ID_KEYS))
  const splitColumn = columnList(m.split)[0]
  // A CSV header is every row's: a mapped column it lacks is a mistake in the mapping, said once, as for other tables.
  for (const key of ['inputs', 'input', 'context', 'outputs', 'expected_output', 'metadata'] as const) {
    const absent = columnList(m[key]).find((k) => !columns.includes(k))
    if (absent !== undefined) throw new UsageError(`--map ${key}=${columnList(m[key]).join(',')}: the table has no column "${absent}" (its columns: ${columns.join(', ')})`)
  }

  const record: JsonObject = {}
  const inputs: JsonObject = {}
  const outputs: JsonObject = {}
  const metadata: JsonObject = {}
  for (const [column, cell] of Object.entries(row)) {
    if (ignore.includes(column)) continue
    if (column === idColumn) {
      if (cell !== '') record.id = cell
    } else if (column === splitColumn) {
      if (cell !== '') record.split = cell
    } else if (inputKeys.includes(column)) inputs[column] = plainCell(cell)
    else if (outputKeys.includes(column)) outputs[column] = plainCell(cell)
    else metadata[column] = cell
  }
  record.inputs = inputs
  if (outputKeys.length) record.outputs = outputs
  if (Object.keys(metadata).length) record.metadata = metadata
  // Columns the map names that no well-known name covers: the first input and output column is the case's.
  const preferred = preferredKeys(map)
  const firstInput = inputKeys.find((k) => !CONTEXT_KEYS.includes(k))
  if (preferred.input === undefined && firstInput !== undefined && !inputKeys.some((k) => INPUT_KEYS.includes(k))) preferred.input = firstInput
  if (preferred.expected === undefined && outputKeys[0] !== undefined && !outputKeys.some((k) => EXPECTED_KEYS.includes(k))) preferred.expected = outputKeys[0]
  return { record, preferred }
}

// ---------------------------------------------------------------------------------------------
// layout and sniffing

const GROUP_ORDER = ['id', 'inputs', 'outputs', 'metadata']

function columnRank(column: string): number {
  const group = column.split('.')[0]!
  const rank = GROUP_ORDER.indexOf(group)
  return rank === -1 ? GROUP_ORDER.length : rank
}

/** What the pipeline will hand `encode` for a sample case: no generated fields, no file keys. */
function asEncoded(c: EvalCase): EvalCase {
  const copy: EvalCase = { ...c }
  for (const field of c.generated ?? []) delete (copy as Record<string, unknown>)[field]
  delete copy.generated
  const own = copy.extras?.[FORMAT]
  if (own && FILE in own) {
    const rest = without(own, [FILE])
    const extras = { ...copy.extras }
    if (Object.keys(rest).length) extras[FORMAT] = rest
    else delete extras[FORMAT]
    if (Object.keys(extras).length) copy.extras = extras
    else delete copy.extras
  }
  return copy
}

function layout(container: Container, sample: EvalCase[]): FileLayout {
  const header = ownExtras(sample[0])[FILE]
  if (container === 'json') return isJsonObject(header) && Object.keys(header).length ? { header, listKey: 'examples', indent: 2 } : { indent: 2 }
  if (container !== 'csv') return {}
  // A streamed CSV header cannot grow, so it is the union of the sample's columns, carried fields included.
  const decodeContext: DecodeContext = { file: '', container, header: {}, index: 0, state: {}, warn: () => {} }
  // A set keeps the order they come in: a wide table's sample has thousands of columns in each case.
  const columnSet = new Set<string>()
  // An empty dataset still gets a header, as a table with none would not read back.
  for (const original of sample.length ? sample : [A_CASE]) {
    const c = asEncoded(original)
    let row = toRow(encodeExample(c))
    const carried = lostFields(c, applyCarry(decodeExample(row, decodeContext)))
    if (Object.keys(carried).length) row = toRow(encodeExample(withCarry(c, carried)))
    for (const k of Object.keys(row)) columnSet.add(k)
  }
  return { columns: [...columnSet].map((k, i) => ({ k, i })).sort((a, b) => columnRank(a.k) - columnRank(b.k) || a.i - b.i).map((x) => x.k) }
}

function sniff(sample: SniffSample): number {
  if (sample.container === 'csv') return isOwnTable(sample.columns ?? []) ? 0.9 : 0
  let best = 0
  for (const r of sample.records) {
    if (!isJsonObject(r) || !isJsonObject(r.inputs)) continue
    const strong = 'dataset_id' in r || Array.isArray(r.inputs.messages) || isJsonObject(r.outputs) || r.outputs === null
    best = Math.max(best, strong ? 0.95 : 0.8)
  }
  return best
}

const langsmith: Adapter = {
  name: 'langsmith',
  mapsRows: true,
  aliases: [],
  title: 'LangSmith examples (inputs/outputs/metadata/split): kv, llm and chat datasets',
  reads: ['json', 'jsonl', 'csv'],
  writes: ['json', 'jsonl', 'csv'],
  recordKeys: ['examples'],

  decode(record, ctx) {
    if (typeof ctx.map === 'function') return ctx.map(expectObject(record, ''))
    return decodeExample(record, ctx)
  },

  encode(c, ctx) {
    const record = encodeExample(c)
    return ctx.container === 'csv' ? toRow(record) : record
  },

  layout,
  sniff,
}

export default langsmith
