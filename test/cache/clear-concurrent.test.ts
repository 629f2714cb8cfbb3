/**
 * `cache clear` and `cache prune` beside running prefetches, all real processes against the loopback git server: each
 * process ends with 0 or a clear error (no internal error, no stack trace), and the cache still works.
 */

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { type CliRun, runCli, writeEvalcaseDataset } from '../helpers/cli.ts'
import { type Fixture, startFixture } from '../helpers/fixture.ts'
import { blobUrl } from '../helpers/repos.ts'

let fx: Fixture
before(async () => {
  fx = await startFixture({}, 30)
})
after(() => fx.cleanup())

function assertClean(run: CliRun, what: string): void {
  const said = `${what} (exit ${run.code}): ${run.stderr}`
  assert.equal(run.signal, null, said)
  assert.ok(run.code === 0 || run.code === 3, said)
  assert.doesNotMatch(run.stderr, /internal error|\n\s+at |ENOENT|ENOTEMPTY|Unable to read current working directory/, said)
}

for (const action of [['clear'], ['prune', '--older-than', '0s']]) {
  test(`cache ${action[0]} beside several prefetches: every process exits 0 or with a clear error, and a prefetch afterwards succeeds`, { timeout: 180_000 }, async (t) => {
    // Enough files per repository that git, not the single-file API, brings them.
    const urls = fx.repos.flatMap((r) => Array.from({ length: 20 }, (_, i) => blobUrl(r, 'main', `data/file-${i}.txt`)))
    const dataset = join(fx.dir, `cases-${action[0]}.yaml`)
    writeEvalcaseDataset(dataset, urls)
    const cache = fx.newCache()
    const args = ['--cache-dir', cache, ...fx.server.hostSpecs().flatMap((h) => ['--host', h])]
    const prefetch = () => runCli(['prefetch', dataset, '--json', ...args], {}, 120_000)
    const clean = async (delayMs: number) => {
      await new Promise((resolve) => setTimeout(resolve, delayMs))
      return runCli(['cache', ...action, ...args], {}, 120_000)
    }

    // A cache that holds commits before the race, so a prune always has some to remove, however the processes are timed.
    const warm = await prefetch()
    assert.equal(warm.code, 0, warm.stderr)
    let failed = 0
    let pruned = 0
    for (let round = 0; round < 4; round++) {
      const runs = await Promise.all([prefetch(), prefetch(), prefetch(), clean(300 + round * 150), clean(600 + round * 150)])
      runs.forEach((run, i) => assertClean(run, `round ${round}, process ${i}`))
      for (const run of runs.slice(3)) {
        assert.equal(run.code, 0, `${action[0]}: ${run.stderr}`)
        pruned += Number(/^removed (\d+) commit/.exec(run.stderr)?.[1] ?? 0)
      }
      failed += runs.filter((r) => r.code !== 0).length
    }
    // The prunes removed commits while prefetches ran, or the race was not run.
    if (action[0] === 'prune') assert.ok(pruned > 0, 'no prune removed a commit')

    const last = await prefetch()
    assert.equal(last.code, 0, last.stderr)
    const entries = (JSON.parse(last.stdout) as { entries: { url: string; local_path: string }[] }).entries
    assert.equal(entries.length, urls.length)
    for (const e of entries) {
      const repo = fx.repos.find((r) => e.url.includes(r.path))!
      const path = e.url.split('/main/')[1]!
      assert.deepEqual(readFileSync(e.local_path), repo.files.get(path), e.url)
    }
    t.diagnostic(`${failed} prefetch run(s) of 12 ended with a clear error while a ${action[0]} ran${action[0] === 'prune' ? `; ${pruned} commit(s) pruned` : ''}`)
  })
}
