import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { sweepTemp, writeAtomic } from '../../cache/fs.ts'
import { cacheRoot, commitFile, repoLayout } from '../../cache/layout.ts'
import { clearCache, listCache, parseDuration, pruneCache } from '../../cache/manage.ts'
import { initRepoDir } from '../../cache/store.ts'
import { FetchError } from '../../src/errors.ts'

const dir = mkdtempSync(join(tmpdir(), 'evalferry-manage-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)

test('the root: --cache-dir, then EVALFERRY_CACHE_DIR, then the platform cache directory', () => {
  assert.equal(cacheRoot({ cacheDir: '/x/flag' }, { EVALFERRY_CACHE_DIR: '/x/env' }), '/x/flag')
  assert.equal(cacheRoot({}, { EVALFERRY_CACHE_DIR: '/x/env' }), '/x/env')
  assert.match(cacheRoot({}, {}), /evalferry$/)
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
