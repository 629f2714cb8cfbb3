import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { FORMAT_NAMES } from '../src/index.ts'
import { formatName } from '../adapters/index.ts'
import { tempDir } from './helpers/temp.ts'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))

/** The type errors of a program using the library, by line, under the project's own strict settings. */
function typeErrors(source: string): Map<number, string> {
  const dir = tempDir()
  // An ES module of its own, as a user's project is.
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}')
  const file = join(dir, 'consumer.ts')
  writeFileSync(file, source.replaceAll('EVALFERRY', JSON.stringify(join(ROOT, 'src', 'index.ts'))))
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!
  const { rootDir: _, outDir: __, rewriteRelativeImportExtensions: ___, ...options } = config.options
  const program = ts.createProgram([file], { ...options, noEmit: true, declaration: false, sourceMap: false })
  const errors = new Map<number, string>()
  for (const d of ts.getPreEmitDiagnostics(program)) {
    assert.equal(d.file?.fileName, file, ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    const { line } = d.file!.getLineAndCharacterOfPosition(d.start!)
    errors.set(line + 1, ts.flattenDiagnosticMessageText(d.messageText, ' '))
  }
  return errors
}

test('the library types a format by its names and aliases, so a misspelt one does not compile; its list of names is read-only', () => {
  const lines = [
    /* 1 */ `import { convert, read, write, detect, prefetch, resolve, FORMAT_NAMES, EvalferryError, type EvalCase, type FormatOption } from EVALFERRY`,
    /* 2 */ `export async function main(): Promise<void> {`,
    /* 3 */ `  for await (const c of read('goldens.json', { from: 'deepeval' })) { const e: EvalCase = c; void e }`,
    /* 4 */ `  const report = await convert({ input: 'goldens.json', output: 'cases.yaml', to: 'evalcase' })`,
    /* 5 */ `  const written: number = report.records.written; void written, detect, prefetch, resolve, write`,
    /* 6 */ `  await convert({ input: 'a.jsonl', output: 'b.jsonl', from: 'huggingface', to: 'agentv' })`,
    /* 7 */ `  const chosen: FormatOption = FORMAT_NAMES[0]!`,
    /* 8 */ `  await convert({ input: 'a.jsonl', output: 'b.yaml', to: 'evalcases' })`,
    /* 9 */ `  read('a.json', { from: 'deepevall' })`,
    /* 10 */ `  await write([], 'b.json', { to: chosen === 'hf' ? 'langsmith' : 'langsmit' })`,
    /* 11 */ `  FORMAT_NAMES.push('evalcase')`,
    /* 12 */ `  try { await convert({ input: 'a', output: 'b', to: 'csv' }) } catch (e) { if (e instanceof EvalferryError) { const code: 'E_IO' | 'E_NOPE' = e.code } }`,
    /* 13 */ `}`,
  ]
  const errors = typeErrors(lines.join('\n'))
  assert.deepEqual([...errors.keys()].sort((a, b) => a - b), [8, 9, 10, 11, 12], [...errors].map(([l, m]) => `${l}: ${m}`).join('\n'))
  assert.match(errors.get(8)!, /"evalcases"/)
  assert.match(errors.get(9)!, /"deepevall"/)
  assert.match(errors.get(10)!, /"langsmit"/)
  assert.match(errors.get(11)!, /'push' does not exist on type 'readonly FormatName\[\]'/)
  assert.match(errors.get(12)!, /not assignable to type '"E_IO" \| "E_NOPE"'/)
})

test('an output address implies the format, so `to` may be left out for it, and only for it', () => {
  const lines = [
    /* 1 */ `import { convert, type ConvertOptions } from EVALFERRY`,
    /* 2 */ `export async function main(): Promise<void> {`,
    /* 3 */ `  await convert({ input: 'goldens.json', output: 'langsmith://support-qa' })`,
    /* 4 */ `  const push: ConvertOptions = { input: 'cases.eval.yaml', output: 'hf://datasets/acme/support-evals', ifExists: 'append' }`,
    /* 5 */ `  await convert({ input: 'goldens.json', output: 'confident://support-qa', to: 'deepeval' }); void push`,
    /* 6 */ `  await convert({ input: 'langsmith://support-qa', output: 'goldens.json' })`,
    /* 7 */ `  await convert({ input: 'goldens.json', output: 'cases.yaml' })`,
    /* 8 */ `  await convert({ input: 'goldens.json', output: 'confident://support-qa', to: 'deepevall' })`,
    /* 9 */ `  await convert({ input: 'hf://datasets/openai/gsm8k@main/main', output: 'gsm8k.eval.yaml', to: 'evalcase', shard: { index: 1, count: 4 } })`,
    /* 10 */ `}`,
  ]
  const errors = typeErrors(lines.join('\n'))
  assert.deepEqual([...errors.keys()].sort((a, b) => a - b), [6, 7, 8], [...errors].map(([l, m]) => `${l}: ${m}`).join('\n'))
  for (const line of [6, 7]) assert.match(errors.get(line)!, /is not assignable to parameter of type 'ConvertOptions'/)
  assert.match(errors.get(8)!, /"deepevall"/)
})

test('the list of format names cannot be changed at run time either', () => {
  assert.ok(Object.isFrozen(FORMAT_NAMES))
  assert.throws(() => (FORMAT_NAMES as string[]).push('nothing'), TypeError)
  assert.deepEqual([...FORMAT_NAMES], ['evalcase', 'deepeval', 'langsmith', 'hf', 'csv', 'evals', 'promptfoo'])
  assert.deepEqual(['AgentV', 'huggingface', 'TABLE', 'evalcase_json'].map(formatName), ['evalcase', 'hf', 'csv', 'evals'])
  // A name an object has by inheritance is no alias.
  for (const name of ['constructor', '__proto__', 'toString']) assert.throws(() => formatName(name), { code: 'E_USAGE', message: new RegExp(`^unknown format "${name}"`) })
})

test('a CommonJS TypeScript project imports the installed package: its types under module nodenext, and node16 told to import it dynamically', { skip: existsSync(join(ROOT, 'dist', 'src', 'index.d.ts')) ? false : 'dist/ is built by npm ci (prepare)' }, () => {
  const dir = tempDir()
  // The package as installed: node_modules/evalferry, resolved through its exports map.
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(ROOT, join(dir, 'node_modules', 'evalferry'), 'dir')
  const file = join(dir, 'consumer.cts')
  writeFileSync(file, [
    `import { convert, type EvalCase } from 'evalferry'`,
    `export async function main(): Promise<number> {`,
    `  const report = await convert({ input: 'goldens.json', output: 'cases.yaml', to: 'evalcase' })`,
    `  const c: EvalCase = { input: [{ role: 'user', content: 'hi' }] }`,
    `  return report.records.written + (c.input?.length ?? 0)`,
    `}`,
    `export const wrong = convert({ input: 'a', output: 'b', to: 'evalcases' })`,
  ].join('\n'))
  const errorsUnder = (module: ts.ModuleKind): string[] => {
    const program = ts.createProgram([file], {
      module,
      moduleResolution: module === ts.ModuleKind.Node16 ? ts.ModuleResolutionKind.Node16 : ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
    })
    return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? d.file.getLineAndCharacterOfPosition(d.start!).line + 1 : 0}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`)
  }
  const nodenext = errorsUnder(ts.ModuleKind.NodeNext)
  assert.equal(nodenext.length, 1, nodenext.join('\n'))
  assert.match(nodenext[0]!, /^7: .*"evalcases"/)
  const node16 = errorsUnder(ts.ModuleKind.Node16)
  assert.match(node16.join('\n'), /^1: .*cannot be imported with 'require'\. Consider writing a dynamic 'import\("evalferry"\)' call instead\./m)
})
