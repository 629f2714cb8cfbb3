/**
 * Conversions whose input or output is a service. The service's records are staged as a JSON
 * Lines file in the service's own record shape (LangSmith examples, Confident AI goldens), so
 * that the format's adapter reads and writes them as it reads and writes files, with the same
 * report, carry and checks; a push then sends what the conversion wrote, and only when it succeeded.
 */
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { getAdapter } from '../../adapters/index.ts'
import type { Container, FormatOption } from '../../adapters/types.ts'
import { containerOf } from '../codecs/index.ts'
import { detect } from '../detect.ts'
import { createHash } from 'node:crypto'
import { EvalferryError, FetchError, UsageError, type Location } from '../errors.ts'
import { scratchDir } from '../io.ts'
import { envTimeoutSeconds, isOffline, MAX_TIMEOUT_SECONDS } from '../resolver/options.ts'
import type { JsonObject } from '../model.ts'
import type { ConvertOptions, FileConvertOptions } from '../options.ts'
import type { ConversionReport } from '../report.ts'
import { isAddress, parseAddress, SERVICE_FORMAT, stemOf, type HubAddress, type ServiceAddress } from './address.ts'
import { fieldsOf, IF_EXISTS, uuid5, type DryRun, type IfExists, type PushSummary, type ServiceContext, type ServiceOptions } from './context.ts'
import { pullConfident, pushConfident } from './confident.ts'
import { hubFiles, hubListing, pushHub, type HubUpload } from './hub.ts'
import type { PushedSplit } from './hub-card.ts'
import { checkPartOf } from '../option-checks.ts'
import { locateShard, shardFiles, type Shard } from '../shards.ts'
import { pullLangSmith, pushLangSmith } from './langsmith.ts'

/** The report of a conversion from or to a service: a push tells what it did, a dry run what it would send. */
export type ServiceReport = ConversionReport

const DEFAULT_TIMEOUT_MS = 60_000
export type { ServiceOptions } from './context.ts'

/** The format an address implies, checked against the one the caller named. */
function impliedFormat(address: ServiceAddress, given: string | undefined, option: string): string {
  const format = SERVICE_FORMAT[address.service]
  if (given !== undefined && given !== format) throw new UsageError(`${address.text} holds ${format} records; ${option} ${given} contradicts it (leave it out)`)
  return format
}

/**
 * What every request of a conversion or a detection is made with: the timeout (the option, else
 * `EVALFERRY_TIMEOUT`, else 60 s) and whether the network is forbidden (the option, else
 * `EVALFERRY_OFFLINE`), as the resolver reads them. Offline, only an hf:// input can be served
 * (from the cache): any other address is an error before a request is made.
 */
function serviceContext(options: ServiceOptions & { signal?: AbortSignal; progress?: ServiceContext['progress'] }, addresses: (ServiceAddress | undefined)[]): ServiceContext {
  const env = options.env ?? process.env
  if (options.timeoutMs !== undefined && !(Number.isFinite(options.timeoutMs) && options.timeoutMs > 0)) throw new UsageError(`timeoutMs takes a number of milliseconds above 0, not ${String(options.timeoutMs)}`)
  if (options.timeoutMs !== undefined && options.timeoutMs > MAX_TIMEOUT_SECONDS * 1000) throw new UsageError(`timeoutMs takes at most ${MAX_TIMEOUT_SECONDS * 1000} milliseconds, not ${options.timeoutMs}`)
  const fromEnv = options.timeoutMs === undefined ? envTimeoutSeconds(env) : undefined
  const timeoutMs = options.timeoutMs ?? (fromEnv !== undefined ? fromEnv * 1000 : DEFAULT_TIMEOUT_MS)
  const offline = isOffline({ ...(options.offline ? { offline: true } : {}), env })
  if (offline) {
    const [input, output] = addresses
    const asked = output ?? (input && input.service !== 'hf' ? input : undefined)
    if (asked) throw new FetchError('E_OFFLINE', `${asked.text}: --offline forbids asking ${SERVICE_NAME[asked.service]}; only an hf:// input is served from the cache`)
  }
  return {
    env,
    timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    ...(offline ? { offline: true } : {}),
    ...(options.progress ? { progress: options.progress } : {}),
  }
}

const SERVICE_NAME: Record<ServiceAddress['service'], string> = { langsmith: 'LangSmith', confident: 'Confident AI', hf: 'the Hugging Face Hub' }

export async function convertWithServices(options: ConvertOptions & ServiceOptions, convertFiles: (options: FileConvertOptions) => Promise<ConversionReport>): Promise<ServiceReport> {
  const source = isAddress(options.input) ? parseAddress(options.input) : undefined
  const target = isAddress(options.output) ? parseAddress(options.output) : undefined
  const ifExists = options.ifExists ?? 'fail'
  if (!IF_EXISTS.includes(ifExists)) throw new UsageError(`ifExists is one of ${IF_EXISTS.join(', ')}, not ${JSON.stringify(ifExists)}`)
  const from = source ? await formatName(impliedFormat(source, options.from === undefined ? undefined : (await getAdapter(options.from)).name, '--from')) : options.from
  const to = target ? impliedFormat(target, options.to === undefined ? undefined : (await getAdapter(options.to)).name, '--to') : options.to
  if (!to) throw new UsageError('convert(): options.to names the output format (an address as the output implies it)')
  if (source && target && source.text === target.text) throw new UsageError(`${source.text} is both the input and the output`)
  if (options.recordRange || options.shard) checkPartOf(options.input, options.output, Boolean(options.shard))
  if (options.shard) checkShard(options.shard)
  const ctx = serviceContext(options, [source, target])
  const dir = await scratchDir()
  try {
    let input = options.input
    let inputContainer: Container | undefined = source ? 'jsonl' : undefined
    let part: Pick<FileConvertOptions, 'recordRange' | 'recordBytes'> = {}
    if (source?.service === 'hf') {
      const staged = await stagedHub(source, options, ctx, dir, convertFiles)
      input = staged.input
      inputContainer = staged.container
      part = staged.part ?? {}
    } else if (source) {
      input = join(dir, `in-${stemOf(source)}.jsonl`)
      await writeFile(input, await stagedLines(pull(source, ctx)))
    }
    const outputContainer: Container | undefined = target ? (target.service === 'hf' ? 'parquet' : 'jsonl') : undefined
    const output = target ? join(dir, `out-${stemOf(target)}.${outputContainer}`) : options.output
    // The files staged in place of an address, each told as its address.
    const staged = new Map<string, string>()
    if (input.startsWith(dir)) staged.set(input, options.input)
    if (target) staged.set(output, options.output)
    // The shard is the staged input's part, taken above.
    const { shard: _shard, ...rest } = options
    let report: ServiceReport
    try {
      report = await convertFiles({
        ...rest,
        input,
        output,
        ...(from ? { from: from as FormatOption } : {}),
        to: to as FormatOption,
        ...(inputContainer ? { inputContainer } : {}),
        ...(outputContainer ? { outputContainer } : {}),
        ...part,
      })
    } catch (error) {
      if (error instanceof EvalferryError) {
        atAddress(error, staged)
        if (error.report) renamed(error.report, options, staged)
      }
      throw error
    }
    renamed(report, options, staged)
    if (!target) return report
    try {
      return await sent(target, output, report, options, ctx, ifExists)
    } catch (error) {
      // A push that failed still tells what the conversion did.
      if (error instanceof EvalferryError && !error.report) error.report = report
      throw error
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** `report`, of the conversion staged in `output`, once its records are pushed to `target` (or, on a dry run, told). */
async function sent(target: ServiceAddress, output: string, report: ServiceReport, options: ServiceOptions, ctx: ServiceContext, ifExists: IfExists): Promise<ServiceReport> {
  if (target.service === 'hf') {
    const { uploads, card } = await hubUploads(target, output, report.records.written, ifExists, ctx.env)
    if (options.dryRun) {
      report.dry_run = { target: target.text, records: report.records.written, fields: [], files: [...uploads.map((u) => u.path), 'README.md'], if_exists: ifExists }
      return report
    }
    report.push = await pushHub(target, uploads, card, { ...ctx, ifExists })
    return report
  }
  const records = (await readFile(output, 'utf8')).split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as JsonObject)
  if (options.dryRun) {
    report.dry_run = { target: target.text, records: records.length, fields: fieldsOf(records, ['id']), if_exists: ifExists }
    return report
  }
  report.push = await push(target, records, { ...ctx, ifExists })
  return report
}

/** A shard as the library is given it: `index` of 1 … `count`. */
function checkShard(shard: Shard): void {
  const { index, count } = shard
  if (!Number.isSafeInteger(count) || !Number.isSafeInteger(index) || count < 1 || index < 1 || index > count) throw new UsageError(`shard takes { index, count } with 1 ≤ index ≤ count, not ${JSON.stringify(shard)}`)
}

/**
 * The local file a Hub dataset is read from: its one data file where the cache keeps it, or its
 * files gathered as JSON Lines rows. A shard, as of local files, takes whole files dealt out by
 * size when there are at least as many as shards (fetching only those), else its contiguous part
 * of every file (a Parquet file's found by its footer, read by its row groups).
 */
async function stagedHub(
  source: HubAddress,
  options: ConvertOptions,
  ctx: ServiceContext,
  dir: string,
  convertFiles: (options: FileConvertOptions) => Promise<ConversionReport>,
): Promise<{ input: string; container: Container | undefined; part?: Pick<FileConvertOptions, 'recordRange' | 'recordBytes'> }> {
  const listing = await hubListing(source, ctx)
  const { files, rangeOf } = options.shard ? await shardFiles(listing.files, options.shard, (f) => f.size) : { files: listing.files }
  const parts: { local: string; part?: Pick<FileConvertOptions, 'recordRange' | 'recordBytes'> }[] = []
  for (const { path } of files) {
    const local = await listing.fetch(path)
    parts.push({ local, ...(rangeOf ? { part: await locateShard({ input: local }, 'hf', rangeOf) } : {}) })
  }
  if (parts.length === 1) return { input: parts[0]!.local, container: containerOf(parts[0]!.local), ...(parts[0]!.part ? { part: parts[0]!.part } : {}) }
  const input = join(dir, `in-${stemOf(source)}.jsonl`)
  const texts: string[] = []
  for (const [i, { local, part }] of parts.entries()) {
    const staged = join(dir, `part-${i}.jsonl`)
    await convertFiles({ input: local, output: staged, from: 'hf', to: 'hf', outputContainer: 'jsonl', ...part, ...(options.map ? { map: options.map } : {}) })
    texts.push(await readFile(staged, 'utf8'))
  }
  await writeFile(input, texts.join(''))
  return { input, container: 'jsonl' }
}

/** What `detect <address>` shows of a service's dataset: its format, records, splits and fields, without converting. */
export interface ServiceDetection {
  file: string
  service: ServiceAddress['service']
  format: string
  records: number
  splits: string[]
  fields: string[]
}

export async function detectService(text: string, options: ServiceOptions = {}): Promise<ServiceDetection> {
  const address = parseAddress(text)
  const ctx = serviceContext(options, [address])
  if (address.service === 'hf') {
    // The Hub's files are told as files are: each is fetched into the cache, then read.
    const { files } = await hubFiles(address, ctx)
    let records = 0
    const fields = new Set<string>()
    for (const file of files) {
      const detection = await detect(file.local, { count: true })
      records += detection.records ?? 0
      for (const field of detection.fields) fields.add(field)
    }
    return { file: text, service: 'hf', format: 'hf', records, splits: [...new Set(files.map((f) => f.split))], fields: [...fields] }
  }
  const records: JsonObject[] = []
  const splits = new Set<string>()
  for await (const record of pull(address, ctx)) {
    records.push(record)
    for (const split of splitsOf(address, record)) splits.add(split)
  }
  return { file: text, service: address.service, format: SERVICE_FORMAT[address.service], records: records.length, splits: [...splits], fields: fieldsOf(records) }
}

/** The splits a record is in, as its service files it. */
function splitsOf(address: ServiceAddress, record: JsonObject): string[] {
  if (address.service !== 'langsmith') return []
  const metadata = record.metadata
  const split = metadata !== null && typeof metadata === 'object' && !Array.isArray(metadata) ? metadata.dataset_split : undefined
  return (Array.isArray(split) ? split : [split]).filter((s): s is string => typeof s === 'string')
}

/** `push_to_hub`'s `max_shard_size`: a split's Parquet file above this many bytes is pushed as shards of about this size. */
export const HUB_SHARD_BYTES = 500_000_000

/**
 * The files of a Hub push: the Parquet file under `push_to_hub`'s names for its config and split
 * (`hf://datasets/o/n/<config>/<split>`; `default` and `train` when not named), in shards
 * `<split>-<i>-of-<n>` of at most `EVALFERRY_HF_SHARD_BYTES` (default 500 MB), and what the card
 * is to say of them. Appended, the files' names take the whole's hash.
 */
async function hubUploads(address: HubAddress, parquet: string, rows: number, ifExists: IfExists, env: NodeJS.ProcessEnv): Promise<{ uploads: HubUpload[]; card: PushedSplit }> {
  const parts = (address.path ?? '').split('/').filter((p) => p !== '')
  if (parts.length > 2) throw new UsageError(`${address.text}: a push names at most a config and a split (hf://datasets/<owner>/<name>[/<config>[/<split>]])`)
  const [config = 'default', split = 'train'] = parts
  if (!/^[\w.-]+$/.test(split) || !/^[\w.-]+$/.test(config)) throw new UsageError(`${address.text}: config and split names are letters, digits, '_', '-' and '.'`)
  const folder = config === 'default' ? 'data' : config
  const whole = await readFile(parquet)
  const limit = shardBytes(env)
  const count = Math.max(1, Math.min(rows, Math.ceil(whole.length / limit)))
  const contents = count === 1 ? [whole] : await shardsOf(parquet, count)
  const suffix = ifExists === 'append' ? `-${createHash('sha256').update(whole).digest('hex').slice(0, 12)}` : ''
  const of = String(count).padStart(5, '0')
  const uploads = contents.map((content, i) => ({ path: `${folder}/${split}-${String(i).padStart(5, '0')}-of-${of}${suffix}.parquet`, content }))
  return { uploads, card: { config, split, pattern: `${folder}/${split}-*`, rows, bytes: whole.length } }
}

function shardBytes(env: NodeJS.ProcessEnv): number {
  const text = env.EVALFERRY_HF_SHARD_BYTES
  if (text === undefined || text.trim() === '') return HUB_SHARD_BYTES
  const bytes = Number(text)
  if (!Number.isSafeInteger(bytes) || bytes < 1) throw new UsageError(`EVALFERRY_HF_SHARD_BYTES takes a whole number of bytes above 0, not ${JSON.stringify(text)}`)
  return bytes
}

/** A Parquet file's rows as `count` Parquet files of contiguous rows, the whole's schema in each. */
async function shardsOf(parquet: string, count: number): Promise<Buffer[]> {
  const { splitParquet } = await import('../codecs/parquet.ts')
  const chunks: Uint8Array[][] = Array.from({ length: count }, () => [])
  await splitParquet(parquet, count, (i) => ({ write: async (chunk) => void chunks[i]!.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk) }))
  return chunks.map((c) => Buffer.concat(c))
}

async function formatName(name: string): Promise<string> {
  return (await getAdapter(name)).name
}

function pull(address: ServiceAddress, ctx: ServiceContext): AsyncIterable<JsonObject> {
  switch (address.service) {
    case 'langsmith':
      return pullLangSmith(address, ctx)
    case 'confident':
      return pullConfident(address, ctx)
    default:
      throw new UsageError(`${address.text}: reading ${address.service} datasets is not supported yet`)
  }
}

async function push(address: ServiceAddress, records: JsonObject[], options: ServiceContext & { ifExists: IfExists }): Promise<PushSummary> {
  switch (address.service) {
    case 'langsmith':
      return pushLangSmith(address, records, options, uuid5)
    case 'confident':
      return pushConfident(address, records, options)
    default:
      throw new UsageError(`${address.text}: writing ${address.service} datasets is not supported yet`)
  }
}

/** Records as JSON Lines text. */
async function stagedLines(records: AsyncIterable<JsonObject>): Promise<string> {
  const lines: string[] = []
  for await (const r of records) lines.push(JSON.stringify(r))
  return lines.length ? lines.join('\n') + '\n' : ''
}

/**
 * A warning or error located in a staged file is told at its address, its line as the record's
 * number there, and the staged file's path in its message as the address too.
 */
function atAddress(place: { location: Location; message: string }, staged: ReadonlyMap<string, string>): void {
  for (const [path, address] of staged) place.message = place.message.split(path).join(address)
  const address = place.location.file === undefined ? undefined : staged.get(place.location.file)
  if (address === undefined) return
  const { line, column: _column, ...rest } = place.location
  place.location = { ...rest, file: address, ...(line !== undefined ? { record: line - 1 } : {}) }
}

/** The report names the addresses, not the staged files: its warnings, listed and grouped, and its errors. */
function renamed(report: ConversionReport, options: ConvertOptions, staged: ReadonlyMap<string, string>): void {
  report.inputs = [options.input]
  if (options.output !== '-') report.output = options.output
  for (const place of [...report.warnings, ...report.errors, ...report.warning_groups.flatMap((g) => g.first)]) atAddress(place, staged)
}
