/** JSON Lines: one record a line; blank lines are skipped; a byte-order mark is ignored. */
import { DataError } from '../errors.ts'
import type { JsonObject } from '../model.ts'
import { checkDuplicateKeys, keptWarning, MAX_DEPTH, parseExact, parserWords, positionIn, recordJson, recordTextOptions, stringifyJson } from './json.ts'
import { depthOver, MAX_RECORD_CHARS, PendingLine, tooLong, type ByteSource, type ReadOptions, type RecordWriter, type Sink, type SourceRecord } from './types.ts'

export async function* readJsonl(source: ByteSource, options: ReadOptions): AsyncGenerator<SourceRecord> {
  let line = options.continuation ? options.continuation.line - 1 : 0
  let index = options.continuation?.index ?? 0
  let first = !options.continuation
  const parse = (text: string, at: number): SourceRecord | undefined => {
    if (first) {
      first = false
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    }
    if (text.endsWith('\r')) text = text.slice(0, -1)
    if (text.trim() === '') return undefined
    try {
      const { value, kept } = parseLine(text, options.file, at)
      const record: SourceRecord = { value, line: at, index: index++, raw: text }
      if (kept) record.warnings = kept.map(keptWarning)
      return record
    } catch (error) {
      // One bad line leaves the next ones readable.
      return { value: undefined, line: at, index: index++, raw: text, error: error as DataError }
    }
  }
  const rest = new PendingLine()
  for await (const chunk of source) {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8')
    let start = 0
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      line++
      const record = parse(rest.take(text.slice(start, nl)), line)
      if (record) yield record
      start = nl + 1
    }
    rest.add(text.slice(start))
    if (rest.length > MAX_RECORD_CHARS) throw new DataError('E_PARSE', tooLong('record'), { file: options.file, line: line + 1 })
  }
  if (rest.length) {
    const record = parse(rest.take(), line + 1)
    if (record) yield record
  }
}

/** The value of one line, or an E_PARSE error naming the line (and column). */
function parseLine(text: string, file: string, at: number): { value: unknown; kept?: string[] | undefined } {
  let parsed
  try {
    parsed = parseExact(text)
  } catch (error) {
    const { column } = positionIn(text, error)
    throw new DataError('E_PARSE', `invalid JSON: ${parserWords(error)}`, { file, line: at, column })
  }
  // Only a line of more than two characters a level can nest deeper than the limit.
  if (text.length > 2 * MAX_DEPTH && depthOver(parsed.value, MAX_DEPTH)) {
    throw new DataError('E_PARSE', `nested deeper than ${MAX_DEPTH} levels`, { file, line: at })
  }
  checkDuplicateKeys(text, parsed.value, file, at)
  return parsed
}

export function jsonlWriter(sink: Sink, layout: { pythonSpacing?: boolean }, warn?: (message: string, field: string) => void): RecordWriter {
  const text = recordTextOptions({ pythonSpacing: layout.pythonSpacing }, warn)
  return {
    write: (record: JsonObject) => {
      text.record = record
      // The line's end goes on its own: joined to the record's text, it would have that text copied whole once more.
      // One walk of the record tells both its known lists and whether it holds NaN or an infinity.
      const made = layout.pythonSpacing ? undefined : recordJson(record)
      if (!Array.isArray(made)) {
        const waiting = sink.write(made ?? stringifyJson(record, text))
        return waiting ? waiting.then(() => sink.write('\n')) : sink.write('\n')
      }
      made.push('\n')
      return writeEach(sink, made, 0)
    },
    end: async () => {},
  }
}

/** Writes `pieces` from `i` on, waiting only where the sink asks to. */
function writeEach(sink: Sink, pieces: string[], i: number): Promise<void> | undefined {
  for (; i < pieces.length; i++) {
    const waiting = sink.write(pieces[i]!)
    if (waiting) return waiting.then(() => writeEach(sink, pieces, i + 1))
  }
  return undefined
}
