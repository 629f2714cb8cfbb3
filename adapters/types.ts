import type { ColumnType } from '../src/codecs/types.ts'
import type { EvalCase, JsonObject } from '../src/model.ts'

export type FormatName = 'evalcase' | 'deepeval' | 'langsmith' | 'hf' | 'csv' | 'evals' | 'promptfoo'
/** Other names a format answers to: the tool's (`agentv`, `huggingface`) or the older one (`table`, `evalcase_json`). */
export type FormatAlias = 'agentv' | 'huggingface' | 'table' | 'evalcase_json'
/** A format as an option takes it: its name or an alias (the command line also takes any case). */
export type FormatOption = FormatName | FormatAlias
export type Container = 'json' | 'jsonl' | 'csv' | 'yaml' | 'parquet'

/** A field mapping for tables (SPEC section 4): canonical field to source column(s) or dotted path(s). */
export interface FieldMapping {
  input?: string
  expected_output?: string
  context?: string
  id?: string
  /** Columns that go to `metadata`; every unmapped column goes there anyway. */
  metadata?: string[]
  /** Columns to leave out. */
  ignore?: string[]
  /** Any other canonical field: `expected_outcome`, `tags`, `retrieval_context`, `name`, `split`... */
  [field: string]: string | string[] | undefined
}

/** A user function that maps one table row to cases (the library form of `--map`). */
export type RowMapper = (row: JsonObject) => EvalCase | EvalCase[]

export interface DecodeContext {
  /** The file being read, for messages. */
  file: string
  container: Container
  /** File-level keys seen so far (those that precede the record list in a JSON or YAML document). */
  header: JsonObject
  /** 0-based index of the record within the file. */
  index: number
  /** Table column order, for CSV and Parquet. */
  columns?: string[]
  map?: FieldMapping | RowMapper
  /** Parquet: the file's schema metadata (the `huggingface` features key), once the reader has it. */
  schemaMetadata?: Record<string, string>
  /** Parquet: the type of each column the writer writes back as it was, once the reader has it (see `ReadOptions.columnTypes`). */
  columnTypes?: Record<string, ColumnType>
  /** Scratch space that lives as long as one file is read (e.g. which kind of record came first). */
  state: Record<string, unknown>
  /** The format the cases will be written in, when a conversion reads them (see `ReadOptions.target`). */
  target?: FormatName
  /** Report a warning about the current record (a truncated cell, a deprecated key). */
  warn(message: string, field?: string): void
}

export interface EncodeContext {
  container: Container
  /** `agentv` for evalcase's `tests:`/`criteria` dialect; adapter-specific otherwise. */
  dialect?: string
  /** 0-based index of the case among those written to this file. */
  index: number
  /** The layout chosen for the file (columns of a table, say), once chosen. */
  layout?: FileLayout
  /** False with `--no-extras`: what the format cannot hold is dropped, so a layout makes no room to carry it. */
  extras?: false
  warn(message: string, field?: string): void
}

/** How the records sit inside one output file. */
export interface FileLayout {
  /** Keys written before the record list (evalcase `description`, `execution`...). */
  header?: JsonObject
  /** The key that holds the record list in a JSON or YAML document; absent: a top-level list. */
  listKey?: string
  /**
   * A file, relative to the output, that holds the records in place of the list (AgentV's
   * `tests: ./dataset.jsonl`): the output holds the header and, under the list key, that name.
   */
  casesFile?: string
  /** Table columns in order, for CSV and Parquet; a record may not add columns after these. */
  columns?: string[]
  /** JSON indent; DeepEval writes 4. */
  indent?: number
  /** Python's `json.dumps` spacing (`", "`, `": "`) in JSON Lines and in JSON text cells. */
  pythonSpacing?: boolean
  /** CSV line ending. */
  newline?: '\n' | '\r\n'
  /** CSV cell delimiter: a comma unless the file is `.tsv`. */
  delimiter?: string
  /** File-level metadata for Parquet (the `huggingface` features key). */
  schemaMetadata?: Record<string, string>
  /** A JSON document of one record, the object alone (see `Adapter.singleRecord`). */
  single?: boolean
  /** Parquet column types to write instead of inferring them from the first records. */
  columnTypes?: Record<string, ColumnType>
  /**
   * A table's own finding, made by reading its first row back: the source's file-level keys the
   * written file would not give back (`{}`: it gives them all back), which its first row carries.
   * Absent: the pipeline compares the header it reads back.
   */
  fileCarry?: JsonObject
}

/** A field of a record that the format's own tool refuses or skips, and why. */
export interface Refusal {
  field: string
  message: string
}

export interface SniffSample {
  container: Container
  /** The first records of the file, parsed. */
  records: unknown[]
  /** File-level keys of a JSON or YAML document. */
  header: JsonObject
  /** Table columns, for CSV and Parquet. */
  columns?: string[]
  fileName: string
}

/**
 * A dataset format. It maps one parsed record to canonical cases and back, and does no I/O: a
 * codec reads and writes the container, the pipeline moves records between them.
 */
export interface Adapter {
  name: FormatName
  aliases: string[]
  /** One-line description for `--help` and `detect`. */
  title: string
  reads: Container[]
  writes: Container[]
  /** Keys of a JSON or YAML document that hold the record list (`evalcases`, `goldens`, `rows`...). */
  recordKeys: string[]
  /** Whether its rows are mapped to fields (`--map`, `ReadOptions.map`): a table's columns, or LangSmith's inputs and outputs. */
  mapsRows?: boolean
  /**
   * Table formats whose header (`extras[format].$file.columns`) it writes under when the cases bring
   * none of its own: a table read as one and written as the other keeps its column names.
   */
  headerOf?: FormatName[]

  /**
   * One record to cases. Throws `fieldError(path, message)` for a bad field; the pipeline adds
   * file and line. The `evalferry` key of the format's free-form slot arrives as
   * `metadata.evalferry` and the pipeline applies it, so decode leaves it there.
   */
  decode(record: unknown, ctx: DecodeContext): EvalCase | EvalCase[]

  /**
   * One case to a record. What the case holds beyond what the format expresses goes, by the
   * pipeline, into `metadata.evalferry`, which encode must write into the format's free-form slot.
   */
  encode(c: EvalCase, ctx: EncodeContext): JsonObject

  /**
   * The file layout to write, seen from the first cases (up to 100). File-level keys of a source
   * file of this format arrive in the first case as `extras[format].$file`.
   */
  layout(container: Container, sample: EvalCase[], ctx: EncodeContext): FileLayout

  /** How sure (0 to 1) this format fits the sample. */
  sniff(sample: SniffSample): number

  /**
   * What the format's own tool refuses (its validator) or skips (its loader) in a record that
   * reads: `validate` reports each as an error at its field. Called after `decode` succeeds.
   */
  check?(record: unknown, ctx: DecodeContext): Refusal[]

  /** Fields (dotted, of the canonical case) that must be present when writing; the pipeline generates ids. */
  requires?: ('id' | 'input')[]

  /** True when every record in a file must have a unique id (evalcase). */
  uniqueIds?: boolean

  /** True when it holds a conversation's turns (DeepEval); another format is given them as the input messages. */
  holdsTurns?: boolean

  /**
   * True when it holds expected tool calls apart (DeepEval's expected_tools, EvalCase's
   * expected_structured): those of an expected assistant message are given to it there.
   */
  holdsExpectedTools?: boolean

  /**
   * True when a JSON file of one object (one case) is written back as that object alone, not as a
   * list of one (EvalCase JSON, whose schema describes one case). The shape is a file key of the
   * format's own, carried through other formats as its other file keys are.
   */
  singleRecord?: boolean

  /**
   * A record that stands for another file's records (evalcase `file://cases/x.yaml`): the path,
   * relative to the file being read, whose cases the pipeline reads in its place.
   */
  include?(record: unknown, header?: JsonObject): string | undefined

  /** A sibling file whose top-level keys are this file's header (evalcase `x.jsonl` → `x.yaml`). */
  sidecar?(file: string, container: Container): string | undefined
  /** The sidecar's keys the format's own tool applies (AgentV's); others are written, and warned of. */
  sidecarKeys?: readonly string[]
  /** Its `file` blocks' paths are relative to the dataset's folder (evalcase): one an output in another folder loses is warned of. */
  relativeFiles?: boolean

  /**
   * The group of cases that one record holds together in `container` (DeepEval arena contestants),
   * or undefined; consecutive cases of one group are written as one record by `encodeGroup`.
   */
  group?(c: EvalCase, container: Container): string | undefined
  encodeGroup?(cases: EvalCase[], ctx: EncodeContext): JsonObject
  /**
   * `record`, this format's encoding of case `c`, with `carried` where encoding `c` with `carried`
   * under `metadata.evalferry` would put it, the rest as it is; undefined where only encoding the
   * case again tells. Spares encoding every case that carries anything twice.
   */
  placeCarry?(record: JsonObject, carried: JsonObject, c: EvalCase, ctx: EncodeContext): JsonObject | undefined
}
