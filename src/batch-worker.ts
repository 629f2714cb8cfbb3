/** A worker thread of a batch: converts the files it is sent, one at a time, and reports back. */
import { parentPort } from 'node:worker_threads'
import { plainEnvironment } from './io.ts'
import { convert } from './convert.ts'
import type { FileConvertOptions } from './options.ts'
import { errorReply, onTasks } from './workers.ts'

const PROGRESS_EVERY_MS = 200
const port = parentPort
if (!port) throw new Error('batch-worker runs as a worker thread')

plainEnvironment()

onTasks(port, async (job: FileConvertOptions) => {
  const progress = { records: 0, bytes: 0 }
  const timer = setInterval(() => port.postMessage({ type: 'progress', ...progress }), PROGRESS_EVERY_MS)
  try {
    const report = await convert({ ...job, progress })
    port.postMessage({ type: 'done', report, ...progress })
  } catch (error) {
    port.postMessage({ type: 'error', error: errorReply(error) })
  } finally {
    clearInterval(timer)
  }
})
