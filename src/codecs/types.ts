import type { JsonObject } from '../model.ts'

/** Longer records are refused, so that memory stays bounded whatever a file holds. */
export const MAX_RECORD_CHARS = 32 * 1024 * 1024

/** The message for a record, value or cell over `MAX_RECORD_CHARS`. */
export function tooLong(what: string): string {
  return `the ${what} is longer than ${MAX_RECORD_CHARS / (1024 * 1024)} MiB; evalferry holds one record in memory at a time and refuses larger ones`
}

/** The line breaks (LF) in `text`, or in its [from, to). */
export function countNewlines(text: string, from = 0, to = text.length): number {
  let n = 0
  for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) n++
  return n
}

/** One parsed record and where it came from. */
export interface SourceRecord {
  value: unknown
  /** 1-based line where the record starts, where the container has lines. */
  line?: number
  /** 0-based index of the record in the file. */
  index: number
  /** The record's own text, where the codec has it cheaply (for `--rejects`). */
  raw?: string
}

export interface ReadOptions {
  /** The file name, for error messages. */
  file: string
  /** Keys of a JSON or YAML document that hold the record list. */
  recordKeys: string[]
  /** Filled with the document's other top-level keys as the reader meets them. */
  header: JsonObject
  /** Filled with the table's columns (CSV, Parquet) once known. */
  columns?: string[]
  /** CSV delimiter; sniffed from the header line when absent. */
  delimiter?: string
  /** Updated with the bytes read so far, for a progress bar. */
  progress?: { bytes: number }
  /** Parquet: what the file's schema metadata holds (the `huggingface` key, say). */
  schemaMetadata?: Record<string, string>
  /**
   * CSV and JSON Lines: the text is a later part of the file (after a CSV's header row), whose
   * first record starts on `line` and has the 0-based `index`.
   */
  continuation?: { line: number; index: number }
  /**
   * Only the records whose 0-based index is in [start, end) are needed. Parquet reads only the
   * row groups that hold them; other containers give every record and leave the choice to the caller.
   */
  recordRange?: [number, number]
}

export type ByteSource = AsyncIterable<Buffer | string> | Iterable<Buffer | string>

/** Writes records of one container to a byte sink, in order, with back-pressure. */
export interface RecordWriter {
  write(record: JsonObject): Promise<void>
  /** Writes whatever closes the document; does not close the sink. */
  end(): Promise<void>
}

export interface Sink {
  write(chunk: string | Uint8Array): Promise<void>
}

/**
 * The header key under which the YAML reader reports which of `recordKeys` held the record list
 * (evalcase's `evalcases` or `tests` dialect), and which the YAML writer never writes.
 */
export const LIST_KEY = '$list'
