/** Single files over HTTP through undici (GitHub raw, GitLab files API, Bitbucket src API). */

import { setTimeout as sleep } from 'node:timers/promises'
import { FetchError } from '../src/errors.ts'

export interface RetryPolicy {
  /** Further attempts after a 429, each after the wait its Retry-After names. */
  rateLimited: number
  /** Further attempts after a 5xx, backing off (or after its Retry-After). */
  serverError: number
  /** A Retry-After longer than this is not waited for: git is asked instead. */
  maxWaitMs: number
  /** First back-off after a 5xx without Retry-After; doubled each time. */
  backoffMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { rateLimited: 3, serverError: 2, maxWaitMs: 10_000, backoffMs: 250 }

export interface RawFetchOptions {
  /** What errors name the file by (default: the URL without its query). */
  label?: string
  /** Request headers (Authorization); never logged. */
  headers?: Record<string, string>
  /** Abort when headers or body stall this long (milliseconds). */
  timeoutMs: number
  /** Refuse a file bigger than this. */
  maxBytes: number
  retry?: Partial<RetryPolicy>
  /** Stops the request, and any retry, when aborted: the signal's reason is thrown. */
  signal?: AbortSignal
}

/** Hashes the host declared for the file (GitLab's `X-Gitlab-Blob-Id` and `X-Gitlab-Content-Sha256`). */
export interface DeclaredHashes {
  blobId?: string
  sha256?: string
}

export type RawResult =
  | { ok: true; content: Buffer; declared: DeclaredHashes; attempts: number }
  /** `transient`: the host is rate limiting, failing or unreachable, so its other files go to git without asking it again. */
  | { ok: false; status: number; reason: string; attempts: number; transient: boolean }

type Attempt = { ok: true; content: Buffer; declared: DeclaredHashes } | { ok: false; status: number; reason: string; retryAfterMs?: number }

/** Retry-After as delay-seconds or an HTTP date, in milliseconds. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  if (text === undefined || text.trim() === '') return undefined
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name]
  const text = Array.isArray(value) ? value[0] : value
  return text?.trim().toLowerCase() || undefined
}

async function attempt(url: string, options: RawFetchOptions): Promise<Attempt> {
  let response: Awaited<ReturnType<typeof import('undici').request>>
  try {
    // Loaded on first use: a conversion never fetches, and undici takes ~100 ms to load.
    const { request } = await import('undici')
    response = await request(url, {
      method: 'GET',
      headers: { 'user-agent': 'evalferry', ...options.headers },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    })
  } catch (error) {
    options.signal?.throwIfAborted()
    return { ok: false, status: 0, reason: (error as Error).message }
  }
  const { statusCode, body } = response
  if (statusCode < 200 || statusCode >= 300) {
    await body.dump().catch(() => undefined)
    const wait = retryAfterMs(response.headers['retry-after'])
    return { ok: false, status: statusCode, reason: `HTTP ${statusCode}`, ...(wait !== undefined ? { retryAfterMs: wait } : {}) }
  }
  const declared = Number(response.headers['content-length'] ?? Number.NaN)
  if (declared > options.maxBytes) {
    // Left unread: undici reports the abort as an error on the body, which nothing else listens to.
    body.on('error', () => undefined).destroy()
    throw new FetchError('E_UNSAFE', `${options.label ?? url.split('?')[0]}: ${declared} bytes is over the size limit of ${options.maxBytes}`)
  }
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length
      if (size > options.maxBytes) {
        body.destroy()
        throw new FetchError('E_UNSAFE', `${options.label ?? url.split('?')[0]}: over the size limit of ${options.maxBytes} bytes`)
      }
      chunks.push(chunk as Buffer)
    }
  } catch (error) {
    if (error instanceof FetchError) throw error
    options.signal?.throwIfAborted()
    return { ok: false, status: 0, reason: (error as Error).message }
  }
  const content = Buffer.concat(chunks)
  if (Number.isFinite(declared) && declared !== content.length) return { ok: false, status: 0, reason: `${content.length} bytes of a declared ${declared}` }
  const blobId = header(response.headers, 'x-gitlab-blob-id')
  const sha256 = header(response.headers, 'x-gitlab-content-sha256')
  return { ok: true, content, declared: { ...(blobId ? { blobId } : {}), ...(sha256 ? { sha256 } : {}) } }
}

/**
 * GET one file (redirects are not followed). A 429 is tried again after its Retry-After, a 5xx after a
 * back-off, both a bounded number of times (RetryPolicy); what still fails, a network error or another
 * status is returned, not thrown, so that the caller can fall back to git. Only a file over the size
 * limit throws (E_UNSAFE), since git would bring the same file.
 */
export async function fetchRawFile(url: string, options: RawFetchOptions): Promise<RawResult> {
  const policy = { ...DEFAULT_RETRY, ...options.retry }
  let rateLimited = 0
  let serverErrors = 0
  for (let attempts = 1; ; attempts++) {
    const answer = await attempt(url, options)
    if (answer.ok) return { ...answer, attempts }
    const { status, reason } = answer
    let wait: number | undefined
    if (status === 429 && rateLimited < policy.rateLimited) {
      rateLimited++
      wait = answer.retryAfterMs ?? policy.backoffMs * 2 ** (rateLimited - 1)
    } else if (status >= 500 && status <= 599 && serverErrors < policy.serverError) {
      serverErrors++
      wait = answer.retryAfterMs ?? policy.backoffMs * 2 ** (serverErrors - 1) * (0.75 + Math.random() / 2)
    }
    if (wait === undefined || wait > policy.maxWaitMs) {
      const why = wait !== undefined ? `${reason}, Retry-After ${Math.round(wait / 1000)} s is over the ${Math.round(policy.maxWaitMs / 1000)} s limit` : reason
      return { ok: false, status, reason: why, attempts, transient: status === 0 || status === 429 || status >= 500 }
    }
    await sleep(wait, undefined, options.signal ? { signal: options.signal } : {})
  }
}
