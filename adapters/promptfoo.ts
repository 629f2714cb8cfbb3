/**
 * promptfoo test cases: a list of tests (`vars`, `assert`, `description`, `metadata`, `options`,
 * `threshold`...) in YAML, JSON or JSON Lines, alone or under `tests:` of a config, and promptfoo's
 * test CSV, whose plain columns are variables and whose `__expected…`, `__description`,
 * `__metadata:k`, `__threshold`, `__metric`, `__prefix`/`__suffix` and `__config:…` columns are
 * read as promptfoo's loader reads them. Tests map to canonical cases as ./test-case.ts says.
 *
 * A CSV row is read into the test promptfoo makes of it; a cell whose text the test would not
 * give back by itself (`icontains: x` for `icontains:x`, a `__threshold` of `1.0`) is kept in
 * `$text`, and written again where it still reads as the same test. A header that writing would
 * not give back (its own column order) travels as the file's `columns`. The carry is the
 * `__metadata:evalferry` column, JSON text, which promptfoo reads as a metadata string.
 */
import evalcase from './evalcase.ts'
import { caseToTest, inputVariable, promptfooRefusals, testToCase, type TestDialect } from './test-case.ts'
import { extrasOf, fieldChecks } from './fields.ts'
import { fileKeys, sampleNeedsCarry, settleFileCarry, takeFileCarry, withFileCarry, type ReadBack } from './table.ts'
import { deepEqual } from '../src/carry.ts'
import { fieldError, LayoutError } from '../src/errors.ts'
import { CASES_FILE_KEY, LIST_KEY } from '../src/codecs/types.ts'
import { CARRY_KEY, hasKeys, isJsonObject, own, type EvalCase, type JsonObject, type JsonValue } from '../src/model.ts'
import type { Adapter, Container, DecodeContext, EncodeContext, FileLayout, SniffSample } from './types.ts'

const FORMAT = 'promptfoo'
const { describeType } = fieldChecks('a mapping')
const { ownExtras } = extrasOf(FORMAT)
const CARRY_COLUMN = `__metadata:${CARRY_KEY}`

// ---------------------------------------------------------------------------------------------
// promptfoo's reading of a test CSV (its src/csv.ts, as of 0.121)

/** promptfoo's assertion types, in its order: a `type:value` cell names one (`not-` before it negates). */
const BASE_TYPES = [
  'agent-rubric', 'answer-relevance', 'bleu', 'classifier', 'contains', 'contains-all', 'contains-any', 'contains-html', 'contains-json',
  'contains-sql', 'contains-xml', 'context-faithfulness', 'context-recall', 'context-relevance', 'conversation-relevance', 'cost', 'equals',
  'factuality', 'finish-reason', 'g-eval', 'gleu', 'guardrails', 'icontains', 'icontains-all', 'icontains-any', 'is-html', 'is-json',
  'is-refusal', 'is-sql', 'is-valid-function-call', 'is-valid-openai-function-call', 'is-valid-openai-tools-call', 'is-xml', 'javascript',
  'latency', 'levenshtein', 'llm-rubric', 'pi', 'meteor', 'model-graded-closedqa', 'model-graded-factuality', 'moderation', 'perplexity',
  'perplexity-score', 'python', 'regex', 'rouge-n', 'ruby', 'similar', 'similar:cosine', 'similar:dot', 'similar:euclidean', 'starts-with',
  'tool-call-f1', 'skill-used', 'trajectory:goal-success', 'trajectory:tool-args-match', 'trajectory:step-count', 'trajectory:tool-sequence',
  'trajectory:tool-used', 'trace-error-spans', 'trace-span-count', 'trace-span-duration', 'search-rubric', 'webhook', 'word-count',
]
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const TYPED_CELL = new RegExp(`^(not-)?(${BASE_TYPES.map(escapeRegExp).join('|')})(?:\\((\\d+(?:\\.\\d+)?)\\))?(?::([\\s\\S]*))?$`)
/** Types whose cell value is a comma-separated list. */
const LIST_TYPES = new Set(['contains-all', 'contains-any', 'icontains-all', 'icontains-any'])
/** Types whose cell value is taken untrimmed. */
const RAW_TYPES = new Set(['contains-json', 'is-json'])
/** Types given a threshold when the cell names none: 0.8 for `similar`, else 0.75. */
const THRESHOLD_TYPES = new Set(['answer-relevance', 'classifier', 'context-faithfulness', 'context-recall', 'context-relevance', 'cost', 'latency', 'levenshtein', 'perplexity-score', 'perplexity', 'rouge-n', 'similar', 'starts-with'])
const defaultThreshold = (type: string) => (type === 'similar' ? 0.8 : 0.75)
const JS_FILE = /\.(?:js|cjs|mjs|ts|cts|mts)$/i

/** A number cell as promptfoo reads it: decimal text only, else none. */
function finiteNumber(text: string): number | undefined {
  const trimmed = text.trim()
  if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/.test(trimmed)) return undefined
  const n = Number(trimmed)
  return Number.isFinite(n) ? n : undefined
}

/** A comma-separated list of a `contains-any` cell: items trimmed, or double-quoted (`""` and `\"` a quote, `\\` a backslash). */
function listItems(value: string, field: string): string[] {
  const items: string[] = []
  let i = 0
  const skipSpace = () => {
    while (i < value.length && /\s/.test(value[i]!)) i++
  }
  while (i < value.length) {
    for (skipSpace(); value[i] === ','; skipSpace()) i++
    if (i >= value.length) break
    if (value[i] === '"') {
      let item = ''
      let closed = false
      for (i++; i < value.length; ) {
        const ch = value[i]!
        if (ch === '\\' && (value[i + 1] === '"' || value[i + 1] === '\\')) {
          item += value[i + 1]
          i += 2
        } else if (ch === '"' && value[i + 1] === '"') {
          item += '"'
          i += 2
        } else if (ch === '"') {
          i++
          closed = true
          break
        } else {
          item += ch
          i++
        }
      }
      if (!closed) throw fieldError(field, 'an unterminated quoted item in a list assertion, which promptfoo refuses')
      items.push(item)
      skipSpace()
      if (i < value.length && value[i] !== ',') throw fieldError(field, 'a quoted item not followed by a comma, which promptfoo refuses')
    } else {
      const start = i
      while (i < value.length && value[i] !== ',') i++
      items.push(value.slice(start, i).trim())
    }
  }
  return items
}

/** The assertion promptfoo makes of an `__expected` cell (trimmed, not empty). */
function cellAssertion(text: string, field: string): JsonObject {
  for (const prefix of ['javascript:', 'fn:', 'eval:']) if (text.startsWith(prefix)) return { type: 'javascript', value: text.slice(prefix.length).trim() }
  if (text.startsWith('file://') && JS_FILE.test(text.slice(7))) return { type: 'javascript', value: text.trim() }
  if (text.startsWith('grade:')) return { type: 'llm-rubric', value: text.slice(6) }
  if (text.startsWith('llm-rubric:')) return { type: 'llm-rubric', value: text.slice(11) }
  if (text.startsWith('python:') || (text.startsWith('file://') && (text.endsWith('.py') || text.includes('.py:')))) return { type: 'python', value: text.slice(7).trim() }
  const match = TYPED_CELL.exec(text)
  if (!match) return { type: 'equals', value: text }
  const [, not, type, thresholdText, value] = match as unknown as [string, string | undefined, string, string | undefined, string | undefined]
  const full = not ? `not-${type}` : type
  const out: JsonObject = { type: full }
  if (LIST_TYPES.has(type)) {
    if (value !== undefined) out.value = value ? listItems(value, field) : value
  } else if (RAW_TYPES.has(type)) {
    if (value !== undefined) out.value = value
  } else if (value !== undefined) out.value = value.trim()
  if (THRESHOLD_TYPES.has(type)) out.threshold = (thresholdText === undefined ? undefined : finiteNumber(thresholdText)) ?? defaultThreshold(type)
  return out
}

type Row = Record<string, string>

/** The test promptfoo makes of a CSV row (`vars` always; `assert`, `options` and `metadata` where they hold something). */
export function rowTest(row: Row, columns: readonly string[]): JsonObject {
  const vars: JsonObject = {}
  const asserts: JsonObject[] = []
  const options: JsonObject = {}
  const metadata: JsonObject = {}
  const configs: Record<number, JsonObject> = {}
  const test: JsonObject = { vars }
  let metric: string | undefined
  for (const column of columns) {
    const value = own(row, column) ?? ''
    const key = column.trim()
    if (key.startsWith('__expected')) {
      if (value.trim() !== '') asserts.push(cellAssertion(value.trim(), column))
    } else if (key === '__prefix') options.prefix = value
    else if (key === '__suffix') options.suffix = value
    else if (key === '__description') {
      if (value) test.description = value
    } else if (key === '__providerOutput') {
      if (value) test.providerOutput = value
    } else if (key === '__metric') metric = value
    else if (key === '__threshold') {
      const n = finiteNumber(value)
      if (n !== undefined) test.threshold = n
    } else if (key.startsWith('__metadata:')) {
      const name = key.slice('__metadata:'.length)
      if (value.trim() === '') continue
      if (name.endsWith('[]')) metadata[name.slice(0, -2)] = value.split(/(?<!\\),/).map((v) => v.trim().replace(/\\,/g, ','))
      else metadata[name] = value
    } else if (key.startsWith('__config:')) {
      const parts = key.slice('__config:'.length).split(':')
      if (parts.length !== 2) continue
      const [target, option] = parts as [string, string]
      const index = target === '__expected' ? 0 : /^__expected(\d+)$/.test(target) && Number(target.slice(10)) >= 1 ? Number(target.slice(10)) - 1 : undefined
      if (index === undefined) throw fieldError(column, `promptfoo refuses this column: ${target} is not __expected or __expected<N>`)
      if (option !== 'threshold') throw fieldError(column, `promptfoo refuses this column: ${option} is no assertion setting it knows (threshold)`)
      const n = finiteNumber(value)
      if (n === undefined) throw fieldError(column, `expected a number, which promptfoo requires here, got ${JSON.stringify(value)}`)
      ;(configs[index] ??= {})[option] = n
    } else if (key !== '__metadata') vars[key] = value
  }
  asserts.forEach((a, i) => {
    if (metric !== undefined) a.metric = metric
    for (const [k, v] of Object.entries(configs[i] ?? {})) {
      a[k] = v
      metadata[k] = v
    }
  })
  if (asserts.length) test.assert = asserts
  if (hasKeys(options)) test.options = options
  if (hasKeys(metadata)) test.metadata = metadata
  return test
}

// ---------------------------------------------------------------------------------------------
// writing a test as a CSV row

/** A list item written so that promptfoo reads it back: bare where trimming and commas leave it be, else quoted. */
function listItemText(item: string): string {
  const bare = item !== '' && item === item.trim() && !item.includes(',') && !item.startsWith('"')
  return bare ? item : `"${item.replace(/\\/g, '\\\\').replace(/"/g, '""')}"`
}

/** The `__expected` cell promptfoo reads as `a` (its metric aside), or undefined where no cell does. */
function assertionCell(a: JsonValue, configured = false): string | undefined {
  if (!isJsonObject(a) || typeof a.type !== 'string') return undefined
  // A threshold a `__config:` column sets is that column's: the cell is compared without it.
  const { metric: _metric, ...rest } = a
  if (configured) delete rest.threshold
  const type = a.type
  const { value } = rest
  const threshold = configured ? undefined : rest.threshold
  const same = (text: string): boolean => {
    const read = cellAssertion(text.trim(), '')
    if (configured) delete read.threshold
    return deepEqual(read, rest)
  }
  let text: string | undefined
  if (type === 'equals' && typeof value === 'string') text = value
  else if (type === 'llm-rubric' && typeof value === 'string') text = `llm-rubric:${value}`
  else if (type === 'javascript' && typeof value === 'string') text = `javascript:${value}`
  else if (type === 'python' && typeof value === 'string') text = `python:${value}`
  else {
    const base = type.startsWith('not-') ? type.slice(4) : type
    if (!BASE_TYPES.includes(base)) return undefined
    const thresholdText = typeof threshold === 'number' && THRESHOLD_TYPES.has(base) && threshold !== defaultThreshold(base) ? `(${threshold})` : ''
    if (value === undefined) text = `${type}${thresholdText}`
    else if (Array.isArray(value) && LIST_TYPES.has(base) && value.every((v) => typeof v === 'string')) text = `${type}${thresholdText}:${value.map(listItemText).join(',')}`
    else if (typeof value === 'string') text = `${type}${thresholdText}:${value}`
  }
  if (text === undefined || text.trim() === '') return undefined
  // `equals` text that reads as another type, and text trimming changes, are written under their type, or not at all.
  if (!same(text) && type === 'equals' && typeof value === 'string') text = `equals:${value}`
  return same(text) ? text : undefined
}

/** A variable's or a metadata value's cell: text as it is, anything else as JSON text (which the carry completes). */
const cellText = (value: JsonValue): string => (typeof value === 'string' ? value : JSON.stringify(value))

/** The special columns in the order a written header puts them, after the variables. */
function columnRank(column: string): number {
  if (column === CARRY_COLUMN) return 10
  if (column.startsWith('__expected')) return 1
  if (column === '__description') return 2
  if (column.startsWith('__metadata:')) return 3
  const rank = ['__threshold', '__metric', '__prefix', '__suffix', '__providerOutput'].indexOf(column)
  if (rank >= 0) return 4 + rank
  return column.startsWith('__config:') ? 9 : 0
}

/** The header's `__config:__expectedN:threshold` columns, by the index of the assertion each sets. */
function configColumns(columns: readonly string[]): Map<number, string> {
  const found = new Map<number, string>()
  for (const c of columns) {
    const m = /^__config:__expected(\d*):threshold$/.exec(c.trim())
    if (m && (m[1] === '' || Number(m[1]) >= 1)) found.set(m[1] ? Number(m[1]) - 1 : 0, c)
  }
  return found
}

/**
 * The cells of a test. Under `columns`: those columns (assertions in the `__expected…` columns in
 * order, a threshold in the `__config:` column of its assertion), and in `more` the columns it needs
 * beyond them; else the columns it needs.
 */
function testRow(test: JsonObject, columns?: readonly string[]): { row: Row; more: string[] } {
  const row: Row = {}
  const vars = isJsonObject(test.vars) ? test.vars : {}
  for (const [k, v] of Object.entries(vars)) row[k] = cellText(v)
  const asserts = Array.isArray(test.assert) ? test.assert : []
  const configs = columns ? configColumns(columns) : new Map<number, string>()
  const metrics = new Set(asserts.map((a) => (isJsonObject(a) ? a.metric : undefined)))
  const cells = asserts.map((a, i) => assertionCell(a, configs.has(i))).filter((c): c is string => c !== undefined)
  const expectedColumns = columns ? columns.filter((c) => c.trim().startsWith('__expected')) : cells.length === 1 ? ['__expected'] : cells.map((_, i) => `__expected${i + 1}`)
  expectedColumns.forEach((c, i) => (row[c] = cells[i] ?? ''))
  const more = columns ? cells.slice(expectedColumns.length).map((_, i) => `__expected${expectedColumns.length + i + 1}`) : []
  if (typeof test.description === 'string') row.__description = test.description
  // promptfoo copies a `__config:` threshold into the metadata too: that value is the column's.
  const configured = new Set<string>()
  for (const [i, column] of configs) {
    const a = asserts[i]
    const threshold = isJsonObject(a) && typeof a.threshold === 'number' ? a.threshold : undefined
    row[column] = threshold === undefined ? '' : String(threshold)
    if (threshold !== undefined && isJsonObject(test.metadata) && test.metadata.threshold === threshold) configured.add('threshold')
  }
  const metadata = isJsonObject(test.metadata) ? test.metadata : {}
  for (const [k, v] of Object.entries(metadata)) {
    if (configured.has(k)) continue
    const listed = columns ? columns.includes(`__metadata:${k}[]`) : Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')
    if (listed && Array.isArray(v)) row[`__metadata:${k}[]`] = v.map((x) => cellText(x).replace(/,/g, '\\,')).join(', ')
    else row[`__metadata:${k}`] = cellText(v)
  }
  if (typeof test.threshold === 'number') row.__threshold = String(test.threshold)
  if (metrics.size === 1 && asserts.length) {
    const [metric] = metrics
    if (typeof metric === 'string') row.__metric = metric
  }
  const options = isJsonObject(test.options) ? test.options : {}
  if (typeof options.prefix === 'string') row.__prefix = options.prefix
  if (typeof options.suffix === 'string') row.__suffix = options.suffix
  if (typeof test.providerOutput === 'string') row.__providerOutput = test.providerOutput
  if (!columns) return { row, more }
  const out: Row = {}
  for (const c of columns) out[c] = own(row, c) ?? ''
  for (const c of Object.keys(row)) if (!Object.hasOwn(out, c) && !c.startsWith('__expected')) more.push(c)
  return { row: out, more }
}

/** `columns` in the order a written header gives them: variables, then the special columns. */
function writtenOrder(columns: readonly string[]): string[] {
  return columns.map((c, i) => [columnRank(c), i, c] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , c]) => c)
}

/** Whether writing gives this header back by itself: its columns in the written order, its assertion columns named as written. */
function isWrittenHeader(columns: readonly string[]): boolean {
  const expected = columns.filter((c) => c.startsWith('__expected'))
  const named = expected.length === 1 ? expected[0] === '__expected' : expected.every((c, i) => c === `__expected${i + 1}`)
  return named && writtenOrder(columns).every((c, i) => c === columns[i])
}

// ---------------------------------------------------------------------------------------------
// the adapter

function dialect(header: JsonObject): TestDialect {
  return { format: FORMAT, agentv: false, inputVar: inputVariable(header.prompts) }
}

function decode(record: unknown, ctx: DecodeContext): EvalCase {
  // Tests are written as a bare list where the file has no keys of its own, under `tests:` where it has.
  const listed = ctx.header[LIST_KEY]
  if (listed === '' || (listed === 'tests' && Object.keys(ctx.header).some((k) => !k.startsWith('$')))) delete ctx.header[LIST_KEY]
  if (ctx.container === 'jsonl') {
    const c = testToCase(record, dialect(carriedFileKeys(record) ?? ctx.header))
    takeFileCarry(c, ctx)
    return c
  }
  if (ctx.container !== 'csv') return testToCase(record, dialect(ctx.header))
  if (!isJsonObject(record)) throw fieldError('', `expected a table row, got ${describeType(record)}`)
  const columns = rowColumns(record, ctx)
  if (!ctx.state.header) {
    ctx.state.header = true
    const own = columns.filter((c) => c !== CARRY_COLUMN)
    if (!isWrittenHeader(own)) ctx.header.columns = own
  }
  const row = record as Row
  const test = csvTest(row, ctx)
  const c = testToCase(test, dialect(carriedFileKeys(test) ?? ctx.header))
  takeFileCarry(c, ctx)
  // The cells the test would not give back by themselves.
  const { row: written } = testRow(test, columns)
  const text: JsonObject = {}
  for (const column of columns) {
    const cell = own(row, column) ?? ''
    if (column !== CARRY_COLUMN && own(written, column) !== cell) text[column] = cell
  }
  if (hasKeys(text)) c.extras = { ...c.extras, [FORMAT]: { ...c.extras?.[FORMAT], $text: text } }
  return c
}

/** A CSV row's columns: the file's header, or the row's own keys where the file has none. */
const rowColumns = (row: JsonObject, ctx: DecodeContext): readonly string[] => (ctx.columns?.length ? ctx.columns : Object.keys(row))

/**
 * The test promptfoo makes of a CSV row, made once: `check` follows `decode` on the same row and
 * takes the test it made. Kept by the row, not in the file's state, which the parts of a large
 * file are each sent a copy of.
 */
function csvTest(row: Row, ctx: DecodeContext): JsonObject {
  let test = rowTests.get(row)
  if (!test) rowTests.set(row, (test = rowTest(row, rowColumns(row, ctx))))
  return test
}
const rowTests = new WeakMap<Row, JsonObject>()

/** The file's keys that a test written first carries (JSON Lines and CSV have no place for them): a config's prompt names the input. */
function carriedFileKeys(test: unknown): JsonObject | undefined {
  const text = isJsonObject(test) && isJsonObject(test.metadata) ? test.metadata[CARRY_KEY] : undefined
  if (typeof text !== 'string' || !text.includes('"$file"')) return undefined
  try {
    const value = JSON.parse(text) as JsonValue
    return isJsonObject(value) && isJsonObject(value.$file) ? value.$file : undefined
  } catch {
    return undefined
  }
}

function encode(original: EvalCase, ctx: EncodeContext): JsonObject {
  // JSON Lines and CSV have no place for the file's keys: the first test carries them (see `layout`).
  const c = ctx.container === 'csv' || ctx.container === 'jsonl' ? withFileCarry(original, ctx) : original
  const test = caseToTest(c, dialect(ctx.layout?.header ?? {}), ctx.warn)
  if (ctx.container !== 'csv') return test
  const columns = ctx.layout?.columns ?? Object.keys(testRow(test).row)
  if (isJsonObject(test.metadata) && test.metadata[CARRY_KEY] !== undefined && !columns.includes(CARRY_COLUMN)) {
    throw new LayoutError(`this case needs a "${CARRY_COLUMN}" column to carry what a promptfoo test cannot hold, but none of the first cases did, so the header has none; put a case like it among the first (the first 100, or as many of them as fill 32 MB)`, { field: CARRY_KEY })
  }
  const { row } = testRow(test, columns)
  // The source's own cell texts, where they read as the same test.
  const text = ownExtras(c).$text
  if (isJsonObject(text)) {
    const candidate: Row = { ...row }
    for (const [column, value] of Object.entries(text)) if (Object.hasOwn(candidate, column) && typeof value === 'string') candidate[column] = value
    try {
      if (deepEqual(rowTest(candidate, columns), rowTest(row, columns))) return candidate
    } catch {
      // A kept text promptfoo would refuse under this header: the written cells stand.
    }
  }
  return row
}

/** The columns of a CSV of `sample`: the source header and the columns the cases need beyond it, or the columns they need. */
function csvColumns(sample: EvalCase[], fileHeader: JsonObject): string[] {
  const source = fileKeys(sample, FORMAT).columns
  const header = Array.isArray(source) && source.every((c): c is string => typeof c === 'string') ? source : undefined
  const needed: string[] = []
  let expected = 0
  // A test may carry by itself (metadata in an order of its own): the carry's column comes last.
  let carries = false
  for (const c of sample) {
    const test = caseToTest(c, dialect(fileHeader), () => {})
    const { row, more } = testRow(test, header)
    for (const column of header ? more : Object.keys(row)) {
      if (column.startsWith('__expected')) expected = Math.max(expected, header ? Number(column.slice(10)) : 1)
      else if (column === CARRY_COLUMN) carries = true
      else if (!needed.includes(column)) needed.push(column)
    }
    if (!header) expected = Math.max(expected, Object.keys(row).filter((k) => k.startsWith('__expected')).length)
  }
  if (header) {
    const have = header.filter((c) => c.startsWith('__expected')).length
    const more = [...needed, ...Array.from({ length: Math.max(0, expected - have) }, (_, i) => `__expected${have + i + 1}`)]
    return [...header, ...writtenOrder(carries && !header.includes(CARRY_COLUMN) ? [...more, CARRY_COLUMN] : more)]
  }
  const columns = writtenOrder([...needed, ...(expected === 1 ? ['__expected'] : Array.from({ length: expected }, (_, i) => `__expected${i + 1}`)), ...(carries ? [CARRY_COLUMN] : [])])
  return columns.length ? columns : [CARRY_COLUMN]
}

function layout(container: Container, sample: EvalCase[], ctx: EncodeContext): FileLayout {
  const keys = fileKeys(sample, FORMAT)
  // A config's `tests: file://tests.csv` is written with its tests in place (the name travels with the carry).
  const { columns: _columns, [LIST_KEY]: listed, [CASES_FILE_KEY]: _named, ...header } = keys
  if (container === 'csv') {
    const layout: FileLayout = { columns: csvColumns(sample, header), header }
    const readBack: ReadBack = { format: FORMAT, encode, decode, ectx: { ...ctx, container, warn: () => {} } }
    const fileCarry = settleFileCarry(sample, layout, readBack)
    if (!layout.columns!.includes(CARRY_COLUMN) && (fileCarry || sampleNeedsCarry(sample, layout, readBack))) layout.columns!.push(CARRY_COLUMN)
    return layout
  }
  if (container === 'jsonl') {
    const layout: FileLayout = { header }
    settleFileCarry(sample, layout, { format: FORMAT, encode, decode, ectx: { ...ctx, container, warn: () => {} } })
    return layout
  }
  // Tests under `tests:` where the file has keys of its own (a config), else a bare list.
  return hasKeys(header) || listed === 'tests' ? { header, listKey: 'tests' } : { header }
}

/** Test keys promptfoo knows; a record of other keys is no promptfoo test. */
const TEST_KEYS = new Set(['description', 'vars', 'assert', 'options', 'threshold', 'metadata', 'provider', 'providerOutput', 'assertScoringFunction', 'prompts', 'providers'])
const SPECIAL_COLUMN = /^__(?:expected\d*|description|threshold|metric|prefix|suffix|providerOutput|metadata:.+|config:.+)$/

function sniff(sample: SniffSample): number {
  if (sample.container === 'csv') return (sample.columns ?? []).some((c) => SPECIAL_COLUMN.test(c.trim())) ? 0.9 : 0
  if (sample.container === 'parquet') return 0
  if ('defaultTest' in sample.header || /promptfooconfig/i.test(sample.fileName)) return 0.96
  const tests = sample.records.filter(isJsonObject)
  if (!tests.length || tests.length < sample.records.length) return 0
  if (!tests.every((t) => Object.keys(t).every((k) => TEST_KEYS.has(k)))) return 0
  // AgentV 5's cases have ids, which evalcase reads; promptfoo's have none, and another format's cases no vars.
  return tests.some((t) => isJsonObject(t.vars) || Array.isArray(t.assert)) ? 0.96 : 0
}

const promptfoo: Adapter = {
  name: 'promptfoo',
  aliases: [],
  title: 'promptfoo test cases (vars, assert, description, metadata) in YAML, JSON, JSON Lines and its test CSV (__expected, __description, __metadata:*)',
  reads: ['yaml', 'json', 'jsonl', 'csv'],
  writes: ['yaml', 'json', 'jsonl', 'csv'],
  recordKeys: ['tests'],
  decode,
  encode,
  layout,
  sniff,
  // What promptfoo's loader refuses in a test; a CSV row, as the test it makes of it.
  check(record, ctx) {
    if (ctx.container !== 'csv' || !isJsonObject(record)) return promptfooRefusals(record)
    return promptfooRefusals(csvTest(record as Row, ctx))
  },
  // A `file://` entry of `tests:` names a file of tests, as in AgentV's suites.
  include: (record) => evalcase.include!(record),
}

export default promptfoo
