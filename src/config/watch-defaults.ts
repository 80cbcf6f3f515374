/** Shared watching's defaults, for the worker's configuration and the library's (docs/HOW-IT-WORKS.md). */

/**
 * Shards of job watchers per task queue by default. Two: a watcher costs about 12 ms of CPU a second while it has waits
 * (its book queries and heartbeats), and two books hold some 5,600 waits (a wait past that polls for itself); more
 * shards hold more and spread the reading over more workers (10,000 waiting: 8, docs/BENCHMARKS.md).
 */
export const DEFAULT_WATCH_SHARDS = 2;

/**
 * The shortest first poll gap that waits through the watchers by default. A watcher reads a new wait at its next book
 * refresh (every 2 s) after the send registered it (up to 1.3 s when that starts the watcher): about 3.3 s after the
 * send at worst. The default schedule's first read, 5 s after the send, is within that; a faster schedule would read
 * late, so it polls for itself (docs/BENCHMARKS-HISTORY.md, "Shared watching as the default").
 */
export const DEFAULT_WATCH_MIN_INTERVAL_MS = 5_000;
