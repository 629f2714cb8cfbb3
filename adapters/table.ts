/**
 * Any table (format `csv`, alias `table`): `.csv` and `.tsv` rows mapped to cases by the field
 * mapping of SPEC section 4 (`--map`, or the well-known column names; every other column goes to
 * `metadata`). Cells stay text. A header that the writer would not produce by itself (its own
 * column names, its own order) travels with the first case as `extras.csv.$file.columns`, with
 * the mapping it was read with, so that writing the cases back gives the same header.
 */
import { deepEqual, isCarry, lostFields } from '../src/carry.ts'
import { A_CASE } from './fields.ts'
import { fieldError, LayoutError } from '../src/errors.ts'
import { caseToRow, defaultColumns, isDefaultHeader, isRowMapper, mapRow, readRowOptions, unionColumns, withOwnColumns, writeRowOptions, type RowOptions, type RowReadOptions } from '../src/mapping.ts'
import { CARRY_KEY, isJsonObject, withoutFileKeys, withoutGenerated, type EvalCase, type JsonObject, type JsonValue } from '../src/model.ts'
import type { Adapter, Container, DecodeContext, EncodeContext, FieldMapping, FileLayout, SniffSample } from './types.ts'

const FORMAT = 'csv'
const TEXT: RowOptions = { format: FORMAT, text: true }

/** What a layout was chosen with, beyond its columns: the mapping the source table was read with. */
export const layoutMaps = new WeakMap<FileLayout, FieldMapping>()

/**
 * On the first row of a file: puts the header (and the user's mapping) into the file-level keys,
 * which reading hands to the first case as `extras[format].$file`, unless the header is one
 * that writing gives back by itself.
 */
export function rememberHeader(ctx: DecodeContext, columns: readonly string[]): void {
  if (ctx.state.header) return
  ctx.state.header = true
  const map = isRowMapper(ctx.map) ? undefined : ctx.map
  // The carry column is the writer's own; it comes and goes with what the cases need.
  const kept = columns.filter((c) => !map?.ignore?.includes(c) && c !== CARRY_KEY)
  const mapped = map && Object.keys(map).some((k) => k !== 'ignore')
  if (isDefaultHeader(kept) && !mapped) return
  ctx.header.columns = kept
  if (mapped) ctx.header.map = map as JsonObject
}

/** The file-level keys a source table left on the first case. */
export function fileKeys(sample: EvalCase[], format: string): JsonObject {
  const keys = sample[0]?.extras?.[format]?.$file
  return isJsonObject(keys) ? keys : {}
}

/** A table adapter's own encoding and decoding, and the context it writes in, for reading rows back. */
export interface ReadBack {
  format: string
  encode: (c: EvalCase, ctx: EncodeContext) => JsonObject
  decode: (record: unknown, ctx: DecodeContext) => EvalCase | EvalCase[]
  ectx: EncodeContext
}

/**
 * True when some case of the sample does not read back whole from a row under `columns`, so that
 * the file needs an `evalferry` column for the case encoder to carry the rest in. `encode` and
 * `decode` are the adapter's own, seeing the layout writing will give them. Never with
 * `--no-extras`, which drops the rest.
 */
export function sampleNeedsCarry(sample: EvalCase[], layout: FileLayout, { format, encode, decode, ectx }: ReadBack): boolean {
  if (ectx.extras === false) return false
  const dctx = readBackContext(ectx.container, layout, { ...(layout.header ?? {}) }, layout.columns ?? [])
  const ctx: EncodeContext = { ...ectx, layout }
  return sample.some((original, i) => {
    const c = withoutGenerated(i === 0 ? withoutFileKeys(original, format) : original)
    ctx.index = dctx.index = i
    const decoded = decode(encode(c, ctx), dctx)
    const back = Array.isArray(decoded) ? decoded[0] : decoded
    return !back || Object.keys(lostFields(c, back)).length > 0
  })
}

/** A context for decoding a row as a reader of a file under `layout` would. */
function readBackContext(container: Container, layout: FileLayout, header: JsonObject, columns: string[]): DecodeContext {
  return {
    file: '',
    container,
    header,
    index: 0,
    columns,
    ...(layout.schemaMetadata ? { schemaMetadata: layout.schemaMetadata } : {}),
    state: {},
    warn: () => {},
  }
}

const FILE = '$file'

/**
 * The file-level keys of the sample's source that a file under `layout` would not give back by
 * itself (a viewer header in JSON Lines, a mapping a CSV was read with), found by reading the
 * first row as the reader will; `{}` when reading gives them back.
 */
function fileKeysLost(sample: EvalCase[], layout: FileLayout, { format, encode, decode, ectx }: ReadBack): JsonObject {
  const original = fileKeys(sample, format)
  const first = sample[0]
  if (!first || Object.keys(original).length === 0) return {}
  const row = encode(withoutGenerated(withoutFileKeys(first, format)), { ...ectx, index: 0, layout })
  const header: JsonObject = {}
  decode(row, readBackContext(ectx.container, layout, header, ectx.container === 'jsonl' ? [] : (layout.columns ?? [])))
  // Headers that differ only by keys of later rows are one: those keys are the cases', and come with them.
  const extended = (keys: JsonObject): JsonObject => (isHeader(keys.columns) ? { ...keys, columns: extendedHeader(keys.columns, sample) } : keys)
  // Keys the written header adds (features a Parquet writer derived from the values) are the writer's, not lost ones.
  const [back, own] = [extended(header), extended(original)]
  return Object.entries(own).every(([key, value]) => Object.hasOwn(back, key) && deepEqual(back[key], value)) ? {} : original
}

/** Finds what the first row of a file under `layout` carries (see `FileLayout.fileCarry`); whether it carries anything. */
export function settleFileCarry(sample: EvalCase[], layout: FileLayout, readBack: ReadBack): boolean {
  layout.fileCarry = fileKeysLost(sample, layout, readBack)
  return readBack.ectx.extras !== false && Object.keys(layout.fileCarry).length > 0
}

/** `c` with the file-level keys its layout must carry, when it is the first case of the file. */
export function withFileCarry(c: EvalCase, ctx: EncodeContext): EvalCase {
  const keys = ctx.index === 0 && ctx.extras !== false ? ctx.layout?.fileCarry : undefined
  if (!keys || Object.keys(keys).length === 0) return c
  const carried = c.metadata?.[CARRY_KEY]
  return { ...c, metadata: { ...c.metadata, [CARRY_KEY]: { ...(isJsonObject(carried) ? carried : {}), [FILE]: keys } } }
}

/** Takes file-level keys a first row carried off the case and makes them the file's header again. */
export function takeFileCarry(c: EvalCase, ctx: DecodeContext): void {
  const carried = c.metadata?.[CARRY_KEY]
  if (!isJsonObject(carried) || !isJsonObject(carried[FILE])) return
  for (const key of Object.keys(ctx.header)) delete ctx.header[key]
  Object.assign(ctx.header, carried[FILE])
  const rest = { ...carried }
  delete rest[FILE]
  const metadata = { ...c.metadata }
  if (Object.keys(rest).length) metadata[CARRY_KEY] = rest
  else delete metadata[CARRY_KEY]
  if (Object.keys(metadata).length) c.metadata = metadata
  else delete c.metadata
}

/**
 * The columns a table of `sample` is written under: the source header (with the keys of JSON Lines
 * rows its first row lacked), or the union of default headers.
 */
export function sampleColumns(sample: EvalCase[], format: string, options: RowOptions): string[] {
  // An empty dataset still gets a header, as a table with none would not read back.
  if (!sample.length) return defaultColumns(A_CASE, options)
  const keys = fileKeys(sample, format)
  const columns = keys.columns
  if (isHeader(columns)) return extendedHeader(columns, sample)
  const union = unionColumns(sample.map((c, i) => defaultColumns(withoutGenerated(i === 0 ? withoutFileKeys(c, format) : c), options)))
  // A table of cases with no field at all still needs a column for its rows: the carry's, whose empty cells read back as nothing.
  return union.length ? union : [CARRY_KEY]
}

function isHeader(columns: JsonValue | undefined): columns is string[] {
  return Array.isArray(columns) && columns.every((c) => typeof c === 'string')
}

/** A source header and the metadata keys of the sample's cases it lacks (JSON Lines rows have their own keys), and the carry's column where a case has its own. */
export function extendedHeader(columns: string[], sample: EvalCase[]): string[] {
  let header = [...columns]
  for (const c of sample) header = withOwnColumns(header, c)
  // A case's own metadata.evalferry (a source column of that name) goes in the carry's column.
  if (!header.includes(CARRY_KEY) && sample.some((c) => c.metadata?.[CARRY_KEY] !== undefined)) header.push(CARRY_KEY)
  return header
}

/** The one error a case gets when it needs a column the streamed header no longer can add. */
export function missingCarryColumn(c: EvalCase, header: readonly string[]): void {
  const carried = c.metadata?.[CARRY_KEY]
  if (carried === undefined || header.includes(CARRY_KEY)) return
  const what = isCarry(carried) ? Object.keys(carried).join(', ') : `its own metadata.${CARRY_KEY}`
  throw new LayoutError(`this case needs an "${CARRY_KEY}" column to carry ${what}, but none of the first cases did, so the header has none; put a case like it among the first (the first 100, or as many of them as fill 32 MB)`, {
    field: CARRY_KEY,
  })
}

function decode(record: unknown, ctx: DecodeContext): EvalCase | EvalCase[] {
  if (!isJsonObject(record)) throw fieldError('', 'expected a table row')
  const columns = ctx.columns?.length ? ctx.columns : Object.keys(record)
  rememberHeader(ctx, columns)
  const decoded = mapRow(record, ctx.map, rowOptions(columns))
  if (Array.isArray(decoded)) for (const c of decoded) takeFileCarry(c, ctx)
  else takeFileCarry(decoded, ctx)
  return decoded
}

/** The row options of a header: the rows of one table share one object. */
let lastOptions = readRowOptions(TEXT, [], true)
function rowOptions(columns: readonly string[]): RowReadOptions {
  if (lastOptions.columns !== columns) lastOptions = readRowOptions(TEXT, columns, true)
  return lastOptions
}

function encode(original: EvalCase, ctx: EncodeContext): JsonObject {
  const c = withFileCarry(original, ctx)
  const header = ctx.layout?.columns ?? defaultColumns(c, TEXT)
  missingCarryColumn(c, header)
  const map = ctx.layout ? layoutMaps.get(ctx.layout) : undefined
  return caseToRow(c, header, writeRowOptions(TEXT, true, map))
}

const table: Adapter = {
  name: 'csv',
  mapsRows: true,
  headerOf: ['hf'],
  aliases: ['table'],
  title: 'any table (CSV, TSV): columns mapped to fields by --map or by well-known names',
  reads: ['csv'],
  writes: ['csv'],
  recordKeys: [],

  decode,
  encode,

  layout(container, sample, ctx): FileLayout {
    const keys = fileKeys(sample, FORMAT)
    const layout: FileLayout = { columns: sampleColumns(sample, FORMAT, TEXT) }
    if (isJsonObject(keys.map)) layoutMaps.set(layout, keys.map as FieldMapping)
    // A trial: what a record warns of is told when it is written.
    const readBack: ReadBack = { format: FORMAT, encode, decode, ectx: { ...ctx, container, warn: () => {} } }
    const fileCarry = settleFileCarry(sample, layout, readBack)
    if (!layout.columns!.includes(CARRY_KEY) && (fileCarry || sampleNeedsCarry(sample, layout, readBack))) {
      layout.columns!.push(CARRY_KEY)
    }
    return layout
  },

  sniff(sample: SniffSample): number {
    if (sample.container !== 'csv') return 0
    // Any table reads as one; the formats with their own columns score higher.
    return /\.tsv(\.gz)?$/i.test(sample.fileName) ? 0.5 : 0.2
  },
}

export default table
