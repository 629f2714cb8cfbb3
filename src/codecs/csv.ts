/**
 * CSV read chunk by chunk: each parse takes the rows that are complete and hands back the
 * unfinished last one, so quoted newlines across chunks are kept whole. Every cell is text; the
 * header row names the columns. Rows end where pandas (DeepEval's CSV reader) and Python's csv
 * module end them: at a CRLF, a lone LF or a lone CR outside quoted cells, in any mix. The rows are
 * those papaparse's core parser gave, which a test compares on texts of every shape; parsed here,
 * they took a third less time (100 MB of a CSV table: 0.18 s against 0.29 s).
 */
import { stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { extname } from 'node:path'
import { DataError, LayoutError } from '../errors.ts'
import { fileText, withoutGzip, type FileText } from '../io.ts'
import type { JsonObject } from '../model.ts'
import { stringifyJson } from './json.ts'
import { countNewlines, LONE_SURROGATE, MAX_RECORD_CHARS, protoRefused, tooLong, type ByteSource, type ReadOptions, type RecordWriter, type Sink, type SourceRecord } from './types.ts'

const DELIMITERS = [',', ';', '\t', '|']

/** The delimiter a file's name fixes (a `.tsv` file's tab), or undefined: sniffed from its header. */
export function namedDelimiter(path: string): string | undefined {
  return extname(withoutGzip(path)).toLowerCase() === '.tsv' ? '\t' : undefined
}

/** The delimiter of a header line: the candidate that splits it most, outside quotes. */
export function sniffDelimiter(headerLine: string): string {
  let best = ','
  let bestCount = 0
  for (const d of DELIMITERS) {
    let count = 0
    let quoted = false
    for (const ch of headerLine) {
      if (ch === '"') quoted = !quoted
      else if (ch === d && !quoted) count++
    }
    if (count > bestCount) {
      best = d
      bestCount = count
    }
  }
  return best
}

export function readCsv(source: ByteSource, options: ReadOptions): AsyncGenerator<SourceRecord> {
  return csvRecords(stepsHere(source, options.delimiter), options)
}

/** `readCsv` of a file's text (or a range of it), which a worker thread reads and parses beside this one where that pays (see `stepsBeside`). */
export function readCsvBeside(text: FileText, options: ReadOptions): AsyncGenerator<SourceRecord> {
  return csvRecords(stepsBeside(text, options, options.parseThread === 'free' ? 'free' : true), options)
}

/** The records of a CSV's parses: the header names the columns, and each row after it is a record. */
async function* csvRecords(steps: AsyncIterable<CsvStep>, options: ReadOptions): AsyncGenerator<SourceRecord> {
  const { file } = options
  let columns: string[] | undefined
  /** Which columns the header leaves without a name, when some are. */
  let unnamed: boolean[] | undefined
  let sepLine = false
  let line = 1
  let index = 0

  // The records of one parse, as a list: a generator declared in here would be a new function for
  // each file read, its generator objects of a new shape, and the code taking them compiled again.
  function rows({ result, blank }: CsvParse): SourceRecord[] {
    const records: SourceRecord[] = []
    const { fault, lines } = result
    // Row `r` starts on line `first + lines[r]`.
    let first = line
    if (fault) {
      const what = fault.unclosed ? 'a quoted cell is never closed' : 'malformed quoting (a quote inside a quoted cell neither doubles nor closes it)'
      throw new DataError('E_PARSE', what, { file, line: first + lines[fault.row]! })
    }
    // The next parse starts after every newline of this one, cells' own included.
    line += lines[result.rows.length]!
    const data = result.rows
    for (let r = 0; r < data.length; r++) {
      const cells = data[r]!
      // A blank line (before the header, a byte-order mark alone is one too).
      if (cells.length === 1 && ((cells[0] === '' && blank?.includes(r)) || (!columns && cells[0] === '\ufeff'))) continue
      // Excel's `sep=;` line, which names the delimiter, comes before the header.
      if (sepLine) {
        sepLine = false
        continue
      }
      if (!columns) {
        const rowLine = first + lines[r]!
        columns = cells.map((c, i) => (i === 0 && c.charCodeAt(0) === 0xfeff ? c.slice(1) : c))
        // A column without a name (a spreadsheet's trailing `,,`, pandas' index) is named as pandas
        // names it, `Unnamed: <i>`; only its cells that hold text are kept, and the CSV writer
        // writes the name back as the empty one it was.
        if (columns.includes('')) {
          unnamed = columns.map((c) => c === '')
          columns = columns.map((c, i) => c || `Unnamed: ${i}`)
        }
        // Two columns of one name would collapse into one key of the record, losing a cell.
        if (columns.includes('__proto__')) {
          throw new DataError('E_FIELD', protoRefused('column'), { file, line: rowLine, field: '__proto__' })
        }
        const twice = columns.find((c, i) => columns!.indexOf(c) !== i)
        if (twice !== undefined) throw new DataError('E_PARSE', `the header names the column "${twice}" twice`, { file, line: rowLine, field: twice })
        if (options.columns) options.columns.splice(0, options.columns.length, ...columns)
        // A later part of the file: the header row was put before its text.
        if (options.continuation) {
          const shift = options.continuation.line - (first + lines[r + 1]!)
          first += shift
          line += shift
          index = options.continuation.index
        }
        continue
      }
      // Cells past the header's end are refused, but for empty ones (a spreadsheet's trailing `,,`).
      if (cells.length > columns.length && !emptyFrom(cells, columns.length)) {
        // The row is refused; the rows after it still read.
        const line = first + lines[r]!
        const error = new DataError('E_PARSE', `row has ${cells.length} cells but the header has ${columns.length} columns`, { file, line, field: `column ${columns.length + 1}` })
        records.push({ value: cells, line, index: index++, error })
        continue
      }
      const record: Record<string, string> = {}
      for (let i = 0; i < columns.length; i++) {
        const cell = cells[i] ?? ''
        if (cell !== '' || !unnamed?.[i]) record[columns[i]!] = cell
      }
      records.push({ value: record, index: index++, line: first + lines[r]! })
    }
    return records
  }

  for await (const step of steps) {
    if (step.sepLine) sepLine = true
    for (const parse of step.parses) for (const record of rows(parse)) yield record
    if (step.tooLong) throw new DataError('E_PARSE', tooLong('row'), { file, line })
    if (step.empty) break
  }
  if (!columns) throw new DataError('E_PARSE', 'the file is empty; expected a header row', { file, line: 1 })
}

/** The steps of parsing `source`'s text, in this thread. */
async function* stepsHere(source: ByteSource, delimiter: string | undefined): AsyncGenerator<CsvStep> {
  const parser = new CsvParser(delimiter)
  for await (const chunk of source) yield parser.push(chunk)
  yield parser.end()
}

/**
 * A message of the CSV worker: the steps of about 16 K characters of text, their cells' text as one
 * string (`text`, each cell ending at its `ends`), which this thread slices again, rather than as
 * a string each, which it would copy one by one; `bytes` read of the file so far, when counted.
 */
interface BesideStep {
  text: string
  ends: Int32Array
  parses: { widths: Int32Array; lines: number[]; fault?: ParsedRows['fault']; blank?: number[] }[]
  sepLine?: true
  tooLong?: true
  empty?: true
  last?: true
  bytes?: number
}

/** What the CSV worker is sent: the text to read and parse. */
export interface BesideRequest {
  text: FileText
  delimiter: string | undefined
  counted: boolean
}

/**
 * Text the CSV worker parses into one message: 16 K characters, and what its last parse took over
 * them, so that the message's text is made in the young generation of this thread's heap. Messages of
 * 1 MB went to its large-object space, which only a full collection empties: 100 MB of a CSV table
 * peaked at 250 to 290 MB that way, against 140 to 150 MB now.
 */
const MESSAGE_CHARS = 16 << 10

/** Messages the CSV worker posts ahead of those this thread has taken; room is given back a quarter at a time. */
export const MESSAGES_AHEAD = 32

/**
 * The CSV worker's young generation: 8 MB took the same time as 16 MB (and the 48 MB a thread's
 * grows to), in 10 MB less; 4 MB took a tenth more time.
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 8 }

/**
 * A file parsed beside this thread holds this many bytes at least (tests set fewer). On two cores, a CSV table to evalcase JSON Lines, parsed beside against in this
 * thread: 100 MB 2.15 to 2.25 s against 2.48 to 2.61 s (DeepEval's CSV to its JSON, 3.2 to 3.7 s
 * against 3.6 to 3.8 s), 30 MB in the same time, 10 MB a tenth slower: the worker starts and warms
 * its code while this thread waits for its first rows.
 */
export const parsedBeside = { fromBytes: 64 << 20 }

/**
 * The steps of parsing a file's text in a worker thread, while this thread converts the records
 * of the steps before: the worker reads the file and parses it, a little ahead. The steps come in
 * the order of the text, and a fault in reading it after the steps before it. A file smaller than
 * `parsedBeside.fromBytes`, or on one core, is parsed in this thread, as one is when `when` is
 * `free` and no core is found free: with the other core busy, 100 MB of the table took 3.9 to 4.1 s
 * beside against 3.1 to 4.0 s in this thread.
 */
async function* stepsBeside(text: FileText, options: ReadOptions, when: true | 'free'): AsyncGenerator<CsvStep> {
  const here = () => stepsHere(fileText(text, options.progress), options.delimiter)
  if (availableParallelism() < 2 || (await bytesOf(text)) < parsedBeside.fromBytes) return yield* here()
  const { repliesBeside } = await import('../workers.ts')
  const request: BesideRequest = { text, delimiter: options.delimiter, counted: options.progress !== undefined }
  const replies = await repliesBeside<BesideStep>('csv-worker', WORKER_LIMITS, when, request, MESSAGES_AHEAD, (step) => step.last === true)
  if (!replies) return yield* here()
  for await (const reply of replies) {
    if (options.progress && reply.bytes !== undefined) options.progress.bytes = reply.bytes
    yield unflattened(reply)
  }
}

/** The bytes `text` reads: its range, or its file's size. */
async function bytesOf(text: FileText): Promise<number> {
  if (text.range) return text.range.end - text.range.start
  try {
    return (await stat(text.path)).size
  } catch {
    // Unreadable: reading it in this thread tells why.
    return 0
  }
}

/** The step a message holds, its rows' cells sliced from the message's text. */
function unflattened(message: BesideStep): CsvStep {
  const { text, ends } = message
  let cell = 0
  let at = 0
  const parses = message.parses.map(({ widths, lines, fault, blank }): CsvParse => {
    const rows: string[][] = new Array(widths.length)
    for (let r = 0; r < widths.length; r++) {
      const row: string[] = new Array(widths[r]!)
      for (let c = 0; c < row.length; c++) {
        const end = ends[cell++]!
        row[c] = text.slice(at, end)
        at = end
      }
      rows[r] = row
    }
    const result: ParsedRows = fault ? { rows, lines, fault, cursor: 0 } : { rows, lines, cursor: 0 }
    return blank ? { result, blank } : { result }
  })
  const step: CsvStep = { parses }
  if (message.sepLine) step.sepLine = true
  if (message.tooLong) step.tooLong = true
  if (message.empty) step.empty = true
  return step
}

/**
 * The CSV worker's side of `stepsBeside`: reads and parses the text it is sent, and posts its
 * steps about 16 K characters of text at a time (see `serveAhead`).
 */
export async function parseBeside({ text, delimiter, counted }: BesideRequest, post: (message: object, transfer?: ArrayBuffer[]) => Promise<void>): Promise<void> {
  const progress = counted ? { bytes: 0 } : undefined
  const parser = new CsvParser(delimiter)
  let gathered: CsvStep = { parses: [] }
  let chars = 0
  let sent = 0
  const send = async (last: boolean): Promise<void> => {
    const message = flattened(gathered, last, progress?.bytes)
    await post(message, [message.ends.buffer as ArrayBuffer, ...message.parses.map((p) => p.widths.buffer as ArrayBuffer)])
    gathered = { parses: [] }
    chars = 0
    sent++
  }
  /** Adds `step` to the message being gathered. */
  const gather = (step: CsvStep): void => {
    for (const parse of step.parses) {
      gathered.parses.push(parse)
      // The text a parse took: its cells' text and no less.
      chars += parse.result.cursor
    }
    if (step.sepLine) gathered.sepLine = true
    if (step.tooLong) gathered.tooLong = true
    if (step.empty) gathered.empty = true
  }
  for await (const chunk of fileText(text, progress)) {
    gather(parser.push(chunk))
    if (gathered.tooLong) return send(true)
    // The first rows go at once: this thread waits for them.
    if (chars >= MESSAGE_CHARS || (sent === 0 && gathered.parses.length)) await send(false)
  }
  gather(parser.end())
  await send(true)
}

/** `step` as a message: its cells' text joined, and where each ends. */
function flattened(step: CsvStep, last: boolean, bytes: number | undefined): BesideStep {
  let cells = 0
  for (const { result } of step.parses) for (const row of result.rows) cells += row.length
  const ends = new Int32Array(cells)
  const texts: string[] = new Array(cells)
  let cell = 0
  let at = 0
  const parses = step.parses.map(({ result, blank }) => {
    const widths = new Int32Array(result.rows.length)
    for (let r = 0; r < result.rows.length; r++) {
      const row = result.rows[r]!
      widths[r] = row.length
      for (const text of row) {
        texts[cell] = text
        at += text.length
        ends[cell++] = at
      }
    }
    return { widths, lines: result.lines, ...(result.fault ? { fault: result.fault } : {}), ...(blank ? { blank } : {}) }
  })
  const message: BesideStep = { text: texts.join(''), ends, parses }
  if (step.sepLine) message.sepLine = true
  if (step.tooLong) message.tooLong = true
  if (step.empty) message.empty = true
  if (last) message.last = true
  if (bytes !== undefined) message.bytes = bytes
  return message
}

/** One parse of a CSV's text: its rows, and those of its rows of one empty cell that were blank lines. */
export interface CsvParse {
  result: ParsedRows
  blank?: number[]
}

/**
 * What a chunk of a CSV's text (or its end) gave: its parses, whether its first line was Excel's
 * `sep=;` line, whether the row left unfinished is past the record limit, and at the end whether the
 * text was empty. Plain data, so that a worker parsing the text can post it.
 */
export interface CsvStep {
  parses: CsvParse[]
  sepLine?: true
  tooLong?: true
  empty?: true
}

/**
 * Parses a CSV's text chunk by chunk: each parse takes the rows that are complete and keeps the
 * unfinished last one for the next. `delimiter`: the one the file's name fixes, else named by a
 * `sep=` line or sniffed from the header line.
 */
export class CsvParser {
  private pending = ''
  private minParse = 0
  private delimiter = 0
  // Text before the header row ends, whose line tells the delimiter.
  private head = ''
  private rowEnds: RowEnds | undefined

  constructor(private readonly named: string | undefined) {}

  push(chunk: string | Buffer): CsvStep {
    const step: CsvStep = { parses: [] }
    let text = typeof chunk === 'string' ? chunk : chunk.toString('utf8')
    if (!this.rowEnds) {
      this.head += text
      if (this.head.length > MAX_RECORD_CHARS) return { parses: [], tooLong: true }
      if (lineEnd(this.head) === -1) return step
      this.start(this.head, step)
      text = this.head
      this.head = ''
    }
    const fresh = this.rowEnds!.push(text)
    // A row longer than a chunk would be re-scanned each time: wait until twice as much is in,
    // unless that passes the record limit; only the unfinished row left after parsing must keep to it.
    const waiting = this.pending.length + fresh.length
    if (waiting < this.minParse && waiting <= MAX_RECORD_CHARS) {
      this.pending += fresh
      return step
    }
    this.parseAfter(fresh, step)
    if (this.pending.length > MAX_RECORD_CHARS) step.tooLong = true
    return step
  }

  /** The rest, at the end of the text. */
  end(): CsvStep {
    const step: CsvStep = { parses: [] }
    if (!this.rowEnds) {
      if (this.head === '') return { parses: [], empty: true }
      this.start(this.head, step)
      this.pending += this.rowEnds!.push(this.head)
    }
    this.pending += this.rowEnds!.end()
    if (this.pending !== '') this.parse(true, step)
    return step
  }

  private start(text: string, step: CsvStep): void {
    const end = lineEnd(text)
    const first = end === -1 ? text : text.slice(0, end)
    const named = sepDelimiter(first)
    if (named !== undefined) step.sepLine = true
    const chosen = named ?? this.named ?? sniffDelimiter(first)
    this.delimiter = chosen.charCodeAt(0)
    this.rowEnds = new RowEnds(chosen)
  }

  private parse(last: boolean, step: CsvStep): void {
    const result = parseRows(this.pending, this.delimiter, !last)
    const consumed = this.pending.slice(0, result.cursor)
    this.pending = this.pending.slice(result.cursor)
    this.minParse = this.pending.length * 2
    const blank = blankRows(result, consumed)
    step.parses.push(blank ? { result, blank } : { result })
  }

  /**
   * Parses the text left unparsed (the unfinished row of the last parse) with `fresh`, the text that
   * follows it. Joined to all of `fresh`, it would have the whole joined text copied once more where
   * the parse first searches it, as V8 flattens a joined string: 0.19 GB for 100 MB of a CSV table.
   * It is parsed with `fresh` up to the first LF, which mostly ends its row, and the rest of `fresh`
   * alone when it does.
   */
  private parseAfter(fresh: string, step: CsvStep): void {
    const end = this.pending === '' ? 0 : fresh.indexOf('\n') + 1
    if (end === 0) {
      this.pending += fresh
      this.parse(false, step)
      return
    }
    this.pending += fresh.slice(0, end)
    this.parse(false, step)
    // Left unparsed when the LF is inside a quoted cell: the row goes on.
    this.pending += fresh.slice(end)
    this.parse(false, step)
  }
}

/**
 * The rows of one empty cell that were blank lines rather than `""`: a row of one empty cell, as
 * Python's csv writer writes it so that it is not taken for a blank line, and as Python's reader
 * and pandas read it. Undefined when no row is one empty cell.
 */
function blankRows(result: ParsedRows, consumed: string): number[] | undefined {
  let blank: number[] | undefined
  // Where the parse's lines start in its text, found only for a row of one empty cell.
  let starts: number[] | undefined
  const { rows, lines } = result
  for (let r = 0; r < rows.length; r++) {
    const cells = rows[r]!
    if (cells.length !== 1 || cells[0] !== '') continue
    if (!starts) {
      starts = [0]
      for (let i = consumed.indexOf('\n'); i !== -1; i = consumed.indexOf('\n', i + 1)) starts.push(i + 1)
    }
    if (consumed.charCodeAt(starts[lines[r]!]!) !== 0x22) (blank ??= []).push(r)
  }
  return blank
}

/** The delimiter a first line of Excel's `sep=;` form names, or undefined. */
export function sepDelimiter(firstLine: string): string | undefined {
  const line = firstLine.charCodeAt(0) === 0xfeff ? firstLine.slice(1) : firstLine
  return line.length === 5 && line.startsWith('sep=') && line[4] !== '"' ? line[4] : undefined
}

function emptyFrom(cells: string[], start: number): boolean {
  for (let i = start; i < cells.length; i++) if (cells[i] !== '') return false
  return true
}

const QUOTE = 0x22
const LF = 0x0a
const CR = 0x0d

/** Where the first line of `text` ends (its CR or LF), or -1. */
function lineEnd(text: string): number {
  const lf = text.indexOf('\n')
  const cr = text.indexOf('\r')
  return cr === -1 ? lf : lf === -1 ? cr : Math.min(cr, lf)
}

/** One parse's rows, the first quoting fault (by its row in `rows`), and where the unfinished last row starts. */
interface ParsedRows {
  rows: string[][]
  /**
   * The line breaks (LF) of the text before each row, and last before `cursor`: rows with newlines
   * in their cells take several lines.
   */
  lines: number[]
  fault?: { row: number; unclosed: boolean }
  cursor: number
}

/**
 * The rows of `text`, whose rows end at LF and whose quoted cells are closed by a quote that a
 * delimiter, an LF or the text's end follows (as `RowEnds` makes it). A quote opens a quoted
 * cell only at the cell's start, and `""` inside one is a quote. With `more` to come, the row the
 * text ends in is left for the next parse (`cursor` is where it starts); at the end, the rest is
 * the last row, as a row of one empty cell when the text ends with its row end.
 */
export function parseRows(text: string, delimiter: number, more: boolean): ParsedRows {
  const rows: string[][] = []
  const lines = [0]
  const n = text.length
  if (n === 0) return { rows, lines, cursor: 0 }
  const delim = String.fromCharCode(delimiter)
  let fault: ParsedRows['fault']
  let row: string[] = []
  let rowStart = 0
  let at = 0
  let nextDelim = text.indexOf(delim)
  let nextLf = text.indexOf('\n')
  // The LFs before `nextLf` (all of them once it is -1): those of quoted cells are counted as they are passed.
  let lfs = 0
  /** The text's end: the last row is the one it ends in, or (after a row end) a row of one empty cell. */
  const last = (): ParsedRows => {
    lines[rows.length] = lfs + (nextLf === -1 ? 0 : countNewlines(text, nextLf))
    return { rows, lines, fault, cursor: n }
  }
  for (;;) {
    if (text.charCodeAt(at) === QUOTE) {
      // A quoted cell: to its closing quote, over each doubled one.
      let close = text.indexOf('"', at + 1)
      let doubled = false
      for (;;) {
        if (close === -1) {
          if (more) return { rows, lines, fault, cursor: rowStart }
          fault ??= { row: rows.length, unclosed: true }
          row.push(text.slice(at + 1))
          rows.push(row)
          return last()
        }
        const after = text.charCodeAt(close + 1)
        if (after === QUOTE) {
          doubled = true
          close = text.indexOf('"', close + 2)
          continue
        }
        if (close + 1 === n || after === delimiter || after === LF) break
        // A quote that neither doubles nor closes: the text is not as `RowEnds` leaves it.
        fault ??= { row: rows.length, unclosed: false }
        close = text.indexOf('"', close + 1)
      }
      const cell = text.slice(at + 1, close)
      row.push(doubled ? cell.replace(DOUBLED_QUOTES, '"') : cell)
      at = close + 1
      if (at === n) {
        // The text ends with the cell's closing quote: the row is unfinished, or the last.
        if (more) return { rows, lines, fault, cursor: rowStart }
        rows.push(row)
        return last()
      }
      const rowEnds = text.charCodeAt(at) !== delimiter
      at++
      if (nextDelim !== -1 && nextDelim < at) nextDelim = text.indexOf(delim, at)
      // The cell's own newlines, and the row's end when an LF ends it.
      for (; nextLf !== -1 && nextLf < at; nextLf = text.indexOf('\n', nextLf + 1)) lfs++
      if (rowEnds) {
        rows.push(row)
        lines.push(lfs)
        row = []
        rowStart = at
      }
      if (at === n) break
      continue
    }
    if (nextDelim !== -1 && (nextDelim < nextLf || nextLf === -1)) {
      row.push(text.slice(at, nextDelim))
      at = nextDelim + 1
      nextDelim = text.indexOf(delim, at)
      if (at === n) break
      continue
    }
    if (nextLf === -1) {
      // The last cell, without a row end.
      if (more) return { rows, lines, fault, cursor: rowStart }
      row.push(text.slice(at))
      rows.push(row)
      return last()
    }
    row.push(text.slice(at, nextLf))
    rows.push(row)
    lines.push(++lfs)
    row = []
    at = rowStart = nextLf + 1
    nextLf = text.indexOf('\n', at)
    if (at === n) break
  }
  // The text ends at a cell's or a row's end: the row it ends in is unfinished, or (at the end) the last one.
  if (more) return { rows, lines, fault, cursor: rowStart }
  row.push('')
  rows.push(row)
  return last()
}

const DOUBLED_QUOTES = /""/g

/**
 * Makes each CRLF or lone CR outside quoted cells an LF, chunk by chunk, so that `parseRows` (one
 * newline per file) ends rows where pandas and Python's csv module do: at a CRLF, an LF or a CR, in
 * any mix. Quoted cells keep every character. A quote opens a quoted cell only at the start of a
 * cell. A quoted cell with text after its closing quote (`"x"y`, `"a" ,`), which a strict reader
 * refuses, is read as Python's csv and pandas read it: the text after the quote, its quotes as they
 * are, joins the cell (`xy`, `a `); it is rewritten as the quoted cell of that text (`"xy"`, its
 * quotes doubled).
 */
export class RowEnds {
  private inQuotes = false
  /** After a quoted cell's closing quote, before the delimiter or row end that ends the cell: its text goes on. */
  private inTail = false
  private previous = LF
  /** The end of the last chunk that the next character decides: a CR outside quotes, a quote inside. */
  private held = ''
  private readonly delimiter: number

  constructor(delimiter: string) {
    this.delimiter = delimiter.charCodeAt(0)
  }

  push(chunk: string): string {
    return this.scan(this.held + chunk, false)
  }

  /** The rest, at the end of the file. */
  end(): string {
    return this.scan(this.held, true)
  }

  private scan(text: string, final: boolean): string {
    let n = text.length
    this.held = ''
    let out = ''
    let copied = 0
    let k = 0
    let cr = text.indexOf('\r')
    while (k < n) {
      if (this.inTail) {
        let j = k
        for (let c = text.charCodeAt(j); j < n && c !== QUOTE && c !== this.delimiter && c !== LF && c !== CR; c = text.charCodeAt(++j));
        if (j === n) break
        if (text.charCodeAt(j) === QUOTE) {
          out += text.slice(copied, j + 1) + '"'
          copied = k = j + 1
          continue
        }
        out += text.slice(copied, j) + '"'
        copied = k = j
        this.inTail = false
        continue
      }
      if (this.inQuotes) {
        const close = text.indexOf('"', k)
        if (close === -1) break
        if (close === n - 1 && !final) {
          n = close
          break
        }
        const next = text.charCodeAt(close + 1)
        if (next === QUOTE) k = close + 2
        else {
          this.inQuotes = false
          k = close + 1
          if (k < n && next !== this.delimiter && next !== LF && next !== CR) {
            // Text after the closing quote: the quote goes to the end of the cell.
            out += text.slice(copied, close)
            copied = k
            this.inTail = true
          }
        }
        continue
      }
      const quote = text.indexOf('"', k)
      const stop = quote === -1 ? n : quote
      if (cr !== -1 && cr < k) cr = text.indexOf('\r', k)
      for (; cr !== -1 && cr < stop; cr = text.indexOf('\r', cr + 1)) {
        if (cr === n - 1 && !final) {
          n = cr
          break
        }
        // CRLF becomes LF; a lone CR (old Mac files) ends its row as well.
        out += text.slice(copied, cr) + (text.charCodeAt(cr + 1) === LF ? '' : '\n')
        copied = cr + 1
      }
      if (quote === -1 || quote >= n) break
      const before = quote > 0 ? text.charCodeAt(quote - 1) : this.previous
      // After a row end (LF, or a CR, which outside quotes ends a row too) or a delimiter.
      if (before === LF || before === CR || before === this.delimiter) this.inQuotes = true
      k = quote + 1
    }
    if (n < text.length) this.held = text.slice(n)
    if (n) this.previous = text.charCodeAt(n - 1)
    const close = final && this.inTail ? '"' : ''
    return out === '' && copied === 0 && !close ? (n === text.length ? text : text.slice(0, n)) : out + text.slice(copied, n) + close
  }
}

/** A cell as Python's csv writer quotes it (QUOTE_MINIMAL): only when it must. */
export function csvCell(value: string, delimiter = ','): string {
  if (value === '') return ''
  let needs = false
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c === 0x22 || c === 0x0a || c === 0x0d || value[i] === delimiter) {
      needs = true
      break
    }
  }
  return needs ? `"${value.replace(/"/g, '""')}"` : value
}

/**
 * Writes records whose values are strings (or null for an empty cell). The header is the layout's
 * columns, then the first record's other keys; a later record with a key outside them is an error,
 * since a streamed header cannot grow.
 */
export function csvWriter(sink: Sink, layout: { columns?: string[]; newline?: '\n' | '\r\n'; delimiter?: string }, warn?: (message: string, field: string) => void): RecordWriter {
  const newline = layout.newline ?? '\n'
  const delimiter = layout.delimiter ?? ','
  let columns: string[] | undefined
  let known: Set<string> | undefined
  let count = 0

  const row = (cells: string[]): string => {
    // Python writes a lone empty field as "" so that the row is not read as blank.
    if (cells.length === 1 && cells[0] === '') return '""' + newline
    return cells.map((c) => csvCell(c, delimiter)).join(delimiter) + newline
  }
  // A column named as the reader names one without a name, at that place, is written without one.
  const header = (names: string[]): string => {
    const cells = names.map((c, i) => (c === `Unnamed: ${i}` ? '' : c))
    const line = row(cells)
    // The reader tells the delimiter from the header row: where a name holds another delimiter more
    // often than the header holds this one (`a;b;c` alone), the names that hold one are quoted.
    if (sniffDelimiter(line) === delimiter) return line
    const other = (c: string) => DELIMITERS.some((d) => d !== delimiter && c.includes(d))
    return cells.map((c) => (other(c) ? `"${c.replace(/"/g, '""')}"` : csvCell(c, delimiter))).join(delimiter) + newline
  }

  return {
    // Each row goes straight to the sink, which gathers them: a stream that fails has every row written before the bad one.
    write(record: JsonObject) {
      let head = ''
      if (!columns) {
        columns = [...(layout.columns ?? [])]
        known = new Set(columns)
        for (const key of Object.keys(record)) {
          if (known.has(key)) continue
          known.add(key)
          columns.push(key)
        }
        head = header(columns)
      }
      for (const key in record) {
        if (!known!.has(key)) {
          throw new LayoutError(`record ${count + 1} has a column "${key}" that the first records did not have`, { field: key })
        }
      }
      const cells = columns.map((c) => {
        const v = record[c]
        return v === null || v === undefined ? '' : typeof v === 'string' ? v : stringifyJson(v)
      })
      const text = row(cells)
      if (!text.isWellFormed()) {
        for (let i = 0; i < cells.length; i++) if (!cells[i]!.isWellFormed()) warn?.(LONE_SURROGATE, columns[i]!)
      }
      count++
      return sink.write(head + text)
    },
    async end() {
      if (!columns && layout.columns?.length) await sink.write(header(layout.columns))
    },
  }
}
