/** `evalferry resolve <url...>`: the local path of each referenced file, fetched when not cached. */

import { UsageError } from '../errors.ts'
import { onInterrupt } from '../io.ts'
import { type PrefetchResult, hostTable, parseBlobUrl, prefetchUrls, releaseHeldLocks } from '../resolver/index.ts'
import { notAFileHint } from '../resolver/prefetch.ts'
import { redactUrl } from '../resolver/url.ts'
import type { Command } from './command.ts'
import { FETCH_OPTIONS, jsonResult, partialFailure, resolverOptions } from './prefetch.ts'

/** True unless `url` is plainly not a blob URL of a known host (an unsafe one is still refused later, as a fetch error). */
function isBlobUrl(url: string, hosts: ReturnType<typeof hostTable>): boolean {
  try {
    return parseBlobUrl(url, hosts) !== undefined
  } catch {
    return true
  }
}

const command: Command = {
  name: 'resolve',
  summary: 'print the local path of each referenced file',
  usage: `Usage: evalferry resolve <url...> [--offline] [--refresh] [--concurrency n] [--timeout s] [--json]

Prints, one a line, the cached copy of each blob URL's file, fetching what is not cached.
With --json, prints { entries: [{ url, host, repository, ref, commit, path, local_path, bytes, sha256 }],
files, fetched, cached }, plus errors: [{ url, message }] when some fail. A URL that fails gets an
empty line, and is named on stderr.`,
  examples: [
    { does: 'the local path of one file, fetched if not cached', line: 'evalferry resolve https://github.com/evalferry-examples/handbook/blob/main/docs/onboarding.md' },
    { does: 'the same, with commit, size and sha256, as JSON', line: 'evalferry resolve https://github.com/evalferry-examples/handbook/blob/main/docs/onboarding.md --json' },
  ],
  options: FETCH_OPTIONS,
  async run(ctx) {
    if (ctx.positionals.length === 0) throw new UsageError(`name at least one URL\n\n${command.usage}`)
    const options = resolverOptions(ctx.values, ctx)
    const hosts = hostTable(options.hosts ?? [], ctx.env)
    const bad = ctx.positionals.filter((u) => !isBlobUrl(u, hosts))
    if (bad.length > 0) {
      throw new UsageError(bad.map((u) => `${redactUrl(u)}: not a blob URL naming a file on a known host (${notAFileHint(u, hosts)})`).join('\n'))
    }
    // One line per URL given, in its order, a URL given twice twice, one that failed empty: a script
    // can pair them with its arguments.
    const print = (result: PrefetchResult): void => {
      const pathOf = new Map(result.entries.map((e) => [e.url, e.local_path]))
      ctx.stdout.write(ctx.positionals.map((url) => `${pathOf.get(url) ?? ''}\n`).join(''))
    }
    let result: PrefetchResult
    // Interrupted, the git running stops with the process, and the cache's locks are released.
    const release = onInterrupt(releaseHeldLocks)
    try {
      result = await prefetchUrls(ctx.positionals, options)
    } catch (error) {
      return partialFailure(error, ctx, print)
    } finally {
      release()
    }
    if (ctx.values.json) ctx.stdout.write(jsonResult(result))
    else print(result)
    return 0
  },
}

export default command
