/** Worker threads of the batch and of files converted in parts: starting one, and asking it for a reply. */
import { availableParallelism, cpus, loadavg, type CpuInfo } from 'node:os'
import { Worker, type ResourceLimits } from 'node:worker_threads'
import { DataError, EvalferryError, type ErrorCode, type Location } from './errors.ts'
import type { ConversionReport } from './report.ts'

/**
 * The cores no other work is using now: the idle share of every core over a short look (`lookMs`),
 * summed, with what this process's own threads ran meanwhile. The last minute's load average would still count work that ended up to a minute before
 * (a user's previous conversion, say), and leave idle a core that is free. On two cores under a
 * load average of 9 to 13, a batch of 8 files of 10 MB took 6.9 to 9.9 s on one lane and 8.9 to
 * 12.4 s on two, as each thread's warming and collecting then takes time the other threads need: a
 * core another process keeps busy is not counted free.
 */
export async function freeCores(lookMs = 100): Promise<number> {
  const { before, after, own } = await lookAtCores(lookMs)
  // A platform that tells no core times: the load average is all there is.
  return idleCores(before, after, availableParallelism(), own) ?? Math.max(0, Math.round(availableParallelism() - loadavg()[0]!))
}

/**
 * The cores' times at two looks `lookMs` apart, and how many cores' worth of time this process's
 * own threads ran between them: a batch starts its lanes during the look, which is no other work.
 */
export async function lookAtCores(lookMs: number): Promise<{ before: CpuInfo[]; after: CpuInfo[]; own: number }> {
  const before = cpus()
  const start = performance.now()
  const ours = process.cpuUsage()
  await new Promise((resolve) => setTimeout(resolve, lookMs))
  const used = process.cpuUsage(ours)
  return { before, after: cpus(), own: (used.user + used.system) / 1000 / Math.max(performance.now() - start, 1) }
}

/**
 * The cores, of at most `most`, that were idle between two looks at the cores' times, or busy
 * with this process's own work (`own`, in cores); undefined when the looks tell none.
 */
export function idleCores(before: readonly CpuInfo[], after: readonly CpuInfo[], most: number, own = 0): number | undefined {
  if (!before.length || before.length !== after.length) return undefined
  let idle = own
  for (let i = 0; i < after.length; i++) {
    const [was, is] = [before[i]!.times, after[i]!.times]
    const total = is.user + is.nice + is.sys + is.idle + is.irq - (was.user + was.nice + was.sys + was.idle + was.irq)
    if (total > 0) idle += (is.idle - was.idle) / total
  }
  return Math.min(most, Math.round(idle))
}

/**
 * A worker running the module `name` (`batch-worker`, `parallel-worker`) beside this one: its
 * compiled JavaScript, or, from the TypeScript sources (tests, development), the source with tsx
 * registered in the worker first.
 */
export function startWorker(name: string, resourceLimits?: ResourceLimits): Worker {
  const limits = resourceLimits ? { resourceLimits } : {}
  let worker: Worker
  if (!import.meta.url.endsWith('.ts')) worker = new Worker(new URL(`./${name}.js`, import.meta.url), limits)
  else {
    const url = new URL(`./${name}.ts`, import.meta.url).href
    worker = new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}) })`, { eval: true, ...limits })
  }
  running.add(worker)
  started++
  // Heard from the start, so that a worker that fails while it waits for work (out of memory as it
  // loads, say) is not an unhandled error: `ask` tells the fault to the next one to ask it.
  worker.on('error', (error) => {
    if (!stoppedBy.has(worker)) stoppedBy.set(worker, error)
  })
  worker.once('exit', (code) => {
    running.delete(worker)
    if (!stoppedBy.has(worker)) stoppedBy.set(worker, exitedEarly(code))
  })
  return worker
}

const running = new Set<Worker>()
/** Why each worker this thread started stopped: its fault, or its exit. */
const stoppedBy = new WeakMap<Worker, Error>()

/** A worker's exit, where a reply was still awaited. */
function exitedEarly(code: number): Error {
  return new Error(`a worker exited (code ${code}) before it answered`)
}
let started = 0

/** How many workers this thread has started, for tests that a conversion stayed on this thread. */
export function workersStarted(): number {
  return started
}

/** How many workers this thread started are still running. */
export function workersRunning(): number {
  return running.size
}

/** Ends every worker this thread started: an interrupted run stops them before removing what they began. */
export async function stopWorkers(graceMs?: number): Promise<void> {
  await Promise.all([...running].map((worker) => endWorker(worker, graceMs)))
}

/**
 * Ends `worker`, and resolves with its exit code: it is asked to exit (see `onTasks`), and ended
 * from here only if it has not within `graceMs`, busy in a long step. Node 20 aborts the whole
 * process when a thread ended from outside was making a file system call's promise at that moment,
 * as a worker does while it reads its file, or loads its code.
 */
export function endWorker(worker: Worker, graceMs = 1000): Promise<number> {
  if (!running.has(worker)) return worker.terminate()
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve))
  worker.postMessage(STOP)
  const late = setTimeout(() => void worker.terminate(), graceMs)
  return exited.finally(() => clearTimeout(late))
}

/** What `stopWorkers` posts to each worker. */
const STOP = 'evalferry:stop'

/**
 * Listens on a worker's `port` for its tasks, each handed to `handle`, and for `stopWorkers`'
 * request, on which the thread exits: from within, between two of its tasks, where no call into
 * Node is under way.
 */
export function onTasks<T>(port: { on(event: 'message', listener: (message: T) => void): void }, handle: (message: T) => void): void {
  port.on('message', (message) => {
    if ((message as unknown) === STOP) process.exit(0)
    handle(message)
  })
}

/**
 * Posts `message` to `worker` and resolves with the first reply that `answer` takes (returns other
 * than undefined for); rejects when the worker fails or exits first, or has stopped already.
 */
export function ask<R, T>(worker: Worker, message: unknown, answer: (reply: R) => T | undefined): Promise<T> {
  const stopped = stoppedBy.get(worker)
  if (stopped) return Promise.reject(stopped)
  return new Promise((resolve, reject) => {
    const settle = (): void => {
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
    }
    const onMessage = (reply: R): void => {
      const taken = answer(reply)
      if (taken === undefined) return
      settle()
      resolve(taken)
    }
    const onError = (error: Error): void => {
      settle()
      reject(error)
    }
    const onExit = (code: number): void => {
      settle()
      reject(exitedEarly(code))
    }
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.on('exit', onExit)
    worker.postMessage(message)
  })
}

/** A fault as a worker posts it: an evalferry error's class, code, place and report, or another's message. */
export interface ErrorReply {
  name: string
  code?: ErrorCode
  message: string
  location?: Location
  report?: ConversionReport
}

/** `error` as a worker posts it (see `revived`). */
export function errorReply(error: unknown): ErrorReply {
  if (!(error instanceof EvalferryError)) return { name: error instanceof Error ? error.name : 'Error', message: error instanceof Error ? error.message : String(error) }
  return { name: error.name, code: error.code, message: error.message, location: error.location, ...(error.report ? { report: error.report } : {}) }
}

/** The error a worker posted (see `errorReply`), made again in this thread. */
export function revived({ name, code, message, location, report }: ErrorReply): Error {
  if (!code) return new Error(message)
  const error = name === 'DataError' ? new DataError(code, message, location) : new EvalferryError(code, message, location)
  if (report) error.report = report
  return error
}

/** How long the cores are looked at before work is handed to a worker beside this thread, while it starts. */
const LOOK_MS = 50

/**
 * What a worker running `name` posts for `request`, reading ahead for this thread: in order, to the
 * one `last` tells ends them, each taken before the next is given. A fault it posts (see
 * `serveAhead`), or its stopping, is thrown in its turn. It posts `ahead` messages at most before
 * they are taken, and is given room back a quarter of them at a time: a message of its own for
 * each reply taken took a tenth of this thread's time. It is ended when the replies end, or their
 * reader stops. With `when` `free`, the cores are looked at while it starts (it would be waited for
 * anyway), and it is ended, and undefined given, when none is free: on a core another process keeps
 * busy, such a worker took more time than it gave.
 */
export async function repliesBeside<T extends object>(
  name: string,
  resourceLimits: ResourceLimits,
  when: true | 'free',
  request: unknown,
  ahead: number,
  last: (reply: T) => boolean,
): Promise<AsyncGenerator<T> | undefined> {
  const worker = startWorker(name, resourceLimits)
  // Heard from the start: a worker's message that comes while no one listens is lost.
  const replies: (T | { error: ErrorReply })[] = []
  let stopped: { error: unknown } | undefined
  let wake: (() => void) | undefined
  const tell = (): void => {
    const woken = wake
    wake = undefined
    woken?.()
  }
  const stop = (error: unknown): void => {
    stopped ??= { error }
    tell()
  }
  worker.on('message', (reply: T) => {
    replies.push(reply)
    tell()
  })
  worker.on('error', stop)
  worker.on('exit', (code) => stop(new Error(`a worker stopped (exit code ${code}) before it was done`)))
  worker.postMessage(request)
  if (when === 'free' && (await freeCores(LOOK_MS)) < 2) {
    await endWorker(worker)
    return undefined
  }
  return (async function* (): AsyncGenerator<T> {
    let took = 0
    try {
      for (;;) {
        while (!replies.length) {
          if (stopped) throw stopped.error
          await new Promise<void>((resolve) => (wake = resolve))
        }
        const reply = replies.shift()!
        if ('error' in reply) throw revived(reply.error)
        if (++took === Math.max(ahead >> 2, 1)) {
          worker.postMessage({ took })
          took = 0
        }
        yield reply
        if (last(reply)) return
      }
    } finally {
      await endWorker(worker)
    }
  })()
}

/**
 * The worker's side of `repliesBeside`: runs `work` for the request it is sent, which posts with
 * `post`, waiting while `ahead` of its messages are not yet taken; a fault it throws is posted.
 */
export function serveAhead<R>(
  port: { on(event: 'message', listener: (message: R | { took: number }) => void): void; postMessage(message: unknown, transfer?: ArrayBuffer[]): void },
  ahead: number,
  work: (request: R, post: (message: object, transfer?: ArrayBuffer[]) => Promise<void>) => Promise<void>,
): void {
  let room = ahead
  let wake: (() => void) | undefined
  const post = async (message: object, transfer?: ArrayBuffer[]): Promise<void> => {
    while (room === 0) await new Promise<void>((resolve) => (wake = resolve))
    room--
    port.postMessage(message, transfer)
  }
  onTasks(port, (message) => {
    if (typeof message === 'object' && message !== null && 'took' in message) {
      room += message.took
      const woken = wake
      wake = undefined
      woken?.()
      return
    }
    work(message as R, post).catch((error: unknown) => port.postMessage({ error: errorReply(error) }))
  })
}
