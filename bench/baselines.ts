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
import { DataType, tableFromIPC, type Data } from 'apache-arrow'
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml'
import { dump as dumpJsYaml, load as loadJsYaml } from 'js-yaml'

/** evalferry's Parquet codec, compiled: the bench passes it in, as it times the library as users run it. */
type ParquetCodec = Pick<typeof import('../src/codecs/parquet.ts'), 'readParquet'>

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

/**
 * A conversion that never makes the rows objects, nor its cells strings: CSV bytes to JSON Lines
 * bytes, each row an object of the header's columns, each cell copied with JSON's escapes (a quote
 * and a backslash escaped, controls as `\u00XX`, `""` in a quoted cell one quote; rows end at an LF
 * or a CRLF; a row no wider than the header). Not a converter (nothing mapped, checked or carried,
 * no other row end): how fast writing JSON Lines from a CSV file can be when the rows stay bytes.
 */
export async function csvBytesToJsonl(path: string, output: string): Promise<number> {
  const stream = createWriteStream(output)
  // Written in pieces of up to 4 MiB; a piece handed to the stream is its own, and a new one begun.
  const PIECE = 4 << 20
  let out = Buffer.allocUnsafe(PIECE)
  let o = 0
  const flush = (): void => {
    stream.write(out.subarray(0, o))
    out = Buffer.allocUnsafe(PIECE)
    o = 0
  }
  const room = (bytes: number): void => {
    if (o + bytes > out.length) flush()
  }
  const HEX = Buffer.from('0123456789abcdef')
  // Where the row is: 0 a cell's start, 1 an unquoted cell, 2 a quoted cell, 3 a quote in a quoted cell.
  let state = 0
  let header: Buffer[] | undefined
  let name: number[] = []
  const names: string[] = []
  let column = 0
  let rows = 0
  const endCell = (): void => {
    if (!header) {
      names.push(Buffer.from(name).toString('utf8'))
      name = []
    } else out[o++] = 0x22
    column++
  }
  const startCell = (): void => {
    const key = header?.[column]
    if (!key) return
    room(key.length)
    key.copy(out, o)
    o += key.length
  }
  const endRow = (): void => {
    if (!header) {
      header = names.map((n, i) => Buffer.from(`${i ? ',' : '{'}${JSON.stringify(n)}:"`))
    } else {
      out[o++] = 0x7d
      out[o++] = 0x0a
      rows++
    }
    column = 0
  }
  const put = (c: number): void => {
    if (!header) {
      name.push(c)
      return
    }
    if (c === 0x22 || c === 0x5c) {
      out[o++] = 0x5c
      out[o++] = c
    } else if (c < 0x20) {
      out[o++] = 0x5c
      if (c === 0x0a) out[o++] = 0x6e
      else if (c === 0x0d) out[o++] = 0x72
      else if (c === 0x09) out[o++] = 0x74
      else {
        out[o++] = 0x75
        out[o++] = 0x30
        out[o++] = 0x30
        out[o++] = HEX[c >> 4]!
        out[o++] = HEX[c & 15]!
      }
    } else out[o++] = c
  }
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    room(chunk.length * 6 + 64)
    const n = chunk.length
    for (let i = 0; i < n; i++) {
      let c = chunk[i]!
      if (state === 2) {
        // The run of a quoted cell's bytes that JSON writes as they are, copied in one loop.
        if (header) for (; c !== 0x22 && c >= 0x20 && c !== 0x5c && i < n; c = chunk[++i]!) out[o++] = c
        if (i === n) break
        if (c === 0x22) state = 3
        else put(c)
        continue
      }
      if (state === 3) {
        if (c === 0x22) {
          put(c)
          state = 2
          continue
        }
        state = 1
      }
      if (c === 0x0d) continue
      if (state === 0) {
        if (c === 0x0a && column === 0) continue
        startCell()
        state = 1
        if (c === 0x22) {
          state = 2
          continue
        }
      }
      if (c === 0x2c) {
        endCell()
        state = 0
      } else if (c === 0x0a) {
        endCell()
        endRow()
        state = 0
      } else if (header && c >= 0x20 && c !== 0x22 && c !== 0x5c) out[o++] = c
      else put(c)
    }
  }
  if (state !== 0) {
    endCell()
    endRow()
  }
  flush()
  stream.end()
  await finished(stream)
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

/** Bytes a JSON string escapes: a quote, a backslash and the controls. */
const JSON_ESCAPED = new Uint8Array(256).map((_, b) => (b < 0x20 || b === 0x22 || b === 0x5c ? 1 : 0))

/**
 * parquet-wasm and Arrow JS as evalferry's reader uses them, then every byte of the file's text
 * (each text column's values, nested ones too) once through JSON's escapes into memory: no key, no
 * object, no number, nothing written. Less than any Parquet → JSON Lines conversion does beyond
 * decoding, so its own ratio to parquet-wasm is a ceiling for a conversion's on this machine.
 */
export function parquetTextEscaped(path: string): Promise<number> {
  let out = new Uint8Array(1 << 20)
  const escape = (text: Uint8Array): void => {
    if (out.length < text.length * 2) out = new Uint8Array(text.length * 2)
    let o = 0
    for (let i = 0, n = text.length; i < n; i++) {
      const b = text[i]!
      if (JSON_ESCAPED[b] === 0) {
        out[o++] = b
        continue
      }
      // Two bytes for each, as `\n`, `\"` and `\\` are: the rarer controls' six would only cost more.
      out[o++] = 0x5c
      out[o++] = b === 0x0a ? 0x6e : b
    }
  }
  const visit = (data: Data): void => {
    if (DataType.isUtf8(data.type) || DataType.isLargeUtf8(data.type)) {
      const offsets = data.valueOffsets as Int32Array | BigInt64Array
      escape(data.values.subarray(Number(offsets[0]), Number(offsets[data.length])))
    }
    for (const child of data.children) visit(child)
    // A dictionary-encoded column's text is in its dictionary.
    for (const values of data.dictionary?.data ?? []) visit(values)
  }
  return eachParquetBatch(path, (batch) => {
    for (const data of tableFromIPC(batch.intoIPCStream()).data) visit(data)
  })
}

/**
 * evalferry's own Parquet reader producing plain row objects and nothing else: parsing the container
 * into records, as papaparse does for CSV. Shown beside the parquet-wasm baselines, not instead of them.
 */
export async function parquetReaderRows(path: string, { readParquet }: ParquetCodec): Promise<number> {
  let rows = 0
  for await (const _ of readParquet(path, { file: path, recordKeys: [], header: {}, columns: [] })) rows++
  return rows
}

/** evalferry's Parquet reader's row objects, each `JSON.stringify`'d onto its own line: the least a Parquet to JSON Lines conversion does. */
export async function parquetReaderToJsonl(path: string, output: string, { readParquet }: ParquetCodec): Promise<number> {
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
