/**
 * AgentV 4.42.4 judges the evalcase files evalferry writes: `agentv validate` passes them, and its
 * own loader (`loadTests`) loads each case AgentV runs, with the ids, inputs, criteria and expected
 * outputs evalferry read from the source; the cases it skips are those the conversion warned of.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { after } from 'node:test'
import { parse as parseYaml } from 'yaml'
import { convert } from '../src/convert.ts'
import { read } from '../src/read.ts'
import { isJsonObject, type EvalCase, type Message } from '../src/model.ts'
import { agentv, agentvLoadTests, judgedBy } from './helpers/compat.ts'
import { ROOT, SHARED_FIXTURES, runCli } from './helpers/cli.ts'
import { tempDir } from './helpers/temp.ts'
import { walk as walkAll } from './helpers/fixtures.ts'

const scratch = tempDir('evalferry-agentv-')
after(() => rmSync(scratch, { recursive: true, force: true }))
// AgentV's validate wants the repository root (a `.git`) above an eval file.
mkdirSync(join(scratch, '.git'))

const walk = (dir: string): string[] => walkAll(dir).sort()

/** What `agentv validate` printed, whether it passed, and the places of its errors (`tests[0].input[3].role`). */
function validated(file: string): { ok: boolean; out: string; errors: string[] } {
  const run = agentv(['validate', file], dirname(file))
  const out = run.stdout + run.stderr
  return { ok: run.status === 0, out, errors: [...out.matchAll(/✗ \[(.*?)\] [A-Z]/g)].map((m) => m[1]!) }
}

/** Each `{type: file}` block of a written file gets an empty file where AgentV looks for it, so that its validate judges evalferry's text, not a fixture's missing neighbours. */
function placeFileBlocks(file: string): void {
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit)
    else if (isJsonObject(v)) {
      if (v.type === 'file' && typeof v.value === 'string' && !/^[a-z]+:\/\//i.test(v.value)) {
        const target = v.value.startsWith('/') ? join(scratch, v.value) : resolve(dirname(file), v.value)
        if (target.startsWith(scratch) && !existsSync(target)) {
          mkdirSync(dirname(target), { recursive: true })
          writeFileSync(target, 'placeholder\n')
        }
      }
      Object.values(v).forEach(visit)
    }
  }
  visit(parseYaml(readFileSync(file, 'utf8')))
}

/** A message as AgentV's loader gives it back: role and content, a file block by its path. */
function agentvMessage(m: { role: unknown; content?: unknown }): unknown {
  // Content that is one JSON value is evalferry's one `json` block.
  const one = Array.isArray(m.content) && m.content.length === 1 && m.content[0]?.type === 'json' ? (m.content[0].value as unknown) : undefined
  if (one !== undefined) return { role: m.role, content: one }
  const content = Array.isArray(m.content)
    ? m.content.map((b: Record<string, unknown>) => (b.type === 'file' ? { type: 'file', path: b.path ?? b.value } : { type: b.type, value: b.value }))
    : m.content
  return { role: m.role, content }
}

/** What AgentV 4.42.4 loads of a case evalferry read: its input (a conversation's turns, else its scenario, stand for one), criteria and expected output as messages. */
function expectedTest(c: EvalCase): unknown {
  const input: Message[] = c.input ?? c.turns ?? (c.scenario !== undefined ? [{ role: 'user', content: c.scenario }] : [])
  const expected = c.expected_output === undefined ? [] : Array.isArray(c.expected_output) && c.expected_output.every((m) => isJsonObject(m) && 'role' in m) ? (c.expected_output as Message[]) : [{ role: 'assistant', content: c.expected_output }]
  return {
    id: c.id,
    input: input.map((m) => agentvMessage(m)),
    criteria: c.expected_outcome ?? '',
    expected_output: expected.map((m) => agentvMessage(m as { role: unknown; content?: unknown })),
  }
}

/** Whether AgentV runs the case: it skips one without criteria, expected output or assertions, and one of `input_files` beside messages. */
function graded(c: EvalCase): boolean {
  const own = c.extras?.evalcase ?? {}
  if ('input_files' in own && !(c.input?.length === 1 && typeof c.input[0]!.content === 'string')) return false
  return c.expected_outcome !== undefined || c.expected_output !== undefined || 'assertions' in own || 'assert' in own
}

let converted = 0

/** Converts `source` to evalcase (`dialect` as given) and has AgentV judge the file written. */
async function judge(source: string, dialect?: 'agentv'): Promise<{ cases: number; loaded: number }> {
  const folder = join(scratch, 'a', 'b', 'c', String(++converted))
  mkdirSync(folder, { recursive: true })
  const output = join(folder, source.replace(/^.*\//, '').replace(/\.(ya?ml|jsonl|json|csv|parquet)(\.gz)?$/, '') + '.eval.yaml')
  const report = await convert({ input: source, output, to: 'evalcase', outputContainer: 'yaml', ...(dialect ? { dialect } : {}) })
  const cases: EvalCase[] = []
  for await (const c of read(source, { target: 'evalcase' })) cases.push(c)
  // The ids written, generated where the source had none.
  const ids: string[] = []
  for await (const c of read(output, { from: 'evalcase' })) ids.push(c.id!)
  assert.equal(ids.length, cases.length, source)
  cases.forEach((c, i) => (c.id = ids[i]))
  placeFileBlocks(output)
  // What agentv validate refuses is only what the conversion foretold, each kind once a case: a message of the role `tool`, criteria of white space (its loader reads both).
  const verdict = validated(output)
  const roles = verdict.errors.filter((e) => /^tests\[\d+\]\.(input|expected_output)\[\d+\]\.role$/.test(e))
  const criteria = verdict.errors.filter((e) => /^tests\[\d+\]\.criteria$/.test(e))
  assert.deepEqual(verdict.errors, [...roles, ...criteria].sort((a, b) => verdict.errors.indexOf(a) - verdict.errors.indexOf(b)), `agentv validate ${relative(scratch, output)} (from ${source}):\n${verdict.out}`)
  const foretold = report.warnings.filter((w) => /which agentv validate refuses/.test(w.message)).length
  assert.equal(new Set(roles.map((e) => e.replace(/\].*/, ''))).size + criteria.length, foretold, verdict.out)
  const tests = agentvLoadTests(output, scratch)
  const ran = cases.filter(graded)
  assert.deepEqual(
    tests.map((t) => ({ id: t.id, input: (t.input as Message[]).map(agentvMessage), criteria: t.criteria, expected_output: (t.expected_output as Message[]).map(agentvMessage) })),
    ran.map(expectedTest),
    source,
  )
  // Each case AgentV skips was warned of as one it skips.
  const skipped = report.warnings.filter((w) => /AgentV skips such a case|it skips this case/.test(w.message)).length
  assert.equal(skipped, cases.length - ran.length, source)
  return { cases: cases.length, loaded: tests.length }
}

test("the README's first command writes a file agentv validate passes and agentv loads, case for case", judgedBy('agentv'), async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const command = /```sh\n(npm ci && node bin\/evalferry\.js convert .*)\n```/.exec(readme)?.[1]
  assert.ok(command, 'the README opens with its command')
  const args = command.replace(/^npm ci && node bin\/evalferry\.js /, '').split(' ')
  const output = join(scratch, args[args.indexOf('-o') + 1]!)
  assert.match(output, /\.eval\.yaml$/, 'AgentV validates only *.eval.yaml files without a $schema')
  const run = await runCli([...args.slice(0, args.indexOf('-o')), '-o', output].map((a) => (a.startsWith('examples/') ? join(ROOT, a) : a)))
  assert.equal(run.code, 0, run.stderr)
  assert.ok(validated(output).ok, validated(output).out)
  const tests = agentvLoadTests(output, scratch)
  // The second golden has no expected output: AgentV skips it, and the conversion says so.
  assert.deepEqual(
    tests.map((t) => [t.id, (t.input as Message[])[0]?.content, (t.expected_output as Message[])[0]?.content]),
    [
      ['case-1', 'What is the refund window for a damaged item?', '30 days from delivery for damaged items.'],
      ['case-3', '¿Cuál es el horario de atención?', 'De lunes a viernes, de 9 a 18 h.'],
    ],
  )
  assert.match(run.stderr, /goldens\.json:30: criteria: the case has no criteria, expected output or assertions; AgentV skips such a case/)
  // Under any name: the `$schema` tells AgentV it is an eval file.
  const plain = join(scratch, 'goldens-plain.yaml')
  assert.equal((await runCli(['convert', join(ROOT, 'examples', 'goldens.json'), '--to', 'evalcase', '-o', plain, '--quiet'])).code, 0)
  assert.match(validated(plain).out, /Valid: 1/)
  // The first dialect, still written by name, is what AgentV refuses.
  const first = join(scratch, 'goldens-first.eval.yaml')
  assert.equal((await runCli(['convert', join(ROOT, 'examples', 'goldens.json'), '--to', 'evalcase', '--dialect', 'evalcase', '-o', first, '--quiet'])).code, 0)
  const refused = validated(first)
  assert.equal(refused.ok, false)
  assert.match(refused.out, /Missing or invalid 'tests' field/)
})

const OWN = join(ROOT, 'test', 'fixtures', 'evalcase')
const REAL_EVALCASE = [join(SHARED_FIXTURES, 'evalcase'), join(SHARED_FIXTURES, 'field', 'agentv-4.42.4')]
/** A YAML file beside a `.jsonl` of the same stem is that file's sidecar, not a dataset. */
const datasets = (files: string[]) => files.filter((f) => /\.(ya?ml|jsonl)$/.test(f) && !(/\.ya?ml$/.test(f) && existsSync(f.replace(/\.ya?ml$/, '.jsonl'))))

test('every evalcase fixture, written in AgentV 4 dialect, passes agentv validate and loads with the same cases', judgedBy('agentv'), async (t) => {
  const files = datasets([...walk(OWN), ...REAL_EVALCASE.flatMap(walk)])
  let cases = 0
  let loaded = 0
  for (const file of files) {
    const judged = await judge(file, 'agentv')
    cases += judged.cases
    loaded += judged.loaded
  }
  assert.ok(files.length >= 12, `${files.length} files`)
  assert.ok(loaded > 0 && loaded <= cases)
  t.diagnostic(`${files.length} evalcase files: ${cases} cases written, ${loaded} loaded by agentv (the others warned of as skipped)`)
})

test('the real files of other formats, written as evalcase, pass agentv validate and load with the same cases', judgedBy('agentv'), async (t) => {
  const files = [...walk(join(SHARED_FIXTURES, 'deepeval')), ...walk(join(SHARED_FIXTURES, 'evals')).filter((f) => !/schema/.test(f)), ...walk(join(SHARED_FIXTURES, 'field', 'hf')), ...walk(join(SHARED_FIXTURES, 'field', 'ragas'))]
  let cases = 0
  let loaded = 0
  for (const file of files) {
    const judged = await judge(file)
    cases += judged.cases
    loaded += judged.loaded
  }
  assert.ok(files.length >= 15, `${files.length} files`)
  t.diagnostic(`${files.length} files of other formats: ${cases} cases written, ${loaded} loaded by agentv (the others warned of as skipped)`)
})

test('validate fails, at line and field, on each case agentv validate refuses or its loader skips', judgedBy('agentv'), async () => {
  const folder = join(scratch, 'refused')
  mkdirSync(folder)
  const file = join(folder, 'refused.eval.yaml')
  writeFileSync(
    file,
    [
      'tests:',
      '  - id: no-input',
      '    criteria: says hi',
      '  - id: 7',
      '    input: hi',
      '    criteria: greets',
      '  - id: ungraded',
      '    input: hello',
      '  - id: tool-role',
      '    input:',
      '      - role: user',
      '        content: hi',
      '      - role: tool',
      '        content: "{}"',
      '    expected_output: ok',
      '  - id: files-beside-messages',
      '    input_files: [notes.md]',
      '    input:',
      '      - role: user',
      '        content: read it',
      '    criteria: reads',
      '  - id: good',
      '    input: hi',
      '    criteria: greets',
      '',
    ].join('\n'),
  )
  writeFileSync(join(folder, 'notes.md'), 'notes\n')
  const run = await runCli(['validate', file])
  assert.equal(run.code, 1, run.stderr)
  assert.deepEqual(
    run.stderr.trimEnd().split('\n').map((l) => l.slice(folder.length + 1).replace(/: (AgentV|agentv).*/, '')),
    ['refused.eval.yaml:2: input', 'refused.eval.yaml:4: id', 'refused.eval.yaml:7: criteria', 'refused.eval.yaml:13: input[1].role', 'refused.eval.yaml:17: input_files'],
  )
  assert.equal(run.stdout, `${file}: 6 cases, 5 errors\n`)
  // AgentV itself: validate refuses the first, second and fourth; its loader runs the fourth (it reads `tool`) and the last.
  assert.deepEqual(validated(file).errors, ['tests[0].input', 'tests[1].id', 'tests[3].input[1].role'])
  assert.deepEqual(agentvLoadTests(file, scratch).map((t) => t.id), ['tool-role', 'good'])
})
