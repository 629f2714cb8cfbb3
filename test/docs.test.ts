/**
 * Every command in the README and docs/ runs as written: each fenced `sh` block, on the bundled
 * examples, with `evalferry` on the PATH, a git server on loopback standing for github.com (which
 * the bundled example's references point at) and stand-ins for the services.
 */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { FORMAT_NAMES } from '../adapters/index.ts'
import type { FormatName } from '../adapters/types.ts'
import { read } from '../src/read.ts'
import { MAIN, ROOT } from './helpers/cli.ts'
import { blocks, runBlock, startServers, workspace, type Block } from './helpers/docs.ts'

const DOCS = join(ROOT, 'docs')
/** This checkout's command, from its sources. */
const SOURCES = [process.execPath, '--import', import.meta.resolve('tsx'), MAIN]

/** The Markdown files under `dir`, in order. */
function pages(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.md'))
    .map((e) => join(e.parentPath, e.name))
    .sort()
}

/** Runs a page's blocks in order in a folder of their own: a later block may use what an earlier one wrote. */
async function runPage(page: string, sh: Block[]): Promise<void> {
  const servers = await startServers()
  try {
    const { dir, env } = workspace(SOURCES, servers.env)
    for (const block of sh) {
      // `npm run bench` is a script of the checkout, not a command of the installed package: it runs there, as the page says.
      const done = await runBlock(block.code, /^npm run /.test(block.code) ? ROOT : dir, env)
      assert.equal(done.status, 0, `${relative(ROOT, page)}:${block.line}: ${block.code}\n${done.output}`)
      // The bench prints a row that failed and goes on: each row it ran must have measured.
      if (/^npm run bench/.test(block.code)) assert.doesNotMatch(done.output, /\berror\b|\bfailed\b/, `${relative(ROOT, page)}:${block.line}: ${done.output}`)
    }
  } finally {
    await servers.stop()
  }
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

test('every sh block in docs/ runs as written on the bundled examples', async () => {
  const found = pages(DOCS)
  assert.ok(found.length >= 6, `${found.length} pages`)
  for (const page of found) await runPage(page, blocks(readFileSync(page, 'utf8')).filter((b) => b.lang === 'sh'))
})

test("every sh block of the README after the set-up and test commands runs as written on the bundled examples", async () => {
  const page = join(ROOT, 'README.md')
  // The first two are `npm ci && …` and `npm test`, which test/readme.test.ts and CI run.
  const sh = blocks(readFileSync(page, 'utf8')).filter((b) => b.lang === 'sh').slice(2)
  assert.ok(sh.length >= 5, `${sh.length} recipes`)
  await runPage(page, sh)
})

/** The container of the Kubernetes Job a page shows, and how many pods it runs. */
function indexedJob(page: string): { completions: number; argv: string[] } {
  const jobs = blocks(readFileSync(page, 'utf8'))
    .filter((b) => b.lang === 'yaml')
    .map((b) => parse(b.code) as { kind?: string; spec?: { completions?: number; completionMode?: string; template?: { spec?: { containers?: { command?: string[]; args?: string[]; workingDir?: string }[] } } } })
    .filter((doc) => doc?.kind === 'Job')
  assert.equal(jobs.length, 1, `${relative(ROOT, page)} shows one Job`)
  const spec = jobs[0]!.spec!
  assert.equal(spec.completionMode, 'Indexed')
  const container = spec.template?.spec?.containers?.[0]
  assert.ok(container?.command?.length, 'the container has a command')
  return { completions: spec.completions!, argv: [...container.command, ...(container.args ?? [])] }
}

/** Each case of a file, as text that tells it apart: its input and expected output. */
async function casesOf(files: string[], from?: FormatName): Promise<string[]> {
  const out: string[] = []
  for (const file of files) for await (const c of read(file, from ? { from } : {})) out.push(JSON.stringify([c.input, c.expected_output]))
  return out.sort()
}

test("the Kubernetes Indexed Job in docs/cli.md, run pod by pod with each completion index, converts every record once", async () => {
  const job = indexedJob(join(DOCS, 'cli.md'))
  assert.equal(job.completions, 8)
  // The folder the pods mount as their working folder, with `npx evalferry` resolving to this checkout, as the image's npx resolves it to the package.
  const { dir, env } = workspace(SOURCES, {})
  writeFileSync(join(dir, '.bin', 'npx'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 })
  const exports = join(dir, 'exports')
  mkdirSync(exports)
  cpSync(join(dir, 'examples', 'goldens.json'), join(exports, 'support.json'))
  // Fewer files than pods: each file is cut into 8 record ranges, a few of them empty.
  const rows = Array.from({ length: 37 }, (_, i) => `q${i},What is ${i} + ${i}?,${2 * i}`)
  writeFileSync(join(exports, 'sums.csv'), `id,question,answer\n${rows.join('\n')}\n`)
  const [command, ...args] = job.argv
  for (let index = 0; index < job.completions; index++) {
    // The pod's command as Kubernetes runs it, in the mounted folder, with the index Kubernetes sets.
    const pod = spawnSync(command!, args, { cwd: dir, env: { ...env, JOB_COMPLETION_INDEX: String(index) }, encoding: 'utf8' })
    assert.equal(pod.status, 0, `pod ${index}: ${pod.stderr}`)
  }
  const written = readdirSync(join(dir, 'converted')).sort()
  // Each pod writes its range of each file: a table stays one, a JSON document becomes JSON Lines, which hf writes.
  for (const [stem, ext, outExt] of [['sums', 'csv', 'csv'], ['support', 'json', 'jsonl']] as const) {
    const parts = written.filter((name) => name.startsWith(`${stem}.part-`))
    assert.deepEqual(parts, Array.from({ length: 8 }, (_, i) => `${stem}.part-${i + 1}-of-8.${outExt}`))
    const input = join(exports, `${stem}.${ext}`)
    assert.deepEqual(await casesOf(parts.map((name) => join(dir, 'converted', name)), 'hf'), await casesOf([input]))
  }
})
