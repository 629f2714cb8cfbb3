import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { AtomicFile, rangeSource, StreamSink, textSource } from '../src/io.ts'
import { tempDir } from './helpers/temp.ts'
import type { EvalferryError } from '../src/errors.ts'
import type { ByteSource } from '../src/codecs/types.ts'

test('a file\'s text arrives whole and exact, in pieces of at most 48 KiB, across reads of several pieces and within a range', async () => {
  const dir = tempDir()
  // Characters of one to four bytes, so that pieces and reads end inside characters; 1 MB in all.
  const unit = 'a,"b ü"\n東京 🎉 xy\r\n'
  const text = unit.repeat(Math.ceil(1_000_000 / Buffer.byteLength(unit)))
  const path = join(dir, 'text.csv')
  writeFileSync(path, text)
  const bytes = Buffer.from(text)
  // A piece's text is at most 48 KiB of the file, and a character carried over from the piece before.
  const mostBytes = (48 << 10) + 3
  const collect = async (source: ByteSource) => {
    const pieces: string[] = []
    for await (const piece of source) {
      assert.equal(typeof piece, 'string')
      assert.ok(Buffer.byteLength(piece) <= mostBytes, `a piece of ${Buffer.byteLength(piece)} bytes`)
      pieces.push(piece as string)
    }
    return pieces
  }
  const whole = await collect(textSource(path))
  assert.equal(whole.join(''), text)
  assert.ok(whole.length >= Math.ceil(bytes.length / (48 << 10)), `${whole.length} pieces`)
  // A range from the start of a unit inside the first read to one inside a later read.
  const unitBytes = Buffer.byteLength(unit)
  const start = unitBytes * 3000
  const end = unitBytes * 39_000
  const ranged = await collect(rangeSource(path, { start, end }, { prefix: 'head\n' }))
  assert.equal(ranged.join(''), 'head\n' + bytes.subarray(start, end).toString('utf8'))
})

test('StreamSink calls back for bytes handed over as they are only once the stream has written them, and never for a failed write', async () => {
  const finish: (() => void)[] = []
  const held = new Writable({
    highWaterMark: 1 << 20,
    write(_chunk: Buffer, _encoding, done) {
      finish.push(done)
    },
  })
  const sink = new StreamSink(held, 256)
  const written: string[] = []
  await sink.write(Buffer.alloc(1000, 1), () => written.push('first'))
  await sink.write('text')
  await sink.write(Buffer.alloc(1000, 2), () => written.push('second'))
  assert.deepEqual(written, [], 'nothing is written yet')
  finish.shift()!()
  await new Promise((settled) => setImmediate(settled))
  assert.deepEqual(written, ['first'])
  while (finish.length) finish.shift()!()
  await new Promise((settled) => setImmediate(settled))
  assert.deepEqual(written, ['first', 'second'])

  const failing = new Writable({ write: (_chunk, _encoding, done) => done(new Error('disk full')) })
  failing.on('error', () => {})
  let called = false
  await new StreamSink(failing, 256).write(Buffer.alloc(10), () => (called = true))?.catch(() => {})
  await new Promise((settled) => setImmediate(settled))
  assert.equal(called, false)
})

test('StreamSink: writes that fit its buffer return nothing to await; with a slow stream, text and bytes of every size arrive whole and in order', async () => {
  const received: Buffer[] = []
  // A stream that takes each piece a tick later and asks the writer to wait past a few bytes.
  const slow = new Writable({
    highWaterMark: 64,
    write(chunk: Buffer, _encoding, done) {
      received.push(Buffer.from(chunk))
      setImmediate(done)
    },
  })
  const sink = new StreamSink(slow, 256)
  const pieces: (string | Uint8Array)[] = []
  for (let i = 0; i < 600; i++) {
    if (i % 7 === 0) pieces.push(Buffer.from(`<bytes ${i}>`))
    else if (i % 11 === 0) pieces.push(`${i}: ${'long ü '.repeat(200)}\n`) // more than the buffer holds
    else pieces.push(`${i}: 東京 "${'x'.repeat(i % 40)}"\n`)
  }
  let waited = 0
  let returnedNothing = 0
  for (const piece of pieces) {
    const pending = sink.write(piece)
    if (pending) {
      waited++
      await pending
    } else returnedNothing++
  }
  await sink.flush()
  await new Promise<void>((done) => slow.end(done))
  const expected = Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)))
  assert.ok(Buffer.concat(received).equals(expected))
  assert.ok(returnedNothing > 300, `most small writes only fill the buffer (${returnedNothing})`)
  assert.ok(waited > 50, `full buffers, bytes and long text wait (${waited})`)
})

for (const [streamHolds, mostBuffers] of [
  [64, 4],
  // A file's stream holds 1 MiB before it asks to drain: many full buffers at once, each kept to fill again.
  [4096, 4096 / 256 + 2],
] as const) {
  test(`StreamSink fills a buffer again only once the stream has called back for it, and does fill it again (a stream that holds ${streamHolds} bytes)`, async () => {
    let held = 0
    // Each buffer by its memory and its place in it: small buffers share the memory of Node's pool.
    const buffers = new Set<string>()
    const memories = new Map<ArrayBufferLike, number>()
    const received: Buffer[] = []
    // A stream that holds each piece by reference until it calls back: a buffer filled again too soon would change under it.
    const holding = new Writable({
      highWaterMark: streamHolds,
      write(chunk: Buffer, _encoding, done) {
        const copy = Buffer.from(chunk)
        if (!memories.has(chunk.buffer)) memories.set(chunk.buffer, memories.size)
        buffers.add(`${memories.get(chunk.buffer)}:${chunk.byteOffset}`)
        setImmediate(() => {
          if (!chunk.equals(copy)) held++
          received.push(copy)
          done()
        })
      },
    })
    const sink = new StreamSink(holding, 256)
    const lines = Array.from({ length: 2000 }, (_, i) => `${i}: ${'ü'.repeat(i % 50)}\n`)
    for (const line of lines) await sink.write(line)
    await sink.flush()
    await new Promise<void>((done) => holding.end(done))
    assert.equal(Buffer.concat(received).toString('utf8'), lines.join(''))
    assert.equal(held, 0, 'no piece changed while the stream held it')
    assert.ok(received.length > 100, `${received.length} pieces`)
    assert.ok(buffers.size <= mostBuffers, `${received.length} pieces were written from ${buffers.size} buffers`)
  })
}

test('AtomicFile: a file written past several background flushes appears whole on commit; an aborted one leaves nothing and the old file as it was', async () => {
  const dir = tempDir('evalferry-io-')
  try {
    const target = join(dir, 'out.jsonl')
    const line = (i: number): string => `{"n":${i},"text":"${'é'.repeat(i % 300)}"}\n`
    const file = await AtomicFile.create(target)
    let expected = ''
    // About 20 MB, in pieces of every size the sink sees: small text, and bytes.
    for (let i = 0; expected.length < 12_000_000; i++) {
      const piece = line(i)
      expected += piece
      await file.sink.write(i % 50 === 0 ? Buffer.from(piece) : piece)
    }
    assert.deepEqual(await readdir(dir).then((names) => names.filter((n) => n === 'out.jsonl')), [], 'nothing at the target before commit')
    await file.commit()
    assert.ok((await readFile(target)).equals(Buffer.from(expected)))
    assert.deepEqual(await readdir(dir), ['out.jsonl'])

    const aborted = await AtomicFile.create(target)
    for (let i = 0; i < 60_000; i++) await aborted.sink.write(line(i))
    await aborted.abort()
    assert.deepEqual(await readdir(dir), ['out.jsonl'], 'no temporary is left')
    assert.ok((await readFile(target)).equals(Buffer.from(expected)), 'the old file is untouched')
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

test('AtomicFile writes through a link and into a pipe, keeps a replaced file\'s mode, and refuses a read-only file', async () => {
  const dir = tempDir('evalferry-atomic-targets-')
  const write = async (path: string, text: string) => {
    const file = await AtomicFile.create(path)
    await file.sink.write(text)
    await file.commit()
  }
  try {
    // A link to a file: the file gets the text, and the link stays a link.
    writeFileSync(join(dir, 'real.jsonl'), 'old\n')
    symlinkSync('real.jsonl', join(dir, 'link.jsonl'))
    await write(join(dir, 'link.jsonl'), 'new\n')
    assert.equal(lstatSync(join(dir, 'link.jsonl')).isSymbolicLink(), true)
    assert.equal(readFileSync(join(dir, 'real.jsonl'), 'utf8'), 'new\n')
    // A link to a file not made yet makes that file.
    symlinkSync('later.jsonl', join(dir, 'dangling.jsonl'))
    await write(join(dir, 'dangling.jsonl'), 'made\n')
    assert.deepEqual([lstatSync(join(dir, 'dangling.jsonl')).isSymbolicLink(), readFileSync(join(dir, 'later.jsonl'), 'utf8')], [true, 'made\n'])

    // The mode of the file replaced stays; a file no one may write is not replaced.
    writeFileSync(join(dir, 'private.jsonl'), 'old\n')
    chmodSync(join(dir, 'private.jsonl'), 0o600)
    await write(join(dir, 'private.jsonl'), 'new\n')
    assert.equal(statSync(join(dir, 'private.jsonl')).mode & 0o777, 0o600)
    writeFileSync(join(dir, 'locked.jsonl'), 'keep\n')
    chmodSync(join(dir, 'locked.jsonl'), 0o444)
    await assert.rejects(AtomicFile.create(join(dir, 'locked.jsonl')), (error: EvalferryError) => {
      assert.equal(error.message, 'cannot be written: it is read-only (mode 444); make it writable to replace it')
      assert.deepEqual(error.location, { file: join(dir, 'locked.jsonl') })
      return true
    })
    assert.equal(readFileSync(join(dir, 'locked.jsonl'), 'utf8'), 'keep\n')

    // A named pipe is written into, and stays a pipe.
    const fifo = join(dir, 'pipe.jsonl')
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0)
    const reader = spawn('cat', [fifo])
    let read = ''
    reader.stdout.on('data', (chunk: Buffer) => (read += chunk.toString()))
    const ended = new Promise((done) => reader.on('close', done))
    await write(fifo, '{"a": 1}\n')
    await ended
    assert.equal(read, '{"a": 1}\n')
    assert.equal(lstatSync(fifo).isFIFO(), true)
    assert.deepEqual((await readdir(dir)).filter((f) => f.includes('evalferry-tmp')), [])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
