/** Parquet files for tests: built from Arrow data, as pyarrow or `datasets` write them, or by evalferry's own writer. */
import { writeFile } from 'node:fs/promises'
import { type Data, Field, makeData, RecordBatch, Schema, Struct, Table, tableToIPC } from 'apache-arrow'
import { Table as WasmTable, writeParquet, type WriterProperties } from 'parquet-wasm'
import { parquetWriter, type ParquetWriteOptions } from '../../src/codecs/parquet.ts'
import type { ColumnType, Sink } from '../../src/codecs/types.ts'
import type { JsonObject } from '../../src/model.ts'

/** A Parquet file at `path` of these columns (nullable, in order), in one row group, with this schema metadata (and writer's `properties`). */
export async function arrowParquet(path: string, columns: Record<string, Data>, metadata?: Map<string, string>, properties?: WriterProperties): Promise<string> {
  const children = Object.values(columns)
  const schema = new Schema(
    Object.entries(columns).map(([name, data]) => new Field(name, data.type, true)),
    metadata,
  )
  const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: children[0]!.length, nullCount: 0, children }))
  await writeFile(path, writeParquet(WasmTable.fromIPCStream(tableToIPC(new Table([batch]), 'stream')), properties))
  return path
}

/** `records` written to `path` by evalferry's Parquet writer under `layout`. */
export async function writerParquet(
  path: string,
  records: JsonObject[],
  layout: { columns?: string[]; schemaMetadata?: Record<string, string>; columnTypes?: Record<string, ColumnType> } = {},
  options: ParquetWriteOptions = {},
): Promise<string> {
  const chunks: Uint8Array[] = []
  const sink: Sink = {
    async write(chunk) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
    },
  }
  const writer = parquetWriter(sink, layout, options)
  for (const r of records) await writer.write(r)
  await writer.end()
  await writeFile(path, Buffer.concat(chunks))
  return path
}
