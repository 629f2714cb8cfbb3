/** A worker thread that converts parts of large files (see parallel.ts), reading each file's head once. */
import { parentPort } from 'node:worker_threads'
import { EvalferryError } from './errors.ts'
import type { PartMessage, PartReply } from './parallel.ts'
import { convertPart, readFileHead, type FileHead } from './convert.ts'

const port = parentPort
if (!port) throw new Error('parallel-worker runs as a worker thread')

// The file being converted: the parts of one file come in a row.
let current: { fileKey: string; head: Promise<FileHead> } | undefined
/**
 * Output buffers the main thread has written out and given back (see `giveBack` in parallel.ts):
 * no more than the parts that can be in flight at once.
 */
const spares: ArrayBuffer[] = []
const MAX_SPARES = 4

port.on('message', async (message: PartMessage) => {
  if ('spare' in message) {
    if (spares.length < MAX_SPARES) spares.push(message.spare)
    return
  }
  const request = message
  try {
    if (current?.fileKey !== request.fileKey) current = { fileKey: request.fileKey, head: readFileHead(request.options) }
    const head = await current.head
    const result = await convertPart(request.options, head, request.part, request.index, spares.pop())
    const first = request.part.continuation === undefined
    const reply: PartReply = { id: request.id, result: first ? { ...result, layoutWarnings: head.layoutWarnings, sidecar: head.sidecar } : result }
    port.postMessage(reply, [result.bytes.buffer as ArrayBuffer])
  } catch (error) {
    const known = error instanceof EvalferryError
    port.postMessage({
      id: request.id,
      error: { ...(known ? { code: error.code, location: error.location } : {}), message: error instanceof Error ? error.message : String(error) },
    } satisfies PartReply)
  }
})
