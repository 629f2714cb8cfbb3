/**
 * A Hugging Face Hub stand-in (docs/services.md sections 3 and 5): repositories of commits in
 * memory, the tree paged by `Link`, files resolved with a redirect of LFS files to a second
 * origin (which must never see the token), preupload, the LFS batch API and NDJSON commits
 * applied whole or not at all.
 */
import { createHash, randomBytes } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { StandIn, type Handled, type Routed } from './stand-in.ts'

type Json = Record<string, unknown>

interface Stored {
  content: Buffer
  lfs: boolean
}

interface Repo {
  commits: Map<string, Map<string, Stored>>
  branches: Map<string, string>
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
const blobId = (b: Buffer): string => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex')

/** The second origin: LFS bytes are fetched from and uploaded to it. */
export class CdnStandIn extends StandIn {
  objects = new Map<string, Buffer>()
  /** Parts of multipart uploads, by object and part number, as PUT. */
  parts = new Map<string, Map<number, Buffer>>()

  protected refuse(): Handled | undefined {
    return undefined
  }

  protected route(method: string, path: string, _query: URLSearchParams, body: Buffer): Routed | undefined {
    const part = /^\/parts\/([0-9a-f]{64})\/(\d+)$/.exec(path)
    if (part && method === 'PUT') {
      return {
        route: 'PUT /parts/{oid}/{part}',
        handle: () => {
          const parts = this.parts.get(part[1]!) ?? new Map<number, Buffer>()
          this.parts.set(part[1]!, parts.set(Number(part[2]), body))
          // As S3 answers an upload's part: its ETag, the MD5 of its bytes, quoted.
          return { status: 200, headers: { etag: `"${createHash('md5').update(body).digest('hex')}"` } }
        },
      }
    }
    const m = /^\/objects\/([0-9a-f]{64})$/.exec(path)
    if (!m) return undefined
    const oid = m[1]!
    if (method === 'GET' || method === 'HEAD') return { route: 'GET /objects/{oid}', handle: () => (this.objects.has(oid) ? { status: 200, raw: this.objects.get(oid)!, headers: { 'content-type': 'application/octet-stream' } } : { status: 404, body: { error: 'no object' } }) }
    if (method === 'PUT') {
      return {
        route: 'PUT /objects/{oid}',
        handle: () => {
          if (sha256(body) !== oid) return { status: 400, body: { error: 'sha256 mismatch' } }
          this.objects.set(oid, body)
          return { status: 200, body: {} }
        },
      }
    }
    return undefined
  }
}

export class HubStandIn extends StandIn {
  repos = new Map<string, Repo>()
  /** Files a tree page holds (small, so that tests see several pages). */
  pageSize = 2
  /** `lfs`: preupload sends .parquet files through LFS, as the Hub does; `regular`: every file travels in the commit. */
  uploadMode: 'lfs' | 'regular' = 'lfs'
  /** Set: LFS objects of at least this many bytes go up in parts of `chunkSize` (a `multipart` transfer), when the client takes it. */
  multipart?: { fromBytes: number; chunkSize: number }

  constructor(readonly cdn: CdnStandIn, readonly token = 'hf_test_token_0123456789') {
    super()
  }

  /** The files of a branch's head, as text or bytes. */
  filesOf(repo: string, branch = 'main'): Map<string, Buffer> {
    const r = this.repos.get(repo)
    const head = r?.branches.get(branch)
    return new Map([...(head ? r!.commits.get(head)! : new Map<string, Stored>())].map(([p, s]) => [p, s.content]))
  }

  /**
   * Makes a commit on `branch` of `repo` (created when missing) that holds `files` beside what the
   * branch held: Parquet files through LFS, as the Hub keeps them. Returns the commit's sha.
   */
  put(repo: string, files: Record<string, Buffer | string>, branch = 'main'): string {
    if (!this.repos.has(repo)) this.repos.set(repo, { commits: new Map(), branches: new Map() })
    const r = this.repos.get(repo)!
    const head = r.branches.get(branch)
    const next = new Map(head ? r.commits.get(head)! : [])
    for (const [path, content] of Object.entries(files)) {
      const bytes = Buffer.from(content)
      const lfs = path.endsWith('.parquet')
      if (lfs) this.cdn.objects.set(sha256(bytes), bytes)
      next.set(path, { content: bytes, lfs })
    }
    const sha = randomBytes(20).toString('hex')
    r.commits.set(sha, next)
    r.branches.set(branch, sha)
    return sha
  }

  commitsOf(repo: string): number {
    return Math.max(0, (this.repos.get(repo)?.commits.size ?? 1) - 1)
  }

  protected refuse(headers: IncomingMessage['headers'], path: string): Handled | undefined {
    const auth = headers.authorization
    if (auth !== undefined && auth !== `Bearer ${this.token}`) return { status: 401, body: { error: 'Invalid credentials in Authorization header' }, headers: { 'x-error-code': 'Unauthorized' } }
    // Reads are public; writes need the token.
    const writes = path.startsWith('/api/repos/create') || /\/(preupload|commit)\//.test(path) || path.includes('.git/info/lfs')
    if (writes && auth === undefined) return { status: 401, body: { error: 'You must be authenticated to write' } }
    return undefined
  }

  protected route(method: string, path: string, query: URLSearchParams, body: Buffer, headers: IncomingMessage['headers']): Routed | undefined {
    let m: RegExpExecArray | null
    if (method === 'POST' && path === '/api/repos/create') return { route: 'POST /api/repos/create', handle: () => this.create(JSON.parse(body.toString('utf8')) as Json) }
    if (method === 'GET' && (m = /^\/api\/datasets\/([^/]+)\/([^/]+)\/revision\/(.+)$/.exec(path))) {
      const [, o, n, rev] = m
      return { route: 'GET /api/datasets/{repo}/revision/{rev}', handle: () => this.revision(`${o}/${n}`, decodeURIComponent(rev!)) }
    }
    if (method === 'GET' && (m = /^\/api\/datasets\/([^/]+)\/([^/]+)\/tree\/([^/]+)(\/.*)?$/.exec(path))) {
      const [, o, n, rev, sub] = m
      return { route: 'GET /api/datasets/{repo}/tree/{rev}', handle: () => this.tree(`${o}/${n}`, decodeURIComponent(rev!), sub?.slice(1), query, path) }
    }
    if ((method === 'GET' || method === 'HEAD') && (m = /^\/datasets\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path))) {
      const [, o, n, rev, file] = m
      return { route: 'GET /datasets/{repo}/resolve/{rev}/{path}', handle: () => this.resolve(`${o}/${n}`, decodeURIComponent(rev!), file!, headers.range) }
    }
    if (method === 'POST' && (m = /^\/api\/datasets\/([^/]+)\/([^/]+)\/preupload\/(.+)$/.exec(path))) {
      return { route: 'POST /api/datasets/{repo}/preupload/{rev}', handle: () => this.preupload(JSON.parse(body.toString('utf8')) as Json) }
    }
    if (method === 'POST' && (m = /^\/datasets\/([^/]+)\/([^/]+)\.git\/info\/lfs\/objects\/batch$/.exec(path))) {
      return { route: 'POST /datasets/{repo}.git/info/lfs/objects/batch', handle: () => this.lfsBatch(JSON.parse(body.toString('utf8')) as Json) }
    }
    if (method === 'POST' && path === '/api/complete_multipart') {
      return { route: 'POST /api/complete_multipart', handle: () => this.completeMultipart(query.get('oid') ?? '', JSON.parse(body.toString('utf8')) as Json) }
    }
    if (method === 'POST' && (m = /^\/api\/datasets\/([^/]+)\/([^/]+)\/commit\/(.+)$/.exec(path))) {
      const [, o, n, rev] = m
      return { route: 'POST /api/datasets/{repo}/commit/{rev}', handle: () => this.commit(`${o}/${n}`, decodeURIComponent(rev!), body) }
    }
    return undefined
  }

  private create(body: Json): Handled {
    const id = `${String(body.organization)}/${String(body.name)}`
    if (this.repos.has(id)) return { status: 409, body: { error: 'You already created this dataset repo', url: `${this.url}/datasets/${id}` } }
    const initial = randomBytes(20).toString('hex')
    const files = new Map<string, Stored>([['.gitattributes', { content: Buffer.from('*.parquet filter=lfs diff=lfs merge=lfs -text\n'), lfs: false }]])
    this.repos.set(id, { commits: new Map([[initial, files]]), branches: new Map([['main', initial]]) })
    return { status: 200, body: { url: `${this.url}/datasets/${id}`, name: id } }
  }

  private commitOf(repo: Repo, rev: string): string | undefined {
    return repo.commits.has(rev) ? rev : repo.branches.get(rev)
  }

  private revision(id: string, rev: string): Handled {
    const repo = this.repos.get(id)
    const sha = repo && this.commitOf(repo, rev)
    if (!repo || !sha) return { status: 404, body: { error: 'Repository not found' }, headers: { 'x-error-code': repo ? 'RevisionNotFound' : 'RepoNotFound' } }
    return { status: 200, body: { id, sha, private: true, gated: false, lastModified: new Date().toISOString(), siblings: [...repo.commits.get(sha)!.keys()].map((rfilename) => ({ rfilename })) } }
  }

  private tree(id: string, rev: string, sub: string | undefined, query: URLSearchParams, path: string): Handled {
    const repo = this.repos.get(id)
    const sha = repo && this.commitOf(repo, rev)
    if (!repo || !sha) return { status: 404, body: { error: 'Repository not found' } }
    const entries = [...repo.commits.get(sha)!]
      .filter(([p]) => sub === undefined || p.startsWith(`${sub}/`))
      .map(([p, s]) => ({ type: 'file', path: p, size: s.content.length, oid: blobId(s.content), ...(s.lfs ? { lfs: { oid: sha256(s.content), size: s.content.length, pointerSize: 134 } } : {}) }))
    const cursor = Number(query.get('cursor') ?? 0)
    const page = entries.slice(cursor, cursor + this.pageSize)
    const next = cursor + this.pageSize < entries.length ? `${this.url}${path}?recursive=true&expand=false&cursor=${cursor + this.pageSize}` : undefined
    return { status: 200, body: page, ...(next ? { headers: { link: `<${next}>; rel="next"` } } : {}) }
  }

  private resolve(id: string, rev: string, file: string, range: string | undefined): Handled {
    const repo = this.repos.get(id)
    const sha = repo && this.commitOf(repo, rev)
    const stored = sha ? repo!.commits.get(sha)!.get(decodeURIComponent(file)) : undefined
    if (!stored) return { status: 404, body: { error: 'Entry not found' }, headers: { 'x-error-code': 'EntryNotFound' } }
    const headers = { 'x-repo-commit': sha!, etag: `"${stored.lfs ? sha256(stored.content) : blobId(stored.content)}"` }
    // The JS client's probe (`Range: bytes=0-0`) is answered here, with the size, in an ordinary content type.
    if (range === 'bytes=0-0') return { status: 206, raw: stored.content.subarray(0, 1), headers: { ...headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-0/${stored.content.length}` } }
    // A redirect to another origin carries what Python's HEAD reads there: the LFS file's size and hash.
    if (stored.lfs) return { status: 302, headers: { ...headers, location: `${this.cdn.url}/objects/${sha256(stored.content)}`, 'x-linked-size': String(stored.content.length), 'x-linked-etag': `"${sha256(stored.content)}"` } }
    return { status: 200, raw: stored.content, headers: { ...headers, 'content-type': 'application/octet-stream' } }
  }

  private preupload(body: Json): Handled {
    const files = (body.files as { path: string }[]) ?? []
    return { status: 200, body: { files: files.map((f) => ({ path: f.path, uploadMode: this.uploadMode === 'lfs' && f.path.endsWith('.parquet') ? 'lfs' : 'regular', shouldIgnore: false })) } }
  }

  private lfsBatch(body: Json): Handled {
    const objects = (body.objects as { oid: string; size: number }[]) ?? []
    const multipart = this.multipart && (body.transfers as string[] | undefined)?.includes('multipart') ? this.multipart : undefined
    // As the Hub does, one transfer for the whole answer: multipart when the client takes it and an object is large.
    const transfer = multipart && objects.some((o) => o.size >= multipart.fromBytes) ? 'multipart' : 'basic'
    const upload = (o: { oid: string; size: number }): Json => {
      if (transfer === 'basic') return { href: `${this.cdn.url}/objects/${o.oid}` }
      const header: Record<string, string> = { chunk_size: String(multipart!.chunkSize) }
      for (let n = 1; (n - 1) * multipart!.chunkSize < o.size; n++) header[String(n)] = `${this.cdn.url}/parts/${o.oid}/${n}`
      return { href: `${this.url}/api/complete_multipart?oid=${o.oid}`, header }
    }
    return {
      status: 200,
      body: { transfer, objects: objects.map((o) => (this.cdn.objects.has(o.oid) ? { oid: o.oid, size: o.size } : { oid: o.oid, size: o.size, actions: { upload: upload(o) } })) },
      headers: { 'content-type': 'application/vnd.git-lfs+json' },
    }
  }

  /** The end of a multipart upload: the parts, named by their ETags in order, become the object. */
  private completeMultipart(oid: string, body: Json): Handled {
    // Completed again (its answer lost), an upload is answered as it was.
    if (this.cdn.objects.has(oid)) return { status: 200, body: { oid } }
    const stored = this.cdn.parts.get(oid)
    const parts = (body.parts as { partNumber: number; etag: string }[] | undefined) ?? []
    if (body.oid !== oid || !stored || !parts.length) return { status: 400, body: { error: 'no such upload' } }
    const chunks: Buffer[] = []
    for (const [i, part] of parts.entries()) {
      const bytes = stored.get(part.partNumber)
      if (part.partNumber !== i + 1 || !bytes || part.etag !== `"${createHash('md5').update(bytes).digest('hex')}"`) return { status: 400, body: { error: `part ${part.partNumber}: no such part, or its ETag differs` } }
      chunks.push(bytes)
    }
    const content = Buffer.concat(chunks)
    if (sha256(content) !== oid) return { status: 400, body: { error: 'the parts do not hash to the oid' } }
    this.cdn.objects.set(oid, content)
    this.cdn.parts.delete(oid)
    return { status: 200, body: { oid } }
  }

  private commit(id: string, branch: string, body: Buffer): Handled {
    const repo = this.repos.get(id)
    if (!repo) return { status: 404, body: { error: 'Repository not found' } }
    const head = repo.branches.get(branch)
    const lines = body.toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key: string; value: Json })
    if (lines[0]?.key !== 'header') return { status: 400, body: { error: 'the first line must be the header' } }
    const parent = lines[0].value.parentCommit
    if (parent !== undefined && parent !== head) return { status: 412, body: { error: 'A commit has happened since. Please refresh and try again.' } }
    // Checked whole before any of it is applied.
    const files = new Map(head ? repo.commits.get(head)! : [])
    for (const { key, value } of lines.slice(1)) {
      const path = String(value.path)
      if (key === 'file') files.set(path, { content: Buffer.from(String(value.content), 'base64'), lfs: false })
      else if (key === 'lfsFile') {
        const content = this.cdn.objects.get(String(value.oid))
        if (!content) return { status: 400, body: { error: `LFS object ${String(value.oid)} was never uploaded` } }
        files.set(path, { content, lfs: true })
      } else if (key === 'deletedFile') {
        if (!files.delete(path)) return { status: 400, body: { error: `no file ${path} to delete` } }
      } else return { status: 400, body: { error: `unknown line ${key}` } }
    }
    const sha = randomBytes(20).toString('hex')
    repo.commits.set(sha, files)
    repo.branches.set(branch, sha)
    return { status: 200, body: { commitOid: sha, commitUrl: `${this.url}/datasets/${id}/commit/${sha}` } }
  }
}
