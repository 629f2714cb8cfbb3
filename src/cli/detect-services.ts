/** `evalferry detect <address>`: what a service's dataset holds, without converting it. */
import { EvalferryError, printable, UsageError } from '../errors.ts'
import { isAddress } from '../services/address.ts'
import { detectService, type ServiceDetection } from '../services/convert.ts'
import { stringOption, type CommandContext } from './command.ts'
import { timeoutOption } from './options.ts'

export async function detectServices({ positionals, values, stdout, stderr, env }: CommandContext): Promise<number> {
  if (!positionals.every(isAddress)) throw new UsageError('detect takes files or service addresses, not both at once')
  const timeoutSeconds = timeoutOption(values)
  const cacheDir = stringOption(values, 'cache-dir')
  const entries: (ServiceDetection | { file: string; error: object })[] = []
  let exitCode = 0
  for (const address of positionals) {
    try {
      entries.push(await detectService(address, { env, ...(timeoutSeconds ? { timeoutMs: timeoutSeconds * 1000 } : {}), ...(cacheDir ? { cacheDir } : {}), ...(values.offline === true ? { offline: true } : {}) }))
    } catch (error) {
      if (!(error instanceof EvalferryError)) throw error
      stderr.write(`evalferry: ${printable(error.describe())}\n`)
      exitCode = Math.max(exitCode, error.exitCode)
      entries.push({ file: address, error: { message: error.message, code: error.code } })
    }
  }
  if (values.json) {
    stdout.write(JSON.stringify(entries, null, 2) + '\n')
    return exitCode
  }
  for (const d of entries) {
    if ('error' in d) continue
    stdout.write(
      `${d.file}: ${d.format} (${d.service}), ${d.records} record${d.records === 1 ? '' : 's'}${d.splits.length ? `, splits: ${d.splits.join(', ')}` : ''}\n` +
        `  fields: ${d.fields.join(', ') || '(none)'}\n`,
    )
  }
  return exitCode
}
