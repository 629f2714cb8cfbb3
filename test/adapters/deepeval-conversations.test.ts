/**
 * Conversations written to DeepEval: a case whose input holds several user and assistant turns is a
 * ConversationalGolden (scenario, turns, expected_outcome), as DeepEval models it, and a file holds
 * one kind only, as DeepEval's loaders require.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import deepeval from '../../adapters/deepeval.ts'
import type { EncodeContext, FormatOption } from '../../adapters/types.ts'
import type { EvalCase } from '../../src/model.ts'
import { convert } from '../../src/convert.ts'
import { read } from '../../src/read.ts'
import { write } from '../../src/write.ts'
import { readCsv } from '../../src/codecs/csv.ts'
import { SHARED_FIXTURES } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp.ts'

const AGENTV = join(SHARED_FIXTURES, 'field', 'agentv-4.42.4', 'basic-jsonl', 'dataset.jsonl')
const out = tempDir('evalferry-deepeval-conversations-')

async function readAll(path: string, from: FormatOption): Promise<EvalCase[]> {
  const cases: EvalCase[] = []
  for await (const c of read(path, { from })) cases.push(c)
  return cases
}

type Golden = Record<string, unknown>

/** The records of a DeepEval file: JSON, JSON Lines, or CSV rows with their JSON cells parsed as DeepEval's loader parses them. */
async function goldensOf(path: string): Promise<Golden[]> {
  const text = readFileSync(path, 'utf8')
  if (path.endsWith('.json')) return JSON.parse(text) as Golden[]
  if (path.endsWith('.jsonl')) return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Golden)
  const rows: Golden[] = []
  for await (const r of readCsv([text], { file: path, recordKeys: [], header: {}, columns: [] })) {
    const row = r.value as Golden
    rows.push({ ...row, turns: row.turns === '' ? null : JSON.parse(row.turns as string) })
  }
  return rows
}

/** The save_as key order of a ConversationalGolden, and of a turn (docs/formats.md). */
const MULTI_KEYS = ['scenario', 'turns', 'expected_outcome', 'user_description', 'persona', 'context', 'name', 'comments', 'additional_metadata', 'custom_column_key_values']
const TURN_KEYS = ['role', 'content', 'user_id', 'retrieval_context', 'tools_called', 'mcp_tools_called', 'mcp_resources_called', 'mcp_prompts_called', 'metadata']

/** What DeepEval's loaders require of a file of conversational goldens: one kind, a scenario each, turns of user and assistant text. */
function assertConversational(goldens: Golden[], container: string): void {
  for (const [i, g] of goldens.entries()) {
    assert.ok(typeof g.scenario === 'string' && g.scenario !== '', `${container} record ${i}: a non-empty scenario makes it multi-turn`)
    assert.ok(!('input' in g), `${container} record ${i}: no single-turn key`)
    if (container === 'json') assert.deepEqual(Object.keys(g), MULTI_KEYS, `${container} record ${i}`)
    for (const turn of (g.turns ?? []) as Golden[]) {
      assert.ok(turn.role === 'user' || turn.role === 'assistant', `${container} record ${i}: role ${String(turn.role)}`)
      assert.equal(typeof turn.content, 'string')
      assert.deepEqual(Object.keys(turn), TURN_KEYS)
    }
  }
}

for (const container of ['json', 'jsonl', 'csv']) {
  test(`AgentV's multi-turn case is a ConversationalGolden in DeepEval ${container}, and the file, holding one kind, is of conversations; evalcase → deepeval → evalcase gives the same records`, async () => {
    const output = join(out, `agentv.${container}`)
    const report = await convert({ input: AGENTV, output, from: 'evalcase', to: 'deepeval' })
    const goldens = await goldensOf(output)
    assert.equal(goldens.length, 7)
    assertConversational(goldens, container)

    const debug = goldens[3]!
    assert.deepEqual(
      (debug.turns as Golden[]).map((t) => [t.role, (t.content as string).slice(0, 30)]),
      [
        ['user', "I'm getting an off-by-one erro"],
        ['assistant', 'Before I propose a fix, could '],
        ['user', 'For `[1, 2, 3, 4]` I expect `['],
      ],
    )
    assert.equal(debug.expected_outcome, 'Assistant conducts a multi-turn debugging session, correctly diagnosing the bug and proposing a clear fix.')
    assert.equal(debug.scenario, (debug.turns as Golden[])[0]!.content)
    // A single-turn case in this file is a conversation of its one user turn, its criteria the expected outcome.
    const math = goldens[4]!
    assert.deepEqual(math.turns, [{ role: 'user', content: 'What is 2+2?', ...nullTurnKeys() }])
    assert.equal(math.expected_outcome, 'Assistant correctly answers the math question')
    assert.equal(report.warnings.filter((w) => /single-turn case in a file of conversations/.test(w.message)).length, 6)

    // Back: the same canonical records, and the same evalcase file.
    assert.deepEqual(await readAll(output, 'deepeval'), await readAll(AGENTV, 'evalcase'))
    const back = join(out, `agentv-back-${container}.jsonl`)
    const direct = join(out, `agentv-direct-${container}.jsonl`)
    await convert({ input: output, output: back, from: 'deepeval', to: 'evalcase' })
    await convert({ input: AGENTV, output: direct, from: 'evalcase', to: 'evalcase' })
    assert.equal(readFileSync(back, 'utf8'), readFileSync(direct, 'utf8'))
  })
}

function nullTurnKeys(): Golden {
  return Object.fromEntries(TURN_KEYS.slice(2).map((k) => [k, null]))
}

test('conversations alone: no warning, the system prompt and tool answers carried, tool calls as the turn calls DeepEval has', async () => {
  const cases: EvalCase[] = [
    {
      id: 'weather',
      description: 'User asks the weather twice',
      input: [
        { role: 'system', content: 'You are a weather bot.' },
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'weather', arguments: { city: 'Oslo' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'rain' },
        { role: 'assistant', content: 'Rain.' },
        { role: 'user', content: 'And tomorrow?' },
      ],
      expected_outcome: 'Gives both forecasts',
    },
  ]
  const output = join(out, 'weather.json')
  const report = await write(cases, output, { to: 'deepeval' })
  assert.deepEqual(report.warnings, [])
  const [golden] = (await goldensOf(output)) as Golden[]
  assert.equal(golden!.scenario, 'User asks the weather twice')
  assert.deepEqual(
    (golden!.turns as Golden[]).map((t) => [t.role, t.content, t.tools_called]),
    [
      ['user', 'Weather in Oslo?', null],
      ['assistant', '', [{ name: 'weather', output: 'rain', inputParameters: { city: 'Oslo' } }]],
      ['assistant', 'Rain.', null],
      ['user', 'And tomorrow?', null],
    ],
  )
  assert.deepEqual(await readAll(output, 'deepeval'), cases)
})

test('a conversation after the cases that chose a file of single-turn goldens is written as the golden of its last user message, warned of and carried', () => {
  const warnings: string[] = []
  const ctx: EncodeContext = { container: 'json', index: 0, warn: (m) => warnings.push(m) }
  const single: EvalCase = { input: [{ role: 'user', content: 'q' }] }
  const layout = deepeval.layout('json', [single], ctx)
  const conversation: EvalCase = { input: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'bye' }] }
  const record = deepeval.encode(conversation, { ...ctx, layout, index: 1 })
  assert.equal(record.input, 'bye')
  assert.ok(!('scenario' in record))
  assert.equal(warnings.length, 1)
  assert.match(warnings[0]!, /conversation in a file of single-turn goldens/)
})
