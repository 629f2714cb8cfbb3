/** The sidecar of a JSON Lines dataset: a file beside it that holds the dataset's own keys (evalcase `x.jsonl` → `x.yaml`). */
import type { Adapter } from '../adapters/types.ts'
import { AtomicFile, exists } from './io.ts'
import { hasKeys, type JsonObject } from './model.ts'
import { addWarning, type ConversionReport } from './report.ts'

/**
 * Begins the JSON Lines sidecar at `path` holding `header`. With no header for it, a sidecar there
 * is left as it was and told of: it may be the user's own settings for `output`, or an earlier dataset's.
 */
export async function startSidecar(path: string | undefined, header: JsonObject, output: string, adapter: Adapter, report: ConversionReport): Promise<AtomicFile | undefined> {
  if (!path) return undefined
  const format = adapter.name
  if (hasKeys(header)) {
    const applied = adapter.sidecarKeys
    for (const key of applied ? Object.keys(header).filter((k) => !applied.includes(k)) : []) {
      addWarning(report, `${format} readers take only ${applied!.join(', ')} from a JSON Lines dataset's sidecar: this key is kept for evalferry, not applied to ${output} (a YAML dataset applies it)`, { file: path, field: key })
    }
    // Written as an evalcase YAML file's own keys are, so that YAML 1.1 readers read it alike.
    const { yamlMapping } = await import('./codecs/yaml-emit.ts')
    const file = await AtomicFile.create(path)
    await file.sink.write(yamlMapping(header))
    return file
  }
  if (await exists(path)) addWarning(report, `left as it was: this dataset has no description or execution for it, and ${format} readers apply it to ${output}`, { file: path })
  return undefined
}
