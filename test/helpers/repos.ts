/** Bare repositories for the git server: three hosts, branches `main` and `feature/x/y`, a tag, odd names. */

import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { tempDir } from './temp.ts'

export interface FixtureRepo {
  /** `<host>/<owner…>/<repo>` */
  repository: string
  host: string
  /** `owner…/repo` */
  path: string
  main: string
  feature: string
  tag: string
  /** Files on main, path to content. */
  files: Map<string, Buffer>
  /** Files on feature/x/y, path to content. */
  featureFiles: Map<string, Buffer>
}

export const FIXTURE_REPOS = [
  { host: 'github.com', path: 'acme/widgets' },
  { host: 'gitlab.com', path: 'group/subgroup/project' },
  { host: 'bitbucket.org', path: 'workspace/repo' },
] as const

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
  GIT_AUTHOR_DATE: '2024-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2024-01-01T00:00:00Z',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
}

function put(dir: string, files: Map<string, Buffer>, path: string, content: Buffer | string): void {
  const buffer = Buffer.isBuffer(content) ? content : Buffer.from(content)
  mkdirSync(dirname(join(dir, path)), { recursive: true })
  writeFileSync(join(dir, path), buffer)
  files.set(path, buffer)
}

/** Create the bare repositories under `root`, each with `filesPerRepo` numbered files plus the odd ones. */
export function createFixtureRepos(root: string, filesPerRepo = 70): FixtureRepo[] {
  return FIXTURE_REPOS.map(({ host, path }) => {
    const work = tempDir('evalferry-fixture-')
    git(work, 'init', '-q', '-b', 'main')
    const files = new Map<string, Buffer>()
    for (let i = 0; i < filesPerRepo; i++) put(work, files, `data/file-${i}.txt`, `${host}/${path} file ${i}\n`.repeat(1 + (i % 5)))
    put(work, files, 'docs/with space.md', `# ${path}\nA file whose name has spaces.\n`)
    put(work, files, 'bin/blob.bin', Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]))
    put(work, files, 'notes/ünïcode.txt', 'unicode name\n')
    symlinkSync('../../../../etc/passwd', join(work, 'link-out'))
    symlinkSync('data/file-1.txt', join(work, 'link-in'))
    git(work, 'add', '-A')
    git(work, 'commit', '-q', '-m', 'main')
    git(work, 'tag', '-a', 'v1.0', '-m', 'release')
    const main = git(work, 'rev-parse', 'HEAD')
    git(work, 'checkout', '-q', '-b', 'feature/x/y')
    const featureFiles = new Map(files)
    put(work, featureFiles, 'data/file-0.txt', `feature content of ${path}\n`)
    put(work, featureFiles, 'x/feature-only.txt', 'only on feature/x/y\n')
    git(work, 'add', '-A')
    git(work, 'commit', '-q', '-m', 'feature')
    const feature = git(work, 'rev-parse', 'HEAD')
    git(work, 'checkout', '-q', 'main')
    // A branch and a tag of one name: URLs through `dup/` are ambiguous.
    git(work, 'branch', 'dup')
    git(work, 'tag', 'dup')
    const bare = join(root, host, `${path}.git`)
    mkdirSync(dirname(bare), { recursive: true })
    git(root, 'clone', '-q', '--bare', work, bare)
    rmSync(work, { recursive: true, force: true })
    return { repository: `${host}/${path}`, host, path, main, feature, tag: main, files, featureFiles }
  })
}

/** A bare repository `<root>/<host>/<path>.git` whose branch `main` holds these files, in one commit. */
export function createRepo(root: string, host: string, path: string, files: Record<string, string | Buffer>): Pick<FixtureRepo, 'repository' | 'host' | 'path' | 'main' | 'files'> {
  const work = tempDir('evalferry-fixture-')
  git(work, 'init', '-q', '-b', 'main')
  const contents = new Map<string, Buffer>()
  for (const [file, content] of Object.entries(files)) put(work, contents, file, content)
  git(work, 'add', '-A')
  git(work, 'commit', '-q', '-m', 'main')
  const main = git(work, 'rev-parse', 'HEAD')
  const bare = join(root, host, `${path}.git`)
  mkdirSync(dirname(bare), { recursive: true })
  git(root, 'clone', '-q', '--bare', work, bare)
  rmSync(work, { recursive: true, force: true })
  return { repository: `${host}/${path}`, host, path, main, files: contents }
}

/** The blob URL of a file as each host writes it. */
export function blobUrl(repo: Pick<FixtureRepo, 'host' | 'path'>, ref: string, file: string, form: 'blob' | 'raw' = 'blob'): string {
  const encoded = file.split('/').map(encodeURIComponent).join('/')
  switch (repo.host) {
    case 'github.com':
      return form === 'raw' ? `https://raw.githubusercontent.com/${repo.path}/${ref}/${encoded}` : `https://github.com/${repo.path}/blob/${ref}/${encoded}`
    case 'gitlab.com':
      return `https://gitlab.com/${repo.path}/-/${form}/${ref}/${encoded}`
    default:
      return `https://bitbucket.org/${repo.path}/${form === 'raw' ? 'raw' : 'src'}/${ref}/${encoded}`
  }
}
