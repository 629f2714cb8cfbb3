/** A worker thread that converts parts of large files (see parallel.ts), reading each file's head once. */
import { parentPort } from 'node:worker_threads'
import { EvalferryError } from './errors.ts'
import type { PartReply, PartRequest } from './parallel.ts'
import { convertPart, readFileHead, type FileHead } from './pipeline.ts'

const port = parentPort
if (!port) throw new Error('parallel-worker runs as a worker thread')

// The file being converted: the parts of one file come in a row.
let current: { fileKey: string; head: Promise<FileHead> } | undefined

port.on('message', async (request: PartRequest) => {
  try {
    if (current?.fileKey !== request.fileKey) current = { fileKey: request.fileKey, head: readFileHead(request.options) }
    const head = await current.head
    const result = await convertPart(request.options, head, request.part, request.index)
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
