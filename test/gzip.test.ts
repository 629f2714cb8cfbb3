/** gzip-compressed datasets: read whatever their name, written so when named `.gz`, in every container. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { convert, read } from '../src/index.ts'
import { textSource } from '../src/io.ts'
import { locateRecords } from '../src/parallel.ts'
import { containerOf, extensionOf } from '../src/codecs/index.ts'
import { ROOT, runCli, SHARED_FIXTURES } from './helpers/cli.ts'
import { tempDir } from './helpers/temp.ts'

const dir = tempDir('evalferry-gzip-')
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

const fixture = (path: string) => join(SHARED_FIXTURES, path)
const FIXTURES = [
  ['deepeval/saveas-single_turn.json', 'deepeval', 'evalcase'],
  ['deepeval/saveas-multi_turn.jsonl', 'deepeval', 'langsmith'],
  ['deepeval/repo-goldens.csv', 'deepeval', 'hf'],
  ['evalcase/agentv-2026-02/composite--dataset.yaml', 'evalcase', 'deepeval'],
  ['hf/viewer-first-rows-image-column.json', 'hf', 'evals'],
] as const

/** `bytes` gzip-compressed into `name` in the test's directory. */
function gzipped(name: string, bytes: Buffer | string): string {
  const path = join(dir, name)
  writeFileSync(path, gzipSync(bytes))
  return path
}

test('a gzip-compressed dataset converts as the dataset itself does, in every text container', async () => {
  for (const [path, from, to] of FIXTURES) {
    const plainOut = join(dir, `plain-${to}.out`)
    const name = path.split('/').pop()!
    const compressed = gzipped(`${name}.gz`, readFileSync(fixture(path)))
    assert.equal(containerOf(compressed), containerOf(path))
    const ext = { evalcase: '.yaml', langsmith: '.jsonl', hf: '.jsonl', deepeval: '.json', evals: '.json' }[to]
    const expected = await convert({ input: fixture(path), output: plainOut + ext, from, to })
    const report = await convert({ input: compressed, output: join(dir, `from-gz-${to}${ext}`), from, to })
    assert.deepEqual(report.records, expected.records, path)
    assert.deepEqual(report.carried, expected.carried, path)
    assert.equal(readFileSync(join(dir, `from-gz-${to}${ext}`), 'utf8'), readFileSync(plainOut + ext, 'utf8'), path)
    // The format is detected from the text inside.
    const detected = await runCli(['detect', compressed, '--json'])
    assert.equal(detected.code, 0, detected.stderr)
    assert.equal(JSON.parse(detected.stdout)[0].format, from, path)
  }
})

test('an output named .gz is written gzip-compressed: its text is the uncompressed output, byte for byte, and it reads back', async () => {
  const input = fixture('deepeval/saveas-single_turn.json')
  for (const [ext, to] of [['.jsonl', 'langsmith'], ['.yaml', 'evalcase'], ['.csv', 'deepeval'], ['.parquet', 'hf']] as const) {
    const plain = join(dir, `written${ext}`)
    const compressed = `${plain}.gz`
    await convert({ input, output: plain, to })
    await convert({ input, output: compressed, to })
    const bytes = readFileSync(compressed)
    assert.deepEqual([bytes[0], bytes[1]], [0x1f, 0x8b], `${ext}.gz starts as gzip`)
    assert.ok(gunzipSync(bytes).equals(readFileSync(plain)), `${ext}.gz holds the ${ext} output`)
    const back: unknown[] = []
    for await (const c of read(compressed, { from: to })) back.push(c)
    const direct: unknown[] = []
    for await (const c of read(plain, { from: to })) direct.push(c)
    assert.equal(back.length, 2)
    assert.deepEqual(back, direct, ext)
  }
  // No temporary is left beside the outputs.
  assert.deepEqual(readdirSync(dir).filter((name) => name.includes('evalferry-tmp')), [])
})

test('the bytes tell gzip, not the name: a compressed file named .jsonl reads, a plain one named .jsonl.gz reads, standard input too', async () => {
  const text = readFileSync(fixture('deepeval/saveas-multi_turn.jsonl'))
  const expected: unknown[] = []
  for await (const c of read(fixture('deepeval/saveas-multi_turn.jsonl'), { from: 'deepeval' })) expected.push(c)
  const misnamed = gzipped('compressed.jsonl', text)
  const plainNamedGz = join(dir, 'plain.jsonl.gz')
  writeFileSync(plainNamedGz, text)
  for (const path of [misnamed, plainNamedGz]) {
    const cases: unknown[] = []
    for await (const c of read(path, { from: 'deepeval' })) cases.push(c)
    assert.equal(cases.length, expected.length, path)
    assert.deepEqual(JSON.stringify(cases), JSON.stringify(expected).replaceAll(JSON.stringify(fixture('deepeval/saveas-multi_turn.jsonl')), JSON.stringify(path)), path)
  }
  const piped = await runCli(['convert', '-', '--from', 'deepeval', '--from-container', 'jsonl', '--to', 'langsmith', '-o', '-'], {}, 60_000, gzipSync(text))
  assert.equal(piped.code, 0, piped.stderr)
  const direct = await runCli(['convert', fixture('deepeval/saveas-multi_turn.jsonl'), '--to', 'langsmith', '-o', '-'])
  assert.equal(piped.stdout, direct.stdout)
  assert.ok(piped.stdout.length > 100)
  // Members one after another (`cat a.gz b.gz`), as gunzip reads them: the records of both.
  const lines = text.toString('utf8').trimEnd().split('\n')
  const half = Math.ceil(lines.length / 2)
  const members = join(dir, 'members.jsonl.gz')
  writeFileSync(members, Buffer.concat([gzipSync(lines.slice(0, half).join('\n') + '\n'), gzipSync(lines.slice(half).join('\n') + '\n')]))
  let count = 0
  for await (const _ of read(members, { from: 'deepeval' })) count++
  assert.equal(count, expected.length)
})

test('a Parquet file compressed with gzip, from a file or standard input, is read as the file itself', async () => {
  const parquet = join(dir, 'rows.parquet')
  await convert({ input: fixture('deepeval/saveas-single_turn.json'), output: parquet, to: 'hf' })
  const compressed = gzipped('rows.parquet.gz', readFileSync(parquet))
  const fromFile = await runCli(['convert', compressed, '--to', 'hf', '-o', '-', '--to-container', 'jsonl'])
  const fromPipe = await runCli(['convert', '-', '--from', 'hf', '--from-container', 'parquet', '--to', 'hf', '-o', '-', '--to-container', 'jsonl'], {}, 60_000, readFileSync(compressed))
  const direct = await runCli(['convert', parquet, '--to', 'hf', '-o', '-', '--to-container', 'jsonl'])
  assert.equal(direct.code, 0, direct.stderr)
  assert.equal(direct.stdout.trimEnd().split('\n').length, 2)
  assert.equal(fromFile.stdout, direct.stdout, fromFile.stderr)
  assert.equal(fromPipe.stdout, direct.stdout, fromPipe.stderr)
})

test('a compressed file cut short or corrupt is an error naming it, exit 1, and no output is left', async () => {
  const whole = gzipSync(readFileSync(fixture('deepeval/repo-goldens.csv')))
  const cut = join(dir, 'cut.csv.gz')
  writeFileSync(cut, whole.subarray(0, whole.length - 40))
  const corrupt = Buffer.from(whole)
  // The CRC-32 at the end no longer matches the text.
  corrupt[corrupt.length - 6]! ^= 0xff
  const bad = join(dir, 'bad.csv.gz')
  writeFileSync(bad, corrupt)
  for (const [input, message] of [
    [cut, 'the file is gzip-compressed, and it ends before its compressed data does (the file was cut short)'],
    [bad, 'the file is gzip-compressed, and its compressed data is corrupt (incorrect data check)'],
  ] as const) {
    const output = join(dir, 'never.jsonl')
    const run = await runCli(['convert', input, '--from', 'deepeval', '--to', 'langsmith', '-o', output])
    assert.equal(run.code, 1)
    assert.equal(run.stderr, `evalferry: ${input}: ${message}\n`)
    assert.equal(existsSync(output), false)
    await assert.rejects(convert({ input, output, from: 'deepeval', to: 'langsmith' }), { code: 'E_PARSE', message, location: { file: input } })
  }
  const parquet = join(dir, 'cut.parquet.gz')
  writeFileSync(parquet, whole.subarray(0, 100))
  const run = await runCli(['convert', parquet, '--from', 'hf', '--to', 'langsmith', '-o', join(dir, 'never.jsonl')])
  assert.equal(run.stderr, `evalferry: ${parquet}: the file is gzip-compressed, and it ends before its compressed data does (the file was cut short)\n`)
  assert.equal(run.code, 1)
})

test('compressed, a file has no records at byte offsets: parts and shards read it whole, and a progress bar counts the bytes of the file', async () => {
  const lines = Array.from({ length: 300 }, (_, i) => JSON.stringify({ inputs: { question: `q${i}` }, outputs: { answer: `a${i}` } }))
  const input = gzipped('examples.jsonl.gz', lines.join('\n') + '\n')
  assert.equal(await locateRecords(input, 'jsonl', (total) => [0, total]), undefined)
  const parts: string[] = []
  for (let i = 1; i <= 3; i++) {
    const run = await runCli(['convert', input, '--from', 'langsmith', '--to', 'langsmith', '-o', join(dir, 'shard.jsonl.gz'), '--shard', `${i}/3`, '--quiet'])
    assert.equal(run.code, 0, run.stderr)
    parts.push(gunzipSync(readFileSync(join(dir, `shard.part-${i}-of-3.jsonl.gz`))).toString('utf8'))
  }
  assert.deepEqual(parts.map((p) => p.trimEnd().split('\n').length), [100, 100, 100])
  assert.deepEqual(parts.join('').trimEnd().split('\n').map((l) => JSON.parse(l).inputs.question), lines.map((_, i) => `q${i}`))
  const progress = { bytes: 0 }
  let text = ''
  for await (const chunk of textSource(input, progress)) text += chunk
  assert.equal(text, lines.join('\n') + '\n')
  assert.equal(progress.bytes, readFileSync(input).length)
})

test('a batch keeps compression: a.json.gz gives a.yaml.gz; an evalcase JSON Lines output .jsonl.gz has its sidecar beside it as .yaml', async () => {
  const inputs = join(dir, 'batch-in')
  const out = join(dir, 'batch-out')
  mkdirSync(inputs)
  writeFileSync(join(inputs, 'a.json.gz'), gzipSync(readFileSync(fixture('deepeval/saveas-single_turn.json'))))
  writeFileSync(join(inputs, 'b.json'), readFileSync(fixture('deepeval/saveas-single_turn.json')))
  const run = await runCli(['convert', inputs, '--to', 'evalcase', '-o', out + '/', '--quiet'])
  assert.equal(run.code, 0, run.stderr)
  assert.deepEqual(readdirSync(out).sort(), ['a.yaml.gz', 'b.yaml'])
  assert.equal(gunzipSync(readFileSync(join(out, 'a.yaml.gz'))).toString('utf8'), readFileSync(join(out, 'b.yaml'), 'utf8'))
  assert.equal(extensionOf('x/cases.JSONL.GZ'), '.JSONL.GZ')

  const yaml = fixture('evalcase/agentv-2026-02/basic--dataset.yaml')
  const cases = join(dir, 'agentv.jsonl.gz')
  const converted = await runCli(['convert', yaml, '--to', 'evalcase', '-o', cases, '--quiet'])
  assert.equal(converted.code, 0, converted.stderr)
  assert.ok(existsSync(join(dir, 'agentv.yaml')), 'the sidecar of agentv.jsonl.gz is agentv.yaml')
  const back = join(dir, 'agentv-back.yaml')
  const again = await runCli(['convert', cases, '--to', 'evalcase', '-o', back, '--quiet'])
  assert.equal(again.code, 0, again.stderr)
  const direct = join(dir, 'agentv-direct.yaml')
  await runCli(['convert', yaml, '--to', 'evalcase', '-o', direct, '--quiet'])
  assert.equal(readFileSync(back, 'utf8'), readFileSync(direct, 'utf8'))

  // A folder as AgentV lays it out, its JSON Lines dataset compressed: the sidecar is read with it, not as a dataset of its own.
  const folder = join(dir, 'agentv-folder')
  mkdirSync(folder)
  const real = fixture('evalcase/agentv-2026-02')
  writeFileSync(join(folder, 'basic-jsonl--dataset.jsonl.gz'), gzipSync(readFileSync(join(real, 'basic-jsonl--dataset.jsonl'))))
  writeFileSync(join(folder, 'basic-jsonl--dataset.yaml'), readFileSync(join(real, 'basic-jsonl--dataset.yaml')))
  for (const input of [folder, join(folder, '*')]) {
    const folderOut = join(dir, `agentv-folder-out-${input === folder ? 'dir' : 'glob'}`)
    const run = await runCli(['convert', input, '--to', 'evals', '-o', folderOut + '/', '--quiet'])
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(readdirSync(folderOut), ['basic-jsonl--dataset.jsonl.gz'])
  }
  const sidecarOnly = await runCli(['convert', join(folder, '*.yaml'), '--to', 'evals', '-o', join(dir, 'none') + '/'])
  assert.equal(sidecarOnly.code, 2)
  assert.match(sidecarOnly.stderr, /no dataset files in .*: only the sidecars of JSON Lines datasets not named/)
})

test('convert --help says that compressed files are read and written', async () => {
  const help = await runCli(['convert', '--help'])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /A gzip-compressed input is read as it is;\nan output named \.gz \(cases\.jsonl\.gz\) is written compressed\./)
})

test('a compressed YAML beside a JSON Lines output is never overwritten by its sidecar; .tsv.gz is a table as .tsv is; twice compressed or cut to its magic number, the error says so', async () => {
  const folder = join(dir, 'beside')
  mkdirSync(folder)
  const cases = gzipSync(readFileSync(fixture('evalcase/agentv-2026-02/basic--dataset.yaml')))
  writeFileSync(join(folder, 'cases.yaml'), cases)
  const run = await runCli(['convert', fixture('evalcase/agentv-2026-02/basic--dataset.yaml'), '--to', 'evalcase', '-o', join(folder, 'cases.jsonl')])
  assert.equal(run.code, 2, run.stderr)
  assert.match(run.stderr, /cases\.yaml holds cases, and would be overwritten by the sidecar of .*cases\.jsonl/)
  assert.ok(readFileSync(join(folder, 'cases.yaml')).equals(cases))

  const tsv = 'input\texpected_output\nWhat?\tThat\n'
  writeFileSync(join(dir, 'q.tsv'), tsv)
  writeFileSync(join(dir, 'q.tsv.gz'), gzipSync(tsv))
  const formats = await Promise.all(['q.tsv', 'q.tsv.gz'].map(async (name) => JSON.parse((await runCli(['detect', join(dir, name), '--json'])).stdout)[0].format))
  assert.deepEqual(formats, ['csv', 'csv'])

  const twice = gzipped('twice.jsonl.gz', gzipSync('{"input": "a"}\n'))
  const magic = join(dir, 'magic.jsonl.gz')
  writeFileSync(magic, Buffer.from([0x1f, 0x8b]))
  for (const [input, message] of [
    [twice, 'the file is gzip-compressed twice (a .gz of a .gz); decompress it once, then convert it'],
    [magic, 'the file is gzip-compressed, and it ends before its compressed data does (the file was cut short)'],
  ] as const) {
    const failed = await runCli(['convert', input, '--from', 'evals', '--to', 'deepeval', '-o', join(dir, 'never.json')])
    assert.deepEqual([failed.code, failed.stderr], [1, `evalferry: ${input}: ${message}\n`])
  }
})

test('interrupted while it copies a piped Parquet file to read it from its end, the command removes the copy', { timeout: 60_000 }, async () => {
  const { spawn } = await import('node:child_process')
  const { tmpdir } = await import('node:os')
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), 'convert', '-', '--from', 'hf', '--from-container', 'parquet', '--to', 'hf', '-o', join(dir, 'never.jsonl')], { cwd: ROOT, stdio: ['pipe', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()))
  const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
  // Part of a file, the pipe left open: the copy is under way.
  child.stdin!.write(gzipSync(Buffer.alloc(1 << 20, 'x')))
  const copies = () => readdirSync(tmpdir()).filter((name) => name.startsWith(`evalferry-tmp-${child.pid}-`))
  for (let waited = 0; copies().length === 0 && waited < 30_000; waited += 50) await new Promise((r) => setTimeout(r, 50))
  assert.equal(copies().length, 1, 'the copy was begun')
  child.kill('SIGINT')
  assert.equal(await exited, 130, stderr)
  assert.match(stderr, /interrupted \(SIGINT\); no file left unfinished/)
  assert.deepEqual(copies(), [])
})

test('reading Parquet moves a progress bar: its bytes reach the size of the file, a compressed one included', async () => {
  const parquet = join(dir, 'progress.parquet')
  const cases = Array.from({ length: 3000 }, (_, i) => ({ id: `p${i}`, input: [{ role: 'user' as const, content: `question ${i}` }] }))
  const { write } = await import('../src/index.ts')
  await write(cases, parquet, { to: 'hf' })
  const compressed = gzipped('progress.parquet.gz', readFileSync(parquet))
  for (const path of [parquet, compressed]) {
    const progress = { records: 0, bytes: 0 }
    const seen: number[] = []
    let count = 0
    for await (const _ of read(path, { from: 'hf', progress })) {
      if (count++ % 1000 === 999) seen.push(progress.bytes)
    }
    assert.equal(count, 3000)
    assert.equal(progress.bytes, readFileSync(path).length, path)
    // It rose as the row groups (1,000 rows each) were read: told after each batch of rows.
    assert.ok(seen[1]! > seen[0]! && seen[2]! > seen[1]! && seen[2]! < progress.bytes, `${seen} of ${progress.bytes}`)
  }
})
