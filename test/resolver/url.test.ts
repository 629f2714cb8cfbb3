import assert from 'node:assert/strict'
import { test } from 'node:test'
import { FetchError } from '../../src/errors.ts'
import { cloneUrl, hostTable, parseHostSpec, rawFileUrl, splitHostList } from '../../src/resolver/hosts.ts'
import { parseBlobUrl, redactUrl } from '../../src/resolver/url.ts'

const hosts = hostTable(
  ['ghe.example.com=https://ghe.example.com,type=github', 'git.corp.io:8443=https://git.corp.io:8443/gitlab,type=gitlab', 'bb.corp.io=https://bb.corp.io,type=bitbucket-server'],
  {},
)

// [url, host, repository, segments, extra]
const CASES: [string, string, string, string[], Record<string, unknown>?][] = [
  ['https://github.com/o/r/blob/main/a/b.txt', 'github.com', 'o/r', ['main', 'a', 'b.txt']],
  ['https://github.com/o/r/blob/feature/x/y/dir/file.md?plain=1#L10-L20', 'github.com', 'o/r', ['feature', 'x', 'y', 'dir', 'file.md'], { lines: { start: 10, end: 20 } }],
  ['https://github.com/o/r/raw/v1.0/with%20space.md', 'github.com', 'o/r', ['v1.0', 'with space.md']],
  ['https://raw.githubusercontent.com/o/r/main/a.txt', 'github.com', 'o/r', ['main', 'a.txt']],
  ['https://raw.githubusercontent.com/o/r/refs/heads/main/a.txt', 'github.com', 'o/r', ['refs', 'heads', 'main', 'a.txt']],
  ['https://GitHub.com:443/o/r/blob/main/%C3%BC.txt#L3', 'github.com', 'o/r', ['main', 'ü.txt'], { lines: { start: 3, end: 3 } }],
  ['https://gitlab.com/group/sub/deeper/project/-/blob/main/a/b.py#L2-4', 'gitlab.com', 'group/sub/deeper/project', ['main', 'a', 'b.py'], { lines: { start: 2, end: 4 } }],
  ['https://gitlab.com/group/project/-/raw/release/2.0/x.json', 'gitlab.com', 'group/project', ['release', '2.0', 'x.json']],
  ['https://bitbucket.org/ws/repo/src/main/docs/a.md#lines-5:9', 'bitbucket.org', 'ws/repo', ['main', 'docs', 'a.md'], { lines: { start: 5, end: 9 } }],
  ['https://bitbucket.org/ws/repo/raw/0123456789abcdef0123456789abcdef01234567/a.md', 'bitbucket.org', 'ws/repo', ['0123456789abcdef0123456789abcdef01234567', 'a.md']],
  ['https://ghe.example.com/org/tool/blob/main/x.txt', 'ghe.example.com', 'org/tool', ['main', 'x.txt']],
  ['https://raw.ghe.example.com/org/tool/main/x.txt', 'ghe.example.com', 'org/tool', ['main', 'x.txt']],
  ['https://git.corp.io:8443/team/app/-/blob/dev/src/a.ts', 'git.corp.io:8443', 'team/app', ['dev', 'src', 'a.ts']],
  ['https://unknown.example.org/a/b/c/-/blob/main/f.txt', 'unknown.example.org', 'a/b/c', ['main', 'f.txt']],
  ['https://bb.corp.io/projects/PRJ/repos/tool/browse/src/a.txt?at=refs%2Fheads%2Fdev', 'bb.corp.io', 'PRJ/tool', ['src', 'a.txt'], { ref: 'refs/heads/dev' }],
  // A ref written with encoded slashes is the ref whole.
  ['https://bitbucket.org/ws/repo/src/feature%2Fx%2Fy/docs/a.md', 'bitbucket.org', 'ws/repo', ['docs', 'a.md'], { ref: 'feature/x/y' }],
  ['https://github.com/o/r/blob/feature%2fx/a.txt#L2', 'github.com', 'o/r', ['a.txt'], { ref: 'feature/x', lines: { start: 2, end: 2 } }],
  // A selection in GitHub's code view names columns too; Bitbucket Server writes bare line numbers.
  ['https://github.com/o/r/blob/main/f.txt#L2C1-L3C5', 'github.com', 'o/r', ['main', 'f.txt'], { lines: { start: 2, end: 3 } }],
  ['https://bb.corp.io/projects/PRJ/repos/tool/browse/src/a.txt#2-3', 'bb.corp.io', 'PRJ/tool', ['src', 'a.txt'], { lines: { start: 2, end: 3 } }],
  ['https://bb.corp.io/projects/PRJ/repos/tool/browse/src/a.txt#5', 'bb.corp.io', 'PRJ/tool', ['src', 'a.txt'], { lines: { start: 5, end: 5 } }],
  // Bitbucket Server's project keys are upper-case, whatever case a URL writes them in.
  ['https://bb.corp.io/projects/prj/repos/tool/browse/a.txt', 'bb.corp.io', 'PRJ/tool', ['a.txt'], { ref: 'HEAD' }],
  // GitHub Enterprise without subdomain isolation serves raw files under /raw/.
  ['https://ghe.example.com/raw/org/tool/main/x.txt', 'ghe.example.com', 'org/tool', ['main', 'x.txt']],
  // The clone URL's suffix on the repository names the same repository.
  ['https://github.com/o/r.git/blob/main/a.txt', 'github.com', 'o/r', ['main', 'a.txt']],
  ['https://gitlab.com/g/p.git/-/blob/main/a.txt', 'gitlab.com', 'g/p', ['main', 'a.txt']],
  // GitLab says which of a branch and a tag of one name it shows.
  ['https://gitlab.com/g/p/-/blob/dup/a.txt?ref_type=tags', 'gitlab.com', 'g/p', ['dup', 'a.txt'], { refKind: 'tags' }],
  ['https://gitlab.com/g/p/-/blob/dup/a.txt?ref_type=heads#L2', 'gitlab.com', 'g/p', ['dup', 'a.txt'], { refKind: 'heads', lines: { start: 2, end: 2 } }],
]

test('parses blob URLs of every host form', () => {
  for (const [url, host, repository, segments, extra = {}] of CASES) {
    const parsed = parseBlobUrl(url, hosts)
    assert.ok(parsed, url)
    assert.equal(parsed.host.name, host, url)
    assert.equal(parsed.repository, repository, url)
    assert.deepEqual(parsed.segments, segments, url)
    for (const [key, value] of Object.entries(extra)) assert.deepEqual((parsed as unknown as Record<string, unknown>)[key], value, `${url} ${key}`)
  }
})

test('github.com and bitbucket.org name a repository without regard to case; GitLab and configured hosts keep it as written', () => {
  const repositoryOf = (url: string) => parseBlobUrl(url, hosts)?.repository
  assert.equal(repositoryOf('https://github.com/Acme/Widgets/blob/Main/Data/File.txt'), 'acme/widgets')
  assert.deepEqual(parseBlobUrl('https://github.com/Acme/Widgets/blob/Main/Data/File.txt', hosts)?.segments, ['Main', 'Data', 'File.txt'])
  assert.equal(repositoryOf('https://raw.githubusercontent.com/Acme/Widgets/main/f.txt'), 'acme/widgets')
  assert.equal(repositoryOf('https://bitbucket.org/Team/Repo/src/main/f.txt'), 'team/repo')
  assert.equal(repositoryOf('https://gitlab.com/Group/Sub/Project/-/blob/main/f.txt'), 'Group/Sub/Project')
  const configured = hostTable(['git.corp.io=https://git.corp.io,type=github'])
  assert.equal(parseBlobUrl('https://git.corp.io/Team/Tool/blob/main/f.txt', configured)?.repository, 'Team/Tool')
})

test('a host declared without type= reads a URL shaped as GitLab or Bitbucket Server pages as theirs, and any other as its name suggests', () => {
  const untyped = hostTable(['git.corp.io=https://git.corp.io', 'stash.corp.io=https://stash.corp.io/bitbucket', 'quiet.io=https://quiet.io,raw=off'], {})
  const gitlab = parseBlobUrl('https://git.corp.io/group/sub/project/-/blob/main/a.md', untyped)!
  assert.deepEqual([gitlab.host.type, gitlab.repository, gitlab.segments, cloneUrl(gitlab.host, gitlab.repository), gitlab.host.rawBase], [
    'gitlab',
    'group/sub/project',
    ['main', 'a.md'],
    'https://git.corp.io/group/sub/project.git',
    'https://git.corp.io/api/v4',
  ])
  const server = parseBlobUrl('https://stash.corp.io/bitbucket/projects/PROJ/repos/repo/browse/a.md?at=refs%2Fheads%2Fmain', untyped)!
  assert.deepEqual([server.host.type, server.repository, server.ref, cloneUrl(server.host, server.repository), server.host.rawBase], [
    'bitbucket-server',
    'PROJ/repo',
    'refs/heads/main',
    'https://stash.corp.io/bitbucket/scm/proj/repo.git',
    'https://stash.corp.io/bitbucket/rest/api/1.0',
  ])
  const github = parseBlobUrl('https://git.corp.io/team/tool/blob/main/a.md', untyped)!
  assert.deepEqual([github.host.type, github.repository, github.host.rawBase], ['github', 'team/tool', 'https://git.corp.io/raw'])
  // raw=off stays off whatever type the URL reads as.
  assert.equal(parseBlobUrl('https://quiet.io/g/p/-/raw/main/a.md', untyped)!.host.rawBase, undefined)
  // A type given is the type: a github host reads no GitLab page.
  assert.equal(parseBlobUrl('https://ghe.example.com/g/p/-/blob/main/a.md', hosts), undefined)
})

test('an unknown host with /-/blob/ is GitLab at that origin', () => {
  const parsed = parseBlobUrl('https://code.example.net/a/b/-/blob/main/f.txt', hosts)
  assert.equal(parsed?.host.type, 'gitlab')
  assert.equal(parsed?.host.gitBase, 'https://code.example.net')
})

test('what is not a blob URL is left alone', () => {
  for (const url of [
    'https://github.com/o/r',
    'https://github.com/o/r/tree/main/dir',
    'https://github.com/o/r/blob/main',
    'https://example.com/o/r/blob/main/a.txt',
    'http://gitlab.com/g/p/blob/main/a',
    './docs/orders.md',
    'see https://github.com/o/r/blob/main/a.txt',
    // A GitLab page's shape on a name URLs refuse: `xn--example` is no punycode.
    'https://gitlab.xn--example.org/a/b/-/raw/main/c',
  ]) {
    assert.equal(parseBlobUrl(url, hosts), undefined, url)
  }
})

test('paths that climb out, absolute paths and bad encodings are refused', () => {
  for (const url of [
    'https://github.com/o/r/blob/main/../../etc/passwd',
    'https://github.com/o/r/blob/main/a/%2e%2e/%2E%2E/b',
    'https://github.com/o/r/blob/main//etc/passwd',
    'https://github.com/o/r/blob/main/a%2Fb',
    'https://github.com/o/r/blob/a%2F..%2Fb/x',
    'https://github.com/o/r/blob/%2Fmain/x',
    'https://github.com/o/r/blob/main/%E0%A4%A',
    'https://gitlab.com/g/p/-/blob/main/./x',
  ]) {
    assert.throws(() => parseBlobUrl(url, hosts), (e: unknown) => e instanceof FetchError && e.code === 'E_UNSAFE', url)
  }
})

test('--host specs: types, raw endpoints, credentials refused in URLs', () => {
  const gh = parseHostSpec('github.com=http://127.0.0.1:9/github.com,type=github')
  assert.deepEqual(gh, { name: 'github.com', type: 'github', gitBase: 'http://127.0.0.1:9/github.com', rawBase: 'http://127.0.0.1:9/github.com/raw', builtin: false })
  assert.equal(parseHostSpec('gitlab.local=https://gitlab.local/').rawBase, 'https://gitlab.local/api/v4')
  assert.equal(parseHostSpec('gl.local=https://gl.local,type=gitlab,raw=off').rawBase, undefined)
  assert.equal(parseHostSpec('x.io=https://x.io,type=bitbucket,raw=https://api.x.io/2.0').rawBase, 'https://api.x.io/2.0')
  assert.throws(() => parseHostSpec('x.io=https://user:secret@x.io'), /credentials/)
  assert.throws(() => parseHostSpec('x.io=ftp://x.io'), /http/)
  assert.throws(() => parseHostSpec('x.io=https://x.io,type=svn'), /type must be/)
  assert.equal(parseHostSpec('x.io=https://x.io,type=GitLab').type, 'gitlab')
  assert.throws(() => parseHostSpec('x.io'), { message: '--host x.io: expected <name>=<base-url>[,type=github|gitlab|bitbucket|bitbucket-server][,raw=<url>|raw=off]' })
  assert.deepEqual(splitHostList('a.io=https://a.io,type=gitlab,b.io=https://b.io,type=github,raw=off'), ['a.io=https://a.io,type=gitlab', 'b.io=https://b.io,type=github,raw=off'])
  const table = hostTable(['a.io=https://cli.a.io'], { EVALFERRY_HOSTS: 'a.io=https://env.a.io,b.io=https://b.io,type=gitlab' })
  assert.equal(table.get('a.io')?.gitBase, 'https://cli.a.io')
  assert.equal(table.get('b.io')?.type, 'gitlab')
})

test('a GitLab or Bitbucket Server base URL with a path: URLs that begin with that path are read after it; the clone and API URLs keep it', () => {
  const prefixed = hostTable(
    ['git.corp.io=https://git.corp.io/gitlab,type=gitlab', 'bb.corp.io=https://bb.corp.io/tools/bitbucket/,type=bitbucket-server', 'ghe.corp.io=https://ghe.corp.io/mirror,type=github'],
    {},
  )
  const sha = 'a'.repeat(40)
  const read = (url: string) => {
    const parsed = parseBlobUrl(url, prefixed)
    return parsed && { repository: parsed.repository, segments: parsed.segments, ref: parsed.ref, clone: cloneUrl(parsed.host, parsed.repository), raw: rawFileUrl(parsed.host, parsed.repository, sha, parsed.segments.at(-1)!) }
  }
  assert.deepEqual(read('https://git.corp.io/gitlab/group/sub/project/-/blob/main/a.md'), {
    repository: 'group/sub/project',
    segments: ['main', 'a.md'],
    ref: undefined,
    clone: 'https://git.corp.io/gitlab/group/sub/project.git',
    raw: `https://git.corp.io/gitlab/api/v4/projects/group%2Fsub%2Fproject/repository/files/a.md/raw?ref=${sha}`,
  })
  assert.deepEqual(read('https://bb.corp.io/tools/bitbucket/projects/PRJ/repos/repo/browse/a.md?at=refs%2Fheads%2Fmain'), {
    repository: 'PRJ/repo',
    segments: ['a.md'],
    ref: 'refs/heads/main',
    clone: 'https://bb.corp.io/tools/bitbucket/scm/prj/repo.git',
    raw: `https://bb.corp.io/tools/bitbucket/rest/api/1.0/projects/PRJ/repos/repo/raw/a.md?at=${sha}`,
  })
  // The path is taken once: a group named like it is the group.
  assert.equal(read('https://git.corp.io/gitlab/gitlab/project/-/raw/main/a.md')?.repository, 'gitlab/project')
  // A URL without the path (a name pointed at a mirror or proxy) is read from the root, as before.
  assert.equal(read('https://git.corp.io/group/project/-/blob/main/a.md')?.repository, 'group/project')
  assert.equal(read('https://bb.corp.io/projects/PRJ/repos/repo/browse/a.md')?.repository, 'PRJ/repo')
  // Part of the path is not the path.
  assert.equal(read('https://bb.corp.io/tools/projects/PRJ/repos/repo/browse/a.md'), undefined)
  // GitHub Enterprise is served at the root: a github base's path is not looked for in URLs.
  assert.equal(read('https://ghe.corp.io/mirror/tool/blob/main/x.txt')?.repository, 'mirror/tool')
})

test('a token in the query is refused like one in the user info, naming the parameter and never its value', () => {
  const CASES: [string, string][] = [
    ['https://raw.githubusercontent.com/acme/widgets/main/docs/a.md?token=GHSAT0AAAAASECRETVALUE', 'token'],
    ['https://gitlab.com/g/p/-/blob/main/a.md?private_token=glpat-SECRETVALUE', 'private_token'],
    ['https://gitlab.com/g/p/-/raw/main/a.md?ref_type=heads&access_token=SECRETVALUE#L2', 'access_token'],
    ['https://github.com/o/r/blob/main/a.md?plain=1&Private%5FToken=SECRETVALUE', 'Private_Token'],
    ['https://bitbucket.org/ws/repo/src/main/a.md?access_token=SECRETVALUE', 'access_token'],
    ['https://unknown.example.org/g/p/-/blob/main/a.md?job_token=SECRETVALUE', 'job_token'],
    // A signed link's signature, and keys by any name.
    ['https://github.com/o/r/blob/main/a.md?sv=2024&sig=SECRETVALUE', 'sig'],
    ['https://github.com/o/r/blob/main/a.md?X-Amz-Signature=SECRETVALUE', 'X-Amz-Signature'],
    ['https://gitlab.com/g/p/-/blob/main/a.md?key=SECRETVALUE', 'key'],
    ['https://gitlab.com/g/p/-/blob/main/a.md?access_key=SECRETVALUE', 'access_key'],
  ]
  for (const [url, name] of CASES) {
    assert.throws(
      () => parseBlobUrl(url, hosts),
      (e: unknown) => e instanceof FetchError && e.code === 'E_UNSAFE' && e.message.includes(`query parameter '${name}'`) && !e.message.includes('SECRETVALUE'),
      url,
    )
    assert.ok(!redactUrl(url).includes('SECRETVALUE'), redactUrl(url))
  }
  assert.equal(redactUrl(CASES[2]![0]), 'https://gitlab.com/g/p/-/raw/main/a.md?ref_type=heads&access_token=***#L2')
  assert.equal(redactUrl('https://u:pw@github.com/o/r/blob/main/a.md?plain=1'), 'https://***@github.com/o/r/blob/main/a.md?plain=1')
  // Other query parameters are left as they are.
  assert.deepEqual(parseBlobUrl('https://gitlab.com/g/p/-/blob/main/a.md?ref_type=heads&inline=false', hosts)?.segments, ['main', 'a.md'])
})

/** `url` parses as `like` does (host entry, repository, ref and path, lines), keeping its own text. */
function assertSameFile(url: string, like: string): void {
  const parsed = parseBlobUrl(url, hosts)
  assert.ok(parsed, url)
  assert.equal(parsed.url, url, 'the URL stays as written')
  assert.deepEqual({ ...parsed, url: like }, parseBlobUrl(like, hosts), url)
}

test('www.github.com, www.gitlab.com and www.bitbucket.org are the bare hosts: same host entry, repository and segments', () => {
  const PAIRS: [string, string][] = [
    ['https://www.github.com/o/r/blob/main/a/b.txt#L2-L3', 'https://github.com/o/r/blob/main/a/b.txt#L2-L3'],
    ['https://WWW.GitHub.com/o/r/raw/v1.0/a.txt', 'https://github.com/o/r/raw/v1.0/a.txt'],
    ['https://www.gitlab.com/group/sub/project/-/blob/main/a.py', 'https://gitlab.com/group/sub/project/-/blob/main/a.py'],
    ['https://www.bitbucket.org/ws/repo/src/main/docs/a.md#lines-5:9', 'https://bitbucket.org/ws/repo/src/main/docs/a.md#lines-5:9'],
  ]
  for (const [www, bare] of PAIRS) assertSameFile(www, bare)
  // A --host entry for github.com serves www.github.com too: one repository, one cache directory.
  const local = hostTable(['github.com=http://127.0.0.1:9/github.com,type=github'], {})
  assert.equal(parseBlobUrl('https://www.github.com/o/r/blob/main/a.txt', local)?.host.gitBase, 'http://127.0.0.1:9/github.com')
  // Only the built-in hosts: www. of another host is another host.
  assert.equal(parseBlobUrl('https://www.ghe.example.com/org/tool/blob/main/x.txt', hosts), undefined)
  assert.equal(parseBlobUrl('https://www.example.com/o/r/blob/main/a.txt', hosts), undefined)
})

test('blame pages name the file of their blob page: GitHub /blame/, GitLab /-/blame/, Bitbucket /annotate/', () => {
  const PAIRS: [string, string][] = [
    ['https://github.com/o/r/blame/feature/x/y/dir/file.md#L10-L20', 'https://github.com/o/r/blob/feature/x/y/dir/file.md#L10-L20'],
    ['https://www.github.com/o/r/blame/0123456789abcdef0123456789abcdef01234567/a.txt', 'https://github.com/o/r/blob/0123456789abcdef0123456789abcdef01234567/a.txt'],
    ['https://ghe.example.com/org/tool/blame/main/x.txt', 'https://ghe.example.com/org/tool/blob/main/x.txt'],
    ['https://gitlab.com/group/sub/deeper/project/-/blame/main/a/b.py#L2', 'https://gitlab.com/group/sub/deeper/project/-/blob/main/a/b.py#L2'],
    ['https://git.corp.io:8443/team/app/-/blame/dev/src/a.ts', 'https://git.corp.io:8443/team/app/-/blob/dev/src/a.ts'],
    ['https://code.example.net/a/b/-/blame/main/f.txt', 'https://code.example.net/a/b/-/blob/main/f.txt'],
    ['https://bitbucket.org/ws/repo/annotate/main/docs/a.md#lines-5:9', 'https://bitbucket.org/ws/repo/src/main/docs/a.md#lines-5:9'],
    ['https://bitbucket.org/ws/repo/annotate/feature%2Fx%2Fy/docs/a.md', 'https://bitbucket.org/ws/repo/src/feature%2Fx%2Fy/docs/a.md'],
  ]
  for (const [blame, blob] of PAIRS) assertSameFile(blame, blob)
  // A blame page is refused like a blob page when its path climbs out.
  assert.throws(() => parseBlobUrl('https://github.com/o/r/blame/main/../../etc/passwd', hosts), (e: unknown) => e instanceof FetchError && e.code === 'E_UNSAFE')
  // A blame page of a whole ref, or GitHub's /annotate/, is not a file.
  assert.equal(parseBlobUrl('https://github.com/o/r/blame/main', hosts), undefined)
  assert.equal(parseBlobUrl('https://github.com/o/r/annotate/main/a.txt', hosts), undefined)
})
