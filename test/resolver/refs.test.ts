import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FetchError } from '../../src/errors.ts'
import { credentialFor } from '../../src/resolver/credentials.ts'
import { cloneUrl, hostTable, rawFileUrl } from '../../src/resolver/hosts.ts'
import { type ResolvedRef, isFullSha, matchRef, parseLsRemote } from '../../src/resolver/refs.ts'
import { parseBlobUrl } from '../../src/resolver/url.ts'

const pick = (m: ResolvedRef) => [m.ref, m.commit, m.path, m.kind]

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)
const C = 'c'.repeat(40)
const T = 'd'.repeat(40)

const LISTING = parseLsRemote(
  [`${A}\tHEAD`, `${A}\trefs/heads/main`, `${B}\trefs/heads/feature/x/y`, `${T}\trefs/tags/v1.0`, `${A}\trefs/tags/v1.0^{}`, `${C}\trefs/heads/dup`, `${C}\trefs/tags/dup`, `${B}\trefs/pull/1/head`].join('\n'),
)

test('ls-remote output: peeled tags replace the tag object', () => {
  assert.equal(LISTING['refs/tags/v1.0'], A)
  assert.equal(LISTING['refs/heads/feature/x/y'], B)
})

test('the one ref that prefixes <ref>/<path> is taken, slashes and all', () => {
  const cases: [string[], string, string, string, string][] = [
    [['main', 'a', 'b.txt'], 'main', A, 'a/b.txt', 'branch'],
    [['feature', 'x', 'y', 'dir', 'f.md'], 'feature/x/y', B, 'dir/f.md', 'branch'],
    [['v1.0', 'f.md'], 'v1.0', A, 'f.md', 'tag'],
    [['HEAD', 'f.md'], 'HEAD', A, 'f.md', 'branch'],
    [['refs', 'heads', 'main', 'f.md'], 'refs/heads/main', A, 'f.md', 'branch'],
    [[C, 'f.md'], C, C, 'f.md', 'commit'],
  ]
  for (const [segments, ref, commit, path, kind] of cases) {
    const m = matchRef('u', segments, LISTING)
    assert.deepEqual([m.ref, m.commit, m.path, m.kind], [ref, commit, path, kind], segments.join('/'))
  }
  // A full SHA needs no listing at all.
  assert.equal(matchRef('u', [B, 'x'], undefined).commit, B)
  assert.equal(matchRef('u', ['x'], LISTING, 'refs/heads/main').commit, A)
  // A ref written apart (an encoded `feature%2Fx%2Fy`) is looked up as a branch or tag name.
  assert.deepEqual(pick(matchRef('u', ['dir', 'f.md'], LISTING, 'feature/x/y')), ['feature/x/y', B, 'dir/f.md', 'branch'])
})

test('a full SHA is recognised in upper case too, and used in lower case', () => {
  assert.ok(isFullSha('ABCDEF0123456789ABCDEF0123456789ABCDEF01'))
  assert.deepEqual(pick(matchRef('u', [C.toUpperCase(), 'f.md'], undefined)), [C.toUpperCase(), C, 'f.md', 'commit'])
  assert.equal(matchRef('u', ['f.md'], undefined, B.toUpperCase()).commit, B)
})

test('an ambiguous or missing ref is E_REF naming the candidates', () => {
  assert.throws(
    () => matchRef('https://h/o/r/blob/dup/f', ['dup', 'f'], LISTING),
    (e: unknown) => e instanceof FetchError && e.code === 'E_REF' && /ambiguous/.test(e.message) && e.message.includes('refs/heads/dup') && e.message.includes('refs/tags/dup'),
  )
  assert.throws(
    () => matchRef('https://h/o/r/blob/nope/f', ['nope', 'f'], LISTING),
    (e: unknown) => e instanceof FetchError && e.code === 'E_REF' && /candidates: .*main.*feature\/x\/y/.test(e.message),
  )
  assert.throws(() => matchRef('u', ['abc1234', 'f'], LISTING), /abbreviated SHAs/)
})

test('a URL that says a branch or a tag is matched against those alone', () => {
  const listed = parseLsRemote([`${A}\trefs/heads/dup`, `${B}\trefs/tags/dup`].join('\n'))
  assert.throws(() => matchRef('u', ['dup', 'f.md'], listed), /ambiguous/)
  assert.deepEqual(pick(matchRef('u', ['dup', 'f.md'], listed, undefined, 'tags')), ['dup', B, 'f.md', 'tag'])
  assert.deepEqual(pick(matchRef('u', ['dup', 'f.md'], listed, undefined, 'heads')), ['dup', A, 'f.md', 'branch'])
  assert.throws(() => matchRef('u', ['f.md'], parseLsRemote(`${A}\trefs/heads/dup`), 'dup', 'tags'), /no branch or tag/)
})

test('refs named like Object.prototype members are refs like any other, and only when listed', () => {
  // Not listed: the inherited property is no ref.
  for (const name of ['constructor', 'toString', '__proto__']) {
    assert.throws(() => matchRef('u', ['f.md'], LISTING, name), (e: unknown) => e instanceof FetchError && e.code === 'E_REF' && /no branch or tag/.test(e.message), name)
  }
  const listed = parseLsRemote([`${A}\trefs/heads/main`, `${B}\trefs/heads/constructor`, `${C}\trefs/tags/toString`, `${T}\thasOwnProperty`].join('\n'))
  assert.deepEqual(listed, { 'refs/heads/main': A, 'refs/heads/constructor': B, 'refs/tags/toString': C, hasOwnProperty: T })
  assert.deepEqual(pick(matchRef('u', ['f.md'], listed, 'constructor')), ['constructor', B, 'f.md', 'branch'])
  assert.deepEqual(pick(matchRef('u', ['f.md'], listed, 'toString')), ['toString', C, 'f.md', 'tag'])
  assert.deepEqual(pick(matchRef('u', ['constructor', 'f.md'], listed)), ['constructor', B, 'f.md', 'branch'])
})

test('clone and single-file URLs per host type', () => {
  const hosts = hostTable(['bb.corp=https://bb.corp,type=bitbucket-server'], {})
  const sha = A
  assert.equal(cloneUrl(hosts.get('gitlab.com')!, 'g/s/p'), 'https://gitlab.com/g/s/p.git')
  assert.equal(cloneUrl(hosts.get('bb.corp')!, 'PRJ/tool'), 'https://bb.corp/scm/prj/tool.git')
  assert.equal(rawFileUrl(hosts.get('github.com')!, 'o/r', sha, 'a b/c.txt'), `https://raw.githubusercontent.com/o/r/${sha}/a%20b/c.txt`)
  assert.equal(rawFileUrl(hosts.get('gitlab.com')!, 'g/s/p', sha, 'a/b.txt'), `https://gitlab.com/api/v4/projects/g%2Fs%2Fp/repository/files/a%2Fb.txt/raw?ref=${sha}`)
  assert.equal(rawFileUrl(hosts.get('bitbucket.org')!, 'w/r', sha, 'a/b.txt'), `https://api.bitbucket.org/2.0/repositories/w/r/src/${sha}/a/b.txt`)
  assert.equal(rawFileUrl(hosts.get('bb.corp')!, 'PRJ/tool', sha, 'a.txt'), `https://bb.corp/rest/api/1.0/projects/PRJ/repos/tool/raw/a.txt?at=${sha}`)
})

test('credentials come from the variables of each host type', () => {
  const hosts = hostTable(['ghe.io=https://ghe.io,type=github'], {})
  const env = { GH_TOKEN: 'gh-secret', GH_ENTERPRISE_TOKEN: 'ghe-secret', GITLAB_TOKEN: 'gl-secret', BITBUCKET_TOKEN: 'bb-secret' }
  const gh = credentialFor(hosts.get('github.com')!, env)!
  assert.equal(Buffer.from(gh.gitHeaders[0]!.replace('Authorization: Basic ', ''), 'base64').toString(), 'x-access-token:gh-secret')
  assert.deepEqual(credentialFor(hosts.get('ghe.io')!, env)!.secrets, ['ghe-secret'])
  assert.equal(credentialFor(hosts.get('gitlab.com')!, env)!.rawHeaders['private-token'], 'gl-secret')
  assert.equal(credentialFor(hosts.get('bitbucket.org')!, env)!.rawHeaders.authorization, 'Bearer bb-secret')
  const email = credentialFor(hosts.get('bitbucket.org')!, { BITBUCKET_EMAIL: 'me@x.io', BITBUCKET_API_TOKEN: 'api-secret' })!
  assert.equal(Buffer.from(email.rawHeaders.authorization!.replace('Basic ', ''), 'base64').toString(), 'me@x.io:api-secret')
  assert.equal(credentialFor(hosts.get('github.com')!, {}), undefined)
})

test('a host only a dataset URL named (an unknown host read as GitLab) gets no token; the same host configured gets its type\'s', () => {
  const env = { GH_TOKEN: 'gh', GITHUB_TOKEN: 'gh2', GH_ENTERPRISE_TOKEN: 'ghe', GITHUB_ENTERPRISE_TOKEN: 'ghe2', GITLAB_TOKEN: 'gl', BITBUCKET_TOKEN: 'bb', BITBUCKET_EMAIL: 'me@x.io', BITBUCKET_API_TOKEN: 'api' }
  for (const url of ['http://127.0.0.1:8080/gitlab.com/g/p/-/blob/main/a.md', 'https://code.example.net/g/p/-/raw/main/a.md', 'http://gitlab.example.org/g/p/-/blob/main/a.md']) {
    const host = parseBlobUrl(url, hostTable([], {}))!.host
    assert.equal(host.type, 'gitlab', url)
    assert.equal(credentialFor(host, env), undefined, url)
  }
  const configured = parseBlobUrl('http://127.0.0.1:8080/gitlab.com/g/p/-/blob/main/a.md', hostTable(['127.0.0.1:8080=http://127.0.0.1:8080,type=gitlab'], {}))!.host
  assert.deepEqual(credentialFor(configured, env)?.secrets, ['gl'])
  const fromEnv = parseBlobUrl('https://code.example.net/g/p/-/blob/main/a.md', hostTable([], { EVALFERRY_HOSTS: 'code.example.net=https://code.example.net,type=gitlab' }))!.host
  assert.deepEqual(credentialFor(fromEnv, env)?.secrets, ['gl'])
  // A host declared without type= gets the token of the type its URL's shape tells.
  const untyped = hostTable(['code.corp.io=https://code.corp.io'], {})
  assert.deepEqual(credentialFor(parseBlobUrl('https://code.corp.io/g/p/-/blob/main/a.md', untyped)!.host, env)?.secrets, ['gl'])
  assert.deepEqual(credentialFor(parseBlobUrl('https://code.corp.io/projects/P/repos/r/browse/a.md', untyped)!.host, env)?.secrets, ['bb'])
  assert.deepEqual(credentialFor(parseBlobUrl('https://code.corp.io/o/r/blob/main/a.md', untyped)!.host, env)?.secrets, ['ghe'])
})
