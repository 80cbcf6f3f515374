/** Shared watching's defaults, for the worker's configuration and the library's (docs/HOW-IT-WORKS.md). */

/**
 * Shards of job watchers per task queue by default. Two: each watcher costs CPU and Actions while it has waits (its
 * book queries and heartbeats), and two books hold a few thousand waits (a wait past that polls for itself); more
 * shards hold more and spread the reading over more workers (docs/BENCHMARKS.md has the figures).
 */
export const DEFAULT_WATCH_SHARDS = 2;

/**
 * The shortest first poll gap that waits through the watchers by default. A watcher reads a new wait only at its next
 * book refresh after the send registered it, a few seconds at worst: the default schedule's first read, 5 s after the
 * send, is within that; a faster schedule would read late, so it polls for itself (docs/BENCHMARKS.md).
 */
export const DEFAULT_WATCH_MIN_INTERVAL_MS = 5_000;
