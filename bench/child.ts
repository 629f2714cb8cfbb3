/**
 * One job in a fresh process, so that its peak memory is its own: `node --import tsx bench/child.ts
 * '<job as JSON>'` prints one JSON line with the peak RSS (the kernel's high-water mark, VmHWM, or
 * the highest 20 ms sample where /proc is absent). With `profile`, the job runs once to load and
 * compile every module, then again under the V8 CPU profiler (what `node --cpu-prof` records, minus
 * start-up), and the `.cpuprofile` is written there.
 */
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import type { ConvertOptions } from '../src/index.ts'
import { papaparseRows, parquetWasmRows } from './baselines.ts'

export type ChildJob = (
  | {
      kind: 'convert'
      options: ConvertOptions
      /** The URL of the library module to convert with: the compiled JavaScript, as users run it (and profiles show its lines). */
      lib: string
    }
  | { kind: 'papaparse' | 'parquet-wasm'; path: string }
) & {
  /** Write a CPU profile of a second run here. */
  profile?: string
}

export interface ChildResult {
  /** Peak resident set size of the process, in bytes. */
  peakRss: number
  /** Resident set size once the modules were loaded, before the job started. */
  startRss: number
  seconds: number
  records: number
}

function highWaterMark(): number | undefined {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))
    return match ? Number(match[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

async function run(job: ChildJob): Promise<number> {
  if (job.kind === 'convert') {
    const { convert } = (await import(job.lib)) as typeof import('../src/index.ts')
    return (await convert(job.options)).records.written
  }
  return job.kind === 'papaparse' ? papaparseRows(job.path) : parquetWasmRows(job.path)
}

async function profile(job: ChildJob, path: string): Promise<void> {
  await run(job)
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 250 })
  await session.post('Profiler.start')
  await run(job)
  const { profile } = await session.post('Profiler.stop')
  session.disconnect()
  await writeFile(path, JSON.stringify(profile))
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as ChildJob
  if (job.profile) return profile(job, job.profile)
  const startRss = process.memoryUsage().rss
  let sampled = startRss
  const timer = setInterval(() => (sampled = Math.max(sampled, process.memoryUsage().rss)), 20)
  const started = performance.now()
  const records = await run(job)
  const seconds = (performance.now() - started) / 1000
  clearInterval(timer)
  sampled = Math.max(sampled, process.memoryUsage().rss)
  const result: ChildResult = { peakRss: Math.max(highWaterMark() ?? 0, sampled), startRss, seconds, records }
  process.stdout.write(JSON.stringify(result) + '\n')
}

await main()
