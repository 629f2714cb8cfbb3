/**
 * What each conversion is measured against: the parser alone, fed the same file the same way
 * evalferry's codec feeds it. Each returns the number of records it saw, so that a baseline that
 * silently parses nothing shows up as a record count that differs from evalferry's.
 */
import { createReadStream, createWriteStream, openAsBlob } from 'node:fs'
import { finished } from 'node:stream/promises'
import { readFile, writeFile } from 'node:fs/promises'
import Papa from 'papaparse'
import { ParquetFile, type RecordBatch as WasmRecordBatch } from 'parquet-wasm'
import { tableFromIPC } from 'apache-arrow'
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml'
import { dump as dumpJsYaml, load as loadJsYaml } from 'js-yaml'

/** The chunk size of evalferry's text source (`src/io.ts` `textSource`). */
export const CHUNK_BYTES = 1 << 16

function textChunks(path: string): AsyncIterable<string> {
  const stream = createReadStream(path, { highWaterMark: CHUNK_BYTES })
  stream.setEncoding('utf8')
  return stream as AsyncIterable<string>
}

interface CoreParser {
  parse(input: string, baseIndex: number, ignoreLastRow: boolean): Papa.ParseResult<string[]>
}

/**
 * papaparse's core parser over the file in 64 KiB chunks, each parse handing back the unfinished
 * last row, as the CSV codec does; `use` gets each parse's rows as arrays of cells, the header row
 * first.
 */
async function papaparseEach(path: string, use: (rows: string[][]) => void): Promise<void> {
  const ParserClass = (Papa as unknown as { Parser: new (config: object) => CoreParser }).Parser
  let parser: CoreParser | undefined
  let pending = ''
  let minParse = 0
  for await (const chunk of textChunks(path)) {
    pending += chunk
    if (pending.length < minParse) continue
    if (!parser) {
      const nl = pending.indexOf('\n')
      if (nl === -1) continue
      parser = new ParserClass({ delimiter: ',', newline: pending.charCodeAt(nl - 1) === 0x0d ? '\r\n' : '\n', quoteChar: '"' })
    }
    const result = parser.parse(pending, 0, true)
    pending = pending.slice(result.meta.cursor)
    minParse = pending.length * 2
    use(result.data)
  }
  if (parser && pending !== '') use(parser.parse(pending, 0, false).data)
}

/** papaparse alone (see `papaparseEach`). Returns data rows (header excluded). */
export async function papaparseRows(path: string): Promise<number> {
  let rows = 0
  await papaparseEach(path, (data) => (rows += data.length))
  return rows - 1
}

/**
 * The least any CSV to JSON Lines conversion does: papaparse's rows as objects keyed by the
 * header, each `JSON.stringify`'d onto its own line and written out in 64 KiB pieces. No mapping,
 * no checks, nothing carried: what a conversion costs before it is an evalferry conversion.
 */
export async function papaparseToJsonl(path: string, output: string): Promise<number> {
  let columns: string[] | undefined
  let rows = 0
  const out = lineWriter(output)
  await papaparseEach(path, (data) => {
    for (const cells of data) {
      if (!columns) {
        columns = cells
        continue
      }
      const row: Record<string, string> = {}
      for (let i = 0; i < columns.length; i++) row[columns[i]!] = cells[i] ?? ''
      out.line(JSON.stringify(row))
      rows++
    }
  })
  await out.end()
  return rows
}

/** Lines joined into 64 KiB pieces, written through one file stream without waiting on each. */
function lineWriter(path: string): { line(text: string): void; end(): Promise<void> } {
  const stream = createWriteStream(path)
  let buffer = ''
  return {
    line(text) {
      buffer += text + '\n'
      if (buffer.length >= CHUNK_BYTES) {
        stream.write(buffer)
        buffer = ''
      }
    },
    async end() {
      stream.end(buffer)
      await finished(stream)
    },
  }
}

/** `JSON.parse` per line over the file in 64 KiB chunks; a line's pieces are joined once its newline comes. */
export async function jsonParseLines(path: string): Promise<number> {
  let rest: string[] = []
  let records = 0
  const parse = (line: string) => {
    if (line.trim() === '') return
    JSON.parse(line)
    records++
  }
  for await (const text of textChunks(path)) {
    let start = 0
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      parse(rest.length ? rest.join('') + text.slice(start, nl) : text.slice(start, nl))
      rest = []
      start = nl + 1
    }
    if (start < text.length) rest.push(text.slice(start))
  }
  parse(rest.join(''))
  return records
}

/** Rows per batch, as the Parquet codec asks parquet-wasm for them. */
const PARQUET_BATCH_ROWS = 4096

async function eachParquetBatch(path: string, use: (batch: WasmRecordBatch) => void): Promise<number> {
  const file = await ParquetFile.fromFile(await openAsBlob(path))
  let rows = 0
  try {
    const stream = (await file.stream({ batchSize: PARQUET_BATCH_ROWS })) as ReadableStream<WasmRecordBatch>
    for await (const batch of stream as unknown as AsyncIterable<WasmRecordBatch>) {
      rows += batch.numRows
      use(batch)
    }
  } finally {
    file.free()
  }
  return rows
}

/** parquet-wasm alone: every row group decoded into wasm-side Arrow record batches. */
export function parquetWasmRows(path: string): Promise<number> {
  return eachParquetBatch(path, (batch) => batch.free())
}

/** parquet-wasm, then each batch handed to Arrow JS as an IPC stream (columns, not rows). */
export function parquetArrowJsRows(path: string): Promise<number> {
  return eachParquetBatch(path, (batch) => {
    tableFromIPC(batch.intoIPCStream())
  })
}

/**
 * evalferry's own Parquet reader producing plain row objects and nothing else: parsing the container
 * into records, as papaparse does for CSV. Shown beside the parquet-wasm baselines, not instead of them.
 */
export async function parquetReaderRows(path: string): Promise<number> {
  const { readParquet } = await import('../src/codecs/parquet.ts')
  let rows = 0
  for await (const _ of readParquet(path, { file: path, recordKeys: [], header: {}, columns: [] })) rows++
  return rows
}

/** evalferry's Parquet reader's row objects, each `JSON.stringify`'d onto its own line: the least a Parquet to JSON Lines conversion does. */
export async function parquetReaderToJsonl(path: string, output: string): Promise<number> {
  const { readParquet } = await import('../src/codecs/parquet.ts')
  const out = lineWriter(output)
  let rows = 0
  for await (const record of readParquet(path, { file: path, recordKeys: [], header: {}, columns: [] })) {
    out.line(JSON.stringify(record.value))
    rows++
  }
  await out.end()
  return rows
}

/** The document's record list, for counting. */
function listOf(doc: unknown): unknown[] {
  const list = (doc as { evalcases?: unknown[] } | null)?.evalcases
  return Array.isArray(list) ? list : []
}

export async function yamlParseFile(path: string): Promise<number> {
  return listOf(parseYaml(await readFile(path, 'utf8'))).length
}

export async function jsYamlLoadFile(path: string): Promise<number> {
  return listOf(loadJsYaml(await readFile(path, 'utf8'))).length
}

export async function yamlStringifyFile(doc: unknown, path: string): Promise<number> {
  await writeFile(path, stringifyYaml(doc, { lineWidth: 0, minContentWidth: 0 }))
  return listOf(doc).length
}

export async function jsYamlDumpFile(doc: unknown, path: string): Promise<number> {
  await writeFile(path, dumpJsYaml(doc, { lineWidth: -1 }))
  return listOf(doc).length
}
