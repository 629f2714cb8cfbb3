/** A git server on loopback holding the fixture repositories, and a fresh cache directory. */

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { type GitServer, type GitServerOptions, startGitServer } from './git-server.ts'
import { type FixtureRepo, blobUrl, createFixtureRepos } from './repos.ts'
import { tempDir } from './temp.ts'

export interface Fixture {
  server: GitServer
  repos: FixtureRepo[]
  dir: string
  /** A new empty cache directory. */
  newCache(): string
  cleanup(): Promise<void>
}

export async function startFixture(options: GitServerOptions = {}, filesPerRepo = 70): Promise<Fixture> {
  const dir = tempDir('evalferry-server-')
  const repos = createFixtureRepos(join(dir, 'repos'), filesPerRepo)
  const server = await startGitServer(join(dir, 'repos'), options)
  let caches = 0
  return {
    server,
    repos,
    dir,
    newCache: () => join(dir, `cache-${caches++}`),
    async cleanup() {
      await server.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface ExpectedFile {
  url: string
  repo: FixtureRepo
  path: string
  commit: string
  content: Buffer
}

/**
 * 200 references into the three repositories, all at each repository's main commit, written in
 * every form a host has: branch, tag, full SHA, raw URLs, `#L` anchors, `?plain=1`.
 */
export function twoHundredReferences(repos: FixtureRepo[]): ExpectedFile[] {
  const out: ExpectedFile[] = []
  repos.forEach((repo, r) => {
    const files = ['docs/with space.md', 'notes/ünïcode.txt', ...Array.from({ length: 64 }, (_, i) => `data/file-${i}.txt`)]
    if (r < 2) files.push('bin/blob.bin')
    files.forEach((path, i) => {
      const ref = [repo.main, 'main', 'v1.0'][i % 3]!
      let url = blobUrl(repo, ref, path, i % 4 === 1 ? 'raw' : 'blob')
      if (i % 5 === 2) url += '#L1-L2'
      if (i % 7 === 3) url += '?plain=1'
      out.push({ url, repo, path, commit: repo.main, content: repo.files.get(path)! })
    })
  })
  return out
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')

/** Commit a change to a branch of a bare fixture repository (the branch moves). */
export function pushToBranch(server: GitServer, repo: FixtureRepo, branch: string, path: string, content: string): string {
  const work = tempDir('evalferry-push-')
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x', GIT_CONFIG_GLOBAL: '/dev/null' }
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: work, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  git('clone', '-q', '--branch', branch, join(server.root, `${repo.repository}.git`), '.')
  execFileSync('sh', ['-c', 'mkdir -p "$(dirname "$1")" && printf %s "$2" > "$1"', 'sh', path, content], { cwd: work })
  git('add', '-A')
  git('commit', '-q', '-m', 'move')
  git('push', '-q', 'origin', branch)
  const head = git('rev-parse', 'HEAD')
  rmSync(work, { recursive: true, force: true })
  return head
}
