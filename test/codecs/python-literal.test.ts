import { test } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { parseNumpyArray, parsePythonLiteral } from '../../src/codecs/python-literal.ts'
import { pythonWith, runPython } from '../helpers/python.ts'

test('Python literals read as literal_eval reads them, as the values JSON holds', () => {
  const cases: [string, unknown][] = [
    ["{'topic': 'billing', 'reviewed': True, 'score': 0.75, 'reviewer': None}", { topic: 'billing', reviewed: true, score: 0.75, reviewer: null }],
    ['{"n": 1, "tags": ["a", "b"]}', { n: 1, tags: ['a', 'b'] }],
    // tuples are lists; `(1)` is 1; a comma may end any list
    ["{'pair': (1, 2), 'one': (1,), 'none': (), 'bracketed': (1)}", { pair: [1, 2], one: [1], none: [], bracketed: 1 }],
    ['[1, 2,]', [1, 2]],
    ["'a', 'b'", ['a', 'b']],
    ['1,', [1]],
    ["{'a': 1,}", { a: 1 }],
    // keys as json.dumps writes them; a key Python takes for an earlier one keeps that one's place and name
    ["{1: 'one', -5: 'minus', True: 't', None: 'n', (2): 'two'}", { '1': 't', '-5': 'minus', null: 'n', '2': 'two' }],
    ["{'a': 1, 'b': 2, 'a': 3}", { a: 3, b: 2 }],
    // strings: both quotes, escapes, raw, triple-quoted, side by side
    [`'it\\'s "x"'`, `it's "x"`],
    ["'\\x41\\101\\u0041\\U00000041\\0\\777'", 'AAAA\0\u01ff'],
    ["'\\a\\b\\f\\n\\r\\t\\v\\\\'", '\x07\b\f\n\r\t\v\\'],
    ["'\\d stays'", '\\d stays'],
    ["r'\\n\\''", "\\n\\'"],
    ["u'x' 'y' \"z\"", 'xyz'],
    ["('long '\n 'text')", 'long text'],
    ["'''one\r\ntwo\rthree'''", 'one\ntwo\nthree'],
    ["'joined \\\nline'", 'joined line'],
    ["'\\ud83d\\ude00 \\U0001F600 😀'", '😀 😀 😀'],
    // numbers
    ['1_000', 1000],
    ['0x_1F', 31],
    ['0o17', 15],
    ['0b101', 5],
    ['00', 0],
    ['-0', 0],
    ['-0.0', -0],
    ['+1.5', 1.5],
    ['-(2)', -2],
    ['1.', 1],
    ['.5', 0.5],
    ['1e-07', 1e-7],
    ['1.e5', 100000],
    ['1_0.5e1_0', 10.5e10],
    ['1e999', Infinity],
    ['-1e999', -Infinity],
    // integers past 2^53 keep their digits, as JSON's do
    ['12345678901234567890', '12345678901234567890'],
    ['-0x1FFFFFFFFFFFFFFFFF', '-590295810358705651711'],
    ['9007199254740991', 9007199254740991],
    // space, comments, line breaks inside brackets and blank lines around the value
    [" \t{'a':\n  1, # one\n 'b': 2}  # end\n\n", { a: 1, b: 2 }],
    ["\n# a comment\n{'a': 1}", { a: 1 }],
    ["{'a':\\\n1}", { a: 1 }],
    ['\\\n1', 1],
    ['1\\\n ', 1],
    ['1\n \n', 1],
    ['1\n  # note', 1],
  ]
  for (const [text, expected] of cases) assert.deepEqual(parsePythonLiteral(text), expected, text)
})

test('what literal_eval refuses, or what JSON cannot hold, is refused with its place', () => {
  const refused: [string, RegExp][] = [
    ["{'a': tru}", /the name tru, which is no literal at character 7$/],
    // the place in the text as given: leading spaces and CRLFs counted
    ["  {'a': tru}", /the name tru, which is no literal at character 9$/],
    ["{'a':\r\n\r\n tru}", /the name tru, which is no literal at character 11$/],
    ["{'a': 1", /expected "," or "}", found end of text at character 8$/],
    ["{'a' 1}", /expected ":", found "1" at character 6$/],
    ["'open", /a string that does not end at character 1$/],
    ["'line\nbreak'", /a string that does not end at character 1$/],
    ["{'a', 'b'}", /a set, which JSON cannot hold/],
    ['set()', /the name set, which is no literal JSON can hold/],
    ["b'bytes'", /bytes, which JSON cannot hold/],
    ["'a' b'b'", /bytes, which JSON cannot hold at character 5$/],
    ["f'x'", /an f-string/],
    ['1.5j', /a complex number/],
    ['...', /expected a value/],
    ["{1.5: 'a'}", /a key that is not text, a whole number, True, False or None/],
    ["{(1, 2): 'a'}", /a key that is not text/],
    ["{'__proto__': 1}", /__proto__/],
    ['01', /leading zeros/],
    ['1__0', /an invalid number/],
    ['1_e5', /an invalid number/],
    ['--1', /a sign before something that is not a number/],
    ['-True', /a sign before something that is not a number/],
    ["'\\x4'", /a \\x escape without 2 hex digits/],
    ["'\\U00110000'", /past the last Unicode character/],
    ["'\\N{BULLET}'", /by its Unicode name/],
    ["{'a': 1}\n{'b': 2}", /unexpected "\{" after the value/],
    ["'a'\n'b'", /unexpected "'" after the value/],
    ["\n  {'a': 1}", /unexpected indent/],
    ['\\\n 1', /unexpected indent at character 3$/],
    ['1\n  ', /unexpected indent at character 3$/],
    ['1\\\n', /a backslash that joins the last line to nothing/],
    ["{'a': 1} x", /unexpected "x" after the value/],
    ['\ufeff{}', /expected a value/],
    ["{'a': '\0'}", /a NUL character/],
    ['', /expected a value, found the end of the text/],
    ['['.repeat(201) + ']'.repeat(201), /more than 200 nested brackets/],
  ]
  for (const [text, message] of refused) assert.throws(() => parsePythonLiteral(text), message, JSON.stringify(text))
  // Python's own limit: 200 levels read
  assert.equal(JSON.stringify(parsePythonLiteral('['.repeat(200) + ']'.repeat(200))), '['.repeat(200) + ']'.repeat(200))
})

test("strings side by side are joined, as Python joins them, or refused where numpy's array text is no list", () => {
  assert.deepEqual(parsePythonLiteral("['a' 'b', 'c']"), ['ab', 'c'])
  assert.throws(() => parsePythonLiteral("['a' 'b']", { joinStrings: false }), /strings side by side, as numpy writes an array/)
  assert.deepEqual(parsePythonLiteral("['a', 'b']", { joinStrings: false }), ['a', 'b'])
})

test('numpy array text: items between brackets with spaces and line breaks between them; a shortened array is refused', () => {
  assert.deepEqual(parseNumpyArray(`['a' "it's" 'x\\ny']`), ['a', "it's", 'x\ny'])
  assert.deepEqual(parseNumpyArray("['word 0' 'word 1'\n 'word 2']"), ['word 0', 'word 1', 'word 2'])
  assert.deepEqual(parseNumpyArray('[1 2.5 None]'), [1, 2.5, null])
  assert.deepEqual(parseNumpyArray('[1.  2.5]'), [1, 2.5])
  assert.deepEqual(parseNumpyArray('[]'), [])
  assert.throws(() => parseNumpyArray("['w0' 'w1' ... 'w9']"), /an array numpy shortened/)
  assert.throws(() => parseNumpyArray("['a', 'b']"), /expected a space or "\]", found ","/)
  assert.throws(() => parseNumpyArray("['a''b']"), /expected a space or "\]"/)
  assert.throws(() => parseNumpyArray("['a'] x"), /unexpected "x" after the array/)
})

/** A Python 3 on this machine: every machine of the kind has one, and CI runs on one. */
const python = pythonWith('ast, pprint')
const needsPython = { skip: python ? false : 'needs python3, the judge of what a Python literal means' }

/** The lines `script` prints, given `lines` on its standard input. */
function printedLines(script: string, lines: string[], executable = python!): string[] {
  return runPython(executable, script, lines.join('\n') + '\n').split('\n').slice(0, -1)
}

// Values as a user's dict holds them: text of every kind (lone surrogates, quotes, line breaks),
// whole numbers, floats, nesting. -0 and integers past 2^53 are left out: JSON does not carry
// them to Python as themselves.
const key = fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom('1', '-7', '0', '12', 'true', 'false', 'null')).filter((k) => k !== '__proto__')
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: fc.constantFrom('a', "'", '"', '\\', '\n', '\r', '\t', '\x07', '\x7f', '\u2028', 'é', '😀', '#', ' ', ','), maxLength: 40 }),
)
const number = fc.oneof(
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0) && (!Number.isInteger(n) || Number.isSafeInteger(n))),
)
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, text, number, fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(key, tie('value'), { maxKeys: 4, noNullPrototype: true })),
}))

/** Python writes each JSON value given as a user's dict would be: `repr`, or `pprint` over several lines; some lists as tuples, some keys as numbers, True, False or None. */
const WRITE_AS_PYTHON = `
import json, pprint, random, re, sys
rnd = random.Random(7)
NAMES = {'true': True, 'false': False, 'null': None}
def py(v):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            other = int(k) if re.fullmatch(r'-?[1-9][0-9]*|0', k) else NAMES.get(k, k)
            out[other if other != k and other not in out and rnd.random() < 0.5 else k] = py(x)
        return out
    if isinstance(v, list):
        items = [py(x) for x in v]
        return tuple(items) if rnd.random() < 0.3 else items
    return v
for line in sys.stdin:
    v = py(json.loads(line))
    text = repr(v) if rnd.random() < 0.5 else pprint.pformat(v, width=rnd.randint(8, 40))
    print(json.dumps(text))
`

test("Python's repr and pprint of 3,000 random values read as those values", needsPython, () => {
  const values = fc.sample(value, { seed: 11, numRuns: 3000 })
  const texts = printedLines(WRITE_AS_PYTHON, values.map((v) => JSON.stringify(v))).map((line) => JSON.parse(line) as string)
  assert.equal(texts.length, values.length)
  let multiline = 0
  for (const [i, t] of texts.entries()) {
    if (t.includes('\n')) multiline++
    assert.deepEqual(parsePythonLiteral(t), values[i], t)
  }
  // pprint's layout was met: values over several lines, long text split in pieces side by side
  assert.ok(multiline > 150, `${multiline} values over several lines`)
})

/** literal_eval's judgement of each text: its value as JSON holds it, refused, or a value JSON cannot hold. */
const JUDGE = `
import ast, json, math, sys, warnings
warnings.simplefilter('ignore')
class Unsupported(Exception): pass
def canon(v):
    if isinstance(v, bool) or v is None or isinstance(v, str): return v
    if isinstance(v, int): return v if abs(v) <= 2**53 - 1 else str(v)
    if isinstance(v, float): return v if math.isfinite(v) else {'$float': repr(v)}
    if isinstance(v, (list, tuple)): return [canon(x) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(k, bool): name = 'true' if k else 'false'
            elif k is None: name = 'null'
            elif isinstance(k, int): name = str(k)
            elif isinstance(k, str): name = k
            else: raise Unsupported()
            out[name] = canon(x)
        return out
    raise Unsupported()
for line in sys.stdin:
    try:
        v = ast.literal_eval(json.loads(line))
    except Exception:
        print('{"refused": true}')
        continue
    try:
        print(json.dumps({'value': canon(v)}, ensure_ascii=True))
    except Unsupported:
        print('{"unsupported": true}')
`

const PIECES = [
  '{', '}', '[', ']', '(', ')', ',', ': ', ' ', '\n', '\t', '# c\n', '\\\n', "'", '"', "'''", '"""', 'a', 'é', '\\', '\\n', '\\x4', '\\x41', '\\u00e9',
  '\\U0001F600', '\\N{BULLET}', '\\777', '\\0', 'r', 'u', 'b', 'f', 'True', 'False', 'None', '1', '0', '01', '1_0', '1__0', '0x1F', '0o7', '0b2', '.5', '1.',
  '1e5', '1e999', '-', '+', 'j', '...', 'set()', '12345678901234567890', "'a'", '"b"', "{'k': 1}", '[1, 2]', '(1,)', '{1: 2}', '{True: 1}', '\r\n',
]

test('literal_eval is the judge of 6,000 texts, right and wrong: the same values, the same refusals', needsPython, () => {
  const fromPieces = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 10 }).map((p) => p.join(''))
  // Texts Python wrote, each with one character taken out, put in or changed.
  const mutated = fc
    .tuple(value, fc.nat(), fc.constantFrom(...PIECES, ''), fc.boolean())
    .map(([v, at, piece, cut]) => {
      const t = JSON.stringify(v).replace(/\btrue\b/g, 'True').replace(/\bfalse\b/g, 'False').replace(/\bnull\b/g, 'None')
      const i = at % (t.length + 1)
      return t.slice(0, i) + piece + t.slice(cut ? i + 1 : i)
    })
  const texts = [...fc.sample(fromPieces, { seed: 3, numRuns: 3000 }), ...fc.sample(mutated, { seed: 4, numRuns: 3000 })]
  const verdicts = printedLines(JUDGE, texts.map((t) => JSON.stringify(t))).map((line) => JSON.parse(line) as { value?: unknown; refused?: true; unsupported?: true })
  assert.equal(verdicts.length, texts.length)
  const counts = { read: 0, refused: 0, unsupported: 0 }
  for (const [i, t] of texts.entries()) {
    const verdict = verdicts[i]!
    let ours: unknown
    let error: Error | undefined
    try {
      ours = canonical(parsePythonLiteral(t))
    } catch (e) {
      error = e as Error
    }
    if (verdict.refused || verdict.unsupported) {
      assert.ok(error, `${JSON.stringify(t)}: literal_eval ${verdict.refused ? 'refuses it' : 'gives what JSON cannot hold'}, read as ${JSON.stringify(ours)}`)
      counts[verdict.refused ? 'refused' : 'unsupported']++
    } else if (error && /by its Unicode name/.test(error.message)) {
      counts.unsupported++
    } else {
      assert.ifError(error)
      assert.deepEqual(ours, verdict.value, JSON.stringify(t))
      counts.read++
    }
  }
  // Both kinds were met often enough to say something.
  assert.ok(counts.read > 500 && counts.refused > 1000, JSON.stringify(counts))
})

/** Infinities as the judge writes them. */
function canonical(v: unknown): unknown {
  if (typeof v === 'number' && !Number.isFinite(v)) return { $float: v > 0 ? 'inf' : '-inf' }
  if (Array.isArray(v)) return v.map(canonical)
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canonical(x)]))
  return v
}

/** A Python with numpy (compat's, which `.ci/run` installs). */
const numpy = pythonWith('numpy')

test("numpy's own text of 500 random arrays of text reads as their items; an array it shortens is refused", { skip: numpy ? false : 'needs a Python with numpy: run compat/setup.sh' }, () => {
  const lists = fc.sample(fc.array(text, { maxLength: 30 }), { seed: 21, numRuns: 500 })
  lists.push(Array.from({ length: 1200 }, (_, i) => `item ${i}`))
  const script = 'import json, sys, numpy\nfor line in sys.stdin:\n    print(json.dumps(str(numpy.array(json.loads(line), dtype=object))))'
  const texts = printedLines(script, lists.map((l) => JSON.stringify(l)), numpy).map((line) => JSON.parse(line) as string)
  assert.equal(texts.length, lists.length)
  let wrapped = 0
  for (const [i, t] of texts.entries()) {
    if (i === lists.length - 1) {
      assert.throws(() => parseNumpyArray(t), /an array numpy shortened/)
      continue
    }
    if (t.includes('\n ')) wrapped++
    assert.deepEqual(parseNumpyArray(t), lists[i], t)
  }
  assert.ok(wrapped > 50, `${wrapped} arrays over several lines`)
})
