/**
 * What every service stand-in shares: an HTTP server on 127.0.0.1 that logs each request, checks
 * credentials, and takes a fault plan per route (a status, a Retry-After, a cut connection, a slow
 * answer, or a request applied and then failed).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'

export interface LoggedRequest {
  method: string
  /** The route's name (`POST /examples`), as faults name it. */
  route: string
  path: string
  query: URLSearchParams
  headers: string[]
  /** Every header value, to show that no credential leaked where it should not. */
  headerValues: Record<string, string>
  bodyBytes: number
  /** Milliseconds since the server started, to show a wait took place. */
  at: number
}

export type FaultKind =
  | { status: number; retryAfter?: string; headers?: Record<string, string> }
  /** The socket is closed before any answer. */
  | { cut: 'before' }
  /** The headers are sent, then the socket closed halfway through the body. */
  | { cut: 'body' }
  /** The answer's headers wait this long. */
  | { delayMs: number }
  /** The request takes effect, then the answer is a 500, a cut connection, or never comes. */
  | { applyThen: 500 | 'cut' | 'hold' }

export interface Fault {
  /** The route's name: `METHOD /pattern` as the stand-in names it. */
  route: string
  /** The call (1-based) of that route it applies to. */
  call: number
  /** How many calls from `call` on it applies to (default 1). */
  times?: number
  fault: FaultKind
}

export interface Handled {
  status: number
  body?: unknown
  raw?: Buffer
  headers?: Record<string, string>
}

export interface Routed {
  route: string
  handle: () => Handled | Promise<Handled>
}

export abstract class StandIn {
  readonly log: LoggedRequest[] = []
  faults: Fault[] = []
  private server?: Server
  private readonly sockets = new Set<Socket>()
  private readonly calls = new Map<string, number>()
  private readonly started = Date.now()
  url = ''

  /** The route of a request, or undefined for a 404. */
  protected abstract route(method: string, path: string, query: URLSearchParams, body: Buffer, headers: IncomingMessage['headers']): Routed | undefined
  /** An answer refusing the request's credentials, or undefined when they are good. */
  protected abstract refuse(headers: IncomingMessage['headers'], path: string): Handled | undefined

  /** `host`: a loopback address (a second origin may take 127.0.0.2, another host than the first's to any client). */
  async start(host = '127.0.0.1'): Promise<this> {
    this.server = createServer((req, res) => void this.serve(req, res))
    this.server.on('connection', (socket) => {
      this.sockets.add(socket)
      socket.on('close', () => this.sockets.delete(socket))
    })
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve))
    this.url = `http://${host}:${(this.server!.address() as AddressInfo).port}`
    return this
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve())
  }

  /** Forgets the requests, the faults and the calls counted (between tests). */
  reset(): void {
    this.log.length = 0
    this.faults = []
    this.calls.clear()
  }

  /** Requests whose route is `route`. */
  count(route?: string): number {
    return route === undefined ? this.log.length : this.log.filter((r) => r.route === route).length
  }

  private faultFor(route: string, call: number): FaultKind | undefined {
    return this.faults.find((f) => f.route === route && call >= f.call && call < f.call + (f.times ?? 1))?.fault
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const url = new URL(req.url ?? '/', 'http://stand-in')
    const method = req.method ?? 'GET'
    const routed = this.route(method, decodeURI(url.pathname), url.searchParams, body, req.headers)
    const name = routed?.route ?? `${method} ?`
    const headerValues: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) headerValues[k] = Array.isArray(v) ? v.join(', ') : (v ?? '')
    this.log.push({ method, route: name, path: url.pathname, query: url.searchParams, headers: Object.keys(req.headers), headerValues, bodyBytes: body.length, at: Date.now() - this.started })
    const call = (this.calls.get(name) ?? 0) + 1
    this.calls.set(name, call)
    const fault = this.faultFor(name, call)
    if (fault && 'cut' in fault && fault.cut === 'before') return void req.socket.destroy()
    if (fault && 'delayMs' in fault) await new Promise((r) => setTimeout(r, fault.delayMs))
    if (fault && 'status' in fault) return this.answer(res, { status: fault.status, body: { error: `injected ${fault.status}` }, headers: { ...(fault.retryAfter ? { 'retry-after': fault.retryAfter } : {}), ...fault.headers } })
    const refused = this.refuse(req.headers, url.pathname)
    if (refused) return this.answer(res, refused)
    if (!routed) return this.answer(res, { status: 404, body: { detail: 'Not Found' } })
    let handled: Handled
    try {
      handled = await routed.handle()
    } catch (error) {
      handled = { status: 500, body: { error: String((error as Error).message) } }
    }
    if (fault && 'applyThen' in fault) {
      if (fault.applyThen === 'cut') return void req.socket.destroy()
      if (fault.applyThen === 'hold') return
      return this.answer(res, { status: 500, body: { error: 'injected after applying' } })
    }
    if (fault && 'cut' in fault && fault.cut === 'body') {
      const raw = handled.raw ?? Buffer.from(JSON.stringify(handled.body ?? null))
      res.writeHead(handled.status, { 'content-type': 'application/json', 'content-length': String(raw.length), ...handled.headers })
      res.write(raw.subarray(0, Math.floor(raw.length / 2)))
      setTimeout(() => req.socket.destroy(), 10)
      return
    }
    this.answer(res, handled)
  }

  private answer(res: ServerResponse, handled: Handled): void {
    const raw = handled.raw ?? (handled.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(handled.body)))
    res.writeHead(handled.status, { ...(handled.raw ? {} : { 'content-type': 'application/json' }), 'content-length': String(raw.length), ...handled.headers })
    res.end(raw)
  }
}

/** Parses a multipart/form-data body as Node's own fetch does. */
export async function formParts(body: Buffer, contentType: string | undefined): Promise<Map<string, string>> {
  const form = await new Request('http://stand-in/', { method: 'POST', headers: { 'content-type': contentType ?? '' }, body }).formData()
  const parts = new Map<string, string>()
  for (const [name, value] of form.entries()) parts.set(name, typeof value === 'string' ? value : await value.text())
  return parts
}
