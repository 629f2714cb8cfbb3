/** langsmith:// as input and output, against a LangSmith stand-in on loopback. */
import assert from 'node:assert/strict'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { convert } from '../../src/index.ts'
import { runCli, SHARED_FIXTURES, startCli, kill } from '../helpers/cli.ts'
import { LangSmithStandIn } from '../helpers/services/langsmith-server.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('evalferry-langsmith-')
let server: LangSmithStandIn
let env: NodeJS.ProcessEnv

before(async () => {
  server = await new LangSmithStandIn().start()
  env = { LANGSMITH_API_KEY: server.apiKey, LANGSMITH_ENDPOINT: server.url }
})
after(() => server.stop())
beforeEach(() => server.reset())

/** The real files of each kind, with the format each is read as. */
const ROUND_TRIPS = [
  { file: join(SHARED_FIXTURES, 'deepeval', 'saveas-single_turn.json'), format: 'deepeval' },
  { file: join(SHARED_FIXTURES, 'deepeval', 'saveas-multi_turn.json'), format: 'deepeval' },
  { file: join(import.meta.dirname, '..', 'fixtures', 'langsmith', 'kv.jsonl'), format: 'langsmith' },
  { file: join(import.meta.dirname, '..', 'fixtures', 'langsmith', 'chat.jsonl'), format: 'langsmith' },
]

function lines(count: number, width = 20, ids = false): string {
  return Array.from({ length: count }, (_, i) => JSON.stringify({ ...(ids ? { id: `ex-${i}` } : {}), inputs: { question: `q${i} ${'x'.repeat(width)}` }, outputs: { answer: `a${i}` } })).join('\n') + '\n'
}

/** The records of a JSON or JSON Lines file, as JSON values (key order aside). */
function records(path: string): unknown {
  const text = readFileSync(path, 'utf8')
  return path.endsWith('.jsonl') ? text.split('\n').filter(Boolean).map((l) => JSON.parse(l)) : JSON.parse(text)
}

describe('langsmith:// round trips', () => {
  for (const { file, format } of ROUND_TRIPS) {
    const name = file.split('/').pop()!
    test(`${name} → LangSmith → ${format} gives the same records`, async () => {
      const pushed = await runCli(['convert', file, '--from', format, '-o', `langsmith://rt-${name}`], env)
      assert.equal(pushed.code, 0, pushed.stderr)
      const out = join(dir, name)
      const pulled = await runCli(['convert', `langsmith://rt-${name}`, '--to', format, '-o', out], env)
      assert.equal(pulled.code, 0, pulled.stderr)
      assert.deepEqual(records(out), records(file))
    })
  }

  test('a LangSmith export from the field → LangSmith → langsmith gives the records its direct conversion gives', async () => {
    const file = join(SHARED_FIXTURES, 'field', 'langsmith', 'langchain-benchmarks__Web-QA-Dataset-Correct.json')
    const direct = join(dir, 'web-qa-direct.jsonl')
    assert.equal((await runCli(['convert', file, '--from', 'langsmith', '--to', 'langsmith', '-o', direct], env)).code, 0)
    const pushed = await runCli(['convert', file, '--from', 'langsmith', '-o', 'langsmith://web-qa', '--json'], env)
    assert.equal(pushed.code, 0, pushed.stderr)
    assert.equal((JSON.parse(pushed.stdout) as { push: { sent: number } }).push.sent, 100)
    const back = join(dir, 'web-qa-back.jsonl')
    const pulled = await runCli(['convert', 'langsmith://web-qa', '--to', 'langsmith', '-o', back], env)
    assert.equal(pulled.code, 0, pulled.stderr)
    assert.equal((records(back) as unknown[]).length, 100)
    assert.deepEqual(records(back), records(direct))
  })

  test('a dataset is made chat where every example\'s inputs are messages alone, else kv', async () => {
    const input = join(dir, 'chat-only.jsonl')
    writeFileSync(input, JSON.stringify({ inputs: { messages: [{ role: 'user', content: 'Hi' }] }, outputs: { message: { role: 'assistant', content: 'Hello' } } }) + '\n')
    assert.equal((await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://chat-only'], env)).code, 0)
    const datasets = [...server.datasets.values()]
    assert.equal(datasets.find((d) => d.name === 'chat-only')?.data_type, 'chat')
    // The chat fixture has tools beside its messages.
    assert.equal(datasets.find((d) => d.name === 'rt-chat.jsonl')?.data_type, 'kv')
    assert.equal(datasets.find((d) => d.name === 'rt-kv.jsonl')?.data_type, 'kv')
  })
})

describe('langsmith:// pushes', () => {
  test('a push run again sends nothing and leaves each example once', async () => {
    const input = join(dir, 'again.jsonl')
    writeFileSync(input, lines(7))
    const first = await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://again', '--json'], env)
    assert.equal(first.code, 0, first.stderr)
    assert.deepEqual(JSON.parse(first.stdout).push, { target: 'langsmith://again', created: true, sent: 7, updated: 0, unchanged: 0, removed: 0, requests: 4, dataset_id: server.examplesOf('again')[0]!.dataset_id })
    const second = await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://again', '--json'], env)
    assert.equal(second.code, 0, second.stderr)
    const push = JSON.parse(second.stdout).push
    assert.deepEqual([push.created, push.sent, push.unchanged], [false, 0, 7])
    assert.equal(server.examplesOf('again').length, 7)
  })

  test('a record with an id, changed, is updated in place, not added', async () => {
    const input = join(dir, 'ids.jsonl')
    writeFileSync(input, lines(4, 20, true))
    assert.equal((await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://ids'], env)).code, 0)
    writeFileSync(input, lines(4, 20, true).replace('"a3"', '"changed"'))
    const again = await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://ids', '--json'], env)
    assert.equal(again.code, 0, again.stderr)
    const push = JSON.parse(again.stdout).push
    assert.deepEqual([push.sent, push.updated, push.unchanged], [0, 1, 3])
    assert.equal(server.examplesOf('ids').length, 4)
    assert.equal(server.examplesOf('ids').filter((e) => e.outputs?.answer === 'changed').length, 1)
    const back = join(dir, 'ids-back.jsonl')
    assert.equal((await runCli(['convert', 'langsmith://ids', '--to', 'langsmith', '-o', back], env)).code, 0)
    assert.deepEqual(records(back), records(input))
  })

  test('a dataset holding other examples is refused, appended to or replaced as --if-exists says', async () => {
    const mine = join(dir, 'mine.jsonl')
    const theirs = join(dir, 'theirs.jsonl')
    writeFileSync(mine, lines(3))
    writeFileSync(theirs, lines(2).replaceAll('"q', '"other q'))
    assert.equal((await runCli(['convert', theirs, '--from', 'langsmith', '-o', 'langsmith://shared'], env)).code, 0)
    const refused = await runCli(['convert', mine, '--from', 'langsmith', '-o', 'langsmith://shared'], env)
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /already holds 2 example\(s\) this push would not write; --if-exists append/)
    assert.equal(server.examplesOf('shared').length, 2)
    assert.equal((await runCli(['convert', mine, '--from', 'langsmith', '-o', 'langsmith://shared', '--if-exists', 'append'], env)).code, 0)
    assert.equal(server.examplesOf('shared').length, 5)
    assert.equal((await runCli(['convert', mine, '--from', 'langsmith', '-o', 'langsmith://shared', '--if-exists', 'replace'], env)).code, 0)
    assert.deepEqual(server.examplesOf('shared').map((e) => (e.inputs.question as string).slice(0, 3)).sort(), ['q0 ', 'q1 ', 'q2 '])
  })

  test('--dry-run tells what would be sent and sends nothing', async () => {
    const input = join(dir, 'dry.jsonl')
    writeFileSync(input, lines(4))
    const run = await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://dry', '--dry-run', '--json'], env)
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(JSON.parse(run.stdout).dry_run, { target: 'langsmith://dry', records: 4, fields: ['inputs.question', 'outputs.answer'], if_exists: 'fail' })
    assert.equal(server.count(), 0)
  })

  test('examples go in requests under 20 MB each, read back page by page', async () => {
    const input = join(dir, 'big.jsonl')
    // 230 examples of about 100 KB: more than one request's worth.
    writeFileSync(input, lines(230, 100_000))
    const run = await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://big'], env)
    assert.equal(run.code, 0, run.stderr)
    const posts = server.log.filter((r) => r.route === 'POST /v1/platform/datasets/{id}/examples')
    assert.equal(posts.length, 2)
    for (const post of posts) assert.ok(post.bodyBytes < 20_000_000, `${post.bodyBytes} bytes`)
    server.log.length = 0
    const out = join(dir, 'big-back.jsonl')
    const pulled = await runCli(['convert', 'langsmith://big', '--to', 'langsmith', '-o', out], env)
    assert.equal(pulled.code, 0, pulled.stderr)
    assert.equal(server.count('GET /examples'), 3)
    assert.deepEqual(server.log.filter((r) => r.route === 'GET /examples').map((r) => r.query.get('offset')), ['0', '100', '200'])
    assert.deepEqual(records(out), records(input))
  })

  test('detect <address> tells the records, splits and fields, converting nothing', async () => {
    const input = join(dir, 'detect.jsonl')
    const rows = [
      { inputs: { question: 'a' }, outputs: { answer: 'b' }, metadata: { dataset_split: ['test'] } },
      { inputs: { question: 'c' }, metadata: { dataset_split: ['train'] } },
    ]
    writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n')
    assert.equal((await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://detect'], env)).code, 0)
    const run = await runCli(['detect', 'langsmith://detect', '--json'], env)
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(JSON.parse(run.stdout), [
      { file: 'langsmith://detect', service: 'langsmith', format: 'langsmith', records: 2, splits: ['test', 'train'], fields: ['inputs.question', 'outputs.answer', 'metadata.dataset_split'] },
    ])
    const text = await runCli(['detect', 'langsmith://detect'], env)
    assert.equal(text.stdout, 'langsmith://detect: langsmith (langsmith), 2 records, splits: test, train\n  fields: inputs.question, outputs.answer, metadata.dataset_split\n')
  })

  test('the library converts to and from an address, the format implied', async () => {
    const input = join(SHARED_FIXTURES, 'deepeval', 'saveas-single_turn.json')
    const pushed = await convert({ input, output: 'langsmith://library', to: 'langsmith', env })
    assert.equal(pushed.records.written, 2)
    assert.deepEqual(pushed.inputs, [input])
    assert.equal(pushed.output, 'langsmith://library')
    const out = join(dir, 'library.json')
    const pulled = await convert({ input: 'langsmith://library', output: out, to: 'deepeval', env })
    assert.equal(pulled.from, 'langsmith')
    assert.equal(readFileSync(out, 'utf8'), readFileSync(input, 'utf8'))
    await assert.rejects(convert({ input: 'langsmith://library', output: join(dir, 'x.json'), from: 'deepeval', to: 'deepeval', env }), /holds langsmith records; --from deepeval contradicts it/)
  })
})

describe('langsmith:// failures', () => {
  test('a missing or refused key is exit 3 naming the variable, and the key is shown nowhere', async () => {
    const missing = await runCli(['convert', 'langsmith://x', '--to', 'deepeval', '-o', join(dir, 'x.json')], { LANGSMITH_ENDPOINT: server.url })
    assert.equal(missing.code, 3)
    assert.match(missing.stderr, /set LANGSMITH_API_KEY \(or LANGCHAIN_API_KEY\)/)
    assert.equal(server.count(), 0)
    const wrong = 'lsv2_wrong_secret_value'
    const refused = await runCli(['convert', 'langsmith://x', '--to', 'deepeval', '-o', join(dir, 'x.json')], { LANGSMITH_API_KEY: wrong, LANGSMITH_ENDPOINT: server.url })
    assert.equal(refused.code, 3)
    assert.match(refused.stderr, /HTTP 401.*set LANGSMITH_API_KEY to a valid key/)
    assert.ok(!refused.stderr.includes(wrong) && !refused.stdout.includes(wrong))
  })

  test('--shard of a service is refused, not ignored', async () => {
    const run = await runCli(['convert', 'langsmith://x', '--to', 'deepeval', '-o', join(dir, 's.json'), '--shard', '1/2'], env)
    assert.equal(run.code, 2)
    assert.match(run.stderr, /--shard splits local files and hf:\/\/ datasets; langsmith:\/\/x is read from its service/)
    assert.equal(server.count(), 0)
  })

  test('a dataset that is not there is exit 3 naming it', async () => {
    const run = await runCli(['convert', 'langsmith://nowhere', '--to', 'deepeval', '-o', join(dir, 'n.json')], env)
    assert.equal(run.code, 3)
    assert.match(run.stderr, /langsmith:\/\/nowhere: LangSmith at http:\/\/127\.0\.0\.1:\d+ has no dataset named 'nowhere'/)
  })

  test('429 is waited out as Retry-After asks, then the read goes on', async () => {
    writeFileSync(join(dir, 'r.jsonl'), lines(3))
    assert.equal((await runCli(['convert', join(dir, 'r.jsonl'), '--from', 'langsmith', '-o', 'langsmith://rate'], env)).code, 0)
    server.reset()
    server.faults = [{ route: 'GET /examples', call: 1, fault: { status: 429, retryAfter: '1' } }]
    const report = join(dir, 'rate.report.json')
    const run = await runCli(['convert', 'langsmith://rate', '--to', 'langsmith', '-o', join(dir, 'rate.jsonl'), '--report', report], env)
    assert.equal(run.code, 0, run.stderr)
    const reads = server.log.filter((r) => r.route === 'GET /examples')
    assert.equal(reads.length, 2)
    assert.ok(reads[1]!.at - reads[0]!.at >= 1000, `waited ${reads[1]!.at - reads[0]!.at} ms`)
    assert.deepEqual(records(join(dir, 'rate.jsonl')), records(join(dir, 'r.jsonl')))
    assert.ok(!readFileSync(report, 'utf8').includes(server.apiKey))
  })

  const FAULTS = [
    { what: 'a 503 on a page', route: 'GET /examples', fault: { status: 503 } },
    { what: 'a connection cut before the answer', route: 'GET /datasets', fault: { cut: 'before' as const } },
    { what: 'a page cut halfway', route: 'GET /examples', fault: { cut: 'body' as const } },
    { what: 'a slow answer past the timeout', route: 'GET /examples', fault: { delayMs: 3000 } },
    // Stored, the examples are found by their ids and not sent again.
    { what: 'a push stored, then answered 500', route: 'POST /v1/platform/datasets/{id}/examples', fault: { applyThen: 500 as const }, calls: 1 },
    { what: 'a push stored, then cut', route: 'POST /v1/platform/datasets/{id}/examples', fault: { applyThen: 'cut' as const }, calls: 1 },
    { what: 'a push refused with 502', route: 'POST /v1/platform/datasets/{id}/examples', fault: { status: 502 } },
    { what: 'a dataset made, then cut', route: 'POST /datasets', fault: { applyThen: 'cut' as const } },
  ]
  for (const [i, { what, route, fault, calls }] of FAULTS.entries()) {
    test(`${what}: the push ends with each example once`, async () => {
      const input = join(dir, `fault-${i}.jsonl`)
      writeFileSync(input, lines(5))
      server.faults = [{ route, call: 1, fault }]
      const run = await runCli(['convert', input, '--from', 'langsmith', '-o', `langsmith://fault-${i}`, '--timeout', '0.5'], env)
      assert.equal(run.code, 0, run.stderr)
      if (calls === undefined) assert.ok(server.count(route) >= 2, `${route} asked again`)
      else assert.equal(server.count(route), calls)
      assert.equal(server.examplesOf(`fault-${i}`).length, 5)
      const back = join(dir, `fault-${i}-back.jsonl`)
      assert.equal((await runCli(['convert', `langsmith://fault-${i}`, '--to', 'langsmith', '-o', back], env)).code, 0)
      assert.deepEqual(records(back), records(input))
    })
  }

  test('EVALFERRY_TIMEOUT is each request\'s limit when --timeout is not given: a slow page is asked again', async () => {
    const input = join(dir, 'env-timeout.jsonl')
    writeFileSync(input, lines(3))
    server.faults = [{ route: 'GET /examples', call: 1, fault: { delayMs: 3000 } }]
    const run = await runCli(['convert', input, '--from', 'langsmith', '-o', 'langsmith://env-timeout'], { ...env, EVALFERRY_TIMEOUT: '0.5' })
    assert.equal(run.code, 0, run.stderr)
    assert.ok(server.count('GET /examples') >= 2, 'GET /examples asked again')
    assert.equal(server.examplesOf('env-timeout').length, 3)
  })

  test('an EVALFERRY_TIMEOUT longer than a timer holds is exit 2 naming the variable, as for git, before any request', async () => {
    const before = server.count()
    const run = await runCli(['convert', 'langsmith://x', '--to', 'deepeval', '-o', join(dir, 'long-timeout.json')], { ...env, EVALFERRY_TIMEOUT: '1e10' })
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /EVALFERRY_TIMEOUT=1e10 is too long: the largest timeout accepted is 2147483 seconds/)
    assert.equal(server.count(), before)
  })

  test('offline (--offline, or EVALFERRY_OFFLINE=true), a LangSmith read or push is exit 3 before any request', async () => {
    const input = join(dir, 'offline.jsonl')
    writeFileSync(input, lines(2))
    for (const [args, extra] of [
      [['convert', 'langsmith://x', '--to', 'deepeval', '-o', join(dir, 'offline.json'), '--offline'], {}],
      [['convert', 'langsmith://x', '--to', 'deepeval', '-o', join(dir, 'offline.json')], { EVALFERRY_OFFLINE: 'true' }],
      [['convert', input, '--from', 'langsmith', '-o', 'langsmith://offline', '--offline'], {}],
      [['detect', 'langsmith://x'], { EVALFERRY_OFFLINE: 'yes' }],
    ] as const) {
      const run = await runCli([...args], { ...env, ...extra })
      assert.equal(run.code, 3, run.stderr)
      assert.match(run.stderr, /langsmith:\/\/(x|offline): --offline forbids asking LangSmith; only an hf:\/\/ input is served from the cache/)
    }
    assert.equal(server.count(), 0)
    assert.equal(existsSync(join(dir, 'offline.json')), false)
  })

  test('an endpoint that is no URL is a usage error naming its variable', async () => {
    const run = await runCli(['convert', 'langsmith://x', '--to', 'deepeval', '-o', join(dir, 'bad-endpoint.json')], { ...env, LANGSMITH_ENDPOINT: 'notaurl' })
    assert.equal(run.code, 2)
    assert.equal(run.stderr, 'evalferry: LANGSMITH_ENDPOINT="notaurl" is not an http(s) URL\n')
  })

  test('a service that keeps failing ends in exit 3 with what failed, not a hang', async () => {
    writeFileSync(join(dir, 'down.jsonl'), lines(2))
    server.faults = [{ route: 'GET /datasets', call: 1, times: 100, fault: { status: 500 } }]
    const run = await runCli(['convert', join(dir, 'down.jsonl'), '--from', 'langsmith', '-o', 'langsmith://down'], env)
    assert.equal(run.code, 3)
    assert.match(run.stderr, /LangSmith GET \/datasets: HTTP 500.*\(after 6 attempts\)/)
    assert.equal(server.count('GET /datasets'), 6)
    assert.equal(server.examplesOf('down').length, 0)
  })

  test('a push killed at any point and run again leaves each example exactly once (10 seeds)', async () => {
    const input = join(dir, 'killed.jsonl')
    // About 21 MB: two multipart requests.
    writeFileSync(input, lines(210, 100_000))
    const routes = ['GET /datasets', 'POST /datasets', 'GET /examples', 'POST /v1/platform/datasets/{id}/examples']
    for (let seed = 1; seed <= 10; seed++) {
      const name = `killed-${seed}`
      // The seed picks the request the process dies waiting for, and whether the service had applied it.
      const route = routes[seed % routes.length]!
      const call = route.startsWith('POST /v1') ? 1 + (seed % 2) : 1
      server.reset()
      server.faults = [{ route, call, fault: seed % 2 === 0 ? { applyThen: 'hold' } : { delayMs: 20_000 } }]
      const child = startCli(['convert', input, '--from', 'langsmith', '-o', `langsmith://${name}`], env)
      await until(() => server.count(route) >= call)
      kill(child.pid)
      await child.done
      server.faults = []
      const again = await runCli(['convert', input, '--from', 'langsmith', '-o', `langsmith://${name}`], env)
      assert.equal(again.code, 0, `seed ${seed}: ${again.stderr}`)
      const stored = server.examplesOf(name)
      assert.equal(stored.length, 210, `seed ${seed}`)
      assert.equal(new Set(stored.map((e) => e.inputs.question)).size, 210, `seed ${seed}`)
    }
  })
})

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20))
}
