/** A LangSmith stand-in (docs/services.md sections 1 and 5): datasets and examples in memory, every route at `/` and `/api/v1/`. */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { formParts, StandIn, type Handled, type Routed } from './stand-in.ts'

type Json = Record<string, unknown>

export interface StoredExample {
  id: string
  dataset_id: string
  inputs: Json
  outputs: Json | null
  metadata: Json
  source_run_id: string | null
  created_at: string
  modified_at: string
}

const LIMIT_BYTES = 25_000_000

export class LangSmithStandIn extends StandIn {
  datasets = new Map<string, Json & { id: string; name: string }>()
  examples = new Map<string, StoredExample>()

  constructor(readonly apiKey = 'lsv2_test_key') {
    super()
  }

  examplesOf(name: string): StoredExample[] {
    const dataset = [...this.datasets.values()].find((d) => d.name === name)
    return dataset ? [...this.examples.values()].filter((e) => e.dataset_id === dataset.id) : []
  }

  protected refuse(headers: IncomingMessage['headers']): Handled | undefined {
    if (headers['x-api-key'] !== this.apiKey) return { status: 401, body: { detail: 'Invalid token' } }
    return undefined
  }

  protected route(method: string, fullPath: string, query: URLSearchParams, body: Buffer, headers: IncomingMessage['headers']): Routed | undefined {
    const path = fullPath.replace(/^\/api\/v1(?=\/)/, '')
    const json = () => JSON.parse(body.toString('utf8') || 'null') as Json
    let m: RegExpExecArray | null
    if (method === 'GET' && path === '/info') return { route: 'GET /info', handle: () => ({ status: 200, body: { version: '0.10.0', instance_flags: { dataset_examples_multipart_enabled: true } } }) }
    if (method === 'GET' && path === '/datasets') return { route: 'GET /datasets', handle: () => this.listDatasets(query) }
    if (method === 'POST' && path === '/datasets') return { route: 'POST /datasets', handle: () => this.createDataset(json()) }
    if ((m = /^\/datasets\/([^/]+)$/.exec(path))) {
      const id = m[1]!
      if (method === 'GET') return { route: 'GET /datasets/{id}', handle: () => (this.datasets.has(id) ? { status: 200, body: this.datasets.get(id) } : { status: 404, body: { detail: 'Dataset not found' } }) }
      if (method === 'DELETE') return { route: 'DELETE /datasets/{id}', handle: () => this.deleteDataset(id) }
    }
    if (method === 'GET' && (m = /^\/datasets\/([^/]+)\/splits$/.exec(path))) return { route: 'GET /datasets/{id}/splits', handle: () => this.splits(m![1]!) }
    if (method === 'GET' && path === '/examples') return { route: 'GET /examples', handle: () => this.listExamples(query) }
    if (method === 'DELETE' && path === '/examples') return { route: 'DELETE /examples', handle: () => this.deleteExamples(query.getAll('example_ids')) }
    if ((m = /^\/examples\/([0-9a-f-]{36})$/.exec(path))) {
      const id = m[1]!
      if (method === 'GET') return { route: 'GET /examples/{id}', handle: () => (this.examples.has(id) ? { status: 200, body: this.examples.get(id) } : { status: 404, body: { detail: 'Example not found' } }) }
      if (method === 'DELETE') return { route: 'DELETE /examples/{id}', handle: () => this.deleteExamples([id]) }
    }
    if (method === 'POST' && path === '/examples/bulk') return { route: 'POST /examples/bulk', handle: () => this.bulk(json() as unknown as Json[]) }
    if ((m = /^\/v1\/platform\/datasets\/([^/]+)\/examples$/.exec(path)) && (method === 'POST' || method === 'PATCH')) {
      const id = m[1]!
      return { route: `${method} /v1/platform/datasets/{id}/examples`, handle: () => this.multipart(method, id, body, headers['content-type']) }
    }
    return undefined
  }

  private listDatasets(query: URLSearchParams): Handled {
    let list = [...this.datasets.values()]
    const name = query.get('name')
    if (name !== null) list = list.filter((d) => d.name === name)
    const ids = query.getAll('id')
    if (ids.length) list = list.filter((d) => ids.includes(d.id))
    const offset = Number(query.get('offset') ?? 0)
    const limit = Number(query.get('limit') ?? 100)
    return { status: 200, body: list.slice(offset, offset + limit) }
  }

  private createDataset(body: Json): Handled {
    const name = body.name
    if (typeof name !== 'string' || !name) return { status: 422, body: { detail: 'name is required' } }
    if ([...this.datasets.values()].some((d) => d.name === name)) return { status: 409, body: { detail: `Dataset with name ${name} already exists` } }
    const now = new Date().toISOString()
    const dataset = { id: randomUUID(), name, description: body.description ?? null, data_type: body.data_type ?? 'kv', tenant_id: randomUUID(), created_at: now, modified_at: now, example_count: 0, extra: body.extra ?? null }
    this.datasets.set(dataset.id, dataset)
    return { status: 200, body: dataset }
  }

  private deleteDataset(id: string): Handled {
    if (!this.datasets.delete(id)) return { status: 404, body: { detail: 'Dataset not found' } }
    for (const [key, e] of this.examples) if (e.dataset_id === id) this.examples.delete(key)
    return { status: 200, body: {} }
  }

  private splits(id: string): Handled {
    const names = new Set<string>()
    for (const e of this.examples.values()) if (e.dataset_id === id) for (const s of e.metadata.dataset_split as string[]) names.add(s)
    return { status: 200, body: [...names] }
  }

  private listExamples(query: URLSearchParams): Handled {
    const dataset = query.get('dataset')
    let list = [...this.examples.values()].filter((e) => dataset === null || e.dataset_id === dataset)
    const ids = query.getAll('id')
    if (ids.length) list = list.filter((e) => ids.includes(e.id))
    const splits = query.getAll('splits')
    if (splits.length) list = list.filter((e) => (e.metadata.dataset_split as string[]).some((s) => splits.includes(s)))
    const offset = Number(query.get('offset') ?? 0)
    const limit = Math.min(Number(query.get('limit') ?? 100), 100)
    return { status: 200, body: list.slice(offset, offset + limit) }
  }

  private deleteExamples(ids: string[]): Handled {
    for (const id of ids) this.examples.delete(id)
    return { status: 200, body: {} }
  }

  private store(datasetId: string, id: string, inputs: Json, outputs: Json | null, metadata: Json | null, split: unknown, sourceRunId: string | null): void {
    const now = new Date().toISOString()
    const dataset_split = typeof split === 'string' ? [split] : Array.isArray(split) ? split : ['base']
    this.examples.set(id, { id, dataset_id: datasetId, inputs, outputs, metadata: { ...(metadata ?? {}), dataset_split }, source_run_id: sourceRunId, created_at: now, modified_at: now })
  }

  private bulk(list: Json[]): Handled {
    for (const e of list) {
      const id = typeof e.id === 'string' ? e.id : randomUUID()
      this.store(e.dataset_id as string, id, (e.inputs as Json) ?? {}, (e.outputs as Json) ?? null, (e.metadata as Json) ?? null, e.split, null)
    }
    return { status: 200, body: list }
  }

  private async multipart(method: string, datasetId: string, body: Buffer, type: string | undefined): Promise<Handled> {
    if (body.length > LIMIT_BYTES) return { status: 413, body: { detail: 'Payload too large' } }
    if (!this.datasets.has(datasetId)) return { status: 404, body: { detail: 'Dataset not found' } }
    const parts = await formParts(body, type)
    const ids = [...parts.keys()].filter((k) => !k.includes('.'))
    if (method === 'POST') {
      // Ids are the examples' keys: one already stored refuses the whole request.
      const taken = ids.filter((id) => this.examples.has(id))
      if (taken.length) return { status: 409, body: { detail: `examples already exist: ${taken.join(', ')}` } }
      for (const id of ids) {
        const head = JSON.parse(parts.get(id)!) as Json
        const outputs = parts.has(`${id}.outputs`) ? (JSON.parse(parts.get(`${id}.outputs`)!) as Json) : null
        this.store(datasetId, id, JSON.parse(parts.get(`${id}.inputs`) ?? '{}') as Json, outputs, (head.metadata as Json) ?? null, head.split, (head.source_run_id as string) ?? null)
      }
      return { status: 200, body: { count: ids.length, example_ids: ids } }
    }
    const missing = ids.filter((id) => !this.examples.has(id))
    if (missing.length) return { status: 404, body: { detail: `examples not found: ${missing.join(', ')}` } }
    for (const id of ids) {
      const old = this.examples.get(id)!
      const head = JSON.parse(parts.get(id)!) as Json
      const outputs = parts.has(`${id}.outputs`) ? (JSON.parse(parts.get(`${id}.outputs`)!) as Json) : old.outputs
      const inputs = parts.has(`${id}.inputs`) ? (JSON.parse(parts.get(`${id}.inputs`)!) as Json) : old.inputs
      this.store(datasetId, id, inputs, outputs, (head.metadata as Json) ?? old.metadata, head.split ?? old.metadata.dataset_split, old.source_run_id)
    }
    return { status: 200, body: { count: ids.length, example_ids: ids } }
  }
}
