/**
 * Writing: the cases go to the target adapter, one record (or one group's) at a time, through the
 * case encoder (case-encoder.ts), to a codec and an atomic output. The layout is chosen from the
 * first 100 cases (at most 32 MB of them); a later case the layout cannot hold has the file
 * written again with it among them.
 */
import { dirname, resolve as resolvePath } from 'node:path'
import { getAdapter } from '../adapters/index.ts'
import type { Adapter, Container, EncodeContext, FileLayout } from '../adapters/types.ts'
import { namedDelimiter } from './codecs/csv.ts'
import { containerOf, recordWriter } from './codecs/index.ts'
import { CASES_FILE_KEY, LIST_KEY, type Sink } from './codecs/types.ts'
import { RelativeFiles } from './file-blocks.ts'
import { DataError, EvalferryError, LayoutError, locate, UsageError, type Location } from './errors.ts'
import type { StringTable } from './ids.ts'
import { AtomicFile, STDIO, type Written } from './io.ts'
import { checkCaseShape } from './mapping.ts'
import { roughSize, type EvalCase, type JsonObject } from './model.ts'
import { addWarning, newReport, type ConversionReport } from './report.ts'
import { raceAbort, untilAborted } from './abort.ts'
import type { WriteOptions } from './options.ts'
import type { PartPreset } from './parts.ts'
import { startSidecar } from './sidecar.ts'
import { CaseEncoder, encodeContextOf, laidOutCases, sidecarHeader } from './case-encoder.ts'
import { requireContainer, requireDialectFor, requireSignal, requireText, requireWriteOptions } from './option-checks.ts'
import { holdsCases, placeOf, type ReadCase } from './read.ts'


const LAYOUT_SAMPLE = 100
/**
 * The sample stops sooner where its cases take this much memory (as `roughSize` tells it): a
 * hundred records of a few megabytes each, read as objects, took gigabytes.
 */
const LAYOUT_SAMPLE_BYTES = 32 << 20

/** Whether a layout sample of `count` cases taking `bytes` holds enough to choose the layout from. */
export function sampleFull(count: number, bytes: number): boolean {
  return count >= LAYOUT_SAMPLE || bytes >= LAYOUT_SAMPLE_BYTES
}
/**
 * How many times `convert` writes a file again for cases its layout could not hold. Each pass
 * gathers every such case it meets (up to `LATE_CASES`, or `LAYOUT_SAMPLE_BYTES` of them), so a
 * file needs more than one more pass only where its cases keep needing columns none before did.
 */
export const LAYOUT_RETRIES = 8
const LATE_CASES = LAYOUT_SAMPLE

/** The error of a file whose passes all met cases their layout could not hold. */
export function layoutGivenUp(error: LayoutError): LayoutError {
  error.message += ` (the file was written ${LAYOUT_RETRIES + 1} times, each time with up to ${LATE_CASES} more such cases among those its layout is chosen from, and cases kept needing columns none before had); JSON Lines, whose records each have their own keys, holds such a dataset`
  return error
}

/** What `write` and `convert` pass to `writeFile` beside the caller's options. */
export interface WriteFileOptions extends WriteOptions {
  /**
   * The file will be written again if its layout cannot hold a case: the pass goes on past such a
   * case to gather the others like it, and the `LayoutError` it ends with holds them all.
   */
  gatherLate?: boolean
  /** The reader's table of the ids it has seen, where both sides keep them: each id is kept once. */
  idTable?: StringTable
  /** Told the output once it is open: `convert` asks it whether a stream has taken bytes. */
  opened?: (file: AtomicFile) => void
  /** Filled with the file the layout names for the records (`FileLayout.casesFile`), committed with the output. */
  companions?: AtomicFile[]
  /** The files being read, which a file the layout names must not be, nor the one each names. */
  inputs?: string[]
}

/**
 * Writes cases to one file (or `-`) atomically; returns the report. Cases given as an array can be
 * gone through again: a later one that needs a column the first ones did not is written with
 * them, as `convert` writes a file again.
 */
export async function write(cases: AsyncIterable<EvalCase> | Iterable<EvalCase>, output: string, options: WriteOptions): Promise<ConversionReport> {
  requireText('write()', 'the output path', output)
  requireText('write()', 'options.to', options?.to)
  requireDialectFor('write()', options.dialect, (await getAdapter(options.to)).name)
  requireWriteOptions('write()', options)
  requireSignal('write()', options.signal)
  const iterable = cases !== null && typeof cases === 'object' && (Symbol.iterator in cases || Symbol.asyncIterator in cases)
  if (!iterable) throw new UsageError(`write() takes the cases as an array, an iterable or an async iterable, not ${cases === null ? 'null' : typeof cases}`)
  if (!Array.isArray(cases)) return writeFile(placed(cases), output, options)
  const start = options.report && structuredClone(options.report)
  let layoutCases = options.layoutCases
  for (let attempt = 0; ; attempt++) {
    try {
      return await writeFile(placed(cases), output, { ...options, ...(layoutCases ? { layoutCases } : {}), gatherLate: attempt < LAYOUT_RETRIES })
    } catch (error) {
      if (!(error instanceof LayoutError && error.cases)) throw error
      if (attempt === LAYOUT_RETRIES) throw layoutGivenUp(error)
      layoutCases = [...(layoutCases ?? []), ...error.cases]
      // The caller's report tells of the last attempt only.
      if (start) Object.assign(options.report!, structuredClone(start))
    }
  }
}

export async function writeFile(cases: AsyncIterable<ReadCase>, output: string, options: WriteFileOptions): Promise<ConversionReport> {
  const container = requireContainer(output, options.container, 'output')
  const adapter = await getAdapter(options.to)
  if (!adapter.writes.includes(container)) {
    throw new UsageError(`${adapter.name} does not write ${container} files (it writes ${adapter.writes.join(', ')})`)
  }
  const report = options.report ?? newReport('canonical', adapter.name, [], output)
  const file = await AtomicFile.create(output)
  options.opened?.(file)
  // A stream (standard output, a pipe) cannot be written again once it has taken bytes: its pass stops at the first case its layout cannot hold.
  if (file.isStream) options = { ...options, gatherLate: false }
  const sidecarPath = sidecarOf(output, container, adapter)
  let sidecar: AtomicFile | undefined
  const companions: AtomicFile[] = []
  options = { ...options, companions }
  try {
    if (options.signal) cases = untilAborted(cases, options.signal)
    const layout = await raceAbort(writeCases(cases, adapter, container, file, options, report, sidecarPath !== undefined), options.signal)
    sidecar = await startSidecar(sidecarPath, sidecarHeader(layout), output, adapter, report)
    await file.commit()
    await sidecar?.commit()
    for (const companion of companions) await companion.commit()
  } catch (error) {
    for (const companion of companions) await companion.abort()
    if (error instanceof LayoutError && error.cases && file.hasSent) notWrittenAgain(error, output)
    // A bad record ends a stream with every record before it; one written again, or a failed write, leaves it as it is.
    const retried = error instanceof LayoutError && error.cases !== undefined
    await file.abort(error instanceof EvalferryError && error.code !== 'E_IO' && !retried)
    await sidecar?.abort()
    throw error
  }
  return report
}

/** A case the layout of a stream could not hold, once the stream has taken the records before it: the error is final. */
function notWrittenAgain(error: LayoutError, output: string): void {
  error.cases = undefined
  const stream = output === STDIO ? 'standard output' : output
  error.message += `; ${stream} had already taken the records before it, and a stream cannot be written again with the column added: write to a file instead, which can`
}



/** The caller's cases, each with where `read` read it, if it did. */
async function* placed(cases: AsyncIterable<EvalCase> | Iterable<EvalCase>): AsyncGenerator<ReadCase> {
  for await (const c of cases) yield { value: c, from: placeOf(c) }
}


/** JSON Lines has no place for file-level keys: they go to the sidecar the adapter names. */
function sidecarOf(output: string, container: Container | undefined, adapter: Adapter): string | undefined {
  return output !== STDIO && container === 'jsonl' ? adapter.sidecar?.(output, container) : undefined
}

/** The files writing `output` as `to` makes (itself, and a JSON Lines sidecar), for `assertWritable`. */
export async function filesWritten(output: string, to: string, container?: Container): Promise<Written[]> {
  const adapter = await getAdapter(to)
  const sidecar = sidecarOf(output, container ?? containerOf(output), adapter)
  if (!sidecar) return [{ path: output, what: 'the output' }]
  const refuse = async () =>
    (await holdsCases(sidecar, adapter)) ? `${sidecar} holds cases, and would be overwritten by the sidecar of ${output} (its description and execution); move it, or name another output` : undefined
  return [
    { path: output, what: 'the output' },
    { path: sidecar, what: "the output's sidecar", refuse },
  ]
}


/** What `writeFrom` takes beside the cases. */
type WriteArgs = Parameters<typeof writeFrom> extends [unknown, ...infer Rest] ? Rest : never

export async function writeCases(cases: AsyncIterable<ReadCase>, ...args: WriteArgs): Promise<FileLayout> {
  const iterator = cases[Symbol.asyncIterator]()
  try {
    return await writeFrom(iterator, ...args)
  } catch (error) {
    // The source is closed now, not when its file handle is collected (a file written again reads it anew).
    await iterator.return?.()
    throw error
  }
}

/**
 * Opens the file the layout names for the records in place of the list (`tests: ./dataset.jsonl`),
 * beside the output, and writes the output: the file's keys, and that name under the list key.
 */
async function casesFileOf(layout: FileLayout, container: Container, output: { sink: Sink; path: string }, options: WriteFileOptions): Promise<{ file: AtomicFile; container: Container } | undefined> {
  if (layout.casesFile === undefined || container !== 'yaml' || output.path === STDIO) return undefined
  const relative = layout.casesFile.replace(/^file:\/\//, '')
  const path = resolvePath(dirname(output.path), relative)
  const named = containerOf(path)
  if (named !== 'jsonl' && named !== 'yaml') throw new UsageError(`${output.path} names ${layout.casesFile} for its cases, which is no JSON Lines or YAML file`)
  for (const input of options.inputs ?? []) {
    if (input !== STDIO && (path === resolvePath(input) || path === resolvePath(dirname(input), relative))) {
      throw new UsageError(`${output.path} would write its cases into ${path}, which ${path === resolvePath(input) ? 'is' : 'holds the cases of'} the input: name an output in another folder`)
    }
  }
  const { yamlMapping } = await import('./codecs/yaml-emit.ts')
  const keys = Object.fromEntries(Object.entries(layout.header ?? {}).filter(([k]) => k !== LIST_KEY && k !== CASES_FILE_KEY))
  await output.sink.write(yamlMapping({ ...keys, [layout.listKey ?? 'tests']: layout.casesFile }))
  const file = await AtomicFile.create(path)
  options.companions?.push(file)
  return { file, container: named }
}

async function writeFrom(
  iterator: AsyncIterator<ReadCase>,
  adapter: Adapter,
  container: Container,
  file: { sink: Sink; path: string },
  options: WriteFileOptions,
  report: ConversionReport,
  hasSidecar: boolean,
  preset?: PartPreset,
): Promise<FileLayout> {
  let taken = preset?.index ?? 0
  // A case a caller made, not one read here, may not have a case's shape: it is named by its place in the output.
  const checked = (c: ReadCase): ReadCase => {
    if (!c.from) {
      try {
        checkCaseShape(c.value, 'the case has')
      } catch (error) {
        throw locate(error, { file: file.path, record: taken })
      }
    }
    taken++
    return c
  }
  const sample: ReadCase[] = []
  let exhausted = false
  for (let bytes = 0; !preset && !sampleFull(sample.length, bytes); ) {
    const next = await iterator.next()
    if (next.done) {
      exhausted = true
      break
    }
    sample.push(checked(next.value))
    bytes += roughSize(next.value.value)
  }

  let index = preset?.index ?? 0
  // Where the case being written was read: its errors and warnings are told there.
  let at: Location | undefined
  const ectx = encodeContextOf(container, options, (message, field) => addWarning(report, message, { ...(at ?? { file: file.path, record: index }), ...(field ? { field } : {}) }))
  // The layout is chosen from the cases as they are written (see `laidOutCases`).
  const { sampled, late: lateSampled, textColumns } = laidOutCases(adapter, container, sample.map((c) => c.value), options.layoutCases, preset?.textColumns)
  // What the layout warns of is the file's (a column of it), not one case's.
  const layoutCtx: EncodeContext = { ...ectx, warn: (message, field) => addWarning(report, message, { file: file.path, ...(field ? { field } : {}) }) }
  const layout: FileLayout = preset?.layout ?? adapter.layout(container, lateSampled.length ? [...sampled, ...lateSampled] : sampled, layoutCtx)
  ectx.layout = layout
  // A `.tsv` file is written with tabs, as it is read.
  const delimiter = container === 'csv' ? namedDelimiter(file.path) : undefined
  const records = preset ? undefined : await casesFileOf(layout, container, file, options)
  const writer = records
    ? await recordWriter(records.container, records.file.sink, { header: {} }, ectx.warn)
    : await recordWriter(container, file.sink, delimiter ? { ...layout, delimiter } : layout, ectx.warn)
  const encoder = new CaseEncoder(adapter, container, layout, options, report, file.path, hasSidecar, preset?.sample ?? sampled, textColumns, preset)
  // A file block's path relative to the dataset's folder: one the output's folder loses is told of.
  const relativeFiles = adapter.relativeFiles && file.path !== STDIO ? new RelativeFiles(file.path) : undefined

  // The cases of the record being written: one, or the consecutive cases of one group.
  let pending: EvalCase[] = []
  let pendingFrom: Location | undefined
  let pendingGroup: string | undefined
  // The cases the layout could not hold, gathered for the next pass (`gatherLate`), and the first one's error.
  const late: EvalCase[] = []
  let lateBytes = 0
  let lateError: LayoutError | undefined
  /** The error to stop with, if any: a case the layout could not hold, gathered while there is room, is left out and the pass goes on. */
  const stopWith = (error: unknown): unknown => {
    if (!(error instanceof LayoutError)) return error
    error.cases = pending
    if (!options.gatherLate) return error
    lateError ??= error
    for (const c of pending) {
      late.push(c)
      lateBytes += roughSize(c)
    }
    lateError.cases = late
    pending = []
    index++
    return late.length < LATE_CASES && lateBytes < LAYOUT_SAMPLE_BYTES ? undefined : lateError
  }
  // Writing a record waits only where the writer must (its sink's buffer is full): the others
  // take no promise, so a record of a few fields costs its fields, not the awaits between them.
  const failed = (error: unknown): unknown => {
    // A writer that holds records back (Parquet's row groups) names the one at fault by its place in the output.
    if (error instanceof DataError && !error.location.file) error.location = error.location.record === undefined ? { ...at, ...error.location } : { file: file.path, ...error.location }
    return stopWith(error)
  }
  const flushed = (): void => {
    report.records.written += pending.length
    pending = []
    index++
  }
  const flush = (): Promise<void> | undefined => {
    if (!pending.length) return undefined
    ectx.index = index
    at = pendingFrom ?? { file: file.path, record: index }
    let record: JsonObject
    try {
      record = encoder.encode(pending, ectx, index === 0, pendingGroup !== undefined)
    } catch (error) {
      const stop = stopWith(locate(error, at))
      if (stop) throw stop
      return undefined
    }
    let waiting: Promise<void> | undefined
    try {
      waiting = writer.write(record)
    } catch (error) {
      const stop = failed(error)
      if (stop) throw stop
      return undefined
    }
    if (waiting) {
      return waiting.then(flushed, (error: unknown) => {
        const stop = failed(error)
        if (stop) throw stop
      })
    }
    flushed()
    return undefined
  }
  const add = (c: ReadCase, group: string | undefined): Promise<void> | undefined => {
    if (!pending.length) pendingFrom = c.from
    pending.push(c.value)
    pendingGroup = group
    return group === undefined ? flush() : undefined
  }
  const writeOne = (c: ReadCase): Promise<void> | undefined => {
    relativeFiles?.check(c.value, c.from, (message, field) => addWarning(report, message, { ...c.from, field }))
    const group = adapter.group?.(c.value, container)
    if (preset) {
      if (index === preset.index && !pending.length) preset.firstGroup = group
      preset.lastGroup = group
    }
    if (group === undefined || group !== pendingGroup) {
      const waiting = flush()
      if (waiting) return waiting.then(() => add(c, group))
    }
    return add(c, group)
  }
  try {
    for (const c of sample) await writeOne(c)
    if (!exhausted) {
      for (;;) {
        const next = await iterator.next()
        if (next.done) break
        const waiting = writeOne(checked(next.value))
        if (waiting) await waiting
      }
    }
    await flush()
  } catch (error) {
    // After a case the layout could not hold, the next pass (its layout holding that case) tells whether this error is still one.
    throw lateError ?? error
  }
  if (lateError) throw lateError
  await writer.end()
  return layout
}

