/**
 * Confident AI datasets (docs/services.md section 2): goldens or conversational goldens pulled in
 * one answer, pushed in chunks. A push has no upsert key, so before each chunk (and after any
 * chunk whose answer was lost) the dataset is read again: the goldens it ends with that begin this
 * push are not sent again, so a push run again leaves each golden once.
 */
import { CAMEL } from '../../adapters/deepeval.ts'
import { DataError, FetchError, UsageError } from '../errors.ts'
import { isJsonObject, type JsonObject, type JsonValue } from '../model.ts'
import type { ConfidentAddress } from './address.ts'
import { batchesOf, canonicalJson, type PushOptions, type PushSummary, type ServiceContext } from './context.ts'
import { serviceBase, ServiceHttp, setting, UncertainError } from './http.ts'

/** Goldens a push sends at most in one request, and about the most bytes. */
export const CHUNK_GOLDENS = 100
export const CHUNK_BYTES = 4_000_000

const HOSTS = { US: 'https://api.confident-ai.com', EU: 'https://eu.api.confident-ai.com' }
const SNAKE: Record<string, string> = Object.fromEntries(Object.entries(CAMEL).map(([snake, camel]) => [camel, snake]))

interface Envelope {
  success?: boolean
  data?: { id?: string; version?: string | null; goldens?: JsonObject[]; conversationalGoldens?: JsonObject[] }
  error?: string
}

export function confidentHttp(ctx: ServiceContext): ServiceHttp {
  const key = setting(ctx.env, 'CONFIDENT_API_KEY')
  if (!key) throw new FetchError('E_AUTH', 'Confident AI needs an API key: set CONFIDENT_API_KEY')
  const region = setting(ctx.env, 'CONFIDENT_REGION')?.toUpperCase()
  if (region !== undefined && region !== 'US' && region !== 'EU') throw new UsageError(`CONFIDENT_REGION is US or EU, not "${region}"`)
  const base = serviceBase(ctx.env, ['CONFIDENT_BASE_URL'], HOSTS[region ?? (key.startsWith('confident_eu_') ? 'EU' : 'US')])
  return new ServiceHttp({
    service: 'Confident AI',
    base,
    // Both spellings: proxies drop the underscore one by default, and the API reference names it.
    headers: { 'CONFIDENT-API-KEY': key, CONFIDENT_API_KEY: key },
    secrets: [key],
    credentialHint: 'set CONFIDENT_API_KEY to a valid key of this project (and CONFIDENT_BASE_URL or CONFIDENT_REGION to its host)',
    timeoutMs: ctx.timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  })
}

function path(address: ConfidentAddress, tail = ''): string {
  return `/v1/datasets/${encodeURIComponent(address.alias)}${tail}`
}

interface Pulled {
  multiTurn: boolean
  goldens: JsonObject[]
}

/** The dataset, or undefined when the service says it has none under the alias. */
async function fetchDataset(http: ServiceHttp, address: ConfidentAddress): Promise<Pulled | undefined> {
  const answer = await http.request({
    path: path(address),
    query: { finalized: String(address.finalized), ...(address.version ? { version: address.version } : {}) },
    // The status of an absent alias is not documented: an error answer is an absent dataset.
    accept: [400, 404],
  })
  const body = JSON.parse(answer.body.toString('utf8') || '{}') as Envelope
  if (answer.status === 400 || answer.status === 404 || body.success === false) return undefined
  const data = body.data ?? {}
  if (Array.isArray(data.conversationalGoldens) && !Array.isArray(data.goldens)) return { multiTurn: true, goldens: data.conversationalGoldens }
  return { multiTurn: false, goldens: Array.isArray(data.goldens) ? data.goldens : [] }
}

/** Keys of a golden and of its turns in another spelling; tool calls and metadata keep theirs. */
function respelled(golden: JsonObject, names: Record<string, string>): JsonObject {
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(golden)) {
    out[names[key] ?? key] = key === 'turns' && Array.isArray(value) ? value.map((t) => (isJsonObject(t) ? respelled(t, names) : t)) : value
  }
  return out
}

/** The goldens as DeepEval's save_as spells them, without the ids the service gave them. */
export async function* pullConfident(address: ConfidentAddress, ctx: ServiceContext): AsyncGenerator<JsonObject> {
  const http = confidentHttp(ctx)
  const dataset = await fetchDataset(http, address)
  if (!dataset) throw new FetchError('E_FETCH', `${address.text}: Confident AI at ${http.options.base} has no dataset with the alias '${address.alias}'${address.version ? ` at version ${address.version}` : ''}`)
  for (const golden of dataset.goldens) {
    const { id: _id, ...rest } = golden
    yield respelled(rest, SNAKE)
  }
}

/** What the service holds of a golden, for comparing: no id, no unset field. */
function comparable(golden: JsonObject): string {
  const { id: _id, ...rest } = golden
  return canonicalJson(rest, true)
}

/** The largest n such that `present` ends with the first n of `wanted`. */
function overlap(present: string[], wanted: string[]): number {
  for (let n = Math.min(present.length, wanted.length); n > 0; n--) {
    let same = true
    for (let i = 0; i < n && same; i++) same = present[present.length - n + i] === wanted[i]
    if (same) return n
  }
  return 0
}

function chunks(goldens: JsonObject[], from: number): JsonObject[][] {
  return batchesOf(goldens.slice(from), (golden) => Buffer.byteLength(JSON.stringify(golden)), CHUNK_BYTES, CHUNK_GOLDENS)
}

/**
 * Pushes `records` (DeepEval goldens as save_as writes them) to the alias. A dataset there that
 * holds goldens other than the first ones of this push is refused, appended to or deleted first,
 * as `ifExists` says.
 */
export async function pushConfident(address: ConfidentAddress, records: JsonObject[], options: PushOptions): Promise<PushSummary> {
  if (!records.length) throw new DataError('E_FIELD', `${address.text}: no goldens to push (Confident AI refuses an empty list)`, { file: address.text })
  const multiTurn = records.some((r) => typeof r.scenario === 'string')
  if (multiTurn && !records.every((r) => typeof r.scenario === 'string')) {
    throw new DataError('E_FIELD', `${address.text}: a dataset holds goldens or conversational goldens, and these records are both`, { file: address.text })
  }
  const http = confidentHttp(options)
  const summary: PushSummary = { target: address.text, created: false, sent: 0, updated: 0, unchanged: 0, removed: 0, requests: 0 }
  const goldens = records.map((r) => respelled(r, CAMEL))
  const wanted = goldens.map(comparable)
  const listKey = multiTurn ? 'conversationalGoldens' : 'goldens'
  /** How many of this push's goldens the dataset ends with, reading it again. */
  const landed = async (): Promise<{ there: boolean; count: number; others: number; multiTurn?: boolean }> => {
    const dataset = await fetchDataset(http, address)
    if (!dataset) return { there: false, count: 0, others: 0 }
    const present = dataset.goldens.map(comparable)
    const count = overlap(present, wanted)
    return { there: true, count, others: present.length - count, multiTurn: dataset.multiTurn }
  }
  let state = await landed()
  if (state.there && state.others > 0 && state.multiTurn !== multiTurn && options.ifExists !== 'replace') {
    throw new UsageError(`${address.text} holds ${state.multiTurn ? 'conversational goldens' : 'goldens'}, and these records are ${multiTurn ? 'conversational goldens' : 'goldens'}; --if-exists replace replaces them`)
  }
  if (state.there && state.others > 0) {
    if (options.ifExists === 'fail') {
      throw new UsageError(`${address.text} already holds ${state.others} golden(s) this push would not write; --if-exists append adds to them, --if-exists replace replaces them`)
    }
    if (options.ifExists === 'replace') {
      await http.request({ method: 'DELETE', path: path(address) })
      summary.removed = state.others
      state = { there: false, count: 0, others: 0 }
    }
  }
  summary.created = !state.there
  summary.unchanged = state.count
  let done = state.count
  for (let attempt = 0; done < goldens.length; ) {
    const chunk = chunks(goldens, done)[0]!
    try {
      await http.request({
        method: 'POST',
        path: path(address),
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ finalized: address.finalized, ...(address.version ? { version: address.version } : {}), [listKey]: chunk }),
        once: true,
      })
      done += chunk.length
      summary.sent += chunk.length
      if (options.progress) options.progress.records += chunk.length
    } catch (error) {
      // The answer was lost: the dataset tells whether the chunk landed.
      if (!(error instanceof UncertainError) || ++attempt > 5) throw error
      const now = await landed()
      summary.sent += Math.max(0, now.count - done)
      done = now.count
    }
  }
  summary.requests = http.requests
  return summary
}
