/**
 * Service addresses (SPEC section 9): `langsmith://<dataset name or id>[?splits=a,b&as_of=…]`,
 * `confident://<alias>[?version=…&finalized=false]`, `hf://datasets/<owner>/<name>[@<revision>][/<config>[/<split>] | /<path>]`.
 */
import type { FormatName } from '../../adapters/types.ts'
import { UsageError } from '../errors.ts'

export type ServiceName = 'langsmith' | 'confident' | 'hf'

export interface LangSmithAddress {
  service: 'langsmith'
  text: string
  /** The dataset's name, or its id when it is a UUID. */
  dataset: string
  splits?: string[]
  asOf?: string
}

export interface ConfidentAddress {
  service: 'confident'
  text: string
  alias: string
  version?: string
  finalized: boolean
}

export interface HubAddress {
  service: 'hf'
  text: string
  owner: string
  name: string
  /** As given (a branch, a tag, a commit); `main` when absent. */
  revision: string
  /** What follows the repository: a config, `config/split`, or a file or folder in it. */
  path?: string
}

export type ServiceAddress = LangSmithAddress | ConfidentAddress | HubAddress

/** The format whose records each service keeps. */
export const SERVICE_FORMAT: Record<ServiceName, FormatName> = { langsmith: 'langsmith', confident: 'deepeval', hf: 'hf' }

const SCHEME = /^(langsmith|confident|hf):\/\//

/** Whether `text` names a service rather than a file. */
export function isAddress(text: unknown): text is string {
  return typeof text === 'string' && SCHEME.test(text)
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(text: string): boolean {
  return UUID.test(text)
}

function decoded(text: string, address: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new UsageError(`${address}: "${text}" is not valid percent-encoding`)
  }
}

/** The query of an address, refusing parameters it does not take (a typo would otherwise read the whole dataset). */
function queryOf(address: string, query: string, known: readonly string[]): URLSearchParams {
  const params = new URLSearchParams(query)
  for (const key of params.keys()) {
    if (!known.includes(key)) throw new UsageError(`${address}: unknown parameter "${key}"; expected ${known.join(', ')}`)
  }
  return params
}

export function parseAddress(text: string): ServiceAddress {
  const scheme = SCHEME.exec(text)?.[1] as ServiceName | undefined
  if (!scheme) throw new UsageError(`${text} is no service address; expected langsmith://, confident:// or hf://datasets/`)
  const rest = text.slice(scheme.length + 3)
  const queryAt = rest.indexOf('?')
  const body = queryAt < 0 ? rest : rest.slice(0, queryAt)
  const query = queryAt < 0 ? '' : rest.slice(queryAt + 1)
  if (scheme === 'langsmith') {
    const params = queryOf(text, query, ['splits', 'as_of'])
    const dataset = decoded(body, text)
    if (dataset === '') throw new UsageError(`${text} names no dataset; expected langsmith://<dataset name or id>`)
    const splits = params.getAll('splits').flatMap((s) => s.split(',')).map((s) => s.trim()).filter((s) => s !== '')
    const asOf = params.get('as_of') ?? undefined
    return { service: 'langsmith', text, dataset, ...(splits.length ? { splits } : {}), ...(asOf ? { asOf } : {}) }
  }
  if (scheme === 'confident') {
    const params = queryOf(text, query, ['version', 'finalized'])
    const alias = decoded(body, text)
    if (alias === '') throw new UsageError(`${text} names no dataset; expected confident://<alias>`)
    const finalized = params.get('finalized')
    if (finalized !== null && finalized !== 'true' && finalized !== 'false') throw new UsageError(`${text}: finalized is true or false, not "${finalized}"`)
    const version = params.get('version') ?? undefined
    return { service: 'confident', text, alias, finalized: finalized !== 'false', ...(version ? { version } : {}) }
  }
  if (query !== '') queryOf(text, query, [])
  const match = /^datasets\/([^/@]+)\/([^/@]+)(?:@([^/]+(?:\/pr\/\d+|\/convert\/[^/]+)?))?(?:\/(.*))?$/.exec(body)
  if (!match) throw new UsageError(`${text}: expected hf://datasets/<owner>/<name>[@<revision>][/<config>[/<split>] | /<path in the repository>]`)
  const [, owner, name, revision, path] = match
  const trimmed = path?.replace(/\/+$/, '')
  return {
    service: 'hf',
    text,
    owner: decoded(owner!, text),
    name: decoded(name!, text),
    revision: revision === undefined ? 'main' : decoded(revision, text),
    ...(trimmed ? { path: trimmed } : {}),
  }
}

/** A name safe as a file's stem, for the records staged on disk. */
export function stemOf(address: ServiceAddress): string {
  const name = address.service === 'langsmith' ? address.dataset : address.service === 'confident' ? address.alias : `${address.owner}-${address.name}`
  return name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'dataset'
}
