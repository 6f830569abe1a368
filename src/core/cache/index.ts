/**
 * The watch cache (upstream's cacher; docs/API.md, "Watch"), the store compactor, and
 * `encodeOnce` for the doors.
 */
export { WatchCache, type WatchCacheOptions, DEFAULT_WINDOW_MS, DEFAULT_FRESHNESS_TIMEOUT_MS, DEFAULT_WATCHER_BUFFER } from './watch-cache';
export { ResourceCache, TooOldResourceVersion, type WatchRequest } from './resource-cache';
export { CacheWatcher, errorWatch, BOOKMARK_INTERVAL_MS, BOOKMARK_BEFORE_DEADLINE_MS } from './cache-watcher';
export { CachedObject, CacheEvent, compareKeys } from './cached-object';
export { deepFreeze } from '../../util/frozen';
export { Compactor, type CompactorOptions, DEFAULT_COMPACTION_INTERVAL_MS } from './compactor';
export { encodeOnce, isShared } from '../../codecs/encode-once';
