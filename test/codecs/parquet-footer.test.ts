import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openAsBlob, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { convert } from '../../src/index.ts'
import { orderFooterMetadata } from '../../src/codecs/parquet-footer.ts'
import { writerParquet } from '../helpers/parquet.ts'
import { SHARED_FIXTURES } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp.ts'

const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm')
const dir = tempDir('evalferry-footer-')
process.on('exit', () => rmSync(dir, { recursive: true, force: true }))

/** The footer's key-value metadata keys, in the footer's order, as parquet-wasm reads them. */
async function footerKeys(path: string): Promise<string[]> {
  const file = await wasm.ParquetFile.fromFile(await openAsBlob(path))
  return [...(file.metadata().fileMetadata().keyValueMetadata() as Map<string, string>).keys()]
}

test('a dataset written as Parquet again and again in one process gives the same bytes each time, its footer metadata in the order written', async () => {
  const input = join(SHARED_FIXTURES, 'deepeval', 'saveas-single_turn.json')
  const files: Buffer[] = []
  for (let i = 0; i < 8; i++) {
    const output = join(dir, `again-${i}.parquet`)
    await convert({ input, output, to: 'hf' })
    files.push(readFileSync(output))
  }
  for (const [i, f] of files.entries()) assert.ok(f.equals(files[0]!), `file ${i} differs from the first`)
  assert.deepEqual(await footerKeys(join(dir, 'again-0.parquet')), ['huggingface', 'evalferry', 'ARROW:schema'])

  // Keys a source carried (pandas'), in the layout's order, then the Arrow schema.
  const carried = { pandas: '{"index_columns": []}', huggingface: '{"info": {"features": {"q": {"dtype": "string", "_type": "Value"}}}}', zeta: 'last' }
  const written: Buffer[] = []
  for (let i = 0; i < 6; i++) written.push(readFileSync(await writerParquet(join(dir, `carried-${i}.parquet`), [{ q: 'a' }, { q: 'b' }], { schemaMetadata: carried })))
  for (const f of written) assert.ok(f.equals(written[0]!))
  assert.deepEqual(await footerKeys(join(dir, 'carried-0.parquet')), ['pandas', 'huggingface', 'zeta', 'ARROW:schema'])
})

test('the footer is put in order in place, or left untouched where it cannot be read whole', async () => {
  const path = join(dir, 'order.parquet')
  await writerParquet(path, [{ q: 'a' }], { schemaMetadata: { a: '1', b: '2', c: '3' } })
  const bytes = new Uint8Array(readFileSync(path))
  // Reversed, then in the given order again: only the entries move, the length stays.
  assert.equal(orderFooterMetadata(bytes, ['ARROW:schema', 'c', 'b', 'a']), true)
  assert.equal(bytes.length, readFileSync(path).length)
  const reordered = join(dir, 'reordered.parquet')
  const { writeFileSync } = await import('node:fs')
  writeFileSync(reordered, bytes)
  assert.deepEqual(await footerKeys(reordered), ['ARROW:schema', 'c', 'b', 'a'])
  assert.equal(orderFooterMetadata(bytes, ['a', 'b', 'c']), true)
  assert.ok(Buffer.from(bytes).equals(readFileSync(path)), 'ordered back, the bytes are the file written')

  const original = readFileSync(path)
  for (const broken of [original.subarray(original.length - 20), original.subarray(0, original.length - 1), Buffer.from('not parquet at all PAR1'), Buffer.alloc(0)]) {
    const copy = new Uint8Array(broken)
    assert.equal(orderFooterMetadata(copy, ['a']), false)
    assert.ok(Buffer.from(copy).equals(broken), 'left untouched')
  }
})

test('footers of many shapes: key sets of any size, names and lengths, written twice, read back by another reader in the order given', async () => {
  const { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } = await import('hyparquet')
  let state = 7
  const random = (n: number) => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state % n
  }
  const names = ['huggingface', 'evalferry', 'pandas', 'é', 'a'.repeat(300), 'k', 'ARROW:schemaish', 'z', '']
  for (let round = 0; round < 25; round++) {
    const metadata: Record<string, string> = {}
    for (let k = random(6); k > 0; k--) metadata[names[random(names.length)]! + (round % 3 ? '' : String(k))] = 'v'.repeat(random(2000)) + round
    const rows = Array.from({ length: 1 + random(40) }, (_, i) => ({ q: `q${i}`, n: i }))
    const [first, second] = [join(dir, `shape-${round}-a.parquet`), join(dir, `shape-${round}-b.parquet`)]
    // Snappy, which the other reader decodes (it has no zstd).
    await writerParquet(first, rows, { schemaMetadata: metadata }, { compression: 'snappy' })
    await writerParquet(second, rows, { schemaMetadata: metadata }, { compression: 'snappy' })
    assert.ok(readFileSync(first).equals(readFileSync(second)), `round ${round}: the same bytes`)
    const read = await parquetMetadataAsync(await asyncBufferFromFile(first))
    assert.deepEqual(
      (read.key_value_metadata ?? []).map((kv) => [kv.key, kv.value]),
      [...Object.entries(metadata), ['ARROW:schema', (read.key_value_metadata ?? []).find((kv) => kv.key === 'ARROW:schema')?.value]],
      `round ${round}`,
    )
    assert.deepEqual(await parquetReadObjects({ file: await asyncBufferFromFile(first) }), rows.map((r) => ({ q: r.q, n: BigInt(r.n) })))
  }
})
