import { test } from 'node:test'
import assert from 'node:assert/strict'
import { BytesSink } from '../src/io.ts'

test('BytesSink grows past its expected size and keeps every byte, text and binary, in order', async () => {
  const sink = new BytesSink(10)
  const pieces: (string | Uint8Array)[] = []
  for (let i = 0; i < 2000; i++) {
    pieces.push(i % 3 === 0 ? Buffer.from(`bytes ${i};`) : `${i}: ü 東京 🎉 "${'x'.repeat(i % 97)}"\n`)
  }
  for (const piece of pieces) await sink.write(piece)
  const expected = Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)))
  const bytes = sink.bytes()
  assert.ok(bytes.byteLength > 64 * 1024, 'the output outgrew the first buffer')
  assert.ok(Buffer.from(bytes).equals(expected))
  // Its own memory, not a slice of Node's shared pool, so it can be transferred to another thread.
  assert.equal(bytes.byteOffset, 0)
  assert.ok(bytes.buffer.byteLength >= bytes.byteLength)
})
