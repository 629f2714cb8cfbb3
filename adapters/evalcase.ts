/**
 * evalcase YAML, the AgentV eval-case format, in all its dialects: the early `evalcases:` list with
 * `expected_outcome`/`input_messages`/`expected_messages`, and AgentV 4's `tests:` with `criteria`
 * and `assertions`. JSON Lines files hold one case a line, with file-level keys in a sibling YAML.
 *
 * Each field has a default spelling: `input` and `expected_output` (string shorthands where they
 * fit), and the outcome key of the file's dialect (`expected_outcome` under `evalcases:`, `criteria`
 * under `tests:`, which `--dialect agentv` writes). Cases from other formats are written so, which
 * both the spec and AgentV 4.42.4's loader read. Reading remembers, per case, only the spellings
 * that differ from the default (`extras.evalcase.$form`), so that a case writes back as it was read
 * and a default-spelled record decodes to no marker at all, which the carry check relies on.
 * The dialect travels in the YAML header as `$list` (the list key), which the YAML codec reports.
 *
 * A case with no input (DeepEval multi-turn goldens have a `scenario` instead) comes with its turns
 * as input messages (see `withTurnsAsInput` in src/case-encoder.ts); with no turns either, it is written
 * with its scenario as the one user message, because AgentV refuses a case without `input`; the
 * carry keeps the original exact, since that input does not read back as the case's own.
 */
import { extrasOf, fieldChecks, under } from './fields.ts'
import { agentv5Refusals, caseToTest, inputVariable, testToCase, type TestDialect } from './test-case.ts'
import { fieldError } from '../src/errors.ts'
import {
  CARRY_KEY,
  hasKeys,
  isJsonObject,
  isMessageList,
  ROLES,
  singleText,
  type Content,
  type ContentBlock,
  type EvalCase,
  type JsonObject,
  type JsonValue,
  type Message,
  type Role,
  type Rubric,
  type ToolCall,
} from '../src/model.ts'
import { CASES_FILE_KEY, LIST_KEY } from '../src/codecs/types.ts'
import type { Adapter, Container, DecodeContext, EncodeContext, FileLayout, Refusal, SniffSample } from './types.ts'

const FORMAT = 'evalcase'
const { describeType, expectString, expectObject } = fieldChecks('a mapping')
const { toExtraKey, fromExtraKey, ownExtras, writeExtras, setExtras } = extrasOf(FORMAT)

/** Keys of extras that are this adapter's own markers, not keys of the source record. */
const FORM = '$form'
const FILE = '$file'

const RECORD_KEYS = ['evalcases', 'eval_cases', 'cases', 'tests']
const INCLUDE_PREFIX = 'file://'

/** The spellings a case field may take; the first is what cases from other formats get. */
const INPUT_KEYS = ['input', 'input_messages'] as const
const EXPECTED_OUTPUT_KEYS = ['expected_output', 'expected_messages'] as const
const OUTCOME_KEYS = ['expected_outcome', 'criteria'] as const
const RUBRIC_TEXT_KEYS = ['expected_outcome', 'outcome', 'description'] as const

/** Case keys with a canonical field of the same name and a plain type. */
const STRING_FIELDS = ['description', 'conversation_id', 'note'] as const
const OBJECT_FIELDS = ['metadata', 'execution', 'sidecar'] as const

const HANDLED_KEYS = new Set<string>([
  'id',
  ...INPUT_KEYS,
  ...EXPECTED_OUTPUT_KEYS,
  ...OUTCOME_KEYS,
  'rubrics',
  ...STRING_FIELDS,
  ...OBJECT_FIELDS,
])

// ---------------------------------------------------------------------------------------------
// extras: unknown source keys kept as they are (see ./fields.ts), and the spellings a case used.

function form(c: EvalCase): JsonObject {
  const f = ownExtras(c)[FORM]
  return isJsonObject(f) ? f : {}
}

// ---------------------------------------------------------------------------------------------
// decoding

const BLOCK_TYPES = ['text', 'file', 'image', 'json'] as const

function decodeBlock(raw: unknown): ContentBlock {
  const block = expectObject(raw, '')
  const type = block.type
  if (typeof type !== 'string' || !(BLOCK_TYPES as readonly string[]).includes(type)) {
    throw fieldError('type', `expected one of ${BLOCK_TYPES.join(', ')}, got ${describeType(type)}`)
  }
  const allowed = type === 'image' ? ['type', 'value', 'mime_type'] : ['type', 'value']
  const unexpected = Object.keys(block).find((k) => !allowed.includes(k))
  if (unexpected !== undefined) throw fieldError(unexpected, `unexpected key in a ${type} block`)
  if (!('value' in block)) throw fieldError('value', `a ${type} block needs a value`)
  if (type === 'json') return { type, value: block.value as JsonValue }
  const value = expectString(block.value, 'value')
  if (type === 'image') {
    return block.mime_type === undefined ? { type, value } : { type, value, mime_type: expectString(block.mime_type, 'mime_type') }
  }
  return { type: type as 'text' | 'file', value }
}

/** Message content; `kind` tells how it was written when it is not a string or block list. */
function decodeContent(raw: unknown): { content: Content; kind?: string } {
  if (typeof raw === 'string') return { content: raw }
  if (raw === undefined) return { content: '', kind: 'absent' }
  if (raw === null) return { content: '', kind: 'null' }
  if (Array.isArray(raw)) return { content: raw.map((b, i) => under(`[${i}]`, () => decodeBlock(b))) }
  if (isJsonObject(raw)) return { content: [{ type: 'json', value: raw }], kind: 'object' }
  throw fieldError('', `expected a string, a list of content blocks or a mapping, got ${describeType(raw)}`)
}

function decodeToolCall(raw: unknown): ToolCall {
  const call = expectObject(raw, '')
  const extras: JsonObject = {}
  let tc: ToolCall
  if ('function' in call) {
    // OpenAI style: `arguments` is JSON text.
    const fn = expectObject(call.function, 'function')
    tc = { name: expectString(fn.name, 'function.name') }
    if (call.id !== undefined) tc.id = expectString(call.id, 'id')
    if (call.type !== undefined) tc.type = expectString(call.type, 'type')
    if (fn.arguments !== undefined) {
      if (typeof fn.arguments === 'string') {
        let parsed: JsonValue | undefined
        try {
          parsed = JSON.parse(fn.arguments) as JsonValue
        } catch {
          parsed = undefined
        }
        if (parsed !== undefined && JSON.stringify(parsed) === fn.arguments) tc.arguments = parsed
        else if (parsed !== undefined) {
          tc.arguments = parsed
          extras.$arguments_text = fn.arguments // spacing the parsed value would not give back
        } else {
          tc.arguments = fn.arguments
          extras.$arguments_text = fn.arguments
        }
      } else {
        tc.arguments = fn.arguments
        extras.$arguments_text = null // arguments written as a value, not as JSON text
      }
    }
    for (const [k, v] of Object.entries(fn)) if (k !== 'name' && k !== 'arguments') extras[`$function.${k}`] = v
    for (const [k, v] of Object.entries(call)) if (!['function', 'id', 'type'].includes(k)) extras[toExtraKey(k)] = v
  } else if ('tool' in call) {
    // AgentV's runtime shape.
    tc = { name: expectString(call.tool, 'tool') }
    // Without an output, a call is written OpenAI-style unless marked.
    if (call.output === undefined) extras.$style = 'agentv'
    if (call.id !== undefined) tc.id = expectString(call.id, 'id')
    if (call.input !== undefined) tc.arguments = call.input
    if (call.output !== undefined) tc.output = call.output
    for (const [k, v] of Object.entries(call)) if (!['tool', 'id', 'input', 'output'].includes(k)) extras[toExtraKey(k)] = v
  } else {
    throw fieldError('function', 'expected `function: {name, arguments}` or `tool`')
  }
  return setExtras(tc, extras)
}

function decodeMessage(raw: unknown): Message {
  const m = expectObject(raw, '')
  if (m.role === undefined) throw fieldError('role', `a message needs a role (${ROLES.join(', ')})`)
  if (typeof m.role !== 'string' || !(ROLES as readonly string[]).includes(m.role)) {
    throw fieldError('role', `expected one of ${ROLES.join(', ')}, got ${describeType(m.role)}`)
  }
  const { content, kind } = under('content', () => decodeContent(m.content))
  const message: Message = { role: m.role as Role, content }
  const extras: JsonObject = {}
  if (kind !== undefined) extras.$content = kind
  if (m.tool_call_id !== undefined) message.tool_call_id = expectString(m.tool_call_id, 'tool_call_id')
  if (m.name !== undefined) message.name = expectString(m.name, 'name')
  if (m.tool_calls !== undefined) {
    if (!Array.isArray(m.tool_calls)) throw fieldError('tool_calls', `expected a list, got ${describeType(m.tool_calls)}`)
    message.tool_calls = m.tool_calls.map((t, i) => under(`tool_calls[${i}]`, () => decodeToolCall(t)))
  }
  for (const [k, v] of Object.entries(m)) {
    if (!['role', 'content', 'tool_call_id', 'name', 'tool_calls'].includes(k)) extras[toExtraKey(k)] = v
  }
  return setExtras(message, extras)
}

function decodeMessages(raw: unknown[]): Message[] {
  return raw.map((m, i) => under(`[${i}]`, () => decodeMessage(m)))
}

/** `input`/`input_messages`: a string is one user message. */
function decodeInput(raw: unknown, key: string): { messages: Message[]; text: boolean } {
  if (typeof raw === 'string') return { messages: [{ role: 'user', content: raw }], text: true }
  if (Array.isArray(raw)) return { messages: under(key, () => decodeMessages(raw)), text: false }
  throw fieldError(key, `expected a string or a list of messages, got ${describeType(raw)}`)
}

/** A list reads as messages when its items are mappings and one of them has a role. */
function looksLikeMessages(raw: unknown[]): boolean {
  return raw.length > 0 && raw.every(isJsonObject) && raw.some((m) => 'role' in m)
}

/** `expected_output`/`expected_messages`: a string is one assistant message; a mapping without a role is a structured answer. */
function decodeExpectedOutput(raw: unknown, key: string): { value: Message[] | JsonValue; shape: 'text' | 'list' | 'message' | 'value' } {
  if (typeof raw === 'string') return { value: [{ role: 'assistant', content: raw }], shape: 'text' }
  if (Array.isArray(raw) && (raw.length === 0 || looksLikeMessages(raw))) {
    return { value: under(key, () => decodeMessages(raw)), shape: 'list' }
  }
  if (isJsonObject(raw) && 'role' in raw) {
    // One message written without its list.
    return { value: [under(key, () => decodeMessage(raw))], shape: 'message' }
  }
  return { value: raw as JsonValue, shape: 'value' }
}

/** The key of a rubric's text when written as an object: AgentV 4 reads only `outcome`. */
function rubricTextKey(agentv: boolean): string {
  return agentv ? 'outcome' : 'expected_outcome'
}

function decodeRubric(raw: unknown, agentv: boolean): Rubric {
  if (typeof raw === 'string') return { expected_outcome: raw }
  const r = expectObject(raw, '')
  const textKey = RUBRIC_TEXT_KEYS.find((k) => k in r)
  if (textKey === undefined) throw fieldError('expected_outcome', 'a rubric needs its text (`expected_outcome`, or `outcome` in AgentV 4)')
  const rubric: Rubric = { expected_outcome: expectString(r[textKey], textKey) }
  const extras: JsonObject = {}
  if (r.id !== undefined) rubric.id = expectString(r.id, 'id')
  if (r.weight !== undefined) {
    if (typeof r.weight !== 'number') throw fieldError('weight', `expected a number, got ${describeType(r.weight)}`)
    rubric.weight = r.weight
  }
  if (r.required !== undefined) {
    if (typeof r.required !== 'boolean') throw fieldError('required', `expected true or false, got ${describeType(r.required)}`)
    rubric.required = r.required
  }
  if (r.score_ranges !== undefined) rubric.score_ranges = r.score_ranges
  for (const [k, v] of Object.entries(r)) {
    if (k !== textKey && !['id', 'weight', 'required', 'score_ranges'].includes(k)) extras[toExtraKey(k)] = v
  }
  // An object holding only text would be written as a plain string unless marked.
  if (textKey !== rubricTextKey(agentv) || rubricIsPlain(rubric, extras)) extras.$text_key = textKey
  return setExtras(rubric, extras)
}

function rubricIsPlain(r: Rubric, extras: JsonObject): boolean {
  const unknownKeys = Object.keys(extras).some((k) => fromExtraKey(k) !== undefined)
  return r.id === undefined && r.weight === undefined && r.required === undefined && r.score_ranges === undefined && !unknownKeys
}

/**
 * The file's dialect from its list key: AgentV 4's `tests:`, or the earlier `evalcases:` family.
 * JSON Lines files and bare lists (included case files) have none; they came with AgentV 4.
 */
function isAgentv(listKey: unknown): boolean {
  return listKey === 'tests' || listKey === undefined || listKey === ''
}

/**
 * The dialect of the file being read, from the list key the YAML reader reports, kept for the
 * whole file. The list key stays among the file's keys, so that the cases are written back in it,
 * from another format too; but the default, `tests:` under AgentV's `$schema`, is taken off the
 * header, so that it rides in no case.
 */
function fileIsAgentv(ctx: DecodeContext): boolean {
  if (typeof ctx.state.agentv !== 'boolean') {
    const listKey = ctx.header[LIST_KEY]
    ctx.state.agentv = isAgentv(listKey)
    if (listKey === 'tests' && ctx.header.$schema === AGENTV_SCHEMA) {
      delete ctx.header[LIST_KEY]
      delete ctx.header.$schema
      ctx.state.agentvSchema = true
    }
  }
  return ctx.state.agentv as boolean
}

/** How a message list is written by default: a string when it is one plain message of `role`. */
function defaultShape(messages: Message[], role: Role): 'text' | 'list' {
  return singleText(messages, role) === undefined ? 'list' : 'text'
}

/** The `$form` entry for a field written as `key` in `shape`, or undefined when that is the default. */
function formEntry(key: string, shape: string, defaultKey: string, defaultShape: string): string | undefined {
  return key === defaultKey && shape === defaultShape ? undefined : `${key}:${shape}`
}

/** A suite's `input`, which AgentV puts before every test's own, goes to another format as a key of the file, not in each input. */
const SUITE_INPUT_NOT_SENT = (target: string) =>
  `the suite's \`input:\`, which AgentV sends before every test's input, is carried as a key of the file (with the first case), not put into each case's input: ${target} will not send it`

function decodeCase(record: unknown, ctx: DecodeContext): EvalCase {
  if (typeof record === 'string' && record.startsWith(INCLUDE_PREFIX)) {
    throw fieldError('', `an include (${record}) must be resolved by the reader, not decoded`)
  }
  // Once a file, on the first case read: a shard's too, whose first is not the file's.
  if (ctx.state.suiteInputTold === undefined && ctx.header.input !== undefined && ctx.target !== undefined && ctx.target !== 'evalcase') {
    ctx.state.suiteInputTold = true
    ctx.warn(SUITE_INPUT_NOT_SENT(ctx.target), 'input')
  }
  const v5 = readsAgentv5(record, ctx)
  if (v5) {
    const c = testToCase(record, v5)
    if (c.id === undefined) throw fieldError('id', 'every evalcase needs an id, unique in the file')
    const extras = ownExtras(c)
    return setExtras(c, { ...extras, [FORM]: { ...(isJsonObject(extras[FORM]) ? extras[FORM] : {}), dialect: AGENTV5 } })
  }
  const r = expectObject(record, '')
  const c: EvalCase = {}
  const extras: JsonObject = {}
  const f: JsonObject = {}

  if (r.id === undefined || r.id === null || r.id === '') throw fieldError('id', 'every evalcase needs an id, unique in the file')
  if (typeof r.id === 'number') {
    c.id = String(r.id)
    f.id = 'number'
  } else c.id = expectString(r.id, 'id')

  // A key written empty (`note:`, `expected_output: null`) is no field: it stays with the extras, as written.
  const given = (key: string): boolean => r[key] !== undefined && r[key] !== null
  for (const key of STRING_FIELDS) if (given(key)) c[key] = expectString(r[key], key)
  for (const key of OBJECT_FIELDS) if (given(key)) c[key] = expectObject(r[key], key)

  // Of two spellings of one field, the first present is canonical; the other stays as written.
  const agentv = fileIsAgentv(ctx)
  const inputKey = INPUT_KEYS.find(given)
  if (inputKey !== undefined) {
    const { messages, text } = decodeInput(r[inputKey], inputKey)
    c.input = messages
    const entry = formEntry(inputKey, text ? 'text' : 'list', 'input', defaultShape(messages, 'user'))
    if (entry) f.input = entry
  }
  const expectedKey = EXPECTED_OUTPUT_KEYS.find(given)
  if (expectedKey !== undefined) {
    const { value, shape } = decodeExpectedOutput(r[expectedKey], expectedKey)
    c.expected_output = value
    const usual = shape === 'value' ? 'value' : defaultShape(value as Message[], 'assistant')
    const entry = formEntry(expectedKey, shape, 'expected_output', usual)
    if (entry) f.expected_output = entry
  }
  const outcomeKey = OUTCOME_KEYS.find(given)
  if (outcomeKey !== undefined) {
    c.expected_outcome = expectString(r[outcomeKey], outcomeKey)
    if (outcomeKey !== (agentv ? 'criteria' : 'expected_outcome')) f.expected_outcome = outcomeKey
    // A lint of the source as AgentV reads it: of no concern when the cases go to another format.
    const forAgentv = ctx.target === undefined || ctx.target === 'evalcase'
    if (outcomeKey === 'expected_outcome' && agentv && forAgentv) ctx.warn('AgentV 4 reads `expected_outcome` as the deprecated spelling of `criteria`', outcomeKey)
  }
  if (given('rubrics')) {
    if (!Array.isArray(r.rubrics)) throw fieldError('rubrics', `expected a list, got ${describeType(r.rubrics)}`)
    c.rubrics = r.rubrics.map((x, i) => under(`rubrics[${i}]`, () => decodeRubric(x, agentv)))
  }

  for (const key in r) {
    const value = r[key]
    const isSpelling = (INPUT_KEYS as readonly string[]).includes(key) || (EXPECTED_OUTPUT_KEYS as readonly string[]).includes(key) || (OUTCOME_KEYS as readonly string[]).includes(key)
    const used = key === inputKey || key === expectedKey || key === outcomeKey
    if (!HANDLED_KEYS.has(key) || (isSpelling && !used) || (value === null && key !== 'id')) extras[toExtraKey(key)] = value as JsonValue
  }
  if (hasKeys(f)) extras[FORM] = f
  return setExtras(c, extras)
}

// ---------------------------------------------------------------------------------------------
// AgentV 5: promptfoo's test shape (`vars`, `assert`), read and written by ./test-case.ts

const AGENTV5 = 'agentv5'
/** Suite keys only AgentV 5 has. */
const AGENTV5_FILE_KEYS = ['prompts', 'providers', 'default_test']

function agentv5(header: JsonObject): TestDialect {
  return { format: FORMAT, agentv: true, inputVar: inputVariable(header.prompts) }
}

/** The AgentV 5 dialect, where the file's keys are AgentV 5's or the case has `vars` and no `input`; else undefined. */
function readsAgentv5(record: unknown, ctx: DecodeContext): TestDialect | undefined {
  if (typeof ctx.state.agentv5 !== 'boolean') ctx.state.agentv5 = AGENTV5_FILE_KEYS.some((k) => k in ctx.header)
  const own = isJsonObject(record) && isJsonObject(record.vars) && !INPUT_KEYS.some((k) => k in record)
  if (!ctx.state.agentv5 && !own) return undefined
  // `tests:` alone is how AgentV 5's cases are written where the file has no keys: no spelling to remember.
  if (ctx.header[LIST_KEY] === 'tests' && Object.keys(ctx.header).every((k) => k === LIST_KEY)) delete ctx.header[LIST_KEY]
  return agentv5(ctx.header)
}

/** The AgentV 5 dialect for a case read in it, or into a file of AgentV 5's keys, unless `--dialect` names another. */
function writesAgentv5(c: EvalCase, ctx: EncodeContext): TestDialect | undefined {
  if (ctx.dialect !== undefined) return undefined
  const header = ctx.layout?.header ?? {}
  return form(c).dialect === AGENTV5 || AGENTV5_FILE_KEYS.some((k) => k in header) ? agentv5(header) : undefined
}

// ---------------------------------------------------------------------------------------------
// encoding

function encodeContent(m: Message): JsonValue | undefined {
  const kind = ownExtras(m).$content
  const { content } = m
  if (kind === 'absent' && content === '') return undefined
  if (kind === 'null' && content === '') return null
  if (kind === 'object' && Array.isArray(content) && content.length === 1 && content[0]?.type === 'json') return content[0].value
  if (typeof content === 'string') return content
  return content.map((b): JsonObject => ({ ...b }))
}

function encodeToolCall(tc: ToolCall): JsonObject {
  const extras = ownExtras(tc)
  const out: JsonObject = {}
  // A call with an output can only be written in AgentV's runtime shape.
  if (extras.$style === 'agentv' || tc.output !== undefined) {
    if (tc.id !== undefined) out.id = tc.id
    out.tool = tc.name
    if (tc.arguments !== undefined) out.input = tc.arguments
    if (tc.output !== undefined) out.output = tc.output
  } else {
    if (tc.id !== undefined) out.id = tc.id
    if (tc.type !== undefined) out.type = tc.type
    const fn: JsonObject = { name: tc.name }
    if (tc.arguments !== undefined) {
      const text = extras.$arguments_text
      if (text === null) fn.arguments = tc.arguments
      else if (typeof text === 'string') fn.arguments = text
      else fn.arguments = JSON.stringify(tc.arguments)
    }
    for (const [k, v] of Object.entries(extras)) if (k.startsWith('$function.')) fn[k.slice('$function.'.length)] = v
    out.function = fn
  }
  writeExtras(out, extras)
  return out
}

function encodeMessage(m: Message): JsonObject {
  const out: JsonObject = { role: m.role }
  const content = encodeContent(m)
  if (content !== undefined) out.content = content
  if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls.map(encodeToolCall)
  if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id
  if (m.name !== undefined) out.name = m.name
  writeExtras(out, ownExtras(m))
  return out
}

/** The first image block of `messages` whose value is a URL (a `data:` one too), with its field path. */
function imageUrl(messages: unknown, key: string): { url: string; field: string } | undefined {
  if (!isMessageList(messages)) return undefined
  for (let i = 0; i < messages.length; i++) {
    const content = messages[i]!.content
    if (typeof content === 'string') continue
    for (let j = 0; j < content.length; j++) {
      const b = content[j]!
      if (b.type === 'image' && /^(?:[a-z][a-z0-9+.-]*:\/\/|data:)/i.test(b.value)) return { url: b.value, field: `${key}[${i}].content[${j}]` }
    }
  }
  return undefined
}

/** The first message of `messages` whose role `agentv validate` refuses, with its field path. */
function roleRefused(messages: unknown, key: string): { role: string; field: string } | undefined {
  if (!isMessageList(messages)) return undefined
  const i = messages.findIndex((m) => validateRefuses(m.role))
  return i < 0 ? undefined : { role: messages[i]!.role, field: `${key}[${i}].role` }
}

function encodeRubric(r: Rubric, agentv: boolean): JsonValue {
  const extras = ownExtras(r)
  const textKey = typeof extras.$text_key === 'string' ? extras.$text_key : undefined
  if (textKey === undefined && rubricIsPlain(r, extras)) return r.expected_outcome
  const out: JsonObject = {}
  if (r.id !== undefined) out.id = r.id
  out[textKey ?? rubricTextKey(agentv)] = r.expected_outcome
  if (r.weight !== undefined) out.weight = r.weight
  if (r.required !== undefined) out.required = r.required
  if (r.score_ranges !== undefined) out.score_ranges = r.score_ranges
  writeExtras(out, extras)
  return out
}

/** The spelling remembered for `field`, split into key and shape (`input:text` → input, text). */
function spelling(c: EvalCase, field: string): { key?: string; shape?: string } {
  const value = form(c)[field]
  if (typeof value !== 'string') return {}
  const [key, shape] = value.split(':')
  return { key, ...(shape === undefined ? {} : { shape }) }
}

/** The dialect a case is written in: that of the layout's list key, or `--dialect`. */
function writesAgentv(ctx: EncodeContext): boolean {
  return isAgentv(writtenListKey(ctx))
}

/** The list key of the file being written (none for JSON Lines without `--dialect`, or a bare list). */
function writtenListKey(ctx: EncodeContext): string | undefined {
  return ctx.layout ? ctx.layout.listKey : dialectListKey(ctx.container, ctx.dialect)
}

/**
 * The list key `--dialect` asks for, or, without one, the default of the container: AgentV 4's
 * `tests:`, which the current AgentV validates and runs (it refuses a file of `evalcases:`).
 */
function dialectListKey(container: Container, dialect: string | undefined): string | undefined {
  if (dialect === 'evalcase') return 'evalcases'
  if (dialect === 'agentv' || container === 'yaml') return 'tests'
  return undefined
}

/** The `$schema` by which `agentv validate` knows an eval file whatever its name (else only `*.eval.yaml`). */
const AGENTV_SCHEMA = 'agentv-eval-v2'

/** The warning for a key the source spelled as AgentV 4 no longer reads, written as it came. */
const SUPERSEDED = (key: string, now: string, effect: string): string =>
  `written as the source spelled it, \`${key}\`, which AgentV 4 no longer reads (${effect}); --dialect agentv writes \`${now}\``

function encodeCase(c: EvalCase, ctx: EncodeContext): JsonObject {
  const v5 = writesAgentv5(c, ctx)
  if (v5) return caseToTest(c, v5, ctx.warn)
  const agentv = writesAgentv(ctx)
  const out: JsonObject = {}
  if (c.id !== undefined) {
    // AgentV needs string ids, so its dialect writes them so; the carry keeps a number's spelling.
    out.id = !agentv && spelling(c, 'id').key === 'number' && /^-?\d+$/.test(c.id) ? Number(c.id) : c.id
  }
  if (c.conversation_id !== undefined) out.conversation_id = c.conversation_id
  if (c.description !== undefined) out.description = c.description
  if (c.note !== undefined) out.note = c.note

  // `--dialect agentv` writes `criteria`, which AgentV 4 reads without a deprecation warning.
  if (c.expected_outcome !== undefined) {
    out[ctx.dialect === 'agentv' ? 'criteria' : (spelling(c, 'expected_outcome').key ?? (agentv ? 'criteria' : 'expected_outcome'))] = c.expected_outcome
  }

  // AgentV 4 no longer reads `input_messages` or `expected_messages`: `--dialect agentv`, and a
  // case written with AgentV 4's `criteria`, get `input` and `expected_output`, which it reads.
  const modern = ctx.dialect === 'agentv' || out.criteria !== undefined
  // AgentV refuses a case without input: a multi-turn case's scenario stands in for it.
  const input = c.input ?? (c.scenario !== undefined ? [{ role: 'user' as const, content: c.scenario }] : undefined)
  if (input !== undefined) {
    const remembered = spelling(c, 'input')
    const key = modern ? 'input' : (remembered.key ?? 'input')
    if (key === 'input_messages') ctx.warn(SUPERSEDED('input_messages', 'input', 'it skips a case without `input`'), key)
    const text = singleText(input, 'user')
    const shape = remembered.shape ?? defaultShape(input, 'user')
    out[key] = shape === 'text' && text !== undefined ? text : input.map(encodeMessage)
  } else {
    ctx.warn('the case has no input, which AgentV requires', 'input')
  }

  if (c.expected_output !== undefined) {
    const remembered = spelling(c, 'expected_output')
    const key = modern ? 'expected_output' : (remembered.key ?? 'expected_output')
    if (key === 'expected_messages') ctx.warn(SUPERSEDED('expected_messages', 'expected_output', 'the case has no expected output there'), key)
    const value = c.expected_output
    if (isMessageList(value)) {
      const text = singleText(value, 'assistant')
      const shape = remembered.shape ?? defaultShape(value, 'assistant')
      if (shape === 'text' && text !== undefined) out[key] = text
      else if (shape === 'message' && value.length === 1 && value[0]) out[key] = encodeMessage(value[0])
      else out[key] = value.map(encodeMessage)
    } else {
      out[key] = value as JsonValue
    }
  }

  if (ctx.container === 'yaml' && writtenListKey(ctx) === 'tests') {
    const role = roleRefused(input, 'input') ?? roleRefused(c.expected_output, 'expected_output')
    if (role) ctx.warn(`a message of the role \`${role.role}\`, which agentv validate refuses in an eval file (${ROLES_TAKEN})`, role.field)
    if (typeof out.criteria === 'string' && out.criteria.trim() === '') ctx.warn('criteria of white space alone, which agentv validate refuses in an eval file (its loader reads it as none)', 'criteria')
  }
  if (out.input !== undefined && typeof out.input !== 'string' && 'input_files' in ownExtras(c)) ctx.warn(INPUT_FILES_SKIPPED, 'input_files')
  const image = imageUrl(input, 'input') ?? imageUrl(c.expected_output, 'expected_output')
  if (image) ctx.warn(`an image given as a URL (${image.url.slice(0, 80)}), which AgentV reads only from a file beside the dataset: it leaves the image out`, image.field)

  const graded = out.expected_outcome !== undefined || out.criteria !== undefined || c.expected_output !== undefined
  if (!graded && !('assertions' in ownExtras(c)) && !('assert' in ownExtras(c))) {
    ctx.warn('the case has no criteria, expected output or assertions; AgentV skips such a case', agentv ? 'criteria' : 'expected_outcome')
  } else if (!graded && ctx.container === 'jsonl' && !('assert' in ownExtras(c))) {
    // AgentV's JSON Lines loader counts a case complete by `assert` alone of the grader lists.
    ctx.warn('the case is graded only by `assertions`, which AgentV\'s JSON Lines loader does not count: it skips the case (give it criteria, or write YAML)', 'assertions')
  }
  if (c.rubrics !== undefined) {
    const rubrics = c.rubrics.map((r) => encodeRubric(r, agentv))
    out.rubrics = rubrics
    if (rubrics.some((r) => isJsonObject(r) && 'expected_outcome' in r)) {
      ctx.warn("a rubric's text is written as `expected_outcome`, as the evalcase format spells it, which AgentV 4 does not read (it reads `outcome`); --dialect agentv writes `outcome`", 'rubrics')
    }
  }
  for (const key of OBJECT_FIELDS) if (c[key] !== undefined) out[key] = c[key] as JsonObject
  writeExtras(out, ownExtras(c))
  return gradersFor(out, writtenListKey(ctx) === 'tests', ctx.warn)
}

// ---------------------------------------------------------------------------------------------
// graders

/** AgentV's first names of its judging graders, which AgentV 4 knows only by their new ones. */
const JUDGE_NAMES: Record<string, string> = { llm_judge: 'llm-grader', 'llm-judge': 'llm-grader', code_judge: 'code-grader', 'code-judge': 'code-grader' }
/** The keys of a case, a file, its `execution` or a composite grader that hold a list of graders. */
const GRADER_LISTS = ['assertions', 'assert', 'evaluators'] as const

/**
 * A case's or a file's keys with its judging graders named as the file written reads them.
 * AgentV 4 refuses a file whose `evaluator` is `llm_judge` or `code_judge` and skips a grader of
 * either type: in a `tests:` file (`--dialect agentv`) they become `llm-grader` and `code-grader`,
 * the names it asks for, and the check of each written record carries the source's names. Other
 * files keep them as they came. Either way the first place is warned of.
 */
function gradersFor(keys: JsonObject, forAgentv4: boolean, warn: (message: string, field: string) => void): JsonObject {
  // Most cases hold no grader: told by their keys alone, with nothing made.
  if (!('evaluator' in keys || 'execution' in keys || 'assertions' in keys || 'assert' in keys || 'evaluators' in keys)) return keys
  let first: { name: string; path: string } | undefined
  const rename = (name: JsonValue, path: string): JsonValue => {
    if (typeof name !== 'string' || !Object.hasOwn(JUDGE_NAMES, name)) return name
    first ??= { name, path }
    return forAgentv4 ? JUDGE_NAMES[name]! : name
  }
  const graderLists = (o: JsonObject, path: string): JsonObject => {
    for (const key of GRADER_LISTS) if (Array.isArray(o[key])) o[key] = (o[key] as JsonValue[]).map((g, i) => grader(g, `${path}${key}[${i}]`))
    return o
  }
  const grader = (g: JsonValue, path: string): JsonValue => {
    if (!isJsonObject(g)) return g
    const out: JsonObject = { ...g }
    if (g.type !== undefined) out.type = rename(g.type, `${path}.type`)
    if (isJsonObject(g.aggregator) && g.aggregator.type !== undefined) out.aggregator = { ...g.aggregator, type: rename(g.aggregator.type, `${path}.aggregator.type`) }
    return graderLists(out, `${path}.`)
  }
  const out = graderLists({ ...keys }, '')
  if (keys.evaluator !== undefined) out.evaluator = rename(keys.evaluator, 'evaluator')
  if (isJsonObject(keys.execution)) out.execution = graderLists({ ...keys.execution }, 'execution.')
  if (!first) return keys
  const now = JUDGE_NAMES[first.name]
  if (forAgentv4) {
    warn(`the grader \`${first.name}\` is written \`${now}\`, the name AgentV 4 reads (it refuses the earlier one)`, first.path)
    return out
  }
  warn(`the grader \`${first.name}\` is written as the source named it, which AgentV 4 refuses (it reads \`${now}\`); --dialect agentv writes \`${now}\``, first.path)
  return keys
}

// ---------------------------------------------------------------------------------------------
// what AgentV 4.42.4 refuses or skips

/** AgentV puts `input_files` before a text input; beside messages it finds no input. */
const INPUT_FILES_SKIPPED = 'AgentV reads `input_files` only beside an input that is text: it skips this case, whose input is messages'

/** The roles `agentv validate` takes in an eval file's messages, as its refusal of any other says them (its loader takes `tool` too). */
const VALIDATE_ROLES = ['system', 'user', 'assistant']
const validateRefuses = (role: unknown): boolean => !VALIDATE_ROLES.includes(role as string)
const ROLES_TAKEN = `it takes ${VALIDATE_ROLES.join(', ')}; its loader reads \`tool\` too`
/** List keys AgentV 4 reads besides `tests`, as deprecated names; `agentv validate` refuses a file of them. */
const DEPRECATED_LISTS = ['evalcases', 'eval_cases']

const text = (v: unknown): v is string => typeof v === 'string' && v.trim() !== ''

/** The messages of an `input` or `expected_output` written as a list of them. */
function listedMessages(value: unknown): JsonObject[] {
  return Array.isArray(value) && value.length > 0 && isJsonObject(value[0]) && 'role' in value[0] ? value.filter(isJsonObject) : []
}

/**
 * What AgentV 4.42.4 refuses in a case (`agentv validate`, which reads YAML eval files) or skips
 * (its loaders, YAML and JSON Lines): a case needs a text id, an `input`, and criteria, an
 * expected output, assertions or turns (its JSON Lines loader counts `assert` alone of the grader
 * lists). The file's list key is told at its first case.
 */
function check(record: unknown, ctx: DecodeContext): Refusal[] {
  // A case of AgentV 5's dialect is checked against AgentV 5's rules, none of AgentV 4's.
  if (readsAgentv5(record, ctx)) return agentv5Refusals(record, ctx.header, ctx.index === 0)
  if (!isJsonObject(record)) return []
  const out: Refusal[] = []
  const yaml = ctx.container === 'yaml'
  const listKey = ctx.header[LIST_KEY]
  // `agentv validate` knows an eval file by its name or its `$schema`, and passes over any other.
  if (yaml && ctx.index === 0 && listKey !== '' && !/\.eval\.ya?ml$/i.test(ctx.file) && ctx.header.$schema !== AGENTV_SCHEMA && ctx.state.agentvSchema !== true) {
    ctx.warn(`agentv validate skips a file whose name does not end .eval.yaml and that has no \`$schema: ${AGENTV_SCHEMA}\`: it checks nothing here`)
  }
  if (yaml && ctx.index === 0 && typeof listKey === 'string') {
    if (DEPRECATED_LISTS.includes(listKey)) out.push({ field: listKey, message: `agentv validate refuses a file whose cases are not under \`tests\` (its loader reads \`${listKey}\` as a deprecated name); evalferry convert --dialect agentv writes \`tests\`` })
    else if (listKey === 'cases') out.push({ field: listKey, message: 'AgentV reads no cases under `cases` (its list is `tests`); evalferry convert --dialect agentv writes `tests`' })
  }
  if (!text(record.id)) out.push({ field: 'id', message: `AgentV skips a case whose id is not text (here ${describeType(record.id)}); write it quoted` })
  const input = record.input
  if (input === undefined || input === null || (Array.isArray(input) && input.length === 0)) {
    const old = record.input_messages !== undefined ? ' (AgentV 4 no longer reads `input_messages`; evalferry convert --dialect agentv writes `input`)' : ''
    if (record.input_files === undefined) out.push({ field: 'input', message: `AgentV skips a case without input${old}` })
  }
  if (record.input_files !== undefined && typeof input !== 'string') out.push({ field: 'input_files', message: INPUT_FILES_SKIPPED })
  if (yaml) {
    for (const key of ['input', 'expected_output']) {
      listedMessages(record[key]).forEach((m, i) => {
        const role = typeof m.role === 'string' ? `\`${m.role}\`` : describeType(m.role)
        if (validateRefuses(m.role)) out.push({ field: `${key}[${i}].role`, message: `agentv validate refuses the role ${role} (${ROLES_TAKEN})` })
      })
    }
    if (record.criteria !== undefined && !text(record.criteria)) out.push({ field: 'criteria', message: 'agentv validate refuses criteria that are not text, or empty' })
  }
  const expected = record.expected_output
  const graded =
    text(record.criteria) ||
    text(record.expected_outcome) ||
    (expected !== undefined && expected !== null && !(Array.isArray(expected) && expected.length === 0)) ||
    record.assert !== undefined ||
    (yaml && (record.assertions !== undefined || (Array.isArray(record.turns) && record.turns.length > 0)))
  if (!graded) {
    const why = !yaml && record.assertions !== undefined ? ' (its JSON Lines loader does not count `assertions`)' : record.expected_messages !== undefined ? ' (AgentV 4 no longer reads `expected_messages`)' : ''
    out.push({ field: 'criteria', message: `AgentV skips a case without criteria, expected_output or assertions${why}` })
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// sniffing

const CASE_MARKERS = ['expected_outcome', 'criteria', 'input_messages', 'expected_messages', 'rubrics', 'conversation_id', 'assertions', 'vars']

function sniff(sample: SniffSample): number {
  if (sample.container !== 'yaml' && sample.container !== 'jsonl') return 0
  if (/\.eval\.ya?ml$/i.test(sample.fileName)) return 0.95
  const listKey = sample.header[LIST_KEY]
  if (listKey === 'evalcases' || listKey === 'eval_cases' || listKey === 'tests') return 0.95
  let score = 0
  for (const raw of sample.records) {
    if (typeof raw === 'string' && raw.startsWith(INCLUDE_PREFIX)) score = Math.max(score, 0.8)
    if (!isJsonObject(raw) || raw.id === undefined) continue
    if (CASE_MARKERS.some((k) => k in raw)) return 0.95
    const input = raw.input
    if (typeof input === 'string' || isMessageList(input)) score = Math.max(score, 0.7)
    // A case evalferry wrote with no input (a classification row: its columns in the metadata), by its own keys alone.
    else if (isJsonObject(raw.metadata) && isJsonObject(raw.metadata[CARRY_KEY]) && Object.keys(raw).every((k) => HANDLED_KEYS.has(k))) score = Math.max(score, 0.7)
  }
  if (score > 0 && 'execution' in sample.header) score = 0.9
  return score
}

// ---------------------------------------------------------------------------------------------

/**
 * The header is the source file's keys; the list key that of the source (`evalcases`, `tests`...),
 * `tests` with `--dialect agentv`, `evalcases` otherwise. A bare list of cases (an included file)
 * is written under a list key, since AgentV loads no bare list as an eval file. The header's
 * `$list` tells the dialect to the decoding that checks each written record.
 */
function layout(container: Container, sample: EvalCase[], ctx: EncodeContext): FileLayout {
  const source = ownExtras(sample[0])[FILE]
  const header: JsonObject = isJsonObject(source) ? { ...source } : {}
  const remembered = header[LIST_KEY]
  delete header[LIST_KEY]
  // A bare list (an included case file) is written bare again.
  if (ctx.dialect === undefined && container === 'yaml' && remembered === '') return { header }
  const fifth = sample.some((c) => form(c).dialect === AGENTV5)
  const listKey =
    ctx.dialect === undefined && container === 'yaml' && typeof remembered === 'string' && RECORD_KEYS.includes(remembered)
      ? remembered
      : ctx.dialect === undefined && container === 'yaml' && fifth
        ? 'tests'
        : dialectListKey(container, ctx.dialect)
  // A `tests:` file of AgentV 4's dialect whose dialect evalferry chose says so to AgentV, which then validates it under any name.
  const schema: JsonObject = container === 'yaml' && listKey === 'tests' && remembered !== 'tests' && !fifth && !('$schema' in header) ? { $schema: AGENTV_SCHEMA } : {}
  const named = gradersFor({ ...schema, ...header }, listKey === 'tests', ctx.warn)
  // A file named in place of the list (AgentV 4's `tests: ./dataset.jsonl`) is named again, and holds the cases, in a YAML file of the source's list key.
  const casesFile = named[CASES_FILE_KEY]
  if (typeof casesFile !== 'string' || container !== 'yaml' || listKey !== remembered) delete named[CASES_FILE_KEY]
  if (listKey === undefined) return { header: named }
  // The JSON Lines writer ignores the list key; it still tells the dialect.
  named[LIST_KEY] = listKey
  return { header: named, listKey, ...(CASES_FILE_KEY in named ? { casesFile: casesFile as string } : {}) }
}

const evalcase: Adapter = {
  name: 'evalcase',
  aliases: ['agentv'],
  title: 'evalcase YAML (AgentV eval cases: `evalcases:` and AgentV 4 `tests:`), and its JSON Lines form',
  reads: ['yaml', 'jsonl'],
  writes: ['yaml', 'jsonl'],
  recordKeys: RECORD_KEYS,
  requires: ['id'],
  uniqueIds: true,

  decode(record, ctx) {
    return decodeCase(record, ctx)
  },

  encode(c, ctx) {
    return encodeCase(c, ctx)
  },

  // The carry joins the case's metadata where the record holds it as it is (AgentV 5's tests lay
  // their metadata out otherwise, and a case without metadata would gain the key elsewhere).
  placeCarry(record, carried, c) {
    if (record.metadata === undefined || record.metadata !== c.metadata) return undefined
    return { ...record, metadata: { ...c.metadata, [CARRY_KEY]: carried } }
  },

  layout,
  sniff,
  check,

  // An item `file://cases.yaml` of the list, or the file AgentV 4 names in its place (`tests: ./dataset.jsonl`).
  include(record, header) {
    if (typeof record !== 'string') return undefined
    const named = header?.[CASES_FILE_KEY] === record
    if (!named && !record.startsWith(INCLUDE_PREFIX)) return undefined
    const path = (record.startsWith(INCLUDE_PREFIX) ? record.slice(INCLUDE_PREFIX.length) : record).trim()
    return path === '' ? undefined : path
  },

  // AgentV's JSON Lines loader reads these of the sidecar, and nothing else.
  sidecarKeys: ['description', 'name', 'execution', 'evaluator'],
  // AgentV opens a file block's path from the dataset's folder.
  relativeFiles: true,

  sidecar(file, container) {
    if (container !== 'jsonl' || !/\.jsonl(\.gz)?$/i.test(file)) return undefined
    return file.replace(/\.jsonl(\.gz)?$/i, '.yaml')
  },
}

export default evalcase
