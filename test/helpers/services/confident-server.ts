/** A Confident AI stand-in (docs/services.md sections 2 and 5): datasets by alias in memory, every answer in the `{success, data, error}` envelope. */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { StandIn, type Handled, type Routed } from './stand-in.ts'

type Json = Record<string, unknown>

interface Version {
  version: string | null
  goldens: (Json & { finalized: boolean })[]
}

export interface StoredDataset {
  multiTurn: boolean
  /** The unversioned goldens first, then each version, oldest first. */
  versions: Version[]
}

export class ConfidentStandIn extends StandIn {
  datasets = new Map<string, StoredDataset>()

  constructor(readonly apiKey = 'confident_us_test_key') {
    super()
  }

  /** The goldens of the newest version of an alias, without their ids. */
  goldensOf(alias: string): Json[] {
    const versions = this.datasets.get(alias)?.versions ?? []
    return (versions[versions.length - 1]?.goldens ?? []).map(({ id: _id, finalized: _f, ...g }) => g)
  }

  protected refuse(headers: IncomingMessage['headers']): Handled | undefined {
    const key = headers['confident-api-key'] ?? headers['confident_api_key']
    if (key !== this.apiKey) return { status: 401, body: { success: false, error: 'Invalid API key' } }
    return undefined
  }

  protected route(method: string, path: string, query: URLSearchParams, body: Buffer): Routed | undefined {
    const m = /^\/v1\/datasets\/([^/]+)(\/versions|\/queue)?$/.exec(path)
    if (!m) return undefined
    const alias = decodeURIComponent(m[1]!)
    const json = () => JSON.parse(body.toString('utf8') || '{}') as Json
    if (!m[2]) {
      if (method === 'GET') return { route: 'GET /v1/datasets/{alias}', handle: () => this.pull(alias, query) }
      if (method === 'POST') return { route: 'POST /v1/datasets/{alias}', handle: () => this.push(alias, json()) }
      if (method === 'DELETE') return { route: 'DELETE /v1/datasets/{alias}', handle: () => (this.datasets.delete(alias) ? ok({}) : fail(404, `dataset '${alias}' not found`)) }
    }
    if (m[2] === '/queue' && method === 'POST') return { route: 'POST /v1/datasets/{alias}/queue', handle: () => this.push(alias, { ...json(), finalized: false }) }
    if (m[2] === '/versions' && method === 'POST') return { route: 'POST /v1/datasets/{alias}/versions', handle: () => this.newVersion(alias) }
    if (m[2] === '/versions' && method === 'GET') {
      return {
        route: 'GET /v1/datasets/{alias}/versions',
        handle: () => ok({ versions: (this.datasets.get(alias)?.versions ?? []).filter((v) => v.version).reverse().map((v) => ({ id: v.version, version: v.version })) }),
      }
    }
    return undefined
  }

  private pull(alias: string, query: URLSearchParams): Handled {
    const dataset = this.datasets.get(alias)
    if (!dataset) return fail(404, `dataset '${alias}' not found`)
    const asked = query.get('version')
    const version = asked ? dataset.versions.find((v) => v.version === asked) : dataset.versions[dataset.versions.length - 1]
    if (!version) return fail(404, `dataset '${alias}' has no version ${asked}`)
    const finalized = query.get('finalized') !== 'false'
    const goldens = version.goldens.filter((g) => g.finalized === finalized).map(({ finalized: _f, ...g }) => g)
    return ok({ id: alias, version: version.version, ...(dataset.multiTurn ? { conversationalGoldens: goldens } : { goldens }) })
  }

  private push(alias: string, body: Json): Handled {
    const multiTurn = Array.isArray(body.conversationalGoldens)
    const list = (multiTurn ? body.conversationalGoldens : body.goldens) as Json[] | undefined
    if (!Array.isArray(list) || !list.length) return fail(400, 'goldens must be a non-empty list')
    let dataset = this.datasets.get(alias)
    if (!dataset) {
      if (body.version) return fail(400, `dataset '${alias}' has no version ${String(body.version)}`)
      dataset = { multiTurn, versions: [{ version: null, goldens: [] }] }
      this.datasets.set(alias, dataset)
    }
    if (dataset.multiTurn !== multiTurn) return fail(400, `dataset '${alias}' holds ${dataset.multiTurn ? 'conversational ' : ''}goldens`)
    const version = body.version ? dataset.versions.find((v) => v.version === body.version) : dataset.versions[dataset.versions.length - 1]
    if (!version) return fail(400, `no version ${String(body.version)}`)
    for (const golden of list) {
      if (multiTurn ? typeof golden.scenario !== 'string' : typeof golden.input !== 'string') return fail(400, multiTurn ? 'a conversational golden needs a scenario' : 'a golden needs an input')
    }
    for (const { id: _id, ...golden } of list) version.goldens.push({ ...golden, id: randomUUID(), finalized: body.finalized !== false })
    return ok(null, { link: `https://app.confident-ai.com/datasets/${alias}` })
  }

  private newVersion(alias: string): Handled {
    const dataset = this.datasets.get(alias)
    if (!dataset) return fail(404, `dataset '${alias}' not found`)
    const last = dataset.versions[dataset.versions.length - 1]!
    const number = dataset.versions.filter((v) => v.version).length + 1
    const version = `00.00.${String(number).padStart(2, '0')}`
    const copied = last.goldens.map((g) => ({ ...g, id: randomUUID() }))
    if (last.version === null) dataset.versions = [{ version, goldens: copied }]
    else dataset.versions.push({ version, goldens: copied })
    return ok({ id: version, version })
  }
}

function ok(data: unknown, extra: Json = {}): Handled {
  return { status: 200, body: { success: true, data, ...extra } }
}

function fail(status: number, error: string): Handled {
  return { status, body: { success: false, error } }
}
