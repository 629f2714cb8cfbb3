/** Every command in docs/ runs as written: each fenced `sh` block, on the bundled examples, with `evalferry` on the PATH. */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { FORMAT_NAMES } from '../adapters/index.ts'
import { MAIN, ROOT } from './helpers/cli.ts'
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

/** A folder holding the bundled examples and an `evalferry` command that runs this checkout's. */
function workspace(): { dir: string; path: string } {
  const dir = tempDir('evalferry-docs-')
  cpSync(join(ROOT, 'examples'), join(dir, 'examples'), { recursive: true })
  const bin = join(dir, '.bin')
  mkdirSync(bin)
  const command = join(bin, 'evalferry')
  writeFileSync(command, `#!/bin/sh\nexec '${process.execPath}' --import '${import.meta.resolve('tsx')}' '${MAIN}' "$@"\n`)
  chmodSync(command, 0o755)
  return { dir, path: `${bin}:${process.env.PATH}` }
}

test('each format has its page, and each page opens with a runnable example', () => {
  for (const format of ['evalcase', 'deepeval', 'langsmith', 'hf', 'csv', 'evals', 'promptfoo']) {
    const page = join(DOCS, 'formats', `${format}.md`)
    assert.ok(existsSync(page), `docs/formats/${format}.md`)
    const text = readFileSync(page, 'utf8')
    const first = blocks(text)[0]
    assert.equal(first?.lang, 'sh', `${format}.md opens with an sh block`)
    // Before the page's first section: it opens with it.
    const section = text.indexOf('\n## ')
    assert.ok(section === -1 || text.split('\n').slice(0, first.line).join('\n').length < section, `${format}.md: the example comes before the first section`)
  }
})

test('every sh block in docs/ runs as written on the bundled examples', () => {
  const found = pages(DOCS)
  assert.ok(found.length >= 6, `${found.length} pages`)
  for (const page of found) {
    const sh = blocks(readFileSync(page, 'utf8')).filter((b) => b.lang === 'sh')
    // Each page's blocks run in order in a folder of their own: a later block may use what an earlier one wrote.
    const { dir, path } = workspace()
    for (const block of sh) {
      const run = spawnSync('sh', ['-e', '-c', block.code], { cwd: dir, env: { PATH: path, HOME: process.env.HOME }, encoding: 'utf8', timeout: 120_000 })
      assert.equal(run.status, 0, `${relative(ROOT, page)}:${block.line}: ${block.code}\n${run.stdout}${run.stderr}`)
    }
  }
})
