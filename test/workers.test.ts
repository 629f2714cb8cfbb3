import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { availableParallelism, type CpuInfo } from 'node:os'
import { ask, idleCores, lookAtCores, startWorker, stopWorkers, workersRunning } from '../src/workers.ts'

/** A worker from source text that answers each message as `body` says (`port` and `message` in scope). */
function worker(body: string): Worker {
  return new Worker(`const { parentPort: port } = require('node:worker_threads'); port.on('message', (message) => { ${body} })`, { eval: true })
}

test('ask resolves with the first reply its answer takes, passing the others by', async () => {
  const w = worker(`port.postMessage({ n: 1 }); port.postMessage({ n: message * 2 })`)
  try {
    const seen: number[] = []
    const n = await ask(w, 21, (reply: { n: number }) => {
      seen.push(reply.n)
      return reply.n > 1 ? reply.n : undefined
    })
    assert.equal(n, 42)
    assert.deepEqual(seen, [1, 42])
  } finally {
    await w.terminate()
  }
})

test('ask rejects when the worker fails, and when it exits without answering', async () => {
  await assert.rejects(ask(worker(`throw new Error('broken ' + message)`), 'part', () => 1), /broken part/)
  // A worker that exits leaves nothing to wait for: the caller hears it at once.
  await assert.rejects(ask(worker(`process.exit(3)`), 'part', () => 1), /exited \(code 3\) before it answered/)
})

test('a worker that fails while nothing is asked of it is no unhandled error: the next ask rejects with its fault at once', async () => {
  // Out of memory as it loads its code, before anyone asks it anything.
  const dying = startWorker('batch-worker', { maxOldGenerationSizeMb: 2, maxYoungGenerationSizeMb: 1 })
  await new Promise((resolve) => dying.once('exit', resolve))
  await assert.rejects(ask(dying, {}, () => 1), { code: 'ERR_WORKER_OUT_OF_MEMORY' })
  const ended = startWorker('batch-worker')
  await ended.terminate()
  await assert.rejects(ask(ended, {}, () => 1), /exited \(code \d+\) before it answered/)
})

test('stopped, a worker exits itself between two tasks, and one that does not within the grace is ended from here', async () => {
  const exitCode = (worker: ReturnType<typeof startWorker>) => new Promise<number>((resolve) => worker.once('exit', resolve))
  // Asked while it waits for work, the worker exits on its own (0), where one ended from outside exits with 1.
  const idle = startWorker('batch-worker')
  await new Promise((resolve) => idle.once('online', resolve))
  const [code] = await Promise.all([exitCode(idle), stopWorkers()])
  assert.equal(code, 0)
  // Still loading its code when the grace of 1 ms runs out, the worker is ended from here.
  const loading = startWorker('batch-worker')
  await new Promise((resolve) => loading.once('online', resolve))
  const [ended] = await Promise.all([exitCode(loading), stopWorkers(1)])
  assert.equal(ended, 1)
  assert.equal(workersRunning(), 0)
})

test('the cores counted free are the idle shares of the cores between two looks, not a busy core, and none where the looks tell nothing', () => {
  const core = (idle: number, busy: number): CpuInfo => ({ model: 'x', speed: 1, times: { user: busy, nice: 0, sys: 0, idle, irq: 0 } })
  const before = [core(1000, 1000), core(1000, 1000)]
  // One core idle all the look, the other busy all of it: one core is free.
  assert.equal(idleCores(before, [core(1100, 1000), core(1000, 1100)], 2), 1)
  // Both idle for most of the look: both.
  assert.equal(idleCores(before, [core(1090, 1010), core(1080, 1020)], 2), 2)
  // Both a third idle: 0.67 of a core rounds to one.
  assert.equal(idleCores(before, [core(1030, 1060), core(1040, 1080)], 2), 1)
  // Never more than the cores this process may use.
  assert.equal(idleCores(before, [core(1100, 1000), core(1100, 1000)], 1), 1)
  assert.equal(idleCores([], [], 2), undefined)
  assert.equal(idleCores(before, [core(1100, 1000)], 2), undefined)
  // Both busy, one of them with this process's own work (a batch's first lane): that core is free to it.
  assert.equal(idleCores(before, [core(1000, 1100), core(1000, 1100)], 2, 1), 1)
  assert.equal(idleCores(before, [core(1000, 1100), core(1000, 1100)], 2, 0.2), 0)
  // This process's two threads busy on both: both are.
  assert.equal(idleCores(before, [core(1000, 1100), core(1000, 1100)], 2, 1.9), 2)
})

test("a look at the cores counts the time this process's own threads ran during it", async () => {
  // A thread of this process spins through the look: its time is this process's, whatever else the machine runs.
  const spin = new Worker(`const end = Date.now() + 600; while (Date.now() < end);`, { eval: true })
  await new Promise((resolve) => spin.once('online', resolve))
  const { own } = await lookAtCores(200)
  await spin.terminate()
  assert.ok(own > 0 && own <= availableParallelism() + 0.5, `this process ran ${own} cores' worth during the look`)
})
