/**
 * Hostile repositories and URLs, end to end against the loopback server: symlinks out of the
 * repository (absolute, relative, through a chain, to a FIFO that would block any reader), loops,
 * `..` however encoded, a host named `..`, refs, repository names and file names that begin with `-`,
 * a submodule, a file over the size limit, files named like hooks, hooks planted in the mirror and in
 * the user's git configuration, and URLs carrying credentials. None of them may read or write outside
 * the cache, run code or show a token. (parseBlobUrl's refusals are unit-tested in url.test.ts and the
 * basic `..`, link-out and size cases in prefetch.test.ts; here each runs through a whole prefetch.)
 */

import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { after, before, test } from 'node:test'
import { FetchError } from '../../src/errors.ts'
import { prefetchUrls } from '../../src/resolver/index.ts'
import { runCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'
import { tempDir } from '../helpers/temp.ts'

const SECRET = 'SECRET-OUTSIDE-THE-CACHE-7c1f'
const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x', GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }

let fx: Fixture
let outside: string
let sentinel: string
let evil: { main: string; feature: string }
const EVIL = 'https://github.com/evil/repo'

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
}

function put(dir: string, path: string, content: string | Buffer, mode?: number): void {
  mkdirSync(dirname(join(dir, path)), { recursive: true })
  writeFileSync(join(dir, path), content)
  if (mode !== undefined) chmodSync(join(dir, path), mode)
}

/** `github.com/evil/repo` on the server: every trap in one commit, a second commit on a branch named `-evil`. */
function createEvilRepo(root: string): { main: string; feature: string } {
  const work = tempDir('evalferry-evil-')
  git(work, 'init', '-q', '-b', 'main')
  const hook = `#!/bin/sh\necho ran "$0" >> ${sentinel}\n`
  put(work, 'ok.txt', 'harmless\n')
  symlinkSync(join(outside, 'secret.txt'), join(work, 'abs-link'))
  symlinkSync(join(outside, 'fifo'), join(work, 'abs-fifo'))
  symlinkSync('/etc/passwd', join(work, 'etc-passwd'))
  symlinkSync('../../x', join(work, 'up-link'))
  mkdirSync(join(work, 'deep'))
  symlinkSync('../../outside/secret.txt', join(work, 'deep', 'up'))
  symlinkSync('chain-b', join(work, 'chain-a'))
  symlinkSync('deep/up', join(work, 'chain-b'))
  symlinkSync('loop-b', join(work, 'loop-a'))
  symlinkSync('loop-a', join(work, 'loop-b'))
  symlinkSync('deep', join(work, 'dir-link'))
  put(work, '--output=pwned.txt', 'a file named like an option\n')
  put(work, '-h', 'another\n')
  put(work, 'big.bin', Buffer.alloc(300_000, 7))
  for (const name of ['hooks/post-checkout', 'hooks/post-merge', '.githooks/post-checkout', '.husky/post-merge', 'hooks/reference-transaction']) put(work, name, hook, 0o755)
  put(work, '.gitattributes', '* filter=evil diff=evil\n')
  put(work, '.gitmodules', `[submodule "sub"]\n\tpath = sub\n\turl = --upload-pack=touch ${sentinel}\n`)
  git(work, 'add', '-A')
  git(work, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},sub`)
  git(work, 'commit', '-q', '-m', 'traps')
  const main = git(work, 'rev-parse', 'HEAD')
  put(work, 'ok.txt', 'on the -evil branch\n')
  git(work, 'commit', '-q', '-am', 'second')
  const feature = git(work, 'rev-parse', 'HEAD')
  git(work, 'update-ref', 'refs/heads/-evil', feature)
  git(work, 'update-ref', 'refs/heads/--upload-pack=evil', main)
  git(work, 'reset', '-q', '--hard', main)
  for (const bare of [join(root, 'github.com', 'evil', 'repo.git'), join(root, 'bb.evil', 'scm', 'evil', 'repo.git')]) {
    mkdirSync(dirname(bare), { recursive: true })
    git(root, 'clone', '-q', '--mirror', work, bare)
  }
  rmSync(work, { recursive: true, force: true })
  return { main, feature }
}

before(async () => {
  fx = await startFixture({}, 4)
  outside = join(fx.dir, 'outside')
  mkdirSync(outside)
  writeFileSync(join(outside, 'secret.txt'), SECRET)
  execFileSync('mkfifo', [join(outside, 'fifo')])
  sentinel = join(outside, 'sentinel')
  evil = createEvilRepo(fx.server.root)
})
after(() => fx.cleanup())

/** Every file under `dir`, path to content (symlinks listed, never followed). */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>()
  const walk = (sub: string): void => {
    for (const name of readdirSync(join(dir, sub))) {
      const rel = sub ? `${sub}/${name}` : name
      const info = statSync(join(dir, rel), { throwIfNoEntry: false })
      if (!info) out.set(rel, 'dangling')
      else if (info.isDirectory()) walk(rel)
      else if (info.isFIFO()) out.set(rel, 'fifo')
      else out.set(rel, `${info.mtimeMs}:${readFileSync(join(dir, rel), 'latin1')}`)
    }
  }
  walk('')
  return out
}

function allText(dir: string): string {
  return [...snapshot(dir).values()].join('\n')
}

interface HostileCase {
  name: string
  url: string
  options?: Record<string, unknown>
  /** The error expected (code and message), or the content served. */
  expect: { code: string; message: RegExp; noRequest?: boolean } | { content: string | Buffer }
}

const enc = (s: string) => s.split('/').map(encodeURIComponent).join('/')
const CASES = (): HostileCase[] => {
  const viaGit = { rawFileLimit: 0 }
  const out = { code: 'E_UNSAFE', message: /outside the repository/ }
  return [
    { name: 'absolute symlink to a file outside', url: `${EVIL}/blob/main/abs-link`, options: viaGit, expect: out },
    { name: 'absolute symlink to a FIFO outside (a read would hang)', url: `${EVIL}/blob/main/abs-fifo`, options: viaGit, expect: out },
    { name: 'symlink to /etc/passwd', url: `${EVIL}/blob/main/etc-passwd`, options: viaGit, expect: out },
    { name: 'symlink ../../x', url: `${EVIL}/blob/main/up-link`, options: viaGit, expect: out },
    { name: 'symlink in a directory climbing out', url: `${EVIL}/blob/main/deep/up`, options: viaGit, expect: out },
    { name: 'a chain of symlinks ending outside', url: `${EVIL}/blob/main/chain-a`, options: viaGit, expect: out },
    { name: 'a symlink loop', url: `${EVIL}/blob/main/loop-a`, options: viaGit, expect: { code: 'E_UNSAFE', message: /too many levels of symlinks/ } },
    { name: 'a path through a symlinked directory', url: `${EVIL}/blob/main/dir-link/up`, options: viaGit, expect: { code: 'E_FETCH', message: /no file 'dir-link\/up'/ } },
    // With the tree in the mirror (from the cases above), a symlink never goes to the single-file API.
    { name: 'absolute symlink, single-file API allowed, tree known', url: `${EVIL}/blob/${'MAIN'}/abs-link`, expect: out },
    { name: '.. in the path', url: `${EVIL}/blob/main/../../../outside/secret.txt`, expect: { code: 'E_UNSAFE', message: /'\.\.' in the path is refused/, noRequest: true } },
    { name: '%2e%2e in the path', url: `${EVIL}/blob/main/%2e%2e/%2e%2e/outside/secret.txt`, expect: { code: 'E_UNSAFE', message: /refused/, noRequest: true } },
    { name: '%2E%2e and .%2e mixed', url: `${EVIL}/blob/main/a/%2E%2e/.%2e/x`, expect: { code: 'E_UNSAFE', message: /refused/, noRequest: true } },
    { name: '..%2f..%2f (an encoded slash)', url: `${EVIL}/blob/main/..%2f..%2foutside%2fsecret.txt`, expect: { code: 'E_UNSAFE', message: /slash or NUL/, noRequest: true } },
    { name: 'a NUL byte', url: `${EVIL}/blob/main/ok.txt%00.png`, expect: { code: 'E_UNSAFE', message: /slash or NUL/, noRequest: true } },
    { name: 'an absolute path', url: `${EVIL}/blob/main//etc/passwd`, expect: { code: 'E_UNSAFE', message: /absolute path/, noRequest: true } },
    { name: '%252e%252e is a file name, not a climb', url: `${EVIL}/blob/main/%252e%252e/secret.txt`, options: viaGit, expect: { code: 'E_FETCH', message: /no file '%2e%2e\/secret\.txt'/ } },
    { name: 'a host named ..', url: 'https://../evil/repo/-/blob/main/ok.txt', expect: { code: 'E_REF', message: /not a blob URL/, noRequest: true } },
    { name: 'a host named .', url: 'https://./evil/repo/-/blob/main/ok.txt', expect: { code: 'E_REF', message: /not a blob URL/, noRequest: true } },
    { name: 'an owner beginning with -', url: 'https://github.com/--upload-pack=touch/repo/blob/main/ok.txt', expect: { code: 'E_UNSAFE', message: /may not begin with '-'/, noRequest: true } },
    { name: 'a repository beginning with -', url: 'https://github.com/evil/-c%20core.hooksPath=x/blob/main/ok.txt', expect: { code: 'E_UNSAFE', message: /may not begin with '-'/, noRequest: true } },
    { name: 'a branch named -evil', url: `${EVIL}/blob/-evil/ok.txt`, options: viaGit, expect: { content: 'on the -evil branch\n' } },
    { name: 'a branch named --upload-pack=evil', url: `${EVIL}/blob/--upload-pack=evil/ok.txt`, options: viaGit, expect: { content: 'harmless\n' } },
    { name: 'a ref --upload-pack=touch pwned that does not exist', url: `${EVIL}/blob/${enc('--upload-pack=touch pwned')}/ok.txt`, expect: { code: 'E_REF', message: /no branch or tag/ } },
    { name: 'a ref --exec=touch pwned (Bitbucket Server ?at=)', url: `https://bb.evil/projects/EVIL/repos/repo/browse/ok.txt?at=${encodeURIComponent('--exec=touch pwned')}`, expect: { code: 'E_REF', message: /no branch or tag/ } },
    { name: 'a ref -evil (Bitbucket Server ?at=)', url: 'https://bb.evil/projects/EVIL/repos/repo/browse/ok.txt?at=-evil', options: viaGit, expect: { content: 'on the -evil branch\n' } },
    { name: 'a file named --output=pwned.txt', url: `${EVIL}/blob/main/${enc('--output=pwned.txt')}`, options: viaGit, expect: { content: 'a file named like an option\n' } },
    { name: 'a file named -h', url: `${EVIL}/blob/main/-h`, options: viaGit, expect: { content: 'another\n' } },
    { name: 'a submodule', url: `${EVIL}/blob/main/sub`, options: viaGit, expect: { code: 'E_FETCH', message: /is a submodule, not a file/ } },
    { name: 'over the size limit, through git', url: `${EVIL}/blob/main/big.bin`, options: { ...viaGit, maxFileBytes: 100_000 }, expect: { code: 'E_UNSAFE', message: /300000 bytes is over the size limit of 100000/ } },
    { name: 'over the size limit, through the single-file API', url: `${EVIL}/blob/${'MAIN'}/big.bin`, options: { maxFileBytes: 100_000 }, expect: { code: 'E_UNSAFE', message: /over the size limit of 100000/ } },
    { name: 'a hook script, as a file', url: `${EVIL}/blob/main/hooks/post-checkout`, options: viaGit, expect: { content: `#!/bin/sh\necho ran "$0" >> ${sentinel}\n` } },
    { name: 'a .githooks script, through the single-file API', url: `${EVIL}/blob/${'MAIN'}/.githooks/post-checkout`, expect: { content: `#!/bin/sh\necho ran "$0" >> ${sentinel}\n` } },
  ]
}

test('hostile repositories and URLs: refused or served as plain files, nothing outside the cache read or written, no code run', { timeout: 60_000 }, async (t) => {
  const cache = fx.newCache()
  const before = snapshot(outside)
  const cwdBefore = readdirSync(process.cwd())
  const hosts = [...fx.server.hostSpecs(), `bb.evil=${fx.server.url}/bb.evil,type=bitbucket-server`]
  const trace = join(fx.dir, 'hostile-trace.log')
  let refused = 0
  let served = 0
  const cases = CASES()
  for (const c of cases) {
    const url = c.url.replace('MAIN', evil.main)
    const since = fx.server.requests.length
    const began = Date.now()
    const run = prefetchUrls([url], { cacheDir: cache, hosts, env: { GIT_TRACE: trace }, timeoutSeconds: 5, ...c.options })
    if ('content' in c.expect) {
      const result = await run
      const local = result.entries[0]!.local_path
      assert.ok(local.startsWith(`${cache}/`), `${c.name}: ${local}`)
      assert.deepEqual(readFileSync(local), Buffer.from(c.expect.content), c.name)
      assert.equal(statSync(local).mode & 0o111, 0, `${c.name}: stored without execute permission`)
      served++
    } else {
      const { code, message, noRequest } = c.expect
      await assert.rejects(run, (e: unknown) => {
        assert.ok(e instanceof FetchError, `${c.name}: ${String(e)}`)
        assert.equal(e.code, code, `${c.name}: ${e.message}`)
        assert.match(e.message, message, c.name)
        assert.equal(e.exitCode, 3)
        return true
      })
      if (noRequest) assert.equal(fx.server.requests.length, since, `${c.name}: refused before any request`)
      refused++
    }
    assert.ok(Date.now() - began < 15_000, `${c.name}: no hang`)
  }
  // Nothing outside the cache was written or changed, the FIFO was never opened (it would have hung),
  // no hook ran, nothing landed in the working directory or beside the cache, and no secret was copied in.
  assert.deepEqual(snapshot(outside), before)
  assert.ok(!existsSync(sentinel), 'no hook or injected option ran')
  assert.deepEqual(readdirSync(process.cwd()), cwdBefore)
  assert.ok(!existsSync(join(fx.dir, 'evil')), 'a host named .. wrote nothing beside the cache')
  assert.ok(!allText(cache).includes(SECRET), 'no content from outside in the cache')
  assert.ok(!existsSync(join(cache, 'github.com', 'evil', 'repo', 'git', 'hooks')), 'the mirror has no hooks directory')
  const evilDir = join(cache, 'github.com', 'evil', 'repo')
  assert.deepEqual(readdirSync(join(evilDir, 'tmp')), [])
  assert.ok(!existsSync(join(evilDir, 'commits', evil.main, 'big.bin')), 'nothing of the refused file is kept')
  const written = [...snapshot(cache).keys(), ...readdirSync(process.cwd())].filter((p) => /(^|\/)pwned(\.txt)?$/.test(p))
  assert.deepEqual(written, [], 'no file written by an option-shaped name taken as an option')
  // Refs and file names from the URLs reach git only after --end-of-options or --, never as options.
  const traced = readFileSync(trace, 'utf8')
  assert.ok(traced.split('\n').filter((l) => /built-in: git fetch .*--end-of-options origin [0-9a-f]{40}/.test(l)).length >= 2, 'fetches were traced')
  for (const line of traced.split('\n').filter((l) => /trace: (built-in|exec|run_command)/.test(l))) {
    assert.ok(!/ '?--upload-pack|'?--output=|'?--exec=/.test(line.replace(/ -- .*$/, '').replace(/--end-of-options.*$/, '')), `option-shaped argument before -- in: ${line}`)
  }
  t.diagnostic(`hostile inputs: ${cases.length} (${refused} refused, ${served} served as plain files inside the cache); outside files unchanged, FIFO never opened, no hook ran`)
})

test('hooks never run: not from the fetched files, the mirror\'s hooks directory, or the user\'s core.hooksPath', { timeout: 60_000 }, async (t) => {
  // A user configuration that would run a hook for every git command that has one.
  const home = join(fx.dir, 'evil-home')
  const hooks = join(home, 'hooks')
  const names = ['post-checkout', 'post-merge', 'reference-transaction', 'pre-auto-gc', 'post-index-change', 'fsmonitor-watchman', 'push-to-checkout']
  for (const name of names) put(hooks, name, `#!/bin/sh\necho "$0" >> ${sentinel}\n`, 0o755)
  writeFileSync(join(home, '.gitconfig'), `[core]\n\thooksPath = ${hooks}\n[gc]\n\tauto = 1\n`)
  // The control: with that configuration a plain clone does run its hooks.
  const control = join(fx.dir, 'control-clone')
  execFileSync('git', ['clone', '-q', join(fx.server.root, 'github.com', 'evil', 'repo.git'), control], { env: { PATH: process.env.PATH, HOME: home } })
  assert.ok(existsSync(sentinel), 'the planted configuration is live')
  rmSync(sentinel)

  const cache = fx.newCache()
  const hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  const env = { HOME: home, XDG_CONFIG_HOME: home }
  const first = await runCli(['resolve', `${EVIL}/blob/main/hooks/post-checkout`, '--cache-dir', cache, ...hostArgs], env)
  assert.equal(first.code, 0, first.stderr)
  // Hooks planted in the mirror itself, then a fetch of another commit through it.
  const mirrorHooks = join(cache, 'github.com', 'evil', 'repo', 'git', 'hooks')
  for (const name of names) put(mirrorHooks, name, `#!/bin/sh\necho "$0" >> ${sentinel}\n`, 0o755)
  const fetchesBefore = fx.server.requests.filter((r) => r.command === 'fetch').length
  const second = await runCli(['prefetch', writeDataset(AT_EVIL.map((p) => `${EVIL}/blob/-evil/${p}`)), '--cache-dir', cache, ...hostArgs], env)
  assert.equal(second.code, 0, second.stderr)
  assert.ok(fx.server.requests.filter((r) => r.command === 'fetch').length > fetchesBefore, 'the second run fetched through the planted mirror')
  assert.ok(!existsSync(sentinel), `a hook ran: ${existsSync(sentinel) ? readFileSync(sentinel, 'utf8') : ''}`)
  t.diagnostic(`hook scripts planted: ${names.length} in core.hooksPath, ${names.length} in the mirror, ${AT_EVIL.length + 1} files fetched, 6 of them hook scripts; runs: 2; hooks run: 0 (control clone: ran)`)
})

// More files than the single-file API is used for: the second run goes through git and the mirror.
const AT_EVIL = ['ok.txt', '-h', '--output=pwned.txt', 'hooks/post-checkout', 'hooks/post-merge', 'hooks/reference-transaction', '.githooks/post-checkout', '.husky/post-merge', '.gitattributes', '.gitmodules']

function writeDataset(urls: string[]): string {
  const path = join(fx.dir, `dataset-${Math.random().toString(16).slice(2)}.yaml`)
  writeEvalcaseDataset(path, urls)
  return path
}

test('URLs with credentials are refused with the secret masked; the token shows in no output, trace, manifest or cache file', { timeout: 60_000 }, async (t) => {
  const tokens = ['ghp_UrlT0kenOne111111', 'glpat-UrlT0kenTwo2222', 'bbT0kenThree33333333', 'ghp_HostSpecT0ken4444']
  const [one, two, three, four] = tokens as [string, string, string, string]
  const good = blobUrl(fx.repos[0]!, 'main', 'data/file-1.txt')
  const urls = [
    `https://x-access-token:${one}@github.com/acme/widgets/blob/main/data/file-2.txt`,
    `https://${two}@gitlab.com/group/subgroup/project/-/blob/main/data/file-1.txt`,
    `https://user:${three}@bitbucket.org/workspace/repo/src/main/data/file-1.txt`,
    good,
  ]
  const dataset = writeDataset(urls)
  const cache = fx.newCache()
  const manifest = join(fx.dir, 'cred-manifest.json')
  const trace = join(fx.dir, 'cred-trace.log')
  const hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  const since = fx.server.requests.length
  const runs = [
    await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--manifest', manifest], { GIT_TRACE: trace, GIT_CURL_VERBOSE: '1' }),
    await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--json'], { GIT_TRACE: trace }),
    await runCli(['resolve', urls[0]!, urls[1]!, '--cache-dir', cache, ...hostArgs], { GIT_TRACE: trace }),
  ]
  for (const run of runs) {
    assert.equal(run.code, 3, run.stderr)
    assert.match(run.stderr, /credentials in a URL are refused/)
    assert.match(run.stderr, /https:\/\/\*\*\*@/)
  }
  const hostSpec = await runCli(['resolve', good, '--cache-dir', cache, '--host', `github.com=http://u:${four}@127.0.0.1:9/github.com`])
  assert.equal(hostSpec.code, 2)
  assert.match(hostSpec.stderr, /put credentials in the environment/)
  runs.push(hostSpec)
  // The good URL was fetched (git ran, traced), and no request carried a token in its URL or headers.
  assert.ok(existsSync(trace) && /ls-remote|fetch/.test(readFileSync(trace, 'utf8')), 'git ran for the good URL')
  const requests = fx.server.requests.slice(since)
  assert.ok(requests.length > 0)
  const seen = [readFileSync(trace, 'utf8'), allText(cache), existsSync(manifest) ? readFileSync(manifest, 'utf8') : '', ...runs.flatMap((r) => [r.stdout, r.stderr]), JSON.stringify(requests.map((r) => [r.path, r.query, r.headers]))].join('\n')
  for (const token of tokens) assert.ok(!seen.includes(token), `token ${token.slice(0, 8)}… leaked`)
  t.diagnostic(`URLs with credentials: ${urls.length - 1} in a dataset (3 runs) and 1 --host base; all refused, tokens found in 0 of: stdout, stderr, GIT_TRACE, manifest, cache files, server requests`)
})

test('URLs with a token in their query are refused naming the parameter, never its value; the token shows in no output, manifest or request', { timeout: 60_000 }, async () => {
  const tokens = ['GHSAT0AAAAAQueryT0kenOne1111', 'glpat-QueryT0kenTwo22222', 'glpat-QueryT0kenThree333', 'glpat-EncodedNameT0ken444']
  const [one, two, three, four] = tokens as [string, string, string, string]
  const good = blobUrl(fx.repos[0]!, 'main', 'data/file-1.txt')
  const urls = [
    // GitHub's private raw links, GitLab's personal and OAuth tokens, and a name written percent-encoded.
    `https://raw.githubusercontent.com/acme/widgets/main/data/file-2.txt?token=${one}`,
    `https://gitlab.com/group/subgroup/project/-/blob/main/data/file-1.txt?private_token=${two}`,
    `https://gitlab.com/group/subgroup/project/-/raw/main/data/file-2.txt?ref_type=heads&access_token=${three}#L1`,
    `https://github.com/acme/widgets/blob/main/data/file-3.txt?plain=1&Private%5FToken=${four}`,
    good,
  ]
  const dataset = writeDataset(urls)
  const cache = fx.newCache()
  const manifest = join(fx.dir, 'query-manifest.json')
  const hostArgs = fx.server.hostSpecs().flatMap((h) => ['--host', h])
  const since = fx.server.requests.length
  const withManifest = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--manifest', manifest])
  const json = await runCli(['prefetch', dataset, '--cache-dir', cache, ...hostArgs, '--json'])
  const resolved = await runCli(['resolve', urls[0]!, urls[2]!, good, '--cache-dir', cache, ...hostArgs, '--json'])
  for (const run of [withManifest, json, resolved]) {
    assert.equal(run.code, 3, run.stderr)
    assert.match(run.stderr, /credentials in a URL are refused \(its query parameter 'token'\)/)
    assert.match(run.stderr, /\?token=\*\*\*: /)
    assert.match(run.stderr, /&access_token=\*\*\*#L1: credentials in a URL are refused \(its query parameter 'access_token'\)/)
  }
  for (const name of ['private_token', 'Private_Token']) assert.match(withManifest.stderr, new RegExp(`query parameter '${name}'`))
  const report = JSON.parse(json.stdout) as { entries: { url: string }[]; errors: { url: string; message: string }[] }
  assert.deepEqual(report.entries.map((e) => e.url), [good])
  assert.deepEqual(report.errors.map((e) => e.url), [
    'https://raw.githubusercontent.com/acme/widgets/main/data/file-2.txt?token=***',
    'https://gitlab.com/group/subgroup/project/-/blob/main/data/file-1.txt?private_token=***',
    'https://gitlab.com/group/subgroup/project/-/raw/main/data/file-2.txt?ref_type=heads&access_token=***#L1',
    'https://github.com/acme/widgets/blob/main/data/file-3.txt?plain=1&Private%5FToken=***',
  ])
  for (const e of report.errors) assert.ok(e.message.startsWith(`${e.url}: credentials in a URL are refused (its query parameter '`), e.message)
  assert.deepEqual((JSON.parse(resolved.stdout) as { entries: { url: string }[] }).entries.map((e) => e.url), [good])
  const requests = fx.server.requests.slice(since)
  assert.ok(requests.length > 0, 'the good URL was fetched')
  const seen = [allText(cache), existsSync(manifest) ? readFileSync(manifest, 'utf8') : '', ...[withManifest, json, resolved].flatMap((r) => [r.stdout, r.stderr]), JSON.stringify(requests.map((r) => [r.path, r.query, r.headers]))].join('\n')
  for (const token of tokens) assert.ok(!seen.includes(token), `token ${token.slice(0, 8)}… leaked`)
})
