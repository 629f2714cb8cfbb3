import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { sweepTemp, writeAtomic } from '../../cache/fs.ts'
import { cacheRoot, commitFile, repoLayout } from '../../cache/layout.ts'
import { clearCache, listCache, parseDuration, pruneCache } from '../../cache/manage.ts'
import { initRepoDir, openCacheRoot } from '../../cache/store.ts'
import { FetchError, UsageError } from '../../src/errors.ts'
import { runCli, startCli } from '../helpers/cli.ts'
import { tempDir } from '../helpers/temp.ts'

const dir = tempDir('evalferry-manage-')
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

test('prune sweeps what dead processes left in tmp/, and does not wait for a repository whose tmp/ holds only live writes', { timeout: 20_000 }, async () => {
  const root = join(dir, 'leftovers')
  const layout = repoLayout(root, 'github.com', 'acme/busy')
  await initRepoDir(layout)
  await writeAtomic(commitFile(layout, B, 'b.txt'), 'recent', layout.tmp)
  // A live process (this one) is writing under the repository's lock: a prune has nothing to do there.
  mkdirSync(join(layout.tmp, `${process.pid}-in-flight`))
  writeFileSync(layout.lock, JSON.stringify({ pid: process.pid, hostname: hostname(), acquired_at: new Date().toISOString(), token: 'another' }))
  assert.deepEqual(await pruneCache(root, parseDuration('30d')), { removed: [], mirrors: [], bytes: 0 })
  rmSync(layout.lock)
  // No process has this pid (past Linux's pid_max): what it left goes, under the lock.
  mkdirSync(join(layout.tmp, '999999999-left'))
  writeFileSync(join(layout.tmp, '999999999-left', 'a.txt'), 'half')
  await pruneCache(root, parseDuration('30d'))
  assert.deepEqual(readdirSync(layout.tmp), [`${process.pid}-in-flight`])
  assert.ok(!existsSync(layout.lock))
  assert.deepEqual((await listCache(root))[0]!.commits.map((c) => c.commit), [B])
})

test('cache clear and prune stopped while removing leave each commit whole or gone; interrupted, they exit 130 and leave no lock; the next run finishes, leaving nothing behind', { timeout: 180_000 }, async () => {
  // Enough files that removing the old commit takes a while, made once and copied.
  const FILES = 10_000
  const template = join(dir, 'old-commit')
  mkdirSync(template)
  for (let i = 0; i < FILES; i++) writeFileSync(join(template, `f${i}.txt`), `${i}\n`)
  for (const action of [['clear'], ['prune', '--older-than', '1d']]) {
    // SIGINT runs the interrupt's cleanup; SIGKILL, a crash, runs nothing.
    for (const signal of ['SIGINT', 'SIGKILL'] as const) {
      const what = `cache ${action[0]}, ${signal}`
      const root = join(dir, `stopped-${action[0]}-${signal}`)
      const layout = repoLayout(root, 'github.com', 'acme/big')
      await initRepoDir(layout)
      mkdirSync(layout.commits, { recursive: true })
      execFileSync('cp', ['-R', template, join(layout.commits, A)])
      await writeAtomic(commitFile(layout, B, 'b.txt'), 'recent', layout.tmp)
      const old = new Date(Date.now() - 3 * 86400e3)
      utimesSync(join(layout.commits, A), old, old)

      const run = startCli(['cache', ...action, '--cache-dir', root])
      // The signal comes once the run holds the repository's lock and has begun to remove the old commit.
      const holder = (): number | undefined => {
        try {
          return (JSON.parse(readFileSync(layout.lock, 'utf8')) as { pid: number }).pid
        } catch {
          return undefined
        }
      }
      const removing = (): boolean => {
        try {
          return readdirSync(join(layout.commits, A)).length < FILES
        } catch {
          return true // gone, or moved away
        }
      }
      for (const started = Date.now(); holder() !== run.pid || !removing(); ) {
        if (Date.now() - started > 60_000) throw new Error(`${what}: never began removing under the lock: ${run.stderr()}`)
        await new Promise((r) => setTimeout(r, 1))
      }
      process.kill(run.pid, signal)
      const result = await run.done
      if (signal === 'SIGINT') {
        assert.equal(result.code, 130, `${what}: ${result.stderr}`)
        assert.match(result.stderr, /evalferry: interrupted \(SIGINT\)/)
        assert.ok(!existsSync(layout.lock), `${what}: the lock is released`)
      } else assert.equal(result.signal, 'SIGKILL')
      // The old commit is all there or not there at all, the recent one kept by prune (clear takes the commits together), and the repository is still found.
      const a = existsSync(join(layout.commits, A)) ? readdirSync(join(layout.commits, A)).length : 0
      assert.ok(a === 0 || a === FILES, `${what}: ${a} of the old commit's ${FILES} files left`)
      const b = existsSync(commitFile(layout, B, 'b.txt')) ? readFileSync(commitFile(layout, B, 'b.txt'), 'utf8') : undefined
      assert.equal(b, action[0] === 'prune' || a === FILES ? 'recent' : undefined, what)
      assert.deepEqual((await listCache(root)).map((r) => r.repository), ['acme/big'], what)

      // The next run breaks a dead holder's lock at once, and finishes.
      const next = await runCli(['cache', ...action, '--cache-dir', root])
      assert.equal(next.code, 0, `${what}: ${next.stderr}`)
      if (action[0] === 'clear') assert.deepEqual(readdirSync(root), ['CACHEDIR.TAG'], what)
      else {
        assert.deepEqual((await listCache(root))[0]!.commits.map((c) => [c.commit, c.files]), [[B, 1]], what)
        // What the stopped run left in tmp/ (the old commit, moved there to be deleted) is gone with the next.
        assert.deepEqual(readdirSync(layout.tmp), [], what)
      }
    }
  }
})
