import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { FetchError } from '../../src/errors.ts'
import type { EvalCase } from '../../src/model.ts'
import { hostTable } from '../../src/resolver/hosts.ts'
import { findReferences, replaceReferences } from '../../src/resolver/references.ts'
import type { ManifestEntry } from '../../src/resolver/options.ts'
import { rewriteCases, textOf } from '../../src/resolver/rewrite.ts'

const hosts = hostTable([], {})
const U1 = 'https://github.com/o/r/blob/main/a.txt'
const U2 = 'https://gitlab.com/g/s/p/-/raw/v1/b.md#L2'
const U3 = 'https://bitbucket.org/w/r/src/main/c.json'
const UNSAFE = 'https://github.com/o/r/blob/main/../x'

const CASE: EvalCase = {
  id: 'c1',
  input: [
    { role: 'user', content: [{ type: 'text', value: `see ${U1}` }, { type: 'file', value: U1 }, { type: 'file', value: './local.md' }] },
    { role: 'user', content: U2 },
  ],
  context: [U3, 'plain text'],
  metadata: { nested: { fixture: UNSAFE }, other: 'https://example.com/x' },
}

test('finds file blocks and strings that are wholly a blob URL, unsafe ones included', () => {
  assert.deepEqual(findReferences(CASE, hosts), [
    { url: U1, pointer: ['input', 0, 'content', 1, 'value'], fileBlock: true },
    { url: U2, pointer: ['input', 1, 'content'], fileBlock: false },
    { url: U3, pointer: ['context', 0], fileBlock: false },
    { url: UNSAFE, pointer: ['metadata', 'nested', 'fixture'], fileBlock: false },
  ])
})

test('replaces references in a copy: paths as strings, or whole blocks when embedding', () => {
  const rewritten = replaceReferences(CASE, (ref) => (ref.fileBlock ? { type: 'text', value: 'TEXT' } : ref.url === U3 ? '/cache/c.json' : undefined), hosts)
  assert.deepEqual(rewritten.input![0]!.content, [{ type: 'text', value: `see ${U1}` }, { type: 'text', value: 'TEXT' }, { type: 'file', value: './local.md' }])
  assert.deepEqual(rewritten.context, ['/cache/c.json', 'plain text'])
  assert.equal(rewritten.input![1]!.content, U2)
  assert.equal((CASE.input![0]!.content as { value: string }[])[1]!.value, U1, 'the original is untouched')
})

test('a case id that is a blob URL is never rewritten or embedded; the same URL elsewhere is', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'evalferry-ids-'))
  try {
    const local = join(dir, 'a.txt')
    writeFileSync(local, 'the text\n')
    const entry: ManifestEntry = { url: U1, host: 'github.com', repository: 'o/r', ref: 'main', commit: 'c'.repeat(40), path: 'a.txt', local_path: local, bytes: 9, sha256: 's' }
    const c: EvalCase = { id: U1, input: [{ role: 'user', content: [{ type: 'file', value: U1 }] }], context: [U1], metadata: { id: U1 } }
    assert.equal(replaceReferences(c, () => '/cache/a.txt', hosts).id, U1)
    const rewrite = async (embed: boolean): Promise<EvalCase[]> => {
      const out: EvalCase[] = []
      for await (const r of rewriteCases([c], [entry], { hosts, embed })) out.push(r)
      return out
    }
    const [pointed] = await rewrite(false)
    assert.deepEqual(pointed, { id: U1, input: [{ role: 'user', content: [{ type: 'file', value: local }] }], context: [local], metadata: { id: local } })
    const [embedded] = await rewrite(true)
    assert.deepEqual(embedded, { id: U1, input: [{ role: 'user', content: [{ type: 'text', value: 'the text\n' }] }], context: ['the text\n'], metadata: { id: 'the text\n' } })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('embedding takes UTF-8 text only, and the lines of an anchor', () => {
  assert.equal(textOf(Buffer.from('a\nb\nc\n')), 'a\nb\nc\n')
  assert.equal(textOf(Buffer.from('a\nb\nc\n'), { start: 2, end: 3 }), 'b\nc')
  assert.equal(textOf(Buffer.from([0, 1, 2])), undefined)
  assert.equal(textOf(Buffer.from([0xff, 0xfe, 0x41])), undefined)
  assert.equal(textOf(Buffer.from('a\nb\nc'), { start: 3, end: 3 }), 'c')
})

test('an anchor that does not fit the text is E_REF naming the lines', () => {
  const text = Buffer.from('a\nb\nc\n')
  for (const [lines, why] of [
    [{ start: 4, end: 4 }, /^line 4: the file has 3 line\(s\)$/],
    [{ start: 2, end: 9 }, /^lines 2-9: the file has 3 line\(s\)$/],
    [{ start: 3, end: 1 }, /^lines 3-1: the range ends before it starts$/],
    [{ start: 0, end: 0 }, /^line 0: lines are numbered from 1$/],
  ] as const) {
    assert.throws(() => textOf(text, lines), (e: unknown) => e instanceof FetchError && e.code === 'E_REF' && why.test(e.message), JSON.stringify(lines))
  }
})
