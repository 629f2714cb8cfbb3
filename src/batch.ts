/**
 * Batches: several files converted in parallel, by this thread and worker threads (by default one
 * lane per 32 MiB of input, at most one per free core), and the jobs of one shard of them
 * (shards.ts): whole files when there are at least n of them, else a contiguous record range of
 * every file, so that the parts, in order, are the whole.
 */
import { availableParallelism } from 'node:os'
import { stat } from 'node:fs/promises'
import type { Worker } from 'node:worker_threads'
import { getAdapter } from '../adapters/index.ts'
import { EvalferryError, UsageError } from './errors.ts'
import { isPipe, removeOwnTemps, STDIO } from './io.ts'
import { convert } from './convert.ts'
import { detectFormat } from './read.ts'
import { filesWritten } from './write.ts'
import type { FileConvertOptions } from './options.ts'
import type { ConversionReport } from './report.ts'
import { ask, endWorker, freeCores, revived, startWorker, type ErrorReply } from './workers.ts'
import { largestFirst, locateShard, partName, shardFiles, type Shard } from './shards.ts'

export interface BatchJob extends FileConvertOptions {}

/** Progress of the running jobs, as the batch reports it. */
export interface BatchProgress {
  filesDone: number
  records: number
  bytes: number
}

/**
 * The jobs of one shard. Whole files are dealt out by size when there are at least `count` of
 * them; otherwise each file contributes the shard's contiguous record range, written as
 * `<stem>.part-<i>-of-<n><ext>` beside where the whole would go.
 */
export async function shardJobs(jobs: BatchJob[], shard: Shard): Promise<BatchJob[]> {
  const ordered = [...jobs].sort((a, b) => (a.input < b.input ? -1 : a.input > b.input ? 1 : 0))
  if (ordered.some((j) => j.input === STDIO)) throw new UsageError('--shard needs files, not standard input')
  // A shard of a file's records reads it twice (to count them, then its part): a pipe gives its bytes once.
  for (const job of ordered) if (await isPipe(job.input)) throw new UsageError(`--shard needs files: ${job.input} is a pipe, whose bytes can be read only once; write them to a file first`)
  const { files, rangeOf } = await shardFiles(ordered, shard, async (job) => (await bytesToRead(job)) ?? 0)
  if (!rangeOf) return files
  const out: BatchJob[] = []
  for (const job of files) {
    const from = job.from ?? (await detectFormat(job.input, { target: (await getAdapter(job.to)).name, ...(job.inputContainer ? { container: job.inputContainer } : {}) }))
    out.push({ ...job, from, output: partName(job.output, shard), ...(await locateShard(job, from, rangeOf)) })
  }
  return out
}

interface WorkerReply {
  type: 'progress' | 'done' | 'error'
  records?: number
  bytes?: number
  report?: ConversionReport
  error?: ErrorReply
}

/** Sends `job` to `worker` and resolves with its last reply (done or error); `onProgress` hears the progress it sends before. */
function runInWorker(worker: Worker, job: BatchJob, onProgress: (records: number, bytes: number) => void): Promise<WorkerReply> {
  return ask(worker, job, (message: WorkerReply) => {
    if (message.type !== 'progress') return message
    onProgress(message.records ?? 0, message.bytes ?? 0)
    return undefined
  })
}

/**
 * One CSV or JSON Lines file from 128 MiB up converts in parts, below in one thread: each thread
 * warms its own code, and the cut and the joining of the parts take a few tenths of a second. Two
 * cores here, a CSV table to hf JSON Lines on two threads against one: 100 MB 0.9 to 1.1 times as
 * fast, 200 MB 1.1 to 1.2 times, 400 MB 1.3 times.
 */
const SPLIT_FROM_BYTES = 128 << 20

/**
 * The threads one large file converts on: those asked for, else every core that other work leaves
 * free (`free`, see `freeCores`), of `cores`.
 */
export function partThreads(jobs: number | undefined, cores: number, free: number): number {
  return Math.max(1, Math.min(jobs ?? free, cores))
}

/** Whether `job` is a file of `minBytes` or more that converts in parts on `threads` threads. */
async function splittable(job: BatchJob, threads: number, minBytes: number): Promise<boolean> {
  if (job.input === STDIO || typeof job.map === 'function') return false
  const { canSplit } = await import('./parallel.ts')
  return (await canSplit(job, threads, minBytes)) !== undefined
}

/**
 * The bytes a job reads: its file, or the part of it that holds its records; undefined when that
 * cannot be told before reading (standard input, a pipe, a file missing, which fails in its own job).
 */
async function bytesToRead(job: Pick<BatchJob, 'input' | 'recordBytes'>): Promise<number | undefined> {
  if (job.input === STDIO) return undefined
  if (job.recordBytes) return job.recordBytes.end - job.recordBytes.start
  try {
    const stats = await stat(job.input)
    return stats.isFile() ? stats.size : undefined
  } catch {
    return undefined
  }
}

/**
 * The order in which lanes take the jobs: the largest first, and one whose size cannot be told
 * before all, so that the last to start are the smallest and the lanes end close together: in
 * input order, six files of 25 MB and then one of 100 MB left one lane alone with the last (two
 * cores: 7.2 to 7.3 s, against 5.7 to 6.1 s largest first). Jobs of one size keep their input order.
 */
export async function startOrder(jobs: BatchJob[]): Promise<number[]> {
  return largestFirst(await Promise.all(jobs.map(async (job) => (await bytesToRead(job)) ?? Infinity)))
}

/**
 * Unless jobs are asked for, a batch takes one lane per 32 MiB it reads, at most one per free core
 * (see `freeCores`): each worker's code runs slowly while it warms, and its compiler and collector
 * then take the core the other lane needs. Two cores here, --jobs 2 against --jobs 1: 8 files of
 * 5 MB 0.86 times as fast, 8 of 10 MB 1.01 times under a load average of 10 (peak 190 MB against
 * 120) and 0.55 to 0.85 times in later runs under 9 to 13, 8 of 25 MB 1.15 times, 8 of 100 MB 1.35
 * to 1.73 times.
 */
const LANE_BYTES = 32 << 20

/**
 * A batch of several lanes converts in that many workers, each with its young generation capped,
 * while this thread hands out the files: a thread converting files keeps young generations of up
 * to 48 MB, which its streamed conversion does not need. Two cores, 8 CSV tables of 10 MB to JSON
 * Lines: a peak of 128 to 130 MB against 175 to 179 MB with this thread as one lane and an uncapped
 * worker as the other, in 2.27 to 2.32 s against 2.11 to 2.27 s; two tables of 100 MB, 130 against
 * 173 to 178 MB, in 3.31 to 3.62 s against 3.06 to 3.32 s. Capped at 12 MB, the peak was 136 to 138 MB.
 *
 * The old generation is capped under 2 GiB, about half of what a thread has here. Under 2 GiB, V8
 * lets the old generation grow to at most twice what it kept at its last full collection, not four
 * times: a streamed conversion's text and buffers outlive the small young generation, and each
 * file left a lane's heap larger until it held 35 MB where 12 MB were live. Two cores, in
 * alternating runs: 8 tables of 10 MB peaked at 119 to 124 MB against 128 to 131 MB, a table of
 * 100 MB and a DeepEval CSV of 100 MB at 121 to 126 MB against 151 to 156 MB, in the same time.
 * A conversion streams in far less. A YAML file that needs its whole-document parse needs about 70
 * times its size, and one of 25 MB or more outgrows a lane: it converts again in this thread.
 */
const LANE_LIMITS = { maxYoungGenerationSizeMb: 6, maxOldGenerationSizeMb: 2000 }

/** The lanes a batch of `bytes` in `files` files takes when `--jobs` is not given, on `cores` cores of which `free` are free (see `freeCores`). */
export function defaultLanes(bytes: number, files: number, cores: number, free = cores, laneBytes = LANE_BYTES): number {
  return Math.max(1, Math.min(cores, free, files, Math.floor(bytes / laneBytes)))
}

export interface BatchOptions {
  /**
   * Files converted at once: one in this thread, or each of several in a worker thread; by default
   * one per 32 MiB of input, at most one per core that other work leaves free.
   */
  jobs?: number
  /** One CSV or JSON Lines file at a time from this many bytes up converts in parts (default 128 MiB). */
  splitFromBytes?: number
  /** Unless `jobs` is given, a lane per this many bytes of input (default 32 MiB). */
  laneBytes?: number
  /** The old generation of a lane's heap, in MB (default 2000; see `LANE_LIMITS`): a file that outgrows it converts again in this thread. */
  laneHeapMb?: number
  onProgress?: (progress: BatchProgress) => void
  /** Hears each file's report as the file is written, so a failed batch still tells what it wrote. */
  onDone?: (index: number, report: ConversionReport) => void
  /** Hears each file that failed (the first failure, and any that ran beside it), with its error. */
  onFailed?: (index: number, error: unknown) => void
}

/**
 * Runs the jobs, `jobs` at a time. The first failure stops new jobs from starting; the ones
 * running finish (their outputs are complete conversions), and the failure is thrown.
 */
export async function runBatch(jobs: BatchJob[], options: BatchOptions = {}): Promise<ConversionReport[]> {
  // The lanes asked for, or those the batch's size could use; unasked, only those the free cores allow are kept (below).
  const bytes = options.jobs === undefined ? (await totalBytes(jobs)).bytes : 0
  const parallel = options.jobs === undefined ? defaultLanes(bytes, jobs.length, availableParallelism(), undefined, options.laneBytes) : Math.max(1, Math.min(options.jobs, jobs.length))
  const progress: BatchProgress = { filesDone: 0, records: 0, bytes: 0 }
  const reports: ConversionReport[] = new Array(jobs.length)
  let failure: unknown
  // One lane takes the files as given; several take the largest first.
  const order = parallel === 1 ? jobs.map((_, i) => i) : await startOrder(jobs)
  let next = 0

  const running = new Map<number, { records: number; bytes: number }>()
  const report = () => {
    let records = progress.records
    let bytes = progress.bytes
    for (const r of running.values()) {
      records += r.records
      bytes += r.bytes
    }
    options.onProgress?.({ filesDone: progress.filesDone, records, bytes })
  }

  /**
   * Takes jobs until none is left or one has failed, running each with `run`: this thread, or one
   * worker of several, so a batch of one lane never waits for a worker to start, nor pays for one
   * more worker warming its code than it has cores.
   */
  const lane = async (run: (job: BatchJob, onProgress: (records: number, bytes: number) => void) => Promise<ConversionReport>): Promise<void> => {
    while (next < jobs.length && failure === undefined) {
      const i = order[next++]!
      running.set(i, { records: 0, bytes: 0 })
      try {
        reports[i] = await run(jobs[i]!, (records, bytes) => {
          running.set(i, { records, bytes })
          report()
        })
        options.onDone?.(i, reports[i]!)
      } catch (error) {
        failure ??= error
        options.onFailed?.(i, error)
      }
      const done = running.get(i)!
      running.delete(i)
      progress.filesDone++
      progress.records += done.records
      progress.bytes += done.bytes
      report()
    }
  }

  if (parallel === 1) {
    // One file at a time: a large CSV or JSON Lines file converts in parts, on the threads asked for or the free cores.
    // Any other converts in this thread, whose heap a streamed conversion keeps small without a cap
    // (a CSV or JSON Lines file of 1 GB peaks at 120 to 130 MB, one to hf Parquet at 240 MB); in a
    // worker with a capped heap it took 8 to 11 % longer, for the same peak.
    const cores = availableParallelism()
    await lane((job, onProgress) =>
      inThisThread(onProgress, async (counters) => {
        // Only files large enough to repay starting the workers, each warming its own code, split.
        const most = partThreads(options.jobs, cores, cores)
        if (most > 1 && (await splittable(job, most, options.splitFromBytes ?? SPLIT_FROM_BYTES))) {
          if (options.jobs !== undefined) return convert({ ...job, progress: counters, threads: most })
          // Cores are looked at only for a file large enough to split, while the workers it may take
          // start: they load their code during the look, and those it does not take are ended. Like
          // `convert`, the batch loads parts' module only for a file that may be converted in parts.
          const { trimPartWorkers, warmPartWorkers } = await import('./parallel.ts')
          warmPartWorkers(most - 1)
          const threads = partThreads(undefined, cores, await freeCores())
          await trimPartWorkers(threads - 1)
          if (threads > 1) return convert({ ...job, progress: counters, threads })
        }
        return convert({ ...job, progress: counters, parseThread: options.jobs === undefined ? 'free' : options.jobs > 1 })
      }),
    )
  } else {
    // Each lane is a worker (see `LANE_LIMITS`); they start while the cores are looked at, and those
    // for which the look finds no core free are stopped before they take a file. Starting after the
    // look left both cores idle for its tenth of a second. A look that leaves one lane stops them
    // all: the files convert in this thread, as in a batch of one lane.
    const limits = options.laneHeapMb === undefined ? LANE_LIMITS : { ...LANE_LIMITS, maxOldGenerationSizeMb: options.laneHeapMb }
    const workers = Array.from({ length: parallel }, () => startWorker('batch-worker', limits))
    const inWorker = async (first: Worker): Promise<void> => {
      let worker = first
      try {
        await lane(async (job, onProgress) => {
          let reply: WorkerReply
          try {
            reply = await runInWorker(worker, job, onProgress)
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw error
            // The file outgrew the lane's heap: it converts again in this thread, whose heap is not
            // capped, once what the worker began of it is removed; the lane goes on in a new worker.
            await removeBegun(job)
            if (job.input === STDIO || (await isPipe(job.input))) {
              const heap = limits.maxOldGenerationSizeMb
              throw new EvalferryError('E_IO', `needed more than the ${heap} MB of memory a batch gives each file converted beside another, and a pipe's bytes cannot be read again: convert it with --jobs 1`, { file: job.input })
            }
            worker = startWorker('batch-worker', limits)
            return inThisThread(onProgress, (counters) => convert({ ...job, progress: counters }))
          }
          // The last progress message may be older than the file's end: the reply's counts are final.
          if (reply.bytes !== undefined) onProgress(reply.records ?? 0, reply.bytes)
          if (reply.type === 'error') throw revived(reply.error!)
          return reply.report!
        })
      } finally {
        await endWorker(worker)
      }
    }
    const lanes = options.jobs === undefined ? defaultLanes(bytes, jobs.length, availableParallelism(), await freeCores(), options.laneBytes) : parallel
    if (lanes > 1) {
      const [used, unused] = [workers.slice(0, lanes), workers.slice(lanes)]
      await Promise.all([...used.map(inWorker), ...unused.map((worker) => endWorker(worker))])
    } else {
      await Promise.all(workers.map((worker) => endWorker(worker)))
      await lane((job, onProgress) => inThisThread(onProgress, (counters) => convert({ ...job, progress: counters })))
    }
  }
  if (failure !== undefined) throw failure
  return reports
}

/** Removes the temporaries of the files `job` writes (its output, sidecar and rejects), as a worker that died left them. */
async function removeBegun(job: BatchJob): Promise<void> {
  const paths = [...(await filesWritten(job.output, job.to, job.outputContainer)).map((file) => file.path), job.rejects]
  await Promise.all(paths.filter((path): path is string => path !== undefined && path !== STDIO).map(removeOwnTemps))
}

/** Runs `conversion` in this thread, telling `onProgress` its counts every 100 ms and at its end. */
async function inThisThread(
  onProgress: (records: number, bytes: number) => void,
  conversion: (counters: { records: number; bytes: number }) => Promise<ConversionReport>,
): Promise<ConversionReport> {
  const counters = { records: 0, bytes: 0 }
  const tick = setInterval(() => onProgress(counters.records, counters.bytes), 100)
  try {
    return await conversion(counters)
  } finally {
    clearInterval(tick)
    onProgress(counters.records, counters.bytes)
  }
}

/** Total bytes the jobs (or inputs) read, of those whose size can be told; `known`: whether that is every one. */
export async function totalBytes(jobs: Pick<BatchJob, 'input' | 'recordBytes'>[]): Promise<{ bytes: number; known: boolean }> {
  let bytes = 0
  let known = true
  for (const job of jobs) {
    const size = await bytesToRead(job)
    if (size === undefined) known = false
    else bytes += size
  }
  return { bytes, known }
}
