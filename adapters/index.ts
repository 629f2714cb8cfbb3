/** The registry of dataset formats. Modules load on first use, so the CLI starts fast. */
import { UsageError } from '../src/errors.ts'
import type { Adapter, FormatAlias, FormatName } from './types.ts'

const loaders: Record<FormatName, () => Promise<{ default: Adapter }>> = {
  evalcase: () => import('./evalcase.ts'),
  deepeval: () => import('./deepeval.ts'),
  langsmith: () => import('./langsmith.ts'),
  hf: () => import('./huggingface.ts'),
  csv: () => import('./table.ts'),
  evals: () => import('./evals.ts'),
  promptfoo: () => import('./promptfoo.ts'),
}

const ALIASES: Record<FormatAlias, FormatName> = {
  agentv: 'evalcase',
  huggingface: 'hf',
  table: 'csv',
  evalcase_json: 'evals',
}

/** The formats' canonical names; frozen, since detection and every lookup read it. */
export const FORMAT_NAMES: readonly FormatName[] = Object.freeze(Object.keys(loaders) as FormatName[])

/** The canonical name of a format given as the user wrote it, or a usage error listing the names. */
export function formatName(name: string): FormatName {
  const lower = name.toLowerCase()
  if (Object.hasOwn(loaders, lower)) return lower as FormatName
  const alias = Object.hasOwn(ALIASES, lower) ? ALIASES[lower as FormatAlias] : undefined
  if (alias) return alias
  throw new UsageError(`unknown format "${name}"; expected one of ${FORMAT_NAMES.join(', ')} (or ${Object.keys(ALIASES).join(', ')})`)
}

const cache = new Map<FormatName, Promise<Adapter>>()

export function getAdapter(name: string): Promise<Adapter> {
  const format = formatName(name)
  let adapter = cache.get(format)
  if (!adapter) {
    adapter = loaders[format]().then((m) => m.default)
    cache.set(format, adapter)
  }
  return adapter
}

export function allAdapters(): Promise<Adapter[]> {
  return Promise.all(FORMAT_NAMES.map((f) => getAdapter(f)))
}
