/** A worker that watches with shard watchers, and what those watchers hold: for the shared-watching test files. */
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { FollowUpWorker } from '../../src/worker/follow-up-worker';
import type { Harness } from './harness';
import { watchChangesQuery, type WatchRegistration } from '../../src/watch/messages';
import { watcherWorkflowId } from '../../src/kernel/workflow-ids';

export interface WatchingWorker {
  taskQueue: string;
  shards: number;
  stop(): Promise<void>;
}

/**
 * A worker on a task queue of its own, watching with `shards` shard watchers that read as soon as a read is due; with
 * `longReader`, its watchers read with their long activity however small their book.
 */
export async function startWatchingWorker(h: Harness, shards: number, longReader = false): Promise<WatchingWorker> {
  const taskQueue = h.taskQueue();
  const worker: FollowUpWorker = await h.worker(taskQueue, undefined, {
    coordination: { watchShards: shards, ...(longReader ? { watchLongReaderFrom: 0 } : {}) },
  });
  const running = worker.run();
  return {
    taskQueue,
    shards,
    stop: async () => {
      worker.shutdown();
      await running;
    },
  };
}

export interface HeldWait {
  watcher: WorkflowHandle;
  wait: WatchRegistration;
}

/** Every wait the running shard watchers of `taskQueue` hold (a terminated or ended watcher holds none). */
export async function heldWaits(h: Harness, taskQueue: string, shards: number): Promise<HeldWait[]> {
  const held: HeldWait[] = [];
  for (let shard = 0; shard < shards; shard += 1) {
    const watcher = h.client.workflow.getHandle(watcherWorkflowId(taskQueue, shard));
    try {
      if ((await watcher.describe()).status.name !== 'RUNNING') continue;
      const changes = await watcher.query(watchChangesQuery, 0);
      held.push(...changes.upserts.map((wait) => ({ watcher, wait })));
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }
  return held;
}
