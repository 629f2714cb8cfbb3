/** hf://datasets/ as input and output, against a Hub stand-in and a second origin for LFS bytes, on loopback. */
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet'
import { convert } from '../../src/index.ts'
import { kill, runCli, SHARED_FIXTURES, startCli } from '../helpers/cli.ts'
import { CdnStandIn, HubStandIn } from '../helpers/services/hub-server.ts'
import type { FaultKind } from '../helpers/services/stand-in.ts'
import { writerParquet } from '../helpers/parquet.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('evalferry-hub-')
let cdn: CdnStandIn
let hub: HubStandIn
let env: NodeJS.ProcessEnv
let cacheCount = 0

before(async () => {
  cdn = await new CdnStandIn().start('127.0.0.2')
  hub = await new HubStandIn(cdn).start()
})
after(async () => {
  await hub.stop()
  await cdn.stop()
})
beforeEach(() => {
  hub.reset()
  cdn.reset()
  hub.uploadMode = 'lfs'
  // Each test its own cache, so that what one fetched does not serve another.
  env = { HF_TOKEN: hub.token, HF_ENDPOINT: hub.url, EVALFERRY_CACHE_DIR: join(dir, `cache-${++cacheCount}`) }
})

const requests = (): number => hub.count() + cdn.count()

function rows(count: number): string {
  return Array.from({ length: count }, (_, i) => JSON.stringify({ question: `q${i}`, answer: `a${i}` })).join('\n') + '\n'
}

const jsonLines = (path: string): unknown[] => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown)

describe('hf:// round trips', () => {
  const FIXTURES = [
    join(SHARED_FIXTURES, 'field', 'hf', 'openai_grade-school-math__test.jsonl'),
    join(SHARED_FIXTURES, 'hf', 'viewer-rows-a-slice-of-a-simple-dataset-stanfordnlp-imdb.json'),
    join(import.meta.dirname, '..', 'fixtures', 'hf', 'reviews.parquet'),
    join(import.meta.dirname, '..', 'fixtures', 'hf', 'squad.parquet'),
  ]
  for (const [i, file] of FIXTURES.entries()) {
    const name = file.split('/').pop()!
    test(`${name} → the Hub → hf gives the rows the file gives`, async () => {
      const direct = join(dir, `direct-${i}.jsonl`)
      await convert({ input: file, output: direct, from: 'hf', to: 'hf' })
      const pushed = await runCli(['convert', file, '--from', 'hf', '-o', `hf://datasets/acme/rt-${i}`], env)
      assert.equal(pushed.code, 0, pushed.stderr)
      assert.equal(hub.commitsOf(`acme/rt-${i}`), 1)
      const back = join(dir, `back-${i}.jsonl`)
      const pulled = await runCli(['convert', `hf://datasets/acme/rt-${i}`, '--to', 'hf', '-o', back], env)
      assert.equal(pulled.code, 0, pulled.stderr)
      assert.deepEqual(jsonLines(back), jsonLines(direct))
    })
  }
})

describe('hf:// pushes', () => {
  test('one commit of push_to_hub\'s layout: the Parquet file through LFS, a card whose configs name it', async () => {
    const input = join(dir, 'layout.jsonl')
    writeFileSync(input, rows(5))
    const run = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/support-evals/default/test', '--json'], env)
    assert.equal(run.code, 0, run.stderr)
    const files = hub.filesOf('acme/support-evals')
    assert.deepEqual([...files.keys()].sort(), ['.gitattributes', 'README.md', 'data/test-00000-of-00001.parquet'])
    assert.equal(hub.commitsOf('acme/support-evals'), 1)
    assert.equal(cdn.count('PUT /objects/{oid}'), 1)
    const card = files.get('README.md')!.toString()
    assert.match(card, /^---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data\/test-\*\n/)
    assert.match(card, /num_examples: 5\n/)
    assert.equal(JSON.parse(run.stdout).push.sent, 2)
    // The LFS bytes went to the second origin, which never saw the token.
    assert.ok(cdn.log.every((r) => !r.headers.includes('authorization')))
  })

  test('a push run again makes no second commit; another config goes in its own folder', async () => {
    const input = join(dir, 'again.jsonl')
    writeFileSync(input, rows(3))
    assert.equal((await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/again'], env)).code, 0)
    const again = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/again', '--json'], env)
    assert.equal(again.code, 0, again.stderr)
    assert.deepEqual([JSON.parse(again.stdout).push.sent, JSON.parse(again.stdout).push.unchanged], [0, 2])
    assert.equal(hub.commitsOf('acme/again'), 1)
    hub.uploadMode = 'regular'
    assert.equal((await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/configs/main/test'], env)).code, 0)
    assert.ok(hub.filesOf('acme/configs').has('main/test-00000-of-00001.parquet'))
    assert.match(hub.filesOf('acme/configs').get('README.md')!.toString(), /config_name: main\n[\s\S]*path: main\/test-\*/)
  })

  test('a dataset holding other data files is refused, appended to or replaced as --if-exists says', async () => {
    const mine = join(dir, 'mine.jsonl')
    writeFileSync(mine, rows(2))
    assert.equal((await runCli(['convert', mine, '--from', 'hf', '-o', 'hf://datasets/acme/shared/default/validation'], env)).code, 0)
    const refused = await runCli(['convert', mine, '--from', 'hf', '-o', 'hf://datasets/acme/shared'], env)
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /already holds 1 data file\(s\) this push would not write \(data\/validation-00000-of-00001\.parquet\)/)
    assert.equal((await runCli(['convert', mine, '--from', 'hf', '-o', 'hf://datasets/acme/shared', '--if-exists', 'append'], env)).code, 0)
    assert.equal([...hub.filesOf('acme/shared').keys()].filter((p) => p.startsWith('data/')).length, 2)
    assert.equal((await runCli(['convert', mine, '--from', 'hf', '-o', 'hf://datasets/acme/shared', '--if-exists', 'replace'], env)).code, 0)
    assert.deepEqual([...hub.filesOf('acme/shared').keys()].filter((p) => p.startsWith('data/')), ['data/train-00000-of-00001.parquet'])
    assert.equal(hub.commitsOf('acme/shared'), 3)
  })

  test('--dry-run tells the records, the target and the commit\'s files in place of fields, and sends nothing', async () => {
    const input = join(dir, 'dry.jsonl')
    writeFileSync(input, rows(2))
    const run = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/dry', '--dry-run', '--json'], env)
    assert.equal(run.code, 0, run.stderr)
    const dryRun = (JSON.parse(run.stdout) as { dry_run: { target: string; records: number; fields: string[]; files: string[] } }).dry_run
    assert.equal(dryRun.target, 'hf://datasets/acme/dry')
    assert.equal(dryRun.records, 2)
    // The Hub takes a commit of files, not records of fields.
    assert.deepEqual(dryRun.fields, [])
    assert.deepEqual(dryRun.files, ['data/train-00000-of-00001.parquet', 'README.md'])
    const told = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/dry', '--dry-run'], env)
    assert.equal(told.code, 0, told.stderr)
    assert.match(told.stderr, /dry run: would send 2 record\(s\) to hf:\/\/datasets\/acme\/dry \(files: data\/train-00000-of-00001\.parquet, README\.md\); nothing was sent/)
    assert.equal(requests(), 0)
  })

  test('a push without a token is exit 3 naming HF_TOKEN; a wrong one too, and it is shown nowhere', async () => {
    const input = join(dir, 'token.jsonl')
    writeFileSync(input, rows(1))
    const missing = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/token'], { ...env, HF_TOKEN: '' })
    assert.equal(missing.code, 3)
    assert.match(missing.stderr, /set HF_TOKEN/)
    const wrong = 'hf_wrong_secret_token'
    const refused = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/token'], { ...env, HF_TOKEN: wrong })
    assert.equal(refused.code, 3)
    assert.match(refused.stderr, /HTTP 401.*set HF_TOKEN/)
    assert.ok(!refused.stderr.includes(wrong))
  })
})

describe('hf:// reads', () => {
  test('the tree is read page by page; a second read at the commit asks nothing; --offline serves it', async () => {
    const input = join(dir, 'cached.jsonl')
    writeFileSync(input, rows(4))
    assert.equal((await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/cached'], env)).code, 0)
    hub.reset()
    const first = join(dir, 'cached-1.jsonl')
    assert.equal((await runCli(['convert', 'hf://datasets/acme/cached', '--to', 'hf', '-o', first], env)).code, 0)
    // Three files, two a page.
    assert.equal(hub.count('GET /api/datasets/{repo}/tree/{rev}'), 2)
    assert.equal(hub.count('GET /api/datasets/{repo}/revision/{rev}'), 1)
    const before = requests()
    const second = join(dir, 'cached-2.jsonl')
    assert.equal((await runCli(['convert', 'hf://datasets/acme/cached', '--to', 'hf', '-o', second], env)).code, 0)
    assert.equal(requests() - before, 0)
    const offline = join(dir, 'cached-3.jsonl')
    const run = await runCli(['convert', 'hf://datasets/acme/cached@main', '--to', 'hf', '-o', offline, '--offline'], env)
    assert.equal(run.code, 0, run.stderr)
    assert.equal(requests() - before, 0)
    assert.deepEqual(jsonLines(offline), jsonLines(input))
    // The cache holds the files, the commit and the listing, never the token.
    const cached = readdirSync(env.EVALFERRY_CACHE_DIR!, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
    assert.ok(cached.length >= 3)
    for (const entry of cached) assert.ok(!readFileSync(join(entry.parentPath, entry.name)).includes(hub.token), entry.name)
    const cold = await runCli(['convert', 'hf://datasets/acme/cached', '--to', 'hf', '-o', join(dir, 'cold.jsonl'), '--offline'], { ...env, EVALFERRY_CACHE_DIR: join(dir, 'cold-cache') })
    assert.equal(cold.code, 3)
    assert.match(cold.stderr, /--offline forbids asking the Hub/)
  })

  test('a config and split choose their files; detect tells records, splits and fields', async () => {
    const input = join(dir, 'splits.jsonl')
    writeFileSync(input, rows(3))
    hub.uploadMode = 'regular'
    assert.equal((await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/openai/gsm8k/main/test'], env)).code, 0)
    writeFileSync(input, rows(5))
    assert.equal((await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/openai/gsm8k/main/train', '--if-exists', 'append'], env)).code, 0)
    const out = join(dir, 'gsm8k.jsonl')
    const run = await runCli(['convert', 'hf://datasets/openai/gsm8k@main/main/test', '--to', 'hf', '-o', out], env)
    assert.equal(run.code, 0, run.stderr)
    assert.equal(jsonLines(out).length, 3)
    const detected = await runCli(['detect', 'hf://datasets/openai/gsm8k/main', '--json'], env)
    assert.equal(detected.code, 0, detected.stderr)
    const [entry] = JSON.parse(detected.stdout) as { records: number; splits: string[]; fields: string[] }[]
    assert.deepEqual([entry!.records, entry!.splits.sort(), entry!.fields], [8, ['test', 'train'], ['question', 'answer']])
  })

  const FAULTS = [
    { what: '429 with a RateLimit header', route: 'GET /api/datasets/{repo}/revision/{rev}', fault: { status: 429, headers: { ratelimit: '"api";r=0;t=1' } } },
    { what: 'a 503 on a tree page', route: 'GET /api/datasets/{repo}/tree/{rev}', fault: { status: 503 } },
    { what: 'a file cut halfway', route: 'GET /datasets/{repo}/resolve/{rev}/{path}', fault: { cut: 'body' as const } },
    { what: 'a slow answer', route: 'GET /api/datasets/{repo}/tree/{rev}', fault: { delayMs: 3000 } },
  ]
  for (const [i, { what, route, fault }] of FAULTS.entries()) {
    test(`${what}: the read is tried again and succeeds`, async () => {
      const input = join(dir, `read-fault-${i}.jsonl`)
      writeFileSync(input, rows(3))
      hub.uploadMode = 'regular'
      assert.equal((await runCli(['convert', input, '--from', 'hf', '-o', `hf://datasets/acme/read-fault-${i}`], env)).code, 0)
      hub.reset()
      hub.faults = [{ route, call: 1, fault }]
      const out = join(dir, `read-fault-${i}-back.jsonl`)
      const run = await runCli(['convert', `hf://datasets/acme/read-fault-${i}`, '--to', 'hf', '-o', out, '--timeout', '0.5'], env)
      assert.equal(run.code, 0, run.stderr)
      assert.ok(hub.count(route) >= 2)
      assert.deepEqual(jsonLines(out), jsonLines(input))
    })
  }
})

describe('hf:// failed pushes', () => {
  const FAULTS = [
    { what: 'a commit applied, then cut', fault: { applyThen: 'cut' as const }, commits: 1 },
    { what: 'a commit applied, then answered 500', fault: { applyThen: 500 as const }, commits: 1 },
    { what: 'a commit refused with 502', fault: { status: 502 }, commits: 1 },
  ]
  for (const [i, { what, fault, commits }] of FAULTS.entries()) {
    test(`${what}: one commit in the end`, async () => {
      const input = join(dir, `push-fault-${i}.jsonl`)
      writeFileSync(input, rows(3))
      hub.faults = [{ route: 'POST /api/datasets/{repo}/commit/{rev}', call: 1, fault }]
      const run = await runCli(['convert', input, '--from', 'hf', '-o', `hf://datasets/acme/push-fault-${i}`], env)
      assert.equal(run.code, 0, run.stderr)
      assert.equal(hub.commitsOf(`acme/push-fault-${i}`), commits)
    })
  }

  test('a push killed at any point and run again leaves one data file of every row (10 seeds), and no staged file behind', async () => {
    const input = join(dir, 'killed.jsonl')
    writeFileSync(input, rows(50))
    // The killed runs' staging directories, cleared by the next run.
    const scratch = mkdtempSync(join(dir, 'scratch-'))
    const scratchEnv = { ...env, TMPDIR: scratch }
    const routes = ['POST /api/repos/create', 'GET /api/datasets/{repo}/revision/{rev}', 'POST /api/datasets/{repo}/preupload/{rev}', 'POST /datasets/{repo}.git/info/lfs/objects/batch', 'POST /api/datasets/{repo}/commit/{rev}']
    for (let seed = 1; seed <= 10; seed++) {
      const repo = `acme/killed-${seed}`
      hub.reset()
      const route = routes[seed % routes.length]!
      hub.faults = [{ route, call: 1, fault: seed % 2 === 0 ? { applyThen: 'hold' } : { delayMs: 20_000 } }]
      const child = startCli(['convert', input, '--from', 'hf', '-o', `hf://datasets/${repo}`], scratchEnv)
      await until(() => hub.count(route) >= 1)
      kill(child.pid)
      await child.done
      hub.reset()
      const again = await runCli(['convert', input, '--from', 'hf', '-o', `hf://datasets/${repo}`], scratchEnv)
      assert.equal(again.code, 0, `seed ${seed}: ${again.stderr}`)
      assert.deepEqual([...hub.filesOf(repo).keys()].filter((p) => p.startsWith('data/')), ['data/train-00000-of-00001.parquet'], `seed ${seed}`)
      const back = join(dir, `killed-${seed}.jsonl`)
      assert.equal((await runCli(['convert', `hf://datasets/${repo}`, '--to', 'hf', '-o', back], scratchEnv)).code, 0)
      assert.deepEqual(jsonLines(back), jsonLines(input), `seed ${seed}`)
      assert.deepEqual(readdirSync(scratch).filter((name) => name.startsWith('evalferry-')), [], `seed ${seed}`)
    }
  })
})

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20))
}

describe('hf:// shards', () => {
  /** `count` rows of file `name`, in Parquet row groups of 4 rows. */
  async function parquetRows(name: string, count: number): Promise<Buffer> {
    const path = join(dir, `${name.replace(/\W/g, '_')}.parquet`)
    await writerParquet(path, Array.from({ length: count }, (_, i) => ({ question: `${name} q${i}`, answer: `a${i}` })), {}, { batchRows: 4 })
    return readFileSync(path)
  }
  const lines = (name: string, count: number): string => Array.from({ length: count }, (_, i) => JSON.stringify({ question: `${name} q${i}`, answer: `a${i}` })).join('\n') + '\n'
  const questions = (path: string): string[] => jsonLines(path).map((r) => (r as { question: string }).question)

  test('--shard i/n of an hf:// dataset: the shards of n = 1, 2, 3 together hold every row once, by file and by row group', async () => {
    const datasets = {
      // At least as many files as shards: whole files, dealt out by size.
      'acme/three-files': { 'data/train-00000-of-00002.parquet': await parquetRows('big', 30), 'data/train-00001-of-00002.parquet': await parquetRows('mid', 17), 'data/train-00002-of-00002.jsonl': lines('small', 5) },
      // Fewer: each file's contiguous part, a Parquet file's found by its footer, a JSON Lines file's by its line ends.
      'acme/two-files': { 'data/train-00000-of-00002.parquet': await parquetRows('one', 23), 'data/train-00001-of-00002.jsonl': lines('two', 9) },
      'acme/one-file': { 'data/train-00000-of-00001.parquet': await parquetRows('only', 26) },
    }
    for (const [repo, files] of Object.entries(datasets)) {
      hub.put(repo, files)
      const whole = join(dir, `${repo.replace('/', '-')}-whole.jsonl`)
      await convert({ input: `hf://datasets/${repo}`, output: whole, to: 'hf', env })
      const all = questions(whole)
      assert.equal(all.length, Object.keys(files).length === 3 ? 52 : Object.keys(files).length === 2 ? 32 : 26)
      for (let count = 1; count <= 3; count++) {
        const seen: string[] = []
        for (let index = 1; index <= count; index++) {
          // Each shard on a machine of its own: a cache of its own.
          cdn.reset()
          hub.reset()
          const out = join(dir, `${repo.replace('/', '-')}-${index}-of-${count}.jsonl`)
          const report = await convert({ input: `hf://datasets/${repo}`, output: out, to: 'hf', shard: { index, count }, env, cacheDir: join(dir, `shard-cache-${repo.replace('/', '-')}-${index}-${count}`) })
          const mine = questions(out)
          assert.equal(report.records.written, mine.length)
          if (count > 1 && Object.keys(files).length >= count) {
            // A shard of whole files fetches only its own.
            const fetched = hub.log.filter((r) => r.route === 'GET /datasets/{repo}/resolve/{rev}/{path}').map((r) => r.path.split('/').pop()!)
            const names = new Set(mine.map((q) => q.split(' ')[0]))
            assert.equal(fetched.length, names.size, `${repo} ${index}/${count}: ${fetched.join(', ')}`)
          } else if (count > 1) {
            // A contiguous part of each file: the whole's rows of that file, from one place to another.
            for (const file of new Set(mine.map((q) => q.split(' ')[0]))) {
              const ofFile = all.filter((q) => q.startsWith(`${file} `))
              const part = mine.filter((q) => q.startsWith(`${file} `))
              const start = ofFile.indexOf(part[0]!)
              assert.deepEqual(part, ofFile.slice(start, start + part.length), `${repo} ${index}/${count}`)
            }
          }
          seen.push(...mine)
        }
        assert.deepEqual([...seen].sort(), [...all].sort(), `${repo}, ${count} shard(s)`)
        assert.equal(new Set(seen).size, all.length)
      }
    }
    // The command line names each shard's output as it names a local file's.
    const run = await runCli(['convert', 'hf://datasets/acme/two-files', '--to', 'hf', '-o', join(dir, 'cli-shard.jsonl'), '--shard', '3/3'], env)
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(questions(join(dir, 'cli-shard.part-3-of-3.jsonl')), [...Array.from({ length: 8 }, (_, i) => `one q${15 + i}`), 'two q6', 'two q7', 'two q8'])
    const refused = await runCli(['convert', 'langsmith://support-qa', '--to', 'hf', '-o', join(dir, 'ls.jsonl'), '--shard', '1/2'], env)
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /--shard splits local files and hf:\/\/ datasets; langsmith:\/\/support-qa is read from its service/)
  })
})

describe('hf:// dataset cards', () => {
  const row = (question: string): string => JSON.stringify({ question, answer: 'a' }) + '\n'
  const read = async (address: string): Promise<string[]> => {
    const out = join(dir, `card-${++cacheCount}.jsonl`)
    await convert({ input: address, output: out, to: 'hf', env })
    return jsonLines(out).map((r) => (r as { question: string }).question)
  }

  test("a card's configs name each config's and split's files; a config marked default is read when none is named", async () => {
    hub.put('acme/carded', {
      'README.md': [
        '---',
        'license: mit',
        'configs:',
        '- config_name: questions',
        '  data_files:',
        '  - split: dev',
        '    path: "raw/q_dev_*.jsonl"',
        '  - split: holdout',
        '    path: ["raw/q_final.jsonl", "extra/**/more-?.csv"]',
        '- config_name: answers',
        '  default: true',
        '  data_files: "answers/**/*.jsonl"',
        '- config_name: by-folder',
        '  data_dir: sub',
        '---',
        '# A dataset whose files lie where their names tell nothing',
        '',
      ].join('\n'),
      'raw/q_dev_1.jsonl': row('dev 1'),
      'raw/q_dev_2.jsonl': row('dev 2'),
      'raw/q_final.jsonl': row('final'),
      'extra/deep/more-1.csv': 'question,answer\nmore 1,a\n',
      'answers/a/x.jsonl': row('answer x'),
      'answers/b/c/y.jsonl': row('answer y'),
      'sub/test.jsonl': row('sub test'),
      'sub/training-set.jsonl': row('sub train'),
      // Named by no config: never read.
      'data/train.jsonl': row('stray'),
    })
    assert.deepEqual(await read('hf://datasets/acme/carded'), ['answer x', 'answer y'])
    assert.deepEqual(await read('hf://datasets/acme/carded/questions'), ['dev 1', 'dev 2', 'more 1', 'final'])
    assert.deepEqual(await read('hf://datasets/acme/carded@main/questions/holdout'), ['more 1', 'final'])
    assert.deepEqual(await read('hf://datasets/acme/carded/by-folder/test'), ['sub test'])
    const detected = await runCli(['detect', 'hf://datasets/acme/carded/questions', 'hf://datasets/acme/carded/by-folder', '--json'], env)
    assert.equal(detected.code, 0, detected.stderr)
    const entries = JSON.parse(detected.stdout) as { records: number; splits: string[] }[]
    assert.deepEqual(entries.map((e) => [e.records, e.splits.sort()]), [[4, ['dev', 'holdout']], [2, ['test', 'train']]])
    const text = await runCli(['detect', 'hf://datasets/acme/carded/questions/holdout'], env)
    assert.equal(text.stdout, 'hf://datasets/acme/carded/questions/holdout: hf (hf), 2 records, splits: holdout\n  fields: question, answer\n')
    const missing = await runCli(['convert', 'hf://datasets/acme/carded/questions/test', '--to', 'hf', '-o', join(dir, 'none.jsonl')], env)
    assert.equal(missing.code, 3)
    assert.match(missing.stderr, /the card's config 'questions' has no split 'test' \(its splits: dev, holdout\)/)
  })

  test('several configs and no default: the address must name one; without configs, splits come from the file names', async () => {
    hub.put('acme/two-configs', {
      'README.md': '---\nconfigs:\n- config_name: en\n  data_files: en/*.jsonl\n- config_name: fr\n  data_files: fr/*.jsonl\n---\n',
      'en/all.jsonl': row('hello'),
      'fr/all.jsonl': row('bonjour'),
    })
    const run = await runCli(['convert', 'hf://datasets/acme/two-configs', '--to', 'hf', '-o', join(dir, 'two.jsonl')], env)
    assert.equal(run.code, 3)
    assert.match(run.stderr, /the card names several configs and none is the default: name one \(hf:\/\/datasets\/acme\/two-configs\/en, hf:\/\/datasets\/acme\/two-configs\/fr\)/)
    assert.deepEqual(await read('hf://datasets/acme/two-configs/fr'), ['bonjour'])
    hub.put('acme/no-card', {
      'data/test.jsonl': row('t'),
      'data/dev-set.jsonl': row('v'),
      'data/train-00000-of-00002.jsonl': row('r0'),
      'data/train-00001-of-00002.jsonl': row('r1'),
    })
    assert.deepEqual(await read('hf://datasets/acme/no-card/default/validation'), ['v'])
    assert.deepEqual(await read('hf://datasets/acme/no-card/default/train'), ['r0', 'r1'])
    assert.deepEqual(await read('hf://datasets/acme/no-card/default/test'), ['t'])
  })
})

describe('hf:// push layout', () => {
  const parquetFiles = (repo: string): [string, Buffer][] => [...hub.filesOf(repo)].filter(([p]) => p.endsWith('.parquet')).sort(([a], [b]) => (a < b ? -1 : 1))

  test("a split larger than the shard size goes up as push_to_hub's shards, in one commit, each with the whole's schema", async () => {
    const input = join(dir, 'sharded-push.jsonl')
    writeFileSync(input, Array.from({ length: 3000 }, (_, i) => JSON.stringify({ question: `question ${i} ${'x'.repeat(i % 50)}`, answer: `answer ${i * 7}` })).join('\n') + '\n')
    assert.equal((await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/unsharded/default/test'], env)).code, 0)
    const [[, single]] = parquetFiles('acme/unsharded') as [[string, Buffer]]
    // Just above a third of the whole: three shards.
    const limit = Math.floor(single.length / 3) + 1
    const run = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/sharded-push/default/test', '--json'], { ...env, EVALFERRY_HF_SHARD_BYTES: String(limit) })
    assert.equal(run.code, 0, run.stderr)
    const shards = parquetFiles('acme/sharded-push')
    assert.deepEqual(shards.map(([p]) => p), ['data/test-00000-of-00003.parquet', 'data/test-00001-of-00003.parquet', 'data/test-00002-of-00003.parquet'])
    assert.equal(hub.commitsOf('acme/sharded-push'), 1)
    assert.equal(cdn.count('PUT /objects/{oid}'), 1 + 3)
    const card = hub.filesOf('acme/sharded-push').get('README.md')!.toString()
    assert.match(card, /data_files:\n  - split: test\n    path: data\/test-\*\n/)
    assert.match(card, /num_examples: 3000\n/)
    // Rows split evenly, in order, each shard holding the whole's schema and its metadata.
    const whole = await parquetMetadataAsync(await asyncBufferFromFile(writeTemp('single.parquet', single)))
    let row = 0
    for (const [path, bytes] of shards) {
      const meta = await parquetMetadataAsync(await asyncBufferFromFile(writeTemp(path.replace(/\//g, '_'), bytes)))
      assert.equal(Number(meta.num_rows), 1000, path)
      assert.deepEqual(meta.schema, whole.schema, path)
      assert.deepEqual(meta.key_value_metadata, whole.key_value_metadata, path)
      assert.ok(bytes.length < single.length / 2, `${path}: ${bytes.length} bytes`)
      row += Number(meta.num_rows)
    }
    assert.equal(row, 3000)
    const back = join(dir, 'sharded-push-back.jsonl')
    assert.equal((await runCli(['convert', 'hf://datasets/acme/sharded-push/default/test', '--to', 'hf', '-o', back], env)).code, 0)
    assert.deepEqual(jsonLines(back), jsonLines(input))
    const bad = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/bad-limit'], { ...env, EVALFERRY_HF_SHARD_BYTES: '500MB' })
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /EVALFERRY_HF_SHARD_BYTES takes a whole number of bytes above 0, not "500MB"/)
  })

  test('an LFS upload the Hub asks for in parts: each part PUT, their ETags sent to complete it, one commit', async () => {
    const input = join(dir, 'multipart.jsonl')
    writeFileSync(input, Array.from({ length: 400 }, (_, i) => JSON.stringify({ question: `q${i} ${'y'.repeat(i)}`, answer: `a${i}` })).join('\n') + '\n')
    hub.multipart = { fromBytes: 1000, chunkSize: 2048 }
    try {
      // A part answered 503, and the completion applied with its answer cut: both sent again.
      hub.faults = [{ route: 'POST /api/complete_multipart', call: 1, fault: { applyThen: 'cut' } }]
      cdn.faults = [{ route: 'PUT /parts/{oid}/{part}', call: 2, fault: { status: 503 } }]
      const run = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/multipart'], env)
      assert.equal(run.code, 0, run.stderr)
      const [[, parquet]] = parquetFiles('acme/multipart') as [[string, Buffer]]
      const parts = Math.ceil(parquet.length / 2048)
      assert.ok(parts >= 3, `${parquet.length} bytes`)
      assert.equal(cdn.count('PUT /parts/{oid}/{part}'), parts + 1)
      assert.equal(cdn.count('PUT /objects/{oid}'), 0)
      assert.equal(hub.count('POST /api/complete_multipart'), 2)
      assert.equal(hub.commitsOf('acme/multipart'), 1)
      assert.ok(cdn.log.every((r) => !r.headers.includes('authorization')))
      const back = join(dir, 'multipart-back.jsonl')
      assert.equal((await runCli(['convert', 'hf://datasets/acme/multipart', '--to', 'hf', '-o', back], env)).code, 0)
      assert.deepEqual(jsonLines(back), jsonLines(input))
    } finally {
      hub.multipart = undefined
    }
  })

  test("a push keeps the card's text and other keys; appended, a split joins its config's card entry, and the other splits stay readable", async () => {
    hub.put('acme/kept-card', {
      'README.md': '---\nlicense: apache-2.0\npretty_name: Kept\n---\n# Kept\n\nProse the push must not lose.\n',
      'data/test.jsonl': JSON.stringify({ question: 'old test', answer: 'a' }) + '\n',
    })
    const input = join(dir, 'kept.jsonl')
    writeFileSync(input, rows(2))
    assert.equal((await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/kept-card', '--if-exists', 'append'], env)).code, 0)
    const card = hub.filesOf('acme/kept-card').get('README.md')!.toString()
    assert.match(card, /^---\nlicense: apache-2\.0\npretty_name: Kept\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data\/test\.jsonl\n  - split: train\n    path: data\/train-\*\n/)
    assert.match(card, /---\n# Kept\n\nProse the push must not lose\.\n$/)
    const detected = await runCli(['detect', 'hf://datasets/acme/kept-card', '--json'], env)
    const [entry] = JSON.parse(detected.stdout) as { records: number; splits: string[] }[]
    assert.deepEqual([entry!.records, entry!.splits.sort()], [3, ['test', 'train']])
  })
})

function writeTemp(name: string, bytes: Buffer): string {
  const path = join(dir, name)
  writeFileSync(path, bytes)
  return path
}

describe('hf:// faults at each step of a push', () => {
  const STEPS: [() => HubStandIn | CdnStandIn, string][] = [
    [() => hub, 'POST /api/repos/create'],
    [() => hub, 'GET /api/datasets/{repo}/revision/{rev}'],
    [() => hub, 'GET /api/datasets/{repo}/tree/{rev}'],
    [() => hub, 'GET /datasets/{repo}/resolve/{rev}/{path}'],
    [() => hub, 'POST /api/datasets/{repo}/preupload/{rev}'],
    [() => hub, 'POST /datasets/{repo}.git/info/lfs/objects/batch'],
    [() => cdn, 'PUT /objects/{oid}'],
    [() => hub, 'POST /api/datasets/{repo}/commit/{rev}'],
  ]
  const KINDS: { what: string; fault: FaultKind }[] = [
    { what: '429', fault: { status: 429, retryAfter: '0' } },
    { what: '503', fault: { status: 503 } },
    { what: 'a cut connection', fault: { cut: 'before' } },
    { what: 'an answer slower than the timeout', fault: { delayMs: 1500 } },
  ]

  test('429, 5xx, a cut connection or a timeout at any step ends in one commit of every row, the token shown nowhere', async () => {
    for (const [s, [server, route]] of STEPS.entries()) {
      for (const [k, { what, fault }] of KINDS.entries()) {
        const repo = `acme/step-${s}-${k}`
        // Rows of its own, so that the second origin holds none of its bytes yet.
        const input = join(dir, `step-${s}-${k}-in.jsonl`)
        writeFileSync(input, rows(4).replaceAll('"q', `"${repo} q`))
        // A dataset with a card already, so that the push reads it (the README's resolve step).
        hub.put(repo, { 'README.md': '---\nlicense: mit\n---\n# Kept\n' })
        hub.reset()
        cdn.reset()
        server().faults = [{ route, call: 1, fault }]
        const at = `${what} on ${route}`
        const report = await convert({ input, output: `hf://datasets/${repo}`, from: 'hf', env, timeoutMs: 500 })
        assert.ok(server().count(route) >= 2, `${at}: asked again`)
        assert.equal(hub.commitsOf(repo), 1, at)
        assert.deepEqual([...hub.filesOf(repo).keys()].sort(), ['README.md', 'data/train-00000-of-00001.parquet'], at)
        assert.match(hub.filesOf(repo).get('README.md')!.toString(), /^---\nlicense: mit\nconfigs:\n[\s\S]*---\n# Kept\n$/, at)
        assert.ok(!JSON.stringify(report).includes(hub.token), at)
        assert.ok(cdn.log.every((r) => !r.headers.includes('authorization')), at)
        const back = join(dir, `step-${s}-${k}.jsonl`)
        await convert({ input: `hf://datasets/${repo}`, output: back, to: 'hf', env })
        assert.deepEqual(jsonLines(back), jsonLines(input), at)
      }
    }
  })

  test('a step that keeps failing ends in exit 3 naming it, no commit made, the token shown nowhere', async () => {
    const input = join(dir, 'keeps-failing.jsonl')
    writeFileSync(input, rows(2))
    hub.faults = [{ route: 'POST /api/datasets/{repo}/preupload/{rev}', call: 1, times: 100, fault: { status: 503, retryAfter: '0' } }]
    const report = join(dir, 'keeps-failing.report.json')
    const run = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/keeps-failing', '--report', report], env)
    assert.equal(run.code, 3, run.stderr)
    assert.match(run.stderr, /Hugging Face Hub POST \/api\/datasets\/acme\/keeps-failing\/preupload\/main: HTTP 503.*\(after 6 attempts\)/)
    assert.equal(hub.count('POST /api/datasets/{repo}/preupload/{rev}'), 6)
    assert.equal(hub.count('POST /api/datasets/{repo}/commit/{rev}'), 0)
    assert.equal(hub.commitsOf('acme/keeps-failing'), 0)
    // The report tells what the conversion did and why the push stopped.
    const written = JSON.parse(readFileSync(report, 'utf8')) as { records: { written: number }; failed: { code: string } }
    assert.deepEqual([written.records.written, written.failed.code], [2, 'E_FETCH'])
    for (const text of [run.stdout, run.stderr, readFileSync(report, 'utf8')]) assert.ok(!text.includes(hub.token))
  })
})
