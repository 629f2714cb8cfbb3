/** The repository cache: location and layout, locks, atomic writes, git and raw-file HTTP. */

export { type CacheLocationOptions, type RepoLayout, cacheRoot, commitFile, repoLayout } from './layout.ts'
export { type LockOptions, releaseHeldLocks, withLock } from './lock.ts'
export { type GitRemote, type GitRunOptions, gitEnvironment, lsRemote } from './git.ts'
export { DEFAULT_RETRY, fetchRawFile, type RawFetchOptions, type RawResult, type RetryPolicy } from './raw.ts'
export { type CachedState, type FetchFilesOptions, MissingFileError, NotACommitError, type RefListing, checkCacheRoot, checkCachedFile, fetchFiles, gitBlobId, groupBy, initRepoDir, openCacheRoot, readRefListing, readSums, earlierCommits, touchCommit, writeRefListing } from './store.ts'
export { type CachedCommit, type CachedRepository, type PruneResult, clearCache, listCache, parseDuration, pruneCache, rootKind } from './manage.ts'
export { sweepTemp } from './fs.ts'
