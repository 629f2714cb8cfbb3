/**
 * The tools a user would pick instead of evalferry to convert a table in bulk: DuckDB (through its
 * Node package), pandas (a Python script) and Miller (`mlr`). Each is a command run on the same
 * file as evalferry's command line, doing the nearest thing it can: every cell kept as text, each
 * row one JSON object. A peer the machine lacks is skipped, and the reason said.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

export type PeerName = 'DuckDB' | 'pandas' | 'Miller'

/** One process: `stdout` names the file its standard output goes to. */
export interface Command {
  command: string
  args: string[]
  stdout?: string
}

/** What a conversion asks of a peer: its inputs, and for each the output it writes. */
export interface PeerTask {
  kind: 'csv-jsonl' | 'csv-json' | 'parquet-jsonl' | 'jsonl-parquet'
  files: { input: string; output: string }[]
}

export interface Peer {
  name: PeerName
  /** The commands that do `task` one after another, or undefined when the peer has no way to. */
  commands(task: PeerTask): Command[] | undefined
}

const sqlText = (s: string): string => `'${s.replaceAll("'", "''")}'`

// One connection runs each statement in turn; DuckDB spreads each over every core itself.
const DUCKDB_SCRIPT = `import { DuckDBInstance } from '@duckdb/node-api'
const db = await DuckDBInstance.create(':memory:')
const connection = await db.connect()
for (const sql of JSON.parse(process.argv[1])) await connection.run(sql)
connection.closeSync()
db.closeSync()`

function duckdbStatement(kind: PeerTask['kind'], input: string, output: string): string {
  const read =
    kind === 'parquet-jsonl' ? `read_parquet(${sqlText(input)})` : kind === 'jsonl-parquet' ? `read_json(${sqlText(input)}, format = 'newline_delimited')` : `read_csv(${sqlText(input)}, header = true, all_varchar = true)`
  const format = kind === 'jsonl-parquet' ? 'FORMAT parquet' : kind === 'csv-json' ? 'FORMAT json, ARRAY true' : 'FORMAT json'
  return `COPY (SELECT * FROM ${read}) TO ${sqlText(output)} (${format})`
}

// Text cells stay text (no NaN for an empty cell), as evalferry reads a table.
const PANDAS_STEPS: Record<PeerTask['kind'], string> = {
  'csv-jsonl': `pd.read_csv(i, dtype=str, keep_default_na=False).to_json(o, orient='records', lines=True, force_ascii=False)`,
  'csv-json': `pd.read_csv(i, dtype=str, keep_default_na=False).to_json(o, orient='records', force_ascii=False)`,
  'parquet-jsonl': `pd.read_parquet(i).to_json(o, orient='records', lines=True, force_ascii=False)`,
  'jsonl-parquet': `pd.read_json(i, lines=True, dtype=False).to_parquet(o)`,
}

function available(command: string, args: string[], cwd?: string): boolean {
  const run = spawnSync(command, args, { stdio: 'ignore', timeout: 60_000, ...(cwd ? { cwd } : {}) })
  return run.status === 0
}

/**
 * The peers this machine has, and why each other one was skipped. pandas is looked for in
 * EVALFERRY_BENCH_PYTHON, then `compat/.venv`, then `python3`; its Parquet rows also need pyarrow.
 */
export function findPeers(root: string): { peers: Peer[]; skipped: string[] } {
  const peers: Peer[] = []
  const skipped: string[] = []

  if (available(process.execPath, ['--input-type=module', '-e', `import '@duckdb/node-api'`], root)) {
    peers.push({
      name: 'DuckDB',
      commands: (task) => [{ command: process.execPath, args: ['--input-type=module', '-e', DUCKDB_SCRIPT, JSON.stringify(task.files.map((f) => duckdbStatement(task.kind, f.input, f.output)))] }],
    })
  } else skipped.push('DuckDB (@duckdb/node-api is not installed: npm install)')

  const pythons = [process.env.EVALFERRY_BENCH_PYTHON, join(root, 'compat', '.venv', 'bin', 'python'), 'python3'].filter((p): p is string => !!p && (!p.includes('/') || existsSync(p)))
  const python = pythons.find((p) => available(p, ['-c', 'import pandas']))
  if (python) {
    const pyarrow = available(python, ['-c', 'import pyarrow'])
    if (!pyarrow) skipped.push(`pandas on Parquet (${python} has no pyarrow)`)
    peers.push({
      name: 'pandas',
      commands: (task) => {
        if (task.kind.includes('parquet') && !pyarrow) return undefined
        const script = `import json, sys\nimport pandas as pd\nfor i, o in json.loads(sys.argv[1]):\n    ${PANDAS_STEPS[task.kind]}\n`
        return [{ command: python, args: ['-c', script, JSON.stringify(task.files.map((f) => [f.input, f.output]))] }]
      },
    })
  } else skipped.push(`pandas (none of ${pythons.join(', ') || 'python3'} has it)`)

  if (available('mlr', ['--version'])) {
    peers.push({
      name: 'Miller',
      // Miller reads no Parquet; one process per file, as a shell loop runs it.
      commands: (task) =>
        task.kind.includes('parquet') ? undefined : task.files.map((f) => ({ command: 'mlr', args: ['--icsv', task.kind === 'csv-json' ? '--ojson' : '--ojsonl', 'cat', f.input], stdout: f.output })),
    })
  } else skipped.push('Miller (no mlr on the PATH: apt-get install miller)')
  return { peers, skipped }
}
