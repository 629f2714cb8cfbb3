import { test } from 'node:test'
import assert from 'node:assert/strict'
import { getEventListeners } from 'node:events'
import { untilAborted } from '../src/abort.ts'

async function* numbers(n: number): AsyncGenerator<number> {
  for (let i = 0; i < n; i++) yield i
}

test('untilAborted gives every item in order with one listener on the signal, and takes it off at the end', async () => {
  const controller = new AbortController()
  const seen: number[] = []
  const listeners: number[] = []
  for await (const n of untilAborted(numbers(1000), controller.signal)) {
    seen.push(n)
    listeners.push(getEventListeners(controller.signal, 'abort').length)
  }
  assert.deepEqual(seen, Array.from({ length: 1000 }, (_, i) => i))
  assert.deepEqual(new Set(listeners), new Set([1]))
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
  // A plain iterable is taken too.
  const items: string[] = []
  for await (const s of untilAborted(['a', 'b'], controller.signal)) items.push(s)
  assert.deepEqual(items, ['a', 'b'])
})

test('untilAborted stops a wait for a source that never answers, with the signal\'s reason, and reads nothing once aborted', async () => {
  const controller = new AbortController()
  let closed = false
  const silent: AsyncIterable<number> = {
    [Symbol.asyncIterator]: () => ({
      next: () => new Promise<IteratorResult<number>>(() => {}),
      return: async () => {
        closed = true
        return { done: true, value: undefined }
      },
    }),
  }
  const reason = new Error('stopped by the user')
  setTimeout(() => controller.abort(reason), 10)
  await assert.rejects(
    (async () => {
      for await (const _ of untilAborted(silent, controller.signal)) assert.fail('the source sent nothing')
    })(),
    (error) => error === reason,
  )
  assert.equal(closed, true)
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0)
  // Aborted between items: the next step throws, and an aborted signal reads nothing at all.
  const between = new AbortController()
  const read: number[] = []
  await assert.rejects(
    (async () => {
      for await (const n of untilAborted(numbers(10), between.signal)) {
        read.push(n)
        if (n === 2) between.abort()
      }
    })(),
    { name: 'AbortError' },
  )
  assert.deepEqual(read, [0, 1, 2])
  let asked = false
  const watched: AsyncIterable<number> = { [Symbol.asyncIterator]: () => ((asked = true), numbers(3)[Symbol.asyncIterator]()) }
  await assert.rejects(untilAborted(watched, between.signal).next(), { name: 'AbortError' })
  assert.equal(asked, false)
})
