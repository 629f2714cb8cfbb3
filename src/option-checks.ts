/**
 * The checks of what a caller gives read, write and convert: a value the library or the command
 * line cannot take is a usage error naming the option, before any file is opened.
 */
import type { Container } from '../adapters/types.ts'
import { containerOf } from './codecs/index.ts'
import { requireAbortSignal, UsageError } from './errors.ts'
import { missingInput, STDIO } from './io.ts'
import type { FileConvertOptions, ReadOptions } from './options.ts'
import { isAddress } from './services/address.ts'

/** The container a path names by its extension, or the one given for it; given both, they must agree. */
export function requireContainer(path: string, given: Container | undefined, role: 'input' | 'output'): Container {
  const named = path === STDIO ? undefined : containerOf(path)
  if (given && named && given !== named) {
    throw new UsageError(`${path} is named as a ${named} file, but --${role === 'input' ? 'from' : 'to'}-container says ${given}; rename the file, or leave the option out`)
  }
  const container = given ?? named
  if (!container) {
    if (role === 'input') {
      const missing = missingInput(path)
      if (missing) throw missing
    }
    throw new UsageError(
      path === STDIO
        ? `standard ${role === 'input' ? 'input' : 'output'} needs its container named (--${role === 'input' ? 'from-container' : 'to-container'} json|jsonl|csv|yaml|parquet)`
        : `cannot tell the container of ${path} from its extension; expected .json, .jsonl, .csv, .tsv, .yaml, .yml or .parquet, each maybe followed by .gz${role === 'input' ? ', or --from-container' : ', or --to-container'}`,
    )
  }
  return container
}

/**
 * Where a part of the input (`--shard`, a record range) can be taken: it is written to a file, as a
 * push takes the whole dataset, and of a service's datasets only an hf:// one is split by shard.
 */
export function checkPartOf(input: string, output: string, shard: boolean): void {
  if (isAddress(output)) throw new UsageError('--shard writes a part of the input; a push takes the whole dataset')
  if (shard && isAddress(input) && !input.startsWith('hf://')) throw new UsageError(`--shard splits local files and hf:// datasets; ${input} is read from its service: convert it to a file first, then shard that`)
}

/** A library caller's missing argument, named as a usage error rather than failing deeper in. */
export function requireText(fn: string, what: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${fn} needs ${what}, a string; got ${value === '' ? 'an empty one' : typeof value}`)
}

/**
 * Refuses a value outside `choices` as a usage error, naming it as `name`: the library's option
 * (`convert(): the option onError`) or the command line's flag (`--on-error`).
 */
export function requireChoice<T extends string>(name: string, value: unknown, choices: readonly T[]): asserts value is T | undefined {
  if (value !== undefined && !choices.includes(value as T)) throw new UsageError(`${name} takes ${choices.join(' or ')}, not ${JSON.stringify(value)}`)
}

/** A yes-or-no option given as anything but a boolean (`'false'` would read as true) is refused. */
function requireBoolean(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'boolean') throw new UsageError(`${name} takes true or false, not ${JSON.stringify(value)}`)
}

/** What `map` takes: `--map`'s pairs as an object (`{ input: 'question' }`), or a function of the row. */
function requireMap(fn: string, map: unknown): void {
  if (map !== undefined && typeof map !== 'function' && (typeof map !== 'object' || map === null || Array.isArray(map))) {
    throw new UsageError(`${fn}: the option map takes an object of --map's pairs ({ input: 'question' }) or a function of the row, not ${JSON.stringify(map)}`)
  }
}

/** The write options a caller gives, checked as the command line checks its flags. */
export function requireWriteOptions(fn: string, options: { extras?: unknown; strict?: unknown }): void {
  requireBoolean(`${fn}: the option extras`, options.extras)
  requireBoolean(`${fn}: the option strict`, options.strict)
}

/** Checked as the other options are, and already aborted, the call does nothing. */
export function requireSignal(fn: string, signal: unknown): void {
  requireAbortSignal(`${fn}: `, signal)
  ;(signal as AbortSignal | undefined)?.throwIfAborted()
}

/** A dialect is a way of writing evalcase: given with another target it would be ignored. */
export function requireDialectFor(fn: string, dialect: unknown, to: string): void {
  requireChoice(`${fn}: the option dialect`, dialect, DIALECTS)
  if (dialect !== undefined && to !== 'evalcase') throw new UsageError(`${fn}: the option dialect chooses how evalcase is written; the target here is ${to}`)
}

export const DIALECTS = ['agentv', 'evalcase'] as const
export const ON_ERROR = ['fail', 'skip'] as const

/** What `read()` is given, checked as the command line checks its flags. */
export function checkReadOptions(input: unknown, options: unknown): asserts options is ReadOptions {
  requireText('read()', 'the input path', input)
  // `read(file, 'deepeval')` from JavaScript: the format goes in the options.
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new UsageError(`read() takes its options as an object (read(file, { from: 'deepeval' })), not ${typeof options === 'string' ? JSON.stringify(options) : String(options)}`)
  }
  const given = options as ReadOptions
  requireChoice('read(): the option onError', given.onError, ON_ERROR)
  requireChoice('read(): the option comments', given.comments, ['warn'])
  requireChoice('read(): the option includes', given.includes, ['warn'])
  requireMap('read()', given.map)
  requireSignal('read()', given.signal)
}

/** What `convert()` is given that the formats and files need not tell, checked before either is looked at. */
export function checkConvertOptions(options: FileConvertOptions): void {
  requireChoice('convert(): the option onError', options.onError, ON_ERROR)
  requireWriteOptions('convert()', options)
  requireMap('convert()', options.map)
  requireSignal('convert()', options.signal)
  // As the command line refuses --rejects without --on-error skip: no record would ever go there.
  if (options.rejects !== undefined && options.onError !== 'skip') throw new UsageError("convert(): the option rejects names where skipped records go: add onError: 'skip'")
  if (options.threads !== undefined && !(Number.isSafeInteger(options.threads) && options.threads >= 1)) {
    throw new UsageError(`convert(): the option threads takes a whole number of at least 1, not ${typeof options.threads === 'string' ? JSON.stringify(options.threads) : String(options.threads)}`)
  }
}
