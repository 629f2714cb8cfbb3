/**
 * A `file` block's path is relative to its dataset's folder (AgentV looks for it there, and in the
 * folders above up to the repository's root). Written into another folder, a path that named a file
 * beside the source may name none from the output's folder or those above: that is warned of, the
 * path left as it was.
 */
import { existsSync } from 'node:fs'
import { dirname, isAbsolute, resolve } from 'node:path'
import type { Location } from './errors.ts'
import type { Content, EvalCase, Message } from './model.ts'

/** A value that is a URL (`https:`, `data:`, `file:`) rather than a path. */
const SCHEME = /^[a-z][a-z0-9+.-]*:/i

export class RelativeFiles {
  private readonly outputDir: string
  private readonly seen = new Map<string, boolean>()
  /** The folder of the last source file asked about: resolved once, not for every case. */
  private sourceFile: string | undefined
  private sourceDir = ''

  constructor(output: string) {
    this.outputDir = dirname(resolve(output))
  }

  /** Warns, through `warn`, of each file block of `c` whose path names a file beside `from` and none beside the output. */
  check(c: EvalCase, from: Location | undefined, warn: (message: string, field: string) => void): void {
    if (from?.file === undefined) return
    if (from.file !== this.sourceFile) {
      this.sourceFile = from.file
      this.sourceDir = dirname(resolve(from.file))
    }
    const sourceDir = this.sourceDir
    if (sourceDir === this.outputDir) return
    const messages = (field: string, list: unknown): void => {
      if (!Array.isArray(list)) return
      list.forEach((m, i) => this.blocks(`${field}[${i}].content`, (m as Message | undefined)?.content, sourceDir, warn))
    }
    messages('input', c.input)
    messages('expected_output', c.expected_output)
    messages('turns', c.turns)
  }

  private blocks(field: string, content: Content | undefined, sourceDir: string, warn: (message: string, field: string) => void): void {
    if (!Array.isArray(content)) return
    content.forEach((block, i) => {
      if (block.type !== 'file' || typeof block.value !== 'string') return
      const path = block.value
      if (path === '' || isAbsolute(path) || SCHEME.test(path)) return
      if (this.exists(resolve(sourceDir, path)) && !this.foundFromOutput(path)) {
        warn(`the file block's path ${path} names a file beside the source (${sourceDir}) and none beside the output (${this.outputDir}) or above it, where AgentV looks for it: left as it was`, `${field}[${i}].value`)
      }
    })
  }

  /** Whether `path` names a file from the output's folder or one above it, as AgentV searches. */
  private foundFromOutput(path: string): boolean {
    for (let dir = this.outputDir; ; dir = dirname(dir)) {
      if (this.exists(resolve(dir, path))) return true
      if (dirname(dir) === dir) return false
    }
  }

  private exists(path: string): boolean {
    let found = this.seen.get(path)
    if (found === undefined) this.seen.set(path, (found = existsSync(path)))
    return found
  }
}
