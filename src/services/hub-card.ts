/**
 * A Hub dataset's card (README.md, docs/services.md section 3.5): its YAML front matter's
 * `configs` name each config's data files by split, as `datasets` reads them; a push writes its
 * config and split there, keeping what else the card says.
 */
import { yamlPackage } from '../codecs/yaml-emit.ts'
import { FetchError } from '../errors.ts'

type Json = Record<string, unknown>

/** One config of a card: its data files by split, as path patterns relative to the repository. */
export interface CardConfig {
  name: string
  /** Marked `default: true`: the config read when the address names none. */
  default: boolean
  /** Split → patterns; absent when the card names only a folder (`data_dir`), whose files' names tell their splits. */
  splits?: Map<string, string[]>
  dataDir?: string
}

export interface Card {
  /** The front matter (empty when the card has none). */
  front: Json
  /** What follows the front matter. */
  body: string
}

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value)

/** A card's front matter and body; `where` names it in an error (a front matter that is not YAML). */
export function parseCard(text: string, where: string): Card {
  const match = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text)
  if (!match) return { front: {}, body: text }
  let front: unknown
  try {
    front = yamlPackage().parse(match[1]!)
  } catch (error) {
    throw new FetchError('E_FETCH', `${where}: the card's front matter is not YAML: ${(error as Error).message.split('\n')[0]}`)
  }
  return { front: isObject(front) ? front : {}, body: text.slice(match[0].length) }
}

const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : value === undefined || value === null ? [] : [value])

/** The configs a card names (`configs:`), each with its splits' patterns, as `datasets` reads `data_files`. */
export function cardConfigs(card: Card, where: string): CardConfig[] {
  const configs: CardConfig[] = []
  for (const [i, entry] of asList(card.front.configs).entries()) {
    if (!isObject(entry) || typeof entry.config_name !== 'string') throw new FetchError('E_FETCH', `${where}: the card's configs[${i}] has no config_name`)
    const dataDir = typeof entry.data_dir === 'string' ? entry.data_dir.replace(/^\.\/|\/+$/g, '') : undefined
    const splits = dataFiles(entry.data_files, `${where}: the card's config '${entry.config_name}'`)
    configs.push({ name: entry.config_name, default: entry.default === true, ...(splits ? { splits } : {}), ...(dataDir ? { dataDir } : {}) })
  }
  return configs
}

/** `data_files` in each form `datasets` takes: a pattern, a list of them (split `train`), `{split, path}` entries, or a split → patterns mapping. */
function dataFiles(value: unknown, where: string): Map<string, string[]> | undefined {
  if (value === undefined || value === null) return undefined
  const splits = new Map<string, string[]>()
  const add = (split: string, patterns: unknown): void => {
    const list = asList(patterns)
    if (!list.length || !list.every((p) => typeof p === 'string')) throw new FetchError('E_FETCH', `${where}: split '${split}' names its files as ${JSON.stringify(patterns)}, not path patterns`)
    splits.set(split, [...(splits.get(split) ?? []), ...(list as string[])])
  }
  if (isObject(value)) for (const [split, patterns] of Object.entries(value)) add(split, patterns)
  else if (asList(value).every((v) => typeof v === 'string')) add('train', value)
  else {
    for (const entry of asList(value)) {
      if (!isObject(entry) || typeof entry.split !== 'string') throw new FetchError('E_FETCH', `${where}: data_files holds ${JSON.stringify(entry)}, not {split, path}`)
      add(entry.split, entry.path)
    }
  }
  return splits
}

/** A path pattern as `datasets` resolves it against the repository: `*` and `?` within a folder, `**` across folders, `[…]` a class. */
export function patternMatcher(pattern: string, base?: string): (path: string) => boolean {
  const full = (base ? `${base}/` : '') + pattern.replace(/^\.\//, '')
  let source = ''
  for (let i = 0; i < full.length; i++) {
    const c = full[i]!
    if (c === '*' && full[i + 1] === '*') {
      i++
      if (full[i + 1] === '/') {
        i++
        source += '(?:.*/)?'
      } else source += '.*'
    } else if (c === '*') source += '[^/]*'
    else if (c === '?') source += '[^/]'
    else if (c === '[' && full.indexOf(']', i + 2) > 0) {
      const end = full.indexOf(']', i + 2)
      const inside = full.slice(i + 1, end).replace(/\\/g, '\\\\')
      source += `[${inside.startsWith('!') ? `^${inside.slice(1)}` : inside}]`
      i = end
    } else source += c.replace(/[.+^${}()|\\\]]/g, '\\$&')
  }
  const regex = new RegExp(`^${source}$`)
  return (path) => regex.test(path)
}

/** The config an address without one reads: the one marked default, else `default`, else the only one. */
export function defaultConfig(configs: CardConfig[], where: string): CardConfig {
  const chosen = configs.find((c) => c.default) ?? configs.find((c) => c.name === 'default') ?? (configs.length === 1 ? configs[0] : undefined)
  if (!chosen) throw new FetchError('E_FETCH', `${where}: the card names several configs and none is the default: name one (${configs.map((c) => `${where.replace(/\/+$/, '')}/${c.name}`).join(', ')})`)
  return chosen
}

/** What a push tells the card of the config and split it wrote. */
export interface PushedSplit {
  config: string
  split: string
  /** The pattern naming the split's files (`data/test-*`). */
  pattern: string
  rows: number
  bytes: number
}

/**
 * The card after a push of `pushed`, from the card the dataset had (or none): its other keys and
 * its text stay. `keepOthers` (an append) keeps the other configs and splits, adding the rows to
 * a split's count, and names `kept`, the config's files the card did not name (their splits told
 * by their names), so that naming the config does not hide them; otherwise the card names only
 * what was pushed, the dataset's only data files.
 */
export function pushedCard(existing: string | undefined, pushed: PushedSplit, keepOthers: boolean, kept: { path: string; split: string }[], where: string): string {
  const card = existing === undefined ? { front: {}, body: '' } : parseCard(existing, where)
  const front: Json = { ...card.front }
  const configs = keepOthers ? asList(front.configs).filter(isObject) : []
  const at = configs.findIndex((c) => c.config_name === pushed.config)
  if (at < 0) {
    const bySplit = new Map<string, string[]>()
    const covered = patternMatcher(pushed.pattern)
    for (const { path, split } of keepOthers ? kept : []) if (!(split === pushed.split && covered(path))) bySplit.set(split, [...(bySplit.get(split) ?? []), path])
    bySplit.set(pushed.split, [...(bySplit.get(pushed.split) ?? []), pushed.pattern])
    configs.push({ config_name: pushed.config, data_files: [...bySplit].map(([split, paths]) => ({ split, path: paths.length === 1 ? paths[0] : paths })) })
  } else {
    const files = configs[at]!.data_files
    // A pattern or list of them is split `train`'s; a mapping is split → patterns: both become {split, path} entries.
    const entries = isObject(files)
      ? Object.entries(files).map(([split, path]) => ({ split, path }))
      : asList(files).map((f) => (typeof f === 'string' ? { split: 'train', path: f } : f)).filter(isObject)
    const same = entries.find((e) => e.split === pushed.split)
    if (!same) entries.push({ split: pushed.split, path: pushed.pattern })
    else if (!asList(same.path).includes(pushed.pattern)) same.path = [...asList(same.path), pushed.pattern]
    configs[at] = { ...configs[at], data_files: entries }
  }
  front.configs = configs
  const infos = keepOthers ? asList(front.dataset_info).filter(isObject) : []
  let info = infos.find((i) => (i.config_name ?? 'default') === pushed.config)
  if (!info) infos.push((info = { config_name: pushed.config, splits: [] }))
  const splits = asList(info.splits).filter(isObject)
  const split = splits.find((s) => s.name === pushed.split)
  if (split && keepOthers) {
    split.num_bytes = Number(split.num_bytes ?? 0) + pushed.bytes
    split.num_examples = Number(split.num_examples ?? 0) + pushed.rows
  } else if (split) Object.assign(split, { num_bytes: pushed.bytes, num_examples: pushed.rows })
  else splits.push({ name: pushed.split, num_bytes: pushed.bytes, num_examples: pushed.rows })
  info.splits = splits
  front.dataset_info = infos.length === 1 ? infos[0] : infos
  const yaml = yamlPackage().stringify(front, { indentSeq: false, lineWidth: 0 })
  return `---\n${yaml}---\n${card.body}`
}
