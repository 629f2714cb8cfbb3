/** The public API of evalferry: re-exports only. */
export { read } from './read.ts'
export { write } from './write.ts'
export { convert } from './convert.ts'
export type { ReadOptions, WriteOptions, ConvertOptions, FileConvertOptions, ServiceConvertOptions, ServiceAddressText, Reject } from './options.ts'
export { detect } from './detect.ts'
export type { Detection, DetectOptions } from './detect.ts'
export { EvalferryError, DataError, LayoutError, UsageError, FetchError } from './errors.ts'
export type { ErrorCode, Location } from './errors.ts'
export { newReport } from './report.ts'
export type { ConversionReport, RecordError, Warning } from './report.ts'
export type {
  EvalCase,
  Message,
  ContentBlock,
  Content,
  ToolCall,
  Turn,
  Rubric,
  Persona,
  Role,
  Extras,
  JsonValue,
  JsonObject,
} from './model.ts'
export type { FormatName, FormatAlias, FormatOption, Container, FieldMapping, RowMapper } from '../adapters/types.ts'
export { FORMAT_NAMES } from '../adapters/index.ts'
export { prefetch, resolve, findReferences, parseBlobUrl, writeManifest, rewriteDataset, cacheRoot, listCache, pruneCache, clearCache } from './resolver/index.ts'
export { PrefetchError } from './resolver/prefetch.ts'
export type {
  PrefetchOptions,
  PrefetchResult,
  UndeclaredHost,
  PrefetchFailure,
  CaseSource,
  ManifestEntry,
  ResolverOptions,
  HostConfig,
  HostType,
  BlobUrl,
  Reference,
  CachedRepository,
  CachedCommit,
  PruneResult,
} from './resolver/index.ts'
