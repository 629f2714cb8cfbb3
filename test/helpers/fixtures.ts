/** The dataset fixtures on disk: the real tools' files (../shared) and the project's own. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, join, relative } from 'node:path'
import { FORMAT_NAMES } from '../../adapters/index.ts'
import type { Container, FormatName } from '../../adapters/types.ts'
import { containerOf } from '../../src/codecs/index.ts'

const SHARED = join(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures', 'real')
const OWN = join(import.meta.dirname, '..', 'fixtures')
const FIELD = join(SHARED, 'field')

/** The format of each folder of files from the field: the tool that wrote them, or whose convention they follow. */
export const FIELD_FORMATS: Record<string, FormatName> = {
  'agentv-4.42.4': 'evalcase',
  'agentv-5': 'evalcase',
  hf: 'hf',
  langsmith: 'langsmith',
  promptfoo: 'promptfoo',
  // A ragas test set saved by pandas is a plain table: its columns carry ragas' names.
  ragas: 'csv',
}

/** Files that are not datasets of their folder's format, each with the reason. */
const NOT_DATASETS: Record<string, string> = {
  'evals/evals-eval-case-schema.json': 'the JSON Schema itself, not a case',
  'langsmith/plain.csv': 'a plain table read with --map as upload_csv takes it; LangSmith writes its own CSV columns',
  'langsmith/columns.csv': 'a plain table read with --map as upload_csv takes it; LangSmith writes its own CSV columns',
}

export interface Fixture {
  /** `<format>/<file name>`, or `field/<folder>/<path>` for a file from the field. */
  name: string
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
  const roots = FORMAT_NAMES.flatMap((format) => [
    { format, root: join(SHARED, format), base: SHARED },
    { format, root: join(OWN, format), base: OWN },
  ])
  for (const [folder, format] of Object.entries(FIELD_FORMATS)) roots.push({ format, root: join(FIELD, folder), base: SHARED })
  for (const { format, root, base } of roots) {
    for (const path of walk(root).sort()) {
      const container = containerOf(path)
      const rel = relative(base, path)
      if (!container || path.endsWith('.cases.json') || rel in NOT_DATASETS) continue
      // A YAML beside a JSON Lines file of the same stem is that file's settings, not a dataset.
      if (container === 'yaml' && existsSync(path.replace(/\.ya?ml$/, '.jsonl'))) continue
      if (/[\\/]bad[\\/]/.test(path)) continue
      const name = base === SHARED && root.startsWith(FIELD) ? relative(SHARED, path) : `${format}/${basename(path)}`
      found.push({ name, path, format, container, includes: INCLUDES.test(readText(path)) })
    }
  }
  return found
}

/** A file whose cases come from other files by `file://` includes. */
const INCLUDES = /file:\/\//

function readText(path: string): string {
  return containerOf(path) === 'parquet' || path.endsWith('.gz') ? '' : readFileSync(path, 'utf8')
}

