/**
 * Worker settings chosen for this workload (docs/BENCHMARKS.md has the measurements behind them):
 * - a follow-up's workflow wakes only when the job changes (a few times in its life), so caching every one of
 *   thousands of waiting follow-ups buys nothing and costs memory; an evicted one replays a short history;
 * - after a worker dies its sticky queue holds the next task of each cached workflow until this timeout (the SDK's
 *   default is 10s), so it is short;
 * - polls closer than 30s loop inside one activity, which holds an activity slot meanwhile; past `pollLoopLimit`
 *   of them, waits sleep on Temporal's retry timer instead, so reads, retries and lane checks always find a slot.
 */
export const WORKER_DEFAULTS = {
  // 100, not the SDK's 1,000 or our earlier 500: thousands waiting on the watchers need none cached (RSS at 10,000
  // halved), and a burst of 1,000 sends came 3 % slower for the replays (docs/BENCHMARKS.md, "Idle cost").
  maxCachedWorkflows: 100,
  stickyQueueScheduleToStartTimeout: '3s',
  maxConcurrentActivities: 2_000,
} as const;

/** How many polling loops a worker with this many activity slots lets sleep at once: all but a reserve of up to 200. */
export function pollLoopLimit(maxConcurrentActivities: number): number {
  const reserve = Math.min(200, Math.max(10, Math.ceil(maxConcurrentActivities / 10)));
  return Math.max(0, maxConcurrentActivities - reserve);
}
