/** Files in and out: text sources, buffered sinks with back-pressure, and atomic outputs. */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs'
import { mkdir, open, realpath, rename, rm, stat } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { EvalferryError, UsageError } from './errors.ts'
import type { ByteSource, Sink } from './codecs/types.ts'

export const STDIO = '-'

/** The text of a file (or standard input, `-`) as UTF-8 chunks, decoded across chunk boundaries. */
export function textSource(path: string, progress?: { bytes: number }, highWaterMark = 1 << 20): ByteSource {
  const stream = path === STDIO ? process.stdin : createReadStream(path, { highWaterMark })
  stream.setEncoding('utf8')
  if (!progress || path === STDIO) return stream as AsyncIterable<string>
  return counted(stream as AsyncIterable<string> & { bytesRead: number }, progress)
}

async function* counted(stream: AsyncIterable<string> & { bytesRead: number }, progress: { bytes: number }): AsyncGenerator<string> {
  for await (const chunk of stream) {
    progress.bytes = stream.bytesRead
    yield chunk
  }
}

/** Collects small writes into large ones and waits for the stream to drain. */
export class StreamSink implements Sink {
  private buffer: string[] = []
  private size = 0
  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly flushAt = 1 << 16,
  ) {}

  async write(chunk: string | Uint8Array): Promise<void> {
    if (typeof chunk !== 'string') {
      await this.flush()
      await this.push(chunk)
      return
    }
    this.buffer.push(chunk)
    this.size += chunk.length
    if (this.size >= this.flushAt) await this.flush()
  }

  async flush(): Promise<void> {
    if (!this.size) return
    const text = this.buffer.join('')
    this.buffer = []
    this.size = 0
    await this.push(text)
  }

  private async push(chunk: string | Uint8Array): Promise<void> {
    if (!this.stream.write(chunk)) await once(this.stream, 'drain')
  }
}

/**
 * An output written to a temporary file beside the target and renamed into place on `commit`, so
 * a failed or killed conversion never leaves a half-written file or touches an existing one.
 */
export class AtomicFile {
  readonly sink: StreamSink
  private readonly stream: WriteStream | NodeJS.WritableStream
  private readonly temp: string | undefined
  private done = false

  private constructor(
    readonly path: string,
    stream: WriteStream | NodeJS.WritableStream,
    temp: string | undefined,
  ) {
    this.stream = stream
    this.temp = temp
    this.sink = new StreamSink(stream)
  }

  static async create(path: string): Promise<AtomicFile> {
    if (path === STDIO) return new AtomicFile(path, process.stdout, undefined)
    const dir = dirname(resolve(path))
    await mkdir(dir, { recursive: true })
    const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.evalferry-tmp`)
    const stream = createWriteStream(temp, { flags: 'wx' })
    await once(stream, 'open')
    const file = new AtomicFile(path, stream, temp)
    stream.on('error', () => {}) // surfaced by the awaited write or close
    return file
  }

  async commit(): Promise<void> {
    await this.sink.flush()
    if (!this.temp) return
    const stream = this.stream as WriteStream
    await new Promise<void>((res, rej) => {
      stream.once('error', rej)
      stream.end(() => res())
    })
    // Make the bytes durable before the rename makes them visible.
    const handle = await open(this.temp, 'r+')
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(this.temp, this.path)
    this.done = true
  }

  async abort(): Promise<void> {
    if (this.done || !this.temp) return
    this.done = true
    const stream = this.stream as WriteStream
    stream.destroy()
    await rm(this.temp, { force: true })
  }
}

/** The real path of a file, or its absolute path when it does not exist yet. */
async function identity(path: string): Promise<string> {
  try {
    return await realpath(path)
  } catch {
    return resolve(path)
  }
}

/** Refuses an output that is one of the inputs (SPEC section 5). */
export async function assertNotAnInput(output: string, inputs: string[]): Promise<void> {
  if (output === STDIO) return
  const out = await identity(output)
  for (const input of inputs) {
    if (input !== STDIO && (await identity(input)) === out) {
      throw new UsageError(`the output ${output} is the input ${input}; evalferry never overwrites an input`)
    }
  }
}

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return false
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

/** An input that cannot be opened, as a data error naming the file. */
export function ioError(path: string, error: unknown): EvalferryError {
  const code = (error as NodeJS.ErrnoException).code
  const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message
  return new EvalferryError('E_IO', why, { file: path })
}
