/** Shared watching's defaults, for the worker's configuration and the library's (docs/HOW-IT-WORKS.md). */

/**
 * Shards of job watchers per task queue by default. Two: each watcher costs CPU and Actions while it has waits (its
 * book queries and heartbeats), and two books hold a few thousand waits (a wait past that polls for itself); more
 * shards hold more and spread the reading over more workers (docs/BENCHMARKS.md has the figures).
 */
export const DEFAULT_WATCH_SHARDS = 2;
