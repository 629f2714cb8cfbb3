import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { runCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'

const TOKEN = 'ghp_S3cr3tT0kenValue0123456789'

let fx: Fixture
let hostArgs: string[]
let dataset: string
before(async () => {
  fx = await startFixture({ requireToken: TOKEN }, 10)
  hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  dataset = join(fx.dir, 'cases.yaml')
  writeEvalcaseDataset(dataset, fx.repos.flatMap((r) => Array.from({ length: 10 }, (_, i) => blobUrl(r, 'main', `data/file-${i}.txt`))))
})
after(() => fx.cleanup())

function allFileText(dir: string): string {
  let text = ''
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    text += statSync(path).isDirectory() ? allFileText(path) : readFileSync(path, 'latin1')
  }
  return text
}

test('a server that asks for credentials fails the run fast, with a message saying which token to set', { timeout: 60_000 }, async () => {
  const run = await runCli(['prefetch', dataset, '--cache-dir', fx.newCache(), ...hostArgs], {}, 45_000)
  assert.equal(run.signal, null, 'no hang')
  assert.equal(run.code, 3)
  assert.match(run.stderr, /github\.com\/acme\/widgets: the server asks for credentials; set GH_TOKEN/)
  assert.match(run.stderr, /GITLAB_TOKEN/)
  assert.ok(run.ms < 30_000, `${run.ms} ms`)
})

test('tokens reach the server as a header only: never in an argument list, a URL, the output or the cache', { timeout: 60_000 }, async () => {
  const cache = fx.newCache()
  const trace = join(fx.dir, 'git-trace.log')
  const start = fx.server.requests.length
  const env = { GH_TOKEN: TOKEN, GITLAB_TOKEN: TOKEN, BITBUCKET_TOKEN: TOKEN, GIT_TRACE: trace }
  const run = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--json'], env)
  assert.equal(run.code, 0, run.stderr)
  const seen = fx.server.requests.slice(start)
  assert.ok(seen.length > 0)
  for (const r of seen) {
    assert.equal(r.status !== 401, true, `${r.method} ${r.path} was refused`)
    assert.ok(!`${r.path}?${r.query}`.includes(TOKEN), 'token in a URL')
    const basic = String(r.headers.authorization ?? '').replace(/^Basic /, '')
    assert.match(Buffer.from(basic, 'base64').toString(), new RegExp(`:${TOKEN}$`))
  }
  // GIT_TRACE logs the argument list of every git process, the remote helpers included.
  const traced = readFileSync(trace, 'utf8')
  assert.match(traced, /ls-remote/)
  assert.match(traced, /git-remote-http|remote-http/)
  assert.ok(!traced.includes(TOKEN), 'token in a git argument list')
  assert.ok(!run.stdout.includes(TOKEN) && !run.stderr.includes(TOKEN), 'token in the output')
  assert.ok(!allFileText(cache).includes(TOKEN), 'token written to the cache')
})
