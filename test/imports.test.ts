/** No module imports another that imports it back, by any path: imports flow one way through src/, adapters/ and cache/. */
import assert from 'node:assert/strict'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import ts from 'typescript'
import { ROOT } from './helpers/cli.ts'
import { tempDir } from './helpers/temp.ts'

/** Every .ts file under `folders` of `root`, with the files of the same set it imports: static, type-only, re-exported or dynamic. */
function importGraph(root: string, folders: string[]): Map<string, string[]> {
  const files: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.ts')) files.push(resolve(path))
    }
  }
  for (const folder of folders) walk(join(root, folder))
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    const imported = importedFiles.filter((i) => i.fileName.startsWith('.')).map((i) => resolve(dirname(file), i.fileName))
    graph.set(file, [...new Set(imported.filter((path) => known.has(path)))])
  }
  return graph
}

/** Each circle of imports, as the chain of files that closes it (`a.ts → b.ts → a.ts`), each circle once. */
function circles(graph: Map<string, string[]>, root: string): string[] {
  const found = new Set<string>()
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') {
        const circle = path.slice(path.indexOf(next))
        // Told from its first file in sorted order, so that one circle met from two places is named once.
        const start = circle.indexOf([...circle].sort()[0]!)
        const turned = [...circle.slice(start), ...circle.slice(0, start)]
        found.add([...turned, turned[0]!].map((f) => relative(root, f)).join(' → '))
      } else if (!state.has(next)) visit(next)
    }
    path.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return [...found].sort()
}

test('no module of src/, adapters/ or cache/ imports one that imports it back', () => {
  const graph = importGraph(ROOT, ['src', 'adapters', 'cache'])
  // The walk sees the tree: the modules, and the imports between them.
  assert.ok(graph.size > 50, `${graph.size} modules`)
  assert.ok(graph.get(join(ROOT, 'src', 'convert.ts'))?.includes(join(ROOT, 'src', 'report.ts')))
  // A lazy import counts: it is an import all the same.
  assert.ok(graph.get(join(ROOT, 'src', 'cli', 'main.ts'))?.includes(join(ROOT, 'src', 'cli', 'convert.ts')))
  assert.deepEqual(circles(graph, ROOT), [])
})

test('the walk finds a circle of type imports, re-exports and lazy imports', () => {
  const root = tempDir()
  mkdirSync(join(root, 'src'))
  writeFileSync(join(root, 'src', 'a.ts'), "import type { B } from './b.ts'\nexport type A = B\n")
  writeFileSync(join(root, 'src', 'b.ts'), "export { c } from './c.ts'\nexport type B = string\n")
  writeFileSync(join(root, 'src', 'c.ts'), "export const c = () => import('./a.ts')\n")
  writeFileSync(join(root, 'src', 'd.ts'), "import { c } from './c.ts'\nexport const d = c\n")
  assert.deepEqual(circles(importGraph(root, ['src']), root), [['src/a.ts', 'src/b.ts', 'src/c.ts', 'src/a.ts'].join(' → ')])
})
