/**
 * A set of case ids that stays small however many cases a file has. Ids that end in a number
 * (`q17`, `case-0042`, `ex-1-3`) are kept as bits: per prefix, a bitmap of the numbers used, grown
 * only while it stays dense (at most 64 bits per number in it). Other ids, and numbers too far
 * from the rest, are kept as strings. Membership is exact either way. A million ids `ex-1` …
 * `ex-1000000` take about 125 KB, where a `Set` of the strings takes about 70 MB.
 */

/** Numbers with more digits than this are kept as strings. */
const MAX_DIGITS = 15
/** Prefixes beyond this many keep their ids as strings: ids that only happen to end in digits. */
const MAX_PREFIXES = 1024

/** The numbers used after one prefix: bit n - low of `bits`, for low ≤ n < low + 8 × bits.length. */
interface Numbers {
  low: number
  bits: Uint8Array
  count: number
  /** Numbers of this prefix kept as strings (outside the bitmap when they came). */
  spilled: number
}

/** The marks of an id in a table a reader and a writer share (see `StringTable.mark`): read, and written. */
export const SEEN = 1
export const WRITTEN = 2

export class IdSet {
  private readonly numbered = new Map<string, Numbers>()
  private lastPrefix: string | undefined
  private lastNumbers: Numbers | undefined
  size = 0

  /**
   * `strings` may be shared with another set of the same ids (the ids a reader has seen, beside
   * those a writer has written), so that each id's text is kept once; this set's are those with `mark`.
   */
  constructor(
    private readonly strings = new StringTable(),
    private readonly mark = SEEN,
  ) {}

  has(id: string): boolean {
    return this.find(id, false)
  }

  /** Adds `id`; false when it was there already. */
  add(id: string): boolean {
    return !this.find(id, true)
  }

  /** Whether `id` is in the set; with `add`, puts it in. */
  private find(id: string, add: boolean): boolean {
    // The number at the end: its digits without leading zeros (those stay in the prefix), or a lone 0.
    const end = id.length
    let start = end
    while (start > 0 && isDigit(id.charCodeAt(start - 1))) start--
    while (start < end - 1 && id.charCodeAt(start) === 0x30) start++
    if (start === end || end - start > MAX_DIGITS) return this.findString(id, add)
    let n = 0
    for (let i = start; i < end; i++) n = n * 10 + id.charCodeAt(i) - 0x30
    const numbers = this.numbersOf(id, start, add)
    if (!numbers) return this.findString(id, add)
    const at = n - numbers.low
    if (at >= 0 && at < numbers.bits.length * 8) {
      const mask = 1 << (at & 7)
      if ((numbers.bits[at >> 3]! & mask) !== 0) return true
      if (numbers.spilled > 0 && this.strings.has(id, this.mark)) return true
      if (add) {
        numbers.bits[at >> 3]! |= mask
        numbers.count++
        this.size++
      }
      return false
    }
    if (numbers.spilled > 0 && this.strings.has(id, this.mark)) return true
    if (!add) return false
    if (grow(numbers, n)) {
      const k = n - numbers.low
      numbers.bits[k >> 3]! |= 1 << (k & 7)
      numbers.count++
    } else {
      numbers.spilled++
      this.strings.mark(id, this.mark)
    }
    this.size++
    return false
  }

  private numbersOf(id: string, start: number, add: boolean): Numbers | undefined {
    const last = this.lastPrefix
    // Ids of a file mostly share one prefix: it is compared, not looked up.
    if (last !== undefined && last.length === start && id.startsWith(last)) return this.lastNumbers
    const prefix = id.slice(0, start)
    let numbers = this.numbered.get(prefix)
    if (!numbers) {
      if (!add || this.numbered.size >= MAX_PREFIXES) return undefined
      numbers = { low: 0, bits: new Uint8Array(0), count: 0, spilled: 0 }
      this.numbered.set(prefix, numbers)
    }
    this.lastPrefix = prefix
    this.lastNumbers = numbers
    return numbers
  }

  private findString(id: string, add: boolean): boolean {
    if (!add) return this.strings.has(id, this.mark)
    if (this.strings.mark(id, this.mark) < 0) return true
    this.size++
    return false
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39
}

/** Grows `numbers`' bitmap to hold `n`, if it stays dense; false when it would not. */
function grow(numbers: Numbers, n: number): boolean {
  const width = numbers.bits.length * 8
  let low: number
  let high: number
  if (width === 0) {
    low = n - (n % 8)
    high = low + 64
  } else if (n < numbers.low) {
    low = Math.max(0, Math.min(n, numbers.low - width))
    low -= low % 8
    high = numbers.low + width
  } else {
    low = numbers.low
    high = Math.max(n + 1, low + 2 * width)
  }
  high += (8 - (high % 8)) % 8
  if (high - low > 64 * (numbers.count + 1) + (1 << 16)) return false
  const bits = new Uint8Array((high - low) / 8)
  if (width) bits.set(numbers.bits, (numbers.low - low) / 8)
  numbers.low = low
  numbers.bits = bits
  return true
}

/** Bytes of a chunk of a `StringTable`'s text; a longer string gets a chunk of its own. */
const CHUNK_BYTES = 1 << 20

/**
 * A set of strings, each numbered in the order it came, kept outside the JavaScript heap: the text
 * in chunks of bytes (one byte a character where every character fits one, else two), an
 * open-addressing hash table of typed arrays over it. A UUID takes 63 bytes here and none of V8's
 * heap, where in a `Map` it took 85 bytes of heap (56 of them the string). A capped heap could not
 * hold millions, and the growth of a `Map` or `Set` (one large table) that does not fit aborts the
 * whole process. A string kept here is copied: one cut from a larger text no longer keeps that
 * text alive.
 */
export class StringTable {
  private readonly chunks: Buffer[] = []
  private chunk: Buffer | undefined
  /** Where the next string goes in `chunk`. */
  private free = 0
  /** Where each string starts: its chunk × 2^32 plus its offset there. */
  private starts = new Float64Array(1024)
  private hashes = new Int32Array(1024)
  /** Each string's marks (see `mark`): bits its users set. */
  private marks = new Uint8Array(1024)
  /** The table: 1 + the number of the string in each slot, 0 where the slot is empty. */
  private slots = new Int32Array(2048)
  /** What `locate` read of a string's header: where its text starts, its characters, two bytes each or one. */
  private textAt = 0
  private textLength = 0
  private textWide = false
  size = 0

  /** The number of `text`, or -1 when it is not in the table. */
  indexOf(text: string): number {
    const hash = hashOf(text)
    const mask = this.slots.length - 1
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!
      if (entry === 0) return -1
      if (this.hashes[entry - 1] === hash && this.equals(entry - 1, text)) return entry - 1
    }
  }

  /** Adds `text` and returns its number; when it was there already, -1 - its number. */
  add(text: string): number {
    const hash = hashOf(text)
    const mask = this.slots.length - 1
    let slot = hash & mask
    for (; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!
      if (entry === 0) break
      if (this.hashes[entry - 1] === hash && this.equals(entry - 1, text)) return -entry
    }
    const index = this.size++
    if (index === this.starts.length) {
      this.starts = grown(this.starts)
      this.hashes = grown(this.hashes)
      this.marks = grown(this.marks)
    }
    this.starts[index] = this.store(text)
    this.hashes[index] = hash
    this.slots[slot] = index + 1
    // At most half full, so that a probe stays short.
    if (this.size * 2 > this.slots.length) this.rehash()
    return index
  }

  /**
   * Adds `text` if it is not in the table, and sets the bit `bit` (1, 2, 4…) of its marks: the
   * number of `text` when the bit was not set, -1 - its number when it was. The users of one table
   * keep their own sets of its strings this way, each string kept once.
   */
  mark(text: string, bit: number): number {
    let index = this.add(text)
    if (index < 0) index = -1 - index
    const marks = this.marks[index]!
    if ((marks & bit) !== 0) return -1 - index
    this.marks[index] = marks | bit
    return index
  }

  /** Whether `text` is in the table with the bit `bit` of its marks set. */
  has(text: string, bit: number): boolean {
    const index = this.indexOf(text)
    return index >= 0 && (this.marks[index]! & bit) !== 0
  }

  /** The strings with the bit `bit` of their marks set, in the order they came into the table. */
  *marked(bit: number): IterableIterator<string> {
    for (let i = 0; i < this.size; i++) if ((this.marks[i]! & bit) !== 0) yield this.get(i)
  }

  /** The string numbered `index`. */
  get(index: number): string {
    const bytes = this.locate(index)
    const at = this.textAt
    return bytes.toString(this.textWide ? 'utf16le' : 'latin1', at, at + (this.textWide ? 2 * this.textLength : this.textLength))
  }

  /** The strings in the order they came. */
  *[Symbol.iterator](): IterableIterator<string> {
    for (let i = 0; i < this.size; i++) yield this.get(i)
  }

  private store(text: string): number {
    let wide = false
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) wide = true
    const bodyBytes = wide ? 2 * text.length : text.length
    const needed = bodyBytes + 5
    if (!this.chunk || this.free + needed > this.chunk.length) {
      this.chunk = Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, needed))
      this.chunks.push(this.chunk)
      this.free = 0
    }
    const chunk = this.chunk
    const start = (this.chunks.length - 1) * 2 ** 32 + this.free
    // The header: the length in characters, times two, plus one for two bytes a character; seven bits a byte.
    let header = text.length * 2 + (wide ? 1 : 0)
    let at = this.free
    while (header >= 0x80) {
      chunk[at++] = (header % 0x80) | 0x80
      header = Math.floor(header / 0x80)
    }
    chunk[at++] = header
    at += chunk.write(text, at, wide ? 'utf16le' : 'latin1')
    this.free = at
    return start
  }

  /** The chunk of the string numbered `index`; its header is read into `textAt`, `textLength` and `textWide`. */
  private locate(index: number): Buffer {
    const start = this.starts[index]!
    const bytes = this.chunks[Math.floor(start / 2 ** 32)]!
    let at = start % 2 ** 32
    let header = 0
    let scale = 1
    for (;;) {
      const byte = bytes[at++]!
      header += (byte & 0x7f) * scale
      if (byte < 0x80) break
      scale *= 0x80
    }
    this.textAt = at
    this.textLength = Math.floor(header / 2)
    this.textWide = header % 2 === 1
    return bytes
  }

  private equals(index: number, text: string): boolean {
    const bytes = this.locate(index)
    const at = this.textAt
    const length = this.textLength
    if (length !== text.length) return false
    if (this.textWide) {
      for (let i = 0; i < length; i++) if (text.charCodeAt(i) !== (bytes[at + 2 * i]! | (bytes[at + 2 * i + 1]! << 8))) return false
    } else {
      for (let i = 0; i < length; i++) if (text.charCodeAt(i) !== bytes[at + i]) return false
    }
    return true
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2)
    const mask = slots.length - 1
    for (let index = 0; index < this.size; index++) {
      let slot = this.hashes[index]! & mask
      while (slots[slot] !== 0) slot = (slot + 1) & mask
      slots[slot] = index + 1
    }
    this.slots = slots
  }
}

/** FNV-1a over the UTF-16 code units, with a final mix so that the low bits spread. */
function hashOf(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}

/** A copy of `array` twice as long. */
export function grown<T extends Float64Array | Int32Array | Uint8Array>(array: T): T {
  const bigger = new (array.constructor as new (length: number) => T)(array.length * 2)
  bigger.set(array)
  return bigger
}

/**
 * `id` as a string of its own. An id read from a file is a substring of the text it was parsed
 * from, and V8 keeps that whole text alive for it: a part's ids, kept until the part is done, kept
 * every chunk of its text in the heap, which the young-generation collector then copied and
 * promoted. A JSON round trip copies any string exactly, lone surrogates included.
 */
export function ownString(id: string): string {
  return JSON.parse(JSON.stringify(id)) as string
}
