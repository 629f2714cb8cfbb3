/** A worker thread that converts parts of large files (see parallel.ts), reading each file's head once. */
import { createWriteStream } from 'node:fs'
import { finished } from 'node:stream/promises'
import { parentPort } from 'node:worker_threads'
import { EvalferryError } from './errors.ts'
import type { PartReply, PartRequest } from './parallel.ts'
import { convertPart, readFileHead, type FileHead } from './convert-part.ts'
import { StreamSink } from './io.ts'

const port = parentPort
if (!port) throw new Error('parallel-worker runs as a worker thread')

// The file being converted: the parts of one file come in a row.
let current: { fileKey: string; head: Promise<FileHead> } | undefined

port.on('message', async (request: PartRequest) => {
  try {
    if (current?.fileKey !== request.fileKey) current = { fileKey: request.fileKey, head: readFileHead(request.options) }
    const head = await current.head
    const stream = createWriteStream(request.into)
    try {
      const sink = new StreamSink(stream)
      const result = await convertPart(request.options, head, request.part, request.index, sink)
      await sink.flush()
      stream.end()
      await finished(stream)
      port.postMessage({ id: request.id, result } satisfies PartReply)
    } finally {
      stream.destroy()
    }
  } catch (error) {
    const known = error instanceof EvalferryError
    port.postMessage({
      id: request.id,
      error: { ...(known ? { code: error.code, location: error.location } : {}), message: error instanceof Error ? error.message : String(error) },
    } satisfies PartReply)
  }
})
