/** A worker thread that reads and parses a CSV file's text beside the thread that converts its records (see `stepsBeside` in codecs/csv.ts). */
import { parentPort } from 'node:worker_threads'
import { MESSAGES_AHEAD, parseBeside } from './codecs/csv.ts'
import { serveAhead } from './workers.ts'

if (!parentPort) throw new Error('csv-worker runs as a worker thread')
serveAhead(parentPort, MESSAGES_AHEAD, parseBeside)
