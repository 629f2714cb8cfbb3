/**
 * Property-based round trips (SPEC section 3): generated canonical cases, with Unicode, newlines,
 * `|`, quotes, commas, empty strings, deep metadata and many turns, written in every format and
 * container and read back, equal the cases they started as; and so does the way on through a
 * second format. A fixed seed and a bounded number of runs keep the test deterministic.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { FORMAT_NAMES, getAdapter } from '../adapters/index.ts'
import type { Container, FormatName } from '../adapters/types.ts'
import type { ContentBlock, EvalCase, JsonObject, JsonValue, Message, Rubric, ToolCall, Turn } from '../src/model.ts'
import { read } from '../src/read.ts'
import { write } from '../src/write.ts'
import { tempDir } from './helpers/temp.ts'
import { collect } from './helpers/collect.ts'

const work = tempDir('evalferry-props-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))
let files = 0
const EXT: Record<Container, string> = { json: '.json', jsonl: '.jsonl', csv: '.csv', yaml: '.yaml', parquet: '.parquet' }
const scratch = (container: Container) => join(work, `f${files++}${EXT[container]}`)

/** Strings that trip writers: separators, quotes, line ends, look-alikes of other types, Unicode. */
const TRICKY = ['', ' ', ' \n', '  \n\n', '|', 'a|b', '"', "'", ',', 'a, b', '\n', 'line\nline', '\r\n', 'null', 'NA', 'None', 'true', '1.50', '[1]', '{"a": 1}', '- x', '# c', 'key: v', 'ü', '日本語', '🎉', ' lead', 'trail ', '\t']
const text = fc
  .oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }) },
    { weight: 2, arbitrary: fc.constantFrom(...TRICKY) },
    { weight: 2, arbitrary: fc.array(fc.constantFrom(...TRICKY, 'word'), { minLength: 2, maxLength: 4 }).map((parts) => parts.join('')) },
  )
const nonEmpty = text.filter((s) => s.trim() !== '')
const key = fc.oneof(fc.constantFrom('a', 'b', 'domain', 'with space', 'ü', 'x.y', '0'), fc.string({ minLength: 1, maxLength: 6 }))

const json: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text,
    fc.integer({ min: -1000, max: 1000 }),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((n) => (Object.is(n, -0) ? 0 : n)),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
  ),
})).value
/** Metadata nested several levels. */
const metadata: fc.Arbitrary<JsonObject> = fc.dictionary(key.filter((k) => k !== 'evalferry'), json, { minKeys: 1, maxKeys: 4 })

const toolCall: fc.Arbitrary<ToolCall> = fc.record(
  { id: nonEmpty, name: nonEmpty, type: fc.constant('function'), arguments: fc.dictionary(key, json, { maxKeys: 3 }) },
  { requiredKeys: ['name'] },
)
const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  fc.record({ type: fc.constant('text' as const), value: text }),
  fc.record({ type: fc.constant('file' as const), value: nonEmpty }),
  fc.record({ type: fc.constant('image' as const), value: nonEmpty }),
  fc.record({ type: fc.constant('json' as const), value: json }),
)
const content = fc.oneof(text, fc.array(block, { minLength: 1, maxLength: 3 }))
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ role: fc.constantFrom('system' as const, 'user' as const), content }),
  fc.record({ role: fc.constant('assistant' as const), content, tool_calls: fc.array(toolCall, { minLength: 1, maxLength: 2 }) }, { requiredKeys: ['role', 'content'] }),
  fc.record({ role: fc.constant('tool' as const), content: text, tool_call_id: nonEmpty, name: nonEmpty }, { requiredKeys: ['role', 'content'] }),
)
const rubric: fc.Arbitrary<Rubric> = fc.record(
  { id: nonEmpty, expected_outcome: nonEmpty, weight: fc.constantFrom(0.5, 1, 2), required: fc.boolean() },
  { requiredKeys: ['expected_outcome'] },
)
const strings = fc.array(text, { minLength: 1, maxLength: 4 })
// `case-N` is the shape of generated ids: a case that really has one must not clash with them.
const ids = fc.oneof(fc.constantFrom('q 1', 'ü-7', 'case-x', 'case-1', 'case-2'), fc.uuid(), nonEmpty)

const singleTurn: fc.Arbitrary<EvalCase> = fc.record(
  {
    id: ids,
    name: text,
    description: text,
    tags: fc.array(nonEmpty, { minLength: 1, maxLength: 3 }),
    input: fc.oneof(text.map((t): Message[] => [{ role: 'user', content: t }]), fc.array(message, { minLength: 1, maxLength: 4 })),
    expected_output: fc.oneof(text.map((t): Message[] => [{ role: 'assistant', content: t }]), fc.array(message, { minLength: 1, maxLength: 2 })),
    expected_outcome: text,
    rubrics: fc.array(rubric, { minLength: 1, maxLength: 3 }),
    expected_tools: fc.array(toolCall, { minLength: 1, maxLength: 2 }),
    actual_output: text,
    tools_called: fc.array(toolCall, { minLength: 1, maxLength: 2 }),
    token_cost: fc.constantFrom(0, 0.25, 12),
    context: strings,
    retrieval_context: strings,
    metadata,
    comments: text,
    note: text,
  },
  { requiredKeys: ['input'] },
)
const turn: fc.Arbitrary<Turn> = fc.record(
  {
    role: fc.constantFrom('user' as const, 'assistant' as const),
    content: text,
    retrieval_context: strings,
    tools_called: fc.array(toolCall, { minLength: 1, maxLength: 2 }),
    metadata,
  },
  { requiredKeys: ['role', 'content'] },
)
const multiTurn: fc.Arbitrary<EvalCase> = fc.record(
  {
    id: ids,
    name: text,
    scenario: nonEmpty,
    turns: fc.array(turn, { minLength: 1, maxLength: 12 }),
    expected_outcome: text,
    user_description: text,
    chatbot_role: text,
    context: strings,
    metadata,
    comments: text,
  },
  { requiredKeys: ['scenario', 'turns'] },
)
/** One dataset: one kind of case per file (DeepEval's rule), ids unique where given. */
const dataset = fc
  .oneof(fc.array(singleTurn, { minLength: 1, maxLength: 5 }), fc.array(multiTurn, { minLength: 1, maxLength: 3 }))
  .filter((cases) => {
    const given = cases.flatMap((c) => (c.id === undefined ? [] : [c.id]))
    return new Set(given).size === given.length
  })

/**
 * Canonical equality is equality of the JSON values, less what a reader adds by design: ids it
 * generated (marked, and dropped again by the next writer) and the file's own layout (`$file`).
 */
function normal(cases: EvalCase[]): unknown {
  return JSON.parse(
    JSON.stringify(
      cases.map((c) => {
        const copy: Record<string, unknown> = { ...c }
        for (const field of c.generated ?? []) delete copy[field]
        delete copy.generated
        if (c.extras) {
          const extras: Record<string, JsonObject> = {}
          for (const [format, own] of Object.entries(c.extras)) {
            const { $file: _layout, ...rest } = own
            if (Object.keys(rest).length) extras[format] = rest
          }
          if (Object.keys(extras).length) copy.extras = extras
          else delete copy.extras
        }
        return copy
      }),
    ),
  )
}

function readAll(path: string, from: FormatName): Promise<EvalCase[]> {
  return collect(read(path, { from }))
}

/** JSON with every character outside printable ASCII escaped, so that a counterexample can be read and copied. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

const SEED = 20240601
const RUNS = Number(process.env.EVALFERRY_PROPERTY_RUNS ?? 60)

test('generated cases round-trip through every format and container, and on through a second format', async (t) => {
  const targets: { format: FormatName; container: Container }[] = []
  for (const format of FORMAT_NAMES) for (const container of (await getAdapter(format)).writes) targets.push({ format, container })
  let datasets = 0
  let cases = 0
  let trips = 0
  const failures: string[] = []
  for (const [i, target] of targets.entries()) {
    const onward = targets[(i + 3) % targets.length]!
    const property = fc.asyncProperty(dataset, async (original) => {
      deepFreeze(original) // a writer that changed its input would throw here, and the counterexample stays as generated
      datasets++
      cases += original.length
      const first = scratch(target.container)
      await write(original, first, { to: target.format })
      const back = await readAll(first, target.format)
      trips++
      assert.deepEqual(normal(back), normal(original), `${target.format} ${target.container}`)
      const second = scratch(onward.container)
      await write(back, second, { to: onward.format })
      const again = await readAll(second, onward.format)
      trips++
      assert.deepEqual(normal(again), normal(original), `${target.format} ${target.container} → ${onward.format} ${onward.container}`)
    })
    const result = await fc.check(property, { seed: SEED + i, numRuns: RUNS, endOnFailure: false })
    if (result.failed) {
      const why = result.errorInstance instanceof Error ? result.errorInstance.message.slice(0, 1500) : String(result.errorInstance)
      failures.push(`${target.format} ${target.container}: counterexample ${asciiJson(result.counterexample)} (seed ${SEED + i})\n${why}`)
    }
  }
  t.diagnostic(`${targets.length} format/container targets, ${datasets} datasets (${cases} cases) generated, ${trips} round trips`)
  assert.deepEqual(failures, [], failures.join('\n\n'))
})
