/** The dataset fixtures on disk: the real tools' files (../shared) and the project's own. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { FORMAT_NAMES } from '../../adapters/index.ts'
import type { Container, FormatName } from '../../adapters/types.ts'
import { containerOf } from '../../src/codecs/index.ts'

const SHARED = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'real')
const OWN = join(import.meta.dirname, '..', 'fixtures')

/** Files that are not datasets of their folder's format, each with the reason. */
const NOT_DATASETS: Record<string, string> = {
  'evals/evals-eval-case-schema.json': 'the JSON Schema itself, not a case',
  'langsmith/plain.csv': 'a plain table read with --map as upload_csv takes it; LangSmith writes its own CSV columns',
  'langsmith/columns.csv': 'a plain table read with --map as upload_csv takes it; LangSmith writes its own CSV columns',
}

export interface Fixture {
  path: string
  format: FormatName
  container: Container
  /** Holds `file://` includes: its cases come from other files, so it cannot be written back alike. */
  includes: boolean
}

/** Every file under `dir`, in no set order (none where it does not exist). */
export function walk(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? walk(path) : [path]
  })
}

/** Every dataset fixture of every format: the real tools' files and the project's own. */
export function fixtures(): Fixture[] {
  const found: Fixture[] = []
  for (const format of FORMAT_NAMES) {
    for (const root of [join(SHARED, format), join(OWN, format)]) {
      for (const path of walk(root).sort()) {
        const container = containerOf(path)
        const rel = relative(root === join(SHARED, format) ? SHARED : OWN, path)
        if (!container || path.endsWith('.cases.json') || rel in NOT_DATASETS) continue
        // A YAML beside a JSON Lines file of the same stem is that file's settings, not a dataset.
        if (container === 'yaml' && existsSync(path.replace(/\.ya?ml$/, '.jsonl'))) continue
        if (/[\\/]bad[\\/]/.test(path)) continue
        found.push({ path, format, container, includes: /file:\/\//.test(readText(path)) })
      }
    }
  }
  return found
}

function readText(path: string): string {
  return containerOf(path) === 'parquet' ? '' : readFileSync(path, 'utf8')
}

