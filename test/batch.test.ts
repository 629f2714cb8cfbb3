import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { availableParallelism } from 'node:os'
import { gzipSync } from 'node:zlib'
import { MAIN, runCli } from './helpers/cli.ts'
import { defaultLanes, runBatch, startOrder, type BatchProgress } from '../src/batch.ts'
import { dealFiles, parseShard } from '../src/shards.ts'
import { workersRunning, workersStarted } from '../src/workers.ts'
import type { EvalferryError } from '../src/errors.ts'
import { tempDir } from './helpers/temp.ts'

const dir = tempDir('evalferry-batch-')
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

/** A DeepEval JSON Lines file of `count` goldens whose inputs name the file and the record. */
function goldens(path: string, count: number, tag: string): string[] {
  const inputs = Array.from({ length: count }, (_, i) => `${tag} question ${i}, with "quotes" and | pipes`)
  writeFileSync(path, inputs.map((input, i) => JSON.stringify({ input, expected_output: `answer ${i}`, context: ['a', 'b'] })).join('\n') + '\n')
  return inputs
}

function inputsOf(path: string): string[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { input: string }).input)
}

test('--shard i/n over all i splits one file into record ranges that, in order, are the whole', async () => {
  const input = join(dir, 'one.jsonl')
  const all = goldens(input, 101, 'one')
  const out = join(dir, 'one-out')
  mkdirSync(out)
  const parts: string[] = []
  for (let i = 1; i <= 3; i++) {
    const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'deepeval', '-o', join(out, 'one.jsonl'), '--shard', `${i}/3`, '--quiet'])
    assert.equal(result.code, 0, result.stderr)
    parts.push(...inputsOf(join(out, `one.part-${i}-of-3.jsonl`)))
  }
  assert.deepEqual(parts, all)
  assert.deepEqual(readdirSync(out).sort(), ['one.part-1-of-3.jsonl', 'one.part-2-of-3.jsonl', 'one.part-3-of-3.jsonl'])
})

test('--shard i/n over all i of a batch gives every file to exactly one shard, converted in parallel', async () => {
  const inputs = join(dir, 'many')
  mkdirSync(inputs)
  const expected = new Map<string, string[]>()
  for (let f = 0; f < 5; f++) expected.set(`f${f}.jsonl`, goldens(join(inputs, `f${f}.jsonl`), 10 + f, `f${f}`))
  const out = join(dir, 'many-out')
  const seen: string[] = []
  for (let i = 1; i <= 2; i++) {
    const before = new Set(readdirSafe(out))
    const result = await runCli(['convert', inputs, '--from', 'deepeval', '--to', 'deepeval', '-o', out, '--shard', `${i}/2`, '--jobs', '2', '--quiet'])
    assert.equal(result.code, 0, result.stderr)
    const added = readdirSafe(out).filter((n) => !before.has(n))
    assert.ok(added.length >= 2, `shard ${i} converted ${added.length} files`)
    seen.push(...added)
  }
  assert.deepEqual(seen.sort(), [...expected.keys()].sort())
  for (const [name, inputsOfFile] of expected) assert.deepEqual(inputsOf(join(out, name)), inputsOfFile)
})

test('--shard deals whole files out by size: a large file has its shard to itself while the small ones share the other', async () => {
  const inputs = join(dir, 'dealt')
  mkdirSync(inputs)
  // In name order, round-robin would have put the large file with a small one.
  goldens(join(inputs, 'a.jsonl'), 2, 'a')
  goldens(join(inputs, 'b.jsonl'), 2, 'b')
  goldens(join(inputs, 'c-large.jsonl'), 60, 'c')
  goldens(join(inputs, 'd.jsonl'), 2, 'd')
  const out = join(dir, 'dealt-out')
  const shards: string[][] = []
  for (let i = 1; i <= 2; i++) {
    const before = new Set(readdirSafe(out))
    const result = await runCli(['convert', inputs, '--from', 'deepeval', '--to', 'deepeval', '-o', out, '--shard', `${i}/2`, '--quiet'])
    assert.equal(result.code, 0, result.stderr)
    shards.push(readdirSafe(out).filter((n) => !before.has(n)).sort())
  }
  assert.deepEqual(shards, [['c-large.jsonl'], ['a.jsonl', 'b.jsonl', 'd.jsonl']])
})

test('dealing files to shards gives each file to exactly one shard, the largest first to the emptiest', () => {
  assert.deepEqual(dealFiles([5, 1, 9, 5, 2], 2), [[2, 4], [0, 1, 3]])
  assert.deepEqual(dealFiles([3, 3, 3], 3), [[0], [1], [2]])
  assert.deepEqual(dealFiles([0, 0, 0, 0], 2), [[0, 2], [1, 3]])
  for (let seed = 1; seed <= 50; seed++) {
    const sizes = Array.from({ length: 3 + (seed % 9) }, (_, k) => ((seed * 7919 + k * 104729) % 1000) * (k % 3 === 0 ? 100 : 1))
    const count = 1 + (seed % 4)
    const dealt = dealFiles(sizes, count)
    assert.equal(dealt.length, count)
    assert.deepEqual(dealt.flat().sort((a, b) => a - b), sizes.map((_, k) => k))
  }
})

function readdirSafe(path: string): string[] {
  try {
    return readdirSync(path)
  } catch {
    return []
  }
}

test('--shard refuses numbers outside 1..n', () => {
  assert.deepEqual(parseShard('2/4'), { index: 2, count: 4 })
  for (const bad of ['0/4', '5/4', '1/0', 'a/b', '1', '1e0/2', '9007199254740992/9007199254740993']) assert.throws(() => parseShard(bad), /--shard takes i\/n/)
  // The example names the shards of the count given, where there is one.
  assert.throws(() => parseShard('3/2'), { message: '--shard takes i/n with 1 ≤ i ≤ n (the shards of 2 are 1/2 … 2/2), not "3/2"' })
  assert.throws(() => parseShard('2/1'), { message: '--shard takes i/n with 1 ≤ i ≤ n (the shards of 1 are 1/1), not "2/1"' })
  assert.throws(() => parseShard('x/3'), { message: '--shard takes i/n with 1 ≤ i ≤ n (the shards of 3 are 1/3 … 3/3), not "x/3"' })
  // Without a count, an example that says it is one.
  for (const text of ['abc', '1/0', '2/2.5']) {
    assert.throws(() => parseShard(text), { message: `--shard takes i/n with 1 ≤ i ≤ n (for example, the shards of 4 are 1/4 … 4/4), not "${text}"` })
  }
})

test('--jobs takes a whole number written in digits', async () => {
  // A negative number after the option is its value, refused by the option's own check.
  for (const bad of ['1e1', '0', '2.5', '0x2', '-1']) {
    const result = await runCli(['convert', join(dir, 'none.jsonl'), '--to', 'evals', '-o', join(dir, 'none.json'), '--jobs', bad])
    assert.equal(result.code, 2, bad)
    assert.equal(result.stderr, `evalferry: --jobs takes a whole number of at least 1, not "${bad}"\n`)
  }
  const short = await runCli(['convert', join(dir, 'none.jsonl'), '--to', 'evals', '-o', join(dir, 'none.json'), '-j', '-2'])
  assert.deepEqual([short.code, short.stderr], [2, 'evalferry: --jobs takes a whole number of at least 1, not "-2"\n'])
})

test('unasked, a batch takes one lane per 32 MiB of input, at most one per core, one per free core and one per file', () => {
  const MB = 1e6
  // Two cores: 8 files of 5 MB were no faster on two lanes; of 10 MB, 25 MB and 100 MB they were.
  assert.equal(defaultLanes(40 * MB, 8, 2), 1)
  assert.equal(defaultLanes(80 * MB, 8, 2), 2)
  assert.equal(defaultLanes(100 * MB, 8, 2), 2)
  assert.equal(defaultLanes(80 * MB, 1, 2), 1)
  assert.equal(defaultLanes(200 * MB, 8, 2), 2)
  assert.equal(defaultLanes(800 * MB, 8, 2), 2)
  assert.equal(defaultLanes(32 * 1024 * 1024 * 3, 8, 8), 3)
  assert.equal(defaultLanes(1e9, 8, 16), 8)
  assert.equal(defaultLanes(1e9, 3, 8), 3)
  assert.equal(defaultLanes(0, 5, 4), 1)
  // Cores other work is using are not taken.
  assert.equal(defaultLanes(80 * MB, 8, 2, 1), 1)
  assert.equal(defaultLanes(80 * MB, 8, 2, 0), 1)
  assert.equal(defaultLanes(1e9, 8, 16, 5), 5)
})

test('several lanes take the largest files first, one whose size cannot be told before all, files of one size in input order', async () => {
  const inputs = join(dir, 'order')
  mkdirSync(inputs)
  const sized = (name: string, bytes: number) => {
    writeFileSync(join(inputs, name), 'x'.repeat(bytes))
    return name
  }
  const names = [sized('small.csv', 10), sized('big.csv', 300), 'pipe.csv', sized('middle.csv', 50), sized('big-too.csv', 300), 'missing.csv']
  assert.equal(spawnSync('mkfifo', [join(inputs, 'pipe.csv')]).status, 0)
  const jobs = names.map((name) => ({ input: join(inputs, name), output: join(dir, 'order-out', name), to: 'evalcase' as const }))
  const order = await startOrder(jobs)
  assert.deepEqual(order.map((i) => names[i]), ['pipe.csv', 'missing.csv', 'big.csv', 'big-too.csv', 'middle.csv', 'small.csv'])
  // A shard's record range is what it reads.
  const ranged = [{ ...jobs[1]!, recordBytes: { start: 0, end: 20, line: 1 } }, jobs[3]!]
  assert.deepEqual(await startOrder(ranged), [1, 0])
})

test('a small batch, unasked, converts on this thread alone; asked for two jobs, in two workers', async () => {
  const inputs = join(dir, 'small-batch')
  mkdirSync(inputs)
  for (const name of ['a', 'b', 'c']) goldens(join(inputs, `${name}.jsonl`), 5, name)
  const job = (name: string, out: string) => ({ input: join(inputs, `${name}.jsonl`), output: join(dir, out, `${name}.jsonl`), from: 'deepeval' as const, to: 'deepeval' as const })
  const before = workersStarted()
  const unasked = await runBatch(['a', 'b', 'c'].map((n) => job(n, 'small-unasked')))
  assert.equal(workersStarted(), before)
  const asked = await runBatch(['a', 'b', 'c'].map((n) => job(n, 'small-asked')), { jobs: 2 })
  assert.equal(workersStarted(), before + 2)
  assert.deepEqual(asked.map((r) => r.records.written), [5, 5, 5])
  assert.deepEqual(unasked.map((r) => r.records.written), [5, 5, 5])
})

test('unasked, a batch that could use two lanes starts its workers while it looks at the cores, and leaves none running, whatever the look finds', async () => {
  const inputs = join(dir, 'looked-batch')
  mkdirSync(inputs)
  const names = ['a', 'b', 'c', 'd']
  for (const name of names) goldens(join(inputs, `${name}.jsonl`), 40, name)
  const job = (name: string) => ({ input: join(inputs, `${name}.jsonl`), output: join(dir, 'looked-out', `${name}.jsonl`), from: 'deepeval' as const, to: 'deepeval' as const })
  const before = workersStarted()
  // A lane per byte: the batch could take one per core, and the look at the cores decides how many it keeps.
  const reports = await runBatch(names.map(job), { laneBytes: 1 })
  assert.equal(workersStarted(), before + Math.min(availableParallelism(), names.length))
  assert.equal(workersRunning(), 0)
  assert.deepEqual(reports.map((r) => r.records.written), [40, 40, 40, 40])
  for (const name of names) assert.deepEqual(inputsOf(join(dir, 'looked-out', `${name}.jsonl`)), inputsOf(join(inputs, `${name}.jsonl`)))
})

/**
 * promptfoo tests of 1.5 MB whose YAML directive sends them to the whole-document parser, which
 * needs about 70 times that: far more than the 64 MB the lanes are given in these tests.
 */
function wholeYaml(): string {
  const cases = Array.from({ length: 6000 }, (_, i) => `  - description: case ${i}\n    vars:\n      input: "What is ${i} times ${i}, in words and in digits?"\n    assert:\n      - type: equals\n        value: "${i * i}"\n`)
  return '%YAML 1.2\n---\ntests:\n' + cases.join('')
}

test('a file that outgrows a lane\'s heap converts again in this thread, and the lane goes on in a new worker', async () => {
  const inputs = join(dir, 'outgrown')
  const out = join(dir, 'outgrown-out')
  mkdirSync(inputs)
  writeFileSync(join(inputs, 'whole.yaml'), wholeYaml())
  goldens(join(inputs, 'small.jsonl'), 30, 'small')
  const jobs = [
    { input: join(inputs, 'whole.yaml'), output: join(out, 'whole.jsonl'), from: 'promptfoo' as const, to: 'deepeval' as const },
    { input: join(inputs, 'small.jsonl'), output: join(out, 'small.jsonl'), from: 'deepeval' as const, to: 'deepeval' as const },
  ]
  const before = workersStarted()
  const reports = await runBatch(jobs, { jobs: 2, laneHeapMb: 64 })
  // Two lanes, and one more worker for the lane whose worker ran out of memory.
  assert.equal(workersStarted(), before + 3)
  assert.equal(workersRunning(), 0)
  assert.deepEqual(reports.map((r) => r.records.written), [6000, 30])
  const whole = readFileSync(join(out, 'whole.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { input: string; expected_output?: string })
  assert.equal(whole.length, 6000)
  assert.deepEqual([whole[5999]!.input, whole[5999]!.expected_output], ['What is 5999 times 5999, in words and in digits?', '35988001'])
  assert.deepEqual(inputsOf(join(out, 'small.jsonl')), inputsOf(join(inputs, 'small.jsonl')))
  // What the worker began of the file it could not finish is gone.
  assert.deepEqual(readdirSafe(out).sort(), ['small.jsonl', 'whole.jsonl'])
})

test('a batch whose lanes\' workers fail as they load, while nothing is asked of them, converts every file in this thread', async () => {
  const inputs = join(dir, 'dead-lanes')
  const out = join(dir, 'dead-lanes-out')
  mkdirSync(inputs)
  const jobs = [1, 2, 3].map((n) => {
    goldens(join(inputs, `g${n}.jsonl`), 10 * n, `g${n}`)
    return { input: join(inputs, `g${n}.jsonl`), output: join(out, `g${n}.jsonl`), from: 'deepeval' as const, to: 'deepeval' as const }
  })
  // 2 MB of heap: each worker runs out of memory loading its code, the new ones among them while
  // this thread converts a file and none of them is asked anything.
  const reports = await runBatch(jobs, { jobs: 2, laneHeapMb: 2 })
  assert.deepEqual(reports.map((r) => r.records.written), [10, 20, 30])
  for (const n of [1, 2, 3]) assert.deepEqual(inputsOf(join(out, `g${n}.jsonl`)), inputsOf(join(inputs, `g${n}.jsonl`)))
  assert.equal(workersRunning(), 0)
})

// A pipe read again would wait for a writer that has gone: the timeout ends such a wait.
test('a pipe that outgrows a lane\'s heap fails naming it, since its bytes cannot be read again, and leaves nothing begun', { timeout: 120_000 }, async () => {
  const inputs = join(dir, 'outgrown-pipe')
  const out = join(dir, 'outgrown-pipe-out')
  mkdirSync(inputs)
  const piped = join(inputs, 'whole.yaml')
  assert.equal(spawnSync('mkfifo', [piped]).status, 0)
  const written = writeFile(piped, wholeYaml())
  goldens(join(inputs, 'small.jsonl'), 30, 'small')
  const jobs = [
    { input: piped, output: join(out, 'whole.jsonl'), from: 'promptfoo' as const, to: 'deepeval' as const },
    { input: join(inputs, 'small.jsonl'), output: join(out, 'small.jsonl'), from: 'deepeval' as const, to: 'deepeval' as const },
  ]
  await assert.rejects(runBatch(jobs, { jobs: 2, laneHeapMb: 64 }), (error: EvalferryError) => {
    assert.equal(error.code, 'E_IO')
    assert.equal(error.location.file, piped)
    assert.match(error.message, /more than the 64 MB .* a pipe's bytes cannot be read again: convert it with --jobs 1/)
    return true
  })
  await written
  assert.equal(workersRunning(), 0)
  assert.deepEqual(readdirSafe(out), ['small.jsonl'])
})

test('a failing file in a batch exits 1 naming that file, and writes no output for it', async () => {
  const inputs = join(dir, 'with-bad')
  mkdirSync(inputs)
  goldens(join(inputs, 'good.jsonl'), 3, 'good')
  writeFileSync(join(inputs, 'bad.jsonl'), '{"input": "ok"}\n{"input": 7}\n')
  const out = join(dir, 'with-bad-out')
  const result = await runCli(['convert', inputs, '--from', 'deepeval', '--to', 'deepeval', '-o', out, '--jobs', '2'])
  assert.equal(result.code, 1)
  assert.match(result.stderr, /bad\.jsonl:2: input: /)
  assert.ok(!readdirSafe(out).includes('bad.jsonl'))
})

test('a batch that stops says which files it wrote, which failed and which it did not convert, on stderr and in the report', async () => {
  const inputs = join(dir, 'stops')
  mkdirSync(inputs)
  for (const name of ['f1', 'f2', 'f4', 'f5']) goldens(join(inputs, `${name}.jsonl`), 2, name)
  writeFileSync(join(inputs, 'f3.jsonl'), '{"input": "ok"}\n{"input": 7}\n')
  const out = join(dir, 'stops-out')
  const report = join(dir, 'stops-report.json')
  const result = await runCli(['convert', inputs, '--from', 'deepeval', '--to', 'deepeval', '-o', out, '--jobs', '1', '--report', report])
  assert.equal(result.code, 1)
  const [o, i] = [(name: string) => join(out, `${name}.jsonl`), (name: string) => join(inputs, `${name}.jsonl`)]
  assert.equal(result.stderr.split('\n')[0], `evalferry: the batch stopped: 2 of 5 file(s) written (${o('f1')}, ${o('f2')}); 1 failed (${i('f3')}); 2 not converted (${i('f4')}, ${i('f5')})`)
  assert.match(result.stderr.split('\n')[1]!, /f3\.jsonl:2: input: /)
  const written = JSON.parse(readFileSync(report, 'utf8')) as { files: unknown; failed: { code: string }; records: { written: number } }
  assert.deepEqual(written.files, { written: [o('f1'), o('f2')], failed: [i('f3')], not_converted: [i('f4'), i('f5')] })
  assert.deepEqual([written.failed.code, written.records.written], ['E_FIELD', 4])
  assert.deepEqual(readdirSafe(out).sort(), ['f1.jsonl', 'f2.jsonl'])
})

test('a batch converts on this thread and on workers, the largest files first; a worker\'s failure stops new files while the running one finishes', async () => {
  const inputs = join(dir, 'lanes')
  const out = join(dir, 'lanes-out')
  mkdirSync(inputs)
  // Given first, a small file that is never converted: the lanes take the largest first. This
  // thread takes the pipe (its size cannot be told), which this test fills only once the worker
  // has failed, so the worker surely takes the largest file, the failing one.
  goldens(join(inputs, 'a.jsonl'), 2, 'never')
  const held = join(inputs, 'b.jsonl')
  assert.equal(spawnSync('mkfifo', [held]).status, 0)
  writeFileSync(join(inputs, 'c.jsonl'), '{"input": "ok"}\n'.repeat(20) + '{"input": 7}\n')
  assert.ok(statSync(join(inputs, 'c.jsonl')).size > statSync(join(inputs, 'a.jsonl')).size)
  const job = (name: string) => ({ input: join(inputs, name), output: join(out, name), from: 'deepeval' as const, to: 'deepeval' as const })
  let failed!: () => void
  const workerFailed = new Promise<void>((resolve) => (failed = resolve))
  const batch = runBatch([job('a.jsonl'), job('b.jsonl'), job('c.jsonl')], {
    jobs: 2,
    onProgress: (p) => p.filesDone === 1 && failed(),
  })
  batch.catch(() => {})
  await workerFailed
  const written = goldens(held, 3, 'held')
  await assert.rejects(batch, (error: EvalferryError) => {
    assert.equal(error.code, 'E_FIELD')
    assert.equal(error.location.file, join(inputs, 'c.jsonl'))
    assert.equal(error.location.line, 21)
    return true
  })
  assert.deepEqual(inputsOf(join(out, 'b.jsonl')), written)
  assert.deepEqual(readdirSafe(out), ['b.jsonl'])
})

test('a batch on this thread and a worker reports every file\'s records and bytes at its end', async () => {
  const inputs = join(dir, 'counted')
  mkdirSync(inputs)
  const held = join(inputs, 'a.jsonl')
  assert.equal(spawnSync('mkfifo', [held]).status, 0)
  for (const [name, count] of [['b.jsonl', 40], ['c.jsonl', 7]] as const) goldens(join(inputs, name), count, name)
  const job = (name: string) => ({ input: join(inputs, name), output: join(dir, 'counted-out', name), from: 'deepeval' as const, to: 'deepeval' as const })
  let last: BatchProgress | undefined
  let othersDone!: () => void
  const others = new Promise<void>((resolve) => (othersDone = resolve))
  const batch = runBatch([job('a.jsonl'), job('b.jsonl'), job('c.jsonl')], {
    jobs: 2,
    onProgress: (p) => {
      last = { ...p }
      if (p.filesDone === 2) othersDone()
    },
  })
  // This thread holds the pipe until the worker has converted both other files.
  await others
  goldens(held, 5, 'held')
  await batch
  // The same five goldens in a plain file: the bytes the pipe carried.
  const same = join(dir, 'counted-held.jsonl')
  goldens(same, 5, 'held')
  const bytes = statSync(same).size + statSync(join(inputs, 'b.jsonl')).size + statSync(join(inputs, 'c.jsonl')).size
  assert.deepEqual(last, { filesDone: 3, records: 52, bytes })
})

/** evalferry run under a pseudo-terminal, reading `stdin` when given: `script` gives it one and copies what it printed to our stdout. */
function underTerminal(args: string[], stdin?: string): { status: number | null; stdout: string; stderr: string } {
  const quote = (a: string) => `'${a.replace(/'/g, `'\\''`)}'`
  const command = [process.execPath, '--import', 'tsx', MAIN, ...args].map(quote).join(' ')
  return spawnSync('script', ['-qfec', stdin === undefined ? command : `${command} < ${quote(stdin)}`, '/dev/null'], { encoding: 'utf8', timeout: 120_000 })
}

/** evalferry run with its output piped. */
function piped(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--import', 'tsx', MAIN, ...args], { encoding: 'utf8', timeout: 120_000 })
}

/** What a terminal shows of each line printed: the text after its last carriage return, less the erasing of the line. */
function shownLines(output: string): string[] {
  return output.split(/\r?\n/).map((line) => line.slice(line.lastIndexOf('\r') + 1).replaceAll('\x1b[K', ''))
}

test('the progress bar shows under a terminal and not when piped', () => {
  const input = join(dir, 'big.jsonl')
  goldens(input, 150_000, 'big')
  const args = ['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', join(dir, 'big.jsonl.out.jsonl')]
  const tty = underTerminal(args)
  assert.equal(tty.status, 0, tty.stdout + tty.stderr)
  assert.match(tty.stdout, /files 0\/1 · [\d,]+ records · [\d.]+ MB\/[\d.]+ MB/)
  assert.match(tty.stdout, /deepeval → evalcase: 150000 read, 150000 written/)
  const plain = piped(args)
  assert.equal(plain.status, 0, plain.stderr)
  assert.doesNotMatch(plain.stderr, /records ·|█|░/)
  assert.match(plain.stderr, /150000 read, 150000 written/)
})

test('the progress bar counts the bytes of standard input, whose total it does not know', () => {
  const input = join(dir, 'big-stdin.jsonl')
  goldens(input, 150_000, 'stdin')
  const size = statSync(input).size
  const tty = underTerminal(['convert', '-', '--from', 'deepeval', '--from-container', 'jsonl', '--to', 'evalcase', '-o', join(dir, 'big-stdin.out.jsonl')], input)
  assert.equal(tty.status, 0, tty.stdout + tty.stderr)
  const lines = [...tty.stdout.matchAll(/files 0\/1 · [\d,]+ records · ([\d.]+) MB · [\d.]+ MB\/s/g)]
  assert.ok(lines.length > 0, tty.stdout)
  // Bytes are counted as they are read: the last line drawn has read some, and no more than the input.
  const read = Number(lines.at(-1)![1]) * 1e6
  assert.ok(read > 0 && read <= size + 50_000, `${read} of ${size}`)
  assert.doesNotMatch(tty.stdout, /%|left|█|░/)
  assert.match(tty.stdout, /deepeval → evalcase: 150000 read, 150000 written/)
})

test('the progress bar of a shard whose records lie at no known bytes (a compressed file) tells no share: it reads from the start to its last record', () => {
  const input = join(dir, 'shard-bar.jsonl')
  goldens(input, 150_000, 'shard')
  writeFileSync(input + '.gz', gzipSync(readFileSync(input)))
  const tty = underTerminal(['convert', input + '.gz', '--from', 'deepeval', '--to', 'evalcase', '-o', join(dir, 'shard-bar.out.jsonl'), '--shard', '1/2'])
  assert.equal(tty.status, 0, tty.stdout + tty.stderr)
  assert.match(tty.stdout, /files 0\/1 · [\d,]+ records · [\d.]+ MB · [\d.]+ MB\/s/)
  assert.doesNotMatch(tty.stdout, /%|left|█|░/)
  assert.match(tty.stdout, /deepeval → evalcase: 75000 read, 75000 written/)
  // Uncompressed, the shard's bytes are known, and the bar tells its share of them.
  const plain = underTerminal(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', join(dir, 'shard-bar.out.jsonl'), '--shard', '1/2'])
  assert.equal(plain.status, 0, plain.stdout + plain.stderr)
  assert.match(plain.stdout, /\d+% files 0\/1 · [\d,]+ records · [\d.]+ MB\/[\d.]+ MB/)
})

test('validate and detect show the progress bar under a terminal, and their lines for each file below it', () => {
  const first = join(dir, 'validate-first.jsonl')
  goldens(first, 150_000, 'first')
  writeFileSync(first, '{"input": 5}\n', { flag: 'a' })
  const second = join(dir, 'validate-second.jsonl')
  goldens(second, 150_000, 'second')
  const args = ['validate', first, second, '--from', 'deepeval']
  const tty = underTerminal(args)
  assert.equal(tty.status, 1, tty.stdout + tty.stderr)
  assert.match(tty.stdout, /files [01]\/2 · [\d,]+ records · [\d.]+ MB\/[\d.]+ MB/)
  const shown = shownLines(tty.stdout)
  assert.ok(shown.includes(`${first}: 150000 cases, 1 error`), tty.stdout)
  assert.ok(shown.includes(`${second}: 150000 cases, 0 errors`), tty.stdout)
  assert.ok(shown.some((line) => line.startsWith(`${first}:150001: input`)), tty.stdout)
  const plain = piped(args)
  assert.equal(plain.status, 1, plain.stderr)
  assert.doesNotMatch(plain.stderr, /records ·|█|░/)
  assert.match(plain.stdout, /validate-second\.jsonl: 150000 cases, 0 errors/)

  const detected = underTerminal(['detect', first, second])
  assert.equal(detected.status, 0, detected.stdout + detected.stderr)
  assert.match(detected.stdout, /files [01]\/2 · [\d,]+ records · [\d.]+ MB\/[\d.]+ MB/)
  assert.ok(shownLines(detected.stdout).some((line) => line.startsWith(`${second}: deepeval (jsonl), confidence`) && line.endsWith(', 150000 records')), detected.stdout)
  assert.doesNotMatch(piped(['detect', first, second]).stderr, /records ·|█|░/)
})

