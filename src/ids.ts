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

export class IdSet {
  private readonly numbered = new Map<string, Numbers>()
  private readonly strings = new Set<string>()
  private lastPrefix: string | undefined
  private lastNumbers: Numbers | undefined
  size = 0

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
      if (numbers.spilled > 0 && this.strings.has(id)) return true
      if (add) {
        numbers.bits[at >> 3]! |= mask
        numbers.count++
        this.size++
      }
      return false
    }
    if (numbers.spilled > 0 && this.strings.has(id)) return true
    if (!add) return false
    if (grow(numbers, n)) {
      const k = n - numbers.low
      numbers.bits[k >> 3]! |= 1 << (k & 7)
      numbers.count++
    } else {
      numbers.spilled++
      this.strings.add(id)
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
    if (this.strings.has(id)) return true
    if (add) {
      this.strings.add(id)
      this.size++
    }
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
