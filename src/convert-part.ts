/**
 * A part of a file converted on its own (see parallel.ts), as the whole-file conversion would
 * convert its records: the file's head (first cases and layout), then the part's records; and
 * what reading and writing take of a conversion's options, the same for the whole file and for
 * each of its parts.
 */
import { getAdapter } from '../adapters/index.ts'
import type { FileLayout, FormatOption } from '../adapters/types.ts'
import { untilAborted } from './abort.ts'
import { encodeContextOf, laidOutCases, sidecarHeader } from './case-encoder.ts'
import type { Sink } from './codecs/types.ts'
import { StringTable } from './ids.ts'
import { STDIO } from './io.ts'
import type { TextColumn } from './mapping.ts'
import { roughSize, type EvalCase, type JsonObject } from './model.ts'
import { requireContainer } from './option-checks.ts'
import type { FileConvertOptions, ReadOptions } from './options.ts'
import type { FilePart, PartPreset, PartResult } from './parts.ts'
import { readCases, SeenIds } from './read.ts'
import { addWarning, newReport, type ConversionReport } from './report.ts'
import { sampleFull, writeCases, type WriteFileOptions } from './write.ts'

/**
 * What reading the input takes of a conversion's options, the same for the whole file and for
 * each of its parts.
 */
export function readOptionsOf(options: FileConvertOptions, from: FormatOption, report: ConversionReport): ReadOptions {
  return { from, onError: options.onError ?? 'fail', report, ...(options.map ? { map: options.map } : {}), ...(options.parseThread ? { parseThread: options.parseThread } : {}) }
}

/** What writing takes of a conversion's options, the same for the whole file and for each of its parts. */
export function writeOptionsOf(options: FileConvertOptions, to: FormatOption): WriteFileOptions {
  return {
    to,
    ...(options.dialect ? { dialect: options.dialect } : {}),
    ...(options.extras === undefined ? {} : { extras: options.extras }),
    ...(options.strict ? { strict: true } : {}),
  }
}

/** A file's first cases and layout, as every part of it is written with, and the reader's state after them. */
export interface FileHead {
  sample: EvalCase[]
  layout: FileLayout
  /** The columns whose lists of one text are written as text (see `textColumnsOf`). */
  textColumns: readonly TextColumn[]
  state: Record<string, unknown>
  layoutWarnings: ConversionReport['warnings']
  /** What a JSON Lines sidecar of the output holds. */
  sidecar: JsonObject
}

/** Reads the first cases of `options.input` and chooses the layout, as a whole-file conversion does. */
export async function readFileHead(options: FileConvertOptions & { from: string }): Promise<FileHead> {
  const inputContainer = requireContainer(options.input, options.inputContainer, 'input')
  const outputContainer = requireContainer(options.output, options.outputContainer, 'output')
  const source = await getAdapter(options.from)
  const target = await getAdapter(options.to)
  const probe: FilePart = {}
  const sample: EvalCase[] = []
  const quiet = newReport(source.name, target.name, [])
  let bytes = 0
  for await (const c of readCases(options.input, inputContainer, source, readOptionsOf(options, options.from, quiet), new SeenIds(options.input), [], probe)) {
    sample.push(c.value)
    bytes += roughSize(c.value)
    if (sampleFull(sample.length, bytes)) break
  }
  const report = newReport(source.name, target.name, [])
  const ectx = encodeContextOf(outputContainer, options, (message, field) => addWarning(report, message, { file: options.output, ...(field ? { field } : {}) }))
  const { sampled, textColumns } = laidOutCases(target, outputContainer, sample)
  const layout = target.layout(outputContainer, sampled, ectx)
  return { sample, layout, textColumns, state: probe.decodeState ?? {}, layoutWarnings: report.warnings, sidecar: sidecarHeader(layout) }
}

/**
 * Converts one part of a file (a run of whole records) to JSON Lines in `sink`, as the whole-file
 * conversion would convert those records: with the file's layout and first cases from `head`,
 * the reader's state after them, and `index` records written before it.
 */
export async function convertPart(
  options: FileConvertOptions & { from: string },
  head: FileHead,
  part: FilePart,
  index: number,
  sink: Sink,
  /** `progress` counts the records and bytes read as they are; `signal` stops the part. */
  watch: { progress?: { records: number; bytes: number } | undefined; signal?: AbortSignal | undefined } = {},
): Promise<PartResult> {
  const inputContainer = requireContainer(options.input, options.inputContainer, 'input')
  const source = await getAdapter(options.from)
  const target = await getAdapter(options.to)
  const report = newReport(source.name, target.name, [options.input], options.output)
  const rejects: string[] = []
  // As in a whole file, the ids read and the ids written share one table.
  const idTable = new StringTable()
  const seenIds = new SeenIds(options.input, idTable)
  // The part that starts the file reads it from the start, as the whole file would be.
  const reading: FilePart = part.continuation ? { ...part, state: head.state } : { ...part }
  const read = readCases(
    options.input,
    inputContainer,
    source,
    { ...readOptionsOf(options, options.from, report), target: target.name, onReject: (r) => rejects.push(JSON.stringify(r)), ...(watch.progress ? { progress: watch.progress } : {}) },
    seenIds,
    [],
    reading,
  )
  const cases = watch.signal ? untilAborted(read, watch.signal) : read
  const preset: PartPreset = { sample: head.sample, layout: head.layout, textColumns: head.textColumns, index, generatedIds: [], writtenIds: [], uniqueIds: [] }
  const hasSidecar = options.output !== STDIO && target.sidecar?.(options.output, 'jsonl') !== undefined
  await writeCases(
    cases,
    target,
    'jsonl',
    { sink, path: options.output },
    { ...writeOptionsOf(options, options.to), idTable },
    report,
    hasSidecar,
    preset,
  )
  return {
    report,
    rejects,
    firstPending: reading.firstPending ?? !part.continuation,
    seenIds: seenIds.ids(),
    ...(preset.firstGroup === undefined ? {} : { firstGroup: preset.firstGroup }),
    ...(preset.lastGroup === undefined ? {} : { lastGroup: preset.lastGroup }),
    generatedIds: preset.generatedIds,
    writtenIds: preset.writtenIds,
    uniqueIds: preset.uniqueIds,
  }
}

