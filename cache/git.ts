/**
 * git through simple-git: ref listings, and a bare partial mirror per repository from which only
 * the files asked for are read. Two network steps for any number of commits: their trees (`--depth=1 --filter=blob:none`)
 * and then every blob needed, in one batch, by object id. No lazy fetch ever happens, because the
 * remote's URL is only in the environment of the two commands that should reach it.
 *
 * Safety: no prompt (GIT_TERMINAL_PROMPT=0, empty askpass), no hooks (core.hooksPath=/dev/null),
 * a low-speed limit and a silence watchdog on every network step, credentials only as an
 * `http.<url>.extraHeader` in GIT_CONFIG_* environment variables: never in argv, URLs or logs.
 */

import { spawn } from 'node:child_process'
import { appendFile, readdir, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { type SimpleGit, simpleGit } from 'simple-git'
import { FetchError } from '../src/errors.ts'
import { tempPath } from './fs.ts'
import type { RepoLayout } from './layout.ts'

export interface GitRemote {
  /** The clone URL (no credentials in it). */
  url: string
  /** HTTP headers for this remote only (`Authorization: …`); handed to git as `http.<url>.extraHeader`. */
  headers?: string[]
  /** Where errors say the request went, e.g. `github.com/acme/widgets`. */
  label: string
}

export interface GitRunOptions {
  /** Kill a network step after this long without progress (milliseconds). */
  timeoutMs: number
  /** The environment to start from (process.env); variables that change what git runs are dropped. */
  env?: NodeJS.ProcessEnv
  /** Strings that must never show in an error message. */
  secrets?: string[]
  /** The variable the token sent came from, named when the server refuses it. */
  credentialSource?: string
  /** Aborted, it stops the git running (an interrupted run stops its git, which would go on writing the mirror). */
  signal?: AbortSignal
}

// Variables that would make git run a program, read another config or talk elsewhere; never inherited.
const DROPPED_ENV = /^(editor|pager|prefix|visual|ssh_askpass|git_(askpass|editor|pager|sequence_editor|ssh|ssh_command|proxy_command|external_diff|template_dir|exec_path|config|config_global|config_system|config_count|config_key_\d+|config_value_\d+|config_parameters|dir|work_tree|index_file|object_directory|alternate_object_directories|namespace|common_dir|ceiling_directories|replace_ref_base|no_replace_objects))$/i

/** The environment git runs in: inherited minus DROPPED_ENV, plus our settings as GIT_CONFIG_* entries. */
export function gitEnvironment(base: NodeJS.ProcessEnv, config: [string, string][]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(base)) if (!DROPPED_ENV.test(key) && value !== undefined) env[key] = value
  const settings: [string, string][] = [
    ['core.hooksPath', '/dev/null'],
    ['core.askPass', ''],
    ['credential.interactive', 'false'],
    ['protocol.version', '2'],
    ['gc.auto', '0'],
    ['maintenance.auto', 'false'],
    ['fetch.writeCommitGraph', 'false'],
    ['fetch.negotiationAlgorithm', 'noop'],
    ...config,
  ]
  env.GIT_CONFIG_COUNT = String(settings.length)
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key
    env[`GIT_CONFIG_VALUE_${i}`] = value
  })
  env.GIT_TERMINAL_PROMPT = '0'
  env.GIT_ASKPASS = ''
  env.SSH_ASKPASS = ''
  env.GCM_INTERACTIVE = 'never'
  env.GIT_LITERAL_PATHSPECS = '1'
  env.GIT_ALLOW_PROTOCOL = 'https:http'
  env.LC_ALL = 'C'
  return env
}

function networkConfig(remote: GitRemote, timeoutMs: number): [string, string][] {
  const seconds = String(Math.max(1, Math.ceil(timeoutMs / 1000)))
  const config: [string, string][] = [
    ['remote.origin.url', remote.url],
    ['http.lowSpeedLimit', '1'],
    ['http.lowSpeedTime', seconds],
  ]
  for (const header of remote.headers ?? []) config.push([`http.${remote.url}.extraHeader`, header])
  return config
}

function git(baseDir: string, options: GitRunOptions, config: [string, string][]): SimpleGit {
  return simpleGit({
    baseDir,
    maxConcurrentProcesses: 2,
    trimmed: false,
    timeout: { block: options.timeoutMs },
    ...(options.signal ? { abort: options.signal } : {}),
    // Our own constant settings above need these: the environment config itself, the empty askpass
    // that stops prompts, and hooksPath=/dev/null that stops hooks. Nothing from a dataset reaches them.
    unsafe: { allowUnsafeConfigEnvCount: true, allowUnsafeAskPass: true, allowUnsafeHooksPath: true },
  }).env(gitEnvironment(options.env ?? process.env, config))
}

function redact(text: string, secrets: string[] = []): string {
  let out = text
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('***')
  return out
}

/** Turn git's failure into a FetchError whose code says what to do. */
function gitFailure(error: unknown, remote: GitRemote, step: string, options: GitRunOptions): FetchError {
  // Control bytes a hostile server put in git's messages must not reach the user's terminal.
  const text = redact(error instanceof Error ? error.message : String(error), options.secrets).replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '?')
  const lastLines = text.trim().split('\n').filter((l) => l.trim()).slice(-3).join(' | ')
  if (/block timeout|timed out|too slow|Operation too slow/i.test(text)) {
    return new FetchError('E_FETCH', `${remote.label}: ${step} timed out (no progress for ${Math.round(options.timeoutMs / 1000)} s)`)
  }
  if (/could not read (Username|Password)|terminal prompts disabled|Authentication failed|HTTP Basic: Access denied|\b401\b|\b403\b/i.test(text)) {
    if (options.credentialSource) {
      return new FetchError('E_AUTH', `${remote.label}: the server refused the token from ${options.credentialSource} (expired, revoked, or without access to this repository)`)
    }
    return new FetchError(
      'E_AUTH',
      `${remote.label}: the server asks for credentials; set GH_TOKEN/GITHUB_TOKEN (github.com), GH_ENTERPRISE_TOKEN, GITLAB_TOKEN or BITBUCKET_TOKEN (or BITBUCKET_EMAIL + BITBUCKET_API_TOKEN)`,
    )
  }
  if (/not our ref|couldn't find remote ref|no such remote ref|did not send all necessary objects|unadvertised object/i.test(text)) {
    return new FetchError('E_REF', `${remote.label}: ${step}: the server does not have it (${lastLines})`)
  }
  if (/repository .* not found|\b404\b|does not appear to be a git repository/i.test(text)) {
    return new FetchError('E_FETCH', `${remote.label}: repository not found at ${remote.url}`)
  }
  return new FetchError('E_FETCH', `${remote.label}: ${step} failed: ${lastLines}`)
}

/** `git ls-remote`: the remote's refs, as git prints them. */
export async function lsRemote(cwd: string, remote: GitRemote, options: GitRunOptions): Promise<string> {
  try {
    return await git(cwd, options, networkConfig(remote, options.timeoutMs)).raw(['ls-remote', '--end-of-options', 'origin'])
  } catch (error) {
    throw gitFailure(error, remote, 'listing refs', options)
  }
}

const MIRROR_CONFIG = `[core]
\trepositoryformatversion = 1
[extensions]
\tpartialClone = origin
[remote "origin"]
\tpromisor = true
\tpartialclonefilter = blob:none
[evalferry]
\tmirror = 1
`

/** Make sure the bare partial mirror exists and holds no leftovers of a killed git (call under the lock). */
export async function prepareMirror(layout: RepoLayout, options: GitRunOptions): Promise<void> {
  const ok = await stat(join(layout.git, 'config')).then(() => true, () => false)
  if (ok) {
    await sweepGitLeftovers(layout.git)
    return
  }
  await rm(layout.git, { recursive: true, force: true })
  const temp = tempPath(layout.tmp)
  await git(layout.dir, options, []).raw(['init', '--bare', '-q', temp])
  await appendFile(join(temp, 'config'), MIRROR_CONFIG)
  await rm(join(temp, 'hooks'), { recursive: true, force: true })
  await rename(temp, layout.git)
}

async function sweepGitLeftovers(gitDir: string): Promise<void> {
  const removeMatching = async (dir: string, test: (name: string) => boolean): Promise<void> => {
    const names = await readdir(dir).catch(() => [] as string[])
    await Promise.all(names.filter(test).map((n) => rm(join(dir, n), { recursive: true, force: true })))
  }
  await removeMatching(gitDir, (n) => n.endsWith('.lock'))
  await removeMatching(join(gitDir, 'objects', 'pack'), (n) => n.startsWith('tmp_') || n.endsWith('.lock'))
  await removeMatching(join(gitDir, 'objects'), (n) => n.startsWith('tmp_') || n.startsWith('incoming-'))
}

/** Fetch these commits and their trees, no blobs, in one request. */
export async function fetchCommits(layout: RepoLayout, remote: GitRemote, commits: string[], options: GitRunOptions): Promise<void> {
  try {
    await git(layout.git, options, networkConfig(remote, options.timeoutMs)).raw([
      'fetch', '--progress', '--no-tags', '--no-write-fetch-head', '--recurse-submodules=no', '--depth=1', '--filter=blob:none', '--end-of-options', 'origin', ...commits,
    ])
  } catch (error) {
    throw gitFailure(error, remote, commits.length === 1 ? `fetching commit ${commits[0]}` : `fetching ${commits.length} commits`, options)
  }
}

/** Fetch these blobs in one request. */
export async function fetchBlobs(layout: RepoLayout, remote: GitRemote, oids: string[], options: GitRunOptions): Promise<void> {
  if (oids.length === 0) return
  try {
    await git(layout.git, options, networkConfig(remote, options.timeoutMs)).raw([
      'fetch', '--progress', '--no-tags', '--no-write-fetch-head', '--recurse-submodules=no', '--filter=blob:none', '--end-of-options', 'origin', ...oids,
    ])
  } catch (error) {
    throw gitFailure(error, remote, `fetching ${oids.length} file(s)`, options)
  }
}

/** The type of an object the mirror holds (`commit`, `tree`, `blob`, `tag`), or undefined when it holds none of that id. */
export async function objectType(layout: RepoLayout, oid: string, options: GitRunOptions): Promise<string | undefined> {
  try {
    return (await git(layout.git, options, []).raw(['cat-file', '-t', oid])).trim()
  } catch {
    return undefined
  }
}

/** True when the mirror holds the commit and its trees (true of a tree too: see objectType). */
export async function hasCommit(layout: RepoLayout, commit: string, options: GitRunOptions): Promise<boolean> {
  try {
    await git(layout.git, options, []).raw(['cat-file', '-e', `${commit}^{tree}`])
    return true
  } catch {
    return false
  }
}

export interface TreeEntry {
  mode: string
  type: string
  oid: string
}

/** The tree entries of these paths at the commit (local; needs only trees). */
export async function listTree(layout: RepoLayout, commit: string, paths: string[], options: GitRunOptions): Promise<Map<string, TreeEntry>> {
  const entries = new Map<string, TreeEntry>()
  for (let i = 0; i < paths.length; i += 500) {
    const out = await git(layout.git, options, []).raw(['ls-tree', '-z', '--full-tree', commit, '--', ...paths.slice(i, i + 500)])
    for (const record of out.split('\0')) {
      const m = /^(\d{6}) (\w+) ([0-9a-f]{40,64})\t(.*)$/s.exec(record)
      if (m) entries.set(m[4]!, { mode: m[1]!, type: m[2]!, oid: m[3]! })
    }
  }
  return entries
}

export type BlobResult = { oid: string; content: Buffer } | { oid: string; missing: true } | { oid: string; tooLarge: number }

/**
 * Read blobs from the mirror with one `git cat-file --batch` (spawned directly: simple-git cannot
 * write to a command's stdin). A blob over `maxBytes` is reported with its size as soon as its
 * header gives it, and its bytes are skipped as they pass, never kept. Each blob is copied once,
 * into a buffer of its size, so reading takes time linear in the output.
 */
export function readBlobs(layout: RepoLayout, oids: string[], maxBytes: number, options: GitRunOptions): Promise<BlobResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd: layout.git, env: gitEnvironment(options.env ?? process.env, []), stdio: ['pipe', 'pipe', 'pipe'], ...(options.signal ? { signal: options.signal } : {}) })
    const results: BlobResult[] = []
    // The pieces of a header line whose end has not arrived yet.
    let header: Buffer[] = []
    // The blob being read; `content` is undefined when it is over the limit. `read` counts its bytes and the LF after them.
    let blob: { oid: string; size: number; content: Buffer | undefined; read: number } | undefined
    let malformed: string | undefined
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    child.stdout.on('data', (chunk: Buffer) => {
      let at = 0
      while (at < chunk.length && malformed === undefined) {
        if (!blob) {
          const nl = chunk.indexOf(10, at)
          header.push(chunk.subarray(at, nl < 0 ? chunk.length : nl))
          if (nl < 0) return
          at = nl + 1
          const line = Buffer.concat(header).toString()
          header = []
          const [oid = '', type, sizeText = ''] = line.split(' ')
          if (type === 'missing') {
            results.push({ oid, missing: true })
            continue
          }
          if (!/^\d+$/.test(sizeText)) {
            malformed = line.slice(0, 200)
            child.kill()
            return
          }
          const size = Number(sizeText)
          if (size > maxBytes) results.push({ oid, tooLarge: size })
          blob = { oid, size, content: size > maxBytes ? undefined : Buffer.allocUnsafe(size), read: 0 }
        }
        const take = Math.min(blob.size + 1 - blob.read, chunk.length - at)
        if (blob.content) chunk.copy(blob.content, blob.read, at, at + Math.min(take, blob.size - blob.read))
        blob.read += take
        at += take
        if (blob.read === blob.size + 1) {
          if (blob.content) results.push({ oid: blob.oid, content: blob.content })
          blob = undefined
        }
      }
    })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code === 0 && results.length === oids.length && !blob) resolve(results)
      else {
        const why = malformed !== undefined ? `unexpected output '${malformed}'` : stderr.trim() || `exit ${code}`
        reject(new FetchError('E_CACHE', `reading files from the mirror ${layout.git} failed: ${why}`))
      }
    })
    child.stdin.end(oids.map((o) => `${o}\n`).join(''))
  })
}
