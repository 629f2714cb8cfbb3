/** A file converted in parts, on several threads (see parallel.ts): what a part is, and what converting it gives. */
import type { FileLayout } from '../adapters/types.ts'
import type { TextColumn } from './mapping.ts'
import type { EvalCase } from './model.ts'
import type { ConversionReport } from './report.ts'

/** A part of a file read on its own (see parallel.ts): its text, and where it starts. */
export interface FilePart {
  /** The part's text; absent: the whole file, or `range` of it. */
  text?: string
  /** The part as bytes [start, end) of the file, read after `prefix` (a CSV header row). */
  range?: { start: number; end: number }
  prefix?: string
  /** Absent for the part that starts the file. */
  continuation?: { line: number; index: number }
  /** The adapter's per-file state after the file's first records, for a later part to start from. */
  state?: Record<string, unknown>
  /** Set as the part is read: the adapter's state, and whether no case has come yet to take the file's keys. */
  decodeState?: Record<string, unknown>
  firstPending?: boolean
}

/** What converting one part of a file gave. */
export interface PartResult {
  report: ConversionReport
  /** `--rejects` lines. */
  rejects: string[]
  /** No case of the part took the file's own keys (they go to the file's first case). */
  firstPending: boolean
  /** Ids the part's cases had, where the source needs them unique. */
  seenIds: string[]
  firstGroup?: string
  lastGroup?: string
  generatedIds: string[]
  writtenIds: string[]
  /** Every id the part wrote, where the target's ids are unique. */
  uniqueIds: string[]
}

/** A part of a file written on its own: the file's layout and first cases, and where its records start. */
export interface PartPreset {
  sample: EvalCase[]
  layout: FileLayout
  /** The columns whose lists of one text are written as text, as the whole file's. */
  textColumns: readonly TextColumn[]
  /** Records written before this part (as far as the part can tell: its first source record's index). */
  index: number
  /**
   * Filled as the part is written: the group ids of its first and last cases, the ids it generated,
   * the ids it wrote that could be generated for a later record, and, where the target's ids are
   * unique, every id it wrote.
   */
  firstGroup?: string
  lastGroup?: string
  generatedIds: string[]
  writtenIds: string[]
  uniqueIds: string[]
}
