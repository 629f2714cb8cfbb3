import { test } from 'node:test'
import assert from 'node:assert/strict'
import { isCompactJson, knowJsonText, mayBeJson, offsetOf, parseExact, readJson, jsonWriter, SPLICE_MARK, splicedJson, stringifyJson } from '../../src/codecs/json.ts'
import { jsonlWriter, readJsonl } from '../../src/codecs/jsonl.ts'
import { readCsv, csvCell, csvWriter, sniffDelimiter } from '../../src/codecs/csv.ts'
import fc from 'fast-check'
import { readYaml } from '../../src/codecs/yaml.ts'
import { yamlWriter } from '../../src/codecs/yaml-emit.ts'
import type { ReadOptions, SourceRecord } from '../../src/codecs/types.ts'
import type { DataError } from '../../src/errors.ts'
import type { JsonObject } from '../../src/model.ts'
import { CST, isSeq, Lexer, LineCounter, parseDocument, stringify as stringifyYaml, type Node, type YAMLSeq } from 'yaml'
import * as jsyaml from 'js-yaml'
import { collect } from '../helpers/collect.ts'

/** The text cut into pieces of `size` characters, as a stream delivers it. */
async function* chunks(text: string, size: number): AsyncGenerator<string> {
  for (let i = 0; i < text.length; i += size) yield text.slice(i, i + size)
}

function options(recordKeys: string[] = []): ReadOptions {
  return { file: 'in.x', recordKeys, header: {}, columns: [] }
}

class MemorySink {
  text = ''
  async write(chunk: string | Uint8Array) {
    this.text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
  }
}

const nested = '{\n  "finalized": true,\n  "version": "v1",\n  "goldens": [\n    {"input": "a, \\"quoted\\" ]}", "n": [1, {"x": null}]},\n    {"input": "é\\nб"}\n  ],\n  "tail": [1, 2]\n}'

test('JSON: records under a record key, header keys before and after, at every chunk size', async () => {
  for (const size of [1, 2, 3, 7, 64, 4096]) {
    const opts = options(['goldens'])
    const records = await collect(readJson(chunks(nested, size), opts))
    assert.deepEqual(
      records.map((r) => [r.value, r.line, r.index]),
      [
        [{ input: 'a, "quoted" ]}', n: [1, { x: null }] }, 5, 0],
        [{ input: 'é\nб' }, 6, 1],
      ],
      `chunk size ${size}`,
    )
    assert.deepEqual(opts.header, { finalized: true, version: 'v1', tail: [1, 2] })
  }
})

test('JSON: records of text with and without escapes, cut at any chunk size, read as JSON.parse reads the file', async () => {
  const text = fc.string({ unit: fc.constantFrom('a', ' ', '"', '\\', '\n', 'é', '{', ']', ',', ':', '\u2028'), maxLength: 30 })
  const record = fc.dictionary(fc.constantFrom('input', 'expected_output', 'a"b', 'c\\d'), fc.oneof(text, fc.array(text, { maxLength: 3 })), { noNullPrototype: true })
  await fc.assert(
    fc.asyncProperty(fc.array(record, { maxLength: 6 }), fc.constantFrom(undefined, 2, 4), fc.integer({ min: 1, max: 40 }), async (records, indent, size) => {
      const file = JSON.stringify(records, null, indent)
      const got = await collect(readJson(chunks(file, size), options()))
      assert.deepEqual(got.map((r) => r.value), JSON.parse(file))
    }),
    { numRuns: 500 },
  )
})

test('JSON: a top-level array of scalars and objects; a lone object is one record', async () => {
  const records = await collect(readJson(chunks('[ "file://a.yaml" , 3, true,{"a":1} ]', 2), options()))
  assert.deepEqual(records.map((r) => r.value), ['file://a.yaml', 3, true, { a: 1 }])
  const single = await collect(readJson(chunks('{"id": "x", "input": "q"}', 5), options(['goldens'])))
  assert.deepEqual(single.map((r) => r.value), [{ id: 'x', input: 'q' }])
})

test('JSON: errors name the line of the broken record, truncation and depth', async () => {
  const broken = '[\n  {"a": 1},\n  {"a": 2,\n   "b": }\n]'
  await assert.rejects(collect(readJson(chunks(broken, 4), options())), (e: DataError) => {
    assert.equal(e.code, 'E_PARSE')
    assert.equal(e.location.file, 'in.x')
    assert.equal(e.location.line, 4)
    return true
  })
  await assert.rejects(collect(readJson(chunks('[{"a": 1},\n{"a": ', 3), options())), (e: DataError) => {
    assert.match(e.message, /not closed/)
    assert.equal(e.location.line, 2)
    return true
  })
  await assert.rejects(collect(readJson(chunks('[{"a": 1} {"b": 2}]', 3), options())), /expected ',' between records/)
  await assert.rejects(collect(readJson(chunks('[' + '['.repeat(5000), 1000), options())), /nested deeper than 2000/)
  await assert.rejects(collect(readJson(chunks('', 10), options())), /empty/)
  // A key of the file given twice, before or after the list, or in a lone object, as a key given twice in a record.
  for (const [text, line, field] of [
    ['{"version": 1,\n "goldens": [{"input": "a"}],\n "version": 2}', 3, 'version'],
    ['{"v": 1, "v": 1, "goldens": []}', 1, 'v'],
    ['{"input": "a",\n\n "input": "b"}', 3, 'input'],
  ] as const) {
    for (const size of [1, 5, 4096]) {
      await assert.rejects(collect(readJson(chunks(text, size), options(['goldens']))), (e: DataError) => {
        assert.equal(e.message, `duplicate key "${field}": JSON keeps only the last, so a value would be lost`)
        assert.deepEqual(e.location, { file: 'in.x', line, field })
        return true
      })
    }
  }
})

test('JSON writer: DeepEval layout (indent 4, no trailing newline) and a nested list', async () => {
  const sink = new MemorySink()
  const w = jsonWriter(sink, { indent: 4 })
  await w.write({ input: 'x', tools: [{ a: 1 }], none: null })
  await w.write({ input: 'y', tools: [], none: null })
  await w.end()
  assert.equal(sink.text, JSON.stringify([{ input: 'x', tools: [{ a: 1 }], none: null }, { input: 'y', tools: [], none: null }], null, 4))
  const nestedSink = new MemorySink()
  const n = jsonWriter(nestedSink, { header: { finalized: true }, listKey: 'goldens', indent: 2 })
  await n.write({ input: 'x', list: [1, 2] })
  await n.end()
  assert.deepEqual(JSON.parse(nestedSink.text), { finalized: true, goldens: [{ input: 'x', list: [1, 2] }] })
  assert.equal(nestedSink.text, JSON.stringify({ finalized: true, goldens: [{ input: 'x', list: [1, 2] }] }, null, 2) + '\n')
  const empty = new MemorySink()
  const e = jsonWriter(empty, { indent: 4 })
  await e.end()
  assert.equal(empty.text, '[]')
})

test('Python spacing matches json.dumps', () => {
  assert.equal(stringifyJson({ a: [1, 'x', { b: null }], c: {} }, { pythonSpacing: true }), '{"a": [1, "x", {"b": null}], "c": {}}')
  assert.equal(stringifyJson({ a: [1] }), '{"a":[1]}')
  assert.equal(stringifyJson({ b: 1, 10: 'x', 2: 'y', skipped: undefined }, { pythonSpacing: true }), '{"2": "y", "10": "x", "b": 1}')
})

/** JSON.stringify's text with a space after each `,` and `:` outside strings: json.dumps' default separators. */
function spaced(value: unknown): string {
  const text = JSON.stringify(value)
  let out = ''
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    out += c
    if (inString) {
      if (c === '\\') out += text[++i]
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === ',' || c === ':') out += ' '
  }
  return out
}

test('Python spacing is JSON.stringify with spaced separators, for any JSON value and any keys', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => assert.equal(stringifyJson(value, { pythonSpacing: true }), spaced(value))),
    { numRuns: 500 },
  )
  // Past the keys it remembers, every key is still written.
  const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k"${i}\u00e9:,`, i]))
  assert.equal(stringifyJson(wide, { pythonSpacing: true }), spaced(wide))
})

test('isCompactJson tells a list of strings written as JSON.stringify writes it from any other JSON text of it', () => {
  // Characters whose escapes differ between JSON writers: quotes, backslashes, slashes, controls, surrogates.
  const char = fc.constantFrom('a', 'ü', '"', '\\', '/', '\n', '\t', '\u0001', '\u001f', '\u007f', '\u2028', '😀', '\ud83d', '\ude00', ' ', '[')
  const item = fc.array(char, { maxLength: 6 }).map((cs) => cs.join(''))
  // Other ways to write the same list: spaces, an escaped slash, a \u escape for any character,
  // upper-case hex, a lone surrogate left raw.
  const variant = fc.constantFrom('compact', 'spaced', 'slash', 'unicode', 'upper', 'raw')
  fc.assert(
    fc.property(fc.array(item, { maxLength: 4 }), variant, (list, how) => {
      const compact = JSON.stringify(list)
      let text = compact
      if (how === 'spaced') text = JSON.stringify(list, null, 1)
      if (how === 'slash') text = compact.replaceAll('/', '\\/')
      if (how === 'unicode') text = compact.replaceAll('a', '\\u0061')
      if (how === 'upper') text = compact.replace(/\\u00([0-9a-f]{2})/g, (_, hex: string) => `\\u00${hex.toUpperCase()}`)
      if (how === 'raw') text = compact.replace(/\\u(d[89a-f][0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
      assert.deepEqual(JSON.parse(text), list)
      const told = isCompactJson(text, list)
      if (told !== undefined) assert.equal(told, text === compact, text)
      // Only a \u escape or a lone surrogate leaves it untold.
      if (!text.includes('\\u') && !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)) assert.notEqual(told, undefined, text)
    }),
    { seed: 11, numRuns: 2000 },
  )
  assert.equal(isCompactJson('["a","b"]', ['a', 'b']), true)
  assert.equal(isCompactJson('["a", "b"]', ['a', 'b']), false)
  assert.equal(isCompactJson('[ ]', []), false)
  assert.equal(isCompactJson('["a\\/b"]', ['a/b']), false)
  assert.equal(isCompactJson('["\\u0001"]', ['\u0001']), undefined)
})

test('a JSON Lines record writes the known text of its lists in their place, and is JSON.stringify of it all the same', async () => {
  // Lists long enough to be spliced, each told its text (again before each use: a text is let go once taken);
  // some at several depths, one twice in a record.
  const lists = new Set<string[]>()
  const tellAll = (): void => {
    for (const list of lists) knowJsonText(list, JSON.stringify(list))
  }
  const long = fc.array(fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s + 'x'.repeat(300)), { minLength: 1, maxLength: 4 })
  const told = long.map((list) => {
    lists.add(list)
    return list
  })
  // Records as JSON holds them, with told lists among their values and strings that are the marks.
  const mark = fc.integer({ min: 0, max: 9 }).map((i) => `${SPLICE_MARK}${i}`)
  const leaf = fc.oneof(fc.jsonValue({ maxDepth: 1 }), told, mark, fc.constant(Number.NaN))
  const value = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(fc.oneof(fc.string(), mark), tie('value'), { maxKeys: 3 })),
  })).value
  const record = fc.tuple(fc.dictionary(fc.string(), value, { maxKeys: 5 }), told).map(([r, list]) => ({ ...r, a: list, b: { c: list } }) as JsonObject)
  await fc.assert(
    fc.asyncProperty(record, async (r) => {
      const plain = stringifyJson(r)
      tellAll()
      const pieces = splicedJson(r)
      // Spliced unless a value or key of the record is a mark, or a number is one JSON has no text for.
      const marks = JSON.stringify(r).includes(`"${SPLICE_MARK}`)
      const nonFinite = plain !== JSON.stringify(r)
      assert.equal(pieces === undefined, marks || nonFinite)
      if (pieces) assert.equal(pieces.join(''), plain)
      tellAll()
      const sink = new MemorySink()
      const writer = jsonlWriter(sink, {})
      await writer.write(r)
      await writer.end()
      assert.equal(sink.text, plain + '\n')
    }),
    { seed: 48, numRuns: 500 },
  )
  // A short list is made again: finding its place in the record would cost more.
  const short = ['a', 'b']
  knowJsonText(short, JSON.stringify(short))
  assert.equal(splicedJson({ short }), undefined)
  // A text spliced is the one told, as it is: what makes it true is the caller's word (`isCompactJson`).
  const list = ['x'.repeat(300)]
  knowJsonText(list, `["${'x'.repeat(300)}"]`)
  assert.deepEqual(splicedJson({ id: 1, list, tail: 'z' }), ['{"id":1,"list":', `["${'x'.repeat(300)}"]`, ',"tail":"z"}'])
  // Once taken, the text is let go, and the list is made again.
  assert.equal(splicedJson({ id: 1, list, tail: 'z' }), undefined)
})

test('JSON Lines: blank lines skipped, BOM and CRLF ignored, errors carry line and column', async () => {
  const text = '\ufeff{"a":1}\r\n\n{"a":2}\n{"a":3}'
  const records = await collect(readJsonl(chunks(text, 3), options()))
  assert.deepEqual(records.map((r) => [r.value, r.line]), [[{ a: 1 }, 1], [{ a: 2 }, 3], [{ a: 3 }, 4]])
  // A line that is not JSON is a record that fails; the lines after it still read.
  const withBad = await collect(readJsonl(chunks('{"a":1}\n{"a":,}\n{"a":3}\n', 5), options()))
  assert.deepEqual(withBad.map((r) => [r.value, r.line, r.index, r.error?.location]), [
    [{ a: 1 }, 1, 0, undefined],
    [undefined, 2, 1, { file: 'in.x', line: 2, column: 6 }],
    [{ a: 3 }, 3, 2, undefined],
  ])
  assert.equal(withBad[1]!.raw, '{"a":,}')
})

test('CSV: quoted newlines across chunks, CRLF, BOM, delimiters, line numbers', async () => {
  const text = '\ufeffinput,context\r\n"a\r\nb","x|y"\r\nplain,"say ""hi"""\r\n'
  for (const size of [1, 5, 1000]) {
    const opts = options()
    const records = await collect(readCsv(chunks(text, size), opts))
    assert.deepEqual(records.map((r) => [r.value, r.line]), [
      [{ input: 'a\r\nb', context: 'x|y' }, 2],
      [{ input: 'plain', context: 'say "hi"' }, 4],
    ])
    assert.deepEqual(opts.columns, ['input', 'context'])
  }
  assert.equal(sniffDelimiter('a;b;"c;d"'), ';')
  assert.equal(sniffDelimiter('a\tb\tc'), '\t')
  const semi = await collect(readCsv(chunks('q;a\n1;2\n', 4), options()))
  assert.deepEqual(semi.map((r) => r.value), [{ q: '1', a: '2' }])
})

test('CSV: rows end at CRLF, LF or CR in any mix, as Python reads them; quoted cells keep theirs', async () => {
  // The header ends in CRLF and later rows in LF, and the other way round; a lone CR ends a row too.
  const cases: [string, JsonObject[]][] = [
    ['q,a\r\n1,x\n2,"y\r\nz"\n3,"w"\r\n', [{ q: '1', a: 'x' }, { q: '2', a: 'y\r\nz' }, { q: '3', a: 'w' }]],
    ['q,a\n1,x\r\n\r\n2,"cr\r"\r\n3,c\rd,\n4,"""q"""\r\n5,e\r', [{ q: '1', a: 'x' }, { q: '2', a: 'cr\r' }, { q: '3', a: 'c' }, { q: 'd', a: '' }, { q: '4', a: '"q"' }, { q: '5', a: 'e' }]],
    // Old Mac files end every row in a lone CR.
    ['q,a\r1,"x\r\ny"\r2,z\r', [{ q: '1', a: 'x\r\ny' }, { q: '2', a: 'z' }]],
    ['q,a\r\n1,"a""\r\n"",b"\r\n2,mid"quote\r\n', [{ q: '1', a: 'a"\r\n",b' }, { q: '2', a: 'mid"quote' }]],
  ]
  for (const [text, expected] of cases) {
    // Every chunk size puts a CR, or a quote, last in some chunk.
    for (let size = 1; size <= text.length; size++) {
      const records = await collect(readCsv(chunks(text, size), options()))
      assert.deepEqual(
        records.map((r) => r.value),
        expected,
        `${JSON.stringify(text)} in chunks of ${size}`,
      )
    }
  }
})

test('CSV: a row written `""` is a row of one empty cell, as Python\'s csv writes and reads it; a blank line is no row', async () => {
  // Python's csv.reader gives [''] for each `""` row and [] for the blank line; pandas keeps the `""` rows too.
  const text = 'q\n""\na\n\n""\r\n""'
  for (let size = 1; size <= text.length; size++) {
    const records = await collect(readCsv(chunks(text, size), options()))
    assert.deepEqual(
      records.map((r) => [r.value, r.line]),
      [[{ q: '' }, 2], [{ q: 'a' }, 3], [{ q: '' }, 5], [{ q: '' }, 6]],
      `in chunks of ${size}`,
    )
  }
})

test('CSV: any cells, written as Python quotes them with any mix of row ends, read back whole and on the same lines in any chunks', async () => {
  const piece = fc.constantFrom('a', ',', '"', '\r', '\n', '\r\n', ' ', 'ü', '""', '\n\r')
  const cellText = fc.array(piece, { maxLength: 5 }).map((p) => p.join(''))
  const table = fc.record({
    rows: fc.array(fc.tuple(cellText, cellText), { minLength: 1, maxLength: 6 }),
    eols: fc.array(fc.constantFrom('\n', '\r\n', '\r'), { minLength: 7, maxLength: 7 }),
    size: fc.integer({ min: 1, max: 12 }),
  })
  await fc.assert(
    fc.asyncProperty(table, async ({ rows, eols, size }) => {
      // A row of one empty cell would be a blank line: the second cell is never empty.
      const cells = rows.map(([a, b]) => [a, b === '' ? 'x' : b] as const)
      const text = ['q,a', ...cells.map(([a, b]) => `${csvCell(a)},${csvCell(b)}`)].map((line, i) => line + eols[i]!).join('')
      const records = await collect(readCsv(chunks(text, size), options()))
      assert.deepEqual(
        records.map((r) => r.value),
        cells.map(([a, b]) => ({ q: a, a: b })),
      )
      const whole = await collect(readCsv(chunks(text, text.length), options()))
      assert.deepEqual(
        records.map((r) => r.line),
        whole.map((r) => r.line),
      )
    }),
    { seed: 7, numRuns: 400 },
  )
})

test('CSV: text after a quoted cell\'s closing quote joins the cell, as Python\'s csv and pandas read it, in any chunks', async () => {
  // Each table, and the rows Python 3's csv.reader gives for it.
  const tables: [string, string[][]][] = [
    ['a,b\n"x"y,z\n', [['xy', 'z']]],
    ['a,b\n"x"y"z",w\n', [['xy"z"', 'w']]],
    ['a,b\n"a" ,b\n', [['a ', 'b']]],
    ['a,b\n"x"y\r\n"p"q,r', [['xy', ''], ['pq', 'r']]],
    ['a,b\n"x""y"z,w\n', [['x"yz', 'w']]],
    ['a,b\n"x" "y",w\n', [['x "y"', 'w']]],
    ['a,b\n"x"y\n"q",r\n', [['xy', ''], ['q', 'r']]],
    ['a;b\n"x"y,z;w\n', [['xy,z', 'w']]],
    ['a,b\n"multi\nline"tail,"ok"\n"last"x', [['multi\nlinetail', 'ok'], ['lastx', '']]],
    ['\ufeffa,b\r\nq1,a1\r\n"q2" oops,a2\r\n', [['q1', 'a1'], ['q2 oops', 'a2']]],
  ]
  for (const [table, rows] of tables) {
    for (const size of [1, 2, 3, 5, 4096]) {
      const records = await collect(readCsv(chunks(table, size), options()))
      assert.deepEqual(
        records.map((r) => [(r.value as Record<string, string>).a, (r.value as Record<string, string>).b]),
        rows,
        `${JSON.stringify(table)} in chunks of ${size}`,
      )
    }
  }
  // Lines stay the file's: the row after a cell of two lines with text after its quote is on line 4.
  const records = await collect(readCsv(chunks('a,b\n"x\ny"z,1\n,bad,cells\n', 3), options()))
  assert.equal(records[1]!.line, 4)
  assert.ok(records[1]!.error)
})

test('CSV: an open quote and a row longer than the header are errors with the line', async () => {
  await assert.rejects(collect(readCsv(chunks('a,b\n1,2\n3,"open\n', 4), options())), (e: DataError) => {
    assert.equal(e.code, 'E_PARSE')
    assert.equal(e.location.line, 3)
    assert.match(e.message, /never closed/)
    return true
  })
  // A row of too many cells is a record that fails; the rows after it still read.
  const rows = await collect(readCsv(chunks('a,b\n1,2,3\n4,5\n', 4), options()))
  assert.deepEqual(rows.map((r) => [r.value, r.line, r.index, r.error?.location]), [
    [['1', '2', '3'], 2, 0, { file: 'in.x', line: 2, field: 'column 3' }],
    [{ a: '4', b: '5' }, 3, 1, undefined],
  ])
  assert.match(rows[0]!.error!.message, /row has 3 cells but the header has 2 columns/)
})

test('CSV: a row of fewer cells than the header has the rest empty, as pandas reads them missing, in any chunks', async () => {
  for (const size of [1, 3, 4096]) {
    const rows = await collect(readCsv(chunks('a,b,c\n1,2\n3\n"4\n5",6,7\n', size), options()))
    assert.deepEqual(rows.map((r) => [r.value, r.line, r.error]), [
      [{ a: '1', b: '2', c: '' }, 2, undefined],
      [{ a: '3', b: '', c: '' }, 3, undefined],
      [{ a: '4\n5', b: '6', c: '7' }, 4, undefined],
    ], `chunks of ${size}`)
  }
})

test('CSV: a row over half the record limit reads whole; one over the limit is refused at its line', async () => {
  const long = 'ü, "x"\n'.repeat(7 << 19) // 31.5 Mi characters as written, quotes doubled: just under the limit
  // Rows after it, so that waiting for twice the unfinished row would have passed the limit.
  const after = Array.from({ length: 20000 }, (_, i) => `${i + 2},${'z'.repeat(100)}\n`)
  const ok = await collect(readCsv(chunks(`a,b\n1,"${long.replaceAll('"', '""')}"\n${after.join('')}`, 1e6), options()))
  assert.equal(ok.length, 20001)
  assert.deepEqual(ok[0]!.value, { a: '1', b: long })
  assert.deepEqual(ok[20000]!.value, { a: '20001', b: 'z'.repeat(100) })
  const over = `a,b\n1,x\n2,"${'y'.repeat(33 << 20)}"\n`
  await assert.rejects(collect(readCsv(chunks(over, 1 << 20), options())), (e: DataError) => e.location.line === 3 && /longer than 32 MiB/.test(e.message))
})

test('CSV writer: Python minimal quoting with CRLF', async () => {
  const sink = new MemorySink()
  const w = csvWriter(sink, { columns: ['a', 'b', 'c'], newline: '\r\n' })
  await w.write({ a: 'x, y', b: 'say "hi"', c: ' lead' })
  await w.write({ a: 'multi\nline', b: null, c: '' })
  await w.end()
  assert.equal(sink.text, 'a,b,c\r\n"x, y","say ""hi""", lead\r\n"multi\nline",,\r\n')
  await assert.rejects(async () => w.write({ z: '1' }), /column "z"/)
})

test('YAML: records under a record key keep their lines; errors name line and column', async () => {
  const text = 'description: d\nexecution:\n  target: t\nevalcases:\n  - id: a\n    input: x\n\n  - id: b\n    input: |-\n      two\n      lines\n'
  const opts = options(['evalcases', 'tests'])
  const records = await collect(readYaml(chunks(text, 5), opts))
  assert.deepEqual(records.map((r) => [r.value, r.line]), [
    [{ id: 'a', input: 'x' }, 5],
    [{ id: 'b', input: 'two\nlines' }, 8],
  ])
  assert.deepEqual(opts.header, { description: 'd', execution: { target: 't' }, $list: 'evalcases' })
  await assert.rejects(collect(readYaml(chunks('tests:\n  - id: a\n    input: x: y\n', 5), options(['tests']))), (e: DataError) => {
    assert.equal(e.code, 'E_PARSE')
    assert.equal(e.location.line, 3)
    assert.equal(e.location.column, 12)
    return true
  })
  await assert.rejects(collect(readYaml(chunks('tests:\n  - id: a\n    id: b\n', 5), options(['tests']))), /unique/)
  const bomb = 'a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ntests: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n'
  await assert.rejects(collect(readYaml(chunks(bomb, 100), options(['tests']))), (e: DataError) => e.code === 'E_PARSE')
})

/** For each record the YAML reader gives, how many chunks of 256 characters of `text` it had taken by then; and how many there are. */
async function chunksReadBefore(text: string): Promise<{ taken: number[]; total: number }> {
  let pulled = 0
  async function* counted(): AsyncGenerator<string> {
    for await (const chunk of chunks(text, 256)) {
      pulled++
      yield chunk
    }
  }
  const taken: number[] = []
  for await (const _ of readYaml(counted(), options(['tests']))) taken.push(pulled)
  return { taken, total: pulled }
}

/** The records all came, and the one in the middle came before the reader had taken half the file (and so did not read the rest whole). */
function assertStreams({ taken, total }: { taken: number[]; total: number }, records: number): void {
  assert.equal(taken.length, records)
  const middle = records / 2
  assert.ok(taken[middle]! < total / 2 + 2, `record ${middle + 1} came after ${taken[middle]} of ${total} chunks`)
}

/** Records, lines and header keys as the `yaml` package reads `text` whole. */
function wholeDocument(text: string, listKey: string): { records: [unknown, number][]; header: Record<string, unknown> } {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, strict: true })
  assert.deepEqual(doc.errors, [])
  const list = (listKey ? doc.get(listKey) : doc.contents) as YAMLSeq<Node>
  const records = list.items.map((node): [unknown, number] => [node.toJSON(), lineCounter.linePos(node.range![0]).line])
  const header: Record<string, unknown> = listKey ? { ...(doc.toJS() as Record<string, unknown>), $list: listKey } : { $list: '' }
  delete header[listKey]
  return { records, header }
}

test('YAML: cut into items at any chunk size, the list reads as the whole document does', async () => {
  const keyed = [
    '# evalcases for the streaming reader',
    'description: d',
    'execution:',
    '  target: t',
    'evalcases:',
    '  # before the first item',
    '  - id: a',
    '    input: |',
    '      literal',
    '      - not an item',
    '',
    '      # not a comment',
    '    expected_output: |-',
    '      stripped',
    '  # between items',
    '',
    '  - id: b',
    '    input: |+',
    '      kept',
    '',
    '',
    '# at column 0, between items',
    '  -',
    '    id: c',
    '    input: >',
    '      folded',
    '      text',
    '',
    '      more',
    '    tags: [x, "y, z", {k: v}]',
    '    turns:',
    '      - role: user',
    '        content:',
    '          - type: text',
    '            value: "quoted: # not a comment"',
    '      - role: assistant',
    "        content: it's plain & has * and ! inside",
    '    rubrics:',
    '    - id: r1',
    '      weight: 2',
    '  - id: d',
    '    input: last',
    'notes: after the list',
    'more:',
    '  - a header list',
    '',
  ].join('\n')
  const bare = ['- id: a', '  input: |-', '    one', '    - two', '# comment', '-', '  id: b', '  input: [1, 2]', '- id: c', ''].join('\n')
  for (const [text, keys, listKey] of [
    [keyed, ['evalcases', 'tests'], 'evalcases'],
    ['\uFEFF' + keyed.replaceAll('\n', '\r\n'), ['evalcases'], 'evalcases'],
    [bare, ['tests'], ''],
    ['\uFEFF' + bare, ['tests'], ''],
  ] as const) {
    const want = wholeDocument(text.replace(/^\uFEFF/, ''), listKey)
    assert.equal(want.records.length, listKey ? 4 : 3)
    for (const size of [1, 7, 64, 4096]) {
      const opts = options([...keys])
      const records = await collect(readYaml(chunks(text, size), opts))
      assert.deepEqual(records.map((r) => [r.value, r.line]), want.records, `chunks of ${size}`)
      assert.deepEqual(records.map((r) => r.index), want.records.map((_, i) => i))
      assert.deepEqual(opts.header, want.header, `chunks of ${size}`)
    }
  }
  // Errors inside an item keep the file's line and column.
  await assert.rejects(collect(readYaml(chunks('tests:\n  - id: a\n  - id: b\n    input: x: y\n', 3), options(['tests']))), (e: DataError) => {
    assert.deepEqual([e.location.line, e.location.column], [4, 12])
    return true
  })
  await assert.rejects(collect(readYaml(chunks('h: 1\ntests:\n  - id: a\nh: 2\n', 3), options(['tests']))), (e: DataError) => {
    assert.match(e.message, /unique/)
    assert.equal(e.location.line, 4)
    return true
  })
})

test('YAML: a second list of cases in one file is an error at its key, however the file is read', async () => {
  const keys = ['evalcases', 'eval_cases', 'cases', 'tests']
  for (const [why, text, line, field, first] of [
    ['after the list, streamed', 'evalcases:\n  - id: a\n    input: hi\ntests:\n  - id: b\n', 4, 'tests', 'evalcases'],
    ['after a header key after the list', 'tests:\n  - id: a\ndescription: d\ncases:\n  - id: b\n', 4, 'cases', 'tests'],
    ['after an item read by `yaml` (a tag)', 'tests:\n  - id: a\n    input: !t x\neval_cases:\n  - id: b\n', 4, 'eval_cases', 'tests'],
    ['in a file parsed whole (a directive)', '%YAML 1.2\n---\ntests:\n  - id: a\nevalcases:\n  - id: b\n', 5, 'evalcases', 'tests'],
    ['a header key between the two', 'description: d\nevalcases:\n  - id: a\nexecution: {}\ntests: []\n', 5, 'tests', 'evalcases'],
    ['a list in flow form above the list', 'name: n\ntests: [{id: a}]\nevalcases:\n  - id: b\n', 3, 'evalcases', 'tests'],
  ] as const) {
    for (const size of [1, 7, 4096]) {
      const read: unknown[] = []
      await assert.rejects(
        (async () => {
          for await (const r of readYaml(chunks(text, size), options(keys))) read.push(r.value)
        })(),
        (e: DataError) => {
          assert.equal(e.code, 'E_PARSE', why)
          assert.deepEqual([e.location.line, e.location.field], [line, field], `${why}, chunks of ${size}`)
          assert.match(e.message, new RegExp(`^a second list of cases, after "${first}"`), why)
          return true
        },
      )
      assert.ok(read.length <= 1, why)
    }
  }
  // A record key that holds no list after the list is a header key, as before.
  const opts = options(keys)
  const records = await collect(readYaml(chunks('evalcases:\n  - id: a\ntests: see the docs\n', 3), opts))
  assert.deepEqual(records.map((r) => r.value), [{ id: 'a' }])
  assert.equal(opts.header.tests, 'see the docs')
})

test('YAML: lists or mappings nested past 500 levels are an error that says so, at the item, not the stack running out', async () => {
  // A record holding `lists` lists: the record's mapping is one level more.
  const flow = (lists: number) => `evalcases:\n  - id: x\n    input: hi\n    metadata: ${'['.repeat(lists)}${']'.repeat(lists)}\n`
  const block = (lists: number) => {
    let text = 'evalcases:\n  - id: x\n    input: hi\n    metadata:\n'
    for (let i = 0, pad = '      '; i < lists; i++, pad += '  ') text += `${pad}- \n`
    return text
  }
  // 600 levels the parser reads; 3 000 and 5 000 run its stack out; the message is the same.
  for (const text of [flow(600), flow(5000), block(600), block(3000), `%YAML 1.2\n---\n${flow(5000)}`]) {
    await assert.rejects(collect(readYaml(chunks(text, 4096), options(['evalcases']))), (e: DataError) => {
      assert.equal(e.message, 'invalid YAML: lists or mappings nested deeper than 500 levels')
      assert.equal(e.location.file, 'in.x')
      assert.ok(e.location.line! >= 2, String(e.location.line))
      return true
    })
  }
  // 500 levels in all read, and are what the YAML writer still writes.
  for (const text of [flow(499), block(499)]) {
    const [record] = await collect(readYaml(chunks(text, 4096), options(['evalcases'])))
    let depth = 0
    for (let v: unknown = (record!.value as JsonObject).metadata; Array.isArray(v); v = v[0]) depth++
    assert.equal(depth, 499)
  }
})

test('YAML: lines that end in a lone CR (as PyYAML reads them; `yaml` refuses them), or in any mix, read as the same file with LF', async () => {
  const lf = [
    'description: old Mac line ends',
    'tests:',
    '- id: a',
    '  input: |',
    '    first',
    '',
    '    third',
    '  expected_output: "quoted',
    '    folded"',
    '- id: b',
    '  metadata: {k: 1}',
    'after: x',
    '',
  ]
  const want = wholeDocument(lf.join('\n'), 'tests')
  assert.deepEqual(want.records.map(([value]) => value), [{ id: 'a', input: 'first\n\nthird\n', expected_output: 'quoted folded' }, { id: 'b', metadata: { k: 1 } }])
  const cr = lf.join('\r')
  const mixed = lf.map((line, i) => line + ['\r', '\n', '\r\n'][i % 3]).join('')
  for (const text of [cr, mixed, cr.slice(0, -1)]) {
    for (const size of [1, 2, 7, 4096]) {
      const opts = options(['tests'])
      const records = await collect(readYaml(chunks(text, size), opts))
      assert.deepEqual(records.map((r) => [r.value, r.line]), want.records, `${JSON.stringify(text.slice(0, 40))} in chunks of ${size}`)
      assert.deepEqual(opts.header, want.header)
    }
  }
})

test('YAML: lists of lines of every kind the cutter judges (explicit keys, tabs, blocks, quotes over lines), with any line ends, read as the whole document', async () => {
  const piece = fc.constantFrom(
    '- id: a', '- ? k', '  : v', '  ? long', '  : - x', '    - y', '  k: plain', '    \tcont', '  \tk: v', '\tx', '  t: |', '    \tblock', '    - in block',
    '  q: "open', '    \tclose"', '  m:', '    ? |', '      key', '    : val', '-', '  n: 1', '# c', '', '  f: [a, b]', '- - z', '  :',
  )
  let compared = 0
  await fc.assert(
    fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 12 }), fc.constantFrom('\n', '\r', '\r\n'), fc.integer({ min: 1, max: 30 }), async (lines, eol, size) => {
      const lf = `tests:\n${lines.join('\n')}\n`
      // Only what `yaml` reads whole as a list, without an error, is compared.
      const doc = parseDocument(lf, { uniqueKeys: true, strict: true })
      const list = doc.get('tests')
      // `yaml` reading some files whole that break YAML's rules drops what follows `- ? k`, a comment
      // and a line indented more (an item, an unclosed quote it refuses with CRLF line ends):
      // evalferry, reading items alone, keeps the item. Those are not compared.
      const dashes = lines.filter((line) => /^-( |$)/.test(line)).length
      if (doc.errors.length || !isSeq<Node>(list) || list.items.length !== dashes || (eol === '\r\n' && parseDocument(lf.replaceAll('\n', eol)).errors.length)) return
      const records = await collect(readYaml(chunks(lf.replaceAll('\n', eol), size), options(['tests'])))
      assert.deepEqual(records.map((r) => [r.value, r.line]), wholeDocument(lf, 'tests').records)
      compared++
    }),
    { numRuns: 4000, seed: 11 },
  )
  assert.ok(compared > 150, `${compared} files compared`)
})

test('YAML: explicit keys (PyYAML writes `? key` and `: value` for a key of 128 characters or more) read item by item, and the items after them stream', async () => {
  const long = 'q'.repeat(130)
  const text = [
    'tests:',
    '- id: a',
    '  metadata:',
    `    ? ${long}`,
    '    : 1',
    '    ? |',
    '      a key of',
    '      - two lines',
    '    : a: 1',
    '      b: |',
    '        - not an item',
    '    short: x',
    '- ? plain key',
    '  : - one',
    '    - two',
    '  id: b',
    `- id: c`,
    `  input: "${'w '.repeat(50)}`,
    '    folded"',
    '  ? "a quoted key',
    '    over two lines"',
    '  :',
    '    nested: true',
    '- id: d',
    '',
  ].join('\n')
  const want = wholeDocument(text, 'tests')
  assert.deepEqual(want.records.map(([value]) => (value as { id: string }).id), ['a', 'b', 'c', 'd'])
  assert.deepEqual((want.records[0]![0] as { metadata: unknown }).metadata, { [long]: 1, 'a key of\n- two lines\n': { a: 1, b: '- not an item\n' }, short: 'x' })
  for (const size of [1, 7, 64, 4096]) {
    const opts = options(['tests'])
    const records = await collect(readYaml(chunks(text, size), opts))
    assert.deepEqual(records.map((r) => [r.value, r.line]), want.records, `chunks of ${size}`)
    assert.deepEqual(opts.header, want.header)
  }

  // The items after one with an explicit key come before the file has been read to its end.
  const items = Array.from({ length: 400 }, (_, i) => `- id: c${i}\n  metadata:\n    ${i === 1 ? `? ${long}\n    : v` : 'k: v'}\n`).join('')
  assertStreams(await chunksReadBefore(items), 400)
})

test('YAML: a line of an item that starts with a tab is read in that item alone, and the items after it stream', async () => {
  const text = [
    'tests:',
    '- id: a',
    '  input: a plain text',
    '    \tgoes on after a tab',
    '  metadata: {k: 1}',
    '- id: b',
    '  notes: |',
    '    \ttab in a block',
    '- id: c',
    '',
  ].join('\n')
  const want = wholeDocument(text, 'tests')
  assert.deepEqual(want.records[0]![0], { id: 'a', input: 'a plain text goes on after a tab', metadata: { k: 1 } })
  for (const size of [1, 7, 64]) {
    const records = await collect(readYaml(chunks(text, size), options(['tests'])))
    assert.deepEqual(records.map((r) => [r.value, r.line]), want.records, `chunks of ${size}`)
  }
  // A tab-led line that ends a block scalar, which `yaml` reads whole as a key of the file though it refuses it alone, is read whole.
  const ending = 'tests:\n- id: a\n  t: |\n  \tk: v\n  :\n- id: b\n'
  const whole = wholeDocument(ending, 'tests')
  assert.deepEqual(whole.records, [[{ id: 'a', t: '\t\n' }, 2]])
  assert.equal(whole.header.k, 'v')
  for (const size of [1, 4096]) {
    const opts = options(['tests'])
    assert.deepEqual((await collect(readYaml(chunks(ending, size), opts))).map((r) => [r.value, r.line]), whole.records)
    assert.equal(opts.header.k, 'v')
  }
  // `yaml` refuses a tab as indentation: the error is at its line, the items before it read.
  const read: unknown[] = []
  await assert.rejects(
    (async () => {
      for await (const r of readYaml(chunks('- id: a\n- id: b\n\tx: 1\n- id: c\n', 5), options(['tests']))) read.push(r.value)
    })(),
    (e: DataError) => e.code === 'E_PARSE' && e.location.line === 3,
  )
  assert.deepEqual(read, [{ id: 'a' }])

  const items = Array.from({ length: 400 }, (_, i) => `- id: c${i}\n  input: text${i === 1 ? '\n    \tafter a tab' : ''}\n`).join('')
  assertStreams(await chunksReadBefore(items), 400)
})

test('YAML: records whose keys js-yaml and yaml write explicit (long, over several lines, like indicators) read at any chunk size as the whole document', async () => {
  const key = fc.oneof(
    fc.stringMatching(/^[a-z]{1,8}$/),
    fc.string({ unit: fc.constantFrom('a', ' ', '\n', ':', '-', '#', '"', "'", '?', 'é'), minLength: 1, maxLength: 12 }),
    fc.integer({ min: 128, max: 1100 }).map((n) => 'k'.repeat(n)),
    fc.constantFrom('- x', '? y', ': z', 'a\n- b', ' lead', 'x\n\n', '|'),
  )
  const text = fc.string({ unit: fc.constantFrom('a', ' ', '\n', ':', '-', '#', '"', "'", '?', '|', 'é'), maxLength: 20 })
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 3 })),
  }))
  let explicit = 0
  await fc.assert(
    fc.asyncProperty(fc.array(fc.dictionary(key, value, { minKeys: 1, maxKeys: 4 }), { minLength: 1, maxLength: 5 }), fc.boolean(), fc.integer({ min: 1, max: 40 }), async (records, byJsYaml, size) => {
      const text = byJsYaml ? jsyaml.dump({ tests: records }, { lineWidth: -1 }) : stringifyYaml({ tests: records })
      if (/^ *(- )?\? /m.test(text)) explicit++
      const want = wholeDocument(text, 'tests')
      const got = await collect(readYaml(chunks(text, size), options(['tests'])))
      assert.deepEqual(got.map((r) => [r.value, r.line]), want.records)
    }),
    { numRuns: 300 },
  )
  assert.ok(explicit > 30, `${explicit} files of 300 had an explicit key`)
})

/** The line of the first comment in a YAML text, as `yaml`'s lexer tells comments from text holding `#`. */
function firstCommentLine(text: string): number | undefined {
  let line = 1
  let previous = ''
  for (const token of new Lexer().lex(text)) {
    if (token[0] === '#' && previous !== CST.SCALAR) return line
    line += token.split('\n').length - 1
    previous = token
  }
  return undefined
}

async function commentLine(text: string, size: number, recordKeys = ['tests']): Promise<number | undefined> {
  const opts = { ...options(recordKeys), comments: {} as { line?: number } }
  await collect(readYaml(chunks(text, size), opts))
  return opts.comments.line
}

test('YAML: the line of the first comment is told, and no `#` inside text is taken for one', async () => {
  const cases: [string, string[], number | undefined][] = [
    ['no comment; # in plain, quoted and block text', ['tests:', '- id: a#b', '  input: "x # not"', "  q: 'it''s # not'", '  t: |', '    # a heading', '    text', '  f: [a, "b # not"]', ''], undefined],
    ['# in a quoted text over several lines', ['tests:', '- id: a', '  input: "long', '    # still the text"', '  k: v', ''], undefined],
    ['at the top', ['# suite', 'tests:', '- id: a', ''], 1],
    ['after the list key', ['description: d', 'tests: # the cases', '- id: a', ''], 2],
    ['between the list key and the list', ['tests:', '  # first', '  - id: a', ''], 2],
    ['after a value', ['tests:', '- id: a', '  input: hi # greeting', ''], 3],
    ['after a quoted value', ['tests:', '- id: a', '  input: "hi" # greeting', ''], 3],
    ['after a flow list', ['tests:', '- id: a', '  tags: [x, y] # two', ''], 3],
    ['on a block scalar header', ['tests:', '- id: a', '  t: | # note', '    text', ''], 3],
    ['after a block scalar, less indented', ['tests:', '- id: a', '  t: |', '    text', '  # after', '  k: v', ''], 5],
    ['after the closing quote of a text over several lines', ['tests:', '- id: a', '  input: "long', '    text" # c', ''], 4],
    ['inside a flow list over several lines', ['tests:', '- id: a', '  tags: [x,', '    # c', '    y]', ''], 4],
    ['between items', ['tests:', '- id: a', '# next', '- id: b', ''], 3],
    ['in the keys after the list', ['tests:', '- id: a', 'after: 1 # c', ''], 3],
    ['after an alias', ['tests:', '- id: &x a', '  k: *x # c', ''], 3],
    ['in a file parsed whole (a directive)', ['%YAML 1.2', '---', 'tests:', '- id: a # c', ''], 4],
    ['in a bare list', ['- id: a', '  # c', ''], 2],
  ]
  for (const [what, lines, want] of cases) {
    const text = lines.join('\n')
    assert.equal(firstCommentLine(text), want, `${what}: the lexer`)
    for (const size of [1, 7, 4096]) assert.equal(await commentLine(text, size, what === 'in a bare list' ? [] : ['tests']), want, `${what}, chunks of ${size}`)
  }
})

test('YAML: the first comment in items of fields of every kind, `#` in their text or not, is the line `yaml`\'s lexer finds', async () => {
  // The fields of an item, `K` standing for a key of its own.
  const plain = fc.constantFrom(
    ['  K: v'], ['  K: a#b'], ['  K: "x # not"'], ["  K: 'a # b'"], [''], ['  K: |', '    # in block', '    text'], ['  K: >-', '    # folded'],
    ['  K: "open', '    # in quote', '    close"'], ["  K: 'open", "    # in quote'"], ['  K: [a, "#",', '    b]'], ['  K:', '    - "#"'],
  )
  const withComment = fc.constantFrom(
    ['  K: v # c'], ['  K: "x # not" # c'], ['# c'], ['  # c'], ['  K: | # c', '    text'], ['  K: >-', '    # folded', '  # after'],
    ['  K: "open', '    close" # c'], ['  K: [a, b] # c'], ['  K: [a,', '    # c', '    b]'], ['  K: &x v', '  K: *x # c'], ['  K:', '    - a # c'],
  )
  const field = fc.oneof({ arbitrary: plain, weight: 12 }, { arbitrary: withComment, weight: 1 })
  const rarely = fc.integer({ min: 0, max: 9 }).map((n) => n === 0)
  let compared = 0
  let commented = 0
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(rarely, fc.array(field, { maxLength: 4 })), { minLength: 1, maxLength: 4 }),
      rarely,
      fc.integer({ min: 1, max: 30 }),
      async (items, headed, size) => {
        let key = 0
        const lines = items.flatMap(([marked, fields]) => [marked ? '- id: a # c' : '- id: a', ...fields.flat().map((line) => line.replace('K', () => `k${key++}`))])
        const text = `${headed ? 'description: d # c\n' : ''}tests:\n${lines.join('\n')}\n`
        const doc = parseDocument(text, { uniqueKeys: true, strict: true })
        assert.deepEqual(doc.errors, [], text)
        const want = firstCommentLine(text)
        if (want !== undefined) commented++
        compared++
        assert.equal(await commentLine(text, size), want, text)
      },
    ),
    { numRuns: 1000, seed: 7 },
  )
  assert.ok(commented > 300 && compared - commented > 100, `${commented} of ${compared} files with a comment`)
})

test('JSON Lines and YAML: a record longer than thousands of chunks reads whole', async () => {
  // 16 000 pieces of one line, kept apart until its newline comes.
  const long = 'ü'.repeat(1 << 22)
  const jsonl = `${JSON.stringify({ a: long })}\n${JSON.stringify({ a: 'b' })}\n`
  const lines = await collect(readJsonl(chunks(jsonl, 256), options()))
  assert.deepEqual(lines.map((r) => [r.value, r.line]), [[{ a: long }, 1], [{ a: 'b' }, 2]])
  const yaml = `evalcases:\n  - a: ${long}\n  - a: b\n`
  const items = await collect(readYaml(chunks(yaml, 256), options(['evalcases'])))
  assert.deepEqual(items.map((r) => [r.value, r.line]), [[{ a: long }, 2], [{ a: 'b' }, 3]])
})

test('YAML: a long list, parsed several items at a time, reads as the whole document; a bad item is named alone', async () => {
  const item = (i: number) => [`  - id: c${i}`, `    input: |-`, `      line ${i}`, `      - not an item`, `    tags: [t${i}, "u, ${i}"]`, '']
  const lines = ['description: many', 'tests:', ...Array.from({ length: 30 }, (_, i) => item(i)).flat(), 'after: 1', '']
  const text = lines.join('\n')
  const want = wholeDocument(text, 'tests')
  assert.equal(want.records.length, 30)
  for (const size of [3, 100, 1 << 20]) {
    const opts = options(['tests'])
    const records = await collect(readYaml(chunks(text, size), opts))
    assert.deepEqual(records.map((r) => [r.value, r.line]), want.records, `chunks of ${size}`)
    assert.deepEqual(opts.header, want.header)
  }

  // An anchor in the 12th item, used in the 14th.
  const anchored = [...lines]
  anchored[2 + 11 * 6] = '  - id: &anchor c11'
  anchored[2 + 13 * 6] = '  - id: *anchor'
  const anchoredText = anchored.join('\n')
  const records = await collect(readYaml(chunks(anchoredText, 50), options(['tests'])))
  assert.deepEqual(
    records.map((r) => r.value),
    (parseDocument(anchoredText).toJS() as { tests: unknown[] }).tests,
  )
  assert.deepEqual(
    records.map((r) => r.line),
    wholeDocument(anchoredText, 'tests').records.map(([, line]) => line),
  )
  assert.equal((records[13]!.value as { id: string }).id, 'c11')

  // A bad 20th item fails where the whole document does; the 19 before it were delivered first.
  const bad = [...lines]
  bad[2 + 19 * 6 + 4] = '    tags: [open'
  const lineCounter = new LineCounter()
  const [error] = parseDocument(bad.join('\n'), { lineCounter }).errors
  const seen: unknown[] = []
  await assert.rejects(
    (async () => {
      for await (const r of readYaml(chunks(bad.join('\n'), 1 << 20), options(['tests']))) seen.push(r.value)
    })(),
    (e: DataError) => {
      assert.equal(e.code, 'E_PARSE')
      assert.equal(e.location.line, lineCounter.linePos(error!.pos[0]).line)
      assert.ok(e.location.line! > 2 + 19 * 6)
      return true
    },
  )
  assert.deepEqual(seen, want.records.slice(0, 19).map(([value]) => value))
})

test('YAML: anchors above the list and in items, and tags, read as the whole document reads them', async () => {
  const text = [
    'defaults: &defaults {judge: strict}',
    'tests:',
    '  - id: a',
    '    metadata: *defaults',
    '  - id: b',
    '    tags: &tags [x, y]',
    '  - id: !!str 3',
    '    tags: *tags',
    '',
  ].join('\n')
  for (const size of [1, 7, 4096]) {
    const opts = options(['tests'])
    const records = await collect(readYaml(chunks(text, size), opts))
    assert.deepEqual(records.map((r) => [r.value, r.line, r.index]), [
      [{ id: 'a', metadata: { judge: 'strict' } }, 3, 0],
      [{ id: 'b', tags: ['x', 'y'] }, 5, 1],
      [{ id: '3', tags: ['x', 'y'] }, 7, 2],
    ])
    assert.deepEqual(opts.header, { defaults: { judge: 'strict' }, $list: 'tests' })
  }
  // An anchor met partway, and a key after the list.
  const late = 'tests:\n  - id: a\n  - id: b\n    m: &m {k: 1}\n  - id: c\n    m: *m\nz: 1\n'
  const opts = options(['tests'])
  const records = await collect(readYaml(chunks(late, 5), opts))
  assert.deepEqual(records.map((r) => [r.value, r.line, r.index]), [
    [{ id: 'a' }, 2, 0],
    [{ id: 'b', m: { k: 1 } }, 3, 1],
    [{ id: 'c', m: { k: 1 } }, 5, 2],
  ])
  assert.deepEqual(opts.header, { $list: 'tests', z: 1 })
})

/** Records, lines and header keys of `text` read whole by `yaml`, aliases across items resolved. */
function wholeWithAliases(text: string, listKey: string): { records: [unknown, number][]; header: Record<string, unknown> } {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, strict: true, merge: true })
  assert.deepEqual(doc.errors, [])
  const js = doc.toJS({ maxAliasCount: -1 }) as Record<string, unknown> | unknown[]
  const values = (listKey ? (js as Record<string, unknown>)[listKey] : js) as unknown[]
  const list = (listKey ? doc.get(listKey) : doc.contents) as YAMLSeq<Node>
  const records = list.items.map((node, i): [unknown, number] => [values[i], lineCounter.linePos(node.range![0]).line])
  const header: Record<string, unknown> = listKey ? { ...(js as Record<string, unknown>), $list: listKey } : { $list: '' }
  delete header[listKey]
  return { records, header }
}

const shared = fc.oneof(
  fc.dictionary(fc.constantFrom('source', 'tags', 'k'), fc.oneof(fc.string({ maxLength: 8 }), fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 })), { minKeys: 1, maxKeys: 3, noNullPrototype: true }),
  fc.array(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 3 }),
)

test('YAML: values a file shares between its records (anchors in one, aliases in later ones) read as the whole document', async () => {
  // js-yaml writes a value met twice as PyYAML does: `&ref_0` where first met, `*ref_0` after, in whichever record.
  const spec = fc.record({
    pool: fc.array(shared, { minLength: 1, maxLength: 4 }),
    records: fc.array(fc.tuple(fc.string({ maxLength: 20 }), fc.array(fc.nat(), { maxLength: 3 })), { minLength: 1, maxLength: 12 }),
    keyed: fc.boolean(),
    // An item with a tab is read by yaml, after the items that set the anchors it uses.
    tabbed: fc.array(fc.nat(), { maxLength: 3 }),
  })
  await fc.assert(
    fc.asyncProperty(spec, async ({ pool, records, keyed, tabbed }) => {
      const cases = records.map(([input, picks], i) => {
        const c: Record<string, unknown> = { id: `c${i}`, input }
        for (const [k, p] of picks.entries()) c[`m${k}`] = pool[p % pool.length]
        return c
      })
      let text = jsyaml.dump(keyed ? { description: 'd', tests: cases } : cases)
      const lines = text.split('\n')
      const ids = lines.flatMap((l, k) => (/^\s*- id: c\d+$/.test(l) ? [k] : []))
      for (const t of new Set(tabbed.map((t) => ids[t % ids.length]!))) lines[t] += '\t# tab'
      text = lines.join('\n')
      const want = wholeWithAliases(text, keyed ? 'tests' : '')
      for (const size of [7, 1 << 20]) {
        const opts = options(['tests'])
        const got = await collect(readYaml(chunks(text, size), opts))
        assert.deepEqual(got.map((r) => [r.value, r.line]), want.records, text)
        assert.deepEqual(opts.header, want.header)
      }
    }),
    { numRuns: 300 },
  )
})

test('YAML: anchors above the list, merged into its items (AgentV), and an anchor set again, read as the whole document', async () => {
  const text = [
    'defaults: &defaults',
    '  judge: strict',
    '  tags: [base]',
    'tests:',
    '  - id: a',
    '    <<: *defaults',
    '    input: x',
    '  - id: b',
    '    metadata: &x {v: 1}',
    '  - id: c',
    '    metadata: &y',
    '      inner: *x',
    '  - id: d',
    '    metadata: &x {v: 2}',
    '  - id: e\t# read by yaml',
    '    first: *y',
    '    second: *x',
    '    third: *defaults',
    '  - id: f',
    '    again: *x',
    '',
  ].join('\n')
  const want = wholeWithAliases(text, 'tests')
  assert.deepEqual(want.records.map(([value]) => value), [
    { id: 'a', judge: 'strict', tags: ['base'], input: 'x' },
    { id: 'b', metadata: { v: 1 } },
    { id: 'c', metadata: { inner: { v: 1 } } },
    { id: 'd', metadata: { v: 2 } },
    { id: 'e', first: { inner: { v: 1 } }, second: { v: 2 }, third: { judge: 'strict', tags: ['base'] } },
    { id: 'f', again: { v: 2 } },
  ])
  for (const size of [1, 7, 4096]) {
    const opts = options(['tests'])
    const got = await collect(readYaml(chunks(text, size), opts))
    assert.deepEqual(got.map((r) => [r.value, r.line]), want.records)
    assert.deepEqual(opts.header, { ...want.header })
  }
})

test('YAML: a file past 32 MiB whose records share a value, one with a tag, streams; an alias to an anchor let go names it', async () => {
  // PyYAML's yaml.dump of cases that hold one metadata dict: the anchor in the first, aliases in all.
  const item = (i: number) => `- id: ${i === 1 ? '!!str ' : ''}case-${i}\n  input: '${'lorem ipsum dolor '.repeat(40)}${i}'\n  metadata: ${i ? '*id001' : '&id001\n    source: synthetic\n    tags:\n    - a'}\n`
  const count = 48_000
  const text = Array.from({ length: count }, (_, i) => item(i)).join('')
  assert.ok(text.length > 33 << 20)
  let n = 0
  for await (const r of readYaml(chunks(text, 1 << 16), options(['tests']))) {
    const { id, metadata } = r.value as { id: string; metadata: unknown }
    assert.equal(id, `case-${n}`)
    assert.deepEqual(metadata, { source: 'synthetic', tags: ['a'] })
    n++
  }
  assert.equal(n, count)

  // Items that each set an anchor of their own, 17 MiB of them, and use the first item's: the texts
  // of the first ones are let go, but for the first item's, used by each.
  const own = (i: number) => `- id: c${i}\n  context: &own${i}\n  - '${'x'.repeat(2000)}'\n  again: *own${i}\n  shared: ${i ? '*shared' : '&shared {k: 1}'}\n`
  const many = Array.from({ length: 9000 }, (_, i) => own(i)).join('')
  const sharedLate = await collect(readYaml(chunks(`${many}- id: late\t# read by yaml\n  shared: *shared\n`, 1 << 16), options(['tests'])))
  assert.equal(sharedLate.length, 9001)
  assert.deepEqual(sharedLate[9000]!.value, { id: 'late', shared: { k: 1 } })
  const late = `- id: late\t# read by yaml\n  context: *own1\n`
  await assert.rejects(collect(readYaml(chunks(many + late, 1 << 16), options(['tests']))), (e: DataError) => {
    assert.equal(e.code, 'E_PARSE')
    assert.equal(e.location.line, 9000 * 5 + 1)
    assert.match(e.message, /alias \*own1 names no anchor set in the last 16 MiB of items that set anchors/)
    return true
  })
})

test('YAML writer: header, list key, block scalars, read back equal', async () => {
  const sink = new MemorySink()
  const w = yamlWriter(sink, { header: { description: 'd' }, listKey: 'evalcases' })
  const cases: JsonObject[] = [
    { id: 'a', input: 'line one\nline two', n: 1 },
    { id: 'b', input: [{ role: 'user', content: 'x: y' }] },
  ]
  for (const c of cases) await w.write(c)
  await w.end()
  assert.match(sink.text, /^description: d\n\nevalcases:\n {2}- id: a\n {4}input: \|-\n {6}line one\n {6}line two\n/)
  const opts = options(['evalcases'])
  const back = await collect(readYaml(chunks(sink.text, 10), opts))
  assert.deepEqual(back.map((r) => r.value), cases)
  assert.deepEqual(opts.header, { description: 'd', $list: 'evalcases' })
})

test('YAML writer: a key named << is written quoted, so that it reads back as a key, not a merge', async () => {
  const cases: JsonObject[] = [
    { id: 'a', input: 'q', metadata: { '<<': { a: 1 }, b: 2 } },
    { id: 'b', input: 'q', metadata: { '<<': 'text', deep: [{ '<<': [1, 2] }] } },
    // Values left to `yaml` (a text of several lines whose first line is only spaces) beside the key.
    { id: 'c', input: '  \nindented', '<<': { on: true } },
  ]
  const sink = new MemorySink()
  const w = yamlWriter(sink, { listKey: 'evalcases' })
  for (const c of cases) await w.write(c)
  await w.end()
  assert.doesNotMatch(sink.text, /(^|\s)<<:/)
  assert.deepEqual((await collect(readYaml(chunks(sink.text, 6), options(['evalcases'])))).map((r) => r.value), cases)
  assert.deepEqual(parseDocument(sink.text, { merge: true }).toJS(), { evalcases: cases })
})

test('JSON and JSON Lines refuse a key given twice in one object, naming its path and line', async () => {
  const tricky = '{"a": {"b": "\\"b\\": 1", "c": {"d": 1, "d": 2}}, "e\\\\": ["x\\\\"]}'
  const [, twice] = await collect(readJsonl(chunks(`{"ok": 1}\n${tricky}\n`, 7), options()))
  assert.equal(twice!.error?.location.line, 2)
  assert.equal(twice!.error?.location.field, 'a.c.d')
  assert.match(twice!.error!.message, /duplicate key "d"/)
  await assert.rejects(collect(readJson(chunks(`[\n{"ok": 1},\n{"x": [{"k": 1},\n {"k": 2, "k": 3}]}\n]`, 5), options())), (e: DataError) => {
    assert.equal(e.location.line, 4)
    assert.equal(e.location.field, 'x[1].k')
    return true
  })
  // Keys that only look alike, and key-like text inside strings, are fine.
  const fine = await collect(readJsonl(chunks('{"k": "\\"k\\": 2", "K": 1, "n": {"k": 1}}\n', 4), options()))
  assert.deepEqual(fine[0]?.value, { k: '"k": 2', K: 1, n: { k: 1 } })
})

test('YAML writer: strings whose first line is only spaces keep their spaces', async () => {
  const values = [' \n', '   \n\nx', ' \n ', 'a\n \nb', '  x\ny', ' lead', '\n  \n\n']
  const sink = new MemorySink()
  const w = yamlWriter(sink, { listKey: 'tests' })
  await w.write({ id: 'a', values, nested: { deep: [{ v: ' \n' }] } })
  await w.end()
  const back = await collect(readYaml(chunks(sink.text, 16), options(['tests'])))
  assert.deepEqual(back[0]?.value, { id: 'a', values, nested: { deep: [{ v: ' \n' }] } })
})

test('JSON: records that share a line are given their column, across chunks of any size; a record that starts its line is not', async () => {
  const text = '[{"a": 1}, {"a": "x, y"},\n  {"a": [2]},   {"a": {"b": "}"}}, 7,\n{"a": 3}\n]'
  const starts = ['{"a": 1}', '{"a": "x, y"}', '{"a": [2]}', '{"a": {"b": "}"}}', '7', '{"a": 3}'].map((r) => text.indexOf(r))
  const column = (offset: number) => offset - text.lastIndexOf('\n', offset - 1)
  const want = [[1], [1, column(starts[1]!)], [2], [2, column(starts[3]!)], [2, column(starts[4]!)], [3]]
  for (const size of [1, 2, 3, 5, 8, 13, 1000]) {
    const records = await collect(readJson(chunks(text, size), options()))
    assert.deepEqual(records.map((r) => (r.column === undefined ? [r.line] : [r.line, r.column])), want, `chunks of ${size}`)
  }
})

test('YAML writer: text that YAML 1.1 (PyYAML) reads as a boolean, number or date is quoted; other text stays plain', async () => {
  const quoted = ['yes', 'No', 'on', 'OFF', 'y', '2024-01-01', '12:30:00', '1_000', '0b101', '2001-12-14t21:59:43.10-05:00']
  const plain = ['easy', 'v1.2', '1.0.0', '12-34', 'yesterday', 'on time']
  const sink = new MemorySink()
  const w = yamlWriter(sink, { listKey: 'tests' })
  await w.write({ id: 'a', quoted, plain, count: 3, flag: true, keys: { on: 'push', no: 1, '2024-01-01': 'day', off: { yes: 'y' } } })
  await w.end()
  for (const text of quoted) assert.ok(sink.text.includes(`- "${text}"\n`), text)
  for (const text of plain) assert.ok(sink.text.includes(`- ${text}\n`), text)
  assert.match(sink.text, /count: 3\n/)
  assert.match(sink.text, /flag: true\n/)
  // Read under YAML 1.1, as PyYAML reads it, every text is still text.
  const doc = parseDocument(sink.text, { version: '1.1' }).toJS() as { tests: { quoted: unknown[]; plain: unknown[]; keys: unknown }[] }
  assert.deepEqual(doc.tests[0]!.quoted, quoted)
  assert.deepEqual(doc.tests[0]!.plain, plain)
  // Keys too: `on:` would be the key true.
  assert.deepEqual(doc.tests[0]!.keys, { on: 'push', no: 1, '2024-01-01': 'day', off: { yes: 'y' } })
  const back = await collect(readYaml(chunks(sink.text, 16), options(['tests'])))
  assert.deepEqual(back[0]?.value, { id: 'a', quoted, plain, count: 3, flag: true, keys: { on: 'push', no: 1, '2024-01-01': 'day', off: { yes: 'y' } } })
})

test('mayBeJson says yes to every text parseExact reads, and no to text that is not JSON', () => {
  const whitespace = fc.stringMatching(/^[ \t\n\r]{0,3}$/)
  fc.assert(
    fc.property(whitespace, fc.jsonValue(), whitespace, (before, value, after) => {
      const text = before + JSON.stringify(value) + after
      parseExact(text)
      assert.equal(mayBeJson(text), true, text)
    }),
  )
  for (const text of ['NaN', ' Infinity', '-Infinity', '[NaN]', 'true', 'false', 'null', '"a"', '-1', '7']) {
    parseExact(text)
    assert.equal(mayBeJson(text), true, text)
  }
  // Text that is not JSON is told without a parse; where a parse would still be needed, it throws as before.
  for (const text of ['', '  ', 'v0_12', 'hello, world', "'quoted'", '\ufeff{}', '#', 'Yes', ')']) {
    assert.equal(mayBeJson(text), false, text)
    assert.throws(() => parseExact(text))
  }
})

test('JSON and JSON Lines keep an integer past 2^53 as its digits, with a warning, where JSON.parse would round it', async () => {
  const text = '{"id": 12345678901234567890, "n": -9007199254740993, "safe": 9007199254740991, "s": "12345678901234567890", "f": 1.2345678901234567e300, "list": [98765432109876543210]}'
  const want = { id: '12345678901234567890', n: '-9007199254740993', safe: 9007199254740991, s: '12345678901234567890', f: 1.2345678901234567e300, list: ['98765432109876543210'] }
  assert.deepEqual(parseExact(text), { value: want, kept: ['12345678901234567890', '-9007199254740993', '98765432109876543210'] })
  assert.deepEqual(parseExact('{"a": "\\"12345678901234567890", "b": 1}'), { value: { a: '"12345678901234567890', b: 1 } })
  const warnings = (digits: string[]) => digits.map((d) => `the integer ${d} is past what a number holds exactly: kept as text, every digit`)
  const lines = await collect(readJsonl(chunks(`${text}\n{"small": 1}\n`, 9), options()))
  assert.deepEqual(lines.map((r) => [r.value, r.warnings]), [
    [want, warnings(['12345678901234567890', '-9007199254740993', '98765432109876543210'])],
    [{ small: 1 }, undefined],
  ])
  const records = await collect(readJson(chunks(`[${text}, {"small": 1}]`, 9), options()))
  assert.deepEqual(records.map((r) => [r.value, r.warnings]), lines.map((r) => [r.value, r.warnings]))
})

test('NaN and the infinities are read and written as Python\'s json reads and writes them, where they became null', async () => {
  const text = '{"score": NaN, "hi": Infinity, "lo": -Infinity, "s": "NaN and Infinity", "big": 12345678901234567890}'
  const { value, kept } = parseExact(text) as { value: Record<string, unknown>; kept: string[] }
  assert.ok(Number.isNaN(value.score))
  assert.deepEqual([value.hi, value.lo, value.s, value.big, kept], [Infinity, -Infinity, 'NaN and Infinity', '12345678901234567890', ['12345678901234567890']])
  assert.throws(() => parseExact('{"a": NaNa}'), SyntaxError)
  assert.throws(() => parseExact('{"a": "NaN'), SyntaxError)
  const record = { score: NaN, hi: Infinity, lo: -Infinity, n: null, list: [NaN, 1] }
  assert.equal(stringifyJson(record), '{"score":NaN,"hi":Infinity,"lo":-Infinity,"n":null,"list":[NaN,1]}')
  assert.equal(stringifyJson(record, { pythonSpacing: true }), '{"score": NaN, "hi": Infinity, "lo": -Infinity, "n": null, "list": [NaN, 1]}')
  assert.equal(stringifyJson({ a: NaN }, { indent: 2 }), '{\n  "a": NaN\n}')
  const lines = await collect(readJsonl(chunks(`${stringifyJson(record)}\n`, 5), options()))
  const back = lines[0]!.value as typeof record
  assert.ok(Number.isNaN(back.score) && Number.isNaN(back.list[0]))
  assert.deepEqual([back.hi, back.lo, back.n, back.list[1]], [Infinity, -Infinity, null, 1])
})

test('YAML keeps an integer past 2^53 as its digits, with a warning, as JSON does, where it was rounded', async () => {
  const text = 'evalcases:\n  - id: a\n    metadata: {seed: 9007199254740993, small: 7, list: [-123456789012345678901, 2.5]}\n  - id: b\n    metadata: {n: 1}\n'
  const records = await collect(readYaml(chunks(text, 7), options(['evalcases'])))
  assert.deepEqual(records.map((r) => [r.value, r.warnings]), [
    [
      { id: 'a', metadata: { seed: '9007199254740993', small: 7, list: ['-123456789012345678901', 2.5] } },
      ['9007199254740993', '-123456789012345678901'].map((d) => `the integer ${d} is past what a number holds exactly: kept as text, every digit`),
    ],
    [{ id: 'b', metadata: { n: 1 } }, undefined],
  ])
})

test("offsetOf finds a field's key or item in a record's JSON text, past strings that hold brackets, commas and escaped quotes", () => {
  const text = '{\n  "input": "q, [x]",\n  "tools_called": [\n    {"name": "a", "x": [1, {"y": "}"}]},\n    {"name": 5, "z": "\\"]"}\n  ],\n  "m": {"a": [1, 2, {"b": 3}]}\n}'
  const at = (path: (string | number)[]) => {
    const offset = offsetOf(text, path)
    return offset === undefined ? undefined : text.slice(offset, offset + 9)
  }
  assert.equal(at(['input']), '"input": ')
  assert.equal(at(['tools_called', 1, 'name']), '"name": 5')
  assert.equal(at(['tools_called', 1, 'z']), '"z": "\\"]')
  assert.equal(at(['tools_called', 0, 'x', 1, 'y']), '"y": "}"}')
  assert.equal(at(['m', 'a', 2]), '{"b": 3}]')
  // A path that leads nowhere in the record.
  assert.equal(at(['m', 'missing']), undefined)
  assert.equal(at(['tools_called', 5]), undefined)
  assert.equal(at(['input', 'deeper']), undefined)
})
