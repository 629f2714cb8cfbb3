/**
 * Where the cache lives and how it is laid out.
 *
 * ```
 * <root>/
 *   CACHEDIR.TAG                 marks the directory as a cache; a cache starts only in a new or empty
 *                                directory, and `cache clear` refuses a root without it
 *   <host>/<owner…>/<repo>/      one directory per repository (a port in the host is written `_<port>`)
 *     repo.json                  { host, repository }: what `cache list` and `cache prune` look for
 *     refs.json                  the last ref listing, { listed_at, refs, earlier }, replaced by rename;
 *                                `earlier`: per branch, the commits it had in earlier listings
 *     lock                       exclusive lock (O_EXCL) holding { pid, hostname, acquired_at }; its mtime is the heartbeat
 *     lock.steal/                a short-lived mutex taken (mkdir) to remove a lock whose holder died
 *     git/                       bare partial mirror (shallow, blob:none); built in tmp/ and renamed into place
 *     commits/<sha>/<path>       the files fetched at that commit; each written in tmp/ then renamed, never changed
 *     sums/<sha>.json            { <path>: sha256 } of those files, recorded before each file is renamed into place
 *     tmp/<pid>-<random>         writes in flight; those of dead processes are removed by the next lock holder
 * ```
 *
 * Files under `commits/` are complete whenever they exist, so readers take no lock; two processes
 * fetching different files of one commit each add theirs, and the same file written twice is the
 * same bytes renamed over itself. The mtime of `commits/<sha>` records its last use, for `prune`.
 */

import envPaths from 'env-paths'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { FetchError, quoted, UsageError } from '../src/errors.ts'

export interface CacheLocationOptions {
  /** The cache root; wins over `EVALFERRY_CACHE_DIR` and the platform's cache directory. */
  cacheDir?: string
}

/** `--cache-dir`, else `EVALFERRY_CACHE_DIR`, else env-paths' cache directory for evalferry. */
export function cacheRoot(options: CacheLocationOptions = {}, env: NodeJS.ProcessEnv = process.env): string {
  // An empty --cache-dir is most likely an unset shell variable: refused rather than taken as the default.
  if (options.cacheDir === '') throw new UsageError('--cache-dir is empty; name a directory (or leave the option out for the default cache)')
  const chosen = options.cacheDir ?? (env.EVALFERRY_CACHE_DIR || undefined)
  if (chosen) return isAbsolute(chosen) ? chosen : resolve(chosen)
  return envPaths('evalferry', { suffix: '' }).cache
}

/** The directories and files of one repository in the cache. */
export interface RepoLayout {
  root: string
  host: string
  repository: string
  dir: string
  info: string
  refs: string
  lock: string
  git: string
  commits: string
  sums: string
  tmp: string
}

/** `path` itself, after checking that it lies strictly below `base`: the last guard against writing outside the cache. */
function below(base: string, path: string, what: string): string {
  const rel = relative(base, path)
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) throw new FetchError('E_UNSAFE', `${what} would lie outside ${base}; refused`)
  return path
}

export function repoLayout(root: string, host: string, repository: string): RepoLayout {
  const dir = below(root, join(root, host.replace(/:/g, '_'), ...repository.split('/')), `the cache directory of ${host}/${repository}`)
  return {
    root,
    host,
    repository,
    dir,
    info: join(dir, 'repo.json'),
    refs: join(dir, 'refs.json'),
    lock: join(dir, 'lock'),
    git: join(dir, 'git'),
    commits: join(dir, 'commits'),
    sums: join(dir, 'sums'),
    tmp: join(dir, 'tmp'),
  }
}

/** The cached copy of `path` at `commit`. `path` has been checked: no `..`, no empty segment. */
export function commitFile(layout: RepoLayout, commit: string, path: string): string {
  return below(join(layout.commits, commit), join(layout.commits, commit, ...path.split('/')), `the cached file ${quoted(path)}`)
}

export const CACHEDIR_TAG = 'Signature: 8a477f597d28d172789f06886806bc55\n# This directory is a cache of git files made by evalferry.\n'
