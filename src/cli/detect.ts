import { detect, errorEntry, type Detection } from '../detect.ts'
import { EvalferryError, formatLocation, printable, UsageError } from '../errors.ts'
import type { Command } from './command.ts'
import { containerOption } from './options.ts'
import { expandInputs, filesProgress } from './inputs.ts'
import { detectServices } from './detect-services.ts'
import { isAddress } from '../services/address.ts'

const usage = `Usage: evalferry detect <file|address...> [--from-container <container>] [--timeout <s>] [--offline] [--json]

Tells, for each file, its format and container (from the content, not only the extension),
how sure that is, how many records it holds and which fields they use. A record that does not
read (a line of JSON Lines that is not JSON) is not counted: the first is told on stderr, and
the exit is 1. --from-container names the container of a file whose extension names none
(json, jsonl, csv, yaml, parquet). On a terminal, a progress bar shows on stderr as for convert.
A service's dataset (langsmith://<dataset>, confident://<alias>, hf://datasets/<owner>/<name>)
is read to tell its records, splits and fields (--timeout <s> per request); --offline tells a
Hub dataset from the repository cache alone, with no request.`

const command: Command = {
  name: 'detect',
  summary: 'tell the format of files',
  usage,
  examples: [
    { does: 'the format, container, record count and fields of a file', line: 'evalferry detect goldens.json' },
    { does: 'every file of a folder, as JSON', line: 'evalferry detect exports/ --json' },
  ],
  options: { 'from-container': { type: 'string' }, timeout: { type: 'string' }, offline: { type: 'boolean' } },
  async run(context) {
    const { positionals, values, stdout, stderr, interactive } = context
    if (!positionals.length) throw new UsageError(`name at least one file\n\n${usage}`)
    if (positionals.some(isAddress)) return detectServices(context)
    const container = containerOption(values, 'from-container')
    // Each file in order, told or not: a file that cannot be told has its error in its place.
    const entries: (Detection | { file: string; error: object })[] = []
    const failures: string[] = []
    let exitCode = 0
    const files = await expandInputs(positionals)
    const bar = interactive ? await filesProgress(stderr, files) : undefined
    try {
      for (const file of files) {
        try {
          const detection = await detect(file, { count: true, ...(container ? { container } : {}), ...(bar ? { progress: bar.reading } : {}) })
          entries.push(detection)
          // Records that do not read are bad data, told as `validate` tells the first: the detection stands.
          if (detection.unreadable) {
            const { count, first } = detection.unreadable
            failures.push(`${formatLocation(first.location)}${first.message}${count > 1 ? ` (and ${count - 1} more that do${count === 2 ? 'es' : ''} not read; validate lists them)` : ''}`)
            exitCode = Math.max(exitCode, 1)
          }
        } catch (error) {
          // One file that cannot be told (its data, or a name that tells no container) does not hide what the others are.
          if (!(error instanceof EvalferryError)) throw error
          failures.push(error.describe())
          exitCode = Math.max(exitCode, error.exitCode)
          entries.push({ file, error: errorEntry(error) })
        }
        bar?.fileDone()
      }
    } finally {
      bar?.stop()
    }
    for (const failure of failures) stderr.write(`evalferry: ${printable(failure)}\n`)
    if (values.json) {
      stdout.write(JSON.stringify(entries, null, 2) + '\n')
      return exitCode
    }
    for (const d of entries) {
      if ('error' in d) continue
      const others = d.candidates
        .slice(1)
        .filter((c) => c.confidence > 0)
        .map((c) => `${c.format} ${c.confidence.toFixed(2)}${c.passedOver ? ` [passed over: ${c.passedOver}]` : ''}`)
      stdout.write(
        `${d.file}: ${d.format} (${d.container}), confidence ${d.confidence.toFixed(2)}` +
          `${others.length ? ` (also ${others.join(', ')})` : ''}, ${d.records} record${d.records === 1 ? '' : 's'}` +
          `${d.unreadable ? ` and ${d.unreadable.count} that do${d.unreadable.count === 1 ? 'es' : ''} not read` : ''}\n` +
          `  fields: ${d.fields.join(', ') || '(none)'}\n`,
      )
    }
    return exitCode
  },
}

export default command
