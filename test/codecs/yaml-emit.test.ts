import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { parse } from 'yaml'
import { yamlItem, yamlMapping, yamlText } from '../../src/codecs/yaml-emit.ts'
import { convert } from '../../src/convert.ts'
import { pythonWith, runPython } from '../helpers/python.ts'
import { tempDir } from '../helpers/temp.ts'

/** Text of every kind the emitter must either write plain or hand to `yaml`. */
const text = fc.oneof(
  { arbitrary: fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ,.'"()\/!?&*|>%@`[\]{}=+:#\t-]{0,30}$/), weight: 6 },
  { arbitrary: fc.stringMatching(/^[0-9][0-9a-zA-Z .:_+-]{0,12}$/), weight: 3 },
  // A leading 0 and a radix letter (UUIDs start so too), or a first character past ASCII.
  { arbitrary: fc.stringMatching(/^(?:0[xXbBoO][0-9a-zA-Z_.:+-]{0,8}|[\u0080-\u00ff\u2000-\u2030\u0600\u2713\u3000\ufeff-\uffff][a-z :#]{0,4})$/), weight: 3 },
  // One line that may not be plain: an indicator first, `: ` or ` #` inside, a space or `:` last, quotes of both kinds.
  { arbitrary: fc.stringMatching(/^[-?:,[\]{}#&*!|>'"%@` \tA-Za-z]{1,2}[A-Za-z ,.'"\\:#\t-]{0,20}$/), weight: 4 },
  // Several lines: leading spaces or breaks, lines of spaces or tabs, breaks and spaces at the end.
  {
    arbitrary: fc
      .array(fc.constantFrom('', ' ', '  ', '\t', 'a', ' a', '  a', 'a ', 'a\tb', '\tb', '# c', '- x', '---', 'k: v'), { minLength: 2, maxLength: 5 })
      .map((lines) => lines.join('\n')),
    weight: 4,
  },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '', ' ', 'a ', ' a', 'a: b', 'a:b', 'a #b', 'a#b', 'http://x.y/z', '- a', '-', '?', 'a\nb', 'a\n', '\n', 'a\n\n', '  a\nb', 'x\n  y\n',
      'true', 'True', 'TRUE', 'false', 'null', 'Null', '~', 'yes', 'No', 'on', 'OFF', 'y', 'n', '1', '1.5', '0x1f', '1_000', '12:30', '2001-01-01',
      '.inf', '.nan', '1ac80610-e9d6-40bf-aa38-a4c550a0ac81', '0xab', '0b1x', '0o17q', '1e5', '1e5a', '2001-12-14t21:59:43.10z', '2001-12-14 x', '12_000y', '3 apples', '1-2-3k', '0.5.6q', '9z', 'ab-12', '__proto__', 'constructor', 'e5', 'inf', 'nan', 'NaN', 'café', 'Zürich', 'Ωmega', 'こんにちは', '中文', 'a\u2028b', 'a\u0085b', 'a\ud800', '😀', 'a😀',
      '---', '...', 'a\n---\nb', '😀\nline', 'a\ud800\nb', 'tab\tin\nblock', 'a\n\n\nb\n', 'x\n \ny', 'ends in space \nnext', 'last\n  ', 'kept\n\n', 'a\u2028b\nc', '%x', '@x', '`x', 'a\tb', "it's", 'say "hi"', 'x'.repeat(200), 'k'.repeat(1100),
      'answer ', 'two  ', 'say "hi" ', "it's ", `both "a" 'b' `, 'back\\slash ', '$keys', '$raw', '$ x', '$', '1 ', 'true ', 'yes ', 'a: b ', 'a #b ', '- a ', 'café ',
      '2024-12-12T15:15:50.000Z', '12:30:00', '2024-01-01 10:00:00', '2024-1-1 1:00:00', '2024-01-01  10:00:00 +02:00', '2024-01-01 10:00:00.5Z', '2024-01-01 x y', '10 things', '=', '<<', '= x', '<< x', '🚀 launch', '🚀 ', '😀x: y', '😀#', '\ud83d alone', 'a\udc00b', '\ud83d\ude80\ud83d',
    ),
    weight: 4,
  },
)

const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, 1e21, 5e-324, 2 ** 53 + 2, 0.1, -1.5, 100))
const scalar = fc.oneof(text, number, fc.boolean(), fc.constant(null))
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalar, tie('list'), tie('object')),
  list: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(text, tie('value'), { maxKeys: 5, noNullPrototype: true }),
}))
const record = fc.dictionary(fc.oneof(text, fc.constantFrom('input', 'expected_output', 'metadata', 'id')), value, { maxKeys: 6, noNullPrototype: true })

test('a record is written byte for byte as `yaml` writes it, at the top and indented under a key', () => {
  fc.assert(
    fc.property(record, (r) => {
      const whole = yamlText([r])
      assert.equal(yamlItem(r, ''), whole)
      const indented = whole.split('\n').map((line) => (line ? `  ${line}` : line)).join('\n')
      assert.equal(yamlItem(r, '  '), indented)
      assert.deepEqual(parse(`evalcases:\n${indented}`, { uniqueKeys: false }), { evalcases: [r] })
    }),
    { seed: 3, numRuns: 3000 },
  )
})

test('the keys of a document are written as `yaml` writes them', () => {
  fc.assert(
    fc.property(record, (r) => {
      assert.equal(yamlMapping(r), Object.keys(r).length ? yamlText(r) : '')
    }),
    { seed: 4, numRuns: 1000 },
  )
})

test('DEL, the C1 controls, NEL and the line and paragraph separators are written escaped in double quotes, which YAML 1.1 readers read back', () => {
  // PyYAML refuses a file holding DEL or a C1 control as it is, reads a NEL in quotes as a space,
  // and refuses a separator in a plain or block scalar; escaped, each reads back as itself.
  const r = {
    id: 'case-1',
    input: 'a\x7fb\x80c\x85d\x9fe',
    expected_output: 'first\u2028second\nthird',
    'key\u2029': ['x\u2028y', 'plain'],
    note: 'one\u2029two',
  }
  const written = yamlItem(r, '  ')
  assert.equal(written, yamlText([r]).replace(/^(?=.)/gm, '  '))
  assert.doesNotMatch(written, /[\x7f-\x9f\u2028\u2029]/)
  assert.equal(
    written,
    [
      '  - id: case-1',
      '    input: "a\\x7fb\\x80c\\Nd\\x9fe"',
      '    expected_output: "first\\Lsecond\\nthird"',
      '    "key\\P":',
      '      - "x\\Ly"',
      '      - plain',
      '    note: "one\\Ptwo"',
      '',
    ].join('\n'),
  )
  assert.deepEqual(parse(`evalcases:\n${written}`), { evalcases: [r] })
})

test('a number JavaScript writes with an exponent and no point is written with one, as YAML 1.1 floats are', () => {
  // PyYAML reads `1e-7` and `1e+21` as text; `1.0e-7` and `1.0e+21` as the numbers, as YAML 1.2 readers do.
  const r = { tiny: 1e-7, huge: 1e21, least: 5e-324, list: [-1e-9, 1.5e-8, 0.25, 12] }
  const written = yamlItem(r, '')
  assert.equal(written, yamlText([r]))
  assert.equal(written, ['- tiny: 1.0e-7', '  huge: 1.0e+21', '  least: 5.0e-324', '  list:', '    - -1.0e-9', '    - 1.5e-8', '    - 0.25', '    - 12', ''].join('\n'))
  assert.deepEqual(parse(written), [r])
})

test('text of one line holding a tab is written double-quoted; text of several lines keeps it in its block', () => {
  // PyYAML refuses a tab inside a plain scalar (`k: a<TAB>b`), value or key, file and all.
  const r = { cell: 'a\tb', 'col\tname': 'x', '- lead': 'say "hi"\tthere', block: 'line\tone\nline two' }
  const written = yamlItem(r, '')
  assert.equal(written, yamlText([r]))
  assert.equal(written, ['- cell: "a\\tb"', '  "col\\tname": x', '  "- lead": "say \\"hi\\"\\tthere"', '  block: |-', '    line\tone', '    line two', ''].join('\n'))
  assert.deepEqual(parse(written), [r])
})

/** A Python whose PyYAML loads a file given and prints it as JSON, or undefined (compat's, which `.ci/run` installs). */
const pyyaml = pythonWith('yaml')
const LOAD_AS_JSON = 'import json, sys, yaml\nsys.stdout.write(json.dumps(yaml.safe_load(sys.stdin.buffer), ensure_ascii=True))'

test('PyYAML, a YAML 1.1 reader, reads back every record as written', { skip: pyyaml ? false : 'needs a Python with PyYAML: run compat/setup.sh' }, () => {
  // What YAML text cannot hold in UTF-8 (half a character), or what Python keeps otherwise (-0 as 0,
  // NaN and the infinities, which its JSON writes as no JSON reader reads), is left out.
  const writable = (v: unknown): boolean =>
    typeof v === 'string'
      ? v.isWellFormed()
      : typeof v === 'number'
        ? Number.isFinite(v) && !Object.is(v, -0)
        : Array.isArray(v)
          ? v.every(writable)
          : v !== null && typeof v === 'object'
            ? Object.entries(v).every(([k, x]) => k.isWellFormed() && writable(x))
            : true
  const records = fc.sample(record, { seed: 5, numRuns: 3000 }).filter(writable)
  const text = `evalcases:\n${records.map((r) => yamlItem(r, '  ')).join('')}`
  const back = (JSON.parse(runPython(pyyaml!, LOAD_AS_JSON, text)) as { evalcases: unknown[] }).evalcases
  assert.equal(back.length, records.length)
  for (const [i, r] of records.entries()) assert.deepEqual(back[i], r, `record ${i}: ${yamlItem(r, '')}`)
})

test('writing and reading evalcase YAML load the `yaml` package only when a value or an item is handed to it', () => {
  // In a process of its own: this file loads `yaml` itself.
  const script = `
    import { createRequire } from 'node:module'
    import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
    import { tmpdir } from 'node:os'
    import { join } from 'node:path'
    const { read, write } = await import(${JSON.stringify(new URL('../../src/index.ts', import.meta.url).href)})
    const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/yaml/'))
    const dir = mkdtempSync(join(tmpdir(), 'evalferry-yaml-load-'))
    const input = [{ role: 'user', content: 'How many?' }]
    await write([{ id: 'a', input, expected_output: '12 apples' }], join(dir, 'plain.yaml'), { to: 'evalcase' })
    const afterPlain = loaded()
    // A file of cases as datasets write them is read without it too, the keys above its list included.
    writeFileSync(join(dir, 'headed.yaml'), '# A dataset\\nname: demo\\nexecution:\\n  target: llm\\n' + readFileSync(join(dir, 'plain.yaml'), 'utf8'))
    const cases = []
    for await (const c of read(join(dir, 'headed.yaml'))) cases.push(c)
    const afterRead = loaded()
    // And the JSON Lines form, its file keys in a YAML sidecar beside it.
    writeFileSync(join(dir, 'lines.jsonl'), JSON.stringify({ id: 'c', input: 'Why?', expected_output: 'Because.' }) + '\\n')
    writeFileSync(join(dir, 'lines.yaml'), 'description: Lines\\nexecution:\\n  target: llm\\n')
    for await (const c of read(join(dir, 'lines.jsonl'), { from: 'evalcase' })) cases.push(c)
    const afterSidecar = loaded()
    // Text YAML 1.1 may read as a number is told by the yaml package's own YAML 1.1 reading.
    await write([{ id: 'b', input, expected_output: '1_000' }], join(dir, 'suspect.yaml'), { to: 'evalcase' })
    console.log(JSON.stringify({ afterPlain, afterRead, afterSidecar, cases, afterSuspect: loaded() }))
    rmSync(dir, { recursive: true, force: true })
  `
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(run.status, 0, run.stderr)
  const seen = JSON.parse(run.stdout) as { afterPlain: boolean; afterRead: boolean; afterSidecar: boolean; afterSuspect: boolean; cases: { id: string; expected_output: unknown; extras?: Record<string, unknown> }[] }
  const { cases, ...loads } = seen
  assert.deepEqual(loads, { afterPlain: false, afterRead: false, afterSidecar: false, afterSuspect: true })
  assert.deepEqual(
    cases.map((c) => c.id),
    ['a', 'c'],
  )
  assert.equal(cases[0]!.expected_output, '12 apples')
  const fileKeys = (c: (typeof cases)[number]) => (c.extras?.evalcase as { $file?: unknown } | undefined)?.$file
  assert.deepEqual(fileKeys(cases[0]!), { name: 'demo', execution: { target: 'llm' } })
  assert.deepEqual(fileKeys(cases[1]!), { description: 'Lines', execution: { target: 'llm' } })
})

test('integer keys are written as integers, which PyYAML reads back as integers: a rubric\'s score ranges, evalcase to evalcase and from JSON', { skip: pyyaml ? false : 'needs a Python with PyYAML: run compat/setup.sh' }, async () => {
  const dir = tempDir('evalferry-yaml-keys-')
  const source = join(import.meta.dirname, '..', 'fixtures', 'evalcase', 'full.yaml')
  const fromJson = join(dir, 'rubric.json')
  writeFileSync(fromJson, JSON.stringify([{ id: 'r1', input: 'Where is my order?', expected: 'In transit', metadata: { grades: { '0': 'none', '10': 'all', '-1': 'unread', '007': 'text', '1.5': 'text' } } }]))
  const keyTypes = 'import json, sys, yaml\ndef walk(v):\n    if isinstance(v, dict):\n        return {("int:" if isinstance(k, int) else "str:") + str(k): walk(x) for k, x in v.items()}\n    if isinstance(v, list):\n        return [walk(x) for x in v]\n    return v\nsys.stdout.write(json.dumps(walk(yaml.safe_load(sys.stdin.buffer))))'
  const ranges = (text: string): unknown[] => {
    const found: unknown[] = []
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit)
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === 'str:score_ranges' || k === 'str:grades') found.push(x)
          visit(x)
        }
      }
    }
    visit(JSON.parse(runPython(pyyaml!, keyTypes, text)))
    return found
  }
  const out = join(dir, 'full.yaml')
  await convert({ input: source, output: out, to: 'evalcase' })
  assert.deepEqual(ranges(readFileSync(out, 'utf8')), [{ 'int:0': 'Wrong status', 'int:5': 'Vague status', 'int:10': 'Exact status' }])
  const fromJsonOut = join(dir, 'rubric.yaml')
  await convert({ input: fromJson, output: fromJsonOut, from: 'evals', to: 'evalcase' })
  // Text that is no integer's own (a leading zero, a point) stays text.
  assert.deepEqual(ranges(readFileSync(fromJsonOut, 'utf8')), [{ 'int:0': 'none', 'int:10': 'all', 'int:-1': 'unread', 'str:007': 'text', 'str:1.5': 'text' }])
  // And evalferry reads them back as the keys they were.
  const back = join(dir, 'back.json')
  await convert({ input: fromJsonOut, output: back, to: 'evals' })
  assert.deepEqual((JSON.parse(readFileSync(back, 'utf8')) as { metadata: unknown }[])[0]!.metadata, { grades: { '0': 'none', '10': 'all', '-1': 'unread', '007': 'text', '1.5': 'text' } })
})
