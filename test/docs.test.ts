/**
 * Every command in the README and docs/ runs as written: each fenced `sh` block, on the bundled
 * examples, with `evalferry` on the PATH, a git server on loopback standing for github.com (which
 * the bundled example's references point at) and stand-ins for the services.
 */
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { FORMAT_NAMES } from '../adapters/index.ts'
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
      const done = await runBlock(block.code, dir, env)
      assert.equal(done.status, 0, `${relative(ROOT, page)}:${block.line}: ${block.code}\n${done.output}`)
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
