/**
 * Requests to a service's API through undici: a timeout on every request, retries of 429, 408 and
 * 5xx and of cut connections with a doubling back-off that honours Retry-After, and refusals
 * (401, 403) as E_AUTH naming the variable to set. Credentials travel in headers only and are
 * blanked out of every message.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { retryAfterMs } from '../../cache/raw.ts'
import { EvalferryError, FetchError, UsageError } from '../errors.ts'

export interface ServiceHttpOptions {
  /** What messages call the service: `LangSmith`. */
  service: string
  /** The API root, without a trailing `/`. */
  base: string
  /** Sent with every request (credentials among them). */
  headers: Record<string, string>
  /** Values never shown in a message (the credentials). */
  secrets: string[]
  /** What a 401 or 403 tells the user to set. */
  credentialHint: string
  /** Each request's limit for its headers, and for each stall of its body (milliseconds). */
  timeoutMs: number
  /** Further attempts after a retryable failure. */
  retries?: number
  /** First back-off; doubled each time. */
  backoffMs?: number
  /** A Retry-After longer than this ends the run instead of waiting. */
  maxWaitMs?: number
  signal?: AbortSignal
}

export interface ServiceRequest {
  method?: string
  /** Appended to the base; a full URL is taken as it is (a redirect's, a page's `Link`). */
  path: string
  query?: Record<string, string | string[] | undefined>
  headers?: Record<string, string>
  body?: string | Buffer
  /** Statuses handed back to the caller rather than thrown (404 for "absent", 409). */
  accept?: number[]
  /**
   * A request that may have taken effect although no answer came (a push) is not sent again after
   * a cut connection or a 5xx: the error goes to the caller, who looks at what the service holds.
   */
  once?: boolean
  /** Leave the base's headers out (a redirect to another origin gets no credentials). */
  bare?: boolean
}

export interface ServiceResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: Buffer
  url: string
}

/** A failure that ended in no answer or a 5xx: the request may or may not have taken effect. */
export class UncertainError extends FetchError {}

const RETRY_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504])

export class ServiceHttp {
  /** Requests sent, for the report. */
  requests = 0
  readonly options: Required<Omit<ServiceHttpOptions, 'signal'>> & { signal?: AbortSignal }

  constructor(options: ServiceHttpOptions) {
    this.options = { retries: 5, backoffMs: 250, maxWaitMs: 120_000, ...options }
  }

  /** `message` with every credential blanked. */
  redact(message: string): string {
    let text = message
    for (const secret of this.options.secrets) if (secret.length >= 4) text = text.split(secret).join('***')
    return text
  }

  url(path: string, query?: ServiceRequest['query']): string {
    const url = new URL(/^https?:\/\//.test(path) ? path : this.options.base + path)
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined) continue
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(key, v)
    }
    return url.href
  }

  async request(req: ServiceRequest): Promise<ServiceResponse> {
    const { retries, backoffMs, maxWaitMs, service } = this.options
    const url = this.url(req.path, req.query)
    const method = req.method ?? 'GET'
    const what = `${service} ${method} ${new URL(url).pathname}`
    for (let attempt = 0; ; attempt++) {
      let answer: ServiceResponse | undefined
      let failure: string | undefined
      try {
        answer = await this.send(url, method, req)
      } catch (error) {
        this.options.signal?.throwIfAborted()
        failure = this.redact(networkReason(error, this.options.timeoutMs))
      }
      if (answer) {
        const { status } = answer
        if ((status >= 200 && status < 300) || req.accept?.includes(status)) return answer
        if (status === 401 || status === 403) throw this.refused(answer, what)
        if (!RETRY_STATUSES.has(status)) throw new FetchError('E_FETCH', `${what}: HTTP ${status}${this.detail(answer)}`)
        failure = `HTTP ${status}${this.detail(answer)}`
      }
      const rateLimited = answer?.status === 429
      // A push that may have been applied is not sent twice: the caller looks at the target.
      if (req.once && !rateLimited) throw new UncertainError('E_FETCH', `${what}: ${failure}`)
      if (attempt >= retries) throw new FetchError('E_FETCH', `${what}: ${failure} (after ${attempt + 1} attempts)`)
      const asked = answer ? (retryAfterMs(answer.headers['retry-after']) ?? rateLimitReset(answer.headers['ratelimit'])) : undefined
      const wait = asked ?? Math.min(backoffMs * 2 ** attempt, 8_000)
      if (wait > maxWaitMs) throw new FetchError('E_FETCH', `${what}: ${failure}; the service asks to wait ${Math.round(wait / 1000)} s, over the ${Math.round(maxWaitMs / 1000)} s limit`)
      await sleep(wait, undefined, this.options.signal ? { signal: this.options.signal } : {})
    }
  }

  /** The JSON of a successful answer. */
  async json<T>(req: ServiceRequest): Promise<T> {
    const answer = await this.request(req)
    return parseJson<T>(answer, `${this.options.service} ${req.method ?? 'GET'} ${new URL(answer.url).pathname}`)
  }

  private async send(url: string, method: string, req: ServiceRequest): Promise<ServiceResponse> {
    // Loaded on first use: a conversion of files never asks a service.
    const { request } = await import('undici')
    this.requests++
    const response = await request(url, {
      method: method as 'GET',
      headers: { 'user-agent': 'evalferry', ...(req.bare ? {} : this.options.headers), ...req.headers },
      ...(req.body !== undefined ? { body: req.body } : {}),
      headersTimeout: this.options.timeoutMs,
      bodyTimeout: this.options.timeoutMs,
      ...(this.options.signal ? { signal: this.options.signal } : {}),
    })
    const chunks: Buffer[] = []
    for await (const chunk of response.body) chunks.push(chunk as Buffer)
    return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks), url }
  }

  private detail(answer: ServiceResponse): string {
    const text = answer.body.toString('utf8', 0, Math.min(answer.body.length, 300)).trim()
    return text ? `: ${this.redact(text.replace(/\s+/g, ' '))}` : ''
  }

  private refused(answer: ServiceResponse, what: string): EvalferryError {
    return new FetchError('E_AUTH', `${what}: HTTP ${answer.status}${this.detail(answer)}; ${this.options.credentialHint}`)
  }
}

export function parseJson<T>(answer: ServiceResponse, what: string): T {
  try {
    return JSON.parse(answer.body.toString('utf8')) as T
  } catch {
    throw new FetchError('E_FETCH', `${what}: the answer is not JSON (${answer.body.length} bytes)`)
  }
}

/** The Hub's `RateLimit: "api";r=0;t=<seconds>`: the wait until the window resets. */
function rateLimitReset(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  const seconds = text === undefined ? undefined : /;\s*t=(\d+)/.exec(text)?.[1]
  return seconds === undefined ? undefined : Number(seconds) * 1000
}

function networkReason(error: unknown, timeoutMs: number): string {
  const code = (error as { code?: string })?.code
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `no answer within the ${timeoutMs / 1000} s timeout`
  const message = (error as Error)?.message ?? String(error)
  return code ? `${message} (${code})` : message
}

/** The first defined, non-empty value of the variables `names`, as the SDKs read them. */
export function setting(env: NodeJS.ProcessEnv, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = env[name]
    if (value !== undefined && value.trim() !== '') return value.trim()
  }
  return undefined
}

/** A service's API root: the first of the variables `names` that is set, else `fallback`; a value that is no http(s) URL is an error naming its variable. */
export function serviceBase(env: NodeJS.ProcessEnv, names: string[], fallback: string): string {
  const name = names.find((n) => setting(env, n) !== undefined)
  const base = (name === undefined ? fallback : setting(env, name)!).replace(/\/+$/, '')
  let url: URL | undefined
  try {
    url = new URL(base)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new UsageError(`${name}=${JSON.stringify(base)} is not an http(s) URL`)
  return base
}
