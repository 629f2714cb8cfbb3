/**
 * A one-line progress bar on stderr: files, records, bytes, rate and time left. It draws only on a
 * terminal and only once the work has lasted a moment, so short runs and pipes see nothing.
 */

export interface ProgressState {
  filesDone: number
  filesTotal: number
  records: number
  bytesDone: number
  bytesTotal: number
}

const FIRST_DRAW_AFTER_MS = 300
const REDRAW_EVERY_MS = 100
const BAR_WIDTH = 24

export class ProgressBar {
  private readonly started = Date.now()
  private lastDraw = 0
  private drawn = false
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly state: () => ProgressState,
  ) {
    this.timer = setInterval(() => this.tick(), REDRAW_EVERY_MS)
    this.timer.unref()
  }

  private tick(): void {
    const now = Date.now()
    if (now - this.started < FIRST_DRAW_AFTER_MS || now - this.lastDraw < REDRAW_EVERY_MS) return
    this.lastDraw = now
    this.drawn = true
    this.stream.write(`\r${render(this.state(), (now - this.started) / 1000)}\x1b[K`)
  }

  /** Clears the line so that the summary prints on a clean one. */
  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    if (this.drawn) this.stream.write('\r\x1b[K')
  }
}

export function render(s: ProgressState, seconds: number): string {
  const fraction = s.bytesTotal > 0 ? Math.min(1, s.bytesDone / s.bytesTotal) : 0
  const filled = Math.round(fraction * BAR_WIDTH)
  const bar = '█'.repeat(filled) + '░'.repeat(BAR_WIDTH - filled)
  const rate = seconds > 0 ? s.bytesDone / seconds : 0
  const left = rate > 0 && fraction < 1 ? (s.bytesTotal - s.bytesDone) / rate : 0
  return (
    `${bar} ${(fraction * 100).toFixed(0).padStart(3)}% ` +
    `files ${s.filesDone}/${s.filesTotal} · ${s.records.toLocaleString('en-US')} records · ` +
    `${megabytes(s.bytesDone)}/${megabytes(s.bytesTotal)} · ${megabytes(rate)}/s · ${duration(left)} left`
  )
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return '0s'
  if (seconds < 60) return `${Math.ceil(seconds)}s`
  return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`
}
