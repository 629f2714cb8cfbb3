/** The dataset files a command line names: files, directories (their dataset files) and quoted globs. */
import { readdir } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { glob, isDynamicPattern } from 'tinyglobby'
import { containerOf } from '../codecs/index.ts'
import { EvalferryError } from '../errors.ts'
import { exists, isDirectory, STDIO } from '../io.ts'

/** Whether `input` is a glob for evalferry to expand: a pattern that names no existing file. */
export async function isGlob(input: string): Promise<boolean> {
  return input !== STDIO && isDynamicPattern(input) && !(await exists(input))
}

/**
 * Each input as files: a directory as the dataset files in it, a glob (quoted, so the shell left it)
 * as the dataset files it matches, both in name order; anything else as it is. A glob that matches
 * no dataset file is an error naming it.
 */
export async function expandInputs(inputs: string[]): Promise<string[]> {
  const files: string[] = []
  for (const input of inputs) {
    if (await isGlob(input)) {
      const matched = (await glob(input, { onlyFiles: true, expandDirectories: false, absolute: isAbsolute(input) }))
        .filter((path) => containerOf(path) !== undefined)
        .sort()
      if (!matched.length) throw new EvalferryError('E_IO', 'no dataset file matches', { file: input })
      files.push(...matched)
    } else if (input !== STDIO && (await isDirectory(input))) {
      const entries = (await readdir(input, { withFileTypes: true }))
        .filter((e) => e.isFile() && containerOf(e.name) !== undefined && !e.name.startsWith('.'))
        .map((e) => join(input, e.name))
        .sort()
      files.push(...entries)
    } else files.push(input)
  }
  return files
}
