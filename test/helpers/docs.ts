/**
 * Running the commands of the README and docs/ as written: their fenced blocks, a folder holding
 * the bundled examples with an `evalferry` command on the PATH, and the servers the examples talk
 * to, on loopback: a git server standing for github.com and stand-ins for LangSmith, Confident AI
 * and the Hugging Face Hub.
 */
import { spawn } from 'node:child_process'
import { chmodSync, cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './cli.ts'
import { startGitServer } from './git-server.ts'
import { createRepo } from './repos.ts'
import { ConfidentStandIn } from './services/confident-server.ts'
import { CdnStandIn, HubStandIn } from './services/hub-server.ts'
import { LangSmithStandIn } from './services/langsmith-server.ts'
import { tempDir } from './temp.ts'

export interface Block {
  lang: string
  code: string
  /** The line its opening fence is on, 1-based. */
  line: number
}

/** The fenced blocks of a Markdown page, with their language and the line they start on. */
export function blocks(text: string): Block[] {
  const out: Block[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const start = i
    const code: string[] = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) code.push(lines[i]!)
    out.push({ lang: open[1]!, code: code.join('\n'), line: start + 1 })
  }
  return out
}

export interface Servers {
  /** The variables that send the examples' requests to loopback, with the keys the stand-ins take. */
  env: NodeJS.ProcessEnv
  stop(): Promise<void>
}

/** The servers of one page, empty: each page pushes and reads its own datasets. */
export async function startServers(): Promise<Servers> {
  // The repository the bundled example points at, served as github.com.
  const root = tempDir('evalferry-docs-repos-')
  createRepo(root, 'github.com', 'evalferry-examples/handbook', { 'docs/onboarding.md': '# Onboarding\n\nRead the handbook, meet your team, set up your laptop.\n' })
  const git = await startGitServer(root)
  const langsmith = await new LangSmithStandIn().start()
  const confident = await new ConfidentStandIn().start()
  const cdn = await new CdnStandIn().start()
  const hub = await new HubStandIn(cdn).start()
  return {
    env: {
      EVALFERRY_HOSTS: git.hostSpecs().join(','),
      LANGSMITH_API_KEY: langsmith.apiKey,
      LANGSMITH_ENDPOINT: langsmith.url,
      CONFIDENT_API_KEY: confident.apiKey,
      CONFIDENT_BASE_URL: confident.url,
      HF_TOKEN: hub.token,
      HF_ENDPOINT: hub.url,
    },
    async stop() {
      await Promise.all([git.close(), langsmith.stop(), confident.stop(), hub.stop(), cdn.stop()])
    },
  }
}

/**
 * A folder holding the bundled examples, a cache of its own, and an `evalferry` command that runs
 * `argv` (this checkout's sources through tsx, or the built package) with the arguments given.
 */
export function workspace(argv: string[], env: NodeJS.ProcessEnv): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir('evalferry-docs-')
  cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true })
  const bin = join(dir, '.bin')
  mkdirSync(bin)
  const command = join(bin, 'evalferry')
  writeFileSync(command, `#!/bin/sh\nexec ${argv.map((a) => `'${a}'`).join(' ')} "$@"\n`)
  chmodSync(command, 0o755)
  return { dir, env: { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME, EVALFERRY_CACHE_DIR: join(dir, '.cache'), ...env } }
}

/** Runs one block with `sh -e`; the servers of this process answer while it runs. */
export function runBlock(code: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-e', '-c', code], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (c: Buffer) => (output += c.toString()))
    child.stderr.on('data', (c: Buffer) => (output += c.toString()))
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, output })
    })
  })
}
