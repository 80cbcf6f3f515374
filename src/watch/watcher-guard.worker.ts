/**
 * Notices, from the worker, a job watcher terminated with waits in its book, and starts a new run that takes them
 * over (its adoptBook). A watcher that reads by its own timers has nothing running between its turns that would
 * notice: without this, its follow-ups would learn of it only after their silence (sixty poll gaps, an hour at the
 * default schedule). A long reader notices for itself and puts its waits back (watch-jobs.activity.ts); this finds that case
 * already mended.
 *
 * It describes each shard's watcher ids on a period, along the shard's chain (`…/<shard>/1`, ...) as far as a watcher
 * was ever there (one with no watcher running, every other period): a describe
 * is not a billed Action, so a deployment with nothing waiting pays nothing billed for it. A terminated run's book is
 * read by query (a closed run still answers) once per run, so that a run terminated with no waits is left alone.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '@temporalio/common';
import type { WatcherStart } from './messages';
import { watchChangesQuery } from './messages';
import { JOB_WATCHER_WORKFLOW_TYPE, MAX_OVERFLOW, watcherTaskQueue, watcherWorkflowId } from '../kernel/workflow-ids';
import { ADOPT_CLOSED_WITHIN_MS } from './adopt-book.activity';
import { WATCHER_SUMMARY } from './start-watching.activity';

/**
 * How often a shard whose watcher ran at the last look is described. A lost watcher must cost a follow-up at most 30 s:
 * this, plus a start and the new run's first reads, stays well inside it.
 */
export const WATCHER_CHECK_EVERY_MS = 10_000;
/**
 * A shard with no watcher running at the last look is described every this many periods: a watcher started and
 * terminated in between is still found within 20 s, and a deployment with nothing waiting asks half as often.
 */
const IDLE_SHARD_EVERY_PERIODS = 2;

export interface WatcherGuardOptions {
  temporal: Client;
  /** The follow-ups' task queue: its watchers are the ones guarded. */
  taskQueue: string;
  shards: number;
  start: WatcherStart;
  log: Logger;
  everyMs?: number;
}

export interface WatcherGuard {
  /** Runs one check of every shard now (the period runs them too, an idle shard every other period). */
  check(): Promise<void>;
  stop(): void;
}

export function startWatcherGuard(options: WatcherGuardOptions): WatcherGuard {
  const { temporal, taskQueue, shards, log, everyMs = WATCHER_CHECK_EVERY_MS } = options;
  /** The terminated run each watcher id was last checked for: its book is read once. */
  const seen = new Map<string, string>();
  /** Watcher ids with no watcher running at the last look, and of those, ids no workflow was ever under. */
  const idle = new Set<string>();
  const absent = new Set<string>();
  let periods = 0;
  let checking: Promise<void> | null = null;

  /** Checks one watcher id; says whether any workflow was ever under it (the chain goes on past it only then). */
  const checkWatcher = async (watcherId: string, everyOne: boolean): Promise<boolean> => {
    if (!everyOne && idle.has(watcherId) && periods % IDLE_SHARD_EVERY_PERIODS !== 0) return !absent.has(watcherId);
    let description;
    try {
      description = await temporal.workflow.getHandle(watcherId).describe();
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      idle.add(watcherId);
      absent.add(watcherId);
      return false;
    }
    absent.delete(watcherId);
    const { status, type, runId, closeTime } = description;
    if (status.name === 'RUNNING') idle.delete(watcherId);
    else idle.add(watcherId);
    if (status.name !== 'TERMINATED' || type !== JOB_WATCHER_WORKFLOW_TYPE || seen.get(watcherId) === runId)
      return true;
    seen.set(watcherId, runId);
    if (!closeTime || Date.now() - closeTime.getTime() > ADOPT_CLOSED_WITHIN_MS) return true;
    await takeOverWaits(options, watcherId, runId);
    return true;
  };

  const check = (everyOne = true): Promise<void> => {
    checking ??= checkEveryChain(
      taskQueue,
      shards,
      (watcherId) => checkWatcher(watcherId, everyOne),
      (watcherId, error) => {
        // The next period tries again: a server that is away now is the usual cause.
        seen.delete(watcherId);
        log.debug('Could not check a job watcher', { watcherId, error: String(error) });
      },
    ).finally(() => {
      checking = null;
    });
    return checking;
  };

  const timer = setInterval(() => {
    periods += 1;
    void check(false);
  }, everyMs);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}

/**
 * A watcher terminated with waits in its book: a new one is started under its id, and takes them over from the
 * terminated run (adoptBook). Nothing to do when its book was empty or another start came first.
 */
async function takeOverWaits(
  { temporal, taskQueue, start, log }: Pick<WatcherGuardOptions, 'temporal' | 'taskQueue' | 'start' | 'log'>,
  watcherId: string,
  runId: string,
): Promise<void> {
  const book = await temporal.workflow.getHandle(watcherId, runId).query(watchChangesQuery, 0);
  if (book.upserts.length === 0) return;
  log.warn('A job watcher was terminated with waits in its book: starting a new one to take them over', {
    watcherId,
    terminatedRunId: runId,
    waits: book.upserts.length,
  });
  try {
    await temporal.workflow.start(JOB_WATCHER_WORKFLOW_TYPE, {
      workflowId: watcherId,
      taskQueue: watcherTaskQueue(taskQueue),
      args: [start],
      staticSummary: WATCHER_SUMMARY,
    });
  } catch (error) {
    // Another worker, or a follow-up's registration, started one first: that run takes the waits over.
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** Each shard's chain of watcher ids, in order, as far as a workflow was ever under one (or a check failed). */
async function checkEveryChain(
  taskQueue: string,
  shards: number,
  checkWatcher: (watcherId: string) => Promise<boolean>,
  failed: (watcherId: string, error: unknown) => void,
): Promise<void> {
  for (let shard = 0; shard < shards; shard += 1) {
    for (let overflow = 0; overflow <= MAX_OVERFLOW; overflow += 1) {
      const watcherId = watcherWorkflowId(taskQueue, shard, overflow);
      try {
        if (!(await checkWatcher(watcherId))) break;
      } catch (error) {
        failed(watcherId, error);
        break;
      }
    }
  }
}
