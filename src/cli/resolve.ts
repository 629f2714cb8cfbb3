/** `evalferry resolve <url...>`: the local path of each referenced file, fetched when not cached. */

import { UsageError } from '../errors.ts'
import { prefetchUrls } from '../resolver/index.ts'
import type { Command } from './command.ts'
import { FETCH_OPTIONS, resolverOptions } from './prefetch.ts'

const command: Command = {
  name: 'resolve',
  summary: 'print the local path of each referenced file',
  usage: `Usage: evalferry resolve <url...> [--offline] [--refresh] [--json]

Prints, one a line, the cached copy of each blob URL's file, fetching what is not cached.
With --json, prints { entries: [{ url, host, repository, ref, commit, path, local_path, bytes, sha256 }] }.`,
  options: FETCH_OPTIONS,
  async run(ctx) {
    if (ctx.positionals.length === 0) throw new UsageError(`name at least one URL\n\n${command.usage}`)
    const result = await prefetchUrls(ctx.positionals, resolverOptions(ctx.values, ctx))
    if (ctx.values.json) ctx.stdout.write(`${JSON.stringify({ entries: result.entries }, null, 2)}\n`)
    else ctx.stdout.write(result.entries.map((e) => `${e.local_path}\n`).join(''))
    return 0
  },
}

export default command
