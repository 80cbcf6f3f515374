/**
 * What losing the job watchers costs the follow-ups that wait through them (issue 38 point 4): N follow-ups wait on the
 * defaults, every watcher of their task queue is terminated as an operator would, and each follow-up's cost is the time
 * from the terminate to its job's next read. Below 200 waits a watcher reads by its own timers and the worker's guard
 * restarts it (src/watch/watcher-guard.worker.ts); from 200 its long reader puts the waits back (watch-jobs.activity.ts). Either way
 * the new run reads every adopted wait at once, so the delay is the loss's, not the schedule's.
 */
import { addWaitingJobs, startBenchStack, startFollowUpsAndAwaitSends } from './bench-stack';
import { sleep } from './processes';
import { percentile } from './stats';
import { watcherWorkflowId } from '../../src/kernel/workflow-ids';
import { DEFAULT_WATCH_SHARDS } from '../../src/config/watch-defaults';

export interface LostWatcherRow {
  waiting: number;
  /** The reading the watchers did when terminated. */
  reading: 'timers' | 'long reader';
  terminated: number;
  /** Follow-ups whose job was read again after the terminate, of `waiting`. */
  readAgain: number;
  /** From the terminate to each job's next read (s): p50, p99, max. */
  delayS: { p50: number; p99: number; max: number };
}

/** How long the row waits for every job to be read again: well past the target (30 s, or two gaps of 60 s). */
const GIVE_UP_AFTER_MS = 5 * 60_000;

export async function runLostWatcher(options: {
  waiting: number;
  settleMs: number;
  log: (line: string) => void;
}): Promise<LostWatcherRow> {
  const stack = await startBenchStack({ workMs: 24 * 3_600_000 });
  try {
    await stack.worker.ready;
    const jobs = addWaitingJobs(stack, 'lost', options.waiting);
    await startFollowUpsAndAwaitSends(stack, jobs, { prompt: 'Lost watcher follow-up', polling: {} }, options.log);
    options.log(`lost watcher ${options.waiting}: settling ${options.settleMs / 1000}s`);
    await sleep(options.settleMs);
    let terminated = 0;
    const terminatedAtMs = Date.now();
    for (let shard = 0; shard < DEFAULT_WATCH_SHARDS; shard += 1) {
      const handle = stack.server.client.workflow.getHandle(watcherWorkflowId(stack.taskQueue, shard));
      const description = await handle.describe().catch(() => null);
      if (description?.status.name !== 'RUNNING') continue;
      await handle.terminate('bench: an operator terminates the job watchers');
      terminated += 1;
    }
    const readAfter = (jobId: string) =>
      (stack.requests.get(jobId) ?? []).find((request) => request.operation === 'get' && request.atMs > terminatedAtMs);
    const giveUpAt = Date.now() + GIVE_UP_AFTER_MS;
    while (Date.now() < giveUpAt && jobs.some((job) => !readAfter(job.jobId))) await sleep(1_000);
    const delays = jobs.flatMap((job) => {
      const read = readAfter(job.jobId);
      return read ? [(read.atMs - terminatedAtMs) / 1000] : [];
    });
    delays.sort((a, b) => a - b);
    const row: LostWatcherRow = {
      waiting: options.waiting,
      reading: options.waiting >= 200 ? 'long reader' : 'timers',
      terminated,
      readAgain: delays.length,
      delayS: {
        p50: percentile(delays, 50),
        p99: percentile(delays, 99),
        max: delays.at(-1) ?? Number.NaN,
      },
    };
    options.log(
      `lost watcher ${options.waiting}: ${row.readAgain} of ${options.waiting} read again, p50 ${row.delayS.p50.toFixed(1)} s, max ${row.delayS.max.toFixed(1)} s`,
    );
    return row;
  } finally {
    await stack.stop();
  }
}

export function renderLostWatcher(rows: LostWatcherRow[]): string[] {
  return [
    '| waiting | reading | watchers terminated | read again after the terminate | terminate → next read p50 / p99 / max (s) | target |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.waiting} | ${row.reading} | ${row.terminated} | ${row.readAgain} of ${row.waiting} | ${row.delayS.p50.toFixed(1)} / ${row.delayS.p99.toFixed(1)} / ${row.delayS.max.toFixed(1)} | ≤ 30 s or two gaps (120 s at the default 60 s cap) |`,
    ),
  ];
}
