/** Containers by name and by file extension; each codec knows no dataset format. */
import { extname } from 'node:path'
import type { Container, FileLayout } from '../../adapters/types.ts'
import { UsageError } from '../errors.ts'
import { fileText, isGzipName, STDIO, withoutGzip, type FileText } from '../io.ts'
import { csvWriter, namedDelimiter, readCsv, readCsvBeside } from './csv.ts'
import { jsonWriter, readJson } from './json.ts'
import { jsonlWriter, readJsonl } from './jsonl.ts'
import type { ByteSource, ReadOptions, RecordWriter, Sink, SourceRecord } from './types.ts'

const BY_EXTENSION: Record<string, Container> = {
  '.json': 'json',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.yaml': 'yaml',
  '.yml': 'yaml',
  '.parquet': 'parquet',
}

export const CONTAINERS: Container[] = ['json', 'jsonl', 'csv', 'yaml', 'parquet']

/** The container a file's extension names, or undefined; `cases.jsonl.gz` is gzip-compressed JSON Lines. */
export function containerOf(path: string): Container | undefined {
  return BY_EXTENSION[extname(withoutGzip(path)).toLowerCase()]
}

/** The extension that names the container, with `.gz` after it where there is one: `.jsonl.gz`, `.csv`. */
export function extensionOf(path: string): string {
  return extname(withoutGzip(path)) + (isGzipName(path) ? path.slice(-3) : '')
}

export function parseContainer(name: string): Container {
  const c = name.toLowerCase().replace(/^\./, '')
  const container = (CONTAINERS as string[]).includes(c) ? (c as Container) : BY_EXTENSION['.' + c]
  if (!container) throw new UsageError(`unknown container "${name}"; expected one of ${CONTAINERS.join(', ')}`)
  return container
}

/** The records of the file at `path`, or of `part` of it: its text, or a byte range after a prefix. */
export function readRecords(
  container: Container,
  path: string,
  options: ReadOptions,
  part?: { text?: string; range?: { start: number; end: number }; prefix?: string },
): AsyncIterable<SourceRecord> {
  const text: FileText = { path, ...(part?.range ? { range: part.range, prefix: part.prefix } : {}), line: options.continuation?.line }
  const source = () => (part?.text !== undefined ? [part.text] : fileText(text, options.progress))
  switch (container) {
    case 'json':
      return readJson(source(), options)
    case 'jsonl':
      return readJsonl(source(), options)
    case 'csv': {
      const csvOptions = { ...options, delimiter: options.delimiter ?? namedDelimiter(path) }
      if (options.parseThread && part?.text === undefined && path !== STDIO) {
        return readCsvBeside(text, csvOptions)
      }
      return readCsv(source(), csvOptions)
    }
    case 'yaml':
      return readYamlLazily(source(), options)
    case 'parquet':
      return readParquetLazily(path, options)
  }
}

// YAML's and Parquet's codecs load their libraries only when a file of theirs is read or written:
// a conversion between other containers starts without them.
async function* readYamlLazily(source: ByteSource, options: ReadOptions): AsyncGenerator<SourceRecord> {
  const { readYaml } = await import('./yaml.ts')
  yield* readYaml(source, options)
}

async function* readParquetLazily(path: string, options: ReadOptions): AsyncGenerator<SourceRecord> {
  const { readParquet } = await import('./parquet.ts')
  yield* readParquet(path, options)
}

/** `warn`: told of what a record loses on its way into the file (a lone surrogate in UTF-8, say), with the field. */
export async function recordWriter(container: Container, sink: Sink, layout: FileLayout, warn?: (message: string, field: string) => void): Promise<RecordWriter> {
  switch (container) {
    case 'json':
      return jsonWriter(sink, layout, warn)
    case 'jsonl':
      return jsonlWriter(sink, layout, warn)
    case 'csv':
      return csvWriter(sink, layout, warn)
    case 'yaml': {
      const { yamlWriter } = await import('./yaml-emit.ts')
      return yamlWriter(sink, layout)
    }
    case 'parquet': {
      const { parquetWriter } = await import('./parquet.ts')
      return parquetWriter(sink, layout, {}, warn)
    }
  }
}
