/**
 * Thrift's compact protocol, as Parquet encodes its footer and page headers: read field by field,
 * each value kept as the span of bytes it takes, and written back with fields added or replaced
 * and the rest copied as they were.
 */

export const STOP = 0
export const TRUE = 1
export const FALSE = 2
export const BYTE = 3
export const I16 = 4
export const I32 = 5
export const I64 = 6
export const DOUBLE = 7
export const BINARY = 8
export const LIST = 9
export const SET = 10
export const MAP = 11
export const STRUCT = 12

/** A struct's field: its id, its type, and the bytes `[from, to)` its value takes (none for a boolean). */
export interface FieldSpan {
  id: number
  type: number
  from: number
  to: number
}

/** Reads `bytes` from `at`; a read past their end is a RangeError. */
export class ThriftReader {
  constructor(
    readonly bytes: Uint8Array,
    public at: number,
  ) {}

  byte(): number {
    if (this.at >= this.bytes.length) throw new RangeError('the Thrift data ends early')
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

  /** An i16, i32 or i64 (exact up to 2^53). */
  int(): number {
    const zigzag = this.varint()
    return zigzag % 2 ? -(zigzag + 1) / 2 : zigzag / 2
  }

  /** A field header: its type (STOP at the struct's end) and id. */
  field(last: number): { type: number; id: number } {
    const header = this.byte()
    const type = header & 0x0f
    if (type === STOP) return { type, id: 0 }
    const delta = header >> 4
    return { type, id: delta ? last + delta : this.int() }
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
        this.fields()
        return
      default:
        throw new RangeError(`type ${type} is no Thrift compact type`)
    }
  }

  /** The fields of the struct that starts here, read to its end. */
  fields(): FieldSpan[] {
    const fields: FieldSpan[] = []
    for (let id = 0; ; ) {
      const f = this.field(id)
      if (f.type === STOP) return fields
      const from = this.at
      this.skip(f.type)
      if (this.at > this.bytes.length) throw new RangeError('the Thrift data ends early')
      fields.push({ id: f.id, type: f.type, from, to: this.at })
      id = f.id
    }
  }
}

/** The struct at `at` of `bytes`, its fields by id. */
export function structAt(bytes: Uint8Array, at: number): Map<number, FieldSpan> {
  return new Map(new ThriftReader(bytes, at).fields().map((f) => [f.id, f]))
}

/** The integer value of `field`, or undefined where there is no such field or it is no integer. */
export function intOf(bytes: Uint8Array, field: FieldSpan | undefined): number | undefined {
  if (!field || (field.type !== I16 && field.type !== I32 && field.type !== I64)) return undefined
  return new ThriftReader(bytes, field.from).int()
}

/** Where each item of the list `field` starts, and its items' type; undefined where it is no list. */
export function listOf(bytes: Uint8Array, field: FieldSpan | undefined): { type: number; items: number[] } | undefined {
  if (!field || field.type !== LIST) return undefined
  const reader = new ThriftReader(bytes, field.from)
  const { type, size } = reader.list()
  const items: number[] = []
  for (let i = 0; i < size; i++) {
    items.push(reader.at)
    reader.skip(type, true)
  }
  if (reader.at > bytes.length) throw new RangeError('the Thrift data ends early')
  return { type, items }
}

/** Compact-protocol bytes, appended. */
export class ThriftWriter {
  private buffer = new Uint8Array(256)
  length = 0

  private room(n: number): void {
    if (this.length + n <= this.buffer.length) return
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + n))
    grown.set(this.buffer.subarray(0, this.length))
    this.buffer = grown
  }

  byte(b: number): void {
    this.room(1)
    this.buffer[this.length++] = b
  }

  bytes(b: Uint8Array): void {
    this.room(b.length)
    this.buffer.set(b, this.length)
    this.length += b.length
  }

  varint(value: number): void {
    while (value >= 0x80) {
      this.byte((value % 0x80) | 0x80)
      value = Math.floor(value / 0x80)
    }
    this.byte(value)
  }

  /** An i16, i32 or i64 (exact up to 2^53). */
  int(value: number): void {
    this.varint(value < 0 ? -2 * value - 1 : 2 * value)
  }

  field(last: number, id: number, type: number): void {
    const delta = id - last
    if (delta > 0 && delta < 16) this.byte((delta << 4) | type)
    else {
      this.byte(type)
      this.int(id)
    }
  }

  list(type: number, size: number): void {
    if (size < 15) this.byte((size << 4) | type)
    else {
      this.byte(0xf0 | type)
      this.varint(size)
    }
  }

  stop(): void {
    this.byte(STOP)
  }

  /**
   * The struct whose fields are `fields` (spans of `source`), in the order of their ids, each of
   * `replace`'s ids written by its function instead (or added, where the struct lacks it).
   */
  struct(source: Uint8Array, fields: Iterable<FieldSpan>, replace: Map<number, { type: number; write: () => void }> = new Map()): void {
    const ids = new Map<number, { type: number; write: () => void }>()
    for (const f of fields) ids.set(f.id, { type: f.type, write: () => this.bytes(source.subarray(f.from, f.to)) })
    for (const [id, value] of replace) ids.set(id, value)
    let last = 0
    for (const id of [...ids.keys()].sort((a, b) => a - b)) {
      const { type, write } = ids.get(id)!
      this.field(last, id, type)
      write()
      last = id
    }
    this.stop()
  }

  done(): Uint8Array {
    return this.buffer.subarray(0, this.length)
  }
}
