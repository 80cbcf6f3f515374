/**
 * Notices, from the worker, a job watcher terminated with waits in its book, and starts a new run that takes them
 * over (its adoptBook). A watcher that reads by its own timers has nothing running between its turns that would
 * notice: without this, its follow-ups would learn of it only after their silence (sixty poll gaps, an hour at the
 * default schedule). A long reader notices for itself and puts its waits back (watch-jobs.activity.ts); this finds that
 * case already mended.
 *
 * It keeps in sight only the watchers that may hold waits: those this worker registered a wait with, and those it
 * found running when it started (another worker's, or its own before a restart). Each is described on a period until
 * it is seen ended with nothing to take over (a watcher ends ten minutes after its last wait). So a deployment with
 * nothing waiting asks the server nothing at all: one look along every shard's chain when the worker starts, then
 * silence. A terminated run's book is read once per run (terminated-book.client.ts), so that a run terminated with no waits
 * is left alone.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '@temporalio/common';
import type { WatcherStart } from './messages';
import { JOB_WATCHER_WORKFLOW_TYPE, MAX_OVERFLOW, watcherTaskQueue, watcherWorkflowId } from '../kernel/workflow-ids';
import { ADOPT_CLOSED_WITHIN_MS } from './adopt-book.activity';
import { WATCHER_SUMMARY } from './start-watching.activity';
import { terminatedRunBook } from './terminated-book.client';

/**
 * How often a watcher in sight is described. A lost watcher must cost a follow-up at most 30 s: this, plus a start and
 * the new run's first reads, stays well inside it.
 */
export const WATCHER_CHECK_EVERY_MS = 10_000;

/**
 * The watcher ids a worker keeps in sight, shared by its registrations (start-watching.activity.ts adds each watcher a
 * wait reached) and its guard (which adds those it finds running and drops those it finds ended). A drop takes back
 * only what the look saw: a registration that came meanwhile keeps its watcher in sight.
 */
export class WatchersInSight {
  private readonly adds = new Map<string, number>();

  add(watcherId: string): void {
    this.adds.set(watcherId, (this.adds.get(watcherId) ?? 0) + 1);
  }

  /** A mark to drop by: the drop is undone by any add after it. */
  mark(watcherId: string): number {
    return this.adds.get(watcherId) ?? 0;
  }

  drop(watcherId: string, mark: number): void {
    if (this.adds.get(watcherId) === mark) this.adds.delete(watcherId);
  }

  get size(): number {
    return this.adds.size;
  }

  ids(): string[] {
    return [...this.adds.keys()];
  }
}

export interface WatcherGuardOptions {
  temporal: Client;
  /** The follow-ups' task queue: its watchers are the ones guarded. */
  taskQueue: string;
  shards: number;
  start: WatcherStart;
  inSight: WatchersInSight;
  log: Logger;
  everyMs?: number;
}

export interface WatcherGuard {
  /** Looks along every shard's chain now, as at the start, and brings every watcher running into sight. */
  sweep(): Promise<void>;
  stop(): void;
}

/** What one look at a watcher id found: nothing ever under it, a watcher that may hold waits, or one that ended. */
type Look = 'absent' | 'in-sight' | 'ended';

export function startWatcherGuard(options: WatcherGuardOptions): WatcherGuard {
  const { temporal, taskQueue, shards, inSight, log, everyMs = WATCHER_CHECK_EVERY_MS } = options;
  /** The terminated run each watcher id was last checked for: its book is read once. */
  const seen = new Map<string, string>();
  let checking: Promise<void> | null = null;

  const look = async (watcherId: string): Promise<Look> => {
    const mark = inSight.mark(watcherId);
    let description;
    try {
      description = await temporal.workflow.getHandle(watcherId).describe();
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      inSight.drop(watcherId, mark);
      return 'absent';
    }
    const { status, type, runId, closeTime } = description;
    const kept = type === JOB_WATCHER_WORKFLOW_TYPE && (status.name === 'RUNNING' || (await tookOver(runId)));
    if (kept) inSight.add(watcherId);
    else inSight.drop(watcherId, mark);
    return kept ? 'in-sight' : 'ended';

    /** A run terminated lately and not checked before: its waits go to a new run, which holds them from here on. */
    async function tookOver(runId: string): Promise<boolean> {
      if (status.name !== 'TERMINATED' || seen.get(watcherId) === runId) return false;
      seen.set(watcherId, runId);
      if (!closeTime || Date.now() - closeTime.getTime() > ADOPT_CLOSED_WITHIN_MS) return false;
      return takeOverWaits(options, watcherId, runId);
    }
  };

  // The next look tries again: a server that is away now is the usual cause.
  const failed = (watcherId: string, error: unknown) => {
    seen.delete(watcherId);
    log.debug('Could not check a job watcher', { watcherId, error: String(error) });
  };

  /** One look at a time: a period that comes while the last look still runs is skipped. */
  const once = (run: () => Promise<void>): Promise<void> => {
    checking ??= run().finally(() => {
      checking = null;
    });
    return checking;
  };

  const sweep = () => once(() => lookAlongEveryChain(taskQueue, shards, look, failed));
  const lookInSight = () =>
    once(async () => {
      for (const watcherId of inSight.ids()) await look(watcherId).catch((error: unknown) => failed(watcherId, error));
    });

  void sweep();
  const timer = setInterval(() => {
    if (inSight.size > 0) void lookInSight();
  }, everyMs);
  timer.unref();
  return { sweep, stop: () => clearInterval(timer) };
}

/**
 * A watcher terminated with waits in its book: a new one is started under its id, and takes them over from the
 * terminated run (adoptBook). Says whether there were waits to take over (another start may have come first: that
 * run takes them over).
 */
async function takeOverWaits(
  { temporal, taskQueue, start, log }: Pick<WatcherGuardOptions, 'temporal' | 'taskQueue' | 'start' | 'log'>,
  watcherId: string,
  runId: string,
): Promise<boolean> {
  const waits = await terminatedRunBook(temporal, watcherId, runId);
  if (waits.length === 0) return false;
  log.warn('A job watcher was terminated with waits in its book: starting a new one to take them over', {
    watcherId,
    terminatedRunId: runId,
    waits: waits.length,
  });
  try {
    await temporal.workflow.start(JOB_WATCHER_WORKFLOW_TYPE, {
      workflowId: watcherId,
      taskQueue: watcherTaskQueue(taskQueue),
      args: [start],
      staticSummary: WATCHER_SUMMARY,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  return true;
}

/** Each shard's chain of watcher ids, in order, as far as a workflow was ever under one (or a look failed). */
async function lookAlongEveryChain(
  taskQueue: string,
  shards: number,
  look: (watcherId: string) => Promise<Look>,
  failed: (watcherId: string, error: unknown) => void,
): Promise<void> {
  for (let shard = 0; shard < shards; shard += 1) {
    for (let overflow = 0; overflow <= MAX_OVERFLOW; overflow += 1) {
      const watcherId = watcherWorkflowId(taskQueue, shard, overflow);
      try {
        if ((await look(watcherId)) === 'absent') break;
      } catch (error) {
        failed(watcherId, error);
        break;
      }
    }
  }
}
