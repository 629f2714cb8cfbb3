import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { FetchError, formatLocation, type Location } from '../../src/errors.ts'
import type { EvalCase } from '../../src/model.ts'
import { hostTable } from '../../src/resolver/hosts.ts'
import { findReferences, replaceReferences, undeclaredFileHost, undeclaredReferences } from '../../src/resolver/references.ts'
import type { ManifestEntry } from '../../src/resolver/options.ts'
import { rewriteCases, textOf } from '../../src/resolver/rewrite.ts'
import { tempDir } from '../helpers/temp.ts'

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
  const dir = tempDir('evalferry-ids-')
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

test('a string that is a blob URL but for whitespace around it is a reference to the trimmed URL; whitespace inside the URL is not', () => {
  const c: EvalCase = {
    id: 'padded',
    input: [{ role: 'user', content: [{ type: 'file', value: `\t${U1} ` }] }, { role: 'user', content: ` ${U2}\n` }],
    context: [`\u00a0${U3}\r\n`, 'https://github.com/o/r/blob/main/a b.txt', ` ${U1} and more`, `https://github.com/o/r/blob/main/a.txt\n#L2`],
  }
  assert.deepEqual(findReferences(c, hosts), [
    { url: U1, pointer: ['input', 0, 'content', 0, 'value'], fileBlock: true },
    { url: U2, pointer: ['input', 1, 'content'], fileBlock: false },
    { url: U3, pointer: ['context', 0], fileBlock: false },
  ])
  // The replacement takes the URL's place inside the whitespace; `$&` in it is not a pattern.
  const rewritten = replaceReferences(c, (ref) => (ref.url === U2 ? { text: 'TEXT' } : `/cache/$&/${ref.pointer[0]}`), hosts)
  assert.deepEqual(rewritten.input![0]!.content, [{ type: 'file', value: '\t/cache/$&/input ' }])
  assert.equal(rewritten.input![1]!.content, 'TEXT')
  assert.deepEqual(rewritten.context, ['\u00a0/cache/$&/context\r\n', ...c.context!.slice(1)])
})

test('an anchor on a CRLF file takes its lines as on an LF file: the last without its line ending', () => {
  const crlf = Buffer.from('a\r\nb\r\nc\r\n')
  assert.equal(textOf(crlf, { start: 2, end: 2 }), 'b')
  assert.equal(textOf(crlf, { start: 1, end: 2 }), 'a\r\nb')
  assert.equal(textOf(crlf, { start: 2, end: 3 }), 'b\r\nc')
  assert.equal(textOf(Buffer.from('a\nb\nc\n'), { start: 2, end: 3 }), 'b\nc')
  // Without a final newline; a lone '\r' ending the file is the line's own, not a line ending.
  assert.equal(textOf(Buffer.from('a\r\nb'), { start: 1, end: 2 }), 'a\r\nb')
  assert.equal(textOf(Buffer.from('a\r\nb\r'), { start: 2, end: 2 }), 'b\r')
  // The whole file, without an anchor, is as it is.
  assert.equal(textOf(crlf), 'a\r\nb\r\nc\r\n')
  assert.throws(() => textOf(crlf, { start: 4, end: 4 }), /^FetchError: line 4: the file has 3 line\(s\)$/)
})

test('--rewrite keeps a line anchor after the local path, as #L10-L20 whatever the host wrote, but in a file block; whitespace around a URL stays around the path; --embed replaces the whole value', async () => {
  const dir = tempDir('evalferry-anchors-')
  try {
    const lf = join(dir, 'lf.txt')
    const crlf = join(dir, 'crlf.txt')
    writeFileSync(lf, 'one\ntwo\nthree\n')
    writeFileSync(crlf, 'one\r\ntwo\r\nthree\r\n')
    const GH = 'https://github.com/o/r/blob/main/lf.txt#L2-L3'
    const GL = 'https://gitlab.com/g/p/-/blob/main/crlf.txt#L1-2'
    const BB = 'https://bitbucket.org/w/r/src/main/lf.txt#lines-2'
    const PLAIN = 'https://github.com/o/r/blob/main/crlf.txt'
    const entry = (url: string, local: string): ManifestEntry => ({ url, host: 'h', repository: 'o/r', ref: 'main', commit: 'c'.repeat(40), path: 'p', local_path: local, bytes: 0, sha256: 's' })
    const entries = [entry(GH, lf), entry(GL, crlf), entry(BB, lf), entry(PLAIN, crlf)]
    const c: EvalCase = {
      id: 'anchors',
      input: [{ role: 'user', content: [{ type: 'file', value: GH }, { type: 'file', value: ` ${GL}\n` }] }],
      context: [` ${BB}\n`, `\t${PLAIN}`],
    }
    const rewrite = async (embed: boolean): Promise<EvalCase> => {
      const out: EvalCase[] = []
      for await (const r of rewriteCases([c], entries, { hosts, embed })) out.push(r)
      return out[0]!
    }
    assert.deepEqual(await rewrite(false), {
      id: 'anchors',
      // A file block's value is opened as a path: it gets the path alone.
      input: [{ role: 'user', content: [{ type: 'file', value: lf }, { type: 'file', value: crlf }] }],
      context: [` ${lf}#L2\n`, `\t${crlf}`],
    })
    assert.deepEqual(await rewrite(true), {
      id: 'anchors',
      input: [{ role: 'user', content: [{ type: 'text', value: 'two\nthree' }, { type: 'text', value: 'one\r\ntwo' }] }],
      context: ['two', 'one\r\ntwo\r\nthree\r\n'],
    })
    // The anchor kept on a path is checked against the file as when embedding.
    const past = 'https://github.com/o/r/blob/main/lf.txt#L3-L9'
    const cases = [{ id: 'x' }, { id: 'past', context: [past] }]
    await assert.rejects(
      (async () => {
        for await (const _ of rewriteCases(cases, [entry(past, lf)], { hosts, file: 'cases.yaml' })) void _
      })(),
      (e: unknown) => {
        assert.ok(e instanceof FetchError && e.code === 'E_REF')
        assert.equal(e.message, `${past}: lines 3-9: the file has 3 line(s)`)
        assert.deepEqual(e.location, { file: 'cases.yaml', record: 1, field: 'context[0]' })
        return true
      },
    )
    // Where the case was read from a file, its line names it, as a failed prefetch does.
    const lines = new Map<EvalCase, Location>([[cases[1]!, { file: 'cases.yaml', line: 7 }]])
    await assert.rejects(
      (async () => {
        for await (const _ of rewriteCases(cases, [entry(past, lf)], { hosts, file: 'cases.yaml', placeOf: (c) => lines.get(c) })) void _
      })(),
      (e: unknown) => e instanceof FetchError && formatLocation(e.location) === 'cases.yaml:7: context[0]: ',
    )
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a file URL of a host not declared is told, shaped as GitHub Enterprise or Bitbucket Server pages; a declared host, a known one and other pages are not', () => {
  const ghe = 'https://GHE.corp.io/team/app/blob/main/docs/a.md#L3'
  const server = 'https://git.corp.io/projects/PROJ/repos/app/browse/src/x.py?at=main'
  assert.equal(undeclaredFileHost(ghe, hosts), 'ghe.corp.io')
  assert.equal(undeclaredFileHost(` ${server} `, hosts), 'git.corp.io')
  for (const other of [
    U1, // github.com names it: a reference, fetched
    'https://github.com/o/r/blob/main/', // a known host: its own message when resolved, not this one
    'https://corp.io/g/p/-/blob/main/a.md', // read as GitLab from its path: a reference
    'https://example.com/docs/guide', // a page
    'https://ghe.corp.io/team/app/tree/main/docs', // a directory
    `see ${ghe}`, // not wholly a URL
  ]) {
    assert.equal(undeclaredFileHost(other, hosts), undefined, other)
  }
  assert.equal(undeclaredFileHost(ghe, hostTable(['ghe.corp.io=https://ghe.corp.io'], {})), undefined)
  const c: EvalCase = { id: 'c', input: [{ role: 'user', content: [{ type: 'file', value: ghe }] }], metadata: { source: server, also: U1 } }
  assert.deepEqual(undeclaredReferences(c, hosts), [
    { host: 'ghe.corp.io', url: ghe },
    { host: 'git.corp.io', url: server },
  ])
})
