/**
 * A one-line progress bar on stderr: files, records, bytes, rate and time left. It draws only on a
 * terminal and only once the work has lasted a moment, so short runs and pipes see nothing.
 */

export interface ProgressState {
  filesDone: number
  filesTotal: number
  records: number
  bytesDone: number
  /** Undefined when some input's size cannot be told before reading it (standard input, a pipe). */
  bytesTotal: number | undefined
}

const FIRST_DRAW_AFTER_MS = 300
const REDRAW_EVERY_MS = 100
const BAR_WIDTH = 24
/** The rate is the last this many milliseconds' bytes: start-up and warming code weigh on it only at first. */
const RATE_WINDOW_MS = 10_000

export class ProgressBar {
  private readonly started = Date.now()
  private readonly rate = new RecentRate(RATE_WINDOW_MS)
  private lastDraw = 0
  private drawn = false
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly state: () => ProgressState,
  ) {
    this.rate.add(this.started, 0)
    this.timer = setInterval(() => this.tick(), REDRAW_EVERY_MS)
    this.timer.unref()
  }

  private tick(): void {
    const now = Date.now()
    const state = this.state()
    this.rate.add(now, state.bytesDone)
    if (now - this.started < FIRST_DRAW_AFTER_MS || now - this.lastDraw < REDRAW_EVERY_MS) return
    this.lastDraw = now
    this.drawn = true
    this.stream.write(`\r${render(state, this.rate.perSecond())}\x1b[K`)
  }

  /** Clears the bar's line, for a line printed between draws; the next draw shows the bar on the line after it. */
  clear(): void {
    if (this.drawn) this.stream.write('\r\x1b[K')
    this.drawn = false
  }

  /** Clears the line so that the summary prints on a clean one. */
  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    this.clear()
  }
}

/**
 * A bar over files read one after another (`validate`, `detect`): `reading` holds the counts of
 * the file being read, which `fileDone` adds to those of the files before it.
 */
export class FilesProgress {
  reading = { records: 0, bytes: 0 }
  private readonly done = { files: 0, records: 0, bytes: 0 }
  private readonly bar: ProgressBar

  /** `bytesTotal`: undefined when some file's size cannot be told before reading it. */
  constructor(stream: NodeJS.WritableStream, filesTotal: number, bytesTotal: number | undefined) {
    this.bar = new ProgressBar(stream, () => ({
      filesDone: this.done.files,
      filesTotal,
      records: this.done.records + this.reading.records,
      bytesDone: this.done.bytes + this.reading.bytes,
      bytesTotal,
    }))
  }

  fileDone(): void {
    this.done.files++
    this.done.records += this.reading.records
    this.done.bytes += this.reading.bytes
    this.reading = { records: 0, bytes: 0 }
  }

  clear(): void {
    this.bar.clear()
  }

  stop(): void {
    this.bar.stop()
  }
}

/**
 * Bytes a second over the last `windowMs` milliseconds of the counts added (over all of them
 * until the window has filled).
 */
export class RecentRate {
  private readonly times: number[] = []
  private readonly counts: number[] = []

  constructor(private readonly windowMs: number) {}

  /** The count at time `ms` (times only advance). A count lower than the last starts afresh: the work began again. */
  add(ms: number, count: number): void {
    const previous = this.counts.at(-1)
    if (previous !== undefined && count < previous) this.times.length = this.counts.length = 0
    this.times.push(ms)
    this.counts.push(count)
    // The oldest kept is the last at or before the window's start, so that the window stays full.
    let drop = 0
    while (drop + 1 < this.times.length && this.times[drop + 1]! <= ms - this.windowMs) drop++
    if (drop > 0) this.times.splice(0, drop), this.counts.splice(0, drop)
  }

  perSecond(): number {
    const last = this.times.length - 1
    const ms = this.times[last]! - this.times[0]!
    return last > 0 && ms > 0 ? ((this.counts[last]! - this.counts[0]!) * 1000) / ms : 0
  }
}

/** The bar's line: with no total known, the bytes read and the rate, without a bar, a share or time left. */
export function render(s: ProgressState, bytesPerSecond: number): string {
  const counts = `files ${s.filesDone}/${s.filesTotal} · ${s.records.toLocaleString('en-US')} records · `
  if (s.bytesTotal === undefined) return `${counts}${megabytes(s.bytesDone)} · ${megabytes(bytesPerSecond)}/s`
  const fraction = s.bytesTotal > 0 ? Math.min(1, s.bytesDone / s.bytesTotal) : 0
  const filled = Math.round(fraction * BAR_WIDTH)
  const bar = '█'.repeat(filled) + '░'.repeat(BAR_WIDTH - filled)
  // No rate yet (nothing read, or the work begun again): no time left to tell.
  const left = bytesPerSecond > 0 ? ` · ${duration(fraction < 1 ? (s.bytesTotal - s.bytesDone) / bytesPerSecond : 0)} left` : ''
  return `${bar} ${(fraction * 100).toFixed(0).padStart(3)}% ${counts}${megabytes(s.bytesDone)}/${megabytes(s.bytesTotal)} · ${megabytes(bytesPerSecond)}/s${left}`
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`
}

/** Whole seconds, rounded up: `45s`, `2m05s`, `1h02m05s`. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return '0s'
  const whole = Math.ceil(seconds)
  const [h, m, s] = [Math.floor(whole / 3600), Math.floor(whole / 60) % 60, whole % 60]
  const two = (n: number) => String(n).padStart(2, '0')
  if (h > 0) return `${h}h${two(m)}m${two(s)}s`
  return m > 0 ? `${m}m${two(s)}s` : `${s}s`
}
