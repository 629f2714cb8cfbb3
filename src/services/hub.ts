/**
 * Hugging Face Hub datasets (docs/services.md section 3). Reading resolves the revision to a
 * commit once, lists the files at that commit and fetches the data files into the repository
 * cache, immutable per commit: a second read at the commit asks nothing, and `--offline` serves
 * it. Writing is one commit through the NDJSON commit API: Parquet files laid out as
 * `datasets.push_to_hub` lays them out, and a dataset card whose `configs` name them.
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { writeAtomic } from '../../cache/fs.ts'
import { cacheRoot, commitFile, repoLayout, type RepoLayout } from '../../cache/layout.ts'
import { exists, gitBlobId } from '../../cache/store.ts'
import { FetchError, UsageError } from '../errors.ts'
import { DEFAULTS } from '../resolver/options.ts'
import type { HubAddress } from './address.ts'
import { cardConfigs, defaultConfig, parseCard, patternMatcher, pushedCard, type Card, type CardConfig, type PushedSplit } from './hub-card.ts'
import type { PushOptions, PushSummary, ServiceContext } from './context.ts'
import { parseJson, serviceBase, ServiceHttp, setting, UncertainError } from './http.ts'

const DATA_EXTENSIONS = ['.parquet', '.jsonl', '.json', '.csv', '.jsonl.gz', '.json.gz', '.csv.gz']
const COMMIT = /^[0-9a-f]{40}$/

export interface TreeEntry {
  type: 'file' | 'directory'
  path: string
  size?: number
  oid?: string
  lfs?: { oid: string; size: number }
}

interface Revisions {
  [revision: string]: { sha: string; resolved_at: string }
}

function hubToken(env: NodeJS.ProcessEnv): string | undefined {
  return setting(env, 'HF_TOKEN', 'HUGGING_FACE_HUB_TOKEN')
}

export function hubHttp(ctx: ServiceContext, needsToken = false): ServiceHttp {
  const token = hubToken(ctx.env)
  if (needsToken && !token) throw new FetchError('E_AUTH', 'writing to the Hugging Face Hub needs a token: set HF_TOKEN (or HUGGING_FACE_HUB_TOKEN)')
  return new ServiceHttp({
    service: 'Hugging Face Hub',
    base: serviceBase(ctx.env, ['HF_ENDPOINT'], 'https://huggingface.co'),
    headers: token ? { authorization: `Bearer ${token}` } : {},
    secrets: token ? [token] : [],
    credentialHint: token ? 'set HF_TOKEN to a token that can read (or, to push, write) this dataset' : 'set HF_TOKEN to a token that can read this dataset',
    timeoutMs: ctx.timeoutMs,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  })
}

function repoPath(address: HubAddress): string {
  return `${encodeURIComponent(address.owner)}/${encodeURIComponent(address.name)}`
}

function layoutOf(http: ServiceHttp, address: HubAddress, ctx: ServiceContext): RepoLayout {
  return repoLayout(cacheRoot(ctx.cacheDir ? { cacheDir: ctx.cacheDir } : {}, ctx.env), new URL(http.options.base).host, `datasets/${address.owner}/${address.name}`)
}

async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T
  } catch {
    return undefined
  }
}

/** The commit a revision names: a commit as it is, a branch or tag as the cache last saw it within the TTL, else as the Hub says. */
async function resolveRevision(http: ServiceHttp, address: HubAddress, layout: RepoLayout, ctx: ServiceContext): Promise<string> {
  if (COMMIT.test(address.revision)) return address.revision
  const file = `${layout.dir}/revisions.json`
  const known = (await readJson<Revisions>(file)) ?? {}
  const cached = known[address.revision]
  if (cached && (ctx.offline || Date.now() - Date.parse(cached.resolved_at) < DEFAULTS.refTtlSeconds * 1000)) return cached.sha
  if (ctx.offline) throw new FetchError('E_OFFLINE', `${address.text}: the revision '${address.revision}' is not in the cache, and --offline forbids asking the Hub`)
  const answer = await http.request({ path: `/api/datasets/${repoPath(address)}/revision/${encodeURIComponent(address.revision)}`, accept: [404] })
  if (answer.status === 404) throw new FetchError('E_FETCH', `${address.text}: the Hub at ${http.options.base} has no dataset ${address.owner}/${address.name} at revision '${address.revision}'`)
  const sha = parseJson<{ sha?: string }>(answer, 'Hugging Face Hub revision').sha
  if (!sha || !COMMIT.test(sha)) throw new FetchError('E_FETCH', `${address.text}: the Hub named no commit for '${address.revision}'`)
  known[address.revision] = { sha, resolved_at: new Date().toISOString() }
  await writeAtomic(file, JSON.stringify(known, null, 2) + '\n', layout.tmp)
  return sha
}

/** Every file of the repository at `sha`, page by page (the `Link` header names the next); kept in the cache, as the commit never changes. */
async function filesAt(http: ServiceHttp, address: HubAddress, layout: RepoLayout, sha: string, ctx: ServiceContext): Promise<TreeEntry[]> {
  const file = `${layout.commits}/${sha}.tree.json`
  const cached = await readJson<TreeEntry[]>(file)
  if (cached) return cached
  if (ctx.offline) throw new FetchError('E_OFFLINE', `${address.text}: commit ${sha} is not in the cache, and --offline forbids asking the Hub`)
  const files = await treeOf(http, repoPath(address), sha)
  await writeAtomic(file, JSON.stringify(files), layout.tmp)
  return files
}

function isDataFile(path: string): boolean {
  return DATA_EXTENSIONS.some((ext) => path.toLowerCase().endsWith(ext)) && !path.split('/').some((part) => part.startsWith('.'))
}

/** The split a data file is in, as `datasets` infers it from its name. */
export function splitOf(path: string): string {
  const name = path.split('/').pop()!
  const pushed = /^(.+?)-\d{5}-of-\d{5}/.exec(name)
  if (pushed) return pushed[1]!
  const words = path.toLowerCase().split(/[-_. /\d]+/)
  if (words.some((w) => w === 'train' || w === 'training')) return 'train'
  if (words.some((w) => ['validation', 'valid', 'dev', 'val'].includes(w))) return 'validation'
  if (words.some((w) => ['test', 'testing', 'eval', 'evaluation'].includes(w))) return 'test'
  return 'train'
}

/** A data file an address names, and the split it is in. */
export interface ChosenFile {
  entry: TreeEntry
  split: string
}

/**
 * The data files an address names: a file, a config of the card's `configs` (its default one
 * when none is named) or a split of it, else a folder, or a config and split found from the
 * files' names as `datasets` infers them.
 */
export function chosenFiles(address: HubAddress, files: TreeEntry[], card?: Card): ChosenFile[] {
  const data = files.filter((f) => isDataFile(f.path)).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const path = address.path
  const inferred = (entries: TreeEntry[]): ChosenFile[] => entries.map((entry) => ({ entry, split: splitOf(entry.path) }))
  const exact = path === undefined ? undefined : files.find((f) => f.path === path)
  if (exact) return [{ entry: exact, split: splitOf(exact.path) }]
  const configs = card ? cardConfigs(card, address.text) : []
  const cut = path?.lastIndexOf('/') ?? -1
  const [config, split] = path === undefined ? [undefined, undefined] : cut < 0 ? [path, undefined] : [path.slice(0, cut), path.slice(cut + 1)]
  const named = path === undefined ? (configs.length ? defaultConfig(configs, address.text) : undefined) : configs.find((c) => c.name === path) ?? configs.find((c) => c.name === config)
  if (named) {
    const inConfig = configFiles(named, data, address.text)
    const wanted = named.name === path || path === undefined ? undefined : split
    const chosen = wanted === undefined ? inConfig : inConfig.filter((f) => f.split === wanted)
    if (!chosen.length) {
      const splits = [...new Set(inConfig.map((f) => f.split))]
      throw new FetchError('E_FETCH', `${address.text}: the card's config '${named.name}' has ${wanted === undefined ? 'no data file' : `no split '${wanted}' (its splits: ${splits.join(', ') || 'none'})`}`)
    }
    return chosen
  }
  if (path === undefined) {
    const under = data.filter((f) => f.path.startsWith('data/'))
    return inferred(under.length ? under : data)
  }
  const folder = data.filter((f) => f.path.startsWith(`${path}/`))
  if (folder.length) return inferred(folder)
  const inConfig = inferred(config === 'default' ? data.filter((f) => f.path.startsWith('data/') || !f.path.includes('/')) : data.filter((f) => f.path.startsWith(`${config}/`)))
  const chosen = split === undefined ? inConfig : inConfig.filter((f) => f.split === split)
  if (!chosen.length) {
    const known = configs.length ? `; the card's configs: ${configs.map((c) => c.name).join(', ')}` : ''
    throw new FetchError('E_FETCH', `${address.text}: no data file at that commit is in ${split === undefined ? `'${path}'` : `config '${config}', split '${split}'`} (data files: ${data.map((f) => f.path).slice(0, 10).join(', ') || 'none'}${known})`)
  }
  return chosen
}

/** A card's config's data files by split: those its patterns match, or those in its folder, split by their names. */
function configFiles(config: CardConfig, data: TreeEntry[], where: string): ChosenFile[] {
  if (!config.splits) {
    const dir = config.dataDir
    return data.filter((f) => dir === undefined || f.path.startsWith(`${dir}/`)).map((entry) => ({ entry, split: splitOf(dir === undefined ? entry.path : entry.path.slice(dir.length + 1)) }))
  }
  const out: ChosenFile[] = []
  for (const [split, patterns] of config.splits) {
    const matches = patterns.map((p) => patternMatcher(p, config.dataDir))
    const files = data.filter((f) => matches.some((m) => m(f.path)))
    if (!files.length) throw new FetchError('E_FETCH', `${where}: the card's config '${config.name}' names split '${split}' as ${patterns.join(', ')}, which no data file (${DATA_EXTENSIONS.join(', ')}) at that commit matches`)
    for (const entry of files) out.push({ entry, split })
  }
  return out
}

/** A file's bytes at `sha`, from the cache, else from the Hub, then cached. */
async function fetchFile(http: ServiceHttp, address: HubAddress, layout: RepoLayout, sha: string, entry: TreeEntry, ctx: ServiceContext): Promise<string> {
  const local = commitFile(layout, sha, entry.path)
  if (await exists(local)) return local
  if (ctx.offline) throw new FetchError('E_OFFLINE', `${address.text}: ${entry.path} at ${sha} is not in the cache, and --offline forbids asking the Hub`)
  await writeAtomic(local, await download(http, address, sha, entry), layout.tmp)
  return local
}

/** A file's bytes at `sha` from the Hub, following a redirect (whose other origin gets no token), checked against the size and hash the Hub lists. */
async function download(http: ServiceHttp, address: HubAddress, sha: string, entry: TreeEntry): Promise<Buffer> {
  const encodedPath = entry.path.split('/').map(encodeURIComponent).join('/')
  let url = http.url(`/datasets/${repoPath(address)}/resolve/${sha}/${encodedPath}`)
  const origin = new URL(http.options.base).origin
  for (let hops = 0; ; hops++) {
    const answer = await http.request({ path: url, accept: [301, 302, 303, 307, 308], bare: new URL(url).origin !== origin })
    if (answer.status >= 300) {
      const location = answer.headers.location
      if (!location || hops >= 5) throw new FetchError('E_FETCH', `${address.text}: ${entry.path}: too many redirects`)
      url = new URL(Array.isArray(location) ? location[0]! : location, url).href
      continue
    }
    const expected = entry.lfs?.size ?? entry.size
    if (expected !== undefined && answer.body.length !== expected) throw new FetchError('E_FETCH', `${address.text}: ${entry.path}: ${answer.body.length} bytes of the ${expected} the Hub lists`)
    if (entry.lfs && createHash('sha256').update(answer.body).digest('hex') !== entry.lfs.oid) throw new FetchError('E_FETCH', `${address.text}: ${entry.path}: its bytes do not hash to the sha256 the Hub lists`)
    return answer.body
  }
}

/** The data files an address names at the commit its revision resolves to, and how to fetch each into the cache. */
export interface HubListing {
  sha: string
  files: { path: string; split: string; size: number }[]
  /** The local copy of one of `files`, fetched on first use. */
  fetch: (path: string) => Promise<string>
}

export async function hubListing(address: HubAddress, ctx: ServiceContext): Promise<HubListing> {
  const http = hubHttp(ctx)
  const layout = layoutOf(http, address, ctx)
  const sha = await resolveRevision(http, address, layout, ctx)
  const tree = await filesAt(http, address, layout, sha, ctx)
  const readme = tree.find((f) => f.path === 'README.md')
  const card = readme ? parseCard(await readFile(await fetchFile(http, address, layout, sha, readme, ctx), 'utf8'), address.text) : undefined
  const chosen = chosenFiles(address, tree, card)
  if (!chosen.length) throw new FetchError('E_FETCH', `${address.text}: the dataset holds no data file (${DATA_EXTENSIONS.join(', ')}) at ${sha}`)
  return {
    sha,
    files: chosen.map(({ entry, split }) => ({ path: entry.path, split, size: entry.lfs?.size ?? entry.size ?? 0 })),
    fetch: (path) => fetchFile(http, address, layout, sha, chosen.find((c) => c.entry.path === path)!.entry, ctx),
  }
}

/** The local copies of the data files the address names, at the commit its revision resolves to. */
export async function hubFiles(address: HubAddress, ctx: ServiceContext): Promise<{ sha: string; files: { path: string; local: string; split: string }[] }> {
  const listing = await hubListing(address, ctx)
  const files = []
  for (const file of listing.files) files.push({ path: file.path, local: await listing.fetch(file.path), split: file.split })
  return { sha: listing.sha, files }
}

/** One file of a push: its path in the repository and its bytes. */
export interface HubUpload {
  path: string
  content: Buffer
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex')

/**
 * Writes `files` to the dataset in one commit, with the dataset card saying what `card` pushed,
 * creating the repository when missing. Data files already there that the push would not write
 * make it an existing target: refused, kept or deleted in the same commit, as `ifExists` says.
 * A commit that holds these very files already (a push run again) is not made twice.
 */
export async function pushHub(address: HubAddress, files: HubUpload[], card: PushedSplit, options: PushOptions): Promise<PushSummary> {
  if (COMMIT.test(address.revision)) throw new UsageError(`${address.text}: a push goes to a branch, not to commit ${address.revision}`)
  const http = hubHttp(options, true)
  const repo = repoPath(address)
  const revision = encodeURIComponent(address.revision)
  const summary: PushSummary = { target: address.text, created: false, sent: 0, updated: 0, unchanged: 0, removed: 0, requests: 0 }
  const created = await http.request({
    method: 'POST',
    path: '/api/repos/create',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: address.name, organization: address.owner, type: 'dataset', private: true }),
    accept: [409],
  })
  summary.created = created.status !== 409
  // What the branch holds now: its commit (the parent of this push's) and its files.
  const head = await headOf(http, repo, revision)
  const present = await treeOf(http, repo, head)
  const holds = (u: HubUpload): boolean => present.some((e) => e.path === u.path && sameContent(e, u))
  const ours = new Set(files.map((u) => u.path))
  const others = present.filter((e) => e.type === 'file' && isDataFile(e.path) && !ours.has(e.path))
  if (others.length && options.ifExists === 'fail') {
    throw new UsageError(`${address.text} already holds ${others.length} data file(s) this push would not write (${others.slice(0, 3).map((e) => e.path).join(', ')}); --if-exists append adds to them, --if-exists replace replaces them`)
  }
  // The card keeps what it said beside the configs, and on an append the other configs and splits.
  const readme = head ? present.find((e) => e.path === 'README.md') : undefined
  const existing = readme ? (await download(http, address, head!, readme)).toString('utf8') : undefined
  const kept = options.ifExists === 'append' ? others.filter((e) => e.path.startsWith(card.pattern.slice(0, card.pattern.indexOf('/') + 1))).map((e) => ({ path: e.path, split: splitOf(e.path) })) : []
  const uploads = [...files, { path: 'README.md', content: Buffer.from(pushedCard(existing, card, options.ifExists === 'append', kept, address.text)) }]
  const deleted = options.ifExists === 'replace' ? others : []
  const changed = uploads.filter((u) => !holds(u))
  if (!changed.length && !deleted.length) {
    summary.unchanged = uploads.length
    summary.requests = http.requests
    return summary
  }
  // The Hub says which files go through LFS (Parquet, large or binary ones); the others travel in the commit itself.
  const modes = new Map<string, string>()
  for (let i = 0; i < changed.length; i += 100) {
    const batch = changed.slice(i, i + 100)
    const answer = await http.json<{ files?: { path: string; uploadMode?: string; shouldIgnore?: boolean }[] }>({
      method: 'POST',
      path: `/api/datasets/${repo}/preupload/${revision}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ files: batch.map((u) => ({ path: u.path, size: u.content.length, sample: u.content.subarray(0, 512).toString('base64') })) }),
    })
    for (const f of answer.files ?? []) modes.set(f.path, f.uploadMode ?? 'regular')
  }
  const lfs = changed.filter((u) => modes.get(u.path) === 'lfs')
  if (lfs.length) await uploadLfs(http, address, lfs)
  const lines = [
    { key: 'header', value: { summary: `Upload ${uploads.length} file(s) with evalferry`, description: '', ...(head ? { parentCommit: head } : {}) } },
    ...changed.map((u) =>
      modes.get(u.path) === 'lfs'
        ? { key: 'lfsFile', value: { path: u.path, algo: 'sha256', oid: sha256(u.content), size: u.content.length } }
        : { key: 'file', value: { path: u.path, encoding: 'base64', content: u.content.toString('base64') } },
    ),
    ...deleted.map((e) => ({ key: 'deletedFile', value: { path: e.path } })),
  ]
  const body = lines.map((l) => JSON.stringify(l)).join('\n') + '\n'
  // With its parent named, a commit lands whole or not at all, and once: sent again, one that landed is refused (412).
  for (let attempt = 0; ; attempt++) {
    let landed = false
    try {
      const answer = await http.request({ method: 'POST', path: `/api/datasets/${repo}/commit/${revision}`, headers: { 'content-type': 'application/x-ndjson' }, body, once: true, accept: [409, 412] })
      landed = answer.status < 300
    } catch (error) {
      if (!(error instanceof UncertainError) || attempt >= 5) throw error
    }
    if (landed) break
    const now = await headOf(http, repo, revision)
    if (now !== head) {
      const landed = await treeOf(http, repo, now)
      if (uploads.every((u) => landed.some((e) => e.path === u.path && sameContent(e, u))) && deleted.every((d) => !landed.some((e) => e.path === d.path))) break
      throw new FetchError('E_FETCH', `${address.text}: the branch '${address.revision}' moved while this push was being made; run it again`)
    }
    if (attempt >= 5) throw new FetchError('E_FETCH', `${address.text}: the commit was refused ${attempt + 1} times`)
  }
  summary.sent = changed.length
  summary.unchanged = uploads.length - changed.length
  summary.removed = deleted.length
  summary.requests = http.requests
  return summary
}

/** The commit a branch is at, or undefined when there is none. */
async function headOf(http: ServiceHttp, repo: string, revision: string): Promise<string | undefined> {
  const info = await http.request({ path: `/api/datasets/${repo}/revision/${revision}`, accept: [404] })
  return info.status === 404 ? undefined : parseJson<{ sha?: string }>(info, 'Hugging Face Hub revision').sha
}

/** The files at a commit, page by page. */
async function treeOf(http: ServiceHttp, repo: string, sha: string | undefined): Promise<TreeEntry[]> {
  const entries: TreeEntry[] = []
  for (let next: string | undefined = sha && `/api/datasets/${repo}/tree/${sha}?recursive=true&expand=false`; next; ) {
    const answer = await http.request({ path: next })
    entries.push(...parseJson<TreeEntry[]>(answer, 'Hugging Face Hub tree'))
    const link = answer.headers.link
    next = /<([^>]+)>;\s*rel="next"/.exec(Array.isArray(link) ? link.join(',') : (link ?? ''))?.[1]
    if (next && new URL(next, http.options.base).origin !== new URL(http.options.base).origin) throw new FetchError('E_FETCH', `the Hub's next page lies on another host (${new URL(next, http.options.base).origin})`)
  }
  return entries.filter((e) => e.type === 'file')
}

/** Whether a file the Hub lists has these bytes (its LFS sha256, or its git blob id). */
function sameContent(entry: TreeEntry, upload: HubUpload): boolean {
  return entry.lfs ? entry.lfs.oid === sha256(upload.content) : entry.oid === gitBlobId(upload.content)
}

/** What the LFS batch API answers for each object: where to send it (`basic`: one PUT; `multipart`: a PUT per part, then the completion), or nothing when it is stored already. */
interface LfsObject {
  oid: string
  actions?: { upload?: { href: string; header?: Record<string, string> }; verify?: { href: string } }
  error?: { message?: string }
}

const LFS_JSON = { accept: 'application/vnd.git-lfs+json', 'content-type': 'application/vnd.git-lfs+json' }

/** LFS files through the batch API: each object the Hub lacks is sent where and as it says (`basic` or `multipart` transfer). */
async function uploadLfs(http: ServiceHttp, address: HubAddress, files: HubUpload[]): Promise<void> {
  const objects = files.map((u) => ({ oid: sha256(u.content), size: u.content.length }))
  const answer = await http.json<{ transfer?: string; objects?: LfsObject[] }>({
    method: 'POST',
    path: `/datasets/${repoPath(address)}.git/info/lfs/objects/batch`,
    headers: LFS_JSON,
    body: JSON.stringify({ operation: 'upload', transfers: ['basic', 'multipart'], hash_algo: 'sha256', ref: { name: address.revision }, objects }),
  })
  const transfer = answer.transfer ?? 'basic'
  if (transfer !== 'basic' && transfer !== 'multipart') throw new FetchError('E_FETCH', `${address.text}: the Hub answered the LFS upload with a '${transfer}' transfer, which was not asked for`)
  const origin = new URL(http.options.base).origin
  const bare = (href: string): boolean => new URL(href, http.options.base).origin !== origin
  for (const object of answer.objects ?? []) {
    if (object.error) throw new FetchError('E_FETCH', `${address.text}: the Hub refused an LFS upload: ${object.error.message ?? 'no reason given'}`)
    const upload = object.actions?.upload
    if (!upload) continue
    const file = files.find((u) => sha256(u.content) === object.oid)!
    if (transfer === 'basic') await http.request({ method: 'PUT', path: upload.href, headers: upload.header ?? {}, body: file.content, bare: bare(upload.href) })
    else await uploadParts(http, address, object.oid, upload, file.content, bare)
    const verify = object.actions?.verify
    if (verify) await http.request({ method: 'POST', path: verify.href, headers: LFS_JSON, body: JSON.stringify({ oid: object.oid, size: file.content.length }) })
  }
}

/** A multipart transfer: each part of `chunk_size` bytes PUT to its URL (`header["1"]`, `"2"`, …), then the parts' ETags POSTed, in order, to `href`. */
async function uploadParts(http: ServiceHttp, address: HubAddress, oid: string, upload: { href: string; header?: Record<string, string> }, content: Buffer, bare: (href: string) => boolean): Promise<void> {
  const header = upload.header ?? {}
  const chunk = Number(header.chunk_size)
  const urls = Object.keys(header).filter((k) => /^\d+$/.test(k)).sort((a, b) => Number(a) - Number(b)).map((k) => header[k]!)
  if (!Number.isSafeInteger(chunk) || chunk < 1 || urls.length !== Math.ceil(content.length / chunk)) {
    throw new FetchError('E_FETCH', `${address.text}: the Hub's multipart upload names ${urls.length} part(s) of ${header.chunk_size ?? 'no'} bytes for ${content.length} bytes`)
  }
  const parts: { partNumber: number; etag: string }[] = []
  for (const [i, url] of urls.entries()) {
    const answer = await http.request({ method: 'PUT', path: url, body: content.subarray(i * chunk, (i + 1) * chunk), bare: bare(url) })
    const etag = answer.headers.etag
    if (typeof etag !== 'string' || etag === '') throw new FetchError('E_FETCH', `${address.text}: part ${i + 1} of an LFS upload was stored without an ETag`)
    parts.push({ partNumber: i + 1, etag })
  }
  await http.request({ method: 'POST', path: upload.href, headers: LFS_JSON, body: JSON.stringify({ oid, parts }), bare: bare(upload.href) })
}
