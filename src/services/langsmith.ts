/**
 * LangSmith datasets (docs/services.md section 1): examples read page by page, written through the
 * multipart examples route in requests under 20 MB. Each example's id is a uuid5 of the dataset
 * and the record's key (its id, else its content), so a push run again updates or skips what is
 * there instead of adding it twice.
 */
import { createHash, randomBytes } from 'node:crypto'
import { FetchError, UsageError } from '../errors.ts'
import { isJsonObject, type JsonObject, type JsonValue } from '../model.ts'
import { isUuid, type LangSmithAddress } from './address.ts'
import { batchesOf, canonicalJson, type PushOptions, type PushSummary, type ServiceContext } from './context.ts'
import { serviceBase, ServiceHttp, setting, UncertainError } from './http.ts'

const PAGE = 100
/** Python's SDK keeps each request under this; a maintainer named about 25 MB as the backend's limit. */
export const MAX_REQUEST_BYTES = 20_000_000
/** The split LangSmith gives an example written without one. */
const DEFAULT_SPLIT = 'base'
/** Keys of an example the service keeps for itself: a pull leaves them out, a push does not send them. */
const SERVICE_KEYS = ['dataset_id', 'created_at', 'modified_at']
const SENT_KEYS = ['id', 'inputs', 'outputs', 'metadata', 'split']

interface Dataset {
  id: string
  name: string
  data_type?: string
}

interface Example {
  id: string
  inputs?: JsonObject
  outputs?: JsonObject | null
  metadata?: JsonObject | null
  source_run_id?: string | null
  attachment_urls?: JsonObject | null
  [key: string]: JsonValue | undefined
}

export function langsmithHttp(ctx: ServiceContext): ServiceHttp {
  const key = setting(ctx.env, 'LANGSMITH_API_KEY', 'LANGCHAIN_API_KEY')
  if (!key) throw new FetchError('E_AUTH', 'LangSmith needs an API key: set LANGSMITH_API_KEY (or LANGCHAIN_API_KEY)')
  const endpoint = serviceBase(ctx.env, ['LANGSMITH_ENDPOINT', 'LANGCHAIN_ENDPOINT'], 'https://api.smith.langchain.com')
  const workspace = setting(ctx.env, 'LANGSMITH_WORKSPACE_ID', 'LANGCHAIN_WORKSPACE_ID')
  return new ServiceHttp({
    service: 'LangSmith',
    base: endpoint,
    headers: { 'x-api-key': key, ...(workspace ? { 'x-tenant-id': workspace } : {}) },
    secrets: [key],
    credentialHint: workspace
      ? 'set LANGSMITH_API_KEY to a key of the workspace LANGSMITH_WORKSPACE_ID names'
      : 'set LANGSMITH_API_KEY to a valid key (an organisation key also needs LANGSMITH_WORKSPACE_ID)',
    timeoutMs: ctx.timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  })
}

async function findDataset(http: ServiceHttp, dataset: string): Promise<Dataset | undefined> {
  if (isUuid(dataset)) {
    const answer = await http.request({ path: `/datasets/${dataset}`, accept: [404] })
    if (answer.status === 404) return undefined
    return JSON.parse(answer.body.toString('utf8')) as Dataset
  }
  const found = await http.json<Dataset[]>({ path: '/datasets', query: { name: dataset, limit: '1' } })
  return Array.isArray(found) ? found.find((d) => d.name === dataset) : undefined
}

function notFound(http: ServiceHttp, address: LangSmithAddress): FetchError {
  return new FetchError('E_FETCH', `${address.text}: LangSmith at ${http.options.base} has no dataset ${isUuid(address.dataset) ? 'with the id' : 'named'} '${address.dataset}'`)
}

/** Every example of the dataset, page by page until a short one. */
async function* examplesOf(http: ServiceHttp, datasetId: string, filter: { splits?: string[]; asOf?: string; ids?: string[] } = {}): AsyncGenerator<Example> {
  for (let offset = 0; ; ) {
    const page = await http.json<Example[]>({
      path: '/examples',
      query: {
        dataset: datasetId,
        offset: String(offset),
        limit: String(PAGE),
        ...(filter.splits ? { splits: filter.splits } : {}),
        ...(filter.asOf ? { as_of: filter.asOf } : {}),
        ...(filter.ids ? { id: filter.ids } : {}),
      },
    })
    if (!Array.isArray(page)) throw new FetchError('E_FETCH', `LangSmith GET /examples: expected a list of examples, got ${typeof page}`)
    yield* page
    if (page.length < PAGE) return
    offset += page.length
  }
}

/** The dataset's examples as LangSmith records (`id`, `inputs`, `outputs`, `metadata`), without what the service keeps for itself. */
export async function* pullLangSmith(address: LangSmithAddress, ctx: ServiceContext): AsyncGenerator<JsonObject> {
  const http = langsmithHttp(ctx)
  const dataset = await findDataset(http, address.dataset)
  if (!dataset) throw notFound(http, address)
  for await (const example of examplesOf(http, dataset.id, { ...(address.splits ? { splits: address.splits } : {}), ...(address.asOf ? { asOf: address.asOf } : {}) })) {
    yield recordOf(example)
  }
}

/** What one example is written as: its id and the multipart parts' values. */
interface Outgoing {
  id: string
  inputs: JsonObject
  outputs?: JsonObject
  metadata: JsonObject
  split?: string | string[]
}

/**
 * Where an example keeps what of its record the service holds its own way: the record's keys in
 * order, the values of those not sent as they are (its own id, `dataset_id`, timestamps,
 * `source_run_id`), its metadata's keys in order and its split as written. Reading takes it off
 * and gives the record back as it was.
 */
export const RECORD_NOTE = 'evalferry_record'

/**
 * The example a record is written as, its id the uuid5 of the dataset and `key` (see `recordKeys`).
 */
export function outgoing(record: JsonObject, datasetId: string, key: string, uuid: (name: string, namespace: string) => string): Outgoing {
  const id = uuid(key, datasetId)
  const given = isJsonObject(record.metadata) ? record.metadata : undefined
  const metadata: JsonObject = given ? { ...given } : {}
  const note: JsonObject = { keys: Object.keys(record) }
  let split: string | string[] | undefined
  const listed = metadata.dataset_split
  if (typeof listed === 'string' || (Array.isArray(listed) && listed.every((s) => typeof s === 'string'))) {
    split = listed as string | string[]
    note.metadata_keys = Object.keys(metadata)
    note.dataset_split = listed
    delete metadata.dataset_split
  }
  if (typeof record.split === 'string' || (Array.isArray(record.split) && record.split.every((s) => typeof s === 'string'))) split = record.split as string | string[]
  const values: JsonObject = {}
  for (const [key, value] of Object.entries(record)) if (!SENT_KEYS.includes(key) || key === 'id' || key === 'split') values[key] = value as JsonValue
  note.values = values
  metadata[RECORD_NOTE] = note
  return {
    id,
    inputs: isJsonObject(record.inputs) ? record.inputs : {},
    ...(isJsonObject(record.outputs) ? { outputs: record.outputs } : {}),
    metadata,
    ...(split !== undefined ? { split } : {}),
  }
}

/** The record an example was written from, where it keeps one (see RECORD_NOTE); else the example as the service gives it. */
function recordOf(example: Example): JsonObject {
  const metadata = isJsonObject(example.metadata) ? { ...example.metadata } : undefined
  const note = metadata?.[RECORD_NOTE]
  if (!metadata || !isJsonObject(note) || !Array.isArray(note.keys) || !isJsonObject(note.values)) return plainRecord(example)
  delete metadata[RECORD_NOTE]
  const served = metadata.dataset_split
  delete metadata.dataset_split
  let ownMetadata: JsonObject = metadata
  if (Array.isArray(note.metadata_keys)) {
    ownMetadata = {}
    for (const key of note.metadata_keys) if (typeof key === 'string') ownMetadata[key] = key === 'dataset_split' ? (note.dataset_split ?? served ?? null) : (metadata[key] ?? null)
    for (const [key, value] of Object.entries(metadata)) if (!Object.hasOwn(ownMetadata, key)) ownMetadata[key] = value
  }
  const record: JsonObject = {}
  for (const key of note.keys) {
    if (typeof key !== 'string') continue
    if (Object.hasOwn(note.values, key)) record[key] = note.values[key]!
    else if (key === 'metadata') record.metadata = ownMetadata
    else if (key === 'inputs') record.inputs = example.inputs ?? {}
    else if (key === 'outputs') record.outputs = example.outputs ?? null
  }
  return record
}

/** An example written by another tool: the service's bookkeeping left out, its split as LangSmith files it. */
function plainRecord(example: Example): JsonObject {
  const record: JsonObject = {}
  for (const [key, value] of Object.entries(example)) {
    if (SERVICE_KEYS.includes(key) || value === undefined || value === null) continue
    if (key === 'attachment_urls' && isJsonObject(value) && !Object.keys(value).length) continue
    record[key] = value
  }
  return record
}

/**
 * Each record's key: its own id, else its content and how many records before it had the same,
 * so that the same records written again have the same ids, and other records other ids.
 */
export function recordKeys(records: JsonObject[]): string[] {
  const seen = new Map<string, number>()
  return records.map((record) => {
    if (typeof record.id === 'string' && record.id !== '') return `id:${record.id}`
    const digest = createHash('sha256').update(canonicalJson(record)).digest('hex')
    const n = seen.get(digest) ?? 0
    seen.set(digest, n + 1)
    return `sha256:${digest}:${n}`
  })
}

/** Whether what the service holds for an example is what would be written. */
function holds(example: Example, out: Outgoing): boolean {
  const metadata = isJsonObject(example.metadata) ? { ...example.metadata } : {}
  const stored = metadata.dataset_split
  delete metadata.dataset_split
  const split = typeof stored === 'string' ? [stored] : stored ?? [DEFAULT_SPLIT]
  const wanted = out.split === undefined ? [DEFAULT_SPLIT] : typeof out.split === 'string' ? [out.split] : out.split
  return (
    canonicalJson(example.inputs ?? {}) === canonicalJson(out.inputs) &&
    canonicalJson(example.outputs ?? {}) === canonicalJson(out.outputs ?? {}) &&
    canonicalJson(metadata) === canonicalJson(out.metadata) &&
    canonicalJson(split) === canonicalJson(wanted)
  )
}

/** A multipart body of examples; `update` writes the parts a PATCH takes. */
function multipart(examples: Outgoing[], update: boolean): { body: Buffer; type: string } {
  const boundary = `evalferry${randomBytes(12).toString('hex')}`
  const parts: Buffer[] = []
  const part = (name: string, value: JsonValue) => {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n`), Buffer.from(JSON.stringify(value)), Buffer.from('\r\n'))
  }
  for (const e of examples) {
    part(e.id, {
      metadata: e.metadata,
      ...(e.split !== undefined ? { split: e.split } : update ? { split: DEFAULT_SPLIT } : {}),
    })
    part(`${e.id}.inputs`, e.inputs)
    if (e.outputs) part(`${e.id}.outputs`, e.outputs)
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` }
}

/** Examples in batches whose multipart body stays under `limit` bytes; a bigger example goes alone. */
export function batches(examples: Outgoing[], limit = MAX_REQUEST_BYTES): Outgoing[][] {
  return batchesOf(examples, (e) => 600 + Buffer.byteLength(JSON.stringify(e)), limit)
}

function dataTypeOf(records: JsonObject[]): 'chat' | 'kv' {
  const chat = records.length > 0 && records.every((r) => isJsonObject(r.inputs) && Array.isArray(r.inputs.messages) && Object.keys(r.inputs).length === 1)
  return chat ? 'chat' : 'kv'
}

/**
 * Writes `records` (LangSmith examples) into the dataset, creating it when absent. Examples of the
 * dataset that this push would not write make it an existing target: refused, kept or removed as
 * `ifExists` says.
 */
export async function pushLangSmith(address: LangSmithAddress, records: JsonObject[], options: PushOptions, uuid: (name: string, namespace: string) => string): Promise<PushSummary> {
  if (address.splits || address.asOf) throw new UsageError(`${address.text}: splits and as_of choose what is read; a push takes neither (each record's split is its own)`)
  const http = langsmithHttp(options)
  const summary: PushSummary = { target: address.text, created: false, sent: 0, updated: 0, unchanged: 0, removed: 0, requests: 0 }
  let dataset = await findDataset(http, address.dataset)
  if (!dataset) {
    if (isUuid(address.dataset)) throw notFound(http, address)
    const answer = await http.request({
      method: 'POST',
      path: '/datasets',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: address.dataset, description: '', data_type: dataTypeOf(records), extra: { source: 'evalferry' } }),
      accept: [409],
    })
    // Made meanwhile by another run: written into as if it had been there.
    dataset = answer.status === 409 ? await findDataset(http, address.dataset) : (JSON.parse(answer.body.toString('utf8')) as Dataset)
    if (!dataset) throw notFound(http, address)
    summary.created = answer.status !== 409
  }
  const datasetId = dataset.id
  const keys = recordKeys(records)
  const wanted = records.map((r, i) => outgoing(r, datasetId, keys[i]!, uuid))
  const ids = new Set<string>()
  for (const e of wanted) {
    if (ids.has(e.id)) throw new UsageError(`${address.text}: two records have the id ${JSON.stringify((records[wanted.indexOf(e)]!.id as string) ?? '')}; LangSmith example ids are unique`)
    ids.add(e.id)
  }
  const present = new Map<string, Example>()
  for await (const example of examplesOf(http, datasetId)) present.set(example.id, example)
  const foreign = [...present.keys()].filter((id) => !ids.has(id))
  if (foreign.length && options.ifExists === 'fail') {
    throw new UsageError(`${address.text} already holds ${foreign.length} example(s) this push would not write; --if-exists append adds to them, --if-exists replace removes them`)
  }
  if (foreign.length && options.ifExists === 'replace') {
    for (let i = 0; i < foreign.length; i += PAGE) {
      await http.request({ method: 'DELETE', path: '/examples', query: { example_ids: foreign.slice(i, i + PAGE) } })
    }
    summary.removed = foreign.length
  }
  const fresh: Outgoing[] = []
  const changed: Outgoing[] = []
  for (const e of wanted) {
    const there = present.get(e.id)
    if (!there) fresh.push(e)
    else if (holds(there, e)) summary.unchanged++
    else changed.push(e)
  }
  const route = `/v1/platform/datasets/${datasetId}/examples`
  for (const batch of batches(fresh)) {
    let rest = batch
    // A POST cut off may have been stored: the ids already there are not sent again.
    for (let attempt = 0; rest.length; attempt++) {
      const { body, type } = multipart(rest, false)
      try {
        const answer = await http.request({ method: 'POST', path: route, headers: { 'content-type': type }, body, once: true, accept: [409] })
        if (answer.status !== 409) break
      } catch (error) {
        if (!(error instanceof UncertainError) || attempt >= 4) throw error
      }
      const stored = new Set<string>()
      for await (const example of examplesOf(http, datasetId, { ids: rest.map((e) => e.id) })) stored.add(example.id)
      rest = rest.filter((e) => !stored.has(e.id))
    }
    summary.sent += batch.length
    if (options.progress) options.progress.records += batch.length
  }
  for (const batch of batches(changed)) {
    const { body, type } = multipart(batch, true)
    await http.request({ method: 'PATCH', path: route, headers: { 'content-type': type }, body })
    summary.updated += batch.length
    if (options.progress) options.progress.records += batch.length
  }
  summary.requests = http.requests
  summary.dataset_id = datasetId
  return summary
}

/** What `detect` shows of a dataset: its examples, splits and fields. */
export async function describeLangSmith(address: LangSmithAddress, ctx: ServiceContext): Promise<{ records: JsonObject[]; splits: string[]; info: JsonObject }> {
  const records: JsonObject[] = []
  const splits = new Set<string>()
  for await (const r of pullLangSmith(address, ctx)) {
    records.push(r)
    const split = isJsonObject(r.metadata) ? r.metadata.dataset_split : undefined
    for (const s of Array.isArray(split) ? split : typeof split === 'string' ? [split] : [DEFAULT_SPLIT]) if (typeof s === 'string') splits.add(s)
  }
  return { records, splits: [...splits], info: {} }
}
