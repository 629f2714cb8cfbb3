/**
 * Converting: read → decode → encode → write, one file to another format, as async iterables: a
 * codec yields records, the source adapter turns each into canonical cases, the target adapter
 * turns each case into a record, a codec writes it. A file is read again where only the whole of
 * it settles a question (keys after its records, a later record the guessed format refuses, a
 * case its layout cannot hold); a large one may be converted in parts on several threads.
 */
import { availableParallelism } from 'node:os'
import { getAdapter } from '../adapters/index.ts'
import type { Container, FormatName, FormatOption } from '../adapters/types.ts'
import { EvalferryError, LayoutError, noCaseRead, UsageError } from './errors.ts'
import { StringTable } from './ids.ts'
import { assertWritable, AtomicFile, isSpecialFile, STDIO } from './io.ts'
import type { EvalCase, JsonObject } from './model.ts'
import { addWarning, newReport, type ConversionReport } from './report.ts'
import type { ConvertOptions, FileConvertOptions } from './options.ts'
import { isAddress } from './services/address.ts'
import { readOptionsOf, writeOptionsOf } from './convert-part.ts'
import { checkConvertOptions, requireContainer, requireDialectFor, requireText } from './option-checks.ts'
import type { Detection } from './detect.ts'
import { detectGuess, GuessRefused, LateKeys, openCases, filesRead, type ReadCase } from './read.ts'
import { filesWritten, LAYOUT_RETRIES, layoutGivenUp, writeFile } from './write.ts'

/** Converts one file to another format; returns the conversion report. */
export async function convert(given: ConvertOptions): Promise<ConversionReport> {
  for (const key of ['input', 'output'] as const) requireText('convert()', `options.${key}`, given?.[key])
  // A service's records are staged as a file, converted as files are, then pushed (see services/convert.ts).
  if (isAddress(given.input) || isAddress(given.output)) return (await import('./services/convert.ts')).convertWithServices(given, convert)
  requireText('convert()', 'options.to', given.to)
  if (given.shard !== undefined) throw new UsageError('convert(): the option shard splits an hf:// input; the part of a file is its recordRange')
  // Neither end is an address: `to`, checked above, names the output's format.
  const options = given as FileConvertOptions
  checkConvertOptions(options)
  const conversion = await settle(options)
  // The report of the pass under way: a failure carries it (`EvalferryError.report`).
  let report: ConversionReport | undefined
  try {
    return await convertSettled(conversion, (fresh) => (report = fresh))
  } catch (error) {
    if (error instanceof EvalferryError && report && !error.report) error.report = await reportWhenStopped(report, options.output)
    throw error
  }
}

/** A conversion as settled once, before any record is read: its options checked, its formats and input container known. */
interface Conversion {
  options: FileConvertOptions
  inputContainer: Container
  from: FormatOption
  to: FormatName
  /** How `from` was detected, when it was. */
  guess: Detection | undefined
  /** With a guess: the formats read so far, each once; a guess a later record refuses gives way to another (see `GuessRefused`). */
  reguess: Set<FormatName> | undefined
}

/** Checks what only the formats and files tell, and detects the source format where it is not given. */
async function settle(options: FileConvertOptions): Promise<Conversion> {
  const to = (await getAdapter(options.to)).name
  requireDialectFor('convert()', options.dialect, to)
  const inputContainer = requireContainer(options.input, options.inputContainer, 'input')
  await assertWritable(
    [...(await filesWritten(options.output, options.to, options.outputContainer)), ...(options.rejects ? [{ path: options.rejects, what: 'the rejects file' }] : [])],
    await filesRead([options.input]),
  )
  const guess = options.from || options.input === STDIO ? options.guess : await detectGuess(options.input, { target: to, container: inputContainer })
  const from = options.from ?? guess?.format
  if (!from) throw new UsageError('reading standard input needs --from')
  const reguess = !options.from && guess && options.input !== STDIO ? new Set<FormatName>([guess.format]) : undefined
  return { options: guess ? { ...options, guess } : options, inputContainer, from, to, guess, reguess }
}

/**
 * Converts the file, on several threads where it is asked for and the file allows, else in passes
 * over the whole file: another pass where only the whole file settled what the last needed (keys
 * after the records, a later record the guessed format refuses, cases the layout could not hold).
 * Each pass's report is given to `started` as it begins.
 */
async function convertSettled(conversion: Conversion, started: (report: ConversionReport) => void): Promise<ConversionReport> {
  const { options, inputContainer, to } = conversion
  // The guess a later record refused, told in the report of the conversion that read the file otherwise.
  let refused: { format: FormatName; error: EvalferryError } | undefined
  const fresh = async () => {
    const report = newReport((await getAdapter(conversion.from)).name, to, [options.input], options.output === STDIO ? undefined : options.output)
    if (refused) addWarning(report, `detected as ${refused.format} from the first records, whose reader refuses this one (${refused.error.message}): the file is read as ${conversion.from}`, refused.error.location)
    started(report)
    return report
  }
  const threads = Math.min(options.threads ?? 1, availableParallelism())
  if (threads > 1) {
    const { canSplit, convertInParts } = await import('./parallel.ts')
    const container = await canSplit({ ...options, inputContainer }, threads)
    const progress = options.progress ? { ...options.progress } : undefined
    // The parts take the threads: none parses beside them.
    const done = container && (await convertInParts({ ...options, parseThread: false, inputContainer, from: conversion.from, to }, container, threads, await fresh()))
    if (done) return done
    // Something only the whole file settles: convert it again in this thread.
    if (progress) Object.assign(options.progress!, progress)
  }
  const start = options.progress ? { ...options.progress } : undefined
  let pass: Omit<Pass, 'report' | 'gatherLate'> = { layoutCases: undefined, fileKeys: undefined }
  for (let attempt = 0; ; attempt++) {
    try {
      const gatherLate = options.input !== STDIO && attempt < LAYOUT_RETRIES
      return await convertOnce(conversion, { ...pass, report: await fresh(), gatherLate })
    } catch (error) {
      const { guess, reguess } = conversion
      if (error instanceof LateKeys && pass.fileKeys === undefined) pass = { ...pass, fileKeys: error.header }
      else if (error instanceof GuessRefused && guess && reguess) {
        refused = { format: guess.format, error: error.refusal }
        reguess.add(error.format)
        conversion.guess = { ...guess, format: error.format }
        conversion.from = error.format
        conversion.options = { ...conversion.options, guess: conversion.guess }
        pass = { layoutCases: undefined, fileKeys: undefined }
      } else if (error instanceof LayoutError && error.cases && options.input !== STDIO) {
        // Later cases that need a column the first ones did not: the file is written again, its layout chosen with them too.
        if (attempt === LAYOUT_RETRIES) throw layoutGivenUp(error)
        pass = { ...pass, layoutCases: [...(pass.layoutCases ?? []), ...error.cases] }
      } else throw error
      if (start) Object.assign(options.progress!, start)
    }
  }
}

/**
 * What a conversion that stopped had done: `report` as it stood, its records written counted only
 * where the output still holds them (standard output, a pipe, a device): a file is left as it was.
 */
async function reportWhenStopped(report: ConversionReport, output: string): Promise<ConversionReport> {
  const kept = output === STDIO || (await isSpecialFile(output))
  return { ...report, records: { ...report.records, written: kept ? report.records.written : 0 } }
}

/** One pass over the whole file, and what the passes before it learned. */
interface Pass {
  report: ConversionReport
  /** Cases an earlier pass's layout could not hold: this pass's layout is chosen with them. */
  layoutCases: EvalCase[] | undefined
  /** Keys the file holds after its records, read on an earlier pass. */
  fileKeys: JsonObject | undefined
  /** The pass goes on past a case its layout cannot hold, to gather the others like it (see `WriteFileOptions.gatherLate`). */
  gatherLate: boolean
}

async function convertOnce(conversion: Conversion, pass: Pass): Promise<ConversionReport> {
  const { options, inputContainer, from, to } = conversion
  const { report, fileKeys, layoutCases } = pass
  let rejects: AtomicFile | undefined
  const pendingRejects: Promise<void>[] = []
  // Where the source's ids and the target's must both be unique, both sides keep every id: in one table, each id once.
  const idTable = new StringTable()
  let output: AtomicFile | undefined
  const cases = await openCases(
    options.input,
    {
      ...readOptionsOf(options, from, report),
      container: inputContainer,
      // A file can be read again to give its first case the keys after its records; standard input cannot.
      ...(fileKeys ? { fileKeys } : options.input !== STDIO ? { lateKeys: 'retry' as const, canRetry: () => !output?.hasSent } : {}),
      comments: 'warn',
      includes: 'warn',
      target: to,
      ...(options.guess ? { guess: options.guess } : {}),
      ...(conversion.reguess ? { reguess: conversion.reguess } : {}),
      ...(options.recordRange ? { recordRange: options.recordRange } : {}),
      ...(options.recordBytes ? { recordBytes: options.recordBytes } : {}),
      ...(options.progress ? { progress: options.progress } : {}),
      onReject: (r) => {
        const written = rejects?.sink.write(JSON.stringify(r) + '\n')
        if (written) pendingRejects.push(written)
      },
    },
    idTable,
  )
  if (options.rejects) rejects = await AtomicFile.create(options.rejects)
  try {
    await writeFile(noneReadIsAnError(cases, report, options.input), options.output, {
      ...writeOptionsOf(options, to),
      gatherLate: pass.gatherLate,
      inputs: [options.input],
      idTable,
      opened: (file) => (output = file),
      ...(options.outputContainer ? { container: options.outputContainer } : {}),
      // A shard's generated ids are those the whole would have.
      ...(options.recordRange || options.firstRecord ? { firstRecord: options.firstRecord ?? options.recordRange![0] } : {}),
      ...(layoutCases ? { layoutCases } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      report,
    })
    await Promise.all(pendingRejects)
    await rejects?.commit()
  } catch (error) {
    await rejects?.abort()
    throw error
  }
  return report
}

/**
 * The cases, and then, when every record of the file was skipped, an error before the output is
 * written: an empty dataset is no conversion of a file whose records all failed.
 */
async function* noneReadIsAnError(cases: AsyncIterable<ReadCase>, report: ConversionReport, input: string): AsyncGenerator<ReadCase> {
  yield* cases
  const error = noCaseRead(report, input)
  if (error) throw error
}
