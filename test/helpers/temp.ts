/** Temporary directories of a test file, removed when its process exits, whatever its tests left in them. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made: string[] = []
process.on('exit', () => {
  for (const dir of made) {
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch {
      // A directory a test left unreadable stays; the test's own result stands.
    }
  }
})

/** A new directory under the system's temporary directory, its name beginning with `prefix`. */
export function tempDir(prefix = 'evalferry-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}
