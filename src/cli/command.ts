import type { ParseArgsConfig } from 'node:util'

export type OptionSpec = NonNullable<ParseArgsConfig['options']>
export type OptionValues = Record<string, string | boolean | string[] | undefined>

/** What a command gets: parsed arguments and the streams to speak on. */
export interface CommandContext {
  positionals: string[]
  values: OptionValues
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  env: NodeJS.ProcessEnv
  /** True when stderr is a terminal and neither --quiet nor --json was given. */
  interactive: boolean
}

/** One CLI verb: its own options (the shared ones are added by main), usage text and action. */
export interface Command {
  name: string
  summary: string
  usage: string
  /** Command lines `--help` ends with, each with what it does. */
  examples: { does: string; line: string }[]
  options: OptionSpec
  /** Resolves to the exit code. Throw an EvalferryError for failures; main prints it. */
  run(ctx: CommandContext): Promise<number>
}

/** Options every command takes (SPEC section 5). */
export const SHARED_OPTIONS: OptionSpec = {
  'cache-dir': { type: 'string' },
  host: { type: 'string', multiple: true },
  quiet: { type: 'boolean', short: 'q' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
}

export function stringOption(values: OptionValues, name: string): string | undefined {
  const v = values[name]
  return typeof v === 'string' ? v : undefined
}

export function listOption(values: OptionValues, name: string): string[] {
  const v = values[name]
  if (Array.isArray(v)) return v
  return typeof v === 'string' ? [v] : []
}

/** What `--help` prints: the usage, then the examples. */
export function helpText(command: Command): string {
  const examples = command.examples.map(({ does, line }) => `  # ${does}\n  ${line}`).join('\n')
  return `${command.usage}\n\nExamples:\n${examples}`
}
