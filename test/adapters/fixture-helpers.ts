/** Shared by the adapter tests: fixture pairs, temporary outputs, and a file's records as plain JSON. */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import Papa from 'papaparse'
import { parseMapArgs } from '../../src/mapping.ts'
import { read } from '../../src/read.ts'
import type { FieldMapping } from '../../adapters/types.ts'
import type { EvalCase } from '../../src/model.ts'
import { tempDir as newTempDir } from '../helpers/temp.ts'

export interface Fixture {
  name: string
  file: string
  expected: EvalCase[]
  options: { map?: FieldMapping }
}

/** Every `<name>.<ext>` in `dir` that has a `<name>.<ext>.cases.json` beside it. */
export function fixtures(dir: string): Fixture[] {
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, `${name}.cases.json`)))
    .sort()
    .map((name) => {
      const file = join(dir, name)
      // `<name>.<ext>.map` holds `--map` arguments, one a line, as the command line takes them.
      const mapFile = `${file}.map`
      const map = existsSync(mapFile) ? parseMapArgs(readFileSync(mapFile, 'utf8').split('\n').filter((l) => l.trim() !== '')) : undefined
      return {
        name,
        file,
        expected: JSON.parse(readFileSync(`${file}.cases.json`, 'utf8')) as EvalCase[],
        options: map ? { map } : {},
      }
    })
}

export async function readAll(file: string, options: Parameters<typeof read>[1]): Promise<EvalCase[]> {
  const cases: EvalCase[] = []
  for await (const c of read(file, options)) cases.push(c)
  return cases
}

/** Cases as they would be serialised: what "the same JSON values" compares. */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T
}

export function tempDir(): string {
  return newTempDir('evalferry-test-')
}

/** The records of a JSON, JSON Lines or CSV file; a CSV row keeps only its non-empty cells. */
export function fileRecords(file: string): unknown[] {
  const text = readFileSync(file, 'utf8')
  if (file.endsWith('.jsonl')) return text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown)
  if (file.endsWith('.csv')) {
    const rows = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true }).data
    return rows.map((row) => Object.fromEntries(Object.entries(row).filter(([, v]) => v !== '')))
  }
  const value = JSON.parse(text) as unknown
  return Array.isArray(value) ? value : [value]
}
