import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { runCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { type LoggedRequest, startGitServer } from '../helpers/git-server.ts'
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

test('a token the server refuses is told apart from no token: the message names its variable, never its value', { timeout: 60_000 }, async () => {
  const wrong = 'ghp_ExpiredT0kenValue9876543210'
  const url = blobUrl(fx.repos[0]!, 'main', 'data/file-1.txt')
  const run = await runCli(['resolve', url, '--cache-dir', fx.newCache(), ...hostArgs], { GH_TOKEN: wrong }, 45_000)
  assert.equal(run.code, 3, run.stderr)
  assert.match(run.stderr, /github\.com\/acme\/widgets: the server refused the token from GH_TOKEN \(expired, revoked, or without access to this repository\)/)
  assert.doesNotMatch(run.stderr, /asks for credentials/)
  assert.ok(!run.stderr.includes(wrong) && !run.stdout.includes(wrong), 'the token in the output')
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

// A distinct secret in every variable a token may come from.
const EVERY_TOKEN = {
  GH_TOKEN: 'ghp_GhT0kenNeverSent11111',
  GITHUB_TOKEN: 'ghp_GithubT0kenNeverSent2',
  GH_ENTERPRISE_TOKEN: 'ghe_EnterpriseT0kenNever3',
  GITHUB_ENTERPRISE_TOKEN: 'ghe_GithubEnterpriseNever7',
  GITLAB_TOKEN: 'glpat-SECRET123NeverSent4',
  BITBUCKET_TOKEN: 'bbT0kenNeverSent555555555',
  BITBUCKET_EMAIL: 'me@example.com',
  BITBUCKET_API_TOKEN: 'bbApiT0kenNeverSent66666',
}

/** The credentials a request carried, however sent. */
const credentialsOf = (r: LoggedRequest): string[] => [r.headers.authorization, r.headers['private-token']].filter((h) => h !== undefined).map(String)

test('an unknown host read as GitLab from its /-/blob/ path, over plain http, is sent no token; configured with --host, it is sent GITLAB_TOKEN', { timeout: 60_000 }, async (t) => {
  // A server that asks for no token, so that the file arrives without one.
  const open = await startGitServer(fx.server.root)
  t.after(() => open.close())
  const gitlab = fx.repos[1]!
  const url = `${open.url}/${gitlab.repository}/-/blob/main/docs/with%20space.md`

  const run = await runCli(['resolve', url, '--cache-dir', fx.newCache()], EVERY_TOKEN)
  assert.equal(run.code, 0, run.stderr)
  assert.deepEqual(readFileSync(run.stdout.trim()), gitlab.files.get('docs/with space.md'))
  const unconfigured = open.requests.splice(0)
  assert.ok(unconfigured.some((r) => r.kind === 'git'), 'git was asked')
  assert.ok(unconfigured.some((r) => r.path.startsWith('/api/v4/')), 'the single-file API was asked')
  for (const r of unconfigured) assert.deepEqual(credentialsOf(r), [], `${r.method} ${r.path} carried credentials`)
  const sent = JSON.stringify(unconfigured.map((r) => [r.path, r.query, r.headers]))
  for (const secret of Object.values(EVERY_TOKEN)) assert.ok(!sent.includes(secret), `${secret.slice(0, 8)}… was sent`)

  const host = url.split('/')[2]!
  const configured = await runCli(['resolve', url, '--cache-dir', fx.newCache(), '--host', `${host}=${open.url},type=gitlab`], EVERY_TOKEN)
  assert.equal(configured.code, 0, configured.stderr)
  const requests = open.requests.splice(0)
  assert.ok(requests.length > 0)
  for (const r of requests) {
    const [credential] = credentialsOf(r)
    if (r.kind === 'git') assert.equal(credential, `Basic ${Buffer.from(`oauth2:${EVERY_TOKEN.GITLAB_TOKEN}`).toString('base64')}`, `${r.method} ${r.path}`)
    else assert.equal(credential, EVERY_TOKEN.GITLAB_TOKEN, `${r.method} ${r.path}`)
  }
})
