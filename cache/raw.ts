/** Single files over HTTP through undici (GitHub raw, GitLab files API, Bitbucket src API). */

import { request } from 'undici'
import { FetchError } from '../src/errors.ts'

export interface RawFetchOptions {
  /** Request headers (Authorization); never logged. */
  headers?: Record<string, string>
  /** Abort when headers or body stall this long (milliseconds). */
  timeoutMs: number
  /** Refuse a file bigger than this. */
  maxBytes: number
}

export type RawResult = { ok: true; content: Buffer } | { ok: false; status: number; reason: string }

/**
 * GET one file (redirects are not followed). A non-2xx answer or a network error is returned, not thrown, so that the caller
 * can fall back to git; only a file over the size limit throws (E_UNSAFE), since git would bring
 * the same file.
 */
export async function fetchRawFile(url: string, options: RawFetchOptions): Promise<RawResult> {
  let response: Awaited<ReturnType<typeof request>>
  try {
    response = await request(url, {
      method: 'GET',
      headers: { 'user-agent': 'evalferry', ...options.headers },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    })
  } catch (error) {
    return { ok: false, status: 0, reason: (error as Error).message }
  }
  const { statusCode, body } = response
  if (statusCode < 200 || statusCode >= 300) {
    await body.dump().catch(() => undefined)
    return { ok: false, status: statusCode, reason: `HTTP ${statusCode}` }
  }
  const declared = Number(response.headers['content-length'] ?? Number.NaN)
  if (declared > options.maxBytes) {
    await body.dump().catch(() => undefined)
    throw new FetchError('E_UNSAFE', `${url.split('?')[0]}: ${declared} bytes is over the size limit of ${options.maxBytes}`)
  }
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length
      if (size > options.maxBytes) {
        body.destroy()
        throw new FetchError('E_UNSAFE', `${url.split('?')[0]}: over the size limit of ${options.maxBytes} bytes`)
      }
      chunks.push(chunk as Buffer)
    }
  } catch (error) {
    if (error instanceof FetchError) throw error
    return { ok: false, status: 0, reason: (error as Error).message }
  }
  return { ok: true, content: Buffer.concat(chunks) }
}
