/**
 * One large CSV or JSON Lines file converted on several cores: the file is cut into as many byte
 * ranges of whole records as there are threads (a quote-aware newline scan finds the cuts in a CSV,
 * whose header row goes before every range after the first). This thread converts the first range
 * straight into the output while worker threads convert the others, each into a temporary file
 * beside it, appended in order once this thread is done. Whatever a range cannot settle alone (an
 * id used in two ranges, ranges before it that wrote another number of records than they read, a
 * group across ranges, any error) makes the file convert again in one thread, so the output is
 * always the one-thread output. The same byte scan counts the records of a file and finds where a
 * `--shard` of them lies (`locateRecords`).
 */
import { createReadStream } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import { getAdapter } from '../adapters/index.ts'
import { containerOf } from './codecs/index.ts'
import { namedDelimiter, sepDelimiter, sniffDelimiter } from './codecs/csv.ts'
import { IdSet, SEEN, StringTable, WRITTEN } from './ids.ts'
import { convertPart, readFileHead } from './convert-part.ts'
import { AtomicFile, isSpecialFile, removeShares, shareOf, startsAsGzip, STDIO } from './io.ts'
import { isRowMapper } from './mapping.ts'
import type { JsonObject } from './model.ts'
import { raceAbort } from './abort.ts'
import type { FileConvertOptions, RecordBytes } from './options.ts'
import type { FilePart, PartResult } from './parts.ts'
import { startSidecar } from './sidecar.ts'
import { addWarning, mergeReport, type ConversionReport } from './report.ts'
import { ask, endWorker, startWorker, type ErrorReply } from './workers.ts'

/** Files smaller than this convert in one thread: splitting would not pay for itself. */
export const SPLIT_MIN_BYTES = 8 << 20

/** The message a part worker is sent, and what it answers. */
export interface PartRequest {
  id: number
  options: FileConvertOptions & { from: string }
  part: FilePart
  index: number
  /** The file the part's output is written to. */
  into: string
}

export type PartReply =
  | { id: number; result: PartResult }
  | { id: number; error: ErrorReply }

/** Thrown inside to mean: convert this file again in one thread. */
class Serial extends Error {}

export type SplitContainer = 'csv' | 'jsonl'

/** Whether `options` may be converted in parts on `threads` threads: a CSV or JSON Lines file of `minBytes` or more to JSON Lines. */
export async function canSplit(options: FileConvertOptions, threads: number, minBytes = SPLIT_MIN_BYTES): Promise<SplitContainer | undefined> {
  if (threads < 2 || options.input === STDIO || options.recordRange || isRowMapper(options.map)) return undefined
  const input = options.inputContainer ?? containerOf(options.input)
  const output = options.outputContainer ?? (options.output === STDIO ? undefined : containerOf(options.output))
  if ((input !== 'csv' && input !== 'jsonl') || output !== 'jsonl') return undefined
  try {
    if ((await stat(options.input)).size < minBytes) return undefined
  } catch {
    return undefined
  }
  // A stream (standard output, a pipe) takes each part as it is settled: should a later part send the
  // file back to one thread (a bad record, an id in two parts), it could not be written again.
  if (options.output === STDIO || (await isSpecialFile(options.output))) return undefined
  return input
}

// ---------------------------------------------------------------------------------------------
// Workers, kept across conversions and released while idle so that they never hold the process open.

let pool: Worker[] = []
const idle: Worker[] = []
const waiting: ((worker: Worker) => void)[] = []
let nextId = 0

/** A new part worker, in the pool. */
function addWorker(): Worker {
  const worker = startWorker('parallel-worker')
  worker.unref()
  // A worker that dies (out of memory, say) leaves the pool and is never handed out again.
  const forget = () => {
    pool = pool.filter((w) => w !== worker)
    const at = idle.indexOf(worker)
    if (at !== -1) idle.splice(at, 1)
  }
  worker.on('error', forget)
  worker.on('exit', forget)
  pool.push(worker)
  return worker
}

/** The part workers alive now, busy or idle. */
export function partWorkers(): readonly Worker[] {
  return pool
}

/** Starts idle part workers until `count` are alive, so that they load their code while the caller decides how many it takes. */
export function warmPartWorkers(count: number): void {
  while (pool.length < count) {
    const worker = addWorker()
    idle.push(worker)
  }
}

/** Ends idle part workers beyond `count` alive: those started for threads that were not taken. */
export async function trimPartWorkers(count: number): Promise<void> {
  const ended: Promise<number>[] = []
  while (pool.length - ended.length > count && idle.length) ended.push(endWorker(idle.pop()!))
  await Promise.all(ended)
}

async function acquire(threads: number): Promise<Worker> {
  const free = idle.pop()
  if (free) return free
  if (pool.length < threads) return addWorker()
  return new Promise((resolve) => waiting.push(resolve))
}

function release(worker: Worker): void {
  const alive = pool.includes(worker)
  const next = waiting.shift()
  // Whoever waits gets a new worker in place of one that died.
  if (next) next(alive ? worker : addWorker())
  else if (alive) {
    worker.unref()
    idle.push(worker)
  }
}

/** A part's result, and the worker that converted it. */
interface Converted {
  result: Extract<PartReply, { result: unknown }>['result']
  worker: Worker
}

/** Converts a part on a worker, held in `held` while it converts. */
async function runPart(threads: number, request: Omit<PartRequest, 'id'>, held: Set<Worker>): Promise<Converted> {
  const worker = await acquire(threads)
  held.add(worker)
  worker.ref()
  const id = nextId++
  try {
    let reply: PartReply
    try {
      reply = await ask(worker, { ...request, id } satisfies PartRequest, (r: PartReply) => (r.id === id ? r : undefined))
    } catch (error) {
      // A worker that failed or exited: the file converts in one thread.
      throw new Serial(String(error))
    }
    if ('error' in reply) throw new Serial(reply.error.message)
    return { result: reply.result, worker }
  } finally {
    held.delete(worker)
    release(worker)
  }
}

// ---------------------------------------------------------------------------------------------
// Splitting

interface SplitPart {
  part: FilePart
  /** Source records before the part. */
  index: number
}

const LF = 0x0a
const CR = 0x0d
const QUOTE = 0x22

/**
 * Finds the row ends of a file's bytes, chunk by chunk, as the CSV or the JSON Lines reader
 * splits it: lines, records and the last row end of each chunk. Native searches for quotes and
 * newlines carry the scan, so it never looks at most bytes.
 */
class RowScanner {
  line = 1
  index = 0
  /** In the chunk last scanned: the offset after its last row end (-1: none), and the line and index after it. */
  boundary = -1
  boundaryLine = 0
  boundaryIndex = 0
  /** The header row's text, once a CSV's first row has ended. */
  header: string | undefined
  /** Called after each row end (a CSV header's too) with the index of the next record, its byte offset and line. */
  watch: ((index: number, offset: number, line: number) => void) | undefined
  private readonly head: Buffer[] = []
  private inQuotes = false
  /** A quote ended the last chunk inside a quoted cell: the next byte says whether it closed it. */
  private quotePending = false
  /** A CR outside quotes ended the last chunk: the next byte must be its LF. */
  crPending = false
  /** The bytes before the current row's start in the current chunk: its first byte is at rowStart. */
  private rowStart = 0
  private previous = -1
  /** JSON Lines: the current line holds more than space so far. */
  private hasText = false

  constructor(
    private readonly csv: boolean,
    readonly delimiter: number,
  ) {}

  /** Starts the scan at a row end found before: byte `offset`, on `line`, before record `index`. */
  resumeAt(at: Checkpoint, header: string | undefined): void {
    this.line = at.line
    this.index = at.index
    this.header = header
    this.rowStart = at.offset
    this.previous = LF
  }

  scan(bytes: Buffer, position: number): void {
    this.boundary = -1
    if (this.csv) this.scanCsv(bytes, position)
    else this.scanLines(bytes, position)
  }

  private rowEnd(bytes: Buffer, at: number, position: number, blank: boolean): void {
    if (this.csv && this.header === undefined) {
      if (blank) throw new Serial('a blank line before the CSV header')
      this.head.push(Buffer.from(bytes.subarray(0, at + 1)))
      this.header = Buffer.concat(this.head).toString('utf8')
    } else if (!blank) this.index++
    this.watch?.(this.index, position + at + 1, this.line)
    this.rowStart = position + at + 1
    this.boundary = at + 1
    this.boundaryLine = this.line
    this.boundaryIndex = this.index
  }

  /** Once the whole file of `size` bytes is scanned: whether a last record ends without a newline. */
  endsInRecord(size: number): boolean {
    return this.csv ? this.header !== undefined && this.rowStart < size : this.hasText
  }

  private scanCsv(bytes: Buffer, position: number): void {
    const n = bytes.length
    let k = 0
    if (this.quotePending) {
      this.quotePending = false
      if (bytes[0] === QUOTE) k = 1
      else this.inQuotes = false
    }
    if (this.crPending) {
      this.crPending = false
      if (bytes[0] !== LF) throw new Serial('a row that ends in a lone CR')
    }
    let cr = bytes.indexOf(CR)
    while (k < n) {
      if (this.inQuotes) {
        const close = bytes.indexOf(QUOTE, k)
        const stop = close === -1 ? n : close
        for (let nl = bytes.indexOf(LF, k); nl !== -1 && nl < stop; nl = bytes.indexOf(LF, nl + 1)) this.line++
        if (close === -1) break
        if (close + 1 === n) {
          this.quotePending = true
          break
        }
        if (bytes[close + 1] === QUOTE) k = close + 2
        else {
          this.inQuotes = false
          k = close + 1
        }
        continue
      }
      const quote = bytes.indexOf(QUOTE, k)
      const stop = quote === -1 ? n : quote
      // A lone CR ends a row too (see RowEnds in the CSV codec): rare enough to leave to one thread.
      if (cr !== -1 && cr < k) cr = bytes.indexOf(CR, k)
      for (; cr !== -1 && cr < stop; cr = bytes.indexOf(CR, cr + 1)) {
        if (cr + 1 === n) this.crPending = true
        else if (bytes[cr + 1] !== LF) throw new Serial('a row that ends in a lone CR')
      }
      for (let nl = bytes.indexOf(LF, k); nl !== -1 && nl < stop; nl = bytes.indexOf(LF, nl + 1)) {
        this.line++
        // A CRLF or a lone LF ends a row (see RowEnds in the CSV codec); a row of nothing else is blank.
        const length = position + nl + 1 - this.rowStart
        const blank = length === 1 || (length === 2 && (nl > 0 ? bytes[nl - 1]! : this.previous) === CR)
        this.rowEnd(bytes, nl, position, blank)
      }
      if (quote === -1) break
      // A quote opens a quoted cell only at the start of a cell.
      const at = position + quote
      const before = quote > 0 ? bytes[quote - 1]! : this.previous
      if (at === this.rowStart || before === this.delimiter) this.inQuotes = true
      k = quote + 1
    }
    if (this.header === undefined) this.head.push(Buffer.from(bytes))
    this.previous = n ? bytes[n - 1]! : this.previous
  }

  /** JSON Lines: every LF ends a line; a line of nothing but space is no record. */
  private scanLines(bytes: Buffer, position: number): void {
    const n = bytes.length
    // A byte-order mark is no text: the reader skips it.
    const bom = position === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
    for (let start = bom, nl = bytes.indexOf(LF, bom); ; nl = bytes.indexOf(LF, start)) {
      const end = nl === -1 ? n : nl
      if (!this.hasText) this.hasText = textBefore(bytes, start, end)
      if (nl === -1) break
      this.line++
      this.rowEnd(bytes, nl, position, !this.hasText)
      this.hasText = false
      start = nl + 1
    }
  }

}

/** Whether bytes[from, to) hold more than ASCII space; a non-ASCII first character means one thread must decide. */
function textBefore(bytes: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = bytes[i]!
    if (b === 0x20 || b === 0x09 || b === CR || b === 0x0b || b === 0x0c) continue
    if (b >= 0x80) throw new Serial('a line that may start with non-ASCII space')
    return true
  }
  return false
}

/**
 * The file's bytes scanned chunk by chunk: after each chunk, the scanner (its row ends so far,
 * the chunk's last one in `boundary`) and the file offset after the chunk. Where the scan cannot
 * be sure it reads as the file's reader does (a blank first row, a JSON Lines line starting with
 * non-ASCII space), it throws `Serial`.
 */
async function* scanFile(
  path: string,
  container: SplitContainer,
  watch?: RowScanner['watch'],
  resume?: { at: Checkpoint; like: RowScanner },
): AsyncGenerator<{ scanner: RowScanner; position: number; start: number }> {
  const csv = container === 'csv'
  const handle = await open(path, 'r')
  try {
    const buffer = Buffer.allocUnsafe(1 << 20)
    let position = resume?.at.offset ?? 0
    let scanner: RowScanner | undefined
    if (resume) {
      scanner = new RowScanner(csv, resume.like.delimiter)
      scanner.resumeAt(resume.at, resume.like.header)
      scanner.watch = watch
    }
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, position)
      if (bytesRead === 0) break
      const bytes = buffer.subarray(0, bytesRead)
      if (!scanner) {
        // Compressed, its records lie at no byte offsets of the file.
        if (startsAsGzip(bytes)) throw new Serial('a gzip-compressed file')
        // The delimiter the CSV reader takes from the first line.
        const nl = bytes.indexOf(LF)
        if (csv && nl === -1 && bytesRead === buffer.length) throw new Serial('a first line longer than a chunk')
        const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
        let first = bytes.toString('utf8', bom, nl === -1 ? bytesRead : nl)
        if (first.endsWith('\r')) first = first.slice(0, -1)
        // Excel's `sep=;` line before the header: the reader alone skips it.
        if (csv && sepDelimiter(first) !== undefined) throw new Serial('a sep= line before the header')
        const delimiter = namedDelimiter(path) ?? sniffDelimiter(first)
        scanner = new RowScanner(csv, delimiter.charCodeAt(0))
        scanner.watch = watch
      }
      scanner.scan(bytes, position)
      position += bytesRead
      yield { scanner, position, start: position - bytesRead }
    }
  } finally {
    await handle.close()
  }
}

/**
 * The file cut into `count` ranges of whole records, of about equal bytes, where a row ends at or
 * after each `size * k / count`; fewer where no row ends after a cut. This thread only scans the
 * bytes before the last cut (never decoding them): each range is read and decoded by the thread
 * that converts it. A range starts with its first record's line and index; a CSV range after the
 * first has the header row put before its text.
 */
export async function cutFile(path: string, container: SplitContainer, count: number): Promise<SplitPart[]> {
  const size = (await stat(path)).size
  const cuts = Array.from({ length: count - 1 }, (_, k) => Math.floor((size * (k + 1)) / count))
  const ends: Checkpoint[] = []
  const watch = (index: number, offset: number, line: number): void => {
    // The header row's end is no cut: the first range must hold a record.
    if (offset >= cuts[ends.length]! && offset < size && index > 0) ends.push({ offset, line, index })
  }
  let header: string | undefined
  for await (const { scanner } of scanFile(path, container, watch)) {
    header = scanner.header
    if (ends.length === cuts.length) break
  }
  const starts = [{ offset: 0, line: 1, index: 0 }, ...ends]
  return starts.map((start, k) => {
    const range = { start: start.offset, end: ends[k]?.offset ?? size }
    if (k === 0) return { part: { range }, index: 0 }
    const prefix = header !== undefined ? { prefix: header } : {}
    return { part: { range, continuation: { line: start.line, index: start.index }, ...prefix }, index: start.index }
  })
}

/** A row end met in a scan: its byte offset, the line after it, and the index of the record after it. */
interface Checkpoint {
  offset: number
  line: number
  index: number
}

/**
 * The record count of a CSV or JSON Lines file and where the records [from, to) that `pick`
 * chooses for that count lie in its bytes, found by a byte scan and no parsing; undefined where
 * only parsing can tell (see `scanFile`). The scan keeps the last row end of each chunk, so
 * finding a record afterwards rescans only from the chunk before it.
 */
export async function locateRecords(
  path: string,
  container: SplitContainer,
  pick: (total: number) => [number, number],
): Promise<{ total: number; range: [number, number]; bytes: RecordBytes } | undefined> {
  try {
    let last: RowScanner | undefined
    let size = 0
    const checkpoints: Checkpoint[] = []
    for await (const { scanner, position, start } of scanFile(path, container)) {
      last = scanner
      size = position
      if (scanner.boundary !== -1) checkpoints.push({ offset: start + scanner.boundary, line: scanner.boundaryLine, index: scanner.boundaryIndex })
    }
    // A file that ends in a lone CR ends its last row where only the reader can tell.
    if (last?.crPending) return undefined
    const total = last ? last.index + (last.endsInRecord(size) ? 1 : 0) : 0
    const [from, to] = pick(total)
    const bytes: RecordBytes = { start: 0, end: size, line: 1 }
    // A CSV part starts after the header row, which goes before it; JSON Lines records from the start.
    if (from > 0 || container === 'csv') {
      const found = await firstRowEnd(path, container, from, checkpoints, last!)
      // No row end starts record `from`: the range is empty, at the end of the file.
      Object.assign(bytes, found ? { start: found.offset, line: found.line } : { start: size, line: last?.line ?? 1 })
    }
    if (from === to) bytes.end = bytes.start
    else if (to < total) bytes.end = (await firstRowEnd(path, container, to, checkpoints, last!))!.offset
    if (bytes.start > 0 && last?.header !== undefined) bytes.prefix = last.header
    return { total, range: [from, to], bytes }
  } catch (error) {
    if (error instanceof Serial) return undefined
    throw error
  }
}

/**
 * The first row end after which record `index` comes (blank lines after it belong to the record),
 * scanning from the last checkpoint before it; undefined when none does.
 */
async function firstRowEnd(path: string, container: SplitContainer, index: number, checkpoints: Checkpoint[], like: RowScanner): Promise<Checkpoint | undefined> {
  let from: Checkpoint | undefined
  for (const c of checkpoints) {
    if (c.index >= index) break
    from = c
  }
  let found: Checkpoint | undefined
  const watch = (at: number, offset: number, line: number): void => {
    if (!found && at === index) found = { offset, line, index }
  }
  for await (const _ of scanFile(path, container, watch, from && { at: from, like })) if (found) break
  return found
}

// ---------------------------------------------------------------------------------------------
// Converting

/** Files this process converted in parts, and files it began in parts but converted in one thread. */
export const partStats = { inParts: 0, inOneThread: 0 }

/**
 * Converts `options` in parts on `threads` threads; undefined when the file needs converting in
 * one thread after all (the output is then left untouched).
 */
export async function convertInParts(
  options: FileConvertOptions & { from: string },
  container: SplitContainer,
  threads: number,
  report: ConversionReport,
): Promise<ConversionReport | undefined> {
  threads = Math.min(threads, availableParallelism())
  const target = await getAdapter(options.to)
  const source = await getAdapter(options.from)
  // Every id of a large file may be held here: numbered ones take a few bits each, the others once
  // in a table both sets share, where the source's ids and the target's must both be unique.
  const idTable = new StringTable()
  const seenIds = new IdSet(idTable, SEEN)
  const writtenIds = new Set<string>()
  const uniqueIds = new IdSet(idTable, WRITTEN)
  let written = 0
  let previousGroup: string | undefined
  let firstPending = true
  const needIds = target.requires?.includes('id') === true

  const settle = (result: PartResult, index: number, isFirst: boolean): void => {
    if (!isFirst && firstPending) throw new Serial('the file keys belong to a later part')
    firstPending = result.firstPending
    const wrote = result.report.records.written > 0
    if (previousGroup !== undefined && result.firstGroup === previousGroup) throw new Serial('a group across parts')
    // A part that wrote nothing (blank lines, skipped records) leaves the group before it open.
    if (wrote) previousGroup = result.lastGroup
    // A part numbers its records from its first source record, as generated ids and what a format
    // names by a record's place (DeepEval's arena-<n>) do; where the parts before wrote another
    // number of records (one skipped, one that held no case or several), only one thread numbers them.
    if (wrote && index !== written) throw new Serial('the records before this part wrote another number of records')
    if (result.generatedIds.some((id) => writtenIds.has(id))) throw new Serial('a generated id depends on the parts before')
    if (source.uniqueIds) {
      for (const id of result.seenIds) if (!seenIds.add(id)) throw new Serial('an id used in two parts')
    }
    // A part makes an id it repeats unique, but only the whole file sees an id repeated across parts.
    for (const id of result.uniqueIds) if (!uniqueIds.add(id)) throw new Serial('an id written in two parts')
    // Only written ids can be generated again later (an id generated for a record never is).
    if (needIds) for (const id of result.writtenIds) writtenIds.add(id)
    mergeReport(report, result.report)
    written += result.report.records.written
  }

  let parts: SplitPart[]
  try {
    parts = await cutFile(options.input, container, threads)
    if (parts.length < 2) throw new Serial('no row ends after the middle of the file')
  } catch (error) {
    if (!(error instanceof Serial)) throw error
    partStats.inOneThread++
    return undefined
  }
  const file = await AtomicFile.create(options.output)
  const rejects = options.rejects ? await AtomicFile.create(options.rejects).catch(async (error: unknown) => {
    await file.abort()
    throw error
  }) : undefined
  // Each range after the first is written by its worker to a temporary file beside the output.
  const shares = parts.slice(1).map((_, k) => shareOf(options.output, k + 1))
  const held = new Set<Worker>()
  const running = parts.slice(1).map(({ part, index }, k) => {
    const converted = runPart(threads, { options: serializable(options), part, index, into: shares[k]! }, held)
    // A part may fail before its turn comes; its failure is handled when its turn comes.
    converted.catch(() => {})
    return converted
  })
  let sidecarFile: AtomicFile | undefined
  try {
    const first = await convertFirstRange(options, parts[0]!.part, file, report)
    settle(first.result, 0, true)
    for (const r of first.result.rejects) await rejects?.sink.write(r + '\n')
    for (let k = 0; k < running.length; k++) {
      const { result } = await raceAbort(running[k]!, options.signal)
      settle(result, parts[k + 1]!.index, false)
      if (options.progress) {
        options.progress.records += result.report.records.read + result.report.records.skipped
        options.progress.bytes = parts[k + 1]!.part.range!.end
      }
      for await (const chunk of createReadStream(shares[k]!)) await file.sink.write(chunk as Buffer)
      for (const r of result.rejects) await rejects?.sink.write(r + '\n')
    }
    options.signal?.throwIfAborted()
    const sidecarPath = options.output !== STDIO ? target.sidecar?.(options.output, 'jsonl') : undefined
    sidecarFile = await startSidecar(sidecarPath, first.sidecar, options.output, target, report)
    await file.commit()
    await sidecarFile?.commit()
    await rejects?.commit()
    partStats.inParts++
    return report
  } catch (error) {
    // Workers still converting are ended, so that none writes its temporary file after it is removed.
    await Promise.all([...held].map((worker) => endWorker(worker)))
    await file.abort()
    await sidecarFile?.abort()
    await rejects?.abort()
    if (error instanceof Serial) {
      partStats.inOneThread++
      return undefined
    }
    throw error
  } finally {
    await removeShares(shares)
  }
}

/** Converts the file's first range in this thread, straight into the output; any error but a stop makes the file convert in one thread. */
async function convertFirstRange(
  options: FileConvertOptions & { from: string },
  part: FilePart,
  file: AtomicFile,
  report: ConversionReport,
): Promise<{ result: PartResult; sidecar: JsonObject }> {
  try {
    const head = await readFileHead(options)
    for (const w of head.layoutWarnings) addWarning(report, w.message, w.location)
    const result = await convertPart(serializable(options), head, part, 0, file.sink, { progress: options.progress, signal: options.signal })
    return { result, sidecar: head.sidecar }
  } catch (error) {
    options.signal?.throwIfAborted()
    if (error instanceof Serial) throw error
    throw new Serial(String(error))
  }
}

/** The options a worker can be sent: plain data only. */
function serializable(options: FileConvertOptions & { from: string }): FileConvertOptions & { from: string } {
  const { progress: _progress, rejects: _rejects, signal: _signal, ...rest } = options
  return rest as FileConvertOptions & { from: string }
}
