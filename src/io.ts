/** Files in and out: text sources, buffered sinks with back-pressure, and atomic outputs. */
import { createReadStream, createWriteStream, fdatasync, statSync, type Stats, type WriteStream } from 'node:fs'
import { chmod, lstat, mkdir, mkdtemp, open, readdir, readlink, realpath, rename, rm, stat, type FileHandle } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { pipeline } from 'node:stream/promises'
import { pipeline as streamPipeline, Readable, type Writable } from 'node:stream'
import { createGunzip, createGzip, type Gzip } from 'node:zlib'
import { basename, dirname, join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import { once, setMaxListeners } from 'node:events'
import { DataError, EvalferryError, UsageError } from './errors.ts'
import { countNewlines, type ByteSource, type Sink } from './codecs/types.ts'

export const STDIO = '-'

/**
 * The text of a file (or standard input, `-`) as UTF-8 chunks, decoded across chunk boundaries.
 * Bytes that are not UTF-8 are an error naming the line, never silently replaced.
 */
export function textSource(path: string, progress?: { bytes: number }): ByteSource {
  const stream = path === STDIO ? (process.stdin as AsyncIterable<Buffer | string>) : fileBytes(path)
  return decodeUtf8(inflatedIfGzip(counted(stream, progress), path), path)
}

/** A file, or bytes [start, end) of it after `prefix` (see `rangeSource`), whose text is read; `line`: the file's line at `start`. */
export interface FileText {
  path: string
  range?: { start: number; end: number } | undefined
  prefix?: string | undefined
  line?: number | undefined
}

/** The text of a file: all of it (`textSource`), or its range after its prefix (`rangeSource`). */
export function fileText({ path, range, prefix, line }: FileText, progress?: { bytes: number }): ByteSource {
  return range ? rangeSource(path, range, { prefix, line, progress }) : textSource(path, progress)
}

/** The chunks of `stream`, counting their bytes into `progress` (the bytes read of the file, compressed or not). */
async function* counted(stream: AsyncIterable<Buffer | string>, progress?: { bytes: number }): AsyncGenerator<Buffer | string> {
  if (!progress) return yield* stream
  let bytes = 0
  for await (const chunk of stream) {
    bytes += chunk.length
    progress.bytes = bytes
    yield chunk
  }
}

/** Whether the file is named as gzip-compressed (`.gz`): it is written so; it is read so whatever its name. */
export function isGzipName(path: string): boolean {
  return /\.gz$/i.test(path)
}

/** `path` without a last `.gz`. */
export function withoutGzip(path: string): string {
  return isGzipName(path) ? path.slice(0, -3) : path
}

/** Whether `bytes` start as gzip's do: its magic number, which no UTF-8 text can start with (0x8b is no first byte). */
export function startsAsGzip(bytes: Uint8Array): boolean {
  return bytes[0] === 0x1f && bytes[1] === 0x8b
}

/**
 * `chunks`, inflated when they are gzip-compressed (told by their first bytes, whatever the file's
 * name, standard input too), else as they are.
 */
async function* inflatedIfGzip(chunks: AsyncIterable<Buffer | string>, path: string): AsyncGenerator<Buffer | string> {
  const iterator = chunks[Symbol.asyncIterator]()
  let closed = false
  try {
    let head: Buffer | string | undefined
    // Two bytes tell: standard input may give fewer in its first chunk.
    for (let next = await iterator.next(); ; next = await iterator.next()) {
      if (next.done) {
        closed = true
        if (head !== undefined) yield head
        return
      }
      const chunk = next.value
      head = head === undefined ? chunk : Buffer.concat([asBuffer(head), asBuffer(chunk)])
      if (head.length >= 2) break
    }
    if (typeof head === 'string' || !startsAsGzip(head)) {
      yield head
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value
      closed = true
      return
    }
    closed = true
    yield* inflated(head, iterator, path)
  } finally {
    if (!closed) await iterator.return?.()
  }
}

/** What zlib's failure to inflate `path` means, as an error naming the file. */
function gzipError(path: string, error: unknown): unknown {
  const { code, message } = error as NodeJS.ErrnoException
  if (error instanceof EvalferryError || !code?.startsWith('Z_')) return error
  const why = code === 'Z_BUF_ERROR' ? 'it ends before its compressed data does (the file was cut short)' : `its compressed data is corrupt (${message})`
  return new DataError('E_PARSE', `the file is gzip-compressed, and ${why}`, { file: path })
}

/** Whether the file at `path` starts as gzip does (see `startsAsGzip`). */
export async function fileStartsAsGzip(path: string): Promise<boolean> {
  const handle = await open(path, 'r')
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(2), 0, 2, 0)
    return bytesRead === 2 && startsAsGzip(buffer)
  } finally {
    await handle.close()
  }
}

function asBuffer(chunk: Buffer | string): Buffer {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
}

/** The gzip stream `head` then `rest` hold, inflated; its members one after another, as gunzip reads them. */
async function* inflated(head: Buffer, rest: AsyncIterator<Buffer | string>, path: string): AsyncGenerator<Buffer> {
  // Copies: a file's chunks are read into buffers used again for later chunks, and zlib works on them later.
  async function* copies(): AsyncGenerator<Buffer> {
    try {
      yield Buffer.from(head)
      for (let next = await rest.next(); !next.done; next = await rest.next()) yield Buffer.from(asBuffer(next.value))
    } finally {
      await rest.return?.()
    }
  }
  const source = Readable.from(copies())
  const gunzip = createGunzip()
  streamPipeline(source, gunzip, () => {})
  try {
    let first = true
    for await (const chunk of gunzip) {
      if (first && startsAsGzip(chunk as Buffer)) throw new DataError('E_PARSE', 'the file is gzip-compressed twice (a .gz of a .gz); decompress it once, then convert it', { file: path })
      first = false
      yield chunk as Buffer
    }
  } catch (error) {
    throw gzipError(path, error)
  } finally {
    gunzip.destroy()
    source.destroy()
  }
}

/**
 * 48 KiB: the text of a chunk, joined to the unfinished row before it, then stays under V8's
 * large-object size (128 KiB), so it is made in the young generation, whose pages are reused.
 * Text with any character past Latin-1 takes two bytes a character: at 64 KiB, a chunk's text
 * took up to 128 KiB alone, and each join took fresh pages from the kernel and gave them back
 * (100 MB of CSV: 34 000 page faults, not 26 000, and 5% more time). With 1 MiB chunks it was
 * 140 000 page faults, twice the peak memory, and more time, most of all with two conversions at once.
 */
const CHUNK_BYTES = 48 << 10

/**
 * Bytes read at a time: four chunks. Each read is handed to another thread and wakes it, which on
 * two busy cores takes a core from a conversion: a batch of 8 × 100 MB CSV on two cores, reading
 * 48 KiB at a time, took 10.3 to 12.5 s (3.4 to 3.8 s in the kernel), 192 KiB 9.3 to 11.6 s
 * (2.2 to 2.9 s), 384 KiB 9.8 to 11.9 s, and 1 MiB 11.8 s. On one core the read size made no
 * difference that showed.
 */
const READ_BYTES = 4 * CHUNK_BYTES

/**
 * A file's bytes (from `start` up to `end`, or on from where it is, for a pipe) in chunks of at
 * most `CHUNK_BYTES`, read `READ_BYTES` at a time into two buffers in turn, so that reading
 * allocates nothing per chunk and the next read runs while this one's chunks are used: a chunk is
 * valid until the next one is asked for.
 */
async function* fileBytes(path: string, range?: { start: number; end: number }): AsyncGenerator<Buffer> {
  let handle: FileHandle
  try {
    handle = await open(path, 'r')
  } catch (error) {
    throw ioError(path, error)
  }
  let reading: Promise<Buffer> | undefined
  try {
    const buffers = [Buffer.allocUnsafeSlow(READ_BYTES), Buffer.allocUnsafeSlow(READ_BYTES)]
    let position = range?.start ?? 0
    let turn = 0
    const readNext = (): Promise<Buffer> | undefined => {
      const want = range ? Math.min(READ_BYTES, range.end - position) : READ_BYTES
      if (want <= 0) return undefined
      const buffer = buffers[turn++ & 1]!
      const at = range ? position : null
      position += want
      const read = handle.read(buffer, 0, want, at).then(({ bytesRead }) => buffer.subarray(0, bytesRead))
      read.catch(() => {}) // a failure is met when the chunk is awaited, in its turn
      return read
    }
    reading = readNext()
    while (reading) {
      let chunk: Buffer
      try {
        chunk = await reading
      } catch (error) {
        throw ioError(path, error)
      }
      if (chunk.length === 0) break
      reading = readNext()
      for (let offset = 0; offset < chunk.length; offset += CHUNK_BYTES) yield chunk.subarray(offset, offset + CHUNK_BYTES)
    }
  } finally {
    await reading?.catch(() => {})
    await handle.close()
  }
}

/**
 * Bytes [start, end) of the file as UTF-8 text, after `prefix`; a range starts and ends between
 * characters. `line`: the file's line at `start`, for error messages.
 */
export async function* rangeSource(
  path: string,
  range: { start: number; end: number },
  at: { prefix?: string | undefined; line?: number | undefined; progress?: { bytes: number } | undefined } = {},
): AsyncGenerator<string> {
  if (at.prefix) yield at.prefix
  if (range.end > range.start) {
    yield* decodeUtf8(counted(fileBytes(path, range), at.progress), path, {
      line: at.line ?? 1,
      byte: range.start,
    })
  }
}

/** `from`: the line and byte offset in the file where the stream starts, for error messages. */
async function* decodeUtf8(
  stream: AsyncIterable<Buffer | string>,
  path: string,
  from = { line: 1, byte: 0 },
): AsyncGenerator<string> {
  // ignoreBOM keeps a leading byte-order mark in the text, where each codec skips it.
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
  let bytes = 0
  let lines = from.line
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    if (from.byte + bytes === 0 && buffer.length >= 2 && ((buffer[0] === 0xff && buffer[1] === 0xfe) || (buffer[0] === 0xfe && buffer[1] === 0xff))) {
      throw new DataError('E_PARSE', 'the file is UTF-16 (it starts with a UTF-16 byte-order mark); save it as UTF-8', { file: path, line: 1 })
    }
    if (from.byte + bytes === 0 && looksLikeUtf16(buffer)) {
      throw new DataError('E_PARSE', 'the file looks like UTF-16 without a byte-order mark (every other byte of its start is zero); save it as UTF-8', { file: path, line: 1 })
    }
    let text: string
    try {
      text = decoder.decode(buffer, { stream: true })
    } catch {
      throw invalidUtf8(path, buffer, from.byte + bytes, lines)
    }
    bytes += buffer.length
    lines += countNewlines(text)
    if (text) yield text
  }
  let rest: string
  try {
    rest = decoder.decode()
  } catch {
    throw new DataError('E_PARSE', 'invalid UTF-8: the file ends inside a multi-byte character', { file: path, line: lines })
  }
  if (rest) yield rest
}

/** Whether the first bytes are text in UTF-16: a zero byte in every other place, as ASCII text takes in UTF-16. */
function looksLikeUtf16(buffer: Buffer): boolean {
  const pairs = Math.min(buffer.length, 512) >> 1
  if (pairs < 2) return false
  let even = 0
  let odd = 0
  for (let i = 0; i < pairs; i++) {
    if (buffer[2 * i] === 0) even++
    if (buffer[2 * i + 1] === 0) odd++
  }
  return Math.max(even, odd) >= pairs * 0.4 && Math.min(even, odd) <= pairs * 0.05
}

const STRICT = new TextDecoder('utf-8', { fatal: true })

/** The error for a chunk that does not decode: the line and byte offset of its first bad byte. */
function invalidUtf8(path: string, buffer: Buffer, offset: number, line: number): DataError {
  // A sequence cut by the previous chunk's end is rare enough to report at this chunk's start.
  let at = 0
  while (at < buffer.length) {
    const b = buffer[at]!
    const size = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0
    if (size === 0 || at + size > buffer.length) break
    let ok = true
    for (let k = 1; k < size; k++) if ((buffer[at + k]! & 0xc0) !== 0x80) ok = false
    if (ok && size > 1) {
      try {
        STRICT.decode(buffer.subarray(at, at + size))
      } catch {
        ok = false // an overlong form or a surrogate
      }
    }
    if (!ok) break
    if (b === 0x0a) line++
    at += size
  }
  const byte = buffer[at]
  const what = byte === undefined ? 'a truncated character' : `byte 0x${byte.toString(16).padStart(2, '0')}`
  return new DataError('E_PARSE', `invalid UTF-8: ${what} at byte offset ${offset + at}; the file must be UTF-8`, { file: path, line })
}

/** Collects small writes into large ones and waits for the stream to drain. */
export class StreamSink implements Sink {
  // Text is encoded straight into one buffer: no joining of pieces, no second copy on the way out.
  private buffer: Buffer
  private size = 0
  /** Buffers the stream has written out, to be filled again. */
  private readonly spares: Buffer[] = []
  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly flushAt = 1 << 16,
    private readonly onError: (error: unknown) => unknown = (error) => error,
    /** Told the size of each piece handed to the stream. */
    private readonly onPush?: (bytes: number) => void,
  ) {
    this.buffer = Buffer.allocUnsafe(flushAt * 2)
  }

  /**
   * Bytes are handed to the stream as they are, not copied: `written`, when given, is called once
   * the stream has written them, after which their buffer may be used again.
   */
  write(chunk: string | Uint8Array, written?: () => void): Promise<void> | undefined {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    if (typeof chunk !== 'string' || this.size + chunk.length * 3 > this.buffer.length) return this.writeLarge(chunk, written)
    this.size += this.buffer.write(chunk, this.size, 'utf8')
    return this.size >= this.flushAt ? this.flush() : undefined
  }

  /** Bytes, or text that does not fit what is left of the buffer: what is buffered goes first. */
  private async writeLarge(chunk: string | Uint8Array, written?: () => void): Promise<void> {
    await this.flush()
    if (typeof chunk !== 'string' || chunk.length * 3 > this.buffer.length) await this.push(chunk, written)
    else this.size += this.buffer.write(chunk, this.size, 'utf8')
  }

  async flush(): Promise<void> {
    if (!this.size) return
    const full = this.buffer
    const bytes = full.subarray(0, this.size)
    // The stream keeps the written buffer until it is on disk, so the next writes take another:
    // one it has given back, else a new one. Every buffer given back is kept: a new one is made only
    // when none is, so there are never more than the stream holds before it asks to drain, and one
    // (a file holds 1 MiB: 14 buffers here). Keeping only two of them made 120 MB of garbage per 100 MB written.
    this.buffer = this.spares.pop() ?? Buffer.allocUnsafe(full.length)
    this.size = 0
    await this.push(bytes, () => this.spares.push(full))
  }

  private async push(chunk: string | Uint8Array, written?: () => void): Promise<void> {
    try {
      // A write the stream took earlier may have failed since (a full disk): nothing more is written.
      const failed = (this.stream as Partial<Writable>).errored
      if (failed) throw failed
      this.onPush?.(typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length)
      const taken = written
        ? this.stream.write(chunk, (error) => {
            if (!error) written()
          })
        : this.stream.write(chunk)
      if (!taken) await once(this.stream, 'drain')
    } catch (error) {
      throw this.onError(error)
    }
  }
}

/**
 * An output written to a temporary file beside the target and renamed into place on `commit`, so
 * a failed or killed conversion never leaves a half-written file or touches an existing one.
 */
export class AtomicFile {
  readonly sink: StreamSink
  private readonly stream: WriteStream | NodeJS.WritableStream
  /** Where an output named `.gz` is compressed on its way to `stream`. */
  private readonly gzip: Gzip | undefined
  /** Settles once the compressed bytes are all in `stream`, or it failed. */
  private readonly compressed: Promise<void> | undefined
  private readonly temp: string | undefined
  private done = false
  /** Bytes handed to the file since the last background flush began, and that flush while it runs. */
  private unsynced = 0
  private syncing: Promise<void> | undefined

  private constructor(
    readonly path: string,
    stream: WriteStream | NodeJS.WritableStream,
    temp: string | undefined,
    /** The rename's target: `path`, or the file a link at `path` names. */
    private readonly target = path,
  ) {
    this.stream = stream
    this.temp = temp
    if (path !== STDIO && isGzipName(path)) {
      // A failure of the file's stream destroys the compressor with it, so that a write waiting on it fails too.
      const gzip = createGzip()
      this.gzip = gzip
      this.compressed = new Promise<void>((done, fail) => streamPipeline(gzip, stream as Writable, (error) => (error ? fail(error) : done())))
      this.compressed.catch(() => {})
    }
    this.sink = new StreamSink(this.gzip ?? stream, undefined, (error) => writeError(path, error), temp ? (bytes) => this.pushed(bytes) : () => (this.sent = true))
  }

  /** Bytes of a stream output (standard output, a pipe, a device) have gone out: they cannot be taken back. */
  private sent = false

  /** Whether the output is a stream (standard output, a pipe, a device), which has no file to take back. */
  get isStream(): boolean {
    return this.temp === undefined
  }

  /** Whether a stream output has been handed any bytes, which it will not give back: it cannot be written again. */
  get hasSent(): boolean {
    return this.sent
  }

  /**
   * Every `SYNC_BYTES` handed to the file, what the disk has not taken yet is flushed in the
   * background, while the conversion goes on; the flush before the rename then waits only for the
   * last of it.
   */
  private pushed(bytes: number): void {
    this.unsynced += bytes
    const fd = (this.stream as WriteStream & { fd?: number | null }).fd
    if (this.unsynced < SYNC_BYTES || this.syncing || typeof fd !== 'number') return
    this.unsynced = 0
    this.syncing = new Promise<void>((done) => fdatasync(fd, () => done())).then(() => {
      this.syncing = undefined
    })
  }

  static async create(path: string): Promise<AtomicFile> {
    if (path === STDIO) {
      writesStdout = true
      // A closed pipe fails the awaited write (see EPIPE in the command line); the stream's own event needs a listener too.
      if (!process.stdout.listenerCount('error')) process.stdout.on('error', () => {})
      return new AtomicFile(path, process.stdout, undefined)
    }
    if (STDOUT_NAMES.has(path)) return AtomicFile.create(STDIO)
    if (stopping) return untilExit
    if (await isDirectory(path)) throw new EvalferryError('E_IO', 'cannot be written: it is a directory', { file: path })
    // A link is written through: the file it names is replaced, and the link stays a link.
    const target = await linkTarget(path)
    const existing = await statOf(target)
    if (existing && !existing.isFile()) {
      // A device or a pipe (/dev/null, a FIFO) is written into: there is no file to replace, nor one to leave unfinished.
      const stream = createWriteStream(target, { flags: 'w' })
      try {
        await once(stream, 'open')
      } catch (error) {
        throw writeError(path, error, true)
      }
      stream.on('error', () => {})
      return new AtomicFile(path, stream, undefined)
    }
    if (existing && (existing.mode & 0o222) === 0) {
      throw new EvalferryError('E_IO', `cannot be written: it is read-only (mode ${(existing.mode & 0o777).toString(8)}); make it writable to replace it`, { file: path })
    }
    const dir = dirname(resolve(target))
    const temp = join(dir, `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}${TEMP_SUFFIX}`)
    let stream: WriteStream
    try {
      await mkdir(dir, { recursive: true })
      await removeStaleTemps(dir, basename(target))
      // Interrupted while the directory was prepared: nothing is begun.
      if (stopping) return untilExit
      stream = createWriteStream(temp, { flags: 'wx', highWaterMark: 1 << 20 })
      const opened = once(stream, 'open')
      temporaries.set(temp, opened)
      await opened.catch((error: unknown) => {
        temporaries.delete(temp)
        throw error
      })
      // The file replaced keeps its permissions.
      if (existing) await chmod(temp, existing.mode & 0o7777)
    } catch (error) {
      throw writeError(path, error, true)
    }
    const file = new AtomicFile(path, stream, temp, target)
    stream.on('error', () => {}) // surfaced by the awaited write or close
    return file
  }

  async commit(): Promise<void> {
    await this.sink.flush()
    if (!this.temp) {
      // A device or pipe is closed; standard output stays open.
      if (this.stream !== process.stdout) {
        try {
          await this.end()
        } catch (error) {
          throw writeError(this.path, error)
        }
      }
      return
    }
    try {
      // The stream closes its file when it ends; a background flush must not outlive it.
      await this.syncing
      await this.end()
      // Make the bytes durable before the rename makes them visible.
      const handle = await open(this.temp, 'r+')
      try {
        await handle.sync()
      } finally {
        await handle.close()
      }
      if (stopping) return untilExit
      await rename(this.temp, this.target)
    } catch (error) {
      throw writeError(this.path, error)
    }
    temporaries.delete(this.temp)
    this.done = true
  }

  /** Ends the file's stream once all it took is written (and compressed, for `.gz`). */
  private async end(): Promise<void> {
    if (!this.gzip) return ended(this.stream as WriteStream)
    await ended(this.gzip)
    await this.compressed
  }

  /**
   * Gives the output up: a file's temporary is removed and the file left as it was. A stream has
   * nothing to take back: with `handOut`, what it was given and is still buffered goes out first, so
   * that its reader has every record written before a bad one (a compressed stream is cut, as is).
   */
  async abort(handOut = false): Promise<void> {
    if (this.done) return
    if (!this.temp && handOut && !this.gzip) {
      await this.sink.flush().catch(() => {})
      // A pipe or device is ended, not destroyed, so that the bytes it took are written before it closes.
      if (this.stream !== process.stdout) await this.end().catch(() => {})
    }
    this.gzip?.destroy()
    if (!this.temp) {
      if (this.stream !== process.stdout) (this.stream as WriteStream).destroy()
      return
    }
    this.done = true
    const stream = this.stream as WriteStream
    await this.syncing
    stream.destroy()
    await rm(this.temp, { force: true })
    temporaries.delete(this.temp)
  }
}

/**
 * Ends `stream` once all it took is written; rejects with the first write that failed, which may
 * have failed after the write call returned (a full disk), and so not reached the writer.
 */
function ended(stream: WriteStream | Gzip): Promise<void> {
  if (stream.errored) return Promise.reject(stream.errored)
  return new Promise<void>((res, rej) => stream.end((error?: Error | null) => (error ? rej(stream.errored ?? error) : res())))
}

const TEMP_SUFFIX = '.evalferry-tmp'
/** Names of standard output, which is written as `-` is: replacing them would replace the link, not write the output. */
const STDOUT_NAMES = new Set(['/dev/stdout', '/dev/fd/1', '/proc/self/fd/1'])

/** The file a symbolic link at `path` names (followed to the end), or `path` itself. */
async function linkTarget(path: string): Promise<string> {
  try {
    if (!(await lstat(path)).isSymbolicLink()) return path
  } catch {
    return path
  }
  try {
    return await realpath(path)
  } catch {
    // A link to a file not made yet: that file.
    return resolve(dirname(path), await readlink(path))
  }
}
/** See `AtomicFile.pushed`. */
const SYNC_BYTES = 8 << 20

/**
 * Removes the temporaries that killed conversions left beside `name` (SIGKILL leaves no chance to
 * clean up): those whose process id names no running process.
 */
async function removeStaleTemps(dir: string, name: string, alsoOwn = false): Promise<void> {
  // Without `alsoOwn`, the directory's entries as first read: a batch writing thousands of files
  // into one directory reads it once, not once a file. A temporary a conversion killed meanwhile
  // is removed by the next run.
  let entries: Promise<string[]> | undefined
  if (!alsoOwn) {
    entries = tempsByDir.get(dir)
    if (!entries) tempsByDir.set(dir, (entries = readdir(dir).then((names) => names.filter((n) => n.endsWith(TEMP_SUFFIX)), () => [])))
  }
  await removeLeftovers(dir, `.${name}.`, '.', TEMP_SUFFIX, alsoOwn, entries)
  // A temporary of a temporary (a batch's share of the rejects file, being written) begins with two dots.
  await removeLeftovers(dir, `..${name}.`, '.', TEMP_SUFFIX, alsoOwn, entries)
}

/** The temporaries' names in each directory this process writes into, read once (see `removeStaleTemps`). */
const tempsByDir = new Map<string, Promise<string[]>>()

/**
 * Removes the entries of `dir` named `<prefix><pid><separator>…<suffix>` whose process id names
 * no running process (and, with `alsoOwn`, this process's).
 */
async function removeLeftovers(dir: string, prefix: string, separator: string, suffix: string, alsoOwn = false, listed?: Promise<string[]>): Promise<void> {
  let entries: string[]
  try {
    entries = await (listed ?? readdir(dir))
  } catch {
    return
  }
  for (const entry of entries) {
    if (!entry.startsWith(prefix) || !entry.endsWith(suffix)) continue
    const pid = Number(entry.slice(prefix.length).split(separator)[0])
    const dead = pid === process.pid ? alsoOwn : !isRunning(pid)
    if (Number.isInteger(pid) && pid > 0 && dead) await rm(join(dir, entry), { recursive: true, force: true })
  }
}

const SCRATCH_PREFIX = 'evalferry-tmp-'

/**
 * A new directory of this process's in the temporary directory, for the files a conversion
 * stages there and removes when done (a copy of standard input, a dataset pulled from a service or
 * to be pushed to one). Those that killed conversions left (their process id names no running
 * process) are removed first, and an interrupted process removes its own.
 */
export async function scratchDir(): Promise<string> {
  const temp = tmpdir()
  await removeLeftovers(temp, SCRATCH_PREFIX, '-', '')
  return mkdtemp(join(temp, `${SCRATCH_PREFIX}${process.pid}-`))
}

/**
 * Standard input (or the file or named pipe `from`; with `inflate`, the gzip-compressed file it
 * names, inflated) copied whole to a file of its own in a scratch directory, for a reader that
 * must seek (Parquet is read from its footer backwards); `remove` deletes it.
 */
export async function spool(name: string, from?: string, inflate?: { file: string }): Promise<{ path: string; remove: () => Promise<void> }> {
  const dir = await scratchDir()
  const remove = (): Promise<void> => rm(dir, { recursive: true, force: true })
  const path = join(dir, name)
  try {
    const source = from === undefined ? process.stdin : createReadStream(from)
    const sink = createWriteStream(path, { flags: 'wx' })
    await (inflate ? pipeline(source, createGunzip(), sink) : pipeline(source, sink))
  } catch (error) {
    await remove()
    throw inflate ? gzipError(inflate.file, error) : error
  }
  return { path, remove }
}

/**
 * The file where job `i` of a batch writes its share of `path` (one rejects file for every input),
 * or a worker its range of a file converted in parts (see parallel.ts): hidden beside it and named as this process's temporary of it, so that a killed batch's shares
 * are removed as any temporary it left.
 */
export function shareOf(path: string, i: number): string {
  return join(dirname(resolve(path)), `.${basename(path)}.${process.pid}.share-${i}${TEMP_SUFFIX}`)
}

/** Writes the shares that exist, in order, as `path`, atomically, and removes them; on failure too. */
export async function joinShares(path: string, shares: string[]): Promise<void> {
  try {
    const file = await AtomicFile.create(path)
    try {
      for (const share of shares) {
        try {
          for await (const chunk of createReadStream(share)) await file.sink.write(chunk as Buffer)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
        }
      }
      await file.commit()
    } catch (error) {
      await file.abort()
      throw error
    }
  } finally {
    await removeShares(shares)
  }
}

export async function removeShares(shares: string[]): Promise<void> {
  await Promise.all(shares.map((share) => rm(share, { force: true })))
}

/** Exit codes of a process ended by these signals, as a shell reports them. */
const SIGNAL_EXITS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }
const cleanups = new Set<() => Promise<void>>()

/** This thread's temporaries not yet put in place or removed, each with its opening. */
const temporaries = new Map<string, Promise<unknown>>()

/**
 * Replaces this thread's `process.env` with a plain copy, for a thread of evalferry's own that only
 * reads its environment (the command line, a batch worker); children and workers it starts are
 * given the copy. The `yaml` parser reads `process.env` for each token it parses, and each read
 * of the real environment is a call into the runtime: with the copy, what `yaml` reads (a file's
 * keys above its list, the items the block reader leaves to it) reads a fifth faster.
 */
export function plainEnvironment(): void {
  process.env = { ...process.env }
}

/** Set when the process is interrupted: from then on no file is begun or put in place, and the process exits. */
let stopping = false

export function isStopping(): boolean {
  return stopping
}

/** Set once an output goes to standard output, which cannot be taken back as a file can. */
let writesStdout = false

const interruption = new AbortController()
/** Aborted when the process is interrupted: what it started (git) is stopped with it. */
export const interruptSignal: AbortSignal = interruption.signal
// Each git process listens while it runs (a prefetch keeps one per repository open): more than Node's ten is no leak.
setMaxListeners(0, interruptSignal)
const untilExit = new Promise<never>(() => {})

async function interrupted(signal: NodeJS.Signals): Promise<void> {
  stopping = true
  interruption.abort()
  // Twice: a temporary begun while the first pass ran is gone after the second.
  for (let pass = 0; pass < 2; pass++) for (const cleanup of cleanups) await cleanup().catch(() => {})
  // This thread's own, wherever they are: one whose opening was under way appears only once it opens,
  // maybe after the passes looked.
  for (const [temp, opened] of temporaries) {
    await opened.catch(() => {})
    await rm(temp, { force: true }).catch(() => {})
  }
  // Scratch directories (see `scratchDir`): this process's, a worker thread's too (they share its id).
  await removeLeftovers(tmpdir(), SCRATCH_PREFIX, '-', '', true).catch(() => {})
  const stdout = writesStdout ? ', but what went to standard output stops where the conversion did' : ''
  process.stderr.write(`evalferry: interrupted (${signal}); no file left unfinished${stdout}\n`)
  process.exit(SIGNAL_EXITS[signal])
}

/**
 * Should the process be interrupted (Ctrl-C, SIGTERM, SIGHUP) before the returned function is
 * called, `cleanup` runs and the process exits as the signal would have ended it.
 */
export function onInterrupt(cleanup: () => Promise<void>): () => void {
  if (!cleanups.size) for (const signal of Object.keys(SIGNAL_EXITS)) process.on(signal, interrupted)
  cleanups.add(cleanup)
  return () => {
    cleanups.delete(cleanup)
    if (!cleanups.size) for (const signal of Object.keys(SIGNAL_EXITS)) process.removeListener(signal, interrupted)
  }
}

/** Removes this process's own temporaries for `path`: a worker thread that died cannot. */
export function removeOwnTemps(path: string): Promise<void> {
  return removeStaleTemps(dirname(resolve(path)), basename(path), true)
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH' // EPERM: it runs, as another user
  }
}

/** A failed write of an output, as an error whose location is the file, saying what went wrong. */
function writeError(path: string, error: unknown, creating = false): unknown {
  if (error instanceof EvalferryError) return error
  const code = (error as NodeJS.ErrnoException)?.code
  const why =
    code === 'ENOSPC' ? 'no space left on device' : code === 'EDQUOT' ? 'disk quota exceeded' : code === 'EFBIG' ? 'file too large' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EROFS' ? 'read-only file system' : code === 'EIO' ? 'input/output error' : undefined
  if (why) return new EvalferryError('E_IO', `cannot be written: ${why}`, { file: path }, { cause: error })
  if (!creating || typeof code !== 'string') return error
  // Making its directory or its temporary copy failed: a file where a directory must be, or a place that takes no files.
  const where = code === 'ENOTDIR' || code === 'EEXIST' ? 'a part of its path is a file, not a directory' : code === 'ENOENT' ? 'no file can be made in its directory' : code
  return new EvalferryError('E_IO', `cannot be written: ${where}`, { file: path }, { cause: error })
}

/** The real path of a file, or its absolute path when it does not exist yet. */
async function identity(path: string): Promise<string> {
  try {
    return await realpath(path)
  } catch {
    return resolve(path)
  }
}

/** A file a command writes, and what it is: "the output", "the report", "the rejects file". */
export interface Written {
  path: string
  what: string
  /** Why this file must not be written after all (it holds something of the user's), checked after the rest. */
  refuse?: () => Promise<string | undefined>
}

/**
 * Refuses a file written that is one of the inputs (SPEC section 5), or that another file written
 * names too, standard output included: the later would replace the earlier; then a file its own
 * check refuses (see `Written.refuse`).
 */
export async function assertWritable(written: Written[], inputs: string[]): Promise<void> {
  const inputIds = await Promise.all(inputs.map((input) => (input === STDIO ? STDIO : identity(input))))
  // The first input of each identity, by identity: a batch has thousands.
  const inputOf = new Map<string, number>()
  for (const [i, id] of inputIds.entries()) if (!inputOf.has(id)) inputOf.set(id, i)
  const seen = new Map<string, Written>()
  for (const file of written) {
    const id = file.path === STDIO ? STDIO : await identity(file.path)
    const input = id === STDIO ? -1 : (inputOf.get(id) ?? -1)
    if (input !== -1) throw new UsageError(`${file.what} ${file.path} is the input ${inputs[input]}; evalferry never overwrites an input`)
    if (id !== STDIO && (await isDirectory(file.path))) throw new UsageError(`${file.what} ${file.path} is a directory; name a file`)
    const other = seen.get(id)
    if (other) {
      const where = id === STDIO ? 'standard output' : file.path
      throw new UsageError(`${other.what} and ${file.what} would both be written to ${where}; name another file for one of them`)
    }
    seen.set(id, file)
  }
  for (const file of written) {
    const why = await file.refuse?.()
    if (why) throw new UsageError(why)
  }
}

/** What `path` is (following links), or undefined where nothing is. */
async function statOf(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path)
  } catch {
    return undefined
  }
}

export async function isFile(path: string): Promise<boolean> {
  return (await statOf(path))?.isFile() === true
}

/** Whether `path` is a named pipe (a FIFO), whose bytes can be read once. */
export async function isPipe(path: string): Promise<boolean> {
  return (await statOf(path))?.isFIFO() === true
}

/** Whether `path` is a device or a named pipe (`/dev/null`, a FIFO): written into, not replaced. */
export async function isSpecialFile(path: string): Promise<boolean> {
  const stats = await statOf(path)
  return stats !== undefined && !stats.isFile() && !stats.isDirectory()
}

/** `-` for the names of standard output (`/dev/stdout`), which are written as `-` is; any other path as it is. */
export function stdoutAsDash(path: string): string {
  return STDOUT_NAMES.has(path) ? STDIO : path
}

export async function isDirectory(path: string): Promise<boolean> {
  return (await statOf(path))?.isDirectory() === true
}

export async function exists(path: string): Promise<boolean> {
  return (await statOf(path)) !== undefined
}

/**
 * When an input whose container its name does not tell is not there either, the error that says so
 * (exit 1, as for any missing input), rather than one asking for its container.
 */
export function missingInput(path: string): EvalferryError | undefined {
  if (path === STDIO) return undefined
  try {
    statSync(path)
    return undefined
  } catch (error) {
    return ioError(path, error)
  }
}

/** An input that cannot be opened, as a data error naming the file. */
export function ioError(path: string, error: unknown): EvalferryError {
  const code = (error as NodeJS.ErrnoException).code
  const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message
  return new EvalferryError('E_IO', why, { file: path })
}
