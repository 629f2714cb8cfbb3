/**
 * `npm run bench [-- --size 50MB] [--runs 3] [--only csv-evalcase,yaml-read,peer-csv] [--no-profile]`
 *
 * Generates seeded eval-like datasets under `.bench/` (reused while the size and generator stay the
 * same) and prints one row per measurement, each pairing evalferry with a baseline timed in the same
 * run on the same file. Ratios come first: evalferry throughput over the baseline's (1.00 = as fast
 * as parsing alone); absolute figures beside them. Every timing is one warm-up, then the best of
 * `--runs`, evalferry and baseline alternating. MB is 10^6 bytes. evalferry runs as users run it:
 * the compiled JavaScript (`dist/`, or a build of the sources under `.bench/dist` when `dist/` is
 * older than they are), in this process and in the command line's.
 *
 * Rows (`--size` S, default 10MB, is the size of each input unless said otherwise):
 * CSV and JSON Lines rows to JSON Lines also time the conversion in parts on every core (`threads`), after the
 * one-thread ratio.
 * - csv-evalcase      plain CSV table → evalcase JSON Lines (`from: 'csv'`), against papaparse's core
 *                     parser over the same file in the same 64 KiB chunks, rows left as cell arrays;
 *                     then against the least conversion: those rows as objects, `JSON.stringify`'d
 *                     and written as JSON Lines (`papaparse → JSONL`); then against the least
 *                     conversion that keeps rows as bytes: CSV bytes copied into JSON Lines bytes with
 *                     JSON's escapes, no object and no string made (`CSV bytes → JSONL`). The row ends
 *                     with each least conversion's own ratio to parsing alone: the most a conversion
 *                     writing JSON Lines can reach here through objects, and without them.
 * - csv-short         a table of many short rows (id, question, answer, label; about 80 bytes each) →
 *                     evalcase JSON Lines, against the same baselines: what a conversion costs per record.
 * - csv-deepeval      DeepEval `save_as` CSV → DeepEval JSON Lines, against papaparse likewise.
 * - csv-wide          a table of 1,000 columns (id, question, answer and short features) → hf JSON
 *                     Lines, against the same baselines: each column is a field of every record.
 * - parquet-hf        Hugging Face Parquet (S of text before compression) → hf JSON Lines, against
 *                     parquet-wasm decoding every row group alone, and parquet-wasm + Arrow JS tables,
 *                     and (third) evalferry's own reader turning the file into row objects only, and
 *                     (fourth) those rows `JSON.stringify`'d and written as JSON Lines, and (fifth)
 *                     parquet-wasm + Arrow JS with every text byte once through JSON's escapes and
 *                     nothing else (`escaped text`): the fourth's and the fifth's own ratios to
 *                     parquet-wasm end the row, the fifth's a ceiling for any Parquet → JSON Lines
 *                     conversion on the machine.
 * - parquet-langsmith the same Parquet file → LangSmith JSON Lines, against the same baselines.
 * - jsonl-parquet     LangSmith JSON Lines → Hugging Face Parquet, against `JSON.parse` per line.
 * - long-record       LangSmith JSON Lines of three records, the middle one S long (at most 24 MB: one
 *                     long document), → hf JSON Lines, against `JSON.parse` per line.
 * - yaml-read         evalcase YAML (S/4) read to cases, against `yaml` parse and `js-yaml` load of
 *                     the whole file; the ratio is of times (evalferry time ÷ baseline time).
 * - yaml-write        those cases written as evalcase YAML, against `yaml` stringify and `js-yaml`
 *                     dump of the parsed document, each written to a file; times likewise.
 * - memory            peak RSS of the command line converting a CSV table of 10×S to evalcase JSON
 *                     Lines (and of the library's convert() in one thread with V8's default heap),
 *                     against a child running papaparse alone over the same file.
 * - memory-short      the same for a CSV of short rows (10×S, about a million records at 10MB):
 *                     what each record keeps, its id for one, shows in the peak.
 * - memory-parquet    peak RSS of the command line converting Hugging Face Parquet of 10×S of text
 *                     in a single row group (as pandas writes a table) to hf JSON Lines, against a
 *                     child running parquet-wasm alone over the same file.
 * - batch             8 CSV tables of S/2 through the CLI with `--jobs 1` and with one job per core,
 *                     beside the machine's ceiling: the same files over one separate process per core.
 *                     Small files leave each worker compiling its code for much of its time:
 *                     `--size 200MB --only batch` times 8 × 100 MB, where the cores' throughput shows.
 * - shard             the memory row's CSV as `--shard 1/4` … `4/4` one after another, against the
 *                     whole file in one thread; the ratio is of times.
 * - startup           the command line converting the bundled three-case example to DeepEval JSON
 *                     Lines, and to evalcase YAML, and those cases from evalcase YAML to DeepEval JSON
 *                     Lines, against Node.js starting and exiting with nothing to do; the ratio is of
 *                     times, evalferry's own milliseconds beside it.
 * - peer-csv, peer-deepeval, peer-parquet, peer-parquet-pandas, peer-jsonl-parquet, peer-batch
 *                     evalferry's command line against the tools users would pick instead (bench/peers.ts:
 *                     DuckDB through its Node package, a pandas script, Miller), each a command on the
 *                     same file, best of `--runs` with no warm-up: CSV table (10×S) → JSON Lines,
 *                     DeepEval CSV (10×S) → DeepEval JSON, Parquet of 10×S text in one zstd row group →
 *                     JSON Lines, the same in one snappy row group with no page index (as pandas writes
 *                     it) → JSON Lines, LangSmith JSON Lines (10×S) → Parquet, and 8 CSV tables of S with the
 *                     default jobs. The ratios are evalferry's time and peak RSS over each peer's (below
 *                     1.00, evalferry is faster or smaller); a peer the machine lacks is skipped and
 *                     named below the table.
 * Conversion rows also give what evalferry allocates on V8's heap per input byte, and that over the
 * least conversion's (`… → JSONL`, or the parser alone where a row has none), measured once after
 * the timings by V8's sampling heap profiler, collected objects included: unlike a time, it does not
 * move with the machine's other work.
 * A row whose adapter or option is missing prints its error and the others still run. Conversion
 * rows below 0.7 are profiled once (V8's CPU profiler, as `node --cpu-prof`, after a warm-up run);
 * their top self-time functions follow.
 */
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { availableParallelism, loadavg } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { Session } from 'node:inspector/promises'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { parse as parseYaml } from 'yaml'
import type { FileConvertOptions, EvalCase } from '../src/index.ts'
import {
  jsonParseLines,
  jsYamlDumpFile,
  jsYamlLoadFile,
  papaparseRows,
  papaparseToJsonl,
  csvBytesToJsonl,
  parquetArrowJsRows,
  parquetReaderRows,
  parquetReaderToJsonl,
  parquetTextEscaped,
  parquetWasmRows,
  yamlParseFile,
  yamlStringifyFile,
} from './baselines.ts'
import type { ChildJob, ChildResult } from './child.ts'
import { DATA_VERSION, generate, type Dataset, type DatasetKind } from './data.ts'
import { type Command, findPeers, type PeerTask } from './peers.ts'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const BENCH = join(ROOT, 'bench')
const WORK = join(ROOT, '.bench')
const SEED = 20240601
const CORES = availableParallelism()

// A full collection between timings keeps one run's garbage out of the next one's time.
setFlagsFromString('--expose-gc')
const collectGarbage = runInNewContext('gc') as () => void

// ---------------------------------------------------------------------------------------------
// Arguments

interface Options {
  size: number
  runs: number
  only?: Set<string>
  profile: boolean
}

function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(text.trim())
  if (!match) throw new Error(`--size takes a size like 50MB, 500KB or 1GB, not "${text}"`)
  const unit = (match[2] ?? 'mb').toLowerCase()
  const scale = unit.startsWith('g') ? 1e9 : unit.startsWith('m') ? 1e6 : unit.startsWith('k') ? 1e3 : 1
  return Math.round(Number(match[1]) * scale)
}

function parseArgs(argv: string[]): Options {
  const options: Options = { size: 10e6, runs: 3, profile: true }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined]
    const value = () => inline ?? argv[++i] ?? ''
    if (name === '--size') options.size = parseSize(value())
    else if (name === '--runs') options.runs = Math.max(1, Number(value()) || 3)
    else if (name === '--only') options.only = new Set(value().split(','))
    else if (name === '--no-profile') options.profile = false
    else if (name === '--help' || name === '-h') {
      process.stdout.write('usage: npm run bench -- [--size 10MB] [--runs 3] [--only row,row] [--no-profile]\n')
      process.exit(0)
    } else throw new Error(`unknown argument ${arg}`)
  }
  return options
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface Timing {
  seconds: number
  records: number
}

/**
 * One warm-up of each, then `runs` rounds alternating them; the best time of each. `before` runs
 * ahead of every run, outside its time (removing the last run's outputs, say).
 */
async function race(runs: number, contenders: (() => Promise<number>)[], before?: () => Promise<void>): Promise<Timing[]> {
  const best: Timing[] = contenders.map(() => ({ seconds: Infinity, records: 0 }))
  for (const run of contenders) {
    await before?.()
    collectGarbage()
    await run()
  }
  for (let round = 0; round < runs; round++) {
    for (const [i, run] of contenders.entries()) {
      await before?.()
      collectGarbage()
      const started = performance.now()
      const records = await run()
      const seconds = (performance.now() - started) / 1000
      if (seconds < best[i]!.seconds) best[i] = { seconds, records }
    }
  }
  return best
}

/**
 * The bytes `run` allocates on V8's heap, objects collected since included: the sampling heap
 * profiler's estimate (one sample per 16 KiB allocated, on average). Unlike a time, it does not move
 * with what else the machine is doing: it shows a change in what a conversion makes per record
 * where timings of the same build differ by a third from run to run.
 */
async function allocated(run: () => Promise<unknown>): Promise<number> {
  const session = new Session()
  session.connect()
  try {
    await session.post('HeapProfiler.enable')
    collectGarbage()
    // The two include… parameters are V8's protocol, which Node 20 takes, though @types/node's does not list them.
    const sampling = { samplingInterval: 16384, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true }
    await session.post('HeapProfiler.startSampling', sampling as { samplingInterval: number })
    await run()
    const { profile } = await session.post('HeapProfiler.stopSampling')
    let bytes = 0
    const add = (node: typeof profile.head): void => {
      bytes += node.selfSize
      for (const child of node.children) add(child)
    }
    add(profile.head)
    return bytes
  } finally {
    session.disconnect()
  }
}

const mb = (bytes: number) => bytes / 1e6
const fixed = (n: number, digits = 2) => n.toFixed(digits)
const thousands = (n: number) => Math.round(n).toLocaleString('en-US')

function throughput(t: Timing, bytes: number): string {
  return `${fixed(mb(bytes) / t.seconds, 1)} MB/s  ${thousands(t.records / t.seconds)} rec/s  ${fixed(t.seconds)} s`
}

interface Row {
  id: string
  title: string
  ratio: string
  evalferry: string
  baseline: string
  /** Throughput ratio against the main baseline, for conversions (what decides profiling). */
  conversionRatio?: number
  profileJob?: FileConvertOptions
}

// ---------------------------------------------------------------------------------------------
// Data

class Datasets {
  readonly dir: string
  constructor(private readonly size: number) {
    this.dir = join(WORK, `data-v${DATA_VERSION}-${size}`)
  }

  /** The dataset, generated on first use and then reused (its record count kept beside it). */
  async get(kind: DatasetKind, name: string, bytes: number, seed = SEED): Promise<Dataset> {
    const path = join(this.dir, name)
    // Kept apart from the data so that a directory of inputs holds only datasets.
    const meta = join(this.dir, 'meta', `${name.replaceAll('/', '_')}.json`)
    if (existsSync(path) && existsSync(meta)) return JSON.parse(await readFile(meta, 'utf8')) as Dataset
    progress(`generating ${relative(ROOT, path)} (${fixed(mb(bytes), 1)} MB)`)
    const dataset = await generate(kind, path, bytes, seed)
    await mkdir(dirname(meta), { recursive: true })
    await writeFile(meta, JSON.stringify(dataset))
    return dataset
  }
}

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`)
}

// ---------------------------------------------------------------------------------------------
// Rows

const OUT = join(WORK, 'out')
/** Where a least-conversion baseline writes its JSON Lines. */
const leastOutput = (write: (path: string, output: string) => Promise<number>) => (path: string) => write(path, join(OUT, 'least.jsonl'))

async function conversionRow(
  id: string,
  title: string,
  input: Dataset,
  options: Omit<FileConvertOptions, 'input' | 'output'> & { output: string },
  runs: number,
  baselines: [string, (path: string) => Promise<number>][],
): Promise<Row> {
  const job: FileConvertOptions = { ...options, input: input.path, output: join(OUT, options.output) }
  // CSV and JSON Lines to JSON Lines also convert in parts on every core (`threads`, the CLI's --jobs).
  const inParts = CORES > 1 && /\.(csv|jsonl)$/.test(input.path) && options.output.endsWith('.jsonl')
  const timings = await race(runs, [
    async () => (await evalferry.convert(job)).records.written,
    ...baselines.map(([, run]) => () => run(input.path)),
    ...(inParts ? [async () => (await evalferry.convert({ ...job, threads: CORES })).records.written] : []),
  ])
  // Allocation, against the least conversion writing JSON Lines where there is one (else parsing alone).
  const least = baselines.findIndex(([name]) => name.endsWith('→ JSONL'))
  const [leastName, leastRun] = baselines[least === -1 ? 0 : least]!
  const ourAllocation = await allocated(() => evalferry.convert(job))
  const theirAllocation = await allocated(() => leastRun(input.path))
  await rm(job.output, { force: true })
  const parts = inParts ? timings.pop() : undefined
  const [ours, ...theirs] = timings as [Timing, ...Timing[]]
  const ratios = theirs.map((t, i) => `${fixed(t.seconds / ours.seconds)} × ${baselines[i]![0]}`)
  if (parts) ratios.push(`in parts on ${CORES} threads ${fixed(theirs[0]!.seconds / parts.seconds)} (${fixed(parts.seconds)} s)`)
  // Each least conversion (a baseline named `x → y`) over parse-only: how near to parsing alone a conversion writing JSON can come here, with rows as objects, as bytes, or as its text alone.
  for (const [i, [name]] of baselines.entries()) {
    if (i > 0 && name.includes(' → ')) ratios.push(`${name} itself ${fixed(theirs[0]!.seconds / theirs[i]!.seconds)} × ${baselines[0]![0]}`)
  }
  ratios.push(`allocates ${fixed(ourAllocation / theirAllocation)} × ${leastName}'s`)
  const counts = new Set([ours.records, ...theirs.map((t) => t.records)])
  return {
    id,
    title,
    ratio: ratios.join(', '),
    evalferry: `${throughput(ours, input.bytes)}  allocated ${fixed(ourAllocation / input.bytes, 1)} B per input byte`,
    baseline: theirs.map((t, i) => `${baselines[i]![0]}: ${throughput(t, input.bytes)}`).join('; ') + (counts.size > 1 ? `  (records differ: ${[...counts].join(' vs ')})` : ''),
    conversionRatio: theirs[0]!.seconds / ours.seconds,
    profileJob: job,
  }
}

async function yamlRows(data: Datasets, size: number, runs: number): Promise<Row[]> {
  const input = await data.get('evalcase-yaml', 'evalcase.yaml', size / 4)
  const readTimes = await race(runs, [
    async () => {
      let n = 0
      for await (const _ of evalferry.read(input.path, { from: 'evalcase' })) n++
      return n
    },
    () => yamlParseFile(input.path),
    () => jsYamlLoadFile(input.path),
  ])
  const cases: EvalCase[] = []
  for await (const c of evalferry.read(input.path, { from: 'evalcase' })) cases.push(c)
  const doc: unknown = parseYaml(await readFile(input.path, 'utf8'))
  const output = join(OUT, 'evalcase-written.yaml')
  const writeTimes = await race(runs, [
    async () => (await evalferry.write(cases, output, { to: 'evalcase' })).records.written,
    () => yamlStringifyFile(doc, output),
    () => jsYamlDumpFile(doc, output),
  ])
  await rm(output, { force: true })
  const row = (id: string, title: string, [ours, yaml, jsYaml]: Timing[]): Row => ({
    id,
    title,
    ratio: `time ${fixed(ours!.seconds / yaml!.seconds)} × yaml, ${fixed(ours!.seconds / jsYaml!.seconds)} × js-yaml`,
    evalferry: throughput(ours!, input.bytes),
    baseline: `yaml: ${throughput(yaml!, input.bytes)}; js-yaml: ${throughput(jsYaml!, input.bytes)}`,
  })
  return [row('yaml-read', 'evalcase YAML read', readTimes), row('yaml-write', 'evalcase YAML write', writeTimes)]
}

/** Runs a command; resolves with its stdout, or rejects with the last line of its stderr. */
function runProcess(args: string[], options: { cwd?: string } = {}): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd: options.cwd ?? ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0) resolvePromise(stdout)
      else reject(new Error(stderr.trim().split('\n').filter(Boolean).slice(-1)[0] ?? `exit code ${code}`))
    })
  })
}

async function runChild(job: ChildJob): Promise<ChildResult> {
  const out = await runProcess(['--import', 'tsx', join(BENCH, 'child.ts'), JSON.stringify(job)])
  return JSON.parse(out.trim().split('\n').pop()!) as ChildResult
}

/**
 * Peak RSS (the kernel's high-water mark) of a command, read from /proc while it runs; `command`
 * is node unless named, and `stdout` names a file its standard output goes to.
 */
async function peakOfCommand(args: string[], command = process.execPath, stdout?: string): Promise<{ peakRss: number; seconds: number }> {
  const out = stdout === undefined ? 'ignore' : openSync(stdout, 'w')
  const started = performance.now()
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', out, 'pipe'] })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  let peak = 0
  const poll = setInterval(() => {
    try {
      const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
      if (match) peak = Math.max(peak, Number(match[1]) * 1024)
    } catch {
      // the process has just ended
    }
  }, 20)
  const code = await new Promise<number | null>((done) => child.on('close', done))
  const seconds = (performance.now() - started) / 1000
  clearInterval(poll)
  if (typeof out === 'number') closeSync(out)
  if (code !== 0) throw new Error(stderr.trim().split('\n').pop() ?? `exit code ${code}`)
  return { peakRss: peak, seconds }
}

/** Peak RSS of the command line converting `input` to `output`, which is removed afterwards. */
async function peakOfConversion(input: string, from: string, to: string, output: string): Promise<{ peakRss: number; seconds: number }> {
  const cli = join(await compiled(), 'src', 'cli', 'main.js')
  const peak = await peakOfCommand([cli, 'convert', input, '--from', from, '--to', to, '-o', output, '--quiet'])
  await rm(output, { force: true })
  return peak
}

const describePeak = (r: ChildResult): string => `peak ${fixed(mb(r.peakRss), 0)} MB (${fixed(mb(r.peakRss - r.startRss), 0)} MB over start), ${fixed(r.seconds)} s`

async function parquetMemoryRow(data: Datasets, size: number): Promise<Row> {
  const input = await data.get('hf-parquet-one-group', 'hf-one-group-x10.parquet', size * 10, SEED + 20)
  const ours = await peakOfConversion(input.path, 'hf', 'hf', join(OUT, 'hf-one-group-x10.jsonl'))
  const theirs = await runChild({ kind: 'parquet-wasm', path: input.path })
  return {
    id: 'memory-parquet',
    title: `peak RSS, Parquet of ${fixed(mb(size * 10), 0)} MB text in one row group → hf JSONL`,
    ratio: `${fixed(ours.peakRss / theirs.peakRss)} × parquet-wasm's peak`,
    evalferry: `command line: peak ${fixed(mb(ours.peakRss), 0)} MB, ${fixed(ours.seconds)} s (file ${fixed(mb(input.bytes), 0)} MB)`,
    baseline: `parquet-wasm: ${describePeak(theirs)}`,
  }
}

/** `short`: the CSV of short rows, whose many records show what memory each record keeps (its id, say). */
async function memoryRow(data: Datasets, size: number, short = false): Promise<Row> {
  const input = short ? await data.get('short-csv', 'short-x10.csv', size * 10, SEED + 30) : await data.get('table-csv', 'table-x10.csv', size * 10, SEED + 10)
  const output = join(OUT, short ? 'short-x10.jsonl' : 'table-x10.jsonl')
  // What a user gets: the command line, which converts a CSV from 256 MiB up in parts on worker threads with capped heaps.
  const ours = await peakOfConversion(input.path, 'csv', 'evalcase', output)
  const library = await runChild({ kind: 'convert', options: { input: input.path, output, from: 'csv', to: 'evalcase' }, lib: await compiledModule('index.js') })
  await rm(output, { force: true })
  const theirs = await runChild({ kind: 'papaparse', path: input.path })
  return {
    id: short ? 'memory-short' : 'memory',
    title: `peak RSS, CSV ${short ? 'of short rows ' : ''}${fixed(mb(input.bytes), 0)} MB → evalcase JSONL`,
    ratio: `${fixed(ours.peakRss / theirs.peakRss)} × papaparse's peak`,
    evalferry: `command line: peak ${fixed(mb(ours.peakRss), 0)} MB, ${fixed(ours.seconds)} s; library convert() in one thread, default heap: ${describePeak(library)}`,
    baseline: `papaparse: ${describePeak(theirs)}`,
  }
}

/**
 * `--shard i/n` of the memory row's CSV (10×S): the n = 4 shards one after another through the
 * command line, against the whole file in one thread (`--jobs 1`, as each shard runs). 1.00 means
 * sharding costs nothing over converting the whole; a shard that parsed the records before its
 * own would cost about n/2 whole files.
 */
async function shardRow(data: Datasets, size: number, runs: number): Promise<Row> {
  const input = await data.get('table-csv', 'table-x10.csv', size * 10, SEED + 10)
  const cli = [join(await compiled(), 'src', 'cli', 'main.js')]
  const outDir = join(OUT, 'shard')
  const common = ['convert', input.path, '--from', 'csv', '--to', 'evalcase', '--jobs', '1', '--quiet']
  const count = 4
  // Each run's total and slowest shard: the row shows the slowest of the fastest run.
  const seen: { total: number; worst: number }[] = []
  const whole = async () => {
    await runProcess([...cli, ...common, '-o', join(outDir, 'whole.jsonl')])
    return input.records
  }
  const shards = async () => {
    let worst = 0
    let total = 0
    for (let i = 1; i <= count; i++) {
      const started = performance.now()
      await runProcess([...cli, ...common, '-o', join(outDir, 'shard.jsonl'), '--shard', `${i}/${count}`])
      const seconds = (performance.now() - started) / 1000
      worst = Math.max(worst, seconds)
      total += seconds
    }
    seen.push({ total, worst })
    return input.records
  }
  const [one, all] = (await race(runs, [whole, shards])) as [Timing, Timing]
  const slowest = seen.reduce((a, b) => (b.total < a.total ? b : a)).worst
  await rm(outDir, { recursive: true, force: true })
  return {
    id: 'shard',
    title: `--shard i/${count} of CSV ${fixed(mb(input.bytes), 0)} MB → evalcase JSONL`,
    ratio: `${fixed(all.seconds / one.seconds)} × the whole file's time for all ${count} shards (slowest shard ${fixed(slowest / one.seconds)}; ideal 1.00 and ${fixed(1 / count)})`,
    evalferry: `${count} shards: ${fixed(all.seconds)} s, slowest ${fixed(slowest)} s`,
    baseline: `whole file, --jobs 1: ${throughput(one, input.bytes)}`,
  }
}

/** Newest modification time of the TypeScript sources the build compiles. */
function newestSource(dir = ROOT): number {
  let newest = 0
  for (const sub of dir === ROOT ? ['src', 'adapters', 'cache'] : ['']) {
    const path = join(dir, sub)
    if (!existsSync(path)) continue
    for (const e of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, e.name)
      newest = Math.max(newest, e.isDirectory() ? newestSource(child) : e.name.endsWith('.ts') ? statSync(child).mtimeMs : 0)
    }
  }
  return newest
}

/**
 * Compiled JavaScript of the sources: `dist/` when it is newer than every source, else a private
 * build under `.bench/dist` (made when stale). Every row runs it, as users do (see `evalferry`); a
 * worker thread that loaded TypeScript through tsx would also spend its start-up compiling, and
 * profiles get real line numbers.
 */
let compiling: Promise<string> | undefined
function compiled(): Promise<string> {
  compiling ??= compile()
  return compiling
}

async function compile(): Promise<string> {
  const newest = newestSource()
  for (const dir of [join(ROOT, 'dist'), join(WORK, 'dist')]) {
    const main = join(dir, 'src', 'cli', 'main.js')
    if (existsSync(main) && statSync(main).mtimeMs >= newest) return dir
  }
  const dir = join(WORK, 'dist')
  progress('compiling the sources into .bench/dist (dist/ is absent or older than the sources)')
  await rm(dir, { recursive: true, force: true })
  // tsc emits despite type errors elsewhere in a tree under work; only a missing file is fatal.
  await runProcess([join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', dir]).catch(() => {})
  if (!existsSync(join(dir, 'src', 'cli', 'main.js'))) throw new Error('compiling the sources failed')
  return dir
}

/** A module of the compiled library, as a URL to import: `index.js`, `codecs/parquet.js`. */
async function compiledModule(path: string): Promise<string> {
  return pathToFileURL(join(await compiled(), 'src', path)).href
}

/**
 * The library the in-process rows time: the compiled JavaScript, as users run it. Loaded from the
 * sources through tsx, every function made at run time would also call esbuild's `__name` (tsx
 * keeps functions' names): 5 to 15% of a CSV conversion's time against the compiled code, both
 * timed in one process.
 */
let evalferry: typeof import('../src/index.ts')

/** Batch files smaller than this leave each worker compiling its code for much of its time. */
const SMALL_BATCH_FILE = 50e6

async function batchRow(data: Datasets, size: number, runs: number): Promise<Row> {
  const title = `batch of 8 CSV tables → evalcase JSONL, --jobs 1 vs ${CORES}`
  const cli = [join(await compiled(), 'src', 'cli', 'main.js')]
  const help = await runProcess([...cli, 'convert', '--help']).catch((e: Error) => e.message)
  if (!help.includes('--jobs')) return { id: 'batch', title, ratio: 'n/a (needs --jobs)', evalferry: '', baseline: '' }
  let bytes = 0
  let records = 0
  for (let i = 1; i <= 8; i++) {
    const part = await data.get('table-csv', join('batch-s2', `part-${i}.csv`), size / 2, SEED + 100 + i)
    bytes += part.bytes
    records += part.records
  }
  const outDir = join(OUT, 'batch')
  // The last run's outputs (850 MB at --size 200MB) are removed before each run, outside its
  // time: the file system freeing them is not the conversion's work (half a second at that size).
  const emptyOutDir = async () => {
    await rm(outDir, { recursive: true, force: true })
    await mkdir(outDir, { recursive: true })
  }
  const runCli = (jobs: number) => async () => {
    await runProcess([...cli, 'convert', join(data.dir, 'batch-s2'), '--from', 'csv', '--to', 'evalcase', '--to-container', 'jsonl', '-o', outDir, '--jobs', String(jobs), '--quiet'])
    return records
  }
  // The machine's own ceiling: the same files split over CORES separate processes of one job each.
  const files = Array.from({ length: 8 }, (_, i) => join(data.dir, 'batch-s2', `part-${i + 1}.csv`))
  const separate = async () => {
    await Promise.all(
      Array.from({ length: CORES }, (_, k) =>
        runProcess([...cli, 'convert', ...files.filter((_, i) => i % CORES === k), '--from', 'csv', '--to', 'evalcase', '--to-container', 'jsonl', '-o', outDir, '--jobs', '1', '--quiet']),
      ),
    )
    return records
  }
  const [one, all, ceiling] = (await race(runs, [runCli(1), runCli(CORES), separate], emptyOutDir)) as [Timing, Timing, Timing]
  await rm(outDir, { recursive: true, force: true })
  return {
    id: 'batch',
    title,
    ratio:
      `${fixed(one.seconds / all.seconds)} × --jobs 1 (ideal ${CORES}.00; ${CORES} separate processes reach ${fixed(one.seconds / ceiling.seconds)})` +
      (size / 2 < SMALL_BATCH_FILE ? `; files of ${fixed(mb(size / 2), 1)} MB are mostly start-up: --size 200MB --only batch shows the cores' throughput` : ''),
    evalferry: `--jobs ${CORES}: ${throughput(all, bytes)}`,
    baseline: `--jobs 1: ${throughput(one, bytes)}`,
  }
}

// ---------------------------------------------------------------------------------------------
// Against the tools users would pick instead

interface Measured {
  seconds: number
  peakRss: number
}

/** Commands run one after another: their times added, the highest of their peaks. */
async function measureCommands(commands: Command[]): Promise<Measured> {
  let seconds = 0
  let peakRss = 0
  for (const c of commands) {
    const one = await peakOfCommand(c.args, c.command, c.stdout)
    seconds += one.seconds
    peakRss = Math.max(peakRss, one.peakRss)
  }
  return { seconds, peakRss }
}

const PEER_OUT = join(OUT, 'peers')

/**
 * evalferry's command line against each peer on the same inputs, round after round, the best
 * time of each kept with that run's peak RSS. The ratios are evalferry's time over the peer's and
 * evalferry's peak over the peer's: below 1.00, evalferry is faster or smaller.
 */
async function peerRow(id: string, title: string, ours: Command[], task: PeerTask, runs: number): Promise<Row> {
  const { peers } = await peerTools()
  const contenders: { name: string; commands: Command[] | undefined }[] = [{ name: 'evalferry', commands: ours }, ...peers.map((p) => ({ name: p.name, commands: p.commands(task) }))]
  const best = new Map<string, Measured>()
  const failed = new Map<string, string>()
  for (let round = 0; round < runs; round++) {
    for (const { name, commands } of contenders) {
      if (!commands || failed.has(name)) continue
      await rm(PEER_OUT, { recursive: true, force: true })
      await mkdir(PEER_OUT, { recursive: true })
      try {
        const measured = await measureCommands(commands)
        if (measured.seconds < (best.get(name)?.seconds ?? Infinity)) best.set(name, measured)
      } catch (error) {
        failed.set(name, (error as Error).message.slice(0, 120))
      }
    }
  }
  await rm(PEER_OUT, { recursive: true, force: true })
  const mine = best.get('evalferry')
  if (!mine) return { id, title, ratio: 'error', evalferry: '', baseline: failed.get('evalferry') ?? '' }
  const bytes = task.files.reduce((n, f) => n + statSync(f.input).size, 0)
  const others = contenders.slice(1)
  const shown = (name: string): string => {
    const m = best.get(name)
    return m ? `${fixed(m.seconds)} s, peak ${fixed(mb(m.peakRss), 0)} MB` : failed.has(name) ? `failed: ${failed.get(name)}` : 'n/a'
  }
  const measured = others.filter((o) => best.has(o.name))
  return {
    id,
    title: `${title} (${fixed(mb(bytes), 0)} MB${task.kind.startsWith('parquet') ? ' file' : ''})`,
    ratio: measured.length
      ? `time ${measured.map((o) => `${fixed(mine.seconds / best.get(o.name)!.seconds)} × ${o.name}`).join(', ')}; peak ${measured.map((o) => `${fixed(mine.peakRss / best.get(o.name)!.peakRss)} × ${o.name}`).join(', ')}`
      : 'no peer ran',
    evalferry: shown('evalferry'),
    baseline: others.map((o) => `${o.name}: ${shown(o.name)}`).join('; '),
  }
}

let peersFound: ReturnType<typeof findPeers> | undefined
async function peerTools(): Promise<ReturnType<typeof findPeers>> {
  peersFound ??= findPeers(ROOT)
  return peersFound
}

const PEER_ROWS = ['peer-csv', 'peer-deepeval', 'peer-parquet', 'peer-parquet-pandas', 'peer-jsonl-parquet', 'peer-batch']

async function peerRows(data: Datasets, size: number, runs: number, wanted: (id: string) => boolean): Promise<Row[]> {
  const cli = join(await compiled(), 'src', 'cli', 'main.js')
  const convert = (input: string, from: string, to: string, output: string, ...more: string[]): Command[] => [
    { command: process.execPath, args: [cli, 'convert', input, '--from', from, '--to', to, '-o', output, '--quiet', ...more] },
  ]
  const out = (name: string): string => join(PEER_OUT, name)
  const rows: Row[] = []
  // One file of 10×S each: [row, title, dataset kind, file, seed, from, to, output, what the peers do].
  const single: [string, string, DatasetKind, string, number, string, string, string, PeerTask['kind']][] = [
    ['peer-csv', 'CSV table → JSON Lines', 'table-csv', 'table-x10.csv', SEED + 10, 'csv', 'evalcase', 'table.jsonl', 'csv-jsonl'],
    ['peer-deepeval', 'DeepEval CSV → DeepEval JSON', 'deepeval-csv', 'deepeval-x10.csv', SEED + 40, 'deepeval', 'deepeval', 'deepeval.json', 'csv-json'],
    ['peer-parquet', 'Parquet (one row group, zstd) → JSON Lines', 'hf-parquet-zstd', 'hf-zstd-x10.parquet', SEED + 50, 'hf', 'hf', 'hf.jsonl', 'parquet-jsonl'],
    ['peer-parquet-pandas', 'Parquet as pandas writes it → JSON Lines', 'hf-parquet-pandas', 'hf-pandas-x10.parquet', SEED + 50, 'hf', 'hf', 'hf.jsonl', 'parquet-jsonl'],
    ['peer-jsonl-parquet', 'JSON Lines → Parquet', 'langsmith-jsonl', 'langsmith-x10.jsonl', SEED + 60, 'langsmith', 'hf', 'hf.parquet', 'jsonl-parquet'],
  ]
  for (const [id, title, kind, file, seed, from, to, output, task] of single) {
    if (!wanted(id)) continue
    const input = await data.get(kind, file, size * 10, seed)
    rows.push(await peerRow(id, title, convert(input.path, from, to, out(output)), { kind: task, files: [{ input: input.path, output: out(output) }] }, runs))
  }
  if (wanted('peer-batch')) {
    const files: PeerTask['files'] = []
    for (let i = 1; i <= 8; i++) {
      const part = await data.get('table-csv', join('batch-s1', `part-${i}.csv`), size, SEED + 200 + i)
      files.push({ input: part.path, output: out(`part-${i}.jsonl`) })
    }
    const ours = convert(join(data.dir, 'batch-s1'), 'csv', 'evalcase', PEER_OUT, '--to-container', 'jsonl')
    rows.push(await peerRow('peer-batch', `8 CSV tables → JSON Lines, default jobs`, ours, { kind: 'csv-jsonl', files }, runs))
  }
  return rows
}

/** What a user waits for on a small file: start-up, the modules a conversion loads, and the conversion. */
async function startupRow(runs: number): Promise<Row> {
  const cli = join(await compiled(), 'src', 'cli', 'main.js')
  const example = join(ROOT, 'examples', 'goldens.json')
  const outDir = join(OUT, 'startup')
  await mkdir(outDir, { recursive: true })
  const timed = (args: string[]) => async () => {
    await runProcess(args)
    return 3
  }
  const convertTo = (output: string, to: string, input = example) => timed([cli, 'convert', input, '--to', to, '-o', join(outDir, output), '--quiet'])
  // The same cases as an AgentV user keeps them, read back from evalcase YAML.
  const yamlInput = join(outDir, 'input.yaml')
  await runProcess([cli, 'convert', example, '--to', 'evalcase', '-o', yamlInput, '--quiet'])
  // Start-up varies from run to run more than a conversion does: at least five rounds.
  const [bare, jsonl, yaml, fromYaml] = (await race(Math.max(runs, 5), [
    timed(['-e', '0']),
    convertTo('goldens.jsonl', 'deepeval'),
    convertTo('goldens.yaml', 'evalcase'),
    convertTo('from-yaml.jsonl', 'deepeval', yamlInput),
  ])) as [Timing, Timing, Timing, Timing]
  await rm(outDir, { recursive: true, force: true })
  const ms = (t: Timing) => `${fixed(t.seconds * 1000, 0)} ms`
  const own = (t: Timing) => `${fixed((t.seconds - bare.seconds) * 1000, 0)} ms`
  return {
    id: 'startup',
    title: 'start-up: 3 cases → DeepEval JSONL, → evalcase YAML, from evalcase YAML',
    ratio: `${fixed(jsonl.seconds / bare.seconds)} × node's start (JSONL), ${fixed(yaml.seconds / bare.seconds)} × (to YAML), ${fixed(fromYaml.seconds / bare.seconds)} × (from YAML); times`,
    evalferry: `JSONL ${ms(jsonl)} (${own(jsonl)} its own), to YAML ${ms(yaml)} (${own(yaml)} its own), from YAML ${ms(fromYaml)} (${own(fromYaml)} its own)`,
    baseline: `node -e 0: ${ms(bare)}`,
  }
}

// ---------------------------------------------------------------------------------------------
// Profiles

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
}

const sourceMaps = new Map<string, SourceMap | undefined>()

/** `file:line` of a profiled function, mapped back to the TypeScript source when compiled. */
function sourcePosition(url: string, line: number, column: number): string {
  if (!url) return ''
  const path = url.startsWith('file:') ? fileURLToPath(url) : url
  if (!sourceMaps.has(path)) {
    let map: SourceMap | undefined
    try {
      map = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')))
    } catch {
      map = undefined
    }
    sourceMaps.set(path, map)
  }
  const entry = sourceMaps.get(path)?.findEntry(line, column) as { originalSource?: string; originalLine?: number } | undefined
  if (entry?.originalSource && entry.originalLine !== undefined) {
    const original = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : resolve(dirname(path), entry.originalSource)
    return `${relative(ROOT, original)}:${entry.originalLine + 1}`
  }
  return `${path.startsWith('/') ? relative(ROOT, path) : path}:${line + 1}`
}

interface Hotspot {
  name: string
  where: string
  share: number
}

/**
 * Self time per function (and per file) of a `.cpuprofile`, as shares of the non-idle samples;
 * samples are counted rather than weighted by their time deltas, which pile up on the profiler's
 * own start and stop.
 */
function hotspots(profile: { nodes: ProfileNode[]; samples: number[] }): { functions: Hotspot[]; files: Hotspot[] } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const functions = new Map<string, Hotspot>()
  const files = new Map<string, Hotspot>()
  let total = 0
  for (const id of profile.samples) {
    const node = byId.get(id)
    const delta = 1
    if (!node || node.callFrame.functionName === '(idle)') continue
    total += delta
    const { functionName, url, lineNumber, columnNumber } = node.callFrame
    const where = sourcePosition(url, lineNumber, columnNumber)
    const file = where.replace(/:\d+$/, '')
    const fn = functions.get(functionName + where) ?? { name: functionName || '(anonymous)', where, share: 0 }
    fn.share += delta
    functions.set(functionName + where, fn)
    const key = file || functionName
    const f = files.get(key) ?? { name: key, where: '', share: 0 }
    f.share += delta
    files.set(key, f)
  }
  const top = (m: Map<string, Hotspot>, n: number) =>
    [...m.values()].map((h) => ({ ...h, share: h.share / (total || 1) })).sort((a, b) => b.share - a.share).slice(0, n)
  return { functions: top(functions, 12), files: top(files, 8) }
}

async function profileRow(row: Row): Promise<string> {
  const dir = join(WORK, 'prof', row.id)
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir, { recursive: true })
  const path = join(dir, `${row.id}.cpuprofile`)
  const lib = await compiledModule('index.js')
  await runProcess(['--import', 'tsx', join(BENCH, 'child.ts'), JSON.stringify({ kind: 'convert', options: row.profileJob!, profile: path, lib } satisfies ChildJob)])
  await rm(row.profileJob!.output, { force: true })
  const { functions, files } = hotspots(JSON.parse(await readFile(path, 'utf8')))
  const lines = [`${row.id} (${fixed(row.conversionRatio!)}): top self time, profile in ${relative(ROOT, path)}`]
  for (const h of functions) lines.push(`  ${fixed(h.share * 100, 1).padStart(5)}%  ${h.name}  ${h.where}`)
  lines.push('  by file: ' + files.map((h) => `${h.name} ${fixed(h.share * 100, 1)}%`).join(', '))
  return lines.join('\n')
}

// ---------------------------------------------------------------------------------------------

function printTable(rows: Row[]): void {
  const header: Row = { id: '', title: 'measurement', ratio: 'ratio (evalferry ÷ baseline)', evalferry: 'evalferry', baseline: 'baseline' }
  const all = [header, ...rows]
  const width = (key: 'title' | 'ratio' | 'evalferry') => Math.max(...all.map((r) => r[key].length))
  const [w1, w2, w3] = [width('title'), width('ratio'), width('evalferry')]
  const line = (r: Row) => `${r.title.padEnd(w1)}  ${r.ratio.padEnd(w2)}  ${r.evalferry.padEnd(w3)}  ${r.baseline}`.trimEnd()
  process.stdout.write(line(header) + '\n' + '-'.repeat(w1 + w2 + w3 + 6 + 40) + '\n')
  for (const r of rows) process.stdout.write(line(r) + '\n')
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2))
  const { size, runs } = options
  const data = new Datasets(size)
  await mkdir(OUT, { recursive: true })
  const wanted = (id: string) => !options.only || options.only.has(id)
  evalferry = (await import(await compiledModule('index.js'))) as typeof evalferry
  const parquet = (await import(await compiledModule('codecs/parquet.js'))) as typeof import('../src/codecs/parquet.ts')

  const csvBaselines: [string, (path: string) => Promise<number>][] = [
    ['papaparse', papaparseRows],
    ['papaparse → JSONL', leastOutput(papaparseToJsonl)],
    ['CSV bytes → JSONL', leastOutput(csvBytesToJsonl)],
  ]
  const parquetBaselines: [string, (path: string) => Promise<number>][] = [
    ['parquet-wasm', parquetWasmRows],
    ['parquet-wasm+Arrow JS', parquetArrowJsRows],
    ['readParquet rows', (path) => parquetReaderRows(path, parquet)],
    ['readParquet rows → JSONL', leastOutput((path, output) => parquetReaderToJsonl(path, output, parquet))],
    ['parquet-wasm → escaped text', parquetTextEscaped],
  ]
  const plan: { ids: string[]; title: string; run: () => Promise<Row | Row[]> }[] = [
    {
      ids: ['csv-evalcase'],
      title: 'CSV table → evalcase JSONL',
      run: async () =>
        conversionRow('csv-evalcase', 'CSV table → evalcase JSONL', await data.get('table-csv', 'table.csv', size), { output: 'table.jsonl', from: 'csv', to: 'evalcase' }, runs, csvBaselines),
    },
    {
      ids: ['csv-short'],
      title: 'CSV of short rows → evalcase JSONL',
      run: async () =>
        conversionRow('csv-short', 'CSV of short rows → evalcase JSONL', await data.get('short-csv', 'short.csv', size), { output: 'short.jsonl', from: 'csv', to: 'evalcase' }, runs, csvBaselines),
    },
    {
      ids: ['csv-deepeval'],
      title: 'CSV DeepEval → DeepEval JSONL',
      run: async () =>
        conversionRow('csv-deepeval', 'CSV DeepEval → DeepEval JSONL', await data.get('deepeval-csv', 'deepeval.csv', size), { output: 'deepeval.jsonl', from: 'deepeval', to: 'deepeval' }, runs, csvBaselines),
    },
    {
      ids: ['csv-wide'],
      title: 'CSV of 1,000 columns → hf JSONL',
      run: async () => conversionRow('csv-wide', 'CSV of 1,000 columns → hf JSONL', await data.get('wide-csv', 'wide.csv', size), { output: 'wide.jsonl', from: 'csv', to: 'hf' }, runs, csvBaselines),
    },
    {
      ids: ['parquet-hf'],
      title: 'Parquet hf → hf JSONL',
      run: async () =>
        conversionRow('parquet-hf', 'Parquet hf → hf JSONL', await data.get('hf-parquet', 'hf.parquet', size), { output: 'hf.jsonl', from: 'hf', to: 'hf' }, runs, parquetBaselines),
    },
    {
      ids: ['parquet-langsmith'],
      title: 'Parquet hf → LangSmith JSONL',
      run: async () =>
        conversionRow('parquet-langsmith', 'Parquet hf → LangSmith JSONL', await data.get('hf-parquet', 'hf.parquet', size), { output: 'langsmith.jsonl', from: 'hf', to: 'langsmith' }, runs, parquetBaselines),
    },
    {
      ids: ['jsonl-parquet'],
      title: 'LangSmith JSONL → hf Parquet',
      run: async () =>
        conversionRow('jsonl-parquet', 'LangSmith JSONL → hf Parquet', await data.get('langsmith-jsonl', 'langsmith.jsonl', size), { output: 'hf.parquet', from: 'langsmith', to: 'hf' }, runs, [
          ['JSON.parse', jsonParseLines],
        ]),
    },
    {
      ids: ['long-record'],
      title: 'JSONL with one long record → hf JSONL',
      run: async () =>
        conversionRow('long-record', 'JSONL with one long record → hf JSONL', await data.get('long-jsonl', 'long.jsonl', size), { output: 'long-hf.jsonl', from: 'langsmith', to: 'hf' }, runs, [
          ['JSON.parse', jsonParseLines],
        ]),
    },
    { ids: ['yaml-read', 'yaml-write'], title: 'evalcase YAML read / write', run: () => yamlRows(data, size, runs) },
    { ids: ['memory'], title: 'peak RSS', run: () => memoryRow(data, size) },
    { ids: ['memory-short'], title: 'peak RSS, short rows', run: () => memoryRow(data, size, true) },
    { ids: ['memory-parquet'], title: 'peak RSS, Parquet in one row group', run: () => parquetMemoryRow(data, size) },
    { ids: ['batch'], title: 'batch of 8 files', run: () => batchRow(data, size, runs) },
    { ids: ['shard'], title: '--shard of one file', run: () => shardRow(data, size, runs) },
    { ids: ['startup'], title: 'start-up on a small file', run: () => startupRow(runs) },
    { ids: PEER_ROWS, title: 'against DuckDB, pandas and Miller', run: () => peerRows(data, size, runs, wanted) },
  ]

  process.stdout.write(
    `evalferry bench: inputs of ${fixed(mb(size), 1)} MB (YAML ${fixed(mb(size / 4), 1)} MB, memory ${fixed(mb(size * 10), 0)} MB, batch 8 × ${fixed(mb(size / 2), 1)} MB); ` +
      `best of ${runs} after one warm-up; node ${process.version}, ${CORES} cores, load average ${fixed(loadavg()[0]!, 1)} at start\n\n`,
  )
  const rows: Row[] = []
  for (const step of plan) {
    if (!step.ids.some(wanted)) continue
    progress(step.title)
    try {
      const result = await step.run()
      rows.push(...(Array.isArray(result) ? result : [result]).filter((r) => wanted(r.id)))
    } catch (error) {
      const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!
      rows.push({ id: step.ids[0]!, title: step.title, ratio: 'error', evalferry: '', baseline: message.slice(0, 200) })
    }
  }
  printTable(rows)
  if (peersFound?.skipped.length) process.stdout.write(`\nPeers skipped: ${peersFound.skipped.join('; ')}\n`)

  const slow = rows.filter((r) => r.conversionRatio !== undefined && r.conversionRatio < 0.7 && r.profileJob)
  if (options.profile && slow.length) {
    process.stdout.write('\nConversions below 0.7 of their baseline, profiled once each after a warm-up (V8 CPU profiler):\n')
    for (const row of slow) {
      progress(`profiling ${row.id}`)
      process.stdout.write((await profileRow(row).catch((e: Error) => `${row.id}: profiling failed: ${e.message}`)) + '\n')
    }
  }
  await rm(OUT, { recursive: true, force: true })
}

await main()
