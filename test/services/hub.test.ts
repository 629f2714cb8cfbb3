/** hf://datasets/ as input and output, against a Hub stand-in and a second origin for LFS bytes, on loopback. */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { convert } from '../../src/index.ts'
import { kill, runCli, SHARED_FIXTURES, startCli } from '../helpers/cli.ts'
import { CdnStandIn, HubStandIn } from '../helpers/services/hub-server.ts'
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

  test('--dry-run names the files and sends nothing', async () => {
    const input = join(dir, 'dry.jsonl')
    writeFileSync(input, rows(2))
    const run = await runCli(['convert', input, '--from', 'hf', '-o', 'hf://datasets/acme/dry', '--dry-run', '--json'], env)
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(JSON.parse(run.stdout).dry_run.files, ['data/train-00000-of-00001.parquet', 'README.md'])
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

  test('a push killed at any point and run again leaves one data file of every row (10 seeds)', async () => {
    const input = join(dir, 'killed.jsonl')
    writeFileSync(input, rows(50))
    const routes = ['POST /api/repos/create', 'GET /api/datasets/{repo}/revision/{rev}', 'POST /api/datasets/{repo}/preupload/{rev}', 'POST /datasets/{repo}.git/info/lfs/objects/batch', 'POST /api/datasets/{repo}/commit/{rev}']
    for (let seed = 1; seed <= 10; seed++) {
      const repo = `acme/killed-${seed}`
      hub.reset()
      const route = routes[seed % routes.length]!
      hub.faults = [{ route, call: 1, fault: seed % 2 === 0 ? { applyThen: 'hold' } : { delayMs: 20_000 } }]
      const child = startCli(['convert', input, '--from', 'hf', '-o', `hf://datasets/${repo}`], env)
      await until(() => hub.count(route) >= 1)
      kill(child.pid)
      await child.done
      hub.reset()
      const again = await runCli(['convert', input, '--from', 'hf', '-o', `hf://datasets/${repo}`], env)
      assert.equal(again.code, 0, `seed ${seed}: ${again.stderr}`)
      assert.deepEqual([...hub.filesOf(repo).keys()].filter((p) => p.startsWith('data/')), ['data/train-00000-of-00001.parquet'], `seed ${seed}`)
      const back = join(dir, `killed-${seed}.jsonl`)
      assert.equal((await runCli(['convert', `hf://datasets/${repo}`, '--to', 'hf', '-o', back], env)).code, 0)
      assert.deepEqual(jsonLines(back), jsonLines(input), `seed ${seed}`)
    }
  })
})

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20))
}
