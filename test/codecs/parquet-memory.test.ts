// Alone in its file, so that its process's WebAssembly memory, which never shrinks, is its own.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readParquet, wasmMemory } from 'parquet-wasm'
import { tableFromIPC } from 'apache-arrow'
import { parquetWriter } from '../../src/codecs/parquet.ts'

test('the Parquet writer frees each batch: WebAssembly memory stays small however many rows go through it', async () => {
  const chunks: Uint8Array[] = []
  const sink = { write: async (chunk: string | Uint8Array) => void chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk) }
  const writer = parquetWriter(sink as Parameters<typeof parquetWriter>[0], { columns: ['id', 'input'] }, { batchRows: 1000 })
  const text = 'The customer asked about the refund policy for orders shipped abroad. '.repeat(28)
  const rows = 60_000
  for (let i = 0; i < rows; i++) await writer.write({ id: `case-${i}`, input: `${text}${i}` })
  await writer.end()
  // 60 batches of some 2 MB each went through; each one kept took its size for good.
  const megabytes = wasmMemory().buffer.byteLength / 1e6
  assert.ok(megabytes < 40, `WebAssembly memory grew to ${megabytes.toFixed(0)} MB`)
  const table = tableFromIPC(readParquet(Buffer.concat(chunks)).intoIPCStream())
  assert.equal(table.numRows, rows)
  assert.equal(table.getChild('input')?.get(rows - 1), `${text}${rows - 1}`)
})
