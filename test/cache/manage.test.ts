import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { sweepTemp, writeAtomic } from '../../cache/fs.ts'
import { cacheRoot, commitFile, repoLayout } from '../../cache/layout.ts'
import { clearCache, listCache, parseDuration, pruneCache } from '../../cache/manage.ts'
import { initRepoDir, openCacheRoot } from '../../cache/store.ts'
import { FetchError, UsageError } from '../../src/errors.ts'

const dir = mkdtempSync(join(tmpdir(), 'evalferry-manage-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)

test('the root: --cache-dir, then EVALFERRY_CACHE_DIR, then the platform cache directory', () => {
  assert.equal(cacheRoot({ cacheDir: '/x/flag' }, { EVALFERRY_CACHE_DIR: '/x/env' }), '/x/flag')
  assert.equal(cacheRoot({}, { EVALFERRY_CACHE_DIR: '/x/env' }), '/x/env')
  assert.match(cacheRoot({}, {}), /evalferry$/)
  // An empty --cache-dir (an unset shell variable) is refused, not taken as the default.
  assert.throws(() => cacheRoot({ cacheDir: '' }, {}), (e: unknown) => e instanceof UsageError && /--cache-dir is empty/.test(e.message))
})

test('layout: <root>/<host>/<owner…>/<repo>, a port kept apart from the path syntax', () => {
  const layout = repoLayout('/c', 'git.corp.io:8443', 'group/sub/project')
  assert.equal(layout.dir, '/c/git.corp.io_8443/group/sub/project')
  assert.equal(commitFile(layout, A, 'docs/with space.md'), `/c/git.corp.io_8443/group/sub/project/commits/${A}/docs/with space.md`)
})

test('durations', () => {
  assert.equal(parseDuration('30d'), 30 * 86400e3)
  assert.equal(parseDuration('12h'), 12 * 3600e3)
  assert.equal(parseDuration('2w'), 14 * 86400e3)
  assert.throws(() => parseDuration('soon'), /not a duration/)
})

test('atomic writes leave nothing half-written; leftovers of dead writers are swept', async () => {
  const tmp = join(dir, 'sweep', 'tmp')
  await writeAtomic(join(dir, 'sweep', 'file.txt'), 'content', tmp)
  assert.deepEqual(readdirSync(tmp), [])
  writeFileSync(join(tmp, '999999999-abc'), 'half')
  writeFileSync(join(tmp, `${process.pid}-mine`), 'in flight')
  await sweepTemp(tmp)
  assert.deepEqual(readdirSync(tmp), [`${process.pid}-mine`])
})

test('list, prune by last use, and clear that refuses what is not a cache', async () => {
  const root = join(dir, 'cache')
  const layout = repoLayout(root, 'github.com', 'acme/widgets')
  await initRepoDir(layout)
  await writeAtomic(commitFile(layout, A, 'a.txt'), '12345', layout.tmp)
  await writeAtomic(commitFile(layout, B, 'dir/b.txt'), '123', layout.tmp)
  const old = new Date(Date.now() - 40 * 86400e3)
  utimesSync(join(layout.commits, A), old, old)
  const [repo] = await listCache(root)
  assert.equal(`${repo!.host}/${repo!.repository}`, 'github.com/acme/widgets')
  assert.deepEqual(repo!.commits.map((c) => [c.commit, c.files, c.bytes]), [[A, 1, 5], [B, 1, 3]])
  const pruned = await pruneCache(root, parseDuration('30d'))
  assert.deepEqual(pruned.removed.map((r) => r.commit), [A])
  assert.deepEqual(readdirSync(layout.commits), [B])
  await pruneCache(root, 0)
  assert.ok(!existsSync(layout.dir))

  const notCache = join(dir, 'home')
  mkdirSync(notCache)
  writeFileSync(join(notCache, 'precious.txt'), 'keep')
  await assert.rejects(clearCache(notCache), (e: unknown) => e instanceof FetchError && e.code === 'E_CACHE')
  assert.ok(existsSync(join(notCache, 'precious.txt')))
  await initRepoDir(repoLayout(root, 'gitlab.com', 'g/p'))
  await clearCache(root)
  assert.deepEqual(readdirSync(root), ['CACHEDIR.TAG'])
})

test('prune removes a repository that never got a commit (one that does not exist, say) once it is older than the cut-off', async () => {
  const root = join(dir, 'empty-repos')
  const missing = repoLayout(root, 'github.com', 'acme/nothere')
  const recent = repoLayout(root, 'github.com', 'acme/just-listed')
  await initRepoDir(missing)
  await initRepoDir(recent)
  const old = new Date(Date.now() - 40 * 86400e3)
  utimesSync(missing.dir, old, old)
  assert.deepEqual((await listCache(root)).map((r) => [r.repository, r.commits.length]), [['acme/just-listed', 0], ['acme/nothere', 0]])
  await pruneCache(root, parseDuration('30d'))
  assert.deepEqual((await listCache(root)).map((r) => r.repository), ['acme/just-listed'])
  assert.ok(!existsSync(missing.dir))
  await pruneCache(root, parseDuration('30d'))
  assert.ok(existsSync(recent.dir))
})

const isCacheError = (pattern: RegExp) => (e: unknown) => e instanceof FetchError && e.code === 'E_CACHE' && pattern.test(e.message)

test('a cache starts only in a new or empty directory, or one that is a cache already', async () => {
  const project = join(dir, 'project')
  mkdirSync(join(project, 'src'), { recursive: true })
  writeFileSync(join(project, 'src', 'main.ts'), 'x\n')
  await assert.rejects(initRepoDir(repoLayout(project, 'github.com', 'acme/widgets')), isCacheError(/project is not empty and is not an evalferry cache/))
  assert.deepEqual(readdirSync(project), ['src'])

  const fresh = join(dir, 'fresh', 'cache')
  await openCacheRoot(fresh)
  await initRepoDir(repoLayout(fresh, 'github.com', 'acme/widgets'))
  await openCacheRoot(fresh)
  assert.deepEqual(readdirSync(fresh).sort(), ['CACHEDIR.TAG', 'github.com'])
  const empty = join(dir, 'empty')
  mkdirSync(empty)
  await openCacheRoot(empty)
  assert.deepEqual(readdirSync(empty), ['CACHEDIR.TAG'])
})

test('clear removes the repositories the cache made and leaves every other file', async () => {
  const root = join(dir, 'mixed')
  await initRepoDir(repoLayout(root, 'github.com', 'acme/widgets'))
  await initRepoDir(repoLayout(root, 'github.com', 'acme/other'))
  await writeAtomic(commitFile(repoLayout(root, 'github.com', 'acme/widgets'), A, 'a.txt'), 'cached', join(root, 'github.com', 'acme', 'widgets', 'tmp'))
  // A root tagged by an earlier version that wrote CACHEDIR.TAG into any directory: the user's files stay.
  mkdirSync(join(root, 'src'))
  writeFileSync(join(root, 'src', 'main.ts'), 'x\n')
  writeFileSync(join(root, 'notes.txt'), 'keep\n')
  mkdirSync(join(root, 'github.com', 'mine'))
  writeFileSync(join(root, 'github.com', 'mine', 'repo.json'), JSON.stringify({ host: 'github.com', repository: 'elsewhere/repo' }))
  await clearCache(root)
  assert.deepEqual(readdirSync(root).sort(), ['CACHEDIR.TAG', 'github.com', 'notes.txt', 'src'])
  assert.deepEqual(readdirSync(join(root, 'github.com')), ['mine'])
  assert.ok(existsSync(join(root, 'src', 'main.ts')))
})

test('a cache path that is a regular file is E_CACHE for list, prune, clear and use', async () => {
  const file = join(dir, 'a-file')
  writeFileSync(file, 'not a directory\n')
  await assert.rejects(listCache(file), isCacheError(/a-file is not a directory/))
  await assert.rejects(pruneCache(file, 0), isCacheError(/a-file is not a directory/))
  await assert.rejects(clearCache(file), isCacheError(/a-file is not a directory/))
  await assert.rejects(openCacheRoot(file), isCacheError(/a-file is not a directory/))
  await assert.rejects(openCacheRoot(join(file, 'cache')), isCacheError(/a part of its path is a file/))
  assert.equal(readFileSync(file, 'utf8'), 'not a directory\n')
})
