/** Atomic writes: content goes to the repository's tmp/ and is renamed into place. */

import { randomBytes } from 'node:crypto'
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { EvalferryError, FetchError } from '../src/errors.ts'

/** A fresh temporary path inside `tmpDir`, named so that a later run can tell whether its writer is alive. */
export function tempPath(tmpDir: string): string {
  return join(tmpDir, `${process.pid}-${randomBytes(6).toString('hex')}`)
}

/** Write `content` to `target` so that readers see either nothing or all of it. */
export async function writeAtomic(target: string, content: Buffer | string, tmpDir?: string): Promise<void> {
  if (tmpDir) await mkdir(tmpDir, { recursive: true })
  await mkdir(dirname(target), { recursive: true })
  const temp = tmpDir ? tempPath(tmpDir) : join(dirname(target), `.${basename(target)}.${basename(tempPath(''))}.tmp`)
  try {
    await writeFile(temp, content)
    await rename(temp, target)
  } catch (error) {
    await rm(temp, { force: true })
    throw error
  }
}

/** True when a process with this id exists (on this machine). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** What dead processes left in a tmp/ directory (entries are named `<pid>-<random>`). */
export async function leftBehind(tmpDir: string): Promise<string[]> {
  const entries = await readdir(tmpDir).catch(() => [] as string[])
  return entries.filter((name) => {
    const pid = Number.parseInt(name.split('-')[0] ?? '', 10)
    return pid !== process.pid && !processAlive(pid)
  })
}

/** Remove what dead processes left in a tmp/ directory. */
export async function sweepTemp(tmpDir: string): Promise<void> {
  await Promise.all((await leftBehind(tmpDir)).map((name) => rm(join(tmpDir, name), { recursive: true, force: true })))
}

const ERRNO_TEXT: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'a part of its path is a file, not a directory',
  EEXIST: 'a part of its path is a file, not a directory',
  EIO: 'input/output error',
}

/** A filesystem failure in the cache as an E_CACHE error naming the path at fault; other errors pass through. */
export function cacheError(error: unknown, doing: string): unknown {
  if (error instanceof EvalferryError) return error
  const { code, path } = (error ?? {}) as NodeJS.ErrnoException
  if (typeof code !== 'string') return error
  const why = ERRNO_TEXT[code] ?? (error as Error).message
  return new FetchError('E_CACHE', `${doing}: ${path ? `${path}: ` : ''}${why}`, {}, { cause: error })
}
