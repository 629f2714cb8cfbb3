/**
 * Every command in docs/ runs as written: each fenced `sh` block, on the bundled examples, with
 * `evalferry` on the PATH and a git server on loopback standing for github.com, which the bundled
 * example's references point at.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { FORMAT_NAMES } from '../adapters/index.ts'
import { MAIN, ROOT } from './helpers/cli.ts'
import { startGitServer } from './helpers/git-server.ts'
import { createRepo } from './helpers/repos.ts'
import { tempDir } from './helpers/temp.ts'

const DOCS = join(ROOT, 'docs')

/** The Markdown files under `dir`, in order. */
function pages(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => join(e.parentPath, e.name))
    .sort()
}

/** The fenced blocks of a page, with their language and the line they start on. */
function blocks(text: string): { lang: string; code: string; line: number }[] {
  const out: { lang: string; code: string; line: number }[] = []
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

/**
 * A folder holding the bundled examples, an `evalferry` command that runs this checkout's, and a
 * cache of its own; `hosts` (in `EVALFERRY_HOSTS`) sends the git hosts' URLs to loopback.
 */
function workspace(hosts: string): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = tempDir('evalferry-docs-')
  cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true })
  const bin = join(dir, '.bin')
  mkdirSync(bin)
  const command = join(bin, 'evalferry')
  writeFileSync(command, `#!/bin/sh\nexec '${process.execPath}' --import '${import.meta.resolve('tsx')}' '${MAIN}' "$@"\n`)
  chmodSync(command, 0o755)
  const env = { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME, EVALFERRY_CACHE_DIR: join(dir, '.cache'), EVALFERRY_HOSTS: hosts }
  return { dir, env }
}

/** Runs one block with `sh -e`; the servers of this process answer while it runs. */
function run(code: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
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

test('each format has its page, and each page opens with a runnable example', () => {
  for (const format of FORMAT_NAMES) {
    assert.ok(existsSync(join(DOCS, 'formats', `${format}.md`)), `docs/formats/${format}.md`)
  }
  for (const page of pages(DOCS)) {
    const name = relative(DOCS, page)
    const text = readFileSync(page, 'utf8')
    const first = blocks(text)[0]
    assert.equal(first?.lang, 'sh', `${name} opens with an sh block`)
    // Before the page's first section: it opens with it.
    const section = text.indexOf('\n## ')
    assert.ok(section === -1 || text.split('\n').slice(0, first.line).join('\n').length < section, `${name}: the example comes before the first section`)
  }
})

test('every sh block in docs/ runs as written on the bundled examples', async (t) => {
  const found = pages(DOCS)
  assert.ok(found.length >= 6, `${found.length} pages`)
  // The repository the bundled example points at, served on loopback as github.com.
  const root = tempDir('evalferry-docs-repos-')
  createRepo(root, 'github.com', 'evalferry-examples/handbook', { 'docs/onboarding.md': '# Onboarding\n\nRead the handbook, meet your team, set up your laptop.\n' })
  const server = await startGitServer(root)
  t.after(() => server.close())
  for (const page of found) {
    const sh = blocks(readFileSync(page, 'utf8')).filter((b) => b.lang === 'sh')
    // Each page's blocks run in order in a folder of their own: a later block may use what an earlier one wrote.
    const { dir, env } = workspace(server.hostSpecs().join(','))
    for (const block of sh) {
      const done = await run(block.code, dir, env)
      assert.equal(done.status, 0, `${relative(ROOT, page)}:${block.line}: ${block.code}\n${done.output}`)
    }
  }
})
