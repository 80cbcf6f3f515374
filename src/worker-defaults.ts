/**
 * Worker settings chosen for this workload (docs/BENCHMARKS.md has the measurements behind them):
 * - a follow-up's workflow wakes only when the job changes (a few times in its life), so caching every one of
 *   thousands of waiting follow-ups buys nothing and costs memory; an evicted one replays a short history;
 * - after a worker dies its sticky queue holds the next task of each cached workflow until this timeout (the SDK's
 *   default is 10s), so it is short;
 * - polls closer than 30s loop inside one activity, which holds an activity slot meanwhile.
 */
export const WORKER_DEFAULTS = {
  maxCachedWorkflows: 500,
  stickyQueueScheduleToStartTimeout: '3s',
  maxConcurrentActivities: 2_000,
} as const;

