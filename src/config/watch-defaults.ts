/** Shared watching's defaults, for the worker's configuration and the library's (docs/HOW-IT-WORKS.md). */

/**
 * Shards of job watchers per task queue. Two: each watcher costs CPU and Actions while it has waits, and a shard
 * whose book is full grows a chain (`…/<shard>/1`, `/2`, ...) that takes the waits past it, so the shards only
 * spread the reading; two let two workers read (docs/BENCHMARKS.md has the figures).
 */
export const DEFAULT_WATCH_SHARDS = 2;
