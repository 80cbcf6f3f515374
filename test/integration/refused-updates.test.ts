/**
 * A refused Update still hands the workflow a task the history never holds: the SDK evaluates every blocked condition
 * after it, and a replay is never handed it. A watcher and a coordinator whose histories cross the server's
 * continue-as-new suggestion while refused Updates pour in must decide only from what the history holds, or their
 * next replay fails with a nondeterminism error (what a flood of refused `watchFigures` did on a loaded machine).
 */
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { coordinatorWorkflowId, watcherWorkflowId } from '../../src/kernel/workflow-ids';
import { watchShardOf } from '../../src/watch/watcher-book';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';
import { heldWaits, startWatchingWorker, type WatchingWorker } from '../support/shard-watchers';
jest.setTimeout(300_000);

const SHARDS = 1;
let h: Harness;
let watching: WatchingWorker;

beforeAll(async () => {
  h = await createHarness();
  watching = await startWatchingWorker(h, SHARDS);
});
afterAll(async () => {
  await watching?.stop();
  await h?.close();
});

/** Sends Updates the validator refuses to the current run of `workflowId`, four at a time, until stopped. */
function floodRefused(workflowId: string, name: string, args: [unknown, ...unknown[]]): { stop(): Promise<number> } {
  let stopping = false;
  let refused = 0;
  const lane = async () => {
    while (!stopping) {
      await h.client.workflow
        .getHandle(workflowId)
        .executeUpdate(name, { args })
        .then(
          () => {
            throw new Error(`${name} was taken: the flood must send only what its validator refuses`);
          },
          () => (refused += 1),
        );
    }
  };
  const lanes = Array.from({ length: 4 }, lane);
  return {
    stop: async () => {
      stopping = true;
      await Promise.all(lanes);
      return refused;
    },
  };
}

/** Events that reach a run from outside its code: what a workflow task can be the answer to. */
const INCOMING = new Set([
  'EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED',
  'EVENT_TYPE_ACTIVITY_TASK_STARTED',
  'EVENT_TYPE_ACTIVITY_TASK_COMPLETED',
  'EVENT_TYPE_ACTIVITY_TASK_FAILED',
  'EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT',
  'EVENT_TYPE_ACTIVITY_TASK_CANCELED',
  'EVENT_TYPE_TIMER_FIRED',
  'EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
]);

/**
 * The workflow tasks that wrote the run's way out (a cancelled reader, a continue-as-new) with nothing new in history
 * to answer: tasks that only refused Updates, as the history tells.
 */
function decidedOnNothing(events: temporal.api.history.v1.IHistoryEvent[]): number[] {
  const typeOf = (event: temporal.api.history.v1.IHistoryEvent) =>
    temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? 'unknown';
  const found: number[] = [];
  let sinceLastTask: string[] = [];
  for (let index = 0; index < events.length; index += 1) {
    const type = typeOf(events[index]!);
    if (type !== 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED') {
      sinceLastTask.push(type);
      continue;
    }
    const written: string[] = [];
    for (let next = index + 1; next < events.length; next += 1) {
      const nextType = typeOf(events[next]!);
      if (nextType === 'EVENT_TYPE_WORKFLOW_TASK_SCHEDULED') break;
      written.push(nextType);
    }
    const answered = [...sinceLastTask, ...written].some((seen) => INCOMING.has(seen));
    const wayOut = written.some(
      (seen) =>
        seen === 'EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED' ||
        seen === 'EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
    );
    if (wayOut && !answered) found.push(Number(events[index]!.eventId));
    sinceLastTask = [];
  }
  return found;
}

/**
 * The run continued as new, decided only on what its history holds, its history has no failed workflow task, and it
 * replays on today's code.
 */
async function expectContinuedAndReplays(workflowId: string, runId: string): Promise<void> {
  const handle = h.client.workflow.getHandle(workflowId, runId);
  await waitFor(
    async () => (await handle.describe()).status.name === 'CONTINUED_AS_NEW',
    `${workflowId} to continue as new`,
    240_000,
  );
  const history = await handle.fetchHistory();
  const failedTasks = (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes);
  expect(failedTasks.map((event) => event.workflowTaskFailedEventAttributes?.failure?.message)).toEqual([]);
  expect(decidedOnNothing(history.events ?? [])).toEqual([]);
  const codePath = process.env.TEST_WORKFLOW_BUNDLE;
  if (!codePath) throw new Error('run with `npm test` (the jest globalSetup bundles the workflows)');
  await Worker.runReplayHistory({ workflowBundle: { codePath } }, history, workflowId);
}

test('a watcher whose run crosses the continue-as-new suggestion between refused Updates: its run replays', async () => {
  const longReading = await startWatchingWorker(h, SHARDS, true);
  try {
    const job = uniqueJob('refused-between');
    h.simulator.addJob({ ...job, workMs: 60 * 60_000 });
    const followUps = h.followUps(longReading.taskQueue);
    const polling = { initialInterval: '1h', maxInterval: '1h', timeout: '2h', settleWindow: '1s' };
    const { workflowId } = await followUps.start({ ...job, prompt: 'Keep working', polling });
    const watcherId = watcherWorkflowId(longReading.taskQueue, watchShardOf(job.projectId, job.jobId, SHARDS));
    await waitFor(
      async () =>
        (await heldWaits(h, longReading.taskQueue, SHARDS)).some(({ wait }) => wait.workflowId === workflowId),
      'the watcher to hold the wait',
    );
    const watcher = h.client.workflow.getHandle(watcherId);
    const { runId } = await watcher.describe();
    const run = h.client.workflow.getHandle(watcherId, runId);
    const length = async () => (await run.fetchHistory()).events?.length ?? 0;
    // One event at a time (a malformed signal, which the watcher ignores), each followed by refused Updates, so that
    // the workflow task in which the history first reaches the suggestion is, at some step, one that refused them.
    while ((await run.describe()).status.name === 'RUNNING') {
      const before = await length();
      await run.signal('unwatchJob', 'not an unwatch');
      await waitFor(async () => (await length()) >= before + 4, 'the signal to be taken');
      for (let refusal = 0; refusal < 3; refusal += 1)
        await expect(run.executeUpdate('awaitChanges', { args: ['not a look'] })).rejects.toThrow();
    }
    await expectContinuedAndReplays(watcherId, runId);
    await followUps.cancel(workflowId);
  } finally {
    await longReading.stop();
  }
});

test('a coordinator continues as new under a flood of refused check-ins, and its run replays', async () => {
  const taskQueue = watching.taskQueue;
  const followUps = h.followUps(taskQueue);
  const projectId = `refused-flood-${Date.now()}`;
  const coordinatorId = coordinatorWorkflowId(projectId);
  const jobs = Array.from({ length: 12 }, (_, index) => ({ projectId, jobId: `job-${index}` }));
  for (const job of jobs) h.simulator.addJob({ ...job, workMs: 200 });

  const first = await followUps.start({ ...jobs[0]!, prompt: 'First', polling: FAST_POLLING });
  await waitFor(
    async () =>
      (await h.client.workflow
        .getHandle(coordinatorId)
        .describe()
        .catch(() => null)) !== null,
    'the coordinator',
  );
  const { runId } = await h.client.workflow.getHandle(coordinatorId).describe();
  const flood = floodRefused(coordinatorId, 'enter', ['not a check-in']);
  const started = [first.workflowId];
  const continued = (async () => {
    // One follow-up after another until the run's history crosses the suggestion.
    for (const job of jobs.slice(1)) {
      const { workflowId } = await followUps.start({ ...job, prompt: 'Next', polling: FAST_POLLING });
      started.push(workflowId);
      if ((await h.client.workflow.getHandle(coordinatorId, runId).describe()).status.name !== 'RUNNING') break;
      await followUps.outcome(workflowId);
    }
    await expectContinuedAndReplays(coordinatorId, runId);
  })();
  await continued.finally(() => flood.stop());

  for (const workflowId of started) expect((await followUps.outcome(workflowId)).kind).toBe('completed');
});
