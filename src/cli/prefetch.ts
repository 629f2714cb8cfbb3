/** `evalferry prefetch <dataset...>`: fetch every referenced git file into the cache. */

import { basename, join } from 'node:path'
import { printable, UsageError } from '../errors.ts'
import { containerOf } from '../codecs/index.ts'
import { STDIO, assertWritable, isDirectory, isStopping, onInterrupt, removeOwnTemps } from '../io.ts'
import { filesRead } from '../read.ts'
import { expandInputs, namesBatch } from './inputs.ts'
import { checkSetting, PrefetchError, type PrefetchFailure, type PrefetchOptions, type PrefetchResult, prefetch, prefetchSummary, releaseHeldLocks, rewriteDataset, writeManifest } from '../resolver/index.ts'
import { type Command, type CommandContext, type OptionValues, listOption, stringOption } from './command.ts'
import { formatOption, timeoutOption } from './options.ts'

/** Resolver options from the shared and the fetch options of a command line. */
export function resolverOptions(values: OptionValues, ctx: CommandContext): PrefetchOptions {
  const options: PrefetchOptions = { env: ctx.env, hosts: listOption(values, 'host') }
  const cacheDir = stringOption(values, 'cache-dir')
  if (cacheDir !== undefined) options.cacheDir = cacheDir
  if (values.offline === true) options.offline = true
  if (values.refresh === true) options.refresh = true
  if (options.offline && options.refresh) throw new UsageError('--refresh lists refs again, which --offline forbids: give one of them')
  const concurrency = stringOption(values, 'concurrency')
  if (concurrency !== undefined) {
    options.concurrency = Number(concurrency)
    checkSetting('concurrency', options.concurrency, '--concurrency', JSON.stringify(concurrency))
  }
  const timeoutSeconds = timeoutOption(values)
  if (timeoutSeconds !== undefined) options.timeoutSeconds = timeoutSeconds
  const from = formatOption(values, 'from')
  if (from !== undefined) options.from = from
  if (!values.quiet && !values.json) options.onProgress = (message) => ctx.stderr.write(`${printable(message)}\n`)
  return options
}

/** What `--json` prints: the entries, the counts of the summary line, and the failures when there are. */
export function jsonResult(result: PrefetchResult, errors?: PrefetchFailure[]): string {
  const { entries, files, fetched, cached, undeclared } = result
  return `${JSON.stringify({ entries, files, fetched, cached, ...(undeclared ? { undeclared } : {}), ...(errors ? { errors } : {}) }, null, 2)}\n`
}

/** The warning for each host the datasets name in file URLs but no --host declares: those URLs were not fetched. */
function warnUndeclared(result: PrefetchResult, ctx: CommandContext): void {
  if (ctx.values.quiet) return
  for (const { host, references, first } of result.undeclared ?? []) {
    const which = references === 1 ? `${first} is a file URL` : `${references} values are file URLs (the first ${first})`
    ctx.stderr.write(printable(`evalferry: warning: ${which} of ${host}, which is not a declared host: not fetched; declare it with --host ${host}=<base-url>\n`))
  }
}

/**
 * When some references failed: with --json, print the entries that succeeded and the errors; else
 * `print` what succeeded. The failure goes to stderr; resolves to its exit code. Other errors are rethrown.
 */
export function partialFailure(error: unknown, ctx: CommandContext, print: (result: PrefetchResult) => void): number {
  // Interrupted, the references failed because their git was stopped: the signal's handler exits.
  if (!(error instanceof PrefetchError) || isStopping()) throw error
  warnUndeclared(error.result, ctx)
  if (ctx.values.json) ctx.stdout.write(jsonResult(error.result, error.failures))
  else print(error.result)
  ctx.stderr.write(`evalferry: ${printable(error.describe())}\n`)
  return error.exitCode
}

export const FETCH_OPTIONS = {
  offline: { type: 'boolean' },
  refresh: { type: 'boolean' },
  concurrency: { type: 'string' },
  timeout: { type: 'string' },
} as const

/** Where `--rewrite` puts each dataset: the file named, or for several (or a directory) one file each inside it. */
async function rewriteTargets(datasets: string[], rewrite: string, batch: boolean): Promise<{ dataset: string; output: string }[]> {
  const isDir = batch || (await isDirectory(rewrite))
  if (!isDir) return [{ dataset: datasets[0]!, output: rewrite }]
  const byOutput = new Map<string, string>()
  return datasets.map((dataset) => {
    const output = join(rewrite, basename(dataset))
    const other = byOutput.get(output)
    if (other !== undefined) throw new UsageError(`two inputs would both write ${output}: ${other} and ${dataset}; rewrite them in separate runs`)
    byOutput.set(output, dataset)
    return { dataset, output }
  })
}

const command: Command = {
  name: 'prefetch',
  summary: 'fetch every git file the datasets reference into the cache',
  usage: `Usage: evalferry prefetch <dataset...> [--offline] [--refresh] [--concurrency n] [--timeout s]
        [--manifest <file.json>] [--rewrite <out>] [--embed] [--from <format>]

Finds every blob URL in the datasets (file blocks, and any value that is wholly a URL) and
fetches the files into the repository cache: one ref listing and one fetch per repository.

  --offline            no network: serve what is cached, fail naming each URL that is not
  --refresh            list refs again even when the cached listing is fresh
  --concurrency <n>    repositories fetched at once (default 4)
  --timeout <s>        abandon a network step after this many seconds without progress
                       (default: EVALFERRY_TIMEOUT, else 60)
  --manifest <file>    write per URL: host, repository, ref, commit, path, local path, bytes, sha256
  --rewrite <out>      write a copy of the dataset pointing at the cached files (a directory for several)
  --embed              with --rewrite: put the text of text files inline instead
  --from <format>      the datasets' format when detection cannot tell
  --cache-dir <dir>    the cache (default: EVALFERRY_CACHE_DIR, else the platform cache directory)
  --host <name>=<base-url>[,type=github|gitlab|bitbucket|bitbucket-server][,raw=<url>|off]
                       where a host's git really is (GitHub Enterprise, self-hosted GitLab, a mirror)`,
  examples: [
    { does: 'fetch the git files a dataset references into the cache', line: 'evalferry prefetch dataset.yaml' },
    { does: 'a copy of the dataset that points at the cached files, for a run with no network', line: 'evalferry prefetch dataset.yaml --rewrite offline.yaml --manifest files.json' },
    { does: 'check that everything is cached, without the network', line: 'evalferry prefetch dataset.yaml --offline' },
  ],
  options: {
    ...FETCH_OPTIONS,
    manifest: { type: 'string' },
    rewrite: { type: 'string' },
    embed: { type: 'boolean' },
    from: { type: 'string' },
  },
  async run(ctx) {
    if (ctx.positionals.length === 0) throw new UsageError(`name at least one dataset\n\n${command.usage}`)
    if (ctx.positionals.includes(STDIO)) throw new UsageError('prefetch reads dataset files, each maybe twice (to find its references, and to rewrite it): save standard input to a file first')
    // A directory or a glob as convert takes them: its dataset files, a JSON Lines dataset's sidecar read with it.
    const datasets = await expandInputs(ctx.positionals)
    const rewrite = stringOption(ctx.values, 'rewrite')
    if (ctx.values.embed && rewrite === undefined) throw new UsageError('--embed goes with --rewrite <out>')
    const options = resolverOptions(ctx.values, ctx)
    const manifest = stringOption(ctx.values, 'manifest')
    const rewrites = rewrite === undefined ? [] : await rewriteTargets(datasets, rewrite, datasets.length > 1 || (await namesBatch(ctx.positionals)))
    // Refused before any fetch: an output that is an input, or two outputs in one place.
    await assertWritable(
      [
        ...(manifest !== undefined ? [{ path: manifest, what: 'the manifest' }] : []),
        ...rewrites.map((r) => ({ path: r.output, what: 'the rewritten dataset' })),
        ...(ctx.values.json ? [{ path: STDIO, what: 'the --json output' }] : []),
      ],
      await filesRead(datasets),
    )
    for (const { dataset, output } of rewrites) {
      const [from, to] = [containerOf(dataset), output === STDIO ? undefined : containerOf(output)]
      if (from && to && from !== to) throw new UsageError(`--rewrite writes the dataset as it is, a ${from} file: ${output} is named as a ${to} one`)
    }
    // Interrupted, the git running stops with the process, the files begun are removed and the
    // cache's locks released (its own temporaries are swept by its next run).
    const outputs = [...(manifest !== undefined ? [manifest] : []), ...rewrites.map((r) => r.output)]
    const release = onInterrupt(async () => {
      await Promise.all([...outputs.map(removeOwnTemps), releaseHeldLocks()])
    })
    try {
      let result: PrefetchResult
      try {
        result = await prefetch(datasets, options)
      } catch (error) {
        return partialFailure(error, ctx, () => undefined)
      }
      warnUndeclared(result, ctx)
      if (manifest !== undefined) await writeManifest(manifest, result.entries)
      for (const { dataset, output } of rewrites) {
        await rewriteDataset(dataset, output, result.entries, {
          ...(options.from ? { from: options.from } : {}),
          embed: ctx.values.embed === true,
          hosts: options.hosts ?? [],
          env: ctx.env,
        })
      }
      if (ctx.values.json) ctx.stdout.write(jsonResult(result))
      else if (!ctx.values.quiet) ctx.stderr.write(`${prefetchSummary(result)}\n`)
      return 0
    } finally {
      release()
    }
  },
}

export default command
