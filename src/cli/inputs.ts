/** The dataset files a command line names: files, directories (their dataset files) and quoted globs. */
import { readdir } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { allAdapters } from '../../adapters/index.ts'
import { containerOf } from '../codecs/index.ts'
import { EvalferryError, UsageError } from '../errors.ts'
import { exists, isDirectory, isFile, STDIO } from '../io.ts'
import { holdsCases } from '../read.ts'
import { FilesProgress } from '../progress.ts'

/** Whether `input` is a glob for evalferry to expand: a pattern that names no existing file. */
export async function isGlob(input: string): Promise<boolean> {
  // A name without a pattern's characters is no pattern: the matcher is loaded only for one that has them.
  if (input === STDIO || !/[*?[\]{}()!+@]/.test(input)) return false
  const { isDynamicPattern } = await import('tinyglobby')
  return isDynamicPattern(input) && !(await exists(input))
}

/** Whether the inputs name a batch whatever their count: a directory or a glob among them. */
export async function namesBatch(inputs: string[]): Promise<boolean> {
  for (const input of inputs) if ((await isGlob(input)) || (input !== STDIO && (await isDirectory(input)))) return true
  return false
}

/**
 * Each input as files: a directory as the dataset files in it (a link to a file among them), a glob
 * (quoted, so the shell left it) as the dataset files it matches, both in name order; anything else
 * as it is. A glob that matches no dataset file is an error naming it, and so are inputs that come
 * to no file at all (empty directories). The sidecar of a JSON Lines dataset in the list (AgentV's
 * `x.yaml` beside `x.jsonl`) is read with it, not as a dataset; one a glob or a directory gave is
 * no dataset even when its dataset is not in the list (a glob of `.yaml` files).
 */
export async function expandInputs(inputs: string[]): Promise<string[]> {
  const files: string[] = []
  const found = new Set<string>()
  for (const input of inputs) {
    if (await isGlob(input)) {
      const { glob } = await import('tinyglobby')
      const matched = (await glob(input, { onlyFiles: true, expandDirectories: false, absolute: isAbsolute(input) }))
        .filter((path) => containerOf(path) !== undefined)
        .sort()
      if (!matched.length) throw new EvalferryError('E_IO', 'no dataset file matches', { file: input })
      files.push(...matched)
      for (const file of matched) found.add(file)
    } else if (input !== STDIO && (await isDirectory(input))) {
      const entries = (await readdir(input, { withFileTypes: true })).filter((e) => containerOf(e.name) !== undefined && !e.name.startsWith('.'))
      const named: string[] = []
      for (const e of entries) if (e.isFile() || (e.isSymbolicLink() && (await isFile(join(input, e.name))))) named.push(join(input, e.name))
      files.push(...named.sort())
      for (const file of named) found.add(file)
    } else files.push(input)
  }
  if (!files.length) throw new UsageError(`no dataset files in ${inputs.join(', ')}`)
  const datasets = await withoutSidecars(files, found)
  if (!datasets.length) throw new UsageError(`no dataset files in ${inputs.join(', ')}: only the sidecars of JSON Lines datasets not named`)
  return datasets
}

/** `files` without the sidecars of JSON Lines datasets among them, nor those `found` (by a glob or in a directory) of datasets beside them. */
async function withoutSidecars(files: string[], found: Set<string>): Promise<string[]> {
  const sidecars = new Set<string>()
  const named = new Set(files)
  for (const adapter of await allAdapters()) {
    if (!adapter.sidecar) continue
    for (const file of files) {
      const sidecar = containerOf(file) === 'jsonl' ? adapter.sidecar(file, 'jsonl') : undefined
      if (sidecar && named.has(sidecar) && !(await holdsCases(sidecar, adapter))) sidecars.add(sidecar)
      // A sidecar a glob or a directory gave, whose dataset is beside it but not in the list.
      const datasets = containerOf(file) === 'yaml' && found.has(file) ? ['.jsonl', '.jsonl.gz'].map((ext) => file.replace(/\.ya?ml$/i, ext)) : []
      for (const dataset of datasets) {
        if (!named.has(dataset) && adapter.sidecar(dataset, 'jsonl') === file && (await isFile(dataset)) && !(await holdsCases(file, adapter))) sidecars.add(file)
      }
    }
  }
  return files.filter((file) => !sidecars.has(file))
}

/** A progress bar over `files` read one after another, with their total size when every one's can be told. */
export async function filesProgress(stream: NodeJS.WritableStream, files: string[]): Promise<FilesProgress> {
  // Loaded here, on a terminal only: the batch's module is not for a script's detect or validate to load.
  const { totalBytes } = await import('../batch.ts')
  const sized = await totalBytes(files.map((input) => ({ input })))
  return new FilesProgress(stream, files.length, sized.known ? sized.bytes : undefined)
}
