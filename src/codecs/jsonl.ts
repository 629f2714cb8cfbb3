/** JSON Lines: one record a line; blank lines are skipped; a byte-order mark is ignored. */
import { DataError } from '../errors.ts'
import type { JsonObject } from '../model.ts'
import { positionIn, stringifyJson } from './json.ts'
import type { ByteSource, ReadOptions, RecordWriter, Sink, SourceRecord } from './types.ts'

export async function* readJsonl(source: ByteSource, options: ReadOptions): AsyncGenerator<SourceRecord> {
  let rest = ''
  let line = 0
  let index = 0
  let first = true
  const parse = (text: string, at: number): SourceRecord | undefined => {
    if (first) {
      first = false
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    }
    if (text.endsWith('\r')) text = text.slice(0, -1)
    if (text.trim() === '') return undefined
    try {
      return { value: JSON.parse(text), line: at, index: index++, raw: text }
    } catch (error) {
      const { column } = positionIn(text, error)
      throw new DataError('E_PARSE', `invalid JSON: ${(error as Error).message}`, { file: options.file, line: at, column })
    }
  }
  for await (const chunk of source) {
    const text = rest + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'))
    let start = 0
    let nl = text.indexOf('\n')
    while (nl !== -1) {
      line++
      const record = parse(text.slice(start, nl), line)
      if (record) yield record
      start = nl + 1
      nl = text.indexOf('\n', start)
    }
    rest = text.slice(start)
  }
  if (rest !== '') {
    const record = parse(rest, line + 1)
    if (record) yield record
  }
}

export function jsonlWriter(sink: Sink, layout: { pythonSpacing?: boolean }): RecordWriter {
  const spacing = { pythonSpacing: layout.pythonSpacing ?? false }
  return {
    write: (record: JsonObject) => sink.write(stringifyJson(record, spacing) + '\n'),
    end: async () => {},
  }
}
