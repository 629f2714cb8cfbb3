import { basename, join } from 'node:path'
import { getAdapter } from '../../adapters/index.ts'
import type { Container, FormatName } from '../../adapters/types.ts'
import { containerOf, extensionOf } from '../codecs/index.ts'
import { EvalferryError, printable, UsageError } from '../errors.ts'
import { AtomicFile, assertWritable, exists, isDirectory, isGzipName, isSpecialFile, isStopping, joinShares, onInterrupt, removeOwnTemps, removeShares, shareOf, STDIO, stdoutAsDash } from '../io.ts'
import { stopWorkers } from '../workers.ts'
import { runBatch, shardJobs, totalBytes, type BatchJob, type BatchProgress } from '../batch.ts'
import { parseShard, partName } from '../shards.ts'
import { ProgressBar } from '../progress.ts'
import { mergeReport, newReport, summarize, type ConversionReport } from '../report.ts'
import { stringOption, type Command, type OptionValues } from './command.ts'
import { expandInputs, namesBatch } from './inputs.ts'
import { containerOption, dialectOption, formatOption, mapOption, onErrorOption } from './options.ts'
import { detect } from '../detect.ts'
import { filesRead } from '../read.ts'
import { filesWritten } from '../write.ts'
import type { Failure } from '../report-html.ts'
import type { ReviewFile } from '../review.ts'
import { convertServices, namesService } from './convert-services.ts'

/** The container written when the output's extension does not name one. */
export const DEFAULT_CONTAINER: Record<FormatName, Container> = {
  evalcase: 'yaml',
  deepeval: 'json',
  langsmith: 'jsonl',
  hf: 'jsonl',
  csv: 'csv',
  evals: 'json',
  promptfoo: 'yaml',
}

const EXTENSION: Record<Container, string> = { json: '.json', jsonl: '.jsonl', csv: '.csv', yaml: '.yaml', parquet: '.parquet' }

const usage = `Usage: evalferry convert <input...> --to <format> [-o <file|dir>] [options]

Converts dataset files to another format. An input or output may be a service's dataset:
langsmith://<dataset>, confident://<alias>, hf://datasets/<owner>/<name>[@<revision>][/<config>[/<split>]]. Several inputs or a directory convert as a batch
into the directory -o names, each file keeping its stem. Without -o, the output goes to
standard output. '-' is standard input or output. A gzip-compressed input is read as it is;
an output named .gz (cases.jsonl.gz) is written compressed.

Options:
  --to <format>           evalcase (agentv), deepeval, langsmith, hf, csv, evals
  --from <format>         the input format (detected from the content when absent)
  -o, --output <path>     output file, or directory for a batch
  --map <field=column>    table field mapping, repeatable (input=question, metadata=a,b, ignore=c)
  --dialect <d>           evalcase: agentv writes 'tests:' with 'criteria'
  --strict                any dropped field is an error
  --no-extras             drop what the target cannot express instead of carrying it under 'evalferry'
  --on-error fail|skip    stop at the first bad record (default), or skip bad records
  --rejects <file.jsonl>  with --on-error skip: where skipped records go (error, location,
                          the raw record), those of every file of a batch in one file
  --report <file>         write the conversion report: as JSON, or named .html as a page to
                          review (the counts, where each field went, the first records
                          side by side), made by reading the input and the output again
  --from-container <c>    the input container when the input's extension does not name one, or it is
                          standard input (json, jsonl, csv, yaml, parquet)
  --to-container <c>      the output container when the output's extension does not name one
  -j, --jobs <n>          threads: files converted at once, or the parts of one large CSV
                          or JSON Lines file (default: one per core; for a batch, one per
                          32 MiB of input, at most one per core that other work leaves free);
                          unless 1, a CSV of 64 MiB or more is parsed in a thread of its own
  --shard <i>/<n>         convert only the i-th of n deterministic parts of the input (1/n … n/n);
                          its rejects and report are named <stem>.part-<i>-of-<n><ext>
  --if-exists fail|append|replace
                          a push to a service dataset that holds other records: stop (default),
                          add to them, or replace them
  --dry-run               show what a push would send (counts, fields, target), and send nothing
  --timeout <s>           each request to a service: give up after this many seconds (default 60)
  --offline               no network: hf:// files are served from the cache
  --json                  print the report as JSON on standard output
  --quiet                 print nothing but errors`

function jobsOption(values: OptionValues): number | undefined {
  const text = stringOption(values, 'jobs')
  if (text === undefined) return undefined
  const n = /^\d+$/.test(text.trim()) ? Number(text) : NaN
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`--jobs takes a whole number of at least 1, not "${text}"`)
  return n
}

const command: Command = {
  name: 'convert',
  summary: 'convert datasets between formats',
  usage,
  examples: [
    { does: 'DeepEval goldens to an AgentV dataset', line: 'evalferry convert goldens.json --to agentv -o dataset.yaml' },
    { does: 'every file of a folder, bad records set aside', line: 'evalferry convert exports/ --to langsmith -o converted/ --on-error skip --rejects rejects.jsonl' },
    { does: 'to Parquet, with a page that shows where each field went', line: 'evalferry convert goldens.json --to hf -o goldens.parquet --report report.html' },
  ],
  options: {
    to: { type: 'string' },
    from: { type: 'string' },
    output: { type: 'string', short: 'o' },
    map: { type: 'string', multiple: true },
    dialect: { type: 'string' },
    strict: { type: 'boolean' },
    'no-extras': { type: 'boolean' },
    'on-error': { type: 'string' },
    rejects: { type: 'string' },
    report: { type: 'string' },
    'from-container': { type: 'string' },
    'to-container': { type: 'string' },
    jobs: { type: 'string', short: 'j' },
    shard: { type: 'string' },
    'if-exists': { type: 'string' },
    'dry-run': { type: 'boolean' },
    timeout: { type: 'string' },
    offline: { type: 'boolean' },
  },
  async run(context) {
    const { positionals, values, stdout, stderr, interactive } = context
    if (namesService(positionals, stringOption(values, 'output'))) return convertServices(context)
    const to = stringOption(values, 'to')
    if (!to) throw new UsageError(`--to is required\n\n${usage}`)
    if (!positionals.length) throw new UsageError(`name at least one input file\n\n${usage}`)
    const target = await getAdapter(to)
    const inputs = await expandInputs(positionals)
    // A path option as given, but standard output by any of its names is `-`.
    const pathOption = (name: string): string | undefined => {
      const path = stringOption(values, name)
      return path === undefined ? undefined : stdoutAsDash(path)
    }
    const output = pathOption('output') ?? STDIO
    if (output === '') throw new UsageError('-o is empty; name a file, a directory for a batch, or - for standard output')
    const toContainer = containerOption(values, 'to-container')
    // A directory or a glob is a batch however many files it holds; so is any input written into a directory (`-o out/`, as cp takes it).
    const batch = inputs.length > 1 || (await namesBatch(positionals)) || (output !== STDIO && (output.endsWith('/') || (await isDirectory(output))))
    if (batch && output === STDIO) throw new UsageError('a batch of inputs needs -o <directory>')
    if (batch && (await exists(output)) && !(await isDirectory(output))) throw new UsageError(`a batch of inputs needs -o <directory>; ${output} is a file`)
    // A name a dataset file would have is most likely a slip, not a directory to make: `-o all.json`.
    const fileNamed = batch && output !== STDIO && !output.endsWith('/') && containerOf(output) !== undefined && !(await exists(output))
    if (fileNamed) throw new UsageError(`a batch of inputs needs -o <directory>; ${output} is named as a ${containerOf(output)} file (end it with / to make a directory of that name)`)
    if (batch && inputs.includes(STDIO)) throw new UsageError('standard input cannot be one of a batch, which names each output after its input: convert it on its own')
    const named = batch || output === STDIO ? undefined : containerOf(output)
    if (toContainer && named && toContainer !== named) {
      throw new UsageError(`--to-container ${toContainer} contradicts the output ${output}, a ${named} file by its name`)
    }

    const outputFor = (input: string): string => {
      if (!batch) return output
      const inputContainer = containerOf(input)
      const container =
        toContainer ?? (inputContainer && target.writes.includes(inputContainer) ? inputContainer : DEFAULT_CONTAINER[target.name])
      // A compressed input gives a compressed output.
      return join(output, basename(input, extensionOf(input)) + EXTENSION[container] + (isGzipName(input) ? '.gz' : ''))
    }
    const jobs = inputs.map((input) => ({ input, output: outputFor(input) }))
    const outputs = new Set<string>()
    for (const job of jobs) {
      if (outputs.has(job.output)) throw new UsageError(`two inputs would both write ${job.output}`)
      outputs.add(job.output)
    }

    const map = await mapOption(values)
    const from = formatOption(values, 'from')
    const dialect = dialectOption(values)
    if (dialect && target.name !== 'evalcase') throw new UsageError(`--dialect chooses how evalcase is written; the output here is ${target.name}`)
    const onError = onErrorOption(values)
    const common = {
      to: target.name,
      ...(from ? { from } : {}),
      ...(map ? { map } : {}),
      ...(dialect ? { dialect } : {}),
      strict: Boolean(values.strict),
      extras: !values['no-extras'],
      onError,
      ...(containerOption(values, 'from-container') ? { inputContainer: containerOption(values, 'from-container')! } : {}),
    }
    const shardText = stringOption(values, 'shard')
    const shard = shardText === undefined ? undefined : parseShard(shardText)
    // n shards may run side by side in one directory: each writes its own rejects and report.
    const perShard = (path: string | undefined) => (path === undefined || !shard ? path : partName(path, shard))
    const rejects = perShard(pathOption('rejects'))
    const reportPath = perShard(pathOption('report'))
    if (rejects !== undefined && onError !== 'skip') throw new UsageError('--rejects names where skipped records go: add --on-error skip')
    // A batch's files write their rejects apart, joined in input order into the one file named.
    const shares = rejects !== undefined && jobs.length > 1 ? jobs.map((_, i) => shareOf(rejects, i)) : undefined
    // Standard output, a device or a pipe (`/dev/null`, a FIFO) has no extension to tell its container: the target's own is written.
    const unnamed = !batch && (output === STDIO || (containerOf(output) === undefined && (await isSpecialFile(output))))
    let planned: BatchJob[] = jobs.map((job, i) => {
      const outputContainer = unnamed ? (toContainer ?? DEFAULT_CONTAINER[target.name]) : (toContainer ?? containerOf(job.output))
      return {
        ...common,
        input: job.input,
        output: job.output,
        ...(outputContainer ? { outputContainer } : {}),
        ...(rejects !== undefined ? { rejects: shares ? shares[i]! : rejects } : {}),
      }
    })
    if (shard) planned = await shardJobs(planned, shard)
    const written = await Promise.all(planned.map((job) => filesWritten(job.output, target.name, job.outputContainer)))
    await assertWritable(
      [
        ...written.flat(),
        ...(rejects !== undefined ? [{ path: rejects, what: 'the rejects file' }] : []),
        ...(reportPath !== undefined ? [{ path: reportPath, what: 'the report' }] : []),
        ...(values.json ? [{ path: STDIO, what: 'the report (--json)' }] : []),
      ],
      await filesRead(inputs),
    )
    const parallel = jobsOption(values)

    const total: ConversionReport = newReport(from ?? 'detected', target.name, inputs, batch ? output : planned[0]!.output === STDIO ? undefined : planned[0]!.output)
    // A shard whose records lie at no known bytes (Parquet, JSON, YAML, a compressed file) is read from the file's start to its last record: how far that is is not known before.
    const sized = interactive && !planned.some((job) => job.recordRange && !job.recordBytes) ? await totalBytes(planned) : undefined
    const bytesTotal = sized?.known ? sized.bytes : undefined
    let latest: BatchProgress = { filesDone: 0, records: 0, bytes: 0 }
    const bar = interactive
      ? new ProgressBar(stderr, () => ({ filesDone: latest.filesDone, filesTotal: planned.length, records: latest.records, bytesDone: latest.bytes, bytesTotal }))
      : undefined
    // Interrupted, the files begun are removed: this thread's temporaries and the workers' (one process, one id).
    const begun = [...written.flat().map((file) => file.path), ...(shares ?? []), rejects, reportPath].filter((path) => path !== undefined && path !== STDIO) as string[]
    const release = onInterrupt(async () => {
      // Stopped first: a worker could otherwise begin a file after its directory was swept.
      await stopWorkers()
      await Promise.all(begun.map(removeOwnTemps))
      if (shares) await removeShares(shares)
    })
    // The report's file is begun before any output: a report that cannot be written stops the run before the output is written.
    let reportFile: AtomicFile | undefined
    try {
      if (reportPath !== undefined) reportFile = await AtomicFile.create(reportPath)
    } catch (error) {
      release()
      throw error
    }
    let failure: unknown
    // The reports of the files written, in input order: a failed batch's report still counts them.
    const reports: ConversionReport[] = []
    // The files that failed, each with what it had done when it stopped (see EvalferryError.report).
    const failed = new Map<number, ConversionReport | undefined>()
    try {
      await runBatch(planned, {
        ...(parallel ? { jobs: parallel } : {}),
        onProgress: (p) => (latest = p),
        onDone: (i, report) => (reports[i] = report),
        onFailed: (i, error) => failed.set(i, error instanceof EvalferryError ? error.report : undefined),
      })
      if (shares) await joinShares(rejects!, shares)
    } catch (error) {
      failure = error
      if (shares) await removeShares(shares)
    } finally {
      bar?.stop()
    }
    // Interrupted: the files failed because their workers were stopped, and the signal's handler exits.
    if (failure !== undefined && isStopping()) return new Promise<never>(() => {})
    // In input order, the files written and those that stopped part way.
    const done = planned.map((_, i) => reports[i] ?? failed.get(i)).filter((r) => r !== undefined)
    for (const report of done) mergeReport(total, report)
    const formats = done.map((r) => r.from)
    if (failure instanceof EvalferryError && failure.location.file) formats.push(...(await formatRead(failure.location.file, planned)))
    if (formats.length) total.from = [...new Set(formats)].join(', ')
    try {
      // A failed run's report says why it stopped.
      const files = batch && failure !== undefined ? batchFiles(planned, reports, failed) : undefined
      if (files) stderr.write(`evalferry: the batch stopped: ${printable(filesLine(files))}\n`)
      const why = failure instanceof EvalferryError ? { message: failure.describe(), code: failure.code, location: failure.location } : failure !== undefined ? { message: String((failure as Error)?.message ?? failure) } : undefined
      const reportText = JSON.stringify({ ...total, ...(why ? { failed: why } : {}), ...(files ? { files } : {}) }, null, 2) + '\n'
      if (reportFile) {
        await reportFile.sink.write(isPage(reportPath!) ? await reportPage(total, planned, reports, failed, why && { ...why, ...(files ? { files } : {}) }) : reportText)
        await reportFile.commit()
      }
      if (values.json) stdout.write(reportText)
    } catch (error) {
      await reportFile?.abort()
      throw error
    } finally {
      release()
    }
    if (failure) {
      // A file is never left half-written; standard output cannot be taken back.
      // A reader that closed standard output (| head) took what it wanted: nothing is said then.
      const closed = (failure as NodeJS.ErrnoException)?.code === 'EPIPE'
      if (!batch && planned[0]!.output === STDIO && !closed && !(failure instanceof UsageError)) stderr.write('evalferry: standard output holds only the records converted before the error below, not the whole dataset\n')
      throw failure
    }
    if (!values.json && !values.quiet) stderr.write(printable(summarize(total)) + '\n')
    return 0
  },
}

/** A report named .html is a page to review; any other name, JSON. */
function isPage(path: string): boolean {
  return /\.html?$/i.test(path)
}

/** The report as a page: the files converted (and the one that stopped) are read again to show where each field went. */
async function reportPage(
  total: ConversionReport,
  jobs: BatchJob[],
  reports: ConversionReport[],
  failed: ReadonlyMap<number, ConversionReport | undefined>,
  failure: Failure | undefined,
): Promise<string> {
  const { reviewConversion } = await import('../review.ts')
  const { renderReportHtml } = await import('../report-html.ts')
  const files: ReviewFile[] = []
  jobs.forEach((job, i) => {
    const report = reports[i] ?? failed.get(i)
    if (!report || job.input === STDIO) return
    files.push({
      input: job.input,
      ...(reports[i] && job.output !== STDIO ? { output: job.output } : {}),
      from: report.from as FormatName,
      to: report.to as FormatName,
      ...(job.inputContainer ? { inputContainer: job.inputContainer } : {}),
      ...(job.outputContainer ? { outputContainer: job.outputContainer } : {}),
      ...(job.map && typeof job.map === 'object' ? { map: job.map } : {}),
      ...(job.recordRange ? { recordRange: job.recordRange } : {}),
    })
  })
  return renderReportHtml(total, await reviewConversion(files), failure)
}

/** What a batch that stopped did with each file: outputs written, inputs that failed, inputs not converted. */
interface BatchFiles {
  written: string[]
  failed: string[]
  not_converted: string[]
}

function batchFiles(jobs: BatchJob[], reports: ConversionReport[], failed: ReadonlyMap<number, unknown>): BatchFiles {
  const files: BatchFiles = { written: [], failed: [], not_converted: [] }
  jobs.forEach((job, i) => {
    if (reports[i]) files.written.push(job.output)
    else if (failed.has(i)) files.failed.push(job.input)
    else files.not_converted.push(job.input)
  })
  return files
}

function filesLine(files: BatchFiles): string {
  const total = files.written.length + files.failed.length + files.not_converted.length
  const list = (paths: string[]) => (paths.length ? ` (${paths.join(', ')})` : '')
  return `${files.written.length} of ${total} file(s) written${list(files.written)}; ${files.failed.length} failed${list(files.failed)}; ${files.not_converted.length} not converted${list(files.not_converted)}`
}

/** The format a batch's failed input was read as: the one asked for, or the one detected (none when that failed). */
async function formatRead(file: string, jobs: BatchJob[]): Promise<string[]> {
  const job = jobs.find((j) => j.input === file)
  if (!job || job.input === STDIO) return []
  if (job.from) return [(await getAdapter(job.from)).name]
  try {
    return [(await detect(file, { target: (await getAdapter(job.to)).name, ...(job.inputContainer ? { container: job.inputContainer } : {}) })).format]
  } catch {
    return []
  }
}

export default command
