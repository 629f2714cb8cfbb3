/**
 * Crash safety (SPEC section 5): a conversion killed with SIGKILL at any moment leaves no output
 * file and never a changed input, and the next run succeeds and clears what the killed ones left;
 * writing into a full disk fails with a clear E_IO error and leaves nothing behind.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { type CliRun, kill, MAIN, ROOT, runCli, startCli } from './helpers/cli.ts'
import { tempDir } from './helpers/temp.ts'

const work = tempDir('evalferry-crash-')
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex')

/** A DeepEval JSON Lines file of `records` goldens with Unicode, quotes and newlines. */
function writeGoldens(path: string, records: number): void {
  const fd = openSync(path, 'w')
  let batch = ''
  for (let i = 0; i < records; i++) {
    batch +=
      JSON.stringify({
        input: `Question ${i}: ¿qué pasa con "comillas", comas y | barras?\nSecond line ${'lorem ipsum '.repeat(20)}`,
        expected_output: `Answer ${i} ✓`,
        context: [`doc ${i}`, 'shared'],
        additional_metadata: { n: i, tags: ['a', 'b'] },
      }) + '\n'
    if (batch.length > 1 << 20) {
      writeSync(fd, batch)
      batch = ''
    }
  }
  writeSync(fd, batch)
  closeSync(fd)
}

/** A small deterministic generator (mulberry32), so the kill moments repeat run after run. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const KILLS = 10

test('a conversion killed at random moments leaves no output and an unchanged input', async (t) => {
  const input = join(work, 'goldens.jsonl')
  writeGoldens(input, 40_000)
  const inputHash = sha256(input)
  const outDir = join(work, 'out')
  mkdirSync(outDir)
  const output = join(outDir, 'goldens.json')
  const args = ['convert', input, '--from', 'deepeval', '--to', 'deepeval', '-o', output, '--quiet']

  // One full run measures how long a conversion takes, so the kills land all through it.
  const full = await runCli(args)
  assert.equal(full.code, 0, full.stderr)
  const fullHash = sha256(output)
  rmSync(output)

  const random = seeded(20240601)
  const moments: number[] = []
  let leftovers = 0
  let finished = 0
  for (let k = 0; k < KILLS; k++) {
    const delay = Math.round(200 + random() * Math.max(full.ms - 200, 100))
    const child = startCli(args)
    await new Promise((r) => setTimeout(r, delay))
    kill(child.pid)
    const result = await child.done
    moments.push(delay)
    if (result.code === 0) {
      // It finished before the signal: the output is whole, never partial.
      assert.equal(sha256(output), fullHash)
      rmSync(output)
      finished++
      continue
    }
    assert.equal(result.signal, 'SIGKILL')
    if (existsSync(output)) {
      // The signal came after the rename, before the process ended: the output is whole.
      assert.equal(sha256(output), fullHash, `killed after ${delay} ms: an output, and not the whole one`)
      rmSync(output)
      finished++
      continue
    }
    assert.equal(sha256(input), inputHash, 'the input is unchanged')
    leftovers = Math.max(leftovers, readdirSync(outDir).length)
  }
  t.diagnostic(`${KILLS} kills at ${moments.join(', ')} ms into a ${full.ms} ms conversion (${finished} had written their whole output first); at most ${leftovers} temporary left by killed runs`)

  const next = await runCli(args)
  assert.equal(next.code, 0, next.stderr)
  assert.equal(sha256(output), fullHash, 'the next run writes the whole output')
  assert.deepEqual(readdirSync(outDir), ['goldens.json'], 'the next run leaves no temporary and clears those of killed runs')
  assert.equal(sha256(input), inputHash)
})

/** Waits until `dir` holds a temporary of a conversion under way. */
async function untilTemporaryIn(dir: string): Promise<void> {
  for (let waited = 0; !readdirSync(dir).some((n) => n.endsWith('.evalferry-tmp')); waited += 20) {
    if (waited > 30_000) throw new Error(`no temporary appeared in ${dir}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Runs evalferry with `args`, sends it `signal` once `dir` (made here) holds a temporary of its, and gives how it ended. */
async function interruptedIn(dir: string, args: string[], signal: NodeJS.Signals): Promise<CliRun> {
  mkdirSync(dir)
  const run = startCli(args)
  await untilTemporaryIn(dir)
  process.kill(run.pid, signal)
  return run.done
}

test('what a killed batch left of its rejects (a share, and a share being written) is cleared by the next run', async () => {
  const dir = join(work, 'killed-shares')
  mkdirSync(dir)
  const dead = spawnSync(process.execPath, ['-e', 'process.pid']).pid!
  const leftovers = [`.rej.jsonl.${dead}.share-0.evalferry-tmp`, `..rej.jsonl.${dead}.share-1.evalferry-tmp.${dead}.0a1b2c3d.evalferry-tmp`]
  for (const name of leftovers) writeFileSync(join(dir, name), '{"error": "old"}\n')
  const input = join(work, 'shares-input.jsonl')
  writeGoldens(input, 10)
  const run = await runCli(['convert', input, '--from', 'deepeval', '--to', 'deepeval', '-o', join(dir, 'out.jsonl'), '--on-error', 'skip', '--rejects', join(dir, 'rej.jsonl'), '--quiet'])
  assert.equal(run.code, 0, run.stderr)
  assert.deepEqual(readdirSync(dir).sort(), ['out.jsonl', 'rej.jsonl'])
})

test('a conversion interrupted by Ctrl-C or SIGTERM removes what it began, in worker threads too', async () => {
  const input = join(work, 'interrupted.jsonl')
  writeGoldens(input, 40_000)
  const inputHash = sha256(input)
  const single = join(work, 'interrupted-single')
  const first = await interruptedIn(single, ['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', join(single, 'out.yaml'), '--on-error', 'skip', '--rejects', join(single, 'rejects.jsonl'), '--report', join(single, 'report.json')], 'SIGINT')
  assert.equal(first.code, 130, first.stderr)
  assert.equal(first.stderr, 'evalferry: interrupted (SIGINT); no file left unfinished\n')
  assert.deepEqual(readdirSync(single), [])
  // Standard output cannot be taken back, and the message says so.
  const piped = join(work, 'interrupted-stdout')
  const third = await interruptedIn(piped, ['convert', input, '--from', 'deepeval', '--to', 'evalcase', '--to-container', 'jsonl', '--on-error', 'skip', '--rejects', join(piped, 'rejects.jsonl')], 'SIGINT')
  assert.equal(third.code, 130, third.stderr)
  assert.equal(third.stderr, 'evalferry: interrupted (SIGINT); no file left unfinished, but what went to standard output stops where the conversion did\n')
  assert.deepEqual(readdirSync(piped), [])

  const batch = join(work, 'interrupted-batch')
  const second = join(work, 'interrupted-2.jsonl')
  writeGoldens(second, 40_000)
  const result = await interruptedIn(batch, ['convert', input, second, '--from', 'deepeval', '--to', 'evalcase', '-o', batch, '--jobs', '2', '--on-error', 'skip', '--rejects', join(batch, 'rejects.jsonl')], 'SIGTERM')
  assert.equal(result.code, 143, result.stderr)
  // The workers stopped under the batch fail it; that failure is the interruption's, not told as an error of its own.
  assert.equal(result.stderr, 'evalferry: interrupted (SIGTERM); no file left unfinished\n')
  assert.deepEqual(readdirSync(batch).filter((n) => n.startsWith('.')), [], 'no temporary and no share of the rejects is left')
  assert.equal(sha256(input), inputHash)
})

test('a prefetch interrupted while it writes its rewritten dataset removes what it began', async () => {
  const input = join(work, 'to-rewrite.jsonl')
  writeGoldens(input, 40_000)
  const inputHash = sha256(input)
  const out = join(work, 'interrupted-rewrite')
  const result = await interruptedIn(out, ['prefetch', input, '--from', 'deepeval', '--rewrite', join(out, 'rewritten.jsonl'), '--cache-dir', join(work, 'rewrite-cache')], 'SIGINT')
  assert.equal(result.code, 130, result.stderr)
  assert.deepEqual(readdirSync(out), [])
  assert.equal(sha256(input), inputHash)
})

test('writing into a full disk fails with a clear error and leaves nothing behind', async (t) => {
  const mount = join(work, 'full')
  mkdirSync(mount)
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount], { stdio: 'ignore' })
  } catch {
    t.skip('mounting a 1 MB tmpfs needs root (mount -t tmpfs)')
    return
  }
  try {
    const input = join(work, 'two-mb.jsonl')
    writeGoldens(input, 6000)
    const inputHash = sha256(input)
    const output = join(mount, 'cases.yaml')
    const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evalcase', '-o', output])
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stderr, /^evalferry: \S*cases\.yaml: cannot be written: no space left on device\n$/)
    assert.doesNotMatch(result.stderr, /\n\s+at |internal error/)
    assert.deepEqual(readdirSync(mount), [], 'nothing left on the full disk')
    assert.equal(sha256(input), inputHash)
  } finally {
    execFileSync('umount', [mount])
  }
})

test('a write the file system refuses after taking it fails the conversion, however small the output', () => {
  // A file size limit (ulimit -f, in KiB) makes the write past it fail with EFBIG after the stream took it, as a full disk does.
  const dir = join(work, 'size-limit')
  mkdirSync(dir)
  const input = join(dir, 'goldens.jsonl')
  writeGoldens(input, 60)
  const inputHash = sha256(input)
  const output = join(dir, 'cases.jsonl')
  writeFileSync(output, '{"keep":"me"}\n')
  const report = join(dir, 'report.json')
  const limited = (args: string[]) =>
    spawnSync('bash', ['-c', 'ulimit -f 8; exec "$@"', 'bash', process.execPath, '--import', 'tsx', MAIN, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })
  const run = limited(['convert', input, '--from', 'deepeval', '--to', 'evals', '-o', output, '--report', report])
  assert.equal(run.status, 1, run.stderr)
  assert.equal(run.stderr, `evalferry: ${output}: cannot be written: file too large\n`)
  assert.equal(readFileSync(output, 'utf8'), '{"keep":"me"}\n', 'the file it would have replaced is untouched')
  assert.deepEqual(readdirSync(dir).sort(), ['cases.jsonl', 'goldens.jsonl', 'report.json'], 'no temporary left')
  assert.deepEqual(JSON.parse(readFileSync(report, 'utf8')).failed, { message: `${output}: cannot be written: file too large`, code: 'E_IO', location: { file: output } })
  assert.equal(sha256(input), inputHash)
  // Under the limit, the same run writes its output and report.
  const small = join(dir, 'small.jsonl')
  writeGoldens(small, 3)
  const fits = limited(['convert', small, '--from', 'deepeval', '--to', 'evals', '-o', output, '--report', report])
  assert.equal(fits.status, 0, fits.stderr)
  assert.equal(readFileSync(output, 'utf8').split('\n').length, 4)
  assert.equal(JSON.parse(readFileSync(report, 'utf8')).records.written, 3)
})

test('a device that refuses the last write fails the conversion', async () => {
  const input = join(work, 'three.jsonl')
  writeGoldens(input, 3)
  const result = await runCli(['convert', input, '--from', 'deepeval', '--to', 'evals', '--to-container', 'jsonl', '-o', '/dev/full'])
  assert.equal(result.code, 1, result.stderr)
  assert.equal(result.stderr, 'evalferry: /dev/full: cannot be written: no space left on device\n')
})
