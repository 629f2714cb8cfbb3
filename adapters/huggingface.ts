/**
 * Hugging Face dataset rows (format `hf`, alias `huggingface`): dataset-viewer `/rows` and
 * `/first-rows` responses, `Dataset.to_json` JSON Lines, CSV, and Parquet with the `huggingface`
 * features metadata. Rows map to cases through the shared field mapping (`src/mapping.ts`).
 *
 * Features are read from the viewer's `features` list or the Parquet schema metadata; a Parquet
 * file without them (as pyarrow and pandas write) has those `datasets` derives from its Arrow
 * schema, so that its columns keep their types (a column of a type the writer cannot write back,
 * a decimal say, has none, and its type is inferred from its values when writing, as without
 * features). A ClassLabel integer becomes its name in the case (-1, missing, becomes null); a Json
 * column's text is parsed;
 * Image and Audio cells keep their source (`{src, height, width}`, a list of `{src, type}`, bytes
 * as base64). The features travel with the first case (`extras.hf.$file.features`). Parquet is
 * written with the `huggingface` metadata so that `datasets` loads the right features: each column
 * has the Parquet type its feature names (integers of their width, binary, lists, dicts as structs,
 * a Sequence of a dict as a struct of lists, ClassLabel as integers, timestamps, Image,
 * Audio, Video and Pdf as a struct of bytes and path); a value its column cannot hold is written as
 * null and carried. Columns the Parquet writer cannot type exactly (objects of varying keys, media
 * given as links) are JSON-text columns: `Json` to evalferry, `Value("string")` in the file's
 * features, which every `datasets` loads (see `JSON_COLUMNS_KEY`).
 * JSON Lines and CSV have no features, so ClassLabel columns are written as their names there.
 */
import { deepEqual } from '../src/carry.ts'
import { parseExact, stringifyJson } from '../src/codecs/json.ts'
import { fitsColumnType, type ColumnType, type PrimitiveColumnType } from '../src/codecs/types.ts'
import { fieldError } from '../src/errors.ts'
import { caseToRow, defaultColumns, mapRow, readRowOptions, withOwnColumns, writeRowOptions, type RowOptions } from '../src/mapping.ts'
import { CARRY_KEY, hasKeys, isJsonObject, own, type EvalCase, type JsonObject, type JsonValue } from '../src/model.ts'
import {
  extendedHeader,
  fileKeys,
  layoutMaps,
  missingCarryColumn,
  rememberHeader,
  sampleColumns,
  sampleNeedsCarry,
  settleFileCarry,
  type ReadBack,
  takeFileCarry,
  withFileCarry,
} from './table.ts'
import { warnPandasMissing } from './fields.ts'
import type { Adapter, Container, DecodeContext, EncodeContext, FieldMapping, FileLayout, SniffSample } from './types.ts'

const FORMAT = 'hf'

/** A `datasets` feature as JSON: `{"_type": "Value", "dtype": "string"}`, `{"_type": "ClassLabel", "names": [...]}`... */
export type Feature = JsonValue
export type Features = { [column: string]: Feature }

const CSV_OPTIONS: RowOptions = { format: FORMAT, text: true }
// Parquet gives every row every column: a null there is a column the row has no value in.
const PARQUET_OPTIONS: RowOptions = { format: FORMAT, nullIsAbsent: true }
const JSON_OPTIONS: RowOptions = { format: FORMAT }

function rowOptions(container: Container): RowOptions {
  return container === 'csv' ? CSV_OPTIONS : container === 'parquet' ? PARQUET_OPTIONS : JSON_OPTIONS
}

/**
 * Features as a name → feature object, from the viewer's list form or the `datasets` dict form,
 * each in the spelling `datasets` gives back (see `currentFeature`).
 */
export function normalizeFeatures(value: unknown): Features | undefined {
  if (Array.isArray(value)) {
    const out: Features = {}
    for (const f of value) if (isJsonObject(f) && typeof f.name === 'string' && f.type !== undefined) out[f.name] = currentFeature(f.type)
    return out
  }
  return isJsonObject(value) ? mapValues(value, currentFeature) : undefined
}

/**
 * A feature as `datasets` (4 and later) gives it back, whatever spelling a file has: a `Sequence`
 * is a `List` (its length kept unless -1), a Sequence of a dict the dict of Lists it is stored as,
 * the older bare `[feature]` a List. A file written with this spelling loads with the same features.
 */
export function currentFeature(feature: Feature): Feature {
  if (Array.isArray(feature)) return feature.length === 1 ? { feature: currentFeature(feature[0]!), _type: 'List' } : feature
  if (!isJsonObject(feature)) return feature
  const t = typeOf(feature)
  if (t === undefined) return mapValues(feature, currentFeature)
  if (t !== 'Sequence' && t !== 'List' && t !== 'LargeList') return feature
  const inner = feature.feature
  if (inner === undefined) return feature
  const length = t !== 'LargeList' && typeof feature.length === 'number' && feature.length !== -1 ? feature.length : undefined
  const list = (f: Feature): Feature => {
    const out: JsonObject = { feature: currentFeature(f) }
    if (length !== undefined) out.length = length
    out._type = t === 'LargeList' ? 'LargeList' : 'List'
    return out
  }
  // Only a dict written as such (no `_type`) under a Sequence is stored as a dict of lists.
  if (t === 'Sequence' && isJsonObject(inner) && typeOf(inner) === undefined) return mapValues(inner, list)
  return list(inner)
}

/**
 * The features of the file being read: Parquet schema metadata, else (Parquet without them) the
 * Arrow schema's, else the viewer header. Found once per file, at its first row.
 */
function featuresOf(ctx: DecodeContext, first: JsonObject): Features | undefined {
  if (ctx.state.features !== undefined) return (ctx.state.features as Features | null) ?? undefined
  let features: Features | undefined
  const meta = ctx.schemaMetadata?.huggingface
  if (meta) {
    try {
      const parsed: unknown = JSON.parse(meta)
      features = isJsonObject(parsed) && isJsonObject(parsed.info) ? normalizeFeatures(parsed.info.features) : undefined
    } catch {
      ctx.warn('the Parquet "huggingface" metadata is not JSON; reading the features from the Arrow schema')
    }
  }
  // Columns evalferry wrote as JSON text, under a feature every `datasets` reads (see `JSON_COLUMNS_KEY`).
  const own = ownColumnsOf(ctx)
  if (own.json.length) features = { ...features, ...Object.fromEntries(own.json.map((column) => [column, JSON_FEATURE])) }
  if (own.features) features = { ...features, ...own.features }
  if (ctx.container === 'parquet' && ctx.columns?.length) features = withColumnFeatures(features, ctx.columns, ctx.columnTypes)
  // Reading hands file-level keys to the first case, so the features travel with it, unless
  // they are what writing infers from the values anyway (a chat column evalferry chose for its cases).
  const inferable = (key: string, f: Feature): boolean => isInferable(f, first[key]) || (own.chat.includes(key) && deepEqual(f, CHAT_FEATURE))
  if (features && ctx.header.features === undefined && !Object.entries(features).every(([key, f]) => inferable(key, f))) ctx.header.features = features
  features ??= normalizeFeatures(ctx.header.features)
  ctx.state.features = features ?? null
  return features
}

/**
 * The Parquet schema metadata key under which evalferry lists its JSON-text columns
 * (`{"json_columns": [...]}`). `datasets` knows the `Json` feature only from 4.7 on, and before
 * that refuses to load a file whose features name it; so such a column's feature is written as
 * `Value("string")`, which every version loads as the JSON text, and listed here for evalferry,
 * which reads it as the `Json` feature (its values parsed). `chat_columns` lists the chat columns
 * evalferry chose for the cases it wrote (no source named their feature), which it chooses again;
 * `features`, the features it means where `datasets` gives another (see `loadedAs`).
 */
const JSON_COLUMNS_KEY = 'evalferry'

function ownColumnsOf(ctx: DecodeContext): { json: string[]; chat: string[]; features?: Features } {
  const meta = ctx.schemaMetadata?.[JSON_COLUMNS_KEY]
  if (meta === undefined) return { json: [], chat: [] }
  const names = (value: unknown): value is string[] | undefined => value === undefined || (Array.isArray(value) && value.every((c) => typeof c === 'string'))
  try {
    const parsed: unknown = JSON.parse(meta)
    if (isJsonObject(parsed) && names(parsed.json_columns) && names(parsed.chat_columns) && (parsed.features === undefined || isJsonObject(parsed.features)) && hasKeys(parsed)) {
      return {
        json: (parsed.json_columns as string[] | undefined) ?? [],
        chat: (parsed.chat_columns as string[] | undefined) ?? [],
        ...(isJsonObject(parsed.features) ? { features: parsed.features } : {}),
      }
    }
  } catch {
    // Reported below, as a value of another shape is.
  }
  ctx.warn(`the Parquet "${JSON_COLUMNS_KEY}" metadata is not {"json_columns": [...]}; its columns are read as the features say`)
  return { json: [], chat: [] }
}

/**
 * A feature as `datasets` loads it from Parquet: pyarrow stores a timestamp of seconds as
 * milliseconds and reads it back so, whatever the file's features say (`datasets` gives a file it
 * wrote itself timestamp[ms] too).
 */
function loadedAs(feature: Feature): Feature {
  if (Array.isArray(feature)) return feature.map(loadedAs)
  if (!isJsonObject(feature)) return feature
  if (isSeconds(feature)) return { ...feature, dtype: String(feature.dtype).replace(/^timestamp\[s/, 'timestamp[ms') }
  return mapValues(feature, loadedAs)
}

/**
 * The features of a Parquet file's metadata (if any), with one for each of the file's `columns`
 * they name none for (every column, in a file pyarrow or pandas wrote), as `datasets` derives it
 * from the column's Arrow type (`Features.from_arrow_schema`) from the column types the reader
 * gives: null, no feature, where the writer cannot write that type back or the type is unknown.
 * Writing infers the type of a column of null from its values, and leaves it out of the metadata,
 * where `datasets` then derives its feature from the type written.
 */
function withColumnFeatures(features: Features | undefined, columns: readonly string[], types: Record<string, ColumnType> | undefined): Features {
  const named = (column: string) => features !== undefined && Object.hasOwn(features, column)
  // The carry column is the writer's own; it comes and goes with what the cases need.
  if (features && columns.every((column) => column === CARRY_KEY || named(column))) return features
  const out: Features = {}
  for (const column of columns) {
    if (named(column)) out[column] = features![column]!
    else if (column !== CARRY_KEY) out[column] = types && Object.hasOwn(types, column) ? featureOf(types[column]!) : null
  }
  // Features of columns the file does not have stay, as they did.
  for (const [column, feature] of Object.entries(features ?? {})) if (!Object.hasOwn(out, column)) out[column] = feature
  return out
}

/**
 * The feature `datasets` gives an Arrow type (`generate_from_arrow_type`), as JSON: a Value of the
 * type's name (the column types' primitives are named as `datasets` names them), a List (with its
 * length when fixed) or LargeList of the item's feature, a dict for a struct.
 */
function featureOf(type: ColumnType): Feature {
  if (typeof type === 'string') return { dtype: type, _type: 'Value' }
  if ('timestamp' in type) return { dtype: `timestamp[${TIME_UNITS[type.timestamp]}${type.zone ? `, tz=${type.zone}` : ''}]`, _type: 'Value' }
  if ('list' in type) {
    const feature = featureOf(type.list)
    if (type.large) return { feature, _type: 'LargeList' }
    return type.size === undefined ? { feature, _type: 'List' } : { feature, length: type.size, _type: 'List' }
  }
  return Object.fromEntries(Object.entries(type.struct).map(([key, t]) => [key, featureOf(t)]))
}

/** A timestamp of whole seconds, which Parquet stores in milliseconds (see `storedUnit` in the Parquet codec). */
function isSeconds(feature: Feature | undefined): boolean {
  return isJsonObject(feature) && typeOf(feature) === 'Value' && /^timestamp\[s[,\]]/.test(String(feature.dtype))
}

/** Whether `fromFeature` changes values under `feature`: it holds a ClassLabel, Json or a timestamp of seconds, at any depth. */
function changesValues(feature: Feature | undefined): boolean {
  if (Array.isArray(feature)) return feature.some(changesValues)
  if (!isJsonObject(feature)) return false
  const t = typeOf(feature)
  if (t === 'ClassLabel' || t === 'Json' || isSeconds(feature)) return true
  return t === undefined ? Object.values(feature).some(changesValues) : changesValues(innerOf(feature))
}

function typeOf(feature: Feature | undefined): string | undefined {
  return isJsonObject(feature) && typeof feature._type === 'string' ? feature._type : undefined
}

function innerOf(feature: Feature | undefined): Feature | undefined {
  if (Array.isArray(feature)) return feature[0]
  const t = typeOf(feature)
  return (t === 'List' || t === 'Sequence' || t === 'LargeList') && isJsonObject(feature) ? feature.feature : undefined
}

/** A Sequence of a dict, which `datasets` stores as a dict of lists: that dict of List features. */
function asDictOfLists(feature: Feature | undefined): JsonObject | undefined {
  const inner = typeOf(feature) === 'Sequence' ? innerOf(feature) : undefined
  if (!isJsonObject(inner) || typeOf(inner) !== undefined) return undefined
  const out: JsonObject = {}
  const length = (feature as JsonObject).length
  for (const [key, f] of Object.entries(inner)) out[key] = { feature: f, ...(length !== undefined && length !== -1 ? { length } : {}), _type: 'List' }
  return out
}

/** A stored cell to its canonical value under its feature (ClassLabel index → name, Json text → value). */
export function fromFeature(value: JsonValue, feature: Feature | undefined): JsonValue {
  if (value === null || feature === undefined) return value
  feature = asDictOfLists(feature) ?? feature
  const t = typeOf(feature)
  if (t === 'ClassLabel' && typeof value === 'number' && isJsonObject(feature) && Array.isArray(feature.names)) {
    // -1, the label `datasets` gives a row without one, stays -1: a missing cell (null) is another value.
    const name = feature.names[value]
    return typeof name === 'string' ? name : value
  }
  // Seconds stored as milliseconds read as `…:05.000`: the feature's seconds are `…:05`.
  if (typeof value === 'string' && isSeconds(feature)) return value.replace(/\.000(Z?)$/, '$1')
  if (t === 'Json' && typeof value === 'string') {
    try {
      return parseExact(value).value as JsonValue
    } catch {
      return value
    }
  }
  const inner = innerOf(feature)
  if (inner !== undefined) return Array.isArray(value) ? value.map((v) => fromFeature(v, inner)) : value
  if (t === undefined && isJsonObject(feature) && isJsonObject(value)) {
    const out: JsonObject = {}
    for (const [k, v] of Object.entries(value)) out[k] = fromFeature(v, feature[k])
    return out
  }
  return value
}

/** A canonical value to the cell its feature stores (name → ClassLabel index, value → Json text). */
export function toFeature(value: JsonValue, feature: Feature | undefined): JsonValue {
  if (feature === undefined) return value
  const t = typeOf(feature)
  if (t === 'ClassLabel' && isJsonObject(feature) && Array.isArray(feature.names)) {
    const i = typeof value === 'string' ? feature.names.indexOf(value) : -1
    return i === -1 ? value : i
  }
  if (value === null) return null
  if (t === 'Json') return stringifyJson(value)
  // Text columns take a value's JSON; other values a column cannot hold are written as null by `encode`, and carried.
  if (t === 'Value' && isJsonObject(feature)) return /string/.test(String(feature.dtype)) && typeof value !== 'string' ? stringifyJson(value) : value
  const dict = asDictOfLists(feature) ?? (t === undefined && isJsonObject(feature) ? feature : undefined)
  if (dict && isJsonObject(value)) return mapValues(value, (v, key) => toFeature(v, dict[key]))
  const inner = innerOf(feature)
  if (inner !== undefined && Array.isArray(value)) return value.map((v) => toFeature(v, inner))
  return value
}

const TIME_UNITS = ['s', 'ms', 'us', 'ns']

const DTYPES: Record<string, PrimitiveColumnType> = {
  string: 'string',
  large_string: 'large_string',
  binary: 'binary',
  large_binary: 'large_binary',
  bool: 'bool',
  null: 'null',
  date32: 'date32',
  date64: 'date64',
  int8: 'int8',
  int16: 'int16',
  int32: 'int32',
  int64: 'int64',
  uint8: 'uint8',
  uint16: 'uint16',
  uint32: 'uint32',
  uint64: 'uint64',
  float16: 'float16',
  float32: 'float32',
  float: 'float32',
  float64: 'float64',
  double: 'float64',
}

/** Features `datasets` stores as their file's bytes and path (`{bytes, path}`, bytes as base64 here). */
const MEDIA_FEATURES = ['Image', 'Audio', 'Video', 'Pdf']
const MEDIA: ColumnType = { struct: { bytes: 'binary', path: 'string' } }

/**
 * The Parquet column type `datasets` stores a feature as, where the writer can: Values of text,
 * binary, booleans, integers, floats, dates, timestamps and nulls; ClassLabel as int64; lists; dicts as structs,
 * and a Sequence of a dict as a struct of lists, as `datasets` lays it out; Image, Audio, Video and
 * Pdf as a struct of bytes and path; Translation and TranslationVariableLanguages as their structs.
 * Others (Json...) are undefined.
 */
function columnTypeOf(feature: Feature | undefined): ColumnType | undefined {
  const t = typeOf(feature)
  if (!isJsonObject(feature) && !Array.isArray(feature)) return undefined
  if (t !== undefined && MEDIA_FEATURES.includes(t)) return MEDIA
  if (t === 'Value') {
    const dtype = String((feature as JsonObject).dtype)
    const stamp = /^timestamp\[(s|ms|us|ns)(?:, tz=([^\]]+))?\]$/.exec(dtype)
    if (stamp) return { timestamp: TIME_UNITS.indexOf(stamp[1]!) as 0 | 1 | 2 | 3, ...(stamp[2] ? { zone: stamp[2] } : {}) }
    return own(DTYPES, dtype)
  }
  if (t === 'ClassLabel') return 'int64'
  // As `datasets` stores them: a struct of one text per language (sorted), or of two aligned lists.
  const languages = (feature as JsonObject).languages
  if (t === 'Translation' && Array.isArray(languages) && languages.every((l) => typeof l === 'string')) {
    return { struct: Object.fromEntries([...(languages as string[])].sort().map((language) => [language, 'string' as const])) }
  }
  if (t === 'TranslationVariableLanguages') return { struct: { language: { list: 'string' }, translation: { list: 'string' } } }
  const inner = innerOf(feature)
  if (inner !== undefined) {
    const dict = asDictOfLists(feature)
    if (dict) return columnTypeOf(dict)
    const item = columnTypeOf(inner)
    if (t === 'LargeList') return item && { list: item, large: true }
    // A Sequence or List of fixed length is Arrow's fixed-size list; the older `[feature]` has none.
    const length = Array.isArray(feature) ? undefined : (feature as JsonObject).length
    const size = typeof length === 'number' && Number.isInteger(length) && length >= 0 ? { size: length } : {}
    return item && { list: item, ...size }
  }
  if (t !== undefined || Array.isArray(feature)) return undefined
  // A dict of no keys would be a struct of no fields, which Parquet cannot hold.
  if (!hasKeys(feature)) return undefined
  const struct: Record<string, ColumnType> = {}
  for (const [key, f] of Object.entries(feature)) {
    const type = columnTypeOf(f)
    if (!type) return undefined
    struct[key] = type
  }
  return { struct }
}

function mapValues(object: JsonObject, f: (value: JsonValue, key: string) => JsonValue): JsonObject {
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(object)) out[key] = f(value, key)
  return out
}

const STRING: Feature = { dtype: 'string', _type: 'Value' }
const JSON_FEATURE: Feature = { _type: 'Json' }

/**
 * The feature a column is written with in Parquet: the source's when the Parquet writer stores
 * it as `datasets` expects (see `columnTypeOf`), else Json text. A media column none of whose
 * sampled cells are bytes and path (the viewer's `{src, height, width}`, say) is Json text too.
 * Without a feature (none in the source, or null: none for its Arrow type), one that holds the
 * sampled values.
 */
function writableFeature(feature: Feature | undefined, values: JsonValue[]): Feature {
  if (feature === null) feature = undefined
  const type = feature === undefined ? undefined : columnTypeOf(feature)
  if (type === MEDIA && values.some((v) => v !== null) && !values.some((v) => v !== null && fitsColumnType(MEDIA, v))) return JSON_FEATURE
  if (feature !== undefined && type) return feature
  if (typeOf(feature) === 'Value') return STRING
  if (feature !== undefined) return JSON_FEATURE
  const present = values.filter((v) => v !== null)
  if (present.length === 0) return JSON_FEATURE
  if (present.every((v) => typeof v === 'string')) return STRING
  if (present.every((v) => typeof v === 'boolean')) return { dtype: 'bool', _type: 'Value' }
  if (present.every((v) => typeof v === 'number' && Number.isSafeInteger(v))) return { dtype: 'int64', _type: 'Value' }
  if (present.every((v) => typeof v === 'number')) return { dtype: 'float64', _type: 'Value' }
  if (present.every((v) => Array.isArray(v) && v.every((x) => typeof x === 'string'))) return { feature: STRING, _type: 'List' }
  if (present.every(isChat)) return CHAT_FEATURE
  return JSON_FEATURE
}

/** A chat as `datasets` holds one: `List({role, content})` of text, the feature a `messages` column of plain messages has. */
const CHAT_FEATURE: Feature = { feature: { role: STRING, content: STRING }, _type: 'List' }

/**
 * Messages of a role and text content alone, each key in that order: what a struct of role and
 * content gives back exactly (another key, or content blocks, would come back as nulls or text).
 */
function isChat(value: JsonValue): boolean {
  if (!Array.isArray(value) || value.length === 0) return false
  return value.every((m) => {
    if (!isJsonObject(m)) return false
    const keys = Object.keys(m)
    return keys.length === 2 && keys[0] === 'role' && keys[1] === 'content' && typeof m.role === 'string' && (typeof m.content === 'string' || m.content === null)
  })
}

/**
 * Whether writing Parquet gives this feature back from the values alone (see `writableFeature`),
 * judged by the file's first row, which is among the values a writer infers from.
 */
function isInferable(feature: Feature, first: JsonValue | undefined): boolean {
  // No feature: writing infers one, as it always did.
  if (feature === null) return true
  if (deepEqual(feature, JSON_FEATURE) || deepEqual(feature, STRING)) return true
  if (typeOf(feature) === 'Value' && isJsonObject(feature) && Object.keys(feature).length === 2) {
    // JavaScript holds 2.0 as 2: a float64 column is inferred as one only from a value with a fraction.
    if (feature.dtype === 'float64') return typeof first === 'number' && !Number.isInteger(first)
    return ['bool', 'int64'].includes(String(feature.dtype))
  }
  return deepEqual(feature, { feature: STRING, _type: 'List' })
}

/** The features each Parquet layout was chosen with, for encoding its rows. */
const layoutFeatures = new WeakMap<FileLayout, Features>()

function isViewerResponse(record: JsonObject): boolean {
  return Array.isArray(record.features) || 'num_rows_total' in record || ('dataset' in record && 'config' in record && 'split' in record)
}

function decode(record: unknown, ctx: DecodeContext): EvalCase | EvalCase[] {
  if (!isJsonObject(record)) throw fieldError('', 'expected a row (an object of columns)')
  const options = rowOptions(ctx.container)
  let row: JsonObject = record
  let rowIdx: JsonValue | undefined
  if (ctx.container === 'json' && isJsonObject(record.row) && ('row_idx' in record || 'truncated_cells' in record)) {
    rowIdx = record.row_idx
    row = record.row
    const truncated = record.truncated_cells
    if (Array.isArray(truncated)) {
      for (const name of truncated) ctx.warn(`the dataset viewer truncated this cell; its value is incomplete`, `row.${String(name)}`)
    }
  } else if (ctx.container === 'json' && 'row' in record && 'row_idx' in record) {
    throw fieldError('row', 'expected the row as an object of columns')
  } else if (ctx.container === 'json' && isViewerResponse(record)) {
    throw fieldError('rows', 'a dataset-viewer response needs a "rows" list of {row_idx, row, truncated_cells}')
  }

  const features = ctx.container === 'csv' ? undefined : featuresOf(ctx, row)
  // Only ClassLabel and Json features change a cell; without them the row is read as it is.
  if (features && (ctx.state.changesValues ??= Object.values(features).some(changesValues))) {
    const typed: JsonObject = {}
    for (const [k, v] of Object.entries(row)) typed[k] = fromFeature(v, features[k])
    row = typed
  }
  // The file's own order: a JavaScript object lists keys such as "1" first, wherever the file has them.
  const columns = features ? ((ctx.state.featureColumns as string[] | undefined) ??= inFileOrder(Object.keys(features), ctx.columns)) : ctx.columns?.length ? ctx.columns : Object.keys(row)
  // A viewer row's `row_idx` becomes a column of the table (below), the last of the header.
  rememberHeader(ctx, rowIdx !== undefined && !columns.includes('row_idx') ? [...columns, 'row_idx'] : columns)
  const decoded = mapRow(row, ctx.map, readRowOptions(options, columns, ctx.container === 'csv' || ctx.container === 'parquet'))
  for (const c of Array.isArray(decoded) ? decoded : [decoded]) takeFileCarry(c, ctx)
  // The row's place in the dataset is worth keeping as data: it is written back as a `row_idx` column.
  if (rowIdx !== undefined && !Array.isArray(decoded) && !(decoded.metadata && 'row_idx' in decoded.metadata)) {
    decoded.metadata = { ...decoded.metadata, row_idx: rowIdx }
  }
  return decoded
}

/** `names` in the order of `order` (a file's columns), those it lacks after them. */
function inFileOrder(names: string[], order: readonly string[] | undefined): string[] {
  if (!order?.length) return names
  const named = new Set(names)
  const ordered = order.filter((c) => named.has(c))
  const placed = new Set(ordered)
  return [...ordered, ...names.filter((n) => !placed.has(n))]
}

function encode(original: EvalCase, ctx: EncodeContext): JsonObject {
  const record = encodeRow(original, ctx)
  if (ctx.container === 'csv') warnPandasMissing(record, ctx, 'the CSV reader of datasets')
  return record
}

function encodeRow(original: EvalCase, ctx: EncodeContext): JsonObject {
  const c = withFileCarry(original, ctx)
  const options = rowOptions(ctx.container)
  let header = ctx.layout?.columns ?? defaultColumns(c, options)
  // A JSON Lines record may add its own keys and the carry key; a table's header is fixed.
  if (ctx.container === 'jsonl' && ctx.layout?.columns) header = withOwnColumns(header, c)
  if (ctx.container === 'jsonl' && c.metadata?.[CARRY_KEY] !== undefined && !header.includes(CARRY_KEY)) header = [...header, CARRY_KEY]
  missingCarryColumn(c, header)
  const map = ctx.layout ? layoutMaps.get(ctx.layout) : undefined
  const row = caseToRow(c, header, writeRowOptions(options, ctx.container !== 'jsonl', map))
  const features = ctx.layout ? layoutFeatures.get(ctx.layout) : undefined
  if (!features) return row
  const types = ctx.layout?.columnTypes ?? {}
  const stored: JsonObject = {}
  for (const [k, v] of Object.entries(row)) stored[k] = storedCell(k, v, features, types)
  return stored
}

/** A row's value as its column stores it: in its feature's form; null where the column's type cannot hold it, as the carry keeps it. */
function storedCell(column: string, value: JsonValue, features: Features, types: Record<string, ColumnType>): JsonValue {
  const cell = toFeature(value, own(features, column))
  const type = own(types, column)
  return type && !fitsColumnType(type, cell) ? null : cell
}

/**
 * `row` with `carried` in its carry column, as `encodeRow` puts it there: last in a JSON Lines
 * row, in its column of a table's. Undefined where only encoding the case again tells: a row that holds a
 * carry already (a file's first row may carry the file's keys), a JSON Lines header whose carry
 * column is not its last, a table's header with none, a mapping that leaves the carry column out.
 */
function placeCarry(row: JsonObject, carried: JsonObject, _c: EvalCase, ctx: EncodeContext): JsonObject | undefined {
  // A table's row has every column: the carry's is empty (null, or '' in a CSV row) where it carries nothing.
  const held = own(row, CARRY_KEY)
  if (held !== undefined && held !== null && held !== '') return undefined
  const columns = ctx.layout?.columns
  if (ctx.container === 'jsonl' ? columns?.includes(CARRY_KEY) && columns.at(-1) !== CARRY_KEY : !columns?.includes(CARRY_KEY)) return undefined
  const map = ctx.layout ? layoutMaps.get(ctx.layout) : undefined
  if (map?.ignore?.includes(CARRY_KEY)) return undefined
  const value = rowOptions(ctx.container).text ? stringifyJson(carried) : carried
  const features = ctx.layout ? layoutFeatures.get(ctx.layout) : undefined
  return { ...row, [CARRY_KEY]: features ? storedCell(CARRY_KEY, value, features, ctx.layout?.columnTypes ?? {}) : value }
}

const huggingface: Adapter = {
  name: 'hf',
  mapsRows: true,
  headerOf: ['csv'],
  aliases: ['huggingface'],
  title: 'Hugging Face dataset rows: dataset-viewer responses, to_json JSON Lines, CSV, Parquet with features',
  reads: ['parquet', 'jsonl', 'json', 'csv'],
  writes: ['jsonl', 'parquet', 'csv'],
  recordKeys: ['rows'],

  decode,
  encode,
  placeCarry,

  layout(container, sample, ctx): FileLayout {
    const options = rowOptions(container)
    const keys = fileKeys(sample, FORMAT)
    const source = normalizeFeatures(keys.features)
    // The source's feature columns are its header (a chat's `messages` column holds its input and
    // expected output); what the cases hold beyond them comes after.
    const columns = source && !Array.isArray(keys.columns) ? extendedHeader(Object.keys(source), sample) : sampleColumns(sample, FORMAT, options)
    const layout: FileLayout = { columns }
    if (isJsonObject(keys.map)) layoutMaps.set(layout, keys.map as FieldMapping)
    // A trial: what a record warns of is told when it is written.
    const readBack: ReadBack = { format: FORMAT, encode, decode, ectx: { ...ctx, container, warn: () => {} } }
    const fileCarry = (l: FileLayout): boolean => settleFileCarry(sample, l, readBack)
    if (container === 'jsonl') {
      fileCarry(layout)
      return layout
    }
    const needsCarry = (l: FileLayout) => fileCarry(l) || sampleNeedsCarry(sample, l, readBack)
    if (container === 'csv') {
      if (!columns.includes(CARRY_KEY) && needsCarry(layout)) columns.push(CARRY_KEY)
      return layout
    }
    // Parquet: features from the source where the writer stores them faithfully, else from the values.
    const withFeatures = (cols: string[]): FileLayout => {
      const rows = sample.map((c) => caseToRow(c, cols, writeRowOptions(options, true, undefined)))
      const features: Features = {}
      for (const col of cols) features[col] = writableFeature(source?.[col], rows.map((r) => r[col] ?? null))
      if (cols.includes(CARRY_KEY)) features[CARRY_KEY] = JSON_FEATURE
      const columnTypes: Record<string, ColumnType> = {}
      for (const col of cols) {
        const type = columnTypeOf(features[col])
        if (type) columnTypes[col] = type
      }
      // A column the source has no feature for (null) has none in the metadata either: `datasets`
      // derives it from the type written, and reading the file gives null back, as the source had.
      // The features are those `datasets` gives back; where evalferry means another (seconds), it keeps that one.
      const described = Object.fromEntries(
        Object.entries(features)
          .filter(([col]) => !(source && Object.hasOwn(source, col) && source[col] === null))
          .map(([col, feature]) => [col, deepEqual(feature, JSON_FEATURE) ? STRING : loadedAs(feature)]),
      )
      const meant = Object.fromEntries(Object.entries(features).filter(([col, feature]) => !deepEqual(feature, JSON_FEATURE) && Object.hasOwn(described, col) && !deepEqual(described[col], feature)))
      const jsonColumns = cols.filter((col) => deepEqual(features[col], JSON_FEATURE))
      const chatColumns = cols.filter((col) => deepEqual(features[col], CHAT_FEATURE) && !(source && Object.hasOwn(source, col)))
      const own = {
        ...(jsonColumns.length ? { json_columns: jsonColumns } : {}),
        ...(chatColumns.length ? { chat_columns: chatColumns } : {}),
        ...(hasKeys(meant) ? { features: meant } : {}),
      }
      const l: FileLayout = {
        columns: cols,
        header: { features },
        schemaMetadata: {
          huggingface: JSON.stringify({ info: { features: described } }),
          ...(hasKeys(own) ? { [JSON_COLUMNS_KEY]: JSON.stringify(own) } : {}),
        },
        columnTypes,
      }
      layoutFeatures.set(l, features)
      const map = layoutMaps.get(layout)
      if (map) layoutMaps.set(l, map)
      return l
    }
    let parquet = withFeatures(columns)
    if (!columns.includes(CARRY_KEY) && needsCarry(parquet)) {
      parquet = withFeatures([...columns, CARRY_KEY])
      fileCarry(parquet)
    }
    return parquet
  },

  sniff(sample: SniffSample): number {
    const first = sample.records[0]
    if (sample.container === 'parquet') return 0.6
    if (sample.container === 'json') {
      if (Array.isArray(sample.header.features) && isJsonObject(first) && 'row_idx' in first && 'row' in first) return 0.95
      return isJsonObject(first) && Array.isArray(first.features) ? 0.6 : 0
    }
    if (sample.container === 'jsonl' && isJsonObject(first)) {
      // Rows evalferry wrote: only rows carry beside their columns (other formats carry inside their metadata).
      if (sample.records.some((r) => isJsonObject(r) && isJsonObject(r[CARRY_KEY]))) return 0.96
      // Flat rows with a well-known column: to_json output, but other formats' records match better.
      const keys = Object.keys(first)
      return keys.some((k) => ['messages', 'question', 'prompt', 'instruction', 'text', 'label'].includes(k)) ? 0.3 : 0.1
    }
    return sample.container === 'csv' ? 0.15 : 0
  },
}

export default huggingface
