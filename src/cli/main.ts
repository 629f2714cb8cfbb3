#!/usr/bin/env node
/** The `evalferry` command: picks the verb, parses its options, prints errors as `file:line: field: message`. */
import { parseArgs } from 'node:util'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { EvalferryError, printable, UsageError } from '../errors.ts'
import { isStopping, plainEnvironment } from '../io.ts'
import { own } from '../model.ts'
import { helpText, SHARED_OPTIONS, type Command } from './command.ts'

const COMMANDS: Record<string, () => Promise<{ default: Command }>> = {
  convert: () => import('./convert.ts'),
  detect: () => import('./detect.ts'),
  validate: () => import('./validate.ts'),
  prefetch: () => import('./prefetch.ts'),
  resolve: () => import('./resolve.ts'),
  cache: () => import('./cache.ts'),
}

const SUMMARIES: Record<string, string> = {
  convert: 'convert datasets between formats',
  detect: 'tell the format, container, record count and fields of files',
  validate: 'parse and check datasets; errors with file:line',
  prefetch: 'fetch every git file the datasets reference into the cache',
  resolve: 'print the local path of each referenced file',
  cache: 'show or clean the repository cache: dir | list | prune | clear',
}

/**
 * An option that takes one value, given twice with two values (`--to evals --to deepeval`): which
 * one was meant cannot be told, so neither is taken.
 */
function refuseRepeated(tokens: ReturnType<typeof parseArgs>['tokens'], options: Command['options']): void {
  const seen = new Map<string, string>()
  for (const token of tokens ?? []) {
    if (token.kind !== 'option' || token.value === undefined || options[token.name]?.multiple) continue
    const earlier = seen.get(token.name)
    if (earlier !== undefined && earlier !== token.value) {
      throw new UsageError(`${token.rawName} is given twice, as ${JSON.stringify(earlier)} and ${JSON.stringify(token.value)}; give it once`)
    }
    seen.set(token.name, token.value)
  }
}

/**
 * `--jobs -1` as `--jobs=-1` (`-j -1` as `-j-1`): a negative number after an option that takes a
 * value is that value (no option is named by a digit), so that it meets the option's own check and
 * message, not the parser's advice to write it with `=`.
 */
function negativeValues(args: string[], options: Command['options']): string[] {
  const takesValue = (arg: string): boolean => {
    if (arg.startsWith('--')) return options[arg.slice(2)]?.type === 'string'
    return /^-[A-Za-z]$/.test(arg) && Object.values(options).some((o) => o.short === arg[1] && o.type === 'string')
  }
  const out: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--') return out.concat(args.slice(i))
    const next = args[i + 1]
    if (next !== undefined && /^-\d/.test(next) && takesValue(arg)) {
      out.push(arg.startsWith('--') ? `${arg}=${next}` : arg + next)
      i++
    } else out.push(arg)
  }
  return out
}

export function version(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'package.json')
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string }
      if (pkg.name === 'evalferry') return pkg.version ?? '0.0.0'
    }
    dir = dirname(dir)
  }
  return '0.0.0'
}

function mainHelp(): string {
  const verbs = Object.entries(SUMMARIES)
    .map(([name, summary]) => `  ${name.padEnd(10)}${summary}`)
    .join('\n')
  return `evalferry ${version()}: move LLM-evaluation datasets between tools without losing a field

Usage: evalferry <command> [options]

Commands:
${verbs}

Formats: evalcase (agentv), deepeval, langsmith, hf (huggingface), csv, evals
Shared options: --cache-dir <dir>, --host <name>=<url>[,type=github|gitlab|bitbucket|bitbucket-server][,raw=<url>|off], --quiet, --json, --help, --version
Run 'evalferry <command> --help' for a command's options.
`
}

export interface RunIO {
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  env: NodeJS.ProcessEnv
  isTTY: boolean
}

/** Runs one command line; resolves to the exit code. */
export async function run(argv: string[], io: RunIO): Promise<number> {
  const [verb, ...rest] = argv
  try {
    if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help') {
      io.stdout.write(mainHelp())
      return verb === undefined ? 2 : 0
    }
    if (verb === '--version' || verb === '-V') {
      io.stdout.write(version() + '\n')
      return 0
    }
    const load = own(COMMANDS, verb)
    if (!load) throw new UsageError(`unknown command "${verb}"; expected one of ${Object.keys(COMMANDS).join(', ')}`)
    const command = (await load()).default
    const options = { ...SHARED_OPTIONS, ...command.options }
    let parsed
    try {
      parsed = parseArgs({ args: negativeValues(rest, options), options, allowPositionals: true, strict: true, tokens: true })
    } catch (error) {
      throw new UsageError(`${(error as Error).message.replace(/\. To specify a positional.*$/s, '')}\n\n${command.usage}`)
    }
    refuseRepeated(parsed.tokens, options)
    const values = parsed.values as Record<string, string | boolean | string[] | undefined>
    if (values.help) {
      io.stdout.write(helpText(command) + '\n')
      return 0
    }
    if (values.version) {
      io.stdout.write(version() + '\n')
      return 0
    }
    return await command.run({
      positionals: parsed.positionals,
      values,
      stdout: io.stdout,
      stderr: io.stderr,
      env: io.env,
      interactive: io.isTTY && !values.quiet && !values.json,
    })
  } catch (error) {
    // Interrupted: what failed failed because the run was stopping (a worker ended under it), and the signal's handler exits.
    if (isStopping()) return new Promise<never>(() => {})
    if (error instanceof EvalferryError) {
      io.stderr.write(`evalferry: ${printable(error.describe())}\n`)
      return error.exitCode
    }
    // The reader of standard output closed it (`| head`): stop quietly, as a tool ended by SIGPIPE.
    if ((error as NodeJS.ErrnoException)?.code === 'EPIPE') return 141
    const message = error instanceof Error ? error.message : String(error)
    io.stderr.write(`evalferry: internal error: ${printable(message)}\n`)
    if (io.env.EVALFERRY_DEBUG && error instanceof Error && error.stack) io.stderr.write(error.stack + '\n')
    return 1
  }
}

/**
 * V8 runs WebAssembly as baseline code first, and compiles a function again, optimized, once it
 * has run a budget of work (1.8 million by default, about as many bytes of code run). The
 * optimizing compiler's working memory stays in the C allocator's arenas of the threads it ran on,
 * which do not give it back. parquet-wasm has many functions that cross the default budget early
 * in a large file; at this one, only those that do most of the work are compiled again. 100 MB
 * of text in one zstd row group to JSON Lines, read in slices of 8 MB, peaked at 182 to 193 MB
 * with V8's budget and 164 to 180 MB with this one, in no more time.
 * The process's flag, not the library's: a program that imports evalferry keeps its own. A budget
 * given on node's command line wins.
 */
const WASM_TIERING_BUDGET = 100_000_000

/** The V8 flag that sets that budget, unless node's own arguments (`execArgv`) give one. */
export function wasmTieringFlag(execArgv: readonly string[]): string | undefined {
  return execArgv.some((arg) => /^--wasm[-_]tiering[-_]budget/.test(arg)) ? undefined : `--wasm-tiering-budget=${WASM_TIERING_BUDGET}`
}

/** Runs the command line as this process: its arguments, standard streams and environment (kept as a plain copy, see `plainEnvironment`). */
export async function main(): Promise<void> {
  plainEnvironment()
  const flag = wasmTieringFlag(process.execArgv)
  if (flag) setFlagsFromString(flag)
  process.exitCode = await run(process.argv.slice(2), {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    isTTY: Boolean(process.stderr.isTTY),
  })
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href
if (invokedDirectly) await main()
