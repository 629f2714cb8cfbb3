/** A worker thread that converts a range of a large file (see parallel.ts) into a temporary file. */
import { createWriteStream } from 'node:fs'
import { finished } from 'node:stream/promises'
import { parentPort } from 'node:worker_threads'
import { errorReply, onTasks } from './workers.ts'
import type { PartReply, PartRequest } from './parallel.ts'
import { convertPart, readFileHead } from './convert-part.ts'
import { StreamSink } from './io.ts'

const port = parentPort
if (!port) throw new Error('parallel-worker runs as a worker thread')

onTasks(port, async (request: PartRequest) => {
  try {
    // Each worker converts one range of a file: the head is read for it, as this thread reads it for the first.
    const head = await readFileHead(request.options)
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
    port.postMessage({ id: request.id, error: errorReply(error) } satisfies PartReply)
  }
})
