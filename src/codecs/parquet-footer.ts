/**
 * The key-value metadata of a Parquet footer put in a fixed order. parquet-wasm takes the metadata
 * as a hash map, whose order changes from one file to the next within a process; the footer
 * (Thrift's compact protocol, `FileMetaData`) is read only as far as its list of key-value pairs,
 * whose encoded entries are put in order where they are: the footer keeps its length, and every
 * offset in it stays right.
 */

const STOP = 0
const TRUE = 1
const FALSE = 2
const BYTE = 3
const I16 = 4
const I32 = 5
const I64 = 6
const DOUBLE = 7
const BINARY = 8
const LIST = 9
const SET = 10
const MAP = 11
const STRUCT = 12
/** `FileMetaData.key_value_metadata`'s field id. */
const KEY_VALUE_METADATA = 5

class Reader {
  constructor(
    readonly bytes: Uint8Array,
    public at: number,
  ) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw new RangeError('the footer ends early')
    return this.bytes[this.at++]!
  }

  varint(): number {
    let value = 0
    for (let shift = 0; ; shift += 7) {
      const b = this.byte()
      if (shift < 49) value += (b & 0x7f) * 2 ** shift
      if (!(b & 0x80)) return value
    }
  }

  /** A field header: its type (STOP at the struct's end) and id. */
  field(last: number): { type: number; id: number } {
    const header = this.byte()
    const type = header & 0x0f
    if (type === STOP) return { type, id: 0 }
    const delta = header >> 4
    if (delta) return { type, id: last + delta }
    const zigzag = this.varint()
    return { type, id: zigzag % 2 ? -(zigzag + 1) / 2 : zigzag / 2 }
  }

  list(): { type: number; size: number } {
    const header = this.byte()
    const small = header >> 4
    return { type: header & 0x0f, size: small === 15 ? this.varint() : small }
  }

  skip(type: number, inList = false): void {
    switch (type) {
      case TRUE:
      case FALSE:
        // A boolean field holds its value in its type; a list's booleans take a byte each.
        if (inList) this.byte()
        return
      case BYTE:
        this.byte()
        return
      case I16:
      case I32:
      case I64:
        this.varint()
        return
      case DOUBLE:
        this.at += 8
        return
      case BINARY: {
        // Not `this.at += this.varint()`, which adds the length to where the length began.
        const length = this.varint()
        this.at += length
        return
      }
      case LIST:
      case SET: {
        const { type: item, size } = this.list()
        for (let i = 0; i < size; i++) this.skip(item, true)
        return
      }
      case MAP: {
        const size = this.varint()
        if (!size) return
        const kinds = this.byte()
        for (let i = 0; i < size; i++) {
          this.skip(kinds >> 4, true)
          this.skip(kinds & 0x0f, true)
        }
        return
      }
      case STRUCT:
        for (let id = 0; ; ) {
          const f = this.field(id)
          if (f.type === STOP) return
          this.skip(f.type)
          id = f.id
        }
      default:
        throw new RangeError(`type ${type} is no Thrift compact type`)
    }
  }

  /** A `KeyValue` struct's key. */
  key(): string | undefined {
    let key: string | undefined
    for (let id = 0; ; ) {
      const f = this.field(id)
      if (f.type === STOP) return key
      if (f.id === 1 && f.type === BINARY) {
        const length = this.varint()
        key = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.at, length).toString('utf8')
        this.at += length
      } else this.skip(f.type)
      id = f.id
    }
  }
}

/**
 * Puts the key-value entries of the Parquet file whose last bytes are `tail` in the order of
 * `order`, keys it does not name after them in their own order of names; in place. False (the
 * bytes untouched) where `tail` does not hold the whole footer or the footer cannot be read.
 */
export function orderFooterMetadata(tail: Uint8Array, order: readonly string[]): boolean {
  const n = tail.length
  if (n < 12 || Buffer.from(tail.buffer, tail.byteOffset + n - 4, 4).toString('latin1') !== 'PAR1') return false
  const length = tail[n - 8]! | (tail[n - 7]! << 8) | (tail[n - 6]! << 16) | (tail[n - 5]! << 24)
  const start = n - 8 - length
  if (length <= 0 || start < 0) return false
  try {
    const reader = new Reader(tail.subarray(0, n - 8), start)
    for (let id = 0; ; ) {
      const f = reader.field(id)
      if (f.type === STOP) return true
      if (f.id === KEY_VALUE_METADATA && f.type === LIST) {
        const { type, size } = reader.list()
        if (type !== STRUCT) return false
        const entries: { key: string; from: number; to: number }[] = []
        for (let i = 0; i < size; i++) {
          const from = reader.at
          const key = reader.key()
          if (key === undefined) return false
          entries.push({ key, from, to: reader.at })
        }
        const rank = (key: string) => {
          const at = order.indexOf(key)
          return at === -1 ? order.length : at
        }
        const sorted = [...entries].sort((a, b) => rank(a.key) - rank(b.key) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        if (entries.length > 1) {
          const parts = sorted.map((e) => tail.slice(e.from, e.to))
          let at = entries[0]!.from
          for (const part of parts) {
            tail.set(part, at)
            at += part.length
          }
        }
        return true
      }
      reader.skip(f.type)
      id = f.id
    }
  } catch (error) {
    if (error instanceof RangeError) return false
    throw error
  }
}
