/** `evalferry cache dir|list|prune|clear`: show or clean the repository cache. */

import { UsageError } from '../errors.ts'
import { onInterrupt } from '../io.ts'
import { cacheRoot, clearCache, listCache, parseDuration, pruneCache, releaseHeldLocks, rootKind } from '../resolver/index.ts'
import { type Command, stringOption } from './command.ts'

function human(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let n = bytes
  let u = 0
  while (n >= 1024 && u < units.length - 1) {
    n /= 1024
    u++
  }
  return `${u === 0 ? n : n.toFixed(1)} ${units[u]}`
}

/** Runs `work`; interrupted, the repository lock it holds is released (what it removes goes whole, see `cache/manage.ts`). */
async function releasingLocks<T>(work: () => Promise<T>): Promise<T> {
  const release = onInterrupt(releaseHeldLocks)
  try {
    return await work()
  } finally {
    release()
  }
}

const command: Command = {
  name: 'cache',
  summary: 'show or clean the repository cache: dir | list | prune | clear',
  usage: `Usage: evalferry cache dir|list|prune|clear [--older-than <duration>] [--json]

  dir                        print the cache directory
  list                       repositories, their commits, files and sizes
  prune --older-than <dur>   remove commits not used for that long (default 30d; e.g. 12h, 2w),
                             and what runs that were killed left behind
  clear                      remove every cached repository (files the cache did not make stay)`,
  examples: [
    { does: 'the repositories, commits and files the cache holds', line: 'evalferry cache list' },
    { does: 'remove the commits no run has used for two weeks', line: 'evalferry cache prune --older-than 2w' },
  ],
  options: { 'older-than': { type: 'string' } },
  async run(ctx) {
    const [action, ...rest] = ctx.positionals
    if (rest.length > 0) throw new UsageError(`cache ${action} takes no arguments besides options\n\n${command.usage}`)
    const dir = stringOption(ctx.values, 'cache-dir')
    const root = cacheRoot(dir !== undefined ? { cacheDir: dir } : {}, ctx.env)
    const json = ctx.values.json === true
    const olderThan = stringOption(ctx.values, 'older-than')
    if (olderThan !== undefined && action !== 'prune') throw new UsageError('--older-than goes with cache prune')
    switch (action) {
      case 'dir':
        ctx.stdout.write(json ? `${JSON.stringify({ dir: root })}\n` : `${root}\n`)
        return 0
      case 'list': {
        const repositories = await listCache(root)
        if (json) {
          ctx.stdout.write(`${JSON.stringify({ dir: root, repositories }, null, 2)}\n`)
          return 0
        }
        const lines: string[] = []
        for (const r of repositories) {
          const bytes = r.commits.reduce((sum, c) => sum + c.bytes, 0)
          lines.push(`${r.host}/${r.repository}  ${r.commits.length} commit(s), ${human(bytes)} of files, ${human(r.mirror_bytes)} mirror`)
          for (const c of r.commits) lines.push(`  ${c.commit}  ${c.files} file(s)  ${human(c.bytes)}  last used ${c.last_used}`)
        }
        ctx.stdout.write(lines.length ? `${lines.join('\n')}\n` : '')
        if (!ctx.values.quiet && lines.length === 0) ctx.stderr.write(`${await noRepositories(root)}\n`)
        return 0
      }
      case 'prune': {
        const result = await releasingLocks(() => pruneCache(root, parseDuration(olderThan ?? '30d')))
        if (json) ctx.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
        else if (!ctx.values.quiet) {
          const mirrors = result.mirrors.length ? ` and ${result.mirrors.length} mirror(s)` : ''
          ctx.stderr.write(`removed ${result.removed.length} commit(s)${mirrors}, ${human(result.bytes)}\n`)
        }
        return 0
      }
      case 'clear':
        await releasingLocks(() => clearCache(root, ctx.values.quiet || json ? {} : { onWait: (name) => ctx.stderr.write(`waiting for another process working on ${name}\n`) }))
        if (json) ctx.stdout.write(`${JSON.stringify({ cleared: root })}\n`)
        else if (!ctx.values.quiet) ctx.stderr.write(`cleared ${root}\n`)
        return 0
      default:
        throw new UsageError(`${action === undefined ? 'name an action' : `unknown action "${action}"`}: dir, list, prune or clear\n\n${command.usage}`)
    }
  },
}

/** Why a listing shows nothing: no cache there yet, a directory that is no cache, or an empty cache. */
async function noRepositories(root: string): Promise<string> {
  const kind = await rootKind(root)
  if (kind === 'absent') return `no cache at ${root} yet`
  if (kind === 'foreign') return `${root} is not an evalferry cache (it has no CACHEDIR.TAG): nothing listed`
  return `the cache at ${root} is empty`
}

export default command
