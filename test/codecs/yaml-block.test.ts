import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import * as jsyaml from 'js-yaml'
import { isSeq, LineCounter, parseDocument, stringify } from 'yaml'
import { LEFT_TO_YAML, readBlockItem } from '../../src/codecs/yaml-block.ts'
import { yamlItem, yamlMapping } from '../../src/codecs/yaml-emit.ts'
import { plainHead } from '../../src/codecs/yaml.ts'
import { read } from '../../src/index.ts'
import { evalcaseCase, SampleGenerator } from '../../bench/data.ts'
import { SHARED_FIXTURES } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp.ts'

/**
 * `yaml` is the judge: an item the block reader reads must be one `yaml` reads without an error,
 * as one list item, to the same value, starting on the same line. Returns whether it was read.
 */
function holdsToYaml(text: string): boolean {
  const item = readBlockItem(text)
  if (!item) return false
  const lineCounter = new LineCounter()
  // Merge keys as evalferry reads them, where the text holds `<<`.
  const doc = parseDocument(text, { uniqueKeys: true, strict: true, prettyErrors: false, lineCounter, merge: true })
  assert.deepEqual(doc.errors.map((e) => e.message), [], `read what yaml refuses: ${JSON.stringify(text)}`)
  const list = doc.contents
  assert.ok(isSeq(list) && list.items.length === 1, `read what is not one list item: ${JSON.stringify(text)}`)
  // evalferry reads with yaml's alias limit at 1000 (its default is 100).
  assert.deepStrictEqual(item.value, (doc.toJS({ maxAliasCount: 1000 }) as unknown[])[0], JSON.stringify(text))
  const node = list.items[0] as { range?: number[] } | null
  if (node?.range) assert.equal(item.line, lineCounter.linePos(node.range[0]!).line - 1, `line of ${JSON.stringify(text)}`)
  return true
}

/** Pieces of lines, right and wrong, for items the reader must read as `yaml` does or leave to it. */
const piece = fc.constantFrom(
  '- ', '-', 'key: ', 'k2: ', '"k": ', "'k': ", 'k:', 'a b: ', 'word', 'two words', '1', '-0', '0x1F', '0o7', '1e3', '.inf', '~', 'null', 'true', 'False',
  '"a\\"b\\n"', "'it''s'", '"abc', "'abc", 'abc"', '|', '|-', '|+', '>', '>-', '>+', '|2', '|1', '|2-', '>1+', '|-3', '[a, b]', '{a: 1}', '[', '{x: [1, "y"]}',
  '[]', '{}', '# comment', ' # trailing', '&a', '*a', '!t', '? ', ': ', '\t', 'x: y: z', '', ' ', '"', "'", '"\\', '#', 'a#b', 'http://x', '- - a', '---',
  '...', '@', '`', '%', ':x', '?x', ',', ']', '}', '"\\x41\\u00e9"', '"a\\ b"', '"\\q"', '<<', '<<: ', '1: ', 'true: ', '"1": ', '1.0: ', '0x10: ', '~: ', 'null: ', '.inf: ', '-0: ', 'é', '\u00a0', '12345678901234567',
)
const line = fc.tuple(fc.integer({ min: 0, max: 7 }), fc.array(piece, { minLength: 1, maxLength: 3 })).map(([indent, pieces]) => ' '.repeat(indent) + pieces.join(''))
const itemText = fc
  .tuple(fc.integer({ min: 0, max: 2 }), fc.array(piece, { maxLength: 3 }), fc.array(line, { maxLength: 7 }), fc.boolean())
  .map(([indent, first, rest, end]) => [' '.repeat(indent) + '- ' + first.join(''), ...rest].join('\n') + (end ? '\n' : ''))

test('an item made of pieces of YAML, right or wrong, is read as yaml reads it, or left to yaml', () => {
  let readHere = 0
  fc.assert(
    fc.property(itemText, (text) => {
      if (holdsToYaml(text)) readHere++
    }),
    { numRuns: 6000 },
  )
  // Most such items are wrong, or hold what is left to yaml; the rest are read here.
  assert.ok(readHere > 200, `read ${readHere} of 6000`)
})

const text = fc.oneof(
  { arbitrary: fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ,.'"()/!?&*|>%@`#:[\]{}=+-]{0,60}$/), weight: 6 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }), weight: 2 },
  { arbitrary: fc.string({ unit: fc.constantFrom('a', 'b', ' ', '\n', '#', ':', '-', '"', "'", '\\', 'é', '\t'), maxLength: 40 }), weight: 5 },
  { arbitrary: fc.constantFrom('', ' ', 'a ', ' a', 'a: b', 'a #b', '- a', '-', 'a\nb', 'a\n', '\n', 'a\n\n', '  a\nb', 'x\n  y\n', 'true', 'null', '~', '1', '1.5', '0x1f', '.inf', '-0', 'x'.repeat(120), 'a b c d e f g h i j k l m '.repeat(8)), weight: 3 },
)
const scalar = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null))
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('list'), tie('object')),
  list: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(text, fc.constantFrom('input', 'id', 'metadata')), tie('value'), { maxKeys: 5, noNullPrototype: true }),
}))

/** How the tools write YAML: `yaml` (AgentV, evalferry) in its styles, js-yaml as PyYAML folds and quotes, and this project's writer. */
const writer = fc.oneof(
  fc
    .record({
      lineWidth: fc.constantFrom(0, 20, 40, 80),
      indent: fc.constantFrom(2, 3, 4),
      indentSeq: fc.boolean(),
      defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'QUOTE_SINGLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED'),
      collectionStyle: fc.constantFrom('any', 'block', 'flow'),
    })
    .map((options) => (v: unknown) => stringify([v], options as never)),
  fc
    .record({ lineWidth: fc.constantFrom(-1, 20, 40, 80), indent: fc.constantFrom(2, 4), flowLevel: fc.constantFrom(-1, 2), quotingType: fc.constantFrom('"', "'"), forceQuotes: fc.boolean(), noArrayIndent: fc.boolean() })
    .map((options) => (v: unknown) => jsyaml.dump([v], options as never)),
  fc.constantFrom('  ', '').map((indent) => (v: unknown) => yamlItem(v as never, indent)),
)

/** What hands add to a file: lines of spaces, comments, spaces and comments after a line, Windows line breaks. */
const edits = fc.array(fc.tuple(fc.nat(), fc.constantFrom('blank', 'comment', 'trail', 'crlf'), fc.integer({ min: 0, max: 8 })), { maxLength: 3 })

function edit(text: string, changes: [number, string, number][]): string {
  for (const [at, kind, n] of changes) {
    const lines = text.split('\n')
    const k = lines.length > 1 ? 1 + (at % (lines.length - 1)) : 0
    if (kind === 'crlf') text = lines.join('\r\n')
    else {
      if (kind === 'blank') lines.splice(k, 0, ' '.repeat(n))
      else if (kind === 'comment') lines.splice(k, 0, `${' '.repeat(n)}# note: x`)
      else lines[k] = `${lines[k]}${' '.repeat((n % 3) + 1)}${n > 4 ? '# c' : ''}`
      text = lines.join('\n')
    }
  }
  return text
}

/** How many of `numRuns` texts drawn from `texts` the `judge` (`holdsToYaml`, say) read without yaml. */
function readWithoutYaml(texts: fc.Arbitrary<string>, judge: (text: string) => boolean, numRuns: number): number {
  let read = 0
  fc.assert(
    fc.property(texts, (text) => {
      if (judge(text)) read++
    }),
    { numRuns },
  )
  return read
}

test('values written by yaml, js-yaml and evalferry, then edited by hand, are read as yaml reads them', () => {
  const texts = fc.tuple(value, writer, edits).map(([v, write, changes]) => edit(write(v), changes))
  const readHere = readWithoutYaml(texts, holdsToYaml, 3000)
  assert.ok(readHere > 1500, `read ${readHere} of 3000`)
})

test('eval cases as the tools write them are all read without yaml', () => {
  const samples = new SampleGenerator(7)
  const cases = Array.from({ length: 300 }, () => evalcaseCase(samples.next()))
  const writers: [string, (v: unknown) => string][] = [
    ['evalferry', (v) => yamlItem(v as never, '  ')],
    ['yaml', (v) => stringify([v])],
    ['js-yaml', (v) => jsyaml.dump([v])],
  ]
  for (const [name, write] of writers) {
    for (const c of cases) assert.ok(holdsToYaml(write(c)), `${name} wrote what the reader leaves to yaml:\n${write(c)}`)
  }
})

/** The list items of a real file's record list, cut at the indentation of its first `-`. */
function listItems(text: string): string[] {
  const lines = text.split(/(?<=\n)/)
  const key = lines.findIndex((line) => /^(evalcases|tests|cases):\s*$/.test(line))
  if (key < 0) return []
  const dash = lines.slice(key + 1).find((line) => /^\s*- /.test(line))!
  const prefix = dash.slice(0, dash.indexOf('-') + 2)
  const items: string[] = []
  for (const line of lines.slice(key + 1)) {
    if (line.startsWith(prefix)) items.push(line)
    else if (/^\S/.test(line)) break
    else if (items.length) items[items.length - 1] += line
  }
  return items
}

/**
 * `yaml` is the judge of a head (the keys above the record list) too: one read without it must be
 * a mapping `yaml` reads without an error, to the same keys and values. Returns whether it was read.
 */
function headHoldsToYaml(text: string): boolean {
  const head = plainHead(text)
  if (head === undefined) return false
  const doc = parseDocument(text, { uniqueKeys: true, strict: true, prettyErrors: false, merge: true })
  assert.deepEqual(doc.errors.map((e) => e.message), [], `read what yaml refuses: ${JSON.stringify(text)}`)
  assert.deepStrictEqual(head, doc.toJS({ maxAliasCount: 1000 }) ?? {}, JSON.stringify(text))
  return true
}

/** How the tools write the keys above a list: `yaml` in its styles, js-yaml, and this project's writer. */
const headWriter = fc.oneof(
  fc
    .record({ lineWidth: fc.constantFrom(0, 20, 80), indent: fc.constantFrom(2, 4), indentSeq: fc.boolean(), defaultStringType: fc.constantFrom('PLAIN', 'QUOTE_DOUBLE', 'BLOCK_LITERAL', 'BLOCK_FOLDED'), collectionStyle: fc.constantFrom('any', 'block', 'flow') })
    .map((options) => (v: object) => stringify(v, options as never)),
  fc.record({ lineWidth: fc.constantFrom(-1, 20, 80), indent: fc.constantFrom(2, 4), flowLevel: fc.constantFrom(-1, 1), forceQuotes: fc.boolean() }).map((options) => (v: object) => jsyaml.dump(v, options as never)),
  fc.constant((v: object) => yamlMapping(v as never) + '\n'),
)
const headKeys = fc.dictionary(fc.oneof(fc.stringMatching(/^[a-z_][a-z0-9_.-]{0,12}$/), fc.constantFrom('name', 'description', 'execution', 'null', 'true', 'tags', 'x y')), value, { minKeys: 1, maxKeys: 5, noNullPrototype: true })

test('the keys above a record list are read without yaml as yaml reads them, or left to it', () => {
  const texts = fc.tuple(headKeys, headWriter, edits).map(([keys, write, changes]) => edit(write(keys), changes))
  const readHere = readWithoutYaml(texts, headHoldsToYaml, 3000)
  // Keys with spaces, keys read as null, flow mappings and quoted keys are left to yaml.
  assert.ok(readHere > 300, `read ${readHere} of 3000`)
  // Heads made of pieces of YAML, right or wrong, at the start of lines and under them.
  fc.assert(fc.property(fc.array(line, { maxLength: 8 }), (lines) => void headHoldsToYaml(lines.join('\n') + '\n')), { numRuns: 4000 })
  // The heads datasets have, as the tools write them, are all read without yaml.
  const samples = new SampleGenerator(11)
  for (let i = 0; i < 200; i++) {
    const c = evalcaseCase(samples.next()) as { id: string; input: unknown; metadata?: unknown }
    const keys = { name: c.id, description: c.input, version: '1.0', execution: { target: 'llm' }, tags: ['demo', c.id], metadata: c.metadata ?? {} }
    for (const write of [(v: object) => yamlMapping(v as never) + '\n', (v: object) => stringify(v), (v: object) => jsyaml.dump(v)]) {
      assert.ok(headHoldsToYaml(write(keys)), `left to yaml:\n${write(keys)}`)
    }
  }
})

test('what the head reader reads, and what it leaves to yaml', () => {
  assert.deepEqual(plainHead(''), {})
  assert.deepEqual(plainHead('\n# a comment\n  \n'), {})
  assert.deepEqual(plainHead('# title\nname: demo\n\n# the target\nexecution:\n  target: llm\ntags: [a, b]\nversion: "1.0"\n'), { name: 'demo', execution: { target: 'llm' }, tags: ['a', 'b'], version: '1.0' })
  // A block whose lines start with `#` holds them as text.
  assert.deepEqual(plainHead('description: |\n  # Heading\n  text\nnote: x\n'), { description: '# Heading\ntext\n', note: 'x' })
  assert.deepEqual(plainHead('# Windows\r\nname: a\r\nexecution:\r\n  target: llm\r\n'), { name: 'a', execution: { target: 'llm' } })
  for (const declined of ['---\nname: a\n', '%YAML 1.2\n---\n', 'a: &x 1\nb: *x\n', '<<: {a: 1}\n', '"quoted": 1\n', 'null: 1\n', '__proto__: 1\n', 'a: {__proto__: 1}\n', 'a: "one\ntwo"\n', 'a: b\n\tc: d\n', 'x\n', 'a: 1\rb: 2\n']) {
    assert.equal(plainHead(declined), undefined, JSON.stringify(declined))
  }
})

test('every item of the real AgentV YAML files is read without yaml', () => {
  const dir = join(SHARED_FIXTURES, 'evalcase')
  let count = 0
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    if (!/\.ya?ml$/.test(name)) continue
    for (const text of listItems(readFileSync(join(dir, name), 'utf8'))) {
      assert.ok(holdsToYaml(text), `${name}:\n${text}`)
      count++
    }
  }
  assert.ok(count >= 15, `${count} items`)
})

test('the keys above the record list of every real AgentV YAML file, and its sidecars, are read without yaml', () => {
  const dir = join(SHARED_FIXTURES, 'evalcase')
  let heads = 0
  let sidecars = 0
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    if (!/\.ya?ml$/.test(name)) continue
    const text = readFileSync(join(dir, name), 'utf8')
    const list = /^(?:evalcases|tests|cases):\s*$/m.exec(text)
    // A file that is a list of cases has no keys above it.
    if (!list && /^-( |$)/m.test(text)) continue
    const head = list ? text.slice(0, list.index) : text
    assert.ok(headHoldsToYaml(head), `${name}:\n${head}`)
    if (!list) sidecars++
    else if (Object.keys(plainHead(head)!).length) heads++
  }
  assert.ok(heads >= 5 && sidecars >= 1, `${heads} files with keys above their list, ${sidecars} sidecars`)
})

test('files PyYAML wrote are read without yaml, but for an integer past what a number holds', () => {
  // Written by PyYAML 6.0.3 from eleven cases: yaml.dump({'evalcases': cases}), and again with
  // allow_unicode=True, sort_keys=False, width=60. Long text is folded over lines, plain and quoted.
  for (const name of ['pyyaml-default.yaml', 'pyyaml-unicode.yaml']) {
    const items = listItems(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'yaml', name), 'utf8'))
    assert.equal(items.length, 11)
    for (const text of items.slice(0, 10)) assert.ok(holdsToYaml(text), `${name}:\n${text}`)
    const odd = items[10]!
    assert.match(odd, /big: 12345678901234567890/)
    assert.equal(readBlockItem(odd), undefined)
    assert.ok(holdsToYaml(odd.replace('big: 12345678901234567890', 'big: 1234567890')), odd)
  }
})

test('what the reader reads, and what it leaves to yaml', () => {
  const readHere: [string, unknown][] = [
    ['- a: |+\n    kept\n\n  b: |-\n    stripped\n\n', { a: 'kept\n\n', b: 'stripped' }],
    ['- >\n  folded\n  line\n\n    more\n  last\n', 'folded line\n\n  more\nlast\n'],
    ['- |2\n    two spaces kept\n', '  two spaces kept\n'],
    ['- - a\n  - b\n- c\n'.split('- c')[0]!, ['a', 'b']],
    ['- key:\n  - x\n  - y\n  next: 1\n', { key: ['x', 'y'], next: 1 }],
    ['- text: a plain line\n    folded on\n\n    and after a blank\n', { text: 'a plain line folded on\nand after a blank' }],
    ['- "a \\\n    b\\tc \\u00e9\n\n    d"\n', 'a b\tc é\nd'],
    ["- 'it''s\n   folded'\n", "it's folded"],
    ['- {a: [1, "x"], b: ~, c: .5} # flow\n', { a: [1, 'x'], b: null, c: 0.5 }],
    ['- id: 0x1F\n  n: 0o17\n  f: 1e3\n  t: TRUE\n  s: 1_000\n  inf: -.inf\n', { id: 31, n: 15, f: 1000, t: true, s: '1_000', inf: -Infinity }],
    ['-   # comment\n  id: a\n', { id: 'a' }],
    ['- id: a\r\n  input: b\r\n', { id: 'a', input: 'b' }],
    ['- 1.0: one\n  0x10: sixteen\n  ~: nothing\n  true: yes\n  .inf: far\n', { '1': 'one', '16': 'sixteen', '': 'nothing', true: 'yes', Infinity: 'far' }],
    ['- &a x\n', 'x'],
    ['- &top\n  m: &m {k: [1]}\n  n: *m\n  t: &t |\n    text\n  u: *t # again\n', { m: { k: [1] }, n: { k: [1] }, t: 'text\n', u: 'text\n' }],
    ['- l: &l\n  - a\n  again: *l\n', { l: ['a'], again: ['a'] }],
    ['- d: &d {a: 1, b: 2}\n  e: &e {c: 3, a: 4}\n  m:\n    b: kept\n    <<:\n    - *e\n    - *d\n    c: written\n', { d: { a: 1, b: 2 }, e: { c: 3, a: 4 }, m: { b: 'kept', c: 'written', a: 4 } }],
    ["- d: &d {a: 1}\n  m:\n    '<<': *d\n", { d: { a: 1 }, m: { '<<': { a: 1 } } }],
  ]
  for (const [text, expected] of readHere) {
    assert.deepStrictEqual(readBlockItem(text)?.value, expected, text)
    assert.ok(holdsToYaml(text))
  }
  const left = [
    '- *a\n', '- &a k: v\n', '- &a [*a]\n', '- &a\n  k: *a\n', '- &a x\n  b: [*a]\n', '- *a : v\n', '- &a,b x\n', '- !!str 1\n', '- ? complex\n  : key\n', '- a: 1\n  a: 2\n', '- 1: one\n  1.0: two\n', '- <<: x\n', '- m:\n    <<:\n      ~: 1\n', '- &a &b x\n', '- <<: {a: 1}\n  <<: {b: 1}\n', '- <<: {a: 1}\n  b: 1\n  b: 2\n',
    '- a: 12345678901234567\n', '- -0\n', '- a:\tb\n', '- a: x: y\n', '- a: "never closed\n', '- __proto__: {admin: true}\n', '- "\\q"\n', '- [a,\n  b]\n',
  ]
  for (const text of left) assert.equal(readBlockItem(text), undefined, text)
})

test('anchors of earlier items: their values used, copied; what is left to yaml declined', () => {
  const first = readBlockItem('- m: &m {k: 1}\n  n: &n\n    x: *m\n')!
  assert.deepEqual(first.value, { m: { k: 1 }, n: { x: { k: 1 } } })
  // An anchor set on a node that holds an alias is left to yaml, which counts aliases inside aliases.
  assert.deepEqual(first.anchors, new Map<string, unknown>([['m', { k: 1 }], ['n', LEFT_TO_YAML]]))
  assert.equal(first.used, undefined)
  const earlier = first.anchors!
  const later = readBlockItem('- a: *m\n  b: *m\n', earlier)!
  assert.deepEqual(later.value, { a: { k: 1 }, b: { k: 1 } })
  assert.deepEqual(later.used, new Set(['m']))
  const { a, b } = later.value as { a: object; b: object }
  assert.ok(a !== b && a !== earlier.get('m'), 'each alias gives its own copy')
  assert.equal(readBlockItem('- a: *n\n', earlier), undefined)
  assert.equal(readBlockItem('- a: *unknown\n', earlier), undefined)
  // An anchor set again in the item: its aliases after it use the item's own.
  assert.deepEqual(readBlockItem('- a: &m 2\n  b: *m\n', earlier)?.value, { a: 2, b: 2 })
  // yaml refuses an item past 1000 of an anchor's node and its aliases: from there, it judges.
  const uses = (n: number) => `- m: &m x\n${Array.from({ length: n }, (_, i) => `  k${i}: *m\n`).join('')}`
  assert.ok(holdsToYaml(uses(999)))
  assert.equal(readBlockItem(uses(1000)), undefined)
  assert.throws(() => parseDocument(uses(1000)).toJS({ maxAliasCount: 1000 }), /Excessive alias count/)
})

test('an error in a field of an item read without yaml names the field\'s own line', async () => {
  const dir = tempDir('evalferry-yaml-block-')
  const file = join(dir, 'cases.yaml')
  writeFileSync(file, 'evalcases:\n  - id: a\n    input: hi\n  - id: b\n    input:\n      - role: user\n        content: hi\n      - content: x\n        role: 5\n')
  assert.ok(readBlockItem('  - id: b\n    input:\n      - role: user\n        content: hi\n      - content: x\n        role: 5\n'))
  await assert.rejects(
    (async () => {
      for await (const _ of read(file, { from: 'evalcase' }));
    })(),
    (error: Error & { location?: unknown }) => {
      assert.deepEqual(error.location, { file, line: 9, field: 'input[1].role' })
      return true
    },
  )
})
