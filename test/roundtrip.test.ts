/**
 * The lossless matrix (SPEC section 3): for every fixture A of every format, and every format B in
 * every container it writes, reading A, writing B, reading B and writing A gives back the records
 * that writing A directly gives; and writing A directly gives the records A holds. Reading B gives
 * back A's canonical cases, a table's header and the cells it writes as they were then B's own where B is the other table format
 * (and a CSV's text cells of a list column text in B's typed rows). The fixtures
 * are found on disk, so a new fixture joins every pair by itself.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { parse } from 'yaml'
import { FORMAT_NAMES, getAdapter } from '../adapters/index.ts'
import type { Container, FormatName } from '../adapters/types.ts'
import { containerOf, readRecords } from '../src/codecs/index.ts'
import { textColumnsOf } from '../src/case-encoder.ts'
import { withCellsOf, withTextCells } from '../src/mapping.ts'
import { isJsonObject, withHeaderOf, type EvalCase } from '../src/model.ts'
import { read } from '../src/read.ts'
import { write } from '../src/write.ts'
import { fixtures } from './helpers/fixtures.ts'
import { tempDir } from './helpers/temp.ts'
import { collect } from './helpers/collect.ts'

/**
 * The records of a file as the codec parses them: the JSON values (for CSV, the cells). A suite
 * whose `tests:` names a file of cases (AgentV 4 and 5) gives its own keys, then that file's records.
 */
async function records(path: string, format: FormatName): Promise<unknown[]> {
  const named = containerOf(path) === 'yaml' ? casesFileOf(path) : undefined
  if (named) return [named.suite, ...(await records(named.file, format))]
  const adapter = await getAdapter(format)
  const header = {}
  const values = (await collect(readRecords(containerOf(path)!, path, { file: path, recordKeys: adapter.recordKeys, header, columns: [] }))).map((r) => r.value)
  return [header, ...values]
}

function casesFileOf(path: string): { suite: unknown; file: string } | undefined {
  const suite: unknown = parse(readFileSync(path, 'utf8'))
  const tests = isJsonObject(suite) ? suite.tests : undefined
  return typeof tests === 'string' ? { suite, file: resolve(dirname(path), tests.replace(/^file:\/\//, '')) } : undefined
}

const work = tempDir('evalferry-matrix-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))
let counter = 0
const scratch = (ext: string) => join(work, `f${counter++}${ext}`)
const EXT: Record<Container, string> = { json: '.json', jsonl: '.jsonl', csv: '.csv', yaml: '.yaml', parquet: '.parquet' }

const all = fixtures()
/** Fixtures whose shape their format does not write back: Confident AI's JSON is written as DeepEval's JSON loader reads it (save_as's list), its spelling carried. */
const WRITTEN_OTHERWISE = new Set(['deepeval/confident.json', 'deepeval/confident_multi.json'])

test('the fixture folders hold datasets of every format', () => {
  const formats = new Set(all.map((f) => f.format))
  assert.deepEqual([...formats].sort(), [...FORMAT_NAMES].sort())
})

for (const fixture of all) {
  const name = fixture.name
  test(`${name}: every pair of formats round-trips losslessly`, async (t) => {
    const original = await collect(read(fixture.path, { from: fixture.format }))
    assert.ok(original.length > 0, 'the fixture holds cases')
    const source = await getAdapter(fixture.format)
    const writeBack = source.writes.includes(fixture.container) ? fixture.container : source.writes[0]!

    const direct = scratch(EXT[writeBack])
    await write(original, direct, { to: fixture.format })
    if (!fixture.includes && writeBack === fixture.container && !WRITTEN_OTHERWISE.has(name)) {
      assert.deepEqual(await records(direct, fixture.format), await records(fixture.path, fixture.format), 'writing the cases back as they came gives the same records')
    }
    const expected = await records(direct, fixture.format)

    for (const target of FORMAT_NAMES) {
      const adapter = await getAdapter(target)
      for (const container of adapter.writes) {
        await t.test(`→ ${target} ${container} → ${fixture.format}`, async () => {
          const middle = scratch(EXT[container])
          await write(original, middle, { to: target })
          const through = await collect(read(middle, { from: target }))
          // A table written as the other table format takes the header, and the cells it must write as they were, as its own (`Adapter.headerOf`).
          const headed = adapter.headerOf && original[0] ? [withHeaderOf(original[0], target, adapter.headerOf), ...original.slice(1)] : original
          const adopted = adapter.headerOf ? headed.map((c) => withCellsOf(c, adapter.headerOf!, { format: target, text: container === 'csv' })) : headed
          // Typed rows (Parquet, JSON Lines) hold as text the list columns a CSV held as text.
          const textColumns = textColumnsOf(adapter, container, original, headed[0])
          const given = adopted.map((c) => withTextCells(c, textColumns, target))
          assert.deepEqual(stripUndefined(through), stripUndefined(given), `${target} ${container} gives back the canonical cases`)
          const back = scratch(EXT[writeBack])
          await write(through, back, { to: fixture.format })
          assert.deepEqual(await records(back, fixture.format), expected)
        })
      }
    }
  })
}

/** The cases as JSON values, without the fields a format generated (marked in `generated`). */
function stripUndefined(cases: EvalCase[]): unknown {
  return JSON.parse(JSON.stringify(cases)).map((c: Record<string, unknown>) => {
    for (const field of (c.generated as string[] | undefined) ?? []) delete c[field]
    delete c.generated
    return c
  })
}
