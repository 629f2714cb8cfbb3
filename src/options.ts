/** What reading, writing and converting take: the options of `read`, `write` and `convert`, and a skipped record as `onReject` is given it. */
import type { Container, FieldMapping, FormatName, FormatOption, RowMapper } from '../adapters/types.ts'
import type { Detection } from './detect.ts'
import type { ErrorCode } from './error-codes.ts'
import type { Location } from './location.ts'
import type { EvalCase, JsonObject } from './model.ts'
import type { ConversionReport } from './report.ts'
import type { ServiceOptions } from './services/context.ts'

/** What the `--rejects` file holds per bad record. */
export interface Reject {
  error: string
  code: ErrorCode
  location: Location
  record: unknown
}

export interface ReadOptions {
  /** The source format; detected from the file when absent. */
  from?: FormatOption
  /** The container; from the file extension when absent (required for standard input). */
  container?: Container
  /** Field mapping for tables (CSV, Hugging Face rows, LangSmith CSV), or a function per row. */
  map?: FieldMapping | RowMapper
  /** `fail` (default) stops at the first bad record; `skip` leaves it out and goes on. */
  onError?: 'fail' | 'skip'
  /** Called with each skipped record when `onError` is `skip`. */
  onReject?: (reject: Reject) => void
  /** Filled as the read goes: records read, skipped, warnings. */
  report?: ConversionReport
  /** Ends the read when aborted, with the signal's reason, even while it waits for input (standard input, a pipe). */
  signal?: AbortSignal
  /** Only the records whose 0-based index in the file is in [start, end) (used by `--shard`). */
  recordRange?: [number, number]
  /**
   * CSV and JSON Lines: where the records of `recordRange` lie in the file, so that only those
   * bytes are read (see `locateRecords` in parallel.ts).
   */
  recordBytes?: RecordBytes
  /** Counters updated as the read goes, for a progress bar: records decoded, bytes read. */
  progress?: { records: number; bytes: number }
  /**
   * A CSV file of 64 MiB or more is read and parsed in a worker thread while this thread converts
   * its records: a tenth faster or more where a second core is free. `free`: only where a look at
   * the cores finds one free (the command line's default, unless `--jobs 1`).
   */
  parseThread?: boolean | 'free'
  /**
   * File keys the file holds after its first record (a JSON key after the record list), read on an
   * earlier pass: the first case takes them with the others. Without them, such keys are a
   * `LateKeys` error when `lateKeys` is `retry`, else a warning that they are dropped.
   */
  fileKeys?: JsonObject
  lateKeys?: 'retry'
  /** With `lateKeys`: whether the conversion can still begin again (a stream it writes cannot once it has taken bytes); else the keys are warned of as dropped. */
  canRetry?: () => boolean
  /** A YAML file's comments, which no format carries, are warned of at the first (as a conversion reads). */
  comments?: 'warn'
  /** An evalcase file's includes (`- file://cases.yaml`), whose cases are read in their place, are warned of as not kept (as a conversion reads). */
  includes?: 'warn'
  /**
   * The format the cases are read to be written in (as a conversion reads): what the source's own
   * tool would warn of in the file (a deprecated key) is told only when it is that format too.
   */
  target?: FormatName
  /**
   * How `from` was found when it was detected (`detect`): a record that a weak guess cannot read is
   * told which other formats read it. Detected here when `from` is absent.
   */
  guess?: Detection
  /** What the format's own tool refuses or skips in a record that reads (`Adapter.check`) is an error in the report (as validate reads). */
  check?: true
  /**
   * With `guess`, in a conversion that can begin again: the formats read so far. A record the
   * guess refuses that a likely other format (not among these) reads ends the read with that format.
   */
  reguess?: ReadonlySet<FormatName>
}

/** Where a run of records lies in a file: bytes [start, end), after `prefix` (a CSV header row), its first record on `line`. */
export interface RecordBytes {
  start: number
  end: number
  prefix?: string
  line: number
}

export interface WriteOptions {
  /** The target format. */
  to: FormatOption
  /** The container; from the output's extension when absent. */
  container?: Container
  /** `agentv` writes evalcase's `tests:`/`criteria` dialect (cases from other formats get it by default); `evalcase` its first, `evalcases:`. */
  dialect?: 'agentv' | 'evalcase'
  /** Carry what the target cannot express under `evalferry` (default true); false drops it. */
  extras?: boolean
  /** Any dropped field is an error. */
  strict?: boolean
  /** Filled as the write goes. */
  report?: ConversionReport
  /**
   * The dataset's record number of the first case written (a shard's first record): generated ids
   * (`case-<n>`) count on from it, so that the shards of a dataset have the ids of the whole.
   */
  firstRecord?: number
  /**
   * Cases the file's layout must also fit, beside its first hundred or 32 MB (which it is chosen from):
   * `convert` gives a later case that needed a column those did not.
   */
  layoutCases?: EvalCase[]
  /**
   * Stops the write when aborted: the promise rejects with the signal's reason (an `AbortError`
   * unless the caller gave another), and the output, never put in place, is left as it was.
   */
  signal?: AbortSignal
}

/** A dataset a service keeps, as an input or an output names it: its scheme implies its format. */
export type ServiceAddressText = `langsmith://${string}` | `confident://${string}` | `hf://${string}`

/** What `convert` takes: `to` names the output's format, which an output address implies (given anyway, it must agree). */
export type ConvertOptions = FileConvertOptions | ServiceConvertOptions

/** A conversion to a file: `to` names its format. */
export interface FileConvertOptions extends Omit<ReadOptions, 'report' | 'onReject' | 'container'>, Omit<WriteOptions, 'report' | 'container'>, ServiceOptions {
  input: string
  output: string
  inputContainer?: Container
  outputContainer?: Container
  /** JSON Lines file for records skipped with `onError: 'skip'`. */
  rejects?: string
  /** Threads a large CSV or JSON Lines file (to JSON Lines) is converted on, in parts; 1 (the default) converts in this thread. */
  threads?: number
}

/** A conversion whose output is a service's dataset, whose address implies the format: `to` may be left out. */
export interface ServiceConvertOptions extends Omit<FileConvertOptions, 'output' | 'to'> {
  output: ServiceAddressText
  to?: FormatOption
}
