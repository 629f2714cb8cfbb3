/**
 * One large CSV or JSON Lines file converted on several cores: this thread splits the text into
 * parts of whole records (a quote-aware newline scan for CSV, whose header row goes before every
 * part), worker threads convert the parts as the whole-file conversion would, and this thread
 * writes their JSON Lines text in order. A few parts are in flight at a time, so memory stays
 * bounded. Whatever a part cannot settle alone (an id used in two parts, an id generated while an
 * earlier part wrote fewer records than assumed, a group across parts, any error) makes the file
 * convert again in one thread, so the output is always the one-thread output.
 */
import { stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { getAdapter } from '../adapters/index.ts'
import type { Container } from '../adapters/types.ts'
import { extname } from 'node:path'
import { containerOf } from './codecs/index.ts'
import { sniffDelimiter } from './codecs/csv.ts'
import type { ErrorCode, Location } from './errors.ts'
import { AtomicFile, STDIO, textSource } from './io.ts'
import { isRowMapper } from './mapping.ts'
import type { ConvertOptions, FilePart, PartResult } from './pipeline.ts'
import { mergeReport, type ConversionReport } from './report.ts'
import { stringify as stringifyYaml } from 'yaml'

/** Files smaller than this convert in one thread: splitting would not pay for itself. */
export const SPLIT_MIN_BYTES = 8 << 20
/** Characters of text per part. */
const PART_CHARS = 4 << 20

/** The message a part worker is sent, and what it answers. */
export interface PartRequest {
  id: number
  /** Names the file being converted, so a worker reads its head once per file. */
  fileKey: string
  options: ConvertOptions & { from: string }
  part: FilePart
  index: number
}

export type PartReply =
  | { id: number; result: PartResult & { layoutWarnings?: ConversionReport['warnings']; sidecar?: Record<string, unknown> } }
  | { id: number; error: { code?: ErrorCode; message: string; location?: Location } }

/** Thrown inside to mean: convert this file again in one thread. */
class Serial extends Error {}

/** Whether `options` may be converted in parts on `threads` threads. */
export async function canSplit(options: ConvertOptions, from: string, threads: number): Promise<'csv' | 'jsonl' | undefined> {
  if (threads < 2 || options.input === STDIO || options.recordRange || isRowMapper(options.map)) return undefined
  const input = options.inputContainer ?? containerOf(options.input)
  const output = options.outputContainer ?? (options.output === STDIO ? undefined : containerOf(options.output))
  if ((input !== 'csv' && input !== 'jsonl') || output !== 'jsonl') return undefined
  const source = await getAdapter(from)
  if (source.include) return undefined
  try {
    if ((await stat(options.input)).size < SPLIT_MIN_BYTES) return undefined
  } catch {
    return undefined
  }
  return input
}

// ---------------------------------------------------------------------------------------------
// Workers, kept across conversions and released while idle so that they never hold the process open.

let pool: Worker[] = []
const idle: Worker[] = []
const waiting: ((worker: Worker) => void)[] = []
let nextId = 0

function startWorker(): Worker {
  const worker = import.meta.url.endsWith('.ts')
    ? // Running from the TypeScript sources (tests, development): the worker registers tsx itself.
      new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./parallel-worker.ts', import.meta.url).href)}) })`,
        { eval: true },
      )
    : new Worker(new URL('./parallel-worker.js', import.meta.url))
  worker.unref()
  worker.on('error', () => {
    pool = pool.filter((w) => w !== worker)
  })
  return worker
}

async function acquire(threads: number): Promise<Worker> {
  const free = idle.pop()
  if (free) return free
  if (pool.length < threads) {
    const worker = startWorker()
    pool.push(worker)
    return worker
  }
  return new Promise((resolve) => waiting.push(resolve))
}

function release(worker: Worker): void {
  const next = waiting.shift()
  if (next) next(worker)
  else {
    worker.unref()
    idle.push(worker)
  }
}

async function runPart(threads: number, request: Omit<PartRequest, 'id'>): Promise<Extract<PartReply, { result: unknown }>['result']> {
  const worker = await acquire(threads)
  worker.ref()
  const id = nextId++
  try {
    return await new Promise((resolve, reject) => {
      const onMessage = (reply: PartReply) => {
        if (reply.id !== id) return
        worker.off('message', onMessage)
        if ('error' in reply) reject(new Serial(reply.error.message))
        else resolve(reply.result)
      }
      worker.on('message', onMessage)
      worker.once('error', (error) => reject(new Serial(String(error))))
      worker.postMessage({ ...request, id } satisfies PartRequest)
    })
  } finally {
    release(worker)
  }
}

// ---------------------------------------------------------------------------------------------
// Splitting

interface TextPart {
  part: FilePart
  /** Source records before the part. */
  index: number
}

/**
 * The file's text in parts of whole records, each with the line and index its first record has.
 * A CSV part after the first starts with the header row. Undefined where the file is not one
 * this split reads exactly as papaparse does (a header ending in CRLF), which then converts whole.
 */
async function* splitText(path: string, container: 'csv' | 'jsonl', progress?: { bytes: number }): AsyncGenerator<TextPart> {
  const csv = container === 'csv'
  const tsv = extname(path).toLowerCase() === '.tsv'
  let text = ''
  let scanned = 0
  let header: string | undefined
  let line = 1
  let index = 0
  let inQuotes = false
  // Where the part being gathered starts in the file: its first record's line and index.
  let partLine = 1
  let partIndex = 0
  let first = true
  let lastBoundary = 0
  let boundaryLine = 1
  let boundaryIndex = 0
  let lineStart = 0

  const emit = (end: number): TextPart => {
    const body = text.slice(0, end)
    text = text.slice(end)
    scanned -= end
    lastBoundary -= end
    lineStart -= end
    const part: TextPart = first
      ? { part: { text: body }, index: 0 }
      : { part: { text: csv ? header! + body : body, continuation: { line: partLine, index: partIndex } }, index: partIndex }
    first = false
    partLine = boundaryLine
    partIndex = boundaryIndex
    return part
  }

  let delimiter: number | undefined
  const scan = (final: boolean): void => {
    // The last character waits for the next piece: a quote inside quotes needs the one after it.
    const end = final ? text.length : text.length - 1
    if (!csv) {
      for (let nl = text.indexOf('\n', scanned); nl !== -1 && nl < end; nl = text.indexOf('\n', nl + 1)) {
        line++
        if (!isBlank(text, lineStart, nl)) index++
        lineStart = lastBoundary = nl + 1
        boundaryLine = line
        boundaryIndex = index
      }
      scanned = Math.max(scanned, end)
      return
    }
    if (delimiter === undefined) {
      const nl = text.indexOf('\n')
      if (nl === -1 && !final) return
      // The delimiter the CSV reader will use: named by the extension, else sniffed from the first line.
      delimiter = (tsv ? '\t' : sniffDelimiter(nl === -1 ? text : text.slice(0, nl))).charCodeAt(0)
    }
    let i = scanned
    let nextQuote = -1
    while (i < end) {
      if (inQuotes) {
        // Inside a quoted cell only its closing quote matters; its newlines are lines, not rows.
        let close = text.indexOf('"', i)
        while (close !== -1 && close < end && text.charCodeAt(close + 1) === 0x22) close = text.indexOf('"', close + 2)
        const stop = close === -1 || close >= end ? end : close
        for (let nl = text.indexOf('\n', i); nl !== -1 && nl < stop; nl = text.indexOf('\n', nl + 1)) line++
        if (stop === end) {
          i = end
          break
        }
        inQuotes = false
        i = close + 1
        continue
      }
      const nl = text.indexOf('\n', i)
      // The next quote is looked for again only once it is passed: rows without quotes stay one search.
      let quote = nextQuote >= i ? nextQuote : text.indexOf('"', i)
      // A quote opens a quoted cell only at the start of a cell.
      while (quote !== -1 && quote < end && (nl === -1 || quote < nl) && !(quote === lineStart || text.charCodeAt(quote - 1) === delimiter)) {
        quote = text.indexOf('"', quote + 1)
      }
      nextQuote = quote === -1 ? Infinity : quote
      if (quote !== -1 && quote < end && (nl === -1 || quote < nl)) {
        inQuotes = true
        i = quote + 1
        continue
      }
      if (nl === -1 || nl >= end) {
        i = end
        break
      }
      line++
      const blank = nl === lineStart
      if (header === undefined) {
        if (blank || text.charCodeAt(nl - 1) === 0x0d) throw new Serial('a CSV header this split does not read')
        header = text.slice(0, nl + 1)
      } else if (!blank) index++
      lineStart = lastBoundary = nl + 1
      boundaryLine = line
      boundaryIndex = index
      i = nl + 1
    }
    scanned = end
  }

  for await (const piece of textSource(path, progress)) {
    text += typeof piece === 'string' ? piece : piece.toString('utf8')
    scan(false)
    if (lastBoundary >= PART_CHARS) yield emit(lastBoundary)
  }
  scan(true)
  if (text !== '' || first) yield emit(text.length)
}

/** Whether text[from, to) is blank as JSON Lines reads it (`trim()` leaves nothing). */
function isBlank(text: string, from: number, to: number): boolean {
  if (from === to) return true
  const c = text.charCodeAt(from)
  // Most lines start with a bracket, a quote or a digit: no need to look further.
  if (c === 0x7b || c === 0x5b || c === 0x22 || (c >= 0x30 && c <= 0x39)) return false
  return text.slice(from, to).trim() === ''
}

// ---------------------------------------------------------------------------------------------
// Converting

let files = 0

/**
 * Converts `options` in parts on `threads` threads; undefined when the file needs converting in
 * one thread after all (the output is then left untouched).
 */
export async function convertInParts(
  options: ConvertOptions & { from: string },
  container: 'csv' | 'jsonl',
  threads: number,
  report: ConversionReport,
): Promise<ConversionReport | undefined> {
  threads = Math.min(threads, availableParallelism())
  const target = await getAdapter(options.to)
  const file = await AtomicFile.create(options.output)
  const rejects = options.rejects ? await AtomicFile.create(options.rejects) : undefined
  const fileKey = `${process.pid}:${files++}:${options.input}`
  const inFlight: Promise<Awaited<ReturnType<typeof runPart>>>[] = []
  const seenIds = new Map<string, string>()
  const writtenIds = new Set<string>()
  let written = 0
  let previousGroup: string | undefined
  let firstPending = true
  let sidecar: Record<string, unknown> | undefined
  const needIds = target.requires?.includes('id') === true
  const source = await getAdapter(options.from)

  const settle = async (result: Awaited<ReturnType<typeof runPart>>, index: number, isFirst: boolean): Promise<void> => {
    if (!isFirst && firstPending) throw new Serial('the file keys belong to a later part')
    firstPending = result.firstPending
    if (previousGroup !== undefined && result.firstGroup === previousGroup) throw new Serial('a group across parts')
    previousGroup = result.lastGroup
    if (result.generatedIds.length && (index !== written || result.generatedIds.some((id) => writtenIds.has(id)))) {
      throw new Serial('a generated id depends on the parts before')
    }
    if (source.uniqueIds) {
      for (const [id, where] of result.seenIds) {
        if (seenIds.has(id)) throw new Serial('an id used in two parts')
        seenIds.set(id, where)
      }
    }
    if (needIds) for (const id of [...result.writtenIds, ...result.generatedIds]) writtenIds.add(id)
    if (isFirst) {
      for (const w of result.layoutWarnings ?? []) report.warnings.push(w)
      sidecar = result.sidecar
    }
    // Encoding located its warnings by the records the part assumed before it.
    const shift = written - index
    if (shift) {
      for (const w of [...result.report.warnings, ...result.report.errors]) {
        if (w.location.file === options.output && w.location.record !== undefined) w.location.record += shift
      }
    }
    mergeReport(report, result.report)
    written += result.report.records.written
    if (options.progress) options.progress.records += result.report.records.read + result.report.records.skipped
    await file.sink.write(result.text)
    if (rejects) for (const r of result.rejects) await rejects.sink.write(r + '\n')
  }

  const starts: number[] = []
  let settled = 0
  const settleNext = async (): Promise<void> => settle(await inFlight.shift()!, starts.shift()!, settled++ === 0)
  try {
    for await (const { part, index } of splitText(options.input, container, options.progress)) {
      starts.push(index)
      const running = runPart(threads, { fileKey, options: serializable(options), part, index })
      // A part may fail before its turn comes; its failure is handled when its turn comes.
      running.catch(() => {})
      inFlight.push(running)
      // A few parts at a time: each holds its text and its output.
      while (inFlight.length > threads) await settleNext()
    }
    while (inFlight.length) await settleNext()
    const header = sidecar ?? {}
    const sidecarPath = options.output !== STDIO ? target.sidecar?.(options.output, 'jsonl') : undefined
    let sidecarFile: AtomicFile | undefined
    if (sidecarPath && Object.keys(header).length) {
      sidecarFile = await AtomicFile.create(sidecarPath)
      await sidecarFile.sink.write(stringifyYaml(header, { lineWidth: 0 }))
    }
    await file.commit()
    await sidecarFile?.commit()
    await rejects?.commit()
    return report
  } catch (error) {
    // Parts still running finish unheard; their answers are dropped.
    await file.abort()
    await rejects?.abort()
    if (error instanceof Serial) return undefined
    throw error
  }
}

/** The options a worker can be sent: plain data only. */
function serializable(options: ConvertOptions & { from: string }): ConvertOptions & { from: string } {
  const { progress: _progress, rejects: _rejects, ...rest } = options
  return rest as ConvertOptions & { from: string }
}
