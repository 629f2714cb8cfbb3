/** confident:// as input and output, against a Confident AI stand-in on loopback. */
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { convert } from '../../src/index.ts'
import { confidentHttp } from '../../src/services/confident.ts'
import { kill, runCli, SHARED_FIXTURES, startCli } from '../helpers/cli.ts'
import { ConfidentStandIn } from '../helpers/services/confident-server.ts'
import { LangSmithStandIn } from '../helpers/services/langsmith-server.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('evalferry-confident-')
let server: ConfidentStandIn
let env: NodeJS.ProcessEnv

before(async () => {
  server = await new ConfidentStandIn().start()
  env = { CONFIDENT_API_KEY: server.apiKey, CONFIDENT_BASE_URL: server.url }
})
after(() => server.stop())
beforeEach(() => server.reset())

function goldens(count: number, width = 10): string {
  return JSON.stringify(Array.from({ length: count }, (_, i) => ({ input: `q${i} ${'x'.repeat(width)}`, expected_output: `a${i}` })), null, 2)
}

const json = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'))

describe('confident:// round trips', () => {
  for (const name of ['saveas-single_turn.json', 'saveas-multi_turn.json', 'repo-confident_goldens.json', 'repo-confident_goldens_multi_turn.json']) {
    test(`${name} → Confident AI → deepeval gives the same records`, async () => {
      const file = join(SHARED_FIXTURES, 'deepeval', name)
      const alias = `rt-${name}`
      const pushed = await convert({ input: file, output: `confident://${alias}`, to: 'deepeval', env })
      assert.equal(pushed.push?.sent, (json(file) as unknown[]).length)
      const out = join(dir, name)
      await convert({ input: `confident://${alias}`, output: out, to: 'deepeval', env })
      assert.deepEqual(json(out), json(file))
    })
  }

  test('goldens travel in camelCase, conversational ones as conversationalGoldens', () => {
    const single = server.goldensOf('rt-saveas-single_turn.json')[0]!
    assert.ok('expectedOutput' in single && 'retrievalContext' in single && !('expected_output' in single), Object.keys(single).join(', '))
    assert.equal(server.datasets.get('rt-saveas-multi_turn.json')?.multiTurn, true)
    assert.ok('expectedOutcome' in server.goldensOf('rt-saveas-multi_turn.json')[0]!)
  })
})

describe('confident:// pushes', () => {
  test('LangSmith-shaped files convert on the way, and the alias is one path segment', async () => {
    const input = join(import.meta.dirname, '..', 'fixtures', 'langsmith', 'kv.jsonl')
    const report = await convert({ input, output: 'confident://team a/qa', from: 'langsmith', to: 'deepeval', env })
    assert.equal(report.push?.sent, 3)
    assert.ok(server.log.some((r) => r.path === '/v1/datasets/team%20a%2Fqa'))
    assert.equal(server.goldensOf('team a/qa').length, 3)
  })

  test("a push's warnings, listed and grouped, name the address, never the file staged for it", async () => {
    const input = join(dir, 'tagged.json')
    writeFileSync(input, JSON.stringify([{ input: 'q1', expected_output: 'a1', tags: ['t'] }, { input: 'q2', expected_output: 'a2' }]))
    const run = await runCli(['convert', input, '-o', 'confident://tagged', '--json'], env)
    assert.equal(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout) as { warnings: { message: string; location: { file: string } }[]; warning_groups: { first: { message: string; location: { file: string } }[] }[] }
    const places = [...report.warnings, ...report.warning_groups.flatMap((g) => g.first)]
    assert.ok(places.some((w) => /do not read `tags`/.test(w.message)))
    assert.deepEqual([...new Set(places.map((w) => w.location.file))], ['confident://tagged'])
    assert.doesNotMatch(run.stdout, /\/(in|out)-tagged\.jsonl/)
    const shown = await runCli(['convert', input, '-o', 'confident://tagged-too'], env)
    assert.match(shown.stderr, /confident:\/\/tagged-too: .*do not read `tags`/)
    assert.doesNotMatch(shown.stderr, /\/(in|out)-tagged-too\.jsonl/)
  })

  test('detect <address> tells the records and fields of an alias, converting nothing', async () => {
    const input = join(dir, 'detected.json')
    writeFileSync(input, JSON.stringify([{ input: 'q1', expected_output: 'a1', context: ['c'] }, { input: 'q2', expected_output: 'a2' }]))
    assert.equal((await runCli(['convert', input, '-o', 'confident://detected'], env)).code, 0)
    const before = server.count()
    const json = await runCli(['detect', 'confident://detected', '--json'], env)
    assert.equal(json.code, 0, json.stderr)
    assert.deepEqual(JSON.parse(json.stdout), [{ file: 'confident://detected', service: 'confident', format: 'deepeval', records: 2, splits: [], fields: ['input', 'expected_output', 'context'] }])
    const text = await runCli(['detect', 'confident://detected'], env)
    assert.equal(text.stdout, 'confident://detected: deepeval (confident), 2 records\n  fields: input, expected_output, context\n')
    // Read only: the two runs asked for the goldens and nothing else.
    assert.deepEqual([...new Set(server.log.slice(before).map((r) => r.route))], ['GET /v1/datasets/{alias}'])
  })

  test('large pushes go in chunks, and a push run again sends nothing', async () => {
    const input = join(dir, 'chunks.json')
    writeFileSync(input, goldens(250))
    const first = await convert({ input, output: 'confident://chunks', to: 'deepeval', env })
    assert.deepEqual([first.push?.created, first.push?.sent], [true, 250])
    assert.equal(server.count('POST /v1/datasets/{alias}'), 3)
    const again = await convert({ input, output: 'confident://chunks', to: 'deepeval', env })
    assert.deepEqual([again.push?.sent, again.push?.unchanged], [0, 250])
    assert.equal(server.goldensOf('chunks').length, 250)
  })

  test('an alias holding other goldens is refused, appended to or replaced as --if-exists says', async () => {
    const mine = join(dir, 'mine.json')
    const theirs = join(dir, 'theirs.json')
    writeFileSync(mine, goldens(3))
    writeFileSync(theirs, goldens(2).replaceAll('"q', '"other q'))
    await convert({ input: theirs, output: 'confident://shared', to: 'deepeval', env })
    const refused = await runCli(['convert', mine, '-o', 'confident://shared'], env)
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /already holds 2 golden\(s\) this push would not write/)
    assert.equal(server.goldensOf('shared').length, 2)
    await convert({ input: mine, output: 'confident://shared', to: 'deepeval', env, ifExists: 'append' })
    assert.equal(server.goldensOf('shared').length, 5)
    // Appended again, the goldens it ends with are this push's: nothing is added twice.
    await convert({ input: mine, output: 'confident://shared', to: 'deepeval', env, ifExists: 'append' })
    assert.equal(server.goldensOf('shared').length, 5)
    await convert({ input: mine, output: 'confident://shared', to: 'deepeval', env, ifExists: 'replace' })
    assert.deepEqual(server.goldensOf('shared').map((g) => (g.input as string).slice(0, 2)), ['q0', 'q1', 'q2'])
  })

  test('langsmith:// → confident:// → file gives back the LangSmith records', async () => {
    const langsmith = await new LangSmithStandIn().start()
    try {
      const both = { ...env, LANGSMITH_API_KEY: langsmith.apiKey, LANGSMITH_ENDPOINT: langsmith.url }
      const input = join(import.meta.dirname, '..', 'fixtures', 'langsmith', 'kv.jsonl')
      await convert({ input, output: 'langsmith://support-qa', from: 'langsmith', to: 'langsmith', env: both })
      const run = await runCli(['convert', 'langsmith://support-qa', '-o', 'confident://support-qa'], both)
      assert.equal(run.code, 0, run.stderr)
      assert.equal(server.goldensOf('support-qa').length, 3)
      const out = join(dir, 'support-qa.jsonl')
      await convert({ input: 'confident://support-qa', output: out, to: 'langsmith', env: both })
      const records = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown)
      assert.deepEqual(records(out), records(input))
    } finally {
      await langsmith.stop()
    }
  })

  test('--dry-run sends nothing', async () => {
    const input = join(dir, 'dry.json')
    writeFileSync(input, goldens(2))
    const run = await runCli(['convert', input, '-o', 'confident://dry', '--dry-run', '--json'], env)
    assert.equal(run.code, 0, run.stderr)
    assert.deepEqual(JSON.parse(run.stdout).dry_run, { target: 'confident://dry', records: 2, fields: ['input', 'expected_output'], if_exists: 'fail' })
    assert.equal(server.count(), 0)
  })

  test('a missing key is exit 3 naming the variable, before any request', async () => {
    const run = await runCli(['convert', 'confident://x', '-o', join(dir, 'x.json'), '--to', 'deepeval'], { CONFIDENT_BASE_URL: server.url })
    assert.equal(run.code, 3)
    assert.match(run.stderr, /set CONFIDENT_API_KEY/)
    assert.equal(server.count(), 0)
  })

  test('CONFIDENT_REGION picks the US or EU host, before the key\'s prefix; CONFIDENT_BASE_URL goes before both; another region is exit 2 before any request', async () => {
    // The regions' hosts cannot be reached on loopback: the choice is read where it is made, in the client's base.
    for (const [region, key, base] of [
      ['EU', 'confident_us_k', 'https://eu.api.confident-ai.com'],
      ['eu', 'k', 'https://eu.api.confident-ai.com'],
      ['us', 'confident_eu_k', 'https://api.confident-ai.com'],
      [undefined, 'confident_eu_k', 'https://eu.api.confident-ai.com'],
      [undefined, 'k', 'https://api.confident-ai.com'],
    ] as const) {
      const http = confidentHttp({ env: { CONFIDENT_API_KEY: key, ...(region ? { CONFIDENT_REGION: region } : {}) }, timeoutMs: 1000 })
      assert.equal(http.options.base, base, `CONFIDENT_REGION=${region}, key ${key}`)
    }
    const input = join(dir, 'region.json')
    writeFileSync(input, goldens(2))
    const pushed = await convert({ input, output: 'confident://region', to: 'deepeval', env: { ...env, CONFIDENT_REGION: 'eu' } })
    assert.equal(pushed.push?.sent, 2)
    assert.equal(server.goldensOf('region').length, 2)
    const sent = server.count()
    const refused = await runCli(['convert', input, '-o', 'confident://region'], { ...env, CONFIDENT_REGION: 'asia' })
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /CONFIDENT_REGION is US or EU, not "ASIA"/)
    assert.equal(server.count(), sent)
  })
})

describe('confident:// failures', () => {
  test('a refused key is exit 3 naming the variable, never showing the key', async () => {
    const wrong = 'confident_us_wrong_secret'
    const run = await runCli(['convert', 'confident://x', '--to', 'deepeval', '-o', join(dir, 'x.json')], { CONFIDENT_API_KEY: wrong, CONFIDENT_BASE_URL: server.url })
    assert.equal(run.code, 3)
    assert.match(run.stderr, /HTTP 401.*set CONFIDENT_API_KEY/)
    assert.ok(!run.stderr.includes(wrong))
  })

  test('an alias that is not there is exit 3 naming it', async () => {
    const run = await runCli(['convert', 'confident://nowhere', '--to', 'deepeval', '-o', join(dir, 'n.json')], env)
    assert.equal(run.code, 3)
    assert.match(run.stderr, /confident:\/\/nowhere: Confident AI at http:\/\/127\.0\.0\.1:\d+ has no dataset with the alias 'nowhere'/)
  })

  const FAULTS = [
    { what: '429 with Retry-After', fault: { status: 429, retryAfter: '1' }, posts: 2 },
    { what: 'a 503', fault: { status: 503 }, posts: 2 },
    { what: 'a connection cut before the answer', fault: { cut: 'before' as const }, posts: 2 },
    { what: 'a slow answer past the timeout', fault: { delayMs: 3000 }, posts: 2 },
    { what: 'a chunk stored, then answered 500', fault: { applyThen: 500 as const }, posts: 1 },
    { what: 'a chunk stored, then cut', fault: { applyThen: 'cut' as const }, posts: 1 },
  ]
  for (const [i, { what, fault, posts }] of FAULTS.entries()) {
    test(`${what} on a push: each golden lands once`, async () => {
      const input = join(dir, `fault-${i}.json`)
      writeFileSync(input, goldens(5))
      server.faults = [{ route: 'POST /v1/datasets/{alias}', call: 1, fault }]
      const report = await convert({ input, output: `confident://fault-${i}`, to: 'deepeval', env, timeoutMs: 500 })
      assert.equal(report.push?.sent, 5)
      assert.equal(server.count('POST /v1/datasets/{alias}'), posts)
      assert.deepEqual(server.goldensOf(`fault-${i}`), JSON.parse(goldens(5)).map((g: { input: string; expected_output: string }) => ({ input: g.input, expectedOutput: g.expected_output })))
    })
  }

  test('a page cut halfway is read again', async () => {
    const input = join(dir, 'cut-read.json')
    writeFileSync(input, goldens(4))
    await convert({ input, output: 'confident://cut-read', to: 'deepeval', env })
    server.reset()
    server.faults = [{ route: 'GET /v1/datasets/{alias}', call: 1, fault: { cut: 'body' } }]
    const out = join(dir, 'cut-read-back.json')
    await convert({ input: 'confident://cut-read', output: out, to: 'deepeval', env })
    assert.equal(server.count('GET /v1/datasets/{alias}'), 2)
    assert.deepEqual(json(out), json(input))
  })

  test('a push killed at any point and run again leaves each golden exactly once (10 seeds)', async () => {
    const input = join(dir, 'killed.json')
    writeFileSync(input, goldens(350))
    for (let seed = 1; seed <= 10; seed++) {
      const alias = `killed-${seed}`
      server.reset()
      // The seed picks the request the process dies waiting for (the 1st to 4th chunk, or a read), and whether it was applied.
      const route = seed % 5 === 0 ? 'GET /v1/datasets/{alias}' : 'POST /v1/datasets/{alias}'
      const call = 1 + (seed % 4)
      server.faults = [{ route, call: route.startsWith('GET') ? 1 : call, fault: seed % 2 === 0 ? { applyThen: 'hold' } : { delayMs: 20_000 } }]
      const child = startCli(['convert', input, '-o', `confident://${alias}`], env)
      await until(() => server.count(route) >= (route.startsWith('GET') ? 1 : call))
      kill(child.pid)
      await child.done
      server.reset()
      const again = await runCli(['convert', input, '-o', `confident://${alias}`], env)
      assert.equal(again.code, 0, `seed ${seed}: ${again.stderr}`)
      const stored = server.goldensOf(alias)
      assert.equal(stored.length, 350, `seed ${seed}`)
      assert.deepEqual(stored.map((g) => g.input), (JSON.parse(goldens(350)) as { input: string }[]).map((g) => g.input), `seed ${seed}`)
    }
  })
})

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 20))
}
