/**
 * promptfoo's test case (`vars`, `assert`, `description`, `metadata`, `options`...) and AgentV 5's,
 * a superset of it (`id`, `criteria`, `conversation_id`, bare assertion strings, rubric lists), to
 * canonical cases and back: the one mapping the promptfoo format and evalcase's AgentV 5 dialect use.
 *
 * - The input is the prompt's variable (`vars.input`, or the one variable a suite's only prompt is,
 *   `{{ question }}`): a string is one user message, a message list the messages.
 * - The reference is `vars.expected_output` (a string is one assistant message, a message list the
 *   messages, any other value a structured answer), or a lone `equals` assertion (a plain CSV `__expected`).
 * - The criteria: AgentV 5's `criteria`, else the last text assertion (a bare string, or an
 *   `llm-rubric` of text) are `expected_outcome`; the other text assertions, and the items of an
 *   `llm-rubric` list, are `rubrics`.
 * - Other vars are row data: metadata keys, in order. The test's own `metadata` joins them; its
 *   keys are named in `$metadata` so that they are written back there, and its `evalferry` key is
 *   the carry's slot.
 * Assertions written otherwise than the canonical fields would give them back (a `script`, a
 * `contains`, an order of their own) are kept as a list in `$assert`, where each one that came
 * from a canonical field is a slot (`{$slot: "outcome"}`) filled from that field when written.
 */
import { extrasOf, fieldChecks } from './fields.ts'
import { fieldError } from '../src/errors.ts'
import { deepEqual, isCarry } from '../src/carry.ts'
import { CARRY_KEY, hasKeys, isJsonObject, isMessageList, singleText, type EvalCase, type JsonObject, type JsonValue, type Message, type Rubric } from '../src/model.ts'
import type { Refusal } from './types.ts'

export interface TestDialect {
  /** The format whose extras hold what the canonical case cannot name: `promptfoo`, or `evalcase` for AgentV 5. */
  format: string
  /** AgentV 5: `id`, `criteria` and `conversation_id` are fields, assertions may be bare strings, `llm-rubric` takes a list. */
  agentv: boolean
  /** The variable that holds the input (see `inputVariable`). */
  inputVar: string
}

const SLOT = '$slot'
const { describeType, expectString } = fieldChecks('a mapping')

/** The variable a suite's prompts send as the input: `x` when the only prompt is exactly `{{ x }}` (or `{{ vars.x }}`), else `input`. */
export function inputVariable(prompts: JsonValue | undefined): string {
  const only = Array.isArray(prompts) && prompts.length === 1 ? prompts[0] : prompts
  const text = typeof only === 'string' ? only : isJsonObject(only) && typeof only.raw === 'string' ? only.raw : undefined
  const match = text === undefined ? null : /^\s*\{\{\s*(?:vars\.)?([A-Za-z_][\w-]*)\s*\}\}\s*$/.exec(text)
  return match ? match[1]! : 'input'
}

/** Test keys each dialect maps to canonical fields; any other key is kept in extras as written. */
function handledKeys(d: TestDialect): Set<string> {
  return new Set(['description', 'vars', 'assert', 'metadata', ...(d.agentv ? ['id', 'criteria', 'conversation_id'] : [])])
}

// ---------------------------------------------------------------------------------------------
// decoding

/** A variable promptfoo and AgentV 5 split into one test per item: a list whose first item is text. */
function expands(value: JsonValue | undefined): boolean {
  return Array.isArray(value) && typeof value[0] === 'string'
}

/** Whether a value holds text starting with `file://`, which promptfoo opens as a file. */
function opensFile(value: JsonValue): boolean {
  if (typeof value === 'string') return value.startsWith('file://')
  if (Array.isArray(value)) return value.some(opensFile)
  return isJsonObject(value) && Object.values(value).some(opensFile)
}

/** The carry as read: JSON text (as promptfoo tests hold it) parsed where it is a carry. */
function carryValue(value: JsonValue): JsonValue {
  if (typeof value !== 'string') return value
  try {
    const parsed = JSON.parse(value) as JsonValue
    return isCarry(parsed) ? parsed : value
  } catch {
    return value
  }
}

/** A variable's value as the input messages, or undefined when it is neither text nor a message list. */
function inputMessages(value: JsonValue | undefined): Message[] | undefined {
  if (typeof value === 'string') return [{ role: 'user', content: value }]
  return isMessageList(value) ? (structuredClone(value) as Message[]) : undefined
}

/** A reference answer: text is one assistant message, a message list the messages, anything else a structured answer. */
function expectedOutput(value: JsonValue): Message[] | JsonValue {
  if (typeof value === 'string') return [{ role: 'assistant', content: value }]
  return isMessageList(value) ? (structuredClone(value) as Message[]) : value
}

/** Whether a message list is written in its shorthand, a string: one plain message of `role`. */
function isShorthand(messages: unknown, role: 'user' | 'assistant'): boolean {
  return isMessageList(messages) && singleText(messages, role) !== undefined
}

/** An object holding only `keys` (and at least `type`). */
function only(a: JsonValue, ...keys: string[]): a is JsonObject {
  if (!isJsonObject(a)) return false
  for (const k in a) if (!keys.includes(k)) return false
  return true
}

type Slot =
  | { kind: 'text'; text: string; bare: boolean }
  | { kind: 'rubrics'; rubrics: Rubric[] }
  | { kind: 'reference'; text: string }
  | { kind: 'kept'; value: JsonValue }

const RUBRIC_KEYS = ['id', 'outcome', 'weight', 'required', 'score_ranges']

/** An item of an AgentV 5 `llm-rubric` list: text, or `{id, outcome, weight, required, score_ranges...}`. */
function decodeRubricItem(item: JsonValue, d: TestDialect, field: string): Rubric {
  if (typeof item === 'string') return { expected_outcome: item }
  if (!isJsonObject(item)) throw fieldError(field, `expected a rubric (text or a mapping), got ${describeType(item)}`)
  const r: Rubric = { expected_outcome: item.outcome === undefined ? '' : expectString(item.outcome, `${field}.outcome`) }
  const extras: JsonObject = {}
  if (item.id !== undefined) r.id = expectString(item.id, `${field}.id`)
  if (item.weight !== undefined) {
    if (typeof item.weight !== 'number') throw fieldError(`${field}.weight`, `expected a number, got ${describeType(item.weight)}`)
    r.weight = item.weight
  }
  if (item.required !== undefined) {
    if (typeof item.required !== 'boolean') throw fieldError(`${field}.required`, `expected true or false, got ${describeType(item.required)}`)
    r.required = item.required
  }
  if (item.score_ranges !== undefined) r.score_ranges = item.score_ranges
  const { toExtraKey } = extrasOf(d.format)
  for (const [k, v] of Object.entries(item)) if (!RUBRIC_KEYS.includes(k)) extras[toExtraKey(k)] = v
  // A rubric of score ranges alone has no text; one written as a mapping of text alone stays a mapping.
  if (item.outcome === undefined) extras.$outcome = 'absent'
  else if (r.id === undefined && r.weight === undefined && r.required === undefined && r.score_ranges === undefined && !hasKeys(extras)) extras.$outcome = 'mapping'
  if (hasKeys(extras)) r.extras = { [d.format]: extras }
  return r
}

/** The slots of an assertion list: what each assertion is to the canonical case. */
function assertSlots(list: JsonValue[], d: TestDialect, referenceFree: boolean): Slot[] {
  let reference = referenceFree
  return list.map((a, i): Slot => {
    if (typeof a === 'string' && d.agentv) return { kind: 'text', text: a, bare: true }
    if (only(a, 'type', 'value') && a.type === 'llm-rubric') {
      if (typeof a.value === 'string') return { kind: 'text', text: a.value, bare: false }
      if (d.agentv && Array.isArray(a.value) && a.value.length > 0 && a.value.every((x) => typeof x === 'string' || isJsonObject(x))) {
        return { kind: 'rubrics', rubrics: a.value.map((x, j) => decodeRubricItem(x, d, `assert[${i}].value[${j}]`)) }
      }
    }
    if (reference && only(a, 'type', 'value') && a.type === 'equals' && typeof a.value === 'string') {
      reference = false
      return { kind: 'reference', text: a.value }
    }
    return { kind: 'kept', value: a }
  })
}

/** A promptfoo or AgentV 5 test as a canonical case. */
export function testToCase(record: unknown, d: TestDialect): EvalCase {
  if (!isJsonObject(record)) throw fieldError('', `expected a test case (a mapping), got ${describeType(record)}`)
  const { toExtraKey, setExtras } = extrasOf(d.format)
  const c: EvalCase = {}
  const extras: JsonObject = {}
  const form: JsonObject = {}

  if (d.agentv && record.id !== undefined && record.id !== null) {
    if (typeof record.id === 'number') {
      c.id = String(record.id)
      form.id = 'number'
    } else c.id = expectString(record.id, 'id')
  }
  if (d.agentv && record.conversation_id !== undefined) c.conversation_id = expectString(record.conversation_id, 'conversation_id')
  if (record.description !== undefined) c.description = expectString(record.description, 'description')

  const vars = record.vars
  if (vars !== undefined && !isJsonObject(vars)) throw fieldError('vars', `expected a mapping of variables, got ${describeType(vars)}`)
  if (isJsonObject(vars) && !hasKeys(vars)) form.vars = 'empty'
  const metadata: JsonObject = {}
  let hasReference = false
  for (const [key, value] of Object.entries(vars ?? {})) {
    const input = key === d.inputVar && c.input === undefined ? inputMessages(value) : undefined
    if (input) {
      c.input = input
      if (typeof value !== 'string' && isShorthand(input, 'user')) form.input = 'input:list'
    } else if (key === 'expected_output' && value !== null) {
      c.expected_output = expectedOutput(value)
      hasReference = true
      if (typeof value !== 'string' && isShorthand(c.expected_output, 'assistant')) form.expected_output = 'expected_output:list'
    } else metadata[key] = value
  }
  // The order of the vars, where writing them back would give another (row data among the fields).
  const order = Object.keys(vars ?? {})
  if (order.join('\0') !== defaultVarOrder(c, Object.keys(metadata), d).join('\0')) form.vars = order

  // Row data that would multiply the test is written as variables only where it was one.
  const listVars = Object.keys(metadata).filter((k) => expands(metadata[k]!))
  if (listVars.length) extras.$list_vars = listVars
  const testMetadata = record.metadata
  if (testMetadata !== undefined) {
    if (!isJsonObject(testMetadata)) throw fieldError('metadata', `expected a mapping, got ${describeType(testMetadata)}`)
    const own = Object.keys(testMetadata).filter((k) => k !== CARRY_KEY)
    if (own.some((k) => Object.hasOwn(metadata, k))) extras.$metadata_object = testMetadata
    else if (own.length) {
      for (const k of own) metadata[k] = testMetadata[k]!
      const named = own.filter((k) => !expands(testMetadata[k]))
      if (named.length) extras.$metadata = named
    } else if (testMetadata[CARRY_KEY] === undefined) form.metadata = 'empty'
    if (testMetadata[CARRY_KEY] !== undefined) metadata[CARRY_KEY] = carryValue(testMetadata[CARRY_KEY]!)
  }
  if (hasKeys(metadata)) c.metadata = metadata

  if (d.agentv && record.criteria !== undefined) {
    c.expected_outcome = expectString(record.criteria, 'criteria')
    form.outcome = 'criteria'
  }
  if (record.assert !== undefined) {
    if (!Array.isArray(record.assert)) throw fieldError('assert', `expected a list of assertions, got ${describeType(record.assert)}`)
    const slots = assertSlots(record.assert, d, !hasReference)
    const texts = slots.filter((s) => s.kind === 'text')
    const outcome = c.expected_outcome === undefined ? texts.at(-1) : undefined
    if (outcome) c.expected_outcome = outcome.text
    const rubrics: Rubric[] = []
    const skeleton: JsonValue[] = slots.map((s): JsonValue => {
      switch (s.kind) {
        case 'text':
          if (s === outcome) return { [SLOT]: 'outcome', ...(s.bare ? { bare: true } : {}) }
          rubrics.push({ expected_outcome: s.text })
          return { [SLOT]: 'rubric', ...(s.bare ? { bare: true } : {}) }
        case 'rubrics':
          rubrics.push(...s.rubrics)
          return { [SLOT]: 'rubrics', count: s.rubrics.length }
        case 'reference':
          c.expected_output = expectedOutput(s.text)
          return { [SLOT]: 'reference' }
        case 'kept':
          return isJsonObject(s.value) && SLOT in s.value ? { [SLOT]: 'kept', value: s.value } : s.value
      }
    })
    if (rubrics.length) c.rubrics = rubrics
    // Where the default spelling of the fields gives the list back, no list is kept.
    if (!deepEqual(defaultAsserts(c, d, form), record.assert)) extras.$assert = skeleton
  }

  const handled = handledKeys(d)
  for (const [key, value] of Object.entries(record)) if (!handled.has(key)) extras[toExtraKey(key)] = value
  if (hasKeys(form)) extras.$form = form
  return setExtras(c, extras)
}

/** The vars' order writing gives: the input, the reference, the row data. */
function defaultVarOrder(c: EvalCase, rowKeys: string[], d: TestDialect): string[] {
  return [...(c.input ? [d.inputVar] : []), ...(c.expected_output !== undefined ? ['expected_output'] : []), ...rowKeys]
}

// ---------------------------------------------------------------------------------------------
// encoding

function plainRubric(r: Rubric, format: string): boolean {
  return r.id === undefined && r.weight === undefined && r.required === undefined && r.score_ranges === undefined && !hasKeys(r.extras?.[format] ?? {})
}

function encodeRubricItem(r: Rubric, format: string): JsonValue {
  const extras = r.extras?.[format] ?? {}
  if (plainRubric(r, format)) return r.expected_outcome
  const out: JsonObject = {}
  if (r.id !== undefined) out.id = r.id
  if (!(extras.$outcome === 'absent' && r.expected_outcome === '')) out.outcome = r.expected_outcome
  if (r.weight !== undefined) out.weight = r.weight
  if (r.required !== undefined) out.required = r.required
  if (r.score_ranges !== undefined) out.score_ranges = r.score_ranges
  extrasOf(format).writeExtras(out, extras)
  return out
}

const rubricAssert = (value: JsonValue): JsonObject => ({ type: 'llm-rubric', value })

/**
 * The assertions the canonical fields give by default. AgentV 5: the rubrics (bare strings, or one
 * `llm-rubric` list where one has more than text), then the outcome as a bare string, as AgentV 5's
 * own examples put a case's criteria last. promptfoo: an `llm-rubric` for each.
 */
function defaultAsserts(c: EvalCase, d: TestDialect, form: JsonObject): JsonValue[] | undefined {
  const out: JsonValue[] = []
  const rubrics = c.rubrics ?? []
  if (d.agentv && rubrics.some((r) => !plainRubric(r, d.format))) out.push(rubricAssert(rubrics.map((r) => encodeRubricItem(r, d.format))))
  // An empty criterion is no assertion promptfoo keeps (it drops the empty value): the carry keeps it.
  else for (const r of rubrics) if (d.agentv || r.expected_outcome !== '') out.push(d.agentv ? r.expected_outcome : rubricAssert(r.expected_outcome))
  if (c.expected_outcome !== undefined && form.outcome !== 'criteria') out.push(d.agentv ? c.expected_outcome : rubricAssert(c.expected_outcome))
  return out.length ? out : undefined
}

/** The assertions of a kept list, its slots filled from the case; undefined where the case no longer fits them. */
function filledAsserts(c: EvalCase, d: TestDialect, skeleton: JsonValue[], form: JsonObject): { asserts: JsonValue[]; reference: boolean } | undefined {
  const rubrics = c.rubrics ?? []
  let next = 0
  let outcome = false
  let reference = false
  const asserts: JsonValue[] = []
  for (const item of skeleton) {
    if (!isJsonObject(item) || !(SLOT in item)) {
      asserts.push(item)
      continue
    }
    const bare = item.bare === true
    switch (item[SLOT]) {
      case 'outcome':
        if (c.expected_outcome === undefined || form.outcome === 'criteria' || outcome) return undefined
        outcome = true
        asserts.push(bare ? c.expected_outcome : rubricAssert(c.expected_outcome))
        break
      case 'rubric': {
        const r = rubrics[next++]
        if (!r || !plainRubric(r, d.format)) return undefined
        asserts.push(bare ? r.expected_outcome : rubricAssert(r.expected_outcome))
        break
      }
      case 'rubrics': {
        const count = typeof item.count === 'number' ? item.count : 0
        if (count < 1 || next + count > rubrics.length) return undefined
        asserts.push(rubricAssert(rubrics.slice(next, (next += count)).map((r) => encodeRubricItem(r, d.format))))
        break
      }
      case 'reference': {
        const text = singleText(isMessageList(c.expected_output) ? c.expected_output : undefined, 'assistant')
        if (text === undefined || reference) return undefined
        reference = true
        asserts.push({ type: 'equals', value: text })
        break
      }
      default:
        asserts.push(item.value ?? null)
    }
  }
  const outcomeLeft = c.expected_outcome !== undefined && form.outcome !== 'criteria' && !outcome
  if (outcomeLeft || next !== rubrics.length) return undefined
  return { asserts, reference }
}

/** A message list as a variable's value: the shorthand string where it fits, else plain messages. */
function messagesValue(messages: Message[], role: 'user' | 'assistant', asList: boolean): JsonValue {
  const text = singleText(messages, role)
  if (text !== undefined && !asList) return text
  return messages.map((m) => {
    const out: JsonObject = { role: m.role, content: typeof m.content === 'string' ? m.content : m.content.map((b) => ({ ...b }) as JsonObject) }
    if (m.name !== undefined) out.name = m.name
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id
    if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls.map(({ extras: _extras, ...call }) => call as unknown as JsonObject)
    return out
  })
}

/**
 * Metadata read back from a test comes in the order vars, then the test's metadata: where the case's
 * own order differs (a list among its row data), the carry holds the metadata whole, so that a
 * table's JSON text of it reads back alike.
 */
function keepMetadataOrder(own: JsonObject | undefined, vars: JsonObject, metadata: JsonObject, d: TestDialect): void {
  if (!own) return
  const back = [...Object.keys(vars), ...Object.keys(metadata)].filter((k) => k !== CARRY_KEY && Object.hasOwn(own, k))
  const order = Object.keys(own).filter((k) => back.includes(k))
  if (order.every((k, i) => k === back[i])) return
  const slot = own[CARRY_KEY]
  if (slot !== undefined && !isCarry(slot)) return
  const carried: JsonObject = isCarry(slot) ? { ...slot } : {}
  if (!('metadata' in carried)) {
    const { [CARRY_KEY]: _slot, ...rest } = own
    carried.metadata = rest
  }
  metadata[CARRY_KEY] = d.agentv ? carried : JSON.stringify(carried)
}

/**
 * A canonical case as a promptfoo or AgentV 5 test. What the test cannot hold (a promptfoo test has
 * no id, neither has a tag or a context) the pipeline carries under `metadata.evalferry`.
 */
export function caseToTest(c: EvalCase, d: TestDialect, warn: (message: string, field?: string) => void): JsonObject {
  const { ownExtras, writeExtras } = extrasOf(d.format)
  const extras = ownExtras(c)
  const form = isJsonObject(extras.$form) ? extras.$form : {}
  const test: JsonObject = {}
  if (d.agentv) {
    if (c.id !== undefined) test.id = form.id === 'number' && /^-?\d+$/.test(c.id) ? Number(c.id) : c.id
    if (c.conversation_id !== undefined) test.conversation_id = c.conversation_id
  }
  if (c.description !== undefined) test.description = c.description
  if (d.agentv && form.outcome === 'criteria' && c.expected_outcome !== undefined) test.criteria = c.expected_outcome

  const skeleton = Array.isArray(extras.$assert) ? extras.$assert : undefined
  const filled = skeleton ? filledAsserts(c, d, skeleton, form) : undefined
  const asserts = filled?.asserts ?? [...(defaultAsserts(c, d, form) ?? []), ...(skeleton ?? []).filter((a) => !(isJsonObject(a) && SLOT in a))]
  if (asserts.length || skeleton) test.assert = asserts

  // The test's own metadata keys go back there; every other key is a variable.
  const metadataKeys = Array.isArray(extras.$metadata) ? extras.$metadata.filter((k): k is string => typeof k === 'string') : []
  const vars: JsonObject = {}
  if (c.input !== undefined) vars[d.inputVar] = messagesValue(c.input, 'user', form.input === 'input:list')
  if (c.expected_output !== undefined && !filled?.reference) {
    vars.expected_output = isMessageList(c.expected_output) ? messagesValue(c.expected_output, 'assistant', form.expected_output === 'expected_output:list') : c.expected_output
  }
  const listVars = Array.isArray(extras.$list_vars) ? extras.$list_vars : []
  const metadata: JsonObject = isJsonObject(extras.$metadata_object) ? { ...extras.$metadata_object } : {}
  for (const [key, value] of Object.entries(c.metadata ?? {})) {
    // promptfoo opens every `file://` text of a test outside its vars: the carry goes as JSON text.
    if (key === CARRY_KEY) metadata[key] = d.agentv || !isCarry(value) ? value : JSON.stringify(value)
    else if (metadataKeys.includes(key)) metadata[key] = value
    else if (Object.hasOwn(vars, key)) continue // the input's or the reference's variable: the carry keeps this value
    // A list of text as a variable is one test per item: such row data goes to the test's metadata.
    else if (expands(value) && !listVars.includes(key)) metadata[key] = value
    // promptfoo opens a variable's `file://` text as a file when it renders the prompt: the carry keeps such row data.
    else if (!d.agentv && opensFile(value)) continue
    else vars[key] = value
  }
  if (!d.agentv) {
    const opened = [d.inputVar, 'expected_output'].find((k) => Object.hasOwn(vars, k) && opensFile(vars[k]!))
    if (opened) warn('promptfoo opens text starting with file:// as a file when it renders the prompt: this variable is read so', `vars.${opened}`)
  }
  const order = Array.isArray(form.vars) ? form.vars.filter((k): k is string => typeof k === 'string' && Object.hasOwn(vars, k)) : []
  const ordered: JsonObject = {}
  for (const key of [...order, ...Object.keys(vars)]) if (!Object.hasOwn(ordered, key)) ordered[key] = vars[key]!
  if (hasKeys(ordered) || form.vars === 'empty') test.vars = ordered
  keepMetadataOrder(c.metadata, ordered, metadata, d)
  if (hasKeys(metadata) || form.metadata === 'empty') test.metadata = metadata

  if (d.agentv) {
    if (c.input === undefined) warn(`the case has no input (vars.${d.inputVar}), which AgentV 5 requires: it skips the case`, `vars.${d.inputVar}`)
    if (test.criteria === undefined && !asserts.length && !('turns' in extras)) warn('the case has no criteria, assertions or turns; AgentV 5 skips such a case', 'assert')
  }
  writeExtras(test, extras)
  return test
}

// ---------------------------------------------------------------------------------------------
// what promptfoo and AgentV 5 refuse or skip

/** The keys of which promptfoo needs one in a test (its `description` aside). */
const PROMPTFOO_NEEDS = ['vars', 'assert', 'options', 'metadata', 'provider', 'providerOutput', 'threshold']

/** What promptfoo's loader refuses in a test: one with none of the keys it needs, a field of another type than its schema's, an assertion without a type. */
export function promptfooRefusals(record: unknown): Refusal[] {
  if (!isJsonObject(record)) return [{ field: '', message: `promptfoo refuses a test that is not a mapping (here ${describeType(record)})` }]
  const out: Refusal[] = []
  if (!PROMPTFOO_NEEDS.some((k) => record[k] !== undefined)) out.push({ field: 'vars', message: `promptfoo refuses a test with none of ${PROMPTFOO_NEEDS.join(', ')}` })
  for (const key of ['vars', 'options', 'metadata'] as const) {
    if (record[key] !== undefined && !isJsonObject(record[key])) out.push({ field: key, message: `promptfoo refuses a test whose ${key} is not a mapping (here ${describeType(record[key])})` })
  }
  if (record.threshold !== undefined && typeof record.threshold !== 'number') out.push({ field: 'threshold', message: `promptfoo refuses a threshold that is not a number (here ${describeType(record.threshold)})` })
  if (record.assert !== undefined && !Array.isArray(record.assert)) out.push({ field: 'assert', message: `promptfoo refuses assertions that are not a list (here ${describeType(record.assert)})` })
  if (Array.isArray(record.assert)) {
    record.assert.forEach((a, i) => {
      if (!isJsonObject(a) || typeof a.type !== 'string') out.push({ field: `assert[${i}]`, message: `promptfoo refuses an assertion without a type (here ${describeType(a)}); AgentV 5 reads a bare string, promptfoo does not` })
    })
  }
  return out
}

/** Suite keys AgentV 5 refuses (its loader throws, validate errors), with what to write instead. */
const AGENTV5_REFUSED_FILE_KEYS: Record<string, string> = {
  evalcases: 'its cases are under `tests`',
  eval_cases: 'its cases are under `tests`',
  input: 'a suite input is a variable: `default_test: {vars: …}`',
  expected_output: 'a reference is a variable: `vars.expected_output`',
  execution: 'the target is a provider: `providers`',
  model: 'the model is a provider: `providers`',
  target: 'the target is a provider: `providers`',
  defaultTest: 'AgentV 5 spells it `default_test`',
  vars: 'suite variables go in `default_test: {vars: …}`',
}

/** Assertion types promptfoo has and AgentV 5 lacks: a case using one is skipped. */
const AGENTV5_LACKS = /^(?:not-)?(?:llm-grader|factuality|levenshtein|rouge-n|model-graded-.*)$/

/**
 * What AgentV 5 refuses (its loader throws, validate errors) or skips (logged) in a case of its
 * dialect, and in the suite's keys at its first case: a case needs an id, its input variable, and
 * criteria, assertions or turns; `input`/`expected_output` are variables now; an assertion type
 * it lacks skips the case.
 */
export function agentv5Refusals(record: unknown, header: JsonObject, first: boolean): Refusal[] {
  const out: Refusal[] = []
  if (first) {
    for (const [key, instead] of Object.entries(AGENTV5_REFUSED_FILE_KEYS)) if (header[key] !== undefined) out.push({ field: key, message: `AgentV 5 refuses the suite key \`${key}\`: ${instead}` })
  }
  if (!isJsonObject(record)) return [...out, { field: '', message: `AgentV 5 refuses a case that is not a mapping (here ${describeType(record)})` }]
  for (const key of ['input', 'expected_output']) {
    if (record[key] !== undefined) out.push({ field: key, message: `AgentV 5 refuses a case's \`${key}\`: it is a variable, \`vars.${key}\` (a reference is checked by an llm-rubric quoting {{ expected_output }})` })
  }
  const inputVar = inputVariable(header.prompts)
  if (record.id === undefined || record.id === null || record.id === '') out.push({ field: 'id', message: 'AgentV 5 skips a case without an id' })
  const vars = isJsonObject(record.vars) ? record.vars : {}
  if (vars[inputVar] === undefined || vars[inputVar] === null) out.push({ field: `vars.${inputVar}`, message: `AgentV 5 skips a case without its input, \`vars.${inputVar}\`` })
  const asserts = Array.isArray(record.assert) ? record.assert : []
  if (record.criteria === undefined && !asserts.length && record.turns === undefined) out.push({ field: 'assert', message: 'AgentV 5 skips a case without criteria, assertions or turns' })
  if (record.criteria !== undefined && record.assert !== undefined) out.push({ field: 'criteria', message: 'agentv validate refuses `criteria` beside `assert`: write the criterion as a bare assertion' })
  asserts.forEach((a, i) => {
    if (isJsonObject(a) && typeof a.type === 'string' && AGENTV5_LACKS.test(a.type)) out.push({ field: `assert[${i}].type`, message: `AgentV 5 skips a case graded by \`${a.type}\`, a type it lacks` })
  })
  return out
}
