/**
 * A git server on 127.0.0.1: `git http-backend` (smart HTTP, protocol v2) behind a Node HTTP server,
 * plus stand-ins for GitHub's raw endpoint, GitLab's files API, Bitbucket's src API and Bitbucket
 * Server's raw REST endpoint, all serving the bare repositories under `root` (laid out
 * `<host>/<owner…>/<repo>.git`; `<host>` may be a longer path, as for an instance served under a
 * path prefix). Every request is logged so tests can count ref listings and fetches.
 */

import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { gunzipSync } from 'node:zlib'

export interface LoggedRequest {
  method: string
  /** The request path, percent-encoded as sent. */
  path: string
  query: string
  /** The repository as `<host>/<owner…>/<repo>` (no `.git`), when the request is for one. */
  repository?: string
  /** `git` for smart HTTP, `raw` for the single-file APIs. */
  kind: 'git' | 'raw' | 'other'
  /** For git POSTs: the protocol v2 command (`ls-refs`, `fetch`). */
  command?: string
  headers: IncomingMessage['headers']
  status?: number
  /** This response was cut and left hanging (GitServerOptions.stallFetch). */
  stalled?: boolean
  /** Body bytes sent by git http-backend's answer (git requests). */
  bytes?: number
  /** The fault injected into this response, by kind (`cut`, `delay`, `garbage`, `status`, `body`). */
  fault?: string
}

/** A fault in a git smart-HTTP response. */
export interface GitFault {
  /** Hold the response this long before sending anything. */
  delayMs?: number
  /** Send git's headers and this many bytes of its body, then drop the connection. */
  cutAfter?: number
  /** Answer 200 with these bytes, under git's content type, instead of git's answer. */
  garbage?: Buffer
  /** Answer with this status and no body. */
  status?: number
}

/** A fault in a single-file API response. */
export interface RawFault {
  /** Hold the request this long, then drop it without an answer. */
  delayMs?: number
  status?: number
  headers?: Record<string, string>
  /** Send these bytes instead of the file (with their own length). */
  body?: Buffer
  /** Declare the file's length but send this many bytes of it, then drop the connection. */
  cutAfter?: number
}

export interface GitServerOptions {
  /** Answer every git request without `Authorization: Basic …<token>…` (or Bearer) with 401. */
  requireToken?: string
  /** How the single-file APIs answer: serve the file, or fail with this status. */
  raw?: 'serve' | 404 | 500 | 503
  /** Answer the `nth` fetch command (1-based, counted across the server) with `afterBytes` bytes, then hang. */
  stallFetch?: { nth: number; afterBytes: number }
  /** Called for each git request (its `command` set for POSTs); a fault it returns is injected. */
  gitFault?: (request: LoggedRequest) => GitFault | undefined
  /** Called for each single-file API request; a fault it returns is injected. */
  rawFault?: (request: LoggedRequest) => RawFault | undefined
}

export interface GitServer {
  /** `http://127.0.0.1:<port>` */
  url: string
  root: string
  requests: LoggedRequest[]
  options: GitServerOptions
  /** `--host` values mapping github.com, gitlab.com and bitbucket.org to this server. */
  hostSpecs(): string[]
  /** Requests for one repository of one kind and command. */
  count(repository: string, what: 'ls-refs' | 'fetch' | 'info-refs' | 'raw'): number
  /** Resolves when a request matching `predicate` arrives. */
  waitFor(predicate: (r: LoggedRequest) => boolean): Promise<LoggedRequest>
  close(): Promise<void>
}

const GIT_EXEC_PATH = execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim()

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', reject)
  })
}

function v2Command(body: Buffer, encoding: string | undefined): string | undefined {
  let text: string
  try {
    text = (encoding === 'gzip' ? gunzipSync(body) : body).toString('latin1')
  } catch {
    return undefined
  }
  const m = /command=([a-z-]+)/.exec(text)
  if (m) return m[1]
  return /want [0-9a-f]{40}/.test(text) ? 'fetch' : undefined
}

function authorized(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? ''
  if (header.startsWith('Bearer ')) return header.slice(7) === token
  if (header.startsWith('Basic ')) return Buffer.from(header.slice(6), 'base64').toString('utf8').split(':').slice(1).join(':') === token
  if (req.headers['private-token'] === token) return true
  return false
}

export async function startGitServer(root: string, options: GitServerOptions = {}): Promise<GitServer> {
  const requests: LoggedRequest[] = []
  const waiters: { predicate: (r: LoggedRequest) => boolean; resolve: (r: LoggedRequest) => void }[] = []
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer)
        resolve()
      }, ms)
      timers.add(timer)
    })
  const log = (entry: LoggedRequest): void => {
    requests.push(entry)
    for (const w of [...waiters]) {
      if (w.predicate(entry)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(entry)
      }
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500)
      res.end(String(error))
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const [rawPath = '/', query = ''] = (req.url ?? '/').split(/\?(.*)/s)
    const path = decodeURIComponent(rawPath)
    const body = await readBody(req)
    const gitMatch = /^\/(.+?)\.git(\/(?:info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/.*))$/.exec(path)
    if (gitMatch) {
      const entry: LoggedRequest = { method: req.method ?? 'GET', path: rawPath, query, repository: gitMatch[1]!, kind: 'git', headers: req.headers }
      if (req.method === 'POST') {
        const command = v2Command(body, req.headers['content-encoding'])
        if (command) entry.command = command
        const nth = requests.filter((r) => r.command === 'fetch').length + 1
        if (command === 'fetch' && options.stallFetch?.nth === nth) entry.stalled = true
      }
      if (options.requireToken !== undefined && !authorized(req, options.requireToken)) {
        entry.status = 401
        log(entry)
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="evalferry-test"', 'Content-Type': 'text/plain' })
        res.end('authentication required\n')
        return
      }
      const fault = options.gitFault?.(entry)
      if (fault) entry.fault = fault.garbage ? 'garbage' : fault.cutAfter !== undefined ? 'cut' : fault.status !== undefined ? 'status' : 'delay'
      log(entry)
      if (fault?.delayMs) await pause(fault.delayMs)
      if (res.destroyed) return
      if (fault?.status !== undefined) {
        entry.status = fault.status
        res.writeHead(fault.status)
        res.end()
        return
      }
      if (fault?.garbage) {
        entry.status = 200
        const type = req.method === 'POST' ? 'application/x-git-upload-pack-result' : 'application/x-git-upload-pack-advertisement'
        res.writeHead(200, { 'Content-Type': type, 'Content-Length': fault.garbage.length })
        res.end(fault.garbage)
        return
      }
      return cgi(req, res, body, `/${gitMatch[1]}.git${gitMatch[2]}`, query, entry, fault?.cutAfter)
    }
    const raw = rawRoute(path, query)
    if (raw) {
      const entry: LoggedRequest = { method: req.method ?? 'GET', path: rawPath, query, repository: raw.repository, kind: 'raw', headers: req.headers }
      const fault = options.rawFault?.(entry)
      if (fault) {
        entry.fault = fault.status !== undefined ? 'status' : fault.body ? 'body' : fault.cutAfter !== undefined ? 'cut' : 'delay'
        if (fault.delayMs) {
          log(entry) // logged on arrival: the client may give up before the answer
          await pause(fault.delayMs)
          return void res.destroy()
        }
        if (fault.status !== undefined) {
          entry.status = fault.status
          log(entry)
          res.writeHead(fault.status, fault.headers ?? {})
          res.end()
          return
        }
      }
      const mode = options.raw ?? 'serve'
      if (mode !== 'serve') {
        entry.status = mode
        log(entry)
        res.writeHead(mode)
        res.end()
        return
      }
      if (options.requireToken !== undefined && !authorized(req, options.requireToken)) {
        entry.status = 401
        log(entry)
        res.writeHead(401)
        res.end()
        return
      }
      try {
        const content = execFileSync('git', ['--git-dir', `${root}/${raw.repository}.git`, 'cat-file', 'blob', `${raw.commit}:${raw.file}`], { stdio: ['ignore', 'pipe', 'ignore'] })
        entry.status = 200
        log(entry)
        const headers: Record<string, string | number> = { 'Content-Type': 'application/octet-stream', ...fault?.headers }
        if (raw.repository.startsWith('gitlab.com/')) {
          // As GitLab's files API does: the blob id and the sha256 of the true content.
          headers['X-Gitlab-Blob-Id'] = createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex')
          headers['X-Gitlab-Content-Sha256'] = createHash('sha256').update(content).digest('hex')
        }
        if (fault?.cutAfter !== undefined) {
          res.writeHead(200, { ...headers, 'Content-Length': content.length })
          res.write(content.subarray(0, fault.cutAfter), () => res.socket?.destroy())
          return
        }
        const sent = fault?.body ?? content
        res.writeHead(200, { ...headers, 'Content-Length': sent.length })
        res.end(sent)
      } catch {
        entry.status = 404
        log(entry)
        res.writeHead(404)
        res.end()
      }
      return
    }
    log({ method: req.method ?? 'GET', path: rawPath, query, kind: 'other', headers: req.headers, status: 404 })
    res.writeHead(404)
    res.end()
  }

  function rawRoute(path: string, query: string): { repository: string; commit: string; file: string } | undefined {
    // GitHub (Enterprise-style raw path): /<host>/raw/<owner>/<repo>/<commit>/<path>
    let m = /^\/([^/]+)\/raw\/([^/]+\/[^/]+)\/([0-9a-f]{40})\/(.+)$/.exec(path)
    if (m) return { repository: `${m[1]}/${m[2]}`, commit: m[3]!, file: m[4]! }
    // GitLab: /<base…>/api/v4/projects/<id>/repository/files/<path>/raw?ref=<commit>, the base being a host or a path under it
    m = /^\/(.+?)\/api\/v4\/projects\/(.+)\/repository\/files\/(.+)\/raw$/.exec(path)
    if (m) return { repository: `${m[1]}/${m[2]}`, commit: new URLSearchParams(query).get('ref') ?? '', file: m[3]! }
    // Bitbucket Server: /<base…>/rest/api/1.0/projects/<KEY>/repos/<slug>/raw/<path>?at=<commit>, from the repository git clones at <base…>/scm/<key>/<slug>.git
    m = /^\/(.+?)\/rest\/api\/1\.0\/projects\/([^/]+)\/repos\/([^/]+)\/raw\/(.+)$/.exec(path)
    if (m) return { repository: `${m[1]}/scm/${m[2]!.toLowerCase()}/${m[3]}`, commit: new URLSearchParams(query).get('at') ?? '', file: m[4]! }
    // Bitbucket Cloud: /<host>/!api/2.0/repositories/<workspace>/<repo>/src/<commit>/<path>
    m = /^\/([^/]+)\/!api\/2\.0\/repositories\/([^/]+\/[^/]+)\/src\/([0-9a-f]{40})\/(.+)$/.exec(path)
    if (m) return { repository: `${m[1]}/${m[2]}`, commit: m[3]!, file: m[4]! }
    return undefined
  }

  function cgi(req: IncomingMessage, res: ServerResponse, body: Buffer, pathInfo: string, query: string, entry: LoggedRequest, cutAfter?: number): void {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: pathInfo,
      QUERY_STRING: query,
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      CONTENT_LENGTH: String(body.length),
      REMOTE_ADDR: '127.0.0.1',
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: root,
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'uploadpack.allowFilter',
      GIT_CONFIG_VALUE_0: 'true',
      GIT_CONFIG_KEY_1: 'uploadpack.allowAnySHA1InWant',
      GIT_CONFIG_VALUE_1: 'true',
    }
    if (req.headers['git-protocol']) env.GIT_PROTOCOL = String(req.headers['git-protocol'])
    if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = String(req.headers['content-encoding'])
    const child = spawn(`${GIT_EXEC_PATH}/git-http-backend`, [], { env, stdio: ['pipe', 'pipe', 'ignore'] })
    child.stdin.on('error', () => undefined) // http-backend may exit before reading a body it does not need
    child.on('error', () => undefined)
    res.on('error', () => undefined)
    child.stdin.end(body)
    let head = Buffer.alloc(0)
    let headersDone = false
    let sent = 0
    const stallAt = entry.stalled ? (options.stallFetch?.afterBytes ?? 0) : undefined
    let cut = false
    child.stdout.on('data', (chunk: Buffer) => {
      if (!headersDone) {
        head = Buffer.concat([head, chunk])
        let end = head.indexOf('\r\n\r\n')
        let sep = 4
        if (end < 0) {
          end = head.indexOf('\n\n')
          sep = 2
        }
        if (end < 0) return
        headersDone = true
        const headers: Record<string, string> = {}
        let status = 200
        for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
          const i = line.indexOf(':')
          if (i < 0) continue
          const name = line.slice(0, i).trim()
          const value = line.slice(i + 1).trim()
          if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10)
          else headers[name] = value
        }
        entry.status = status
        res.writeHead(status, headers)
        chunk = head.subarray(end + sep)
      }
      entry.bytes = (entry.bytes ?? 0) + chunk.length
      if (cutAfter !== undefined) {
        if (cut) return
        const room = Math.max(0, cutAfter - sent)
        sent += Math.min(room, chunk.length)
        if (sent < cutAfter) {
          res.write(chunk)
          return
        }
        // The connection drops in the middle of the body, as when a proxy or the network fails.
        cut = true
        child.kill()
        res.write(chunk.subarray(0, room), () => res.socket?.destroy())
        return
      }
      if (stallAt !== undefined) {
        const room = Math.max(0, stallAt - sent)
        if (room > 0) res.write(chunk.subarray(0, room))
        sent += Math.min(room, chunk.length)
        if (sent >= stallAt) {
          child.stdout.removeAllListeners('data')
          child.stdout.resume()
          child.kill()
        }
        return
      }
      res.write(chunk)
    })
    child.stdout.on('end', () => {
      if (stallAt !== undefined && sent >= stallAt) return // keep the connection open: a stalled server
      if (cut) return
      if (cutAfter !== undefined) entry.fault = 'cut-missed' // the answer was shorter than cutAfter
      if (!headersDone) res.writeHead(502)
      res.end()
    })
  }

  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('no address')
  const url = `http://127.0.0.1:${address.port}`

  return {
    url,
    root,
    requests,
    options,
    hostSpecs: () => [
      `github.com=${url}/github.com,type=github`,
      `gitlab.com=${url}/gitlab.com,type=gitlab`,
      `bitbucket.org=${url}/bitbucket.org,type=bitbucket`,
    ],
    count(repository, what) {
      return requests.filter((r) => {
        if (r.repository !== repository) return false
        if (what === 'raw') return r.kind === 'raw'
        if (what === 'info-refs') return r.kind === 'git' && r.method === 'GET' && r.path.endsWith('/info/refs')
        return r.kind === 'git' && r.method === 'POST' && r.command === what
      }).length
    },
    waitFor(predicate) {
      const seen = requests.find(predicate)
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve) => waiters.push({ predicate, resolve }))
    },
    close() {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}
