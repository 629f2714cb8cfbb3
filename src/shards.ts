/**
 * Shards: the i-th of n deterministic parts of a dataset, so that one dataset runs as n tasks of
 * an existing batch engine. At least n files are dealt out whole, by size; fewer are each cut into
 * n contiguous record ranges, so that the parts, in order, are the whole. Batches of local files
 * (batch.ts) and a service's files (services/convert.ts) shard alike.
 */
import { basename, dirname, join } from 'node:path'
import { getAdapter } from '../adapters/index.ts'
import type { Container } from '../adapters/types.ts'
import { containerOf, extensionOf, readRecords } from './codecs/index.ts'
import { UsageError } from './errors.ts'
import { STDIO } from './io.ts'
import type { ConvertOptions } from './options.ts'

export interface Shard {
  /** 1-based. */
  index: number
  count: number
}

export function parseShard(text: string): Shard {
  const match = /^(-?\d+)\/(\d+)$/.exec(text.trim())
  const index = Number(match?.[1])
  const count = Number(match?.[2])
  if (!match || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count) {
    // The example names the shards of the count given (`x/3`), where it is one.
    const given = Number(/\/(\d+)$/.exec(text.trim())?.[1])
    const n = Number.isSafeInteger(given) && given >= 1 ? given : undefined
    const example = n === undefined ? 'for example, the shards of 4 are 1/4 … 4/4' : `the shards of ${n} are ${n === 1 ? '1/1' : `1/${n} … ${n}/${n}`}`
    throw new UsageError(`--shard takes i/n with 1 ≤ i ≤ n (${example}), not "${text}"`)
  }
  return { index, count }
}

/**
 * The number of records a file of `container` holds (the job's, as its conversion reads it), read
 * through its codec only (no decoding). A range past every record lets the JSON reader leave them
 * unparsed: each shard checks its own.
 */
async function countRecords(file: string, container: Container | undefined, format: string): Promise<number> {
  const adapter = await getAdapter(format)
  if (!container) throw new UsageError(`cannot tell the container of ${file}`)
  const past: [number, number] = [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]
  const options = { file, recordKeys: adapter.recordKeys, header: {}, columns: [], ...(container === 'json' ? { recordRange: past } : {}) }
  let count = 0
  for await (const _ of readRecords(container, file, options)) count++
  return count
}

/** The shard's contiguous part of `total` records, as [start, end). */
export function shardRange(shard: Shard): (total: number) => [number, number] {
  return (total) => [Math.floor((total * (shard.index - 1)) / shard.count), Math.floor((total * shard.index) / shard.count)]
}

/**
 * Files of these sizes (in name order) dealt to `count` shards, each file's index to one shard:
 * the largest first, each to the shard holding the fewest bytes so far (of equals, the one with
 * the fewest files, then the lowest-numbered), so that one large file does not make its shard
 * the last to end. Every task computes the same deal from the same files.
 */
export function dealFiles(sizes: readonly number[], count: number): number[][] {
  const shards = Array.from({ length: count }, () => ({ bytes: 0, files: [] as number[] }))
  for (const k of largestFirst(sizes)) {
    let least = shards[0]!
    for (const s of shards) if (s.bytes < least.bytes || (s.bytes === least.bytes && s.files.length < least.files.length)) least = s
    least.bytes += sizes[k]!
    least.files.push(k)
  }
  return shards.map((s) => s.files.sort((a, b) => a - b))
}

/**
 * The shard's part of `files` (in name order): at least `count` of them are dealt out whole by
 * size (their sizes asked only then); fewer are each cut to the shard's contiguous range, `rangeOf`.
 */
export async function shardFiles<T>(files: readonly T[], shard: Shard, sizeOf: (file: T) => number | Promise<number>): Promise<{ files: T[]; rangeOf?: (total: number) => [number, number] }> {
  if (files.length < shard.count) return { files: [...files], rangeOf: shardRange(shard) }
  const sizes = await Promise.all(files.map(sizeOf))
  return { files: dealFiles(sizes, shard.count)[shard.index - 1]!.map((k) => files[k]!) }
}

/** `<stem>.part-<i>-of-<n><ext>` beside `path`; standard output stays itself. */
export function partName(path: string, shard: Shard): string {
  if (path === STDIO) return path
  const ext = extensionOf(path)
  return join(dirname(path), `${basename(path, ext)}.part-${shard.index}-of-${shard.count}${ext}`)
}

/**
 * The shard's records of one file. CSV and JSON Lines are counted by a byte scan that also finds
 * where the shard's records lie, and Parquet by its footer, so a shard reads only its own part of
 * the file; other containers are counted by parsing them.
 */
export async function locateShard(job: Pick<ConvertOptions, 'input' | 'inputContainer'>, from: string, rangeOf: (total: number) => [number, number]): Promise<Pick<ConvertOptions, 'recordRange' | 'recordBytes'>> {
  const container = job.inputContainer ?? containerOf(job.input)
  if (container === 'csv' || container === 'jsonl') {
    const { locateRecords } = await import('./parallel.ts')
    const located = await locateRecords(job.input, container, rangeOf)
    if (located) return { recordRange: located.range, recordBytes: located.bytes }
  }
  if (container === 'parquet') {
    const { countParquetRows } = await import('./codecs/parquet.ts')
    return { recordRange: rangeOf(await countParquetRows(job.input)) }
  }
  return { recordRange: rangeOf(await countRecords(job.input, container, from)) }
}

/** The indices of `sizes`, the largest first; equal sizes (infinite ones too) in index order. */
export function largestFirst(sizes: readonly number[]): number[] {
  return sizes.map((_, k) => k).sort((a, b) => sizes[b]! - sizes[a]! || a - b)
}
