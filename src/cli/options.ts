/** Option values shared by several commands, turned into library options. */
import { UsageError } from '../errors.ts'
import { parseContainer } from '../codecs/index.ts'
import type { Container, FieldMapping } from '../../adapters/types.ts'
import { listOption, stringOption, type OptionValues } from './command.ts'

export function containerOption(values: OptionValues, name: string): Container | undefined {
  const v = stringOption(values, name)
  return v === undefined ? undefined : parseContainer(v)
}

/** `--map k=v` (repeatable) as a field mapping; list-valued keys take comma-separated columns. */
export async function mapOption(values: OptionValues): Promise<FieldMapping | undefined> {
  const pairs = listOption(values, 'map')
  if (!pairs.length) return undefined
  const { parseMapArgs } = await import('../mapping.ts')
  return parseMapArgs(pairs)
}

/** `--dialect`: the evalcase dialect to write, `agentv` (`tests:` with `criteria`) or `evalcase` (`evalcases:`). */
export function dialectOption(values: OptionValues): 'agentv' | 'evalcase' | undefined {
  const v = stringOption(values, 'dialect')
  if (v !== undefined && v !== 'agentv' && v !== 'evalcase') throw new UsageError(`--dialect takes agentv or evalcase, not "${v}"`)
  return v
}

export function onErrorOption(values: OptionValues): 'fail' | 'skip' {
  const v = stringOption(values, 'on-error') ?? 'fail'
  if (v !== 'fail' && v !== 'skip') throw new UsageError(`--on-error takes fail or skip, not "${v}"`)
  return v
}
