/**
 * The worker's watcher guard (src/watch/watcher-guard.worker.ts) asks the server nothing while no watcher may hold a
 * wait: one look along the shards' chains when it starts, then only the watchers in sight, each until it ended.
 * Describes are counted by a client interceptor on the guard's own client.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@temporalio/client';
import { DefaultLogger } from '@temporalio/worker';
import { startWatcherGuard, WatchersInSight, type WatcherGuard } from '../../src/watch/watcher-guard.worker';
import { terminatedRunBook } from '../../src/watch/terminated-book.client';
import { unwatchJobSignal, watchJobBatchSignal, type WatchRegistration } from '../../src/watch/messages';
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

/** A first wait of follow-up `workflowId` on a 2 s gap, as a follow-up registers it. */
function registration(workflowId: string): WatchRegistration {
  const now = Date.now();
  return {
    workflowId,
    runId: `${workflowId}-run`,
    projectId: 'proj-guard',
    jobId: `job-${workflowId}`,
    known: null,
    acceptUnchangedFromMs: null,
    schedule: {
      startedAtMs: now,
      initialIntervalMs: 2_000,
      backoffCoefficient: 1,
      maxIntervalMs: 2_000,
      deadlineMs: now + 600_000,
    },
    readAtOnce: true,
    round: 1,
    replyTo: `${workflowId}/reply`,
  };
}

test('a watcher terminated before any worker ran it (no worker polls its queue): its book is what its history holds, the guard takes its waits over, or lets go of it when it held none', async () => {
  // No worker at all on this queue: every watcher started here is terminated before its first workflow task, which
  // the server refuses to query for ever. The guard used to ask again on every period.
  const queue = h.taskQueue();
  const watcherId = watcherWorkflowId(queue, 0);
  const started = await h.client.workflow.signalWithStart(JOB_WATCHER_WORKFLOW_TYPE, {
    workflowId: watcherId,
    taskQueue: watcherTaskQueue(queue),
    args: [{ registrations: [registration('carried')] }],
    signal: watchJobBatchSignal,
    signalArgs: [
      [registration('kept'), registration('left'), { workflowId: 'malformed' } as unknown as WatchRegistration],
    ],
  });
  await started.signal(unwatchJobSignal, { workflowId: 'left', replyTo: 'left/reply' });
  await started.signal(watchJobBatchSignal, 'not a batch' as unknown as WatchRegistration[]);
  await started.terminate('test: terminated before any worker ran it');
  const firstRunId = (await started.describe()).runId;
  const book = await terminatedRunBook(h.client, watcherId, firstRunId);
  expect(book.map((wait) => wait.workflowId).sort()).toEqual(['carried', 'kept']);

  const described: string[] = [];
  const inSight = new WatchersInSight();
  const taking = guard(queue, described, inSight);
  try {
    await taking.sweep();
    // A new run under the id, to take the waits over, and kept in sight.
    const taker = await h.client.workflow.getHandle(watcherId).describe();
    expect(taker.runId).not.toBe(firstRunId);
    expect(taker.status.name).toBe('RUNNING');
    expect(inSight.ids()).toEqual([watcherId]);

    // Terminated before any worker ran it too, with nothing in its history: let go of, and asked nothing more.
    await h.client.workflow.getHandle(watcherId).terminate('test: a watcher that held nothing');
    await taking.sweep();
    expect(inSight.size).toBe(0);
    expect((await h.client.workflow.getHandle(watcherId).describe()).runId).toBe(taker.runId);
    const letGo = described.length;
    await sleep(20 * PERIOD_MS);
    expect(described).toHaveLength(letGo);
  } finally {
    taking.stop();
  }
});
