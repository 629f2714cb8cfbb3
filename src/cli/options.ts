/** Option values shared by several commands, turned into library options. */
import { parseContainer } from '../codecs/index.ts'
import { formatName } from '../../adapters/index.ts'
import type { Container, FieldMapping, FormatName } from '../../adapters/types.ts'
import { listOption, stringOption, type OptionValues } from './command.ts'
import { DIALECTS, ON_ERROR, requireChoice } from '../option-checks.ts'
import { checkSetting } from '../resolver/options.ts'

export function containerOption(values: OptionValues, name: string): Container | undefined {
  const v = stringOption(values, name)
  return v === undefined ? undefined : parseContainer(v)
}

/** `--timeout <s>` in seconds, refused as the library refuses its timeoutSeconds. */
export function timeoutOption(values: OptionValues): number | undefined {
  const text = stringOption(values, 'timeout')
  if (text === undefined) return undefined
  const seconds = Number(text)
  checkSetting('timeoutSeconds', seconds, '--timeout', JSON.stringify(text))
  return seconds
}

/** `--from`: a format's name or alias in any case, as its canonical name. */
export function formatOption(values: OptionValues, name: string): FormatName | undefined {
  const v = stringOption(values, name)
  return v === undefined ? undefined : formatName(v)
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
  requireChoice('--dialect', v, DIALECTS)
  return v
}

export function onErrorOption(values: OptionValues): 'fail' | 'skip' {
  const v = stringOption(values, 'on-error') ?? 'fail'
  requireChoice('--on-error', v, ON_ERROR)
  return v
}
