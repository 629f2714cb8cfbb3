/** Running the real `evalferry` command line in a child process, and writing datasets for it. */

import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const ROOT = REPO_ROOT
export const MAIN = join(REPO_ROOT, 'src', 'cli', 'main.ts')
export const SHARED_FIXTURES = join(REPO_ROOT, '..', 'shared', 'fixtures', 'real')
/** tsx's loader by its path: the command runs from any folder, not only where `tsx` resolves. */
const TSX = import.meta.resolve('tsx')

export interface CliRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
}

export interface CliProcess {
  pid: number
  /** What the process has written to stderr so far. */
  stderr: () => string
  done: Promise<CliRun>
}

/** Start `evalferry <args>` in its own process group (so a test can kill it with its git children). */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000, input?: string | Buffer, cwd = REPO_ROOT): CliProcess {
  const started = Date.now()
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    detached: true,
  })
  child.stdin?.end(input)
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
  const timer = setTimeout(() => kill(child.pid!), timeoutMs)
  const done = new Promise<CliRun>((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started })
    })
  })
  return { pid: child.pid!, stderr: () => stderr, done }
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000, input?: string | Buffer, cwd = REPO_ROOT): Promise<CliRun> {
  return startCli(args, env, timeoutMs, input, cwd).done
}

/** SIGKILL a CLI process and everything it started. */
export function kill(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

/** An evalcase YAML dataset referencing `urls`: file blocks, and messages whose content is just the URL. */
export function writeEvalcaseDataset(path: string, urls: string[]): void {
  const lines = ['evalcases:']
  for (let i = 0; i < urls.length; i += 3) {
    const [a, b, c] = urls.slice(i, i + 3)
    lines.push(`  - id: case-${i}`, '    input_messages:', '      - role: user', '        content:', '          - type: text', '            value: read these')
    for (const u of [a, b]) if (u) lines.push('          - type: file', `            value: ${JSON.stringify(u)}`)
    if (c) lines.push('      - role: user', `        content: ${JSON.stringify(c)}`)
  }
  writeFileSync(path, `${lines.join('\n')}\n`)
}
