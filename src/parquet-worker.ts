/**
 * A worker thread that decodes a Parquet file's record batches ahead of the thread converting them
 * (see `readParquet` in codecs/parquet.ts): it reads the pieces it is sent and posts each batch as
 * an Arrow IPC stream, its buffer handed over, never more than the batches it has been granted.
 */
import { openAsBlob } from 'node:fs'
import { createRequire } from 'node:module'
import { parentPort } from 'node:worker_threads'
import type * as ParquetWasm from 'parquet-wasm'
import type { RecordBatch as WasmRecordBatch } from 'parquet-wasm'
import type { AheadMessage, AheadReply } from './codecs/parquet.ts'

const port = parentPort
if (!port) throw new Error('parquet-worker runs as a worker thread')

const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof ParquetWasm

let granted = 0
let onGrant: (() => void) | undefined

port.on('message', (message: AheadMessage) => {
  if ('grant' in message) {
    granted += message.grant
    onGrant?.()
    onGrant = undefined
    return
  }
  granted += message.grant0
  read(message).then(
    () => port.postMessage({ done: true } satisfies AheadReply),
    (error: unknown) => port.postMessage({ error: error instanceof Error ? { name: error.name, message: error.message } : { name: 'Error', message: String(error) } } satisfies AheadReply),
  )
})

async function read({ path, pieces, batchSize }: Extract<AheadMessage, { path: string }>): Promise<void> {
  const parquet = await wasm.ParquetFile.fromFile(await openAsBlob(path))
  for (const [piece, { rowGroups, offset, limit }] of pieces.entries()) {
    const stream = (await parquet.stream({ batchSize, rowGroups, ...(limit === undefined ? {} : { offset, limit }) })) as ReadableStream<WasmRecordBatch>
    const reader = stream.getReader()
    for (;;) {
      while (granted <= 0) await new Promise<void>((resolve) => (onGrant = resolve))
      const next = await reader.read()
      if (next.done) break
      const ipc = next.value.intoIPCStream()
      granted--
      port!.postMessage({ piece, ipc } satisfies AheadReply, [ipc.buffer as ArrayBuffer])
    }
  }
  parquet.free()
}
