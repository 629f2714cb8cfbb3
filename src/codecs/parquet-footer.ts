/**
 * The key-value metadata of a Parquet footer put in a fixed order. parquet-wasm takes the metadata
 * as a hash map, whose order changes from one file to the next within a process; the footer
 * (Thrift's compact protocol, `FileMetaData`) is read only as far as its list of key-value pairs,
 * whose encoded entries are put in order where they are: the footer keeps its length, and every
 * offset in it stays right.
 */

import { BINARY, LIST, STOP, STRUCT, ThriftReader } from './thrift.ts'

/** `FileMetaData.key_value_metadata`'s field id. */
const KEY_VALUE_METADATA = 5

/** A `KeyValue` struct's key, read by `reader` from where it stands. */
function keyOf(reader: ThriftReader): string | undefined {
  let key: string | undefined
  for (let id = 0; ; ) {
    const f = reader.field(id)
    if (f.type === STOP) return key
    if (f.id === 1 && f.type === BINARY) {
      const length = reader.varint()
      key = Buffer.from(reader.bytes.buffer, reader.bytes.byteOffset + reader.at, length).toString('utf8')
      reader.at += length
    } else reader.skip(f.type)
    id = f.id
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
    const reader = new ThriftReader(tail.subarray(0, n - 8), start)
    for (let id = 0; ; ) {
      const f = reader.field(id)
      if (f.type === STOP) return true
      if (f.id === KEY_VALUE_METADATA && f.type === LIST) {
        const { type, size } = reader.list()
        if (type !== STRUCT) return false
        const entries: { key: string; from: number; to: number }[] = []
        for (let i = 0; i < size; i++) {
          const from = reader.at
          const key = keyOf(reader)
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
