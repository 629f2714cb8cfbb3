import { EvalferryError, UsageError, formatLocation, printable } from '../errors.ts'
import { read } from '../read.ts'
import { newReport } from '../report.ts'
import { stringOption, type Command } from './command.ts'
import { containerOption, formatOption, mapOption } from './options.ts'
import { expandInputs, filesProgress } from './inputs.ts'

const usage = `Usage: evalferry validate <file...> [--from <format>] [--map k=v ...] [--from-container <container>] [--json]

Parses and checks every record of each file against its format, and against what the format's
own tool refuses or skips (AgentV 4.42.4 for evalcase: a case without id, input, or criteria,
expected_output or assertions; a role it does not take), and lists every error as
file:line: field: message. Exits 1 when any record is bad. On a terminal, a progress bar shows on stderr as for convert.
--from, --map and --from-container are convert's.`

const command: Command = {
  name: 'validate',
  summary: 'parse and check datasets',
  usage,
  examples: [
    { does: 'every error of a dataset, as file:line: field: message', line: 'evalferry validate goldens.json' },
    { does: 'a spreadsheet, naming its columns', line: 'evalferry validate questions.csv --from csv --map input=question --map expected_output=answer' },
  ],
  options: { from: { type: 'string' }, map: { type: 'string', multiple: true }, 'from-container': { type: 'string' } },
  async run({ positionals, values, stdout, stderr, interactive }) {
    if (!positionals.length) throw new UsageError(`name at least one file\n\n${usage}`)
    const from = formatOption(values, 'from')
    const container = containerOption(values, 'from-container')
    const map = await mapOption(values)
    const files = await expandInputs(positionals)
    const results = []
    let bad = 0
    const bar = interactive ? await filesProgress(stderr, files) : undefined
    try {
      for (const file of files) {
        const report = newReport(from ?? 'detected', 'none', [file])
        try {
          for await (const _ of read(file, {
            ...(from ? { from } : {}),
            ...(container ? { container } : {}),
            ...(map ? { map } : {}),
            onError: 'skip',
            check: true,
            report,
            ...(bar ? { progress: bar.reading } : {}),
          })) {
            // reading is the check
          }
        } catch (error) {
          // A container that cannot be parsed ends the file; usage errors still end the run.
          if (!(error instanceof EvalferryError) || error.exitCode === 2) throw error
          report.errors.push({ message: error.message, code: error.code, location: error.location })
        }
        bar?.fileDone()
        bad += report.errors.length
        results.push({ file, cases: report.records.read, errors: report.errors, warnings: report.warnings })
        if (!values.json) {
          bar?.clear()
          for (const e of report.errors) stderr.write(`${printable(formatLocation(e.location) + e.message)}\n`)
          if (!values.quiet) {
            for (const w of report.warnings) stderr.write(`warning: ${printable(formatLocation(w.location) + w.message)}\n`)
            stdout.write(`${file}: ${report.records.read} case${report.records.read === 1 ? '' : 's'}, ${report.errors.length} error${report.errors.length === 1 ? '' : 's'}\n`)
          }
        }
      }
    } finally {
      bar?.stop()
    }
    if (values.json) stdout.write(JSON.stringify(results, null, 2) + '\n')
    return bad ? 1 : 0
  },
}

export default command
