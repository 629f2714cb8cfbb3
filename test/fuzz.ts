/**
 * `npm run fuzz [-- --seed 1] [--runs 40]`: every fixture corrupted `runs` times, and converted to
 * a target and through a --from chosen at random. Bytes are cut, spliced with the characters each
 * syntax turns on, overwritten, or whole lines repeated or swapped; a JSON, JSON Lines or YAML
 * fixture also has values swapped for others of any type and keys added or dropped; some mutants
 * are gzip-compressed (their stream itself sometimes cut or corrupted), some outputs named `.gz`. What it
 * reports: an exception other than an EvalferryError, an EvalferryError that names no file, a
 * warning a package printed on the process, a file left beside a failed output, or an output
 * evalferry cannot read back as the format it wrote. Each finding keeps its input, to be run
 * again by hand; the exit code is 1 when there is one. Not part of `npm test`: it looks for new
 * faults, and what it finds joins `test/fixtures/bad/` or a test of its own.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, extname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml'
import { FORMAT_NAMES, getAdapter } from '../adapters/index.ts'
import type { Container, FormatName } from '../adapters/types.ts'
import { EvalferryError, UsageError } from '../src/errors.ts'
import { convert } from '../src/convert.ts'
import { read } from '../src/read.ts'
import { fixtures } from './helpers/fixtures.ts'

const { values } = parseArgs({ options: { seed: { type: 'string', default: '1' }, runs: { type: 'string', default: '40' } } })
let state = Number(values.seed) >>> 0 || 1
/** A seeded generator (xorshift32): the same seed, the same mutants. */
const random = (): number => {
  state ^= state << 13
  state ^= state >>> 17
  state ^= state << 5
  return (state >>> 0) / 2 ** 32
}
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!
const below = (n: number): number => Math.floor(random() * n)

const PIECES = ['"', "'", ',', '\n', '\r\n', '\r', '{', '}', '[', ']', ':', '- ', '? ', '\t', '#', '\\', '|', '&a ', '*a', '!!binary ', '---\n', '\0', '\uFEFF', 'é', '\uD800', 'null', 'NaN', '1e999', '9007199254740993', '"\n"', '__proto__', '%zz', '>\n', '|-\n']
const VALUES: (() => unknown)[] = [
  () => null, () => true, () => 0, () => -1.5, () => 1e308, () => 9007199254740993, () => '', () => ' ', () => 'text', () => 'NA', () => '[1,2]', () => "['a', 'b']",
  () => 'https://github.com/o/r/blob/main/a.txt', () => [], () => ['a'], () => [1, 'x', null], () => ({}), () => ({ a: 1 }), () => ({ role: 'user', content: 'hi' }),
  () => [{ role: 'assistant', content: [{ type: 'text', value: 'v' }] }], () => ({ type: 'image', value: 'x.png' }), () => ({ evalferry: { x: 1 } }), () => '__proto__',
]
const KEYS = ['input', 'expected_output', 'actual_output', 'context', 'retrieval_context', 'id', 'metadata', 'inputs', 'outputs', 'messages', 'turns', 'tools_called', 'criteria', 'expected_outcome', 'evaluator', 'assertions', 'scenario', 'role', 'content', 'type', 'value', 'evalferry', 'tests', 'evalcases', 'rows', 'row', 'features', 'x']

/** The bytes with one edit: cut, spliced, overwritten, or a line repeated or swapped. */
function editBytes(bytes: Buffer): Buffer {
  const at = below(bytes.length + 1)
  switch (below(6)) {
    case 0:
      return bytes.subarray(0, at)
    case 1:
      return Buffer.concat([bytes.subarray(0, at), Buffer.from(pick(PIECES)), bytes.subarray(at)])
    case 2:
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + below(40))])
    case 3: {
      const out = Buffer.from(bytes)
      if (out.length) out[below(out.length)] = below(256)
      return out
    }
    default: {
      const lines = bytes.toString('latin1').split('\n')
      const [i, j] = [below(lines.length), below(lines.length)]
      if (random() < 0.5) lines.splice(i, 0, lines[j]!)
      else [lines[i], lines[j]] = [lines[j]!, lines[i]!]
      return Buffer.from(lines.join('\n'), 'latin1')
    }
  }
}

/** Every value of a parsed document, with where it sits. */
function places(value: unknown, out: { parent: Record<string | number, unknown>; key: string | number }[] = []) {
  if (typeof value !== 'object' || value === null) return out
  for (const [key, item] of Object.entries(value)) {
    out.push({ parent: value as Record<string, unknown>, key: Array.isArray(value) ? Number(key) : key })
    places(item, out)
  }
  return out
}

/** A JSON, JSON Lines or YAML text with one value swapped, one key dropped or one added; undefined when it does not parse. */
function editValues(text: string, ext: string): string | undefined {
  const [parse, dump]: [(t: string) => unknown, (v: unknown) => string] =
    ext === '.json'
      ? [(t) => JSON.parse(t), (v) => JSON.stringify(v, null, 2)]
      : ext === '.jsonl'
        ? [(t) => t.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as unknown), (v) => (v as unknown[]).map((l) => JSON.stringify(l)).join('\n') + '\n']
        : [(t) => parseYaml(t), (v) => stringifyYaml(v)]
  let doc: unknown
  try {
    doc = parse(text)
  } catch {
    return undefined
  }
  const all = places(doc)
  if (!all.length) return undefined
  const { parent, key } = pick(all)
  const kind = below(3)
  if (kind === 0) parent[key] = pick(VALUES)()
  else if (kind === 1 && !Array.isArray(parent)) delete parent[key]
  else {
    const objects = all.map((p) => p.parent).filter((p) => !Array.isArray(p))
    if (objects.length) pick(objects)[pick(KEYS)] = pick(VALUES)()
  }
  return dump(doc)
}

const EXT: Record<Container, string> = { json: '.json', jsonl: '.jsonl', csv: '.csv', yaml: '.yaml', parquet: '.parquet' }
const targets: { format: FormatName; container: Container }[] = []
for (const format of FORMAT_NAMES) for (const container of (await getAdapter(format)).writes) targets.push({ format, container })

const work = mkdtempSync(join(tmpdir(), 'evalferry-fuzz-'))
const kept = join(work, 'findings')
mkdirSync(kept)
const warnings: string[] = []
process.on('warning', (warning) => warnings.push(warning.message))
const seen = new Set<string>()
const counts = { runs: 0, converted: 0, refused: 0, findings: 0 }

function finding(kind: string, input: Buffer, name: string, detail: string, how: string): void {
  const key = `${kind} ${detail.slice(0, 60)}`
  if (seen.has(key)) return
  seen.add(key)
  const path = join(kept, `${++counts.findings}-${name}`)
  writeFileSync(path, input)
  process.stdout.write(`${kind}: ${path} ${how}\n  ${detail.split('\n').slice(0, 3).join('\n  ')}\n`)
}

for (const fixture of fixtures()) {
  const original = readFileSync(fixture.path)
  const ext = extname(fixture.path)
  const structured = ['.json', '.jsonl', '.yaml'].includes(ext)
  for (let i = 0; i < Number(values.runs); i++) {
    let mutant: Buffer = original
    const edited = structured && random() < 0.4 ? editValues(original.toString('utf8'), ext) : undefined
    if (edited !== undefined) mutant = Buffer.from(edited)
    for (let n = edited === undefined ? 1 + below(3) : below(2); n > 0; n--) mutant = editBytes(mutant)
    // Some mutants compressed, and some of those with their gzip stream cut or corrupted too.
    const compressed = random() < 0.15
    if (compressed) mutant = random() < 0.5 ? editBytes(gzipSync(mutant)) : gzipSync(mutant)
    const dir = join(work, String(counts.runs++))
    mkdirSync(dir)
    const input = join(dir, basename(fixture.path) + (compressed ? '.gz' : ''))
    writeFileSync(input, mutant)
    const target = pick(targets)
    const outName = `out${EXT[target.container]}${random() < 0.1 ? '.gz' : ''}`
    const output = join(dir, outName)
    const from = random() < 0.25 ? pick(FORMAT_NAMES) : undefined
    const how = `--to ${target.format} -o ${outName}${from ? ` --from ${from}` : ''}`
    warnings.length = 0
    try {
      await convert({ input, output, to: target.format, ...(from ? { from } : {}), onError: random() < 0.3 ? 'skip' : 'fail' })
      counts.converted++
      try {
        for await (const _ of read(output, { from: target.format })) continue
      } catch (error) {
        finding('unreadable output', mutant, basename(input), String((error as Error).message), how)
      }
    } catch (error) {
      if (!(error instanceof EvalferryError)) finding('crash', mutant, basename(input), String((error as Error)?.stack ?? error), how)
      else {
        counts.refused++
        if (!(error instanceof UsageError) && error.location.file !== input) finding('unlocated error', mutant, basename(input), error.message, how)
        const left = readdirSync(dir).filter((f) => f !== basename(input))
        if (left.length) finding('left behind', mutant, basename(input), left.join(' '), how)
      }
    }
    // A warning is emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve))
    if (warnings.length) finding('warning', mutant, basename(input), warnings.join('\n'), how)
    rmSync(dir, { recursive: true, force: true })
  }
}
process.stdout.write(`${counts.runs} mutants: ${counts.converted} converted, ${counts.refused} refused, ${counts.findings} findings${counts.findings ? ` (inputs in ${kept})` : ''}\n`)
if (!counts.findings) rmSync(work, { recursive: true, force: true })
process.exitCode = counts.findings ? 1 : 0
