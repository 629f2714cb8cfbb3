/** A real browser as the judge of a page: Debian's Chromium, headless, on a file, with no profile of its own and nothing fetched in the background. */
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { inflateSync } from 'node:zlib'
import { tempDir } from './temp.ts'

/** Chromium's command on this machine (`.ci/run` installs Debian's `chromium`), or undefined. */
export const CHROMIUM = ['chromium', 'chromium-browser'].find((name) => spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0)

function chromium(args: string[]): string {
  const run = spawnSync(
    CHROMIUM!,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--user-data-dir=${tempDir('evalferry-chromium-')}`,
      ...args,
    ],
    { encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000 },
  )
  assert.equal(run.status, 0, `chromium failed: ${run.stderr}`)
  return run.stdout
}

/** The page's DOM as Chromium has it once the page is loaded. */
export function renderedDom(file: string): string {
  return chromium(['--dump-dom', pathToFileURL(file).href])
}

/** A screenshot of the page, `width` × `height`, as PNG bytes. */
export function screenshot(file: string, width: number, height: number): Buffer {
  const png = join(tempDir('evalferry-shot-'), 'page.png')
  chromium([`--window-size=${width},${height}`, `--screenshot=${png}`, pathToFileURL(file).href])
  return readFileSync(png)
}

/** A PNG's size, and how many byte values its pixel data holds: a blank page holds a handful, a page of text many. */
export function pngFacts(png: Buffer): { width: number; height: number; distinctBytes: number } {
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'not a PNG')
  const chunks: Buffer[] = []
  let width = 0
  let height = 0
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at)
    const type = png.toString('latin1', at + 4, at + 8)
    const data = png.subarray(at + 8, at + 8 + length)
    if (type === 'IHDR') {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
    } else if (type === 'IDAT') chunks.push(data)
    at += 12 + length
  }
  const pixels = inflateSync(Buffer.concat(chunks))
  const seen = new Set<number>()
  for (const byte of pixels) seen.add(byte)
  return { width, height, distinctBytes: seen.size }
}

/** The text of a piece of HTML: its tags removed, its entities read, its spaces joined. */
export function textOf(html: string): string {
  return html
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#\d+|#x[0-9a-f]+|amp|lt|gt|quot|apos|nbsp);/gi, (_, e: string) => {
      const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' }
      if (e.startsWith('#x') || e.startsWith('#X')) return String.fromCodePoint(parseInt(e.slice(2), 16))
      if (e.startsWith('#')) return String.fromCodePoint(Number(e.slice(1)))
      return named[e.toLowerCase()]!
    })
    .replace(/\s+/g, ' ')
    .trim()
}

/** The cells' text of each row of the table whose id is `id`, the header row aside. */
export function tableRows(dom: string, id: string): string[][] {
  const table = new RegExp(`<table id="${id}">([\\s\\S]*?)</table>`).exec(dom)
  assert.ok(table, `no table #${id} in the page`)
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table[1]!)?.[1] ?? table[1]!
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<t[dh][^>]*>([\s\S]*?)<\/t[dh]>/g)].map((cell) => textOf(cell[1]!)))
}
