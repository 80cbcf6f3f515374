/**
 * The worker's watcher guard (src/watch/watcher-guard.worker.ts) asks the server nothing while no watcher may hold a
 * wait: one look along the shards' chains when it starts, then only the watchers in sight, each until it ended.
 * Describes are counted by a client interceptor on the guard's own client.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@temporalio/client';
import { DefaultLogger } from '@temporalio/worker';
import { startWatcherGuard, WatchersInSight, type WatcherGuard } from '../../src/watch/watcher-guard.worker';
import { JOB_WATCHER_WORKFLOW_TYPE, watcherTaskQueue, watcherWorkflowId } from '../../src/kernel/workflow-ids';
import { createHarness, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const PERIOD_MS = 50;

/** A client whose describes are written down, workflow id by workflow id. */
function countingClient(described: string[]): Client {
  return new Client({
    connection: h.client.connection,
    namespace: 'default',
    interceptors: {
      workflow: [
        {
          describe: (input, next) => {
            described.push(input.workflowExecution.workflowId);
            return next(input);
          },
        },
      ],
    },
  });
}

function guard(queue: string, described: string[], inSight: WatchersInSight): WatcherGuard {
  return startWatcherGuard({
    temporal: countingClient(described),
    taskQueue: queue,
    shards: 2,
    start: {},
    inSight,
    log: new DefaultLogger('ERROR'),
    everyMs: PERIOD_MS,
  });
}

test('the guard asks nothing at rest, looks at each watcher in sight on its period, lets go of one that ended, and finds a running one when it starts', async () => {
  const queue = h.taskQueue();
  const worker = await h.worker(queue, undefined, { coordination: { watchShards: 2 } });
  const watcherId = watcherWorkflowId(queue, 0);
  await worker.runUntil(async () => {
    const described: string[] = [];
    const inSight = new WatchersInSight();
    const first = guard(queue, described, inSight);
    try {
      // At the start: one look at each shard's first watcher id (nothing ever ran under either), then silence.
      await first.sweep();
      const swept = described.length;
      expect(new Set(described)).toEqual(new Set([watcherWorkflowId(queue, 0), watcherWorkflowId(queue, 1)]));
      await sleep(20 * PERIOD_MS);
      expect(described).toHaveLength(swept);

      // A watcher in sight (as a registration from this worker puts it): looked at on every period.
      await h.client.workflow.start(JOB_WATCHER_WORKFLOW_TYPE, {
        workflowId: watcherId,
        taskQueue: watcherTaskQueue(queue),
        args: [{}],
      });
      inSight.add(watcherId);
      const looksAt = () => described.filter((id) => id === watcherId).length;
      const looksBefore = looksAt();
      await waitFor(() => looksAt() >= looksBefore + 3, 'looks at the watcher in sight');

      // Ended with nothing in its book: let go of, and nothing is asked any more.
      await h.client.workflow.getHandle(watcherId).terminate('test: a watcher with no waits ends');
      await waitFor(() => inSight.size === 0, 'the guard to let go of the ended watcher');
      const letGo = described.length;
      await sleep(20 * PERIOD_MS);
      expect(described).toHaveLength(letGo);
    } finally {
      first.stop();
    }

    // A guard that starts while a watcher runs (a restarted worker) brings it into sight by its first look.
    await h.client.workflow.start(JOB_WATCHER_WORKFLOW_TYPE, {
      workflowId: watcherId,
      taskQueue: watcherTaskQueue(queue),
      args: [{}],
    });
    const inSightAfterRestart = new WatchersInSight();
    const second = guard(queue, [], inSightAfterRestart);
    try {
      await second.sweep();
      expect(inSightAfterRestart.ids()).toEqual([watcherId]);
    } finally {
      second.stop();
      await h.client.workflow.getHandle(watcherId).terminate('test: done');
    }
  });
});
