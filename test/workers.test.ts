import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { ask } from '../src/workers.ts'

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
