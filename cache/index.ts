/** The repository cache: location and layout, locks, atomic writes, git and raw-file HTTP. */

export { type CacheLocationOptions, type RepoLayout, cacheRoot, commitFile, repoLayout } from './layout.ts'
export { type LockOptions, withLock } from './lock.ts'
export { type GitRemote, type GitRunOptions, gitEnvironment, lsRemote } from './git.ts'
export { fetchRawFile, type RawFetchOptions, type RawResult } from './raw.ts'
export { type FetchFilesOptions, type RefListing, fetchFiles, initRepoDir, readRefListing, touchCommit, writeRefListing } from './store.ts'
export { type CachedCommit, type CachedRepository, type PruneResult, clearCache, listCache, parseDuration, pruneCache } from './manage.ts'
export { sweepTemp } from './fs.ts'
