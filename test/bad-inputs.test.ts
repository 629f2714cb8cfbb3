/**
 * Malformed and hostile inputs, as data: every `test/fixtures/bad/<name>` beside
 * `<name>.expect.json` runs through the real CLI and must exit 1 with one located error line
 * (file, line or row, field), no stack trace, no output file, no temporary left behind and the
 * input unchanged; with a `skip` expectation, `--on-error skip` converts the rest and names the
 * bad record in `--rejects`. Inputs too large to commit are generated here (table below) and
 * run under a 256 MB heap while their resident memory is polled.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { runCli, startCli } from './helpers/cli.ts'
import { tempDir } from './helpers/temp.ts'

const BAD = join(import.meta.dirname, 'fixtures', 'bad')
const work = tempDir('evalferry-bad-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

const OUTPUT_EXTENSION: Record<string, string> = { evalcase: 'yaml', deepeval: 'json', langsmith: 'jsonl', hf: 'jsonl', csv: 'csv', evals: 'json' }

interface Expectation {
  from: string
  to: string
  args: string[]
  code: number
  /** What the error line must match: file name, line or row, field, message. */
  error: string
  /** With `--on-error skip`: records skipped and written, and the first reject's line and field. */
  skip?: { skipped: number; written: number; line: number; field: string }
  /** A known open bug: the case runs but does not fail the suite. */
  todo?: string
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex')

/** A fresh, empty output folder, so that anything left in it is a leak. */
function outputFolder(): string {
  return mkdtempSync(join(work, 'out-'))
}

async function expectFailure(input: string, name: string, x: Expectation, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const before = sha256(input)
  const out = outputFolder()
  const output = join(out, `converted.${OUTPUT_EXTENSION[x.to]}`)
  const result = await runCli(['convert', input, '--from', x.from, '--to', x.to, '-o', output, ...x.args], env)
  assert.equal(result.code, x.code, `${name}: exit code\n${result.stderr}`)
  const lines = result.stderr.trimEnd().split('\n')
  assert.equal(lines.length, 1, `${name}: one error line, got\n${result.stderr}`)
  assert.match(lines[0]!, new RegExp(`^evalferry: \\S*${x.error}`), `${name}: the error names file, line and field`)
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace')
  assert.doesNotMatch(result.stderr, /internal error/, 'a data error, not a crash')
  assert.deepEqual(readdirSync(out), [], 'no output file and no temporary left behind')
  assert.equal(sha256(input), before, 'the input is unchanged')
}

async function expectSkip(input: string, name: string, x: Expectation & { skip: NonNullable<Expectation['skip']> }): Promise<void> {
  const before = sha256(input)
  const out = outputFolder()
  const output = join(out, `converted.${OUTPUT_EXTENSION[x.to]}`)
  const rejects = join(out, 'rejects.jsonl')
  const result = await runCli(['convert', input, '--from', x.from, '--to', x.to, '-o', output, '--on-error', 'skip', '--rejects', rejects, ...x.args])
  assert.equal(result.code, 0, `${name} with --on-error skip\n${result.stderr}`)
  assert.match(result.stderr, new RegExp(`${x.skip.written} written, ${x.skip.skipped} skipped`))
  const lines = readFileSync(rejects, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { location: { file: string; line: number; field: string } })
  assert.equal(lines.length, x.skip.skipped)
  assert.equal(lines[0]!.location.file, input)
  assert.equal(lines[0]!.location.line, x.skip.line)
  assert.equal(lines[0]!.location.field, x.skip.field)
  assert.deepEqual(readdirSync(out).sort(), ['converted.' + OUTPUT_EXTENSION[x.to], 'rejects.jsonl'], 'the output and the rejects, no temporary')
  assert.equal(sha256(input), before, 'the input is unchanged')
}

const corpus = readdirSync(BAD)
  .filter((n) => n.endsWith('.expect.json'))
  .sort()
  .map((n) => ({ name: n.slice(0, -'.expect.json'.length), x: JSON.parse(readFileSync(join(BAD, n), 'utf8')) as Expectation }))

test('the corpus covers every format and container', () => {
  assert.ok(corpus.length >= 60, `${corpus.length} inputs`)
  const seen = new Set(corpus.map((c) => `${c.x.from} ${c.name.split('.').pop()}`))
  for (const want of ['deepeval json', 'deepeval jsonl', 'deepeval csv', 'evalcase yaml', 'evalcase jsonl', 'langsmith json', 'langsmith jsonl', 'langsmith csv', 'evals json', 'evals jsonl', 'hf parquet', 'hf jsonl', 'csv csv', 'csv tsv']) {
    assert.ok(seen.has(want), `the corpus has a ${want} input`)
  }
})

test('committed bad inputs', { concurrency: 4 }, async (t) => {
  await Promise.all(
    corpus.map(({ name, x }) =>
      t.test(name, x.todo ? { todo: x.todo } : {}, async () => {
        const input = join(BAD, name)
        await expectFailure(input, name, x)
        if (x.skip) await expectSkip(input, name, { ...x, skip: x.skip })
      }),
    ),
  )
  t.diagnostic(`${corpus.length} committed inputs, ${corpus.filter((c) => c.x.skip).length} also with --on-error skip`)
})

/** Writes `head`, then `size` bytes of `fill`, then `tail`, without holding the whole file. */
function writeLarge(path: string, head: string, fill: string, size: number, tail: string): void {
  const fd = openSync(path, 'w')
  writeSync(fd, head)
  if (size === 0) {
    writeSync(fd, tail)
    return closeSync(fd)
  }
  const block = Buffer.from(fill.repeat(Math.ceil((1 << 20) / fill.length)).slice(0, 1 << 20))
  for (let done = 0; done < size; done += block.length) writeSync(fd, block, 0, Math.min(block.length, size - done))
  writeSync(fd, tail)
  closeSync(fd)
}

const MB = 1 << 20
const DEEP = 100_000
const deep = (open: string, close: string) => open.repeat(DEEP) + close.repeat(DEEP)

/**
 * | input                  | what                                         | expected                              |
 * | ---------------------- | -------------------------------------------- | ------------------------------------- |
 * | cell-100mb.jsonl       | a 100 MB input cell on line 2                | line 2: record longer than 32 MiB     |
 * | cell-100mb.json        | the same in a JSON array (record on line 3)  | line 3: record longer than 32 MiB     |
 * | cell-100mb.csv         | a 100 MB quoted CSV cell on row line 3       | line 3: row longer than 32 MiB        |
 * | cell-100mb.yaml        | a 100 MB evalcase input                      | YAML document longer than 32 MiB      |
 * | deep-100k.json         | metadata nested 100,000 lists deep           | line 2: nested deeper than 2000       |
 * | deep-100k.jsonl        | the same on JSON Lines line 2                | line 2: nested deeper than 2000       |
 * | deep-100k.csv          | JSON text 100,000 deep in a DeepEval cell    | line 3: nested too deeply             |
 * | deep-100k.yaml         | a YAML flow sequence 100,000 deep            | line 4: invalid YAML                  |
 * | alias-bomb.yaml        | nine levels of nine aliases (387 M nodes)    | invalid YAML: excessive alias count   |
 */
const GENERATED: { name: string; from: string; to: string; make(path: string): void; error: string }[] = [
  { name: 'cell-100mb.jsonl', from: 'deepeval', to: 'evalcase', make: (p) => writeLarge(p, '{"input": "a"}\n{"input": "', 'lorem ipsum ', 100 * MB, '"}\n'), error: 'cell-100mb\\.jsonl:2: the record is longer than 32 MiB' },
  { name: 'cell-100mb.json', from: 'deepeval', to: 'evalcase', make: (p) => writeLarge(p, '[\n  {"input": "a"},\n  {"input": "', 'lorem ipsum ', 100 * MB, '"}\n]\n'), error: 'cell-100mb\\.json:3: the record is longer than 32 MiB' },
  { name: 'cell-100mb.csv', from: 'deepeval', to: 'evalcase', make: (p) => writeLarge(p, 'input,expected_output\r\nq1,a1\r\nq2,"', 'lorem, "" ipsum\n', 100 * MB, '"\r\n'), error: 'cell-100mb\\.csv:3: the row is longer than 32 MiB' },
  { name: 'cell-100mb.yaml', from: 'evalcase', to: 'deepeval', make: (p) => writeLarge(p, 'evalcases:\n  - id: a\n    input: "', 'lorem ipsum ', 100 * MB, '"\n'), error: 'cell-100mb\\.yaml:3: the YAML document is longer than 32 MiB' },
  { name: 'deep-100k.json', from: 'deepeval', to: 'evalcase', make: (p) => writeLarge(p, `[\n  {"input": "q", "additional_metadata": {"x": ${deep('[', ']')}}}\n]\n`, '', 0, ''), error: 'deep-100k\\.json:2: nested deeper than 2000 levels' },
  { name: 'deep-100k.jsonl', from: 'deepeval', to: 'evalcase', make: (p) => writeLarge(p, `{"input": "q"}\n{"input": "q", "additional_metadata": {"x": ${deep('[', ']')}}}\n`, '', 0, ''), error: 'deep-100k\\.jsonl:2: nested deeper than 2000 levels' },
  { name: 'deep-100k.csv', from: 'deepeval', to: 'evalcase', make: (p) => writeLarge(p, `input,additional_metadata\r\nq1,\r\nq2,"{""x"": ${deep('[', ']')}}"\r\n`, '', 0, ''), error: 'deep-100k\\.csv:3: nested too deeply' },
  { name: 'deep-100k.yaml', from: 'evalcase', to: 'deepeval', make: (p) => writeLarge(p, `evalcases:\n  - id: a\n    input: q\n    metadata: {x: ${deep('[', ']')}}\n`, '', 0, ''), error: 'deep-100k\\.yaml:4(:\\d+)?: invalid YAML' },
  {
    name: 'alias-bomb.yaml',
    from: 'evalcase',
    to: 'deepeval',
    make: (p) => {
      let text = `a0: &a0 [${Array(9).fill('"lol"').join(', ')}]\n`
      for (let i = 1; i < 10; i++) text += `a${i}: &a${i} [${Array(9).fill(`*a${i - 1}`).join(', ')}]\n`
      writeLarge(p, `${text}evalcases:\n  - id: bomb\n    input: q\n    metadata: *a9\n`, '', 0, '')
    },
    error: 'alias-bomb\\.yaml:\\d+(:\\d+)?: invalid YAML: Excessive alias count',
  },
]

/** Peak resident memory of a process, polled every 20 ms from /proc until it exits. */
function pollRss(pid: number): { stop(): number } {
  let peak = 0
  const timer = setInterval(() => {
    try {
      const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
      if (kb) peak = Math.max(peak, Number(kb) * 1024)
    } catch {
      // exited between polls
    }
  }, 20)
  return {
    stop() {
      clearInterval(timer)
      return peak
    },
  }
}

/** A 256 MB heap makes unbounded memory fail; resident memory may add buffers and code on top. */
const HEAP_MB = 256
const RSS_LIMIT = 480 * MB

test('generated huge and hostile inputs fail located, in bounded memory', { concurrency: 1 }, async (t) => {
  const peaks: string[] = []
  for (const g of GENERATED) {
    await t.test(g.name, async () => {
      const dir = mkdtempSync(join(work, 'gen-'))
      const input = join(dir, g.name)
      g.make(input)
      const before = sha256(input)
      const out = outputFolder()
      const child = startCli(['convert', input, '--from', g.from, '--to', g.to, '-o', join(out, `converted.${OUTPUT_EXTENSION[g.to]}`)], {
        NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
      })
      const rss = pollRss(child.pid)
      const result = await child.done
      const peak = rss.stop()
          peaks.push(`${g.name} ${Math.round(peak / MB)} MB`)
      assert.equal(result.code, 1, result.stderr.slice(0, 2000))
      assert.match(result.stderr, new RegExp(`^evalferry: \\S*${g.error}`))
      assert.equal(result.stderr.trimEnd().split('\n').length, 1)
      assert.doesNotMatch(result.stderr, /\n\s+at /)
      assert.ok(peak < RSS_LIMIT, `peak resident memory ${Math.round(peak / MB)} MB`)
      assert.deepEqual(readdirSync(out), [], 'no output file and no temporary left behind')
      assert.equal(sha256(input), before)
      rmSync(dir, { recursive: true, force: true })
    })
  }
  t.diagnostic(`peak resident memory under a ${HEAP_MB} MB heap: ${peaks.join(', ')}`)
})
