/** `evalferry convert` from or to a service address: one input, one output, then the report as for files. */
import { AtomicFile, STDIO, stdoutAsDash } from '../io.ts'
import { UsageError, printable, EvalferryError } from '../errors.ts'
import { convert } from '../convert.ts'
import { summarize } from '../report.ts'
import { isAddress } from '../services/address.ts'
import type { FormatOption } from '../../adapters/types.ts'
import { IF_EXISTS } from '../services/context.ts'
import type { ServiceReport } from '../services/convert.ts'
import { stringOption, type CommandContext } from './command.ts'
import { containerOption, dialectOption, formatOption, mapOption, onErrorOption, timeoutOption } from './options.ts'
import { checkPartOf, requireChoice } from '../option-checks.ts'
import { ProgressBar } from '../progress.ts'
import { parseShard, partName } from '../shards.ts'

/** Whether the command line names a service as its input or output. */
export function namesService(positionals: string[], output: string | undefined): boolean {
  return positionals.some(isAddress) || isAddress(output)
}

export async function convertServices({ positionals, values, stdout, stderr, env, interactive }: CommandContext): Promise<number> {
  if (positionals.length !== 1) throw new UsageError('a service address converts on its own: name one input')
  const input = positionals[0]!
  const whole = stdoutAsDash(stringOption(values, 'output') ?? STDIO)
  const shardText = stringOption(values, 'shard')
  if (shardText !== undefined) checkPartOf(input, whole, true)
  const shard = shardText === undefined ? undefined : parseShard(shardText)
  // As of local files: n shards may run side by side in one directory, each with its own output and report.
  const perShard = (path: string): string => (shard ? partName(path, shard) : path)
  const output = perShard(whole)
  const ifExists = stringOption(values, 'if-exists')
  requireChoice('--if-exists', ifExists, IF_EXISTS)
  const timeoutSeconds = timeoutOption(values)
  if (values['dry-run'] && !isAddress(output)) throw new UsageError('--dry-run shows what a push would send: the output must be a service address')
  const from = formatOption(values, 'from')
  const toText = stringOption(values, 'to')
  const to = toText === undefined ? undefined : formatOption(values, 'to')
  if (!to && !isAddress(output)) throw new UsageError('--to is required (an address as the output implies it)')
  const map = await mapOption(values)
  const dialect = dialectOption(values)
  const reportPath = stringOption(values, 'report') === undefined ? undefined : perShard(stringOption(values, 'report')!)
  const reportFile = reportPath === undefined ? undefined : await AtomicFile.create(reportPath)
  const fromContainer = containerOption(values, 'from-container')
  const toContainer = containerOption(values, 'to-container')
  // EVALFERRY_OFFLINE and EVALFERRY_TIMEOUT are read from `env` where the requests are made.
  const offline = values.offline === true
  const cacheDir = stringOption(values, 'cache-dir')
  let report: ServiceReport | undefined
  let failure: unknown
  // Records read, converted and sent: what a bar can count of a service, whose size is not known beforehand.
  const progress = { records: 0, bytes: 0 }
  const bar = interactive ? new ProgressBar(stderr, () => ({ filesDone: 0, filesTotal: 1, records: progress.records, bytesDone: progress.bytes, bytesTotal: undefined })) : undefined
  try {
    report = (await convert({
      input,
      output,
      to: (to ?? undefined) as FormatOption,
      ...(from ? { from } : {}),
      ...(map ? { map } : {}),
      ...(dialect ? { dialect } : {}),
      strict: Boolean(values.strict),
      extras: !values['no-extras'],
      onError: onErrorOption(values),
      ...(fromContainer ? { inputContainer: fromContainer } : {}),
      ...(toContainer ? { outputContainer: toContainer } : {}),
      ...(ifExists ? { ifExists } : {}),
      ...(values['dry-run'] ? { dryRun: true } : {}),
      ...(timeoutSeconds !== undefined ? { timeoutMs: timeoutSeconds * 1000 } : {}),
      ...(offline ? { offline: true } : {}),
      ...(cacheDir ? { cacheDir } : {}),
      ...(shard ? { shard } : {}),
      env,
      ...(bar ? { progress } : {}),
    })) as ServiceReport
  } catch (error) {
    failure = error
    if (error instanceof EvalferryError) report = error.report as ServiceReport | undefined
  } finally {
    bar?.stop()
  }
  if (reportFile) {
    if (report) {
      const failed = failure instanceof EvalferryError ? { failed: { message: failure.describe(), code: failure.code, location: failure.location } } : {}
      await reportFile.sink.write(JSON.stringify({ ...report, ...failed }, null, 2) + '\n')
      await reportFile.commit()
    } else await reportFile.abort()
  }
  if (failure) throw failure
  if (values.json) stdout.write(JSON.stringify(report, null, 2) + '\n')
  else if (!values.quiet && report) {
    const lines = [summarize(report)]
    if (report.dry_run) {
      const { records, target, fields, files } = report.dry_run
      // The Hub takes a commit of files, not records of fields.
      const what = files ? `files: ${files.join(', ')}` : `fields: ${fields.join(', ') || 'none'}`
      lines.push(`dry run: would send ${records} record(s) to ${target} (${what}); nothing was sent`)
    }
    if (report.push) {
      const p = report.push
      lines.push(`${p.target}: ${p.created ? 'created; ' : ''}${p.sent} sent, ${p.updated} updated, ${p.unchanged} already there, ${p.removed} removed (${p.requests} requests)`)
    }
    stderr.write(printable(lines.join('\n')) + '\n')
  }
  return 0
}
