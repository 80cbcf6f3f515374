/**
 * Shared watching (AGENT_WATCH_SHARDS): waiting follow-ups are read by their shard's job watcher instead of each
 * polling for itself. The same rules decide what a read means; these tests check that results stay right, that a
 * waiting follow-up has no activity of its own pending, and that a follow-up survives its watcher going away.
 */
import {
  ServiceError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { defaultPayloadConverter } from '@temporalio/common';
import { setTimeout } from 'node:timers/promises';
import { Worker } from '@temporalio/worker';
import { ExitCode } from '../../src/cli';
import type { FollowUpInput, FollowUpOutcome, FollowUpStatus } from '../../src/client';
import type { JobRef } from '../../src/kernel/agent-job';
import { FollowUpReportSchema } from '../../src/command-line/json-output';
import { describeStatus } from '../../src/command-line/render';
import { watchShardOf } from '../../src/watch/watcher-book';
import { runCliOn, startCliOn } from '../support/cli-runner';
import {
  createHarness,
  FAST_POLLING,
  TEST_SERVER_CONTINUE_AS_NEW_AFTER,
  uniqueJob,
  waitFor,
  type Harness,
} from '../support/harness';
import { heldWaits, startWatchingWorker, type WatchingWorker } from '../support/shard-watchers';
import {
  awaitChangesUpdate,
  LIVE_FIGURES_RENEW_WITHIN_MS,
  reportReadsUpdate,
  watchChangesQuery,
  watchedWaitQuery,
  WATCHER_CONTINUING,
  watchFiguresUpdate,
  type WaitReadReport,
} from '../../src/watch/messages';
import { watcherTaskQueue, watcherWorkflowId } from '../../src/kernel/workflow-ids';

const SHARDS = 2;
let h: Harness;
let watching: WatchingWorker;
let taskQueue: string;

beforeAll(async () => {
  h = await createHarness();
  watching = await startWatchingWorker(h, SHARDS);
  taskQueue = watching.taskQueue;
});
afterAll(async () => {
  await watching?.stop();
  await h?.close();
});

/** An event a signal, an update or a query written as one would leave: what asking a watcher must never add. */
function isMessageEvent(event: temporal.api.history.v1.IHistoryEvent): boolean {
  return Boolean(
    event.workflowExecutionSignaledEventAttributes ??
    event.workflowExecutionUpdateAdmittedEventAttributes ??
    event.workflowExecutionUpdateAcceptedEventAttributes ??
    event.workflowExecutionUpdateCompletedEventAttributes,
  );
}

/**
 * An Update refused without a word in history: by its validator, or by the server while the workflow's task is being
 * tried again ("Workflow Task in failed state", or the task that carried it failed), while ten Updates are in flight
 * already, or before it was accepted: dropped by the server with the others in flight ("aborted": a flood has
 * hundreds a second, which the client tries again until it gives up), or as the run continues as new ("closing").
 */
function refusedUnwritten(reason: unknown): boolean {
  return (
    reason instanceof WorkflowUpdateFailedError ||
    (reason instanceof ServiceError &&
      /FAILED_PRECONDITION.*(Workflow Task in failed state|unexpected workflow task failure)|RESOURCE_EXHAUSTED.*concurrent in-flight updates|UNAVAILABLE.*workflow update was aborted|workflow is closing|aborted by closing workflow/.test(
        String(reason.cause),
      ))
  );
}

/** The events of a workflow's runs from `firstRunId` to the current one, oldest first (continue-as-new links them). */
async function eventsSinceRun(
  workflowId: string,
  firstRunId: string,
): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  const runs: temporal.api.history.v1.IHistoryEvent[][] = [];
  let runId = (await h.client.workflow.getHandle(workflowId).describe()).runId;
  for (;;) {
    const events = (await h.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
    runs.unshift(events);
    const previous = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (runId === firstRunId || !previous) return runs.flat();
    runId = previous;
  }
}

/** Sends an Update again, as a person would, while the watcher refuses it for continuing as new. */
async function askedAgainWhileContinuing<T>(send: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await send();
    } catch (error) {
      const cause = (error as { cause?: { type?: unknown } }).cause;
      if (!(error instanceof WorkflowUpdateFailedError && cause?.type === WATCHER_CONTINUING)) throw error;
      await setTimeout(250);
    }
  }
}

/** The follow-up completed with the PR link its job has now, in the simulator. */
function expectEndedWithItsJobsPr(outcome: FollowUpOutcome, job: JobRef): void {
  expect(outcome.kind).toBe('completed');
  expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe(
    h.simulator.job(job.projectId, job.jobId).prLink,
  );
}

/** Every wait the shard watchers of this task queue hold. */
async function watched(): Promise<string[]> {
  return (await heldWaits(h, taskQueue, SHARDS)).map(({ wait }) => wait.workflowId);
}

test('30 follow-ups to 30 jobs of 3 projects: every result right, each message sent once, no job read for another', async () => {
  const followUps = h.followUps(taskQueue);
  const jobs = Array.from({ length: 30 }, (_, i) => ({
    projectId: `watch-p${i % 3}-${taskQueue.slice(5, 13)}`,
    jobId: `job-${i}`,
  }));
  for (const job of jobs) h.simulator.addJob({ ...job, workMs: 1_500 });
  const started = await Promise.all(
    jobs.map((job) => followUps.start({ ...job, prompt: `Fix ${job.jobId}`, polling: FAST_POLLING })),
  );
  const outcomes = await Promise.all(started.map(({ workflowId }) => followUps.outcome(workflowId)));
  outcomes.forEach((outcome, i) => {
    expect(outcome.kind).toBe('completed');
    const job = jobs[i] as (typeof jobs)[number];
    const final = h.simulator.job(job.projectId, job.jobId);
    expect(outcome.kind === 'completed' ? outcome.result.job.id : null).toBe(final.id);
    expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe(final.prLink);
    expect(final.prLink).toMatch(/\/pull\/\d+$/);
    expect(h.simulator.counts(job.projectId, job.jobId)).toMatchObject({ posts: 1, prompts: [`Fix ${job.jobId}`] });
  });
  // Each follow-up left its watcher when it ended.
  await waitFor(async () => (await watched()).length === 0, 'the watchers to forget the ended follow-ups');
});

test("the send registers the first wait: the follow-up signals no registration of its own, and a shard's first follow-up starts its watcher without an activity of its own", async () => {
  // A task queue of its own, so that its watchers are not running yet.
  const queue = h.taskQueue();
  const own = await h.worker(queue, undefined, { coordination: { watchShards: SHARDS } });
  await own.runUntil(async () => {
    const job = uniqueJob('first-wait');
    h.simulator.addJob({ ...job, workMs: 1_500 });
    const followUps = h.followUps(queue);
    const { workflowId } = await followUps.start({ ...job, prompt: 'Fix it', polling: FAST_POLLING });
    const outcome = await followUps.outcome(workflowId);
    expectEndedWithItsJobsPr(outcome, job);
    const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const activities = events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    const signalled = events.flatMap(
      (event) => event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName ?? [],
    );
    // A wait per answer: the first registered by the send, any later one through registerWatch (which makes sure the
    // watcher is ours), never by a signal of the follow-up's own.
    const answers = events.filter((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'jobReads');
    expect(activities.filter((name) => name === 'registerWatch')).toHaveLength(answers.length - 1);
    expect(signalled).not.toContain('watchJob');
    expect(signalled).not.toContain('watchJobBatch');
    // Every wait after the send shares one alarm, which no answer cancels: one timer event for all of them.
    const sentAt = events.findIndex(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'sendFollowUpMessage',
    );
    // Its check-in asked the coordinator for its turn (a free lane): no timer waited for the turn signal.
    expect(events.slice(0, sentAt).filter((event) => event.timerStartedEventAttributes)).toHaveLength(0);
    const afterSend = events.slice(sentAt);
    expect(afterSend.filter((event) => event.timerStartedEventAttributes)).toHaveLength(1);
    expect(afterSend.filter((event) => event.timerCanceledEventAttributes)).toHaveLength(0);
    // The watcher was started by the send, on the watchers' own queue (their own cache), and watches nothing now.
    const watcher = h.client.workflow.getHandle(
      watcherWorkflowId(queue, watchShardOf(job.projectId, job.jobId, SHARDS)),
    );
    const described = await watcher.describe();
    expect(described.status.name).toBe('RUNNING');
    expect(described.taskQueue).toBe(watcherTaskQueue(queue));
    await waitFor(
      async () => (await watcher.query(watchChangesQuery, 0)).upserts.length === 0,
      'the watcher to forget the answered wait',
    );
  });
});

test('a fast schedule waits through the watchers too: a job done 0.5 s after the send is read working and its result taken without waiting out the settle window', async () => {
  // A task queue of its own on the worker's defaults (no watcher running yet: the send starts it).
  const queue = h.taskQueue();
  const own = await h.worker(queue);
  await own.runUntil(async () => {
    const job = uniqueJob('fast-first-read');
    h.simulator.addJob({ ...job, workMs: 500 });
    const followUps = h.followUps(queue);
    // A settle window far past the test's timeout: only a read that saw the job working ends the follow-up in time.
    const { workflowId } = await followUps.start({
      ...job,
      prompt: 'Fix it fast',
      polling: { initialInterval: 200, settleWindow: '1h' },
    });
    const outcome = await followUps.outcome(workflowId);
    expectEndedWithItsJobsPr(outcome, job);
    // After the send, read by a watcher, never by a poll of its own (the read before the send is the follow-up's).
    const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
    const activities = events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
    expect(activities).toContain('sendFollowUpMessage');
    // After the send, the follow-up reads only once itself: to confirm the result its watcher told (issue 73).
    expect(
      activities.slice(activities.indexOf('sendFollowUpMessage')).filter((name) => name === 'pollAgentJob'),
    ).toEqual(['pollAgentJob']);
    expect(events.some((event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'jobReads')).toBe(
      true,
    );
  });
});

test('a waiting follow-up has no activity of its own pending: its watcher reads for it', async () => {
  const job = uniqueJob('quiet');
  h.simulator.addJob({ ...job, workMs: 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Work on it', polling: FAST_POLLING });
  await waitFor(() => h.simulator.counts(job.projectId, job.jobId).gets >= 6, 'reads by the watcher');
  const description = await h.client.workflow.getHandle(workflowId).describe();
  const pending = (description.raw.pendingActivities ?? []).map((activity) => activity.activityType?.name);
  expect(pending).toEqual([]);
  expect(await watched()).toContain(workflowId);
  h.simulator.finishJob(job.projectId, job.jobId);
  expect((await followUps.outcome(workflowId)).kind).toBe('completed');
  // Answered waits told their reads: nothing left uncounted.
  expect((await followUps.status(workflowId)).progress?.leftWatchedWait).toBeUndefined();
});

test('a follow-up cancelled while registered leaves its watcher', async () => {
  const job = uniqueJob('cancelled');
  h.simulator.addJob({ ...job, workMs: 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Never mind', polling: FAST_POLLING });
  await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register');
  await waitFor(() => h.simulator.counts(job.projectId, job.jobId).gets >= 3, 'reads by the watcher');
  await followUps.cancel(workflowId);
  expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
  expect(await watched()).not.toContain(workflowId);
  // The watcher's reads of the wait left were never told: the count it ends with says it lacks them.
  const status = await followUps.status(workflowId);
  expect(status.progress?.leftWatchedWait).toBe(true);
  expect(describeStatus(status)).toContain(
    "poll(s) told to it (its watcher's reads of the wait it left are not counted)",
  );
});

test('the deadline ends a watched follow-up as timed out, with the last status it was told', async () => {
  const job = uniqueJob('deadline');
  h.simulator.addJob({ ...job, workMs: 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({
    ...job,
    prompt: 'Too slow',
    polling: { ...FAST_POLLING, timeout: '4s' },
  });
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('timed-out');
  expect(outcome.kind === 'timed-out' ? outcome.message : '').toMatch(/within 4s \(last status: active\)/);
  expect(await watched()).not.toContain(workflowId);
});

/**
 * Waits until the follow-up's settle window (1 s in these tests) has passed since its send: a terminal read inside it
 * cannot be the result yet (it may be a lagging replica), so the follow-up would rightly go on waiting.
 */
async function pastSettleWindow(followUps: ReturnType<Harness['followUps']>, workflowId: string): Promise<void> {
  await waitFor(async () => {
    const { sentAt } = await followUps.progress(workflowId);
    return sentAt !== null && Date.now() - Date.parse(sentAt) > 2_000;
  }, 'the settle window to pass since the send');
}

test("a read asked for (pollNow) is made at once by the follow-up itself, not at the watcher's next look at its book", async () => {
  const job = uniqueJob('now');
  // No pull request before: the result (with one) cannot look like the job before the message, so one read decides.
  h.simulator.addJob({ ...job, prLink: null, workMs: 500 });
  const followUps = h.followUps(taskQueue);
  // A schedule that would not read again for an hour after the first reads.
  const { workflowId } = await followUps.start({
    ...job,
    prompt: 'Quick one',
    polling: { initialInterval: '1h', maxInterval: '1h', timeout: '2h', settleWindow: '1s' },
  });
  await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register after its send');
  await waitFor(
    () => h.simulator.job(job.projectId, job.jobId).status === 'completed',
    'the agent to finish the message',
  );
  await pastSettleWindow(followUps, workflowId);
  const readsBefore = h.simulator.counts(job.projectId, job.jobId).gets;
  await followUps.pollNow(workflowId);
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(h.simulator.counts(job.projectId, job.jobId).gets).toBe(readsBefore + 1);
  // Made by the follow-up (its own one-read activity), and its watcher let go of the wait it answered itself.
  const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const summaries = events.flatMap((event) => {
    const summary = event.userMetadata?.summary?.data;
    return event.activityTaskScheduledEventAttributes && summary
      ? [JSON.parse(Buffer.from(summary).toString()) as string]
      : [];
  });
  expect(summaries.filter((summary) => summary.endsWith('now (asked for)'))).toEqual([
    `read job ${job.jobId} now (asked for)`,
  ]);
  await waitFor(async () => !(await watched()).includes(workflowId), 'the watcher to forget the wait');
});

test('a read asked for that is not an answer counts as a poll, and the wait goes back to the watcher', async () => {
  const job = uniqueJob('now-unchanged');
  h.simulator.addJob({ ...job, workMs: 60 * 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({
    ...job,
    prompt: 'Still working',
    polling: { initialInterval: '1h', maxInterval: '1h', timeout: '2h', settleWindow: '1s' },
  });
  await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register after its send');
  const pollsBefore = (await followUps.progress(workflowId)).polls;
  const readsBefore = h.simulator.counts(job.projectId, job.jobId).gets;
  await followUps.pollNow(workflowId);
  await waitFor(async () => h.simulator.counts(job.projectId, job.jobId).gets > readsBefore, 'the read asked for');
  // Still active: the follow-up waits on, registered with its watcher again; the agent then finishes, and a second
  // read asked for ends it with the result, each read counted.
  await waitFor(
    async () => (await followUps.progress(workflowId)).phase === 'waiting' && (await watched()).includes(workflowId),
    'the wait back with the watcher',
  );
  await pastSettleWindow(followUps, workflowId);
  h.simulator.finishJob(job.projectId, job.jobId, { prLink: 'https://github.com/acme/app/pull/77' });
  await followUps.pollNow(workflowId);
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe('https://github.com/acme/app/pull/77');
  expect(h.simulator.counts(job.projectId, job.jobId).gets).toBe(readsBefore + 2);
  expect(outcome.kind === 'completed' ? outcome.result.polls : null).toBe(pollsBefore + 2);
});

test('a read asked for that fails goes to the watcher: it reads again at once and tells the follow-up of the failure', async () => {
  const job = uniqueJob('now-failing');
  h.simulator.addJob({ ...job, workMs: 60 * 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({
    ...job,
    prompt: 'Still working',
    polling: { initialInterval: '1h', maxInterval: '1h', timeout: '2h', settleWindow: '1s' },
  });
  await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register after its send');
  const watcher = (await heldWaits(h, taskQueue, SHARDS)).find(({ wait }) => wait.workflowId === workflowId)!.watcher;
  const runBefore = (await watcher.describe()).runId;
  const readsBefore = h.simulator.counts(job.projectId, job.jobId).gets;
  h.simulator.setJobFaults(job.projectId, job.jobId, [{ operation: 'get', kind: 'status', status: 500, times: 2 }]);
  await followUps.pollNow(workflowId);
  // The follow-up's own read, then the watcher's.
  await waitFor(
    async () => ((await followUps.progress(workflowId)).failedReads ?? 0) >= 1,
    'the watcher to tell of the failed read',
  );
  const progress = await followUps.progress(workflowId);
  expect(progress.phase).toBe('waiting');
  expect(progress.lastError).toMatch(/HTTP 500/);
  // A watcher that continued as new meanwhile (the test server suggests it at 60 events) carries the wait as it was
  // registered, "read at once", and its next reader reads it once more.
  const continued = (await watcher.describe()).runId !== runBefore;
  const reads = h.simulator.counts(job.projectId, job.jobId).gets - readsBefore;
  if (continued) expect([2, 3]).toContain(reads);
  else expect(reads).toBe(2);
  await followUps.cancel(workflowId);
  expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
  await waitFor(async () => !(await watched()).includes(workflowId), 'the watcher to forget the cancelled wait');
});

/**
 * Starts a follow-up on a working job, terminates the watchers of `queue` while it waits, then finishes the job: the
 * follow-up's outcome and how many times it registered its wait itself after the terminate, until a new watcher held it.
 */
async function terminateWatchersWhileWaiting(
  queue: string,
  gapMs: number,
  afterTerminate: (job: { projectId: string; jobId: string }) => Promise<void> = async () => undefined,
): Promise<number> {
  const job = uniqueJob('orphan');
  h.simulator.addJob({ ...job, workMs: 60_000 });
  const followUps = h.followUps(queue);
  const polling = {
    initialInterval: gapMs,
    backoffCoefficient: 1,
    maxInterval: gapMs,
    timeout: '100s',
    settleWindow: '1s',
  } as const;
  const { workflowId } = await followUps.start({ ...job, prompt: 'Keep going', polling });
  // Held as working: no read answers until the job is finished below.
  const heldAsWorking = async () =>
    (await heldWaits(h, queue, SHARDS)).some(
      ({ wait }) => wait.workflowId === workflowId && wait.known?.status === 'active',
    );
  await waitFor(heldAsWorking, 'the follow-up to register its wait on the working job');
  const registrations = async () =>
    ((await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? []).filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'registerWatch',
    ).length;
  const registeredBefore = await registrations();
  const terminated: string[] = [];
  for (let shard = 0; shard < SHARDS; shard += 1) {
    const handle = h.client.workflow.getHandle(watcherWorkflowId(queue, shard));
    const description = await handle.describe().catch(() => null);
    if (description?.status.name !== 'RUNNING') continue;
    terminated.push(description.runId);
    await handle.terminate('operator test');
  }
  expect(terminated.length).toBeGreaterThan(0);
  await afterTerminate(job);
  await waitFor(heldAsWorking, 'the wait to be held by a new watcher', 90_000);
  // Counted before the job ends: the rounds after its end (settling, confirming) are the follow-up's own business.
  const registeredAgain = (await registrations()) - registeredBefore;
  h.simulator.finishJob(job.projectId, job.jobId);
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  return registeredAgain;
}

test('a watcher terminated while its long reader reads: the reader gives the waits it held to a new watcher at once, and they end right', async () => {
  const long = await startWatchingWorker(h, SHARDS, true);
  try {
    // Reads 2 s apart: the follow-up would register again by itself only after 120 s of silence, past its deadline.
    // It did not: the terminated watcher's reader did it for it.
    expect(await terminateWatchersWhileWaiting(long.taskQueue, 2_000)).toBe(0);
  } finally {
    await long.stop();
  }
});

test('a watcher terminated while it reads by its timers, alone: the worker starts a new watcher that takes over its waits, and they end right', async () => {
  // Reads 2 s apart: the follow-up would register again by itself only after 120 s of silence, past the 90 s this
  // test waits for a new watcher to hold its wait, and no other wait comes to the shard. The worker's guard did it.
  expect(await terminateWatchersWhileWaiting(taskQueue, 2_000)).toBe(0);
});

test("a watcher terminated while it reads by its timers: the next wait on its shard starts a watcher that takes over the terminated run's waits, and they end right", async () => {
  const followUps = h.followUps(taskQueue);
  const other: string[] = [];
  // Reads 2 s apart: the follow-up would register again by itself only after 120 s of silence, past its deadline.
  const registeredAgain = await terminateWatchersWhileWaiting(taskQueue, 2_000, async (orphan) => {
    const shard = watchShardOf(orphan.projectId, orphan.jobId, SHARDS);
    let job = uniqueJob('next-on-shard');
    while (watchShardOf(job.projectId, job.jobId, SHARDS) !== shard) job = uniqueJob('next-on-shard');
    h.simulator.addJob({ ...job, workMs: 500 });
    other.push((await followUps.start({ ...job, prompt: 'Next one', polling: FAST_POLLING })).workflowId);
  });
  expect(registeredAgain).toBe(0);
  expect((await followUps.outcome(other[0] as string)).kind).toBe('completed');
});

test('a workflow of another kind under a watcher id: the follow-ups of its shard move on to the next watcher of its chain and end right', async () => {
  // A task queue of its own, so that the shard's id is free for the foreign workflow to take first.
  const queue = h.taskQueue();
  const own = await h.worker(queue, undefined, { coordination: { watchShards: 1 } });
  const foreign = await h.client.workflow.start('someOtherWorkflow', {
    taskQueue: `nobody-${queue}`,
    workflowId: watcherWorkflowId(queue, 0),
  });
  try {
    await own.runUntil(async () => {
      const job = uniqueJob('foreign-watcher');
      h.simulator.addJob({ ...job, workMs: 1_500 });
      const followUps = h.followUps(queue);
      const { workflowId } = await followUps.start({
        ...job,
        prompt: 'Fix it',
        polling: { ...FAST_POLLING, timeout: '10m' },
      });
      const outcome = await followUps.outcome(workflowId);
      expectEndedWithItsJobsPr(outcome, job);
      const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const activities = events.flatMap(
        (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
      );
      // Refused at the send and once more (the activity makes sure the watcher is ours), then read by the next watcher
      // of the shard's chain: never by the follow-up itself after the send.
      const failed = events.filter((event) => event.activityTaskFailedEventAttributes).length;
      expect(failed).toBeGreaterThanOrEqual(1);
      expect(activities.filter((name) => name === 'registerWatch').length).toBeGreaterThanOrEqual(2);
      // After the send, the follow-up reads only once itself: to confirm the result its watcher told (issue 73).
      expect(
        activities.slice(activities.indexOf('sendFollowUpMessage')).filter((name) => name === 'pollAgentJob'),
      ).toEqual(['pollAgentJob']);
      const next = await h.client.workflow.getHandle(watcherWorkflowId(queue, 0, 1)).describe();
      expect(next.type).toBe('jobWatcherWorkflow');
      expect((await foreign.describe()).status.name).toBe('RUNNING');
    });
  } finally {
    await foreign.terminate('test over');
  }
});

test('a watcher reads by its timers while its book is small, with one long activity from `longReaderFrom` waits, and by timers again below half of it: every result right', async () => {
  const queue = h.taskQueue();
  const own = await h.worker(queue, undefined, {
    coordination: { watchShards: 1, watchLongReaderFrom: 4 },
  });
  await own.runUntil(async () => {
    const followUps = h.followUps(queue);
    const watcher = h.client.workflow.getHandle(watcherWorkflowId(queue, 0));
    // The first send starts the watcher: until then it has scheduled nothing.
    const scheduled = async (): Promise<string[]> =>
      ((await watcher.fetchHistory().catch(() => null))?.events ?? []).flatMap(
        (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
      );
    const pending = async (): Promise<string[]> =>
      ((await watcher.describe()).raw.pendingActivities ?? []).map((activity) => activity.activityType?.name ?? '');
    const details = async () =>
      (await watcher.query<{ currentDetails?: string }>('__temporal_workflow_metadata')).currentDetails ?? '';
    const start = async (job: { projectId: string; jobId: string }) =>
      (await followUps.start({ ...job, prompt: `Fix ${job.jobId}`, polling: FAST_POLLING })).workflowId;
    const jobs = Array.from({ length: 5 }, () => uniqueJob('modes'));
    for (const job of jobs) h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
    const [first, ...rest] = jobs as [(typeof jobs)[number], ...typeof jobs];

    const firstId = await start(first);
    await waitFor(async () => (await scheduled()).filter((name) => name === 'readWatchedJobs').length >= 2, 'turns');
    expect(await scheduled()).not.toContain('watchJobs');
    expect(await details()).toContain('the reading: turns in History');
    // Its last turn, from its own state: what an operator sees in the Web UI without asking anything.
    expect(await details()).toMatch(/Last turn \d\d:\d\d:\d\d UTC: 1 job read \(1 active\); next \d\d:\d\d:\d\d UTC/);

    const restIds = await Promise.all(rest.map(start));
    await waitFor(async () => (await pending()).includes('watchJobs'), 'the long reader to read the book of five');
    expect(await details()).toContain('the reading: Pending Activities, its figures in the heartbeat details');
    // What the Web UI shows of the long reader: its heartbeat details, with the reads it made.
    const readerFigures = async () => {
      const reader = (await watcher.describe()).raw.pendingActivities?.find(
        (activity) => activity.activityType?.name === 'watchJobs',
      );
      const payload = reader?.heartbeatDetails?.payloads?.[0];
      return payload ? (defaultPayloadConverter.fromPayload(payload) as { reads?: number; lastReadAt?: string }) : {};
    };
    await waitFor(async () => ((await readerFigures()).reads ?? 0) > 0, "the long reader's figures in its heartbeat");
    expect(Date.parse((await readerFigures()).lastReadAt ?? '')).not.toBeNaN();

    for (const job of rest) h.simulator.finishJob(job.projectId, job.jobId);
    await Promise.all(restIds.map((workflowId) => followUps.outcome(workflowId)));
    // One wait left, below half of four: timers again, and the long reader stopped.
    await waitFor(async () => {
      const names = await scheduled();
      return (
        names.lastIndexOf('readWatchedJobs') > names.lastIndexOf('watchJobs') &&
        !(await pending()).includes('watchJobs')
      );
    }, 'turns again after the long reader');

    h.simulator.finishJob(first.projectId, first.jobId);
    const outcomes = await Promise.all([firstId, ...restIds].map((workflowId) => followUps.outcome(workflowId)));
    outcomes.forEach((outcome, i) => {
      const job = jobs[i] as (typeof jobs)[number];
      expectEndedWithItsJobsPr(outcome, job);
      expect(h.simulator.counts(job.projectId, job.jobId)).toMatchObject({ posts: 1 });
    });
  });
});

test('a watcher whose book is full refuses the next waits: they move on to the next watchers of the shard, none polls for itself, and every result is right', async () => {
  // A task queue of its own, its watchers keeping a book of about two waits each (a registration takes about 600 bytes).
  const queue = h.taskQueue();
  const own = await h.worker(queue, undefined, {
    coordination: { watchShards: 1, watchBookLimitBytes: 1_500 },
  });
  await own.runUntil(async () => {
    const followUps = h.followUps(queue);
    const jobs = Array.from({ length: 5 }, () => uniqueJob('full'));
    for (const job of jobs) h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
    const started = await Promise.all(
      jobs.map((job) => followUps.start({ ...job, prompt: `Fix ${job.jobId}`, polling: FAST_POLLING })),
    );
    const chain = [0, 1, 2, 3, 4].map((overflow) => h.client.workflow.getHandle(watcherWorkflowId(queue, 0, overflow)));
    const bookOf = async (watcher: (typeof chain)[number]) => {
      const changes = await watcher.query(watchChangesQuery, 0).catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError) return null;
        throw error;
      });
      return (changes?.upserts ?? []).map((registration) => registration.workflowId);
    };
    const pollsItself = async (workflowId: string) => {
      const pending = (await h.client.workflow.getHandle(workflowId).describe()).raw.pendingActivities ?? [];
      return pending.some((activity) => activity.activityType?.name === 'pollAgentJob');
    };
    // Every follow-up is in exactly one book of the chain, more than one watcher holds some, and none polls itself.
    await waitFor(async () => {
      const books = await Promise.all(chain.map(bookOf));
      const held = books.flat();
      const itself = await Promise.all(started.map(({ workflowId }) => pollsItself(workflowId)));
      return (
        started.every(({ workflowId }) => held.filter((id) => id === workflowId).length === 1) &&
        held.length === started.length &&
        books.filter((book) => book.length > 0).length >= 2 &&
        itself.every((polling) => !polling)
      );
    }, 'each follow-up to be watched by one watcher of the chain');
    const first = chain[0] as (typeof chain)[number];
    // The reader told the refusals (client signals): none cost the watcher's history an event.
    const watcherEvents = (await first.fetchHistory()).events ?? [];
    expect(watcherEvents.filter((event) => event.signalExternalWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
    expect((await first.describe()).status.name).toBe('RUNNING');
    // Its details in the Web UI say it is full, how many waits it refused and where they went.
    const { currentDetails } = await first.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(currentDetails).toMatch(/^\*\*Full\*\* job watcher .*; [1-9]\d* waits? refused this run, taken by the next/);
    for (const job of jobs) h.simulator.finishJob(job.projectId, job.jobId);
    const outcomes = await Promise.all(started.map(({ workflowId }) => followUps.outcome(workflowId)));
    outcomes.forEach((outcome, i) => {
      const job = jobs[i] as (typeof jobs)[number];
      expectEndedWithItsJobsPr(outcome, job);
      expect(h.simulator.counts(job.projectId, job.jobId)).toMatchObject({ posts: 1, prompts: [`Fix ${job.jobId}`] });
    });
  });
});

describe('status asks the watcher for the live figures', () => {
  /** A worker whose watchers always read with their long activity, which reports reads only of waits asked about. */
  let long: WatchingWorker;
  beforeAll(async () => {
    long = await startWatchingWorker(h, SHARDS, true);
  });
  afterAll(async () => {
    await long?.stop();
  });
  const watcherOf = (job: { projectId: string; jobId: string }, queue = taskQueue) =>
    watcherWorkflowId(queue, watchShardOf(job.projectId, job.jobId, SHARDS));
  const figures = (status: FollowUpStatus) => (status.watch?.available ? status.watch : null);
  /** A follow-up whose job works for ten minutes, registered with its watcher. */
  async function waitingFollowUp(prefix: string, polling: FollowUpInput['polling']) {
    const job = uniqueJob(prefix);
    h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
    const followUps = h.followUps(taskQueue);
    const { workflowId } = await followUps.start({ ...job, prompt: 'Work on it', polling });
    await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register');
    return { job, followUps, workflowId };
  }

  test('a waiting follow-up: watched since, the last read and its status, the next read; the queries leave no history', async () => {
    const job = uniqueJob('figures');
    h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
    const followUps = h.followUps(taskQueue);
    // A 5 s cap: the follow-up stays quiet (no registering again) for 50 s, so the watcher's history holds still.
    const polling = { initialInterval: '200ms', maxInterval: '5s', timeout: '5m', settleWindow: '2s' };
    const { workflowId } = await followUps.start({ ...job, prompt: 'Work on it', polling });
    await waitFor(
      async () => figures(await followUps.status(workflowId))?.lastRead?.status === 'active',
      "the watcher's first reported read",
    );
    const watcher = h.client.workflow.getHandle(watcherOf(job));
    const eventsBefore = (await watcher.fetchHistory()).events?.length ?? 0;

    // A watcher's next run (continued as new) shows no read of a wait until its reader's first one, up to a gap: the
    // status checked is one taken after that, as a person asking again would.
    let status = await followUps.status(workflowId);
    await waitFor(async () => {
      status = await followUps.status(workflowId);
      return figures(status)?.lastRead != null;
    }, 'a status with the last read');
    expect(status.progress?.watcherId).toBe(watcherOf(job));
    const live = figures(status)!;
    expect(live.watcherId).toBe(watcherOf(job));
    expect(Date.parse(live.watchedSince)).toBeLessThanOrEqual(Date.parse(live.lastRead!.at));
    expect(live.nextReadAt).not.toBeNull();
    expect(live.failing).toBeNull();
    expect(live.reads).toBeGreaterThanOrEqual(1);

    const text = await runCliOn(['status', workflowId], taskQueue);
    expect(text.code).toBe(ExitCode.Ok);
    expect(text.out).toMatch(
      new RegExp(
        `Watched by ${watcherOf(job)} since \\d\\d:\\d\\d:\\d\\d UTC: last read \\d\\d:\\d\\d:\\d\\d UTC \\(active\\), next read `,
      ),
    );
    const json = FollowUpReportSchema.parse(
      JSON.parse((await runCliOn(['status', workflowId, '--json'], taskQueue)).out),
    );
    expect(json.watch).toMatchObject({ watcherId: watcherOf(job), available: true, lastRead: { status: 'active' } });
    // Asking is by query: no message reached the watcher's history. (A timed watcher's own turns may add timers and
    // reads meanwhile; those are not the asking.)
    const added = ((await watcher.fetchHistory()).events ?? []).slice(eventsBefore);
    expect(added.filter(isMessageEvent)).toEqual([]);
    await followUps.cancel(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
  });

  test.each([
    ['by its timers', () => taskQueue],
    ['with its long activity', () => long.taskQueue],
  ])(
    "send --wait's progress counts the watcher's reads as they are made, not only those the follow-up was told (reading %s)",
    async (_, queue) => {
      const job = uniqueJob('wait-progress');
      h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
      const args = ['send', '--project', job.projectId, '--job', job.jobId, '--prompt', 'Work on it', '--wait'];
      const cli = startCliOn(
        [...args, '--initial-interval', '200', '--max-interval', '300', '--settle-window', '1s'],
        queue(),
      );
      // The job works on: the follow-up is told of no read until it ends, so only the watcher's figures can count these.
      // Progress lines go to stderr (stdout keeps the result).
      const readsShown = () =>
        Math.max(0, ...[...cli.run.err.matchAll(/status active, (\d+) poll\(s\)/g)].map((m) => Number(m[1])));
      try {
        await waitFor(
          async () => readsShown() >= 3 && h.simulator.counts(job.projectId, job.jobId).gets >= 3,
          'three reads shown while the job works',
        );
        expect(readsShown()).toBeLessThanOrEqual(h.simulator.counts(job.projectId, job.jobId).gets);
      } finally {
        // Ends the command either way, so a failure here does not leave it waiting.
        h.simulator.finishJob(job.projectId, job.jobId);
      }
      const done = await cli.done;
      expect(done.code).toBe(ExitCode.Ok);
      expect(done.out).toMatch(/ended completed after \d+ poll\(s\)/);
    },
  );

  test.each([
    ['by its timers', () => taskQueue],
    ['with its long activity', () => long.taskQueue],
  ])(
    "the Web UI's way (reading %s): the watcher's Update watchFigures, sent by name with the follow-up's id, puts the wait's reads, last read and next read in the watcher's current details, and each later read",
    async (_, queue) => {
      const job = uniqueJob('ui-figures');
      h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
      const followUps = h.followUps(queue());
      const polling = { initialInterval: '200ms', maxInterval: '1s', timeout: '5m', settleWindow: '2s' };
      const { workflowId } = await followUps.start({ ...job, prompt: 'Work on it', polling });
      const watcher = h.client.workflow.getHandle(watcherOf(job, queue()));
      await waitFor(async () => h.simulator.counts(job.projectId, job.jobId).gets >= 2, 'two reads');
      // What the Web UI shows: the metadata query's current details, which the watcher sets without history.
      const shown = async () => {
        const { currentDetails = '' } = await watcher.query<{ currentDetails?: string }>(
          '__temporal_workflow_metadata',
        );
        const line = currentDetails.split('\n').find((text) => text.includes(`\`${workflowId}\``));
        const match = line?.match(
          /^\*\*Live figures\*\* of `[^`]+` \(asked until \d\d:\d\d:\d\d UTC\): (\d+) reads?, the last \d\d:\d\d:\d\d UTC \(`active`\); next \d\d:\d\d:\d\d UTC\.$/,
        );
        return match ? Number(match[1]) : null;
      };
      expect(await shown()).toBeNull();

      // The Web UI's "Send an Update" sends the name and one JSON value: the follow-up's id. A person sends it again
      // when told the watcher is continuing as new (this test server suggests it after 60 events).
      await askedAgainWhileContinuing(() => watcher.executeUpdate('watchFigures', { args: [workflowId] }));
      let first = 0;
      await waitFor(async () => {
        first = (await shown()) ?? 0;
        return first >= 1;
      }, "the wait's reads in the watcher's details");
      // No more reads than the API saw, and the later reads come in as they are made.
      expect(first).toBeLessThanOrEqual(h.simulator.counts(job.projectId, job.jobId).gets);
      let later = 0;
      await waitFor(async () => {
        later = (await shown()) ?? 0;
        return later >= first + 2;
      }, 'two more reads in the details');
      expect(later).toBeLessThanOrEqual(h.simulator.counts(job.projectId, job.jobId).gets);
      // An ask for a follow-up this watcher does not hold is refused, and the details say nothing of it.
      await expect(
        watcher.executeUpdate('watchFigures', { args: ['agent-followup/nobody/none/0'] }),
      ).rejects.toMatchObject({
        cause: { message: expect.stringMatching(/holds no wait of agent-followup\/nobody\/none\/0/) },
      });
      await followUps.cancel(workflowId);
      expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
    },
  );

  test("status across a long reader's watcher continuing as new again and again: the first ask of a wait, sent as a run winds down, has the reads; an asked wait's figures never go null or back; each run takes the ask over", async () => {
    const queue = long.taskQueue;
    /** A job of the same shard as `like`: the same watcher. */
    const jobBeside = (like: { projectId: string; jobId: string }, prefix: string) => {
      for (;;) {
        const job = uniqueJob(prefix);
        if (watcherOf(job, queue) === watcherOf(like, queue)) return job;
      }
    };
    const polling = { initialInterval: '200ms', maxInterval: '500ms', timeout: '5m', settleWindow: '2s' };
    const followUps = h.followUps(queue);
    const registered = async (job: { projectId: string; jobId: string }) => {
      h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
      const { workflowId } = await followUps.start({ ...job, prompt: 'Work on it', polling });
      await waitFor(
        async () => (await heldWaits(h, queue, SHARDS)).some(({ wait }) => wait.workflowId === workflowId),
        'the follow-up to register',
      );
      return workflowId;
    };
    // One wait asked about all along: its reads, reported every 500 ms, pass this test server's 60 events (its
    // suggestion to continue as new) every few seconds. Four more, each asked about first as a run winds down.
    const asked = uniqueJob('long-continuing');
    const askedId = await registered(asked);
    const fresh = await Promise.all([1, 2, 3, 4].map(() => registered(jobBeside(asked, 'long-fresh'))));
    const watcher = h.client.workflow.getHandle(watcherOf(asked, queue));
    const shown: Array<number | null> = [];
    let asking = true;
    const askingAllAlong = (async () => {
      while (asking) shown.push(figures(await followUps.status(askedId))?.reads ?? null);
    })();
    try {
      for (const workflowId of fresh) {
        // The run's history at the server's suggestion: it winds down now, or within a workflow task or two.
        let windingDown = '';
        await waitFor(async () => {
          const { runId, historyLength } = await watcher.describe();
          windingDown = runId;
          return historyLength >= TEST_SERVER_CONTINUE_AS_NEW_AFTER;
        }, 'the watcher to near its continue-as-new');
        const first = figures(await followUps.status(workflowId));
        expect(first?.reads).toBeGreaterThanOrEqual(1);
        expect(first?.lastRead?.status).toBe('active');
        await waitFor(async () => (await watcher.describe()).runId !== windingDown, 'the next run');
      }
    } finally {
      asking = false;
      await askingAllAlong;
    }
    expect(shown.length).toBeGreaterThan(0);
    expect(shown).not.toContain(null);
    expect(shown).toEqual([...shown].sort((a, b) => (a ?? 0) - (b ?? 0)));
    // The ask was carried along: the run now holds it, with a report no lower than the last figure shown.
    const held = await watcher.query(watchedWaitQuery, askedId);
    expect(held?.figuresAskedUntilMs).not.toBeNull();
    expect(held?.report?.reads).toBeGreaterThanOrEqual(shown.at(-1) ?? 1);
    for (const workflowId of [askedId, ...fresh]) await h.client.workflow.getHandle(workflowId).cancel();
  });

  test("a long reader reports reads only of waits asked about: status's ask (an Update) answers with the reads made, each later read is reported, a flood of asks writes nothing, forged reports and a query's arguments change nothing", async () => {
    const queue = long.taskQueue;
    const job = uniqueJob('long-figures');
    h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
    const followUps = h.followUps(queue);
    const polling = { initialInterval: '200ms', maxInterval: '1s', timeout: '5m', settleWindow: '2s' };
    const { workflowId } = await followUps.start({ ...job, prompt: 'Work on it', polling });
    const watcher = h.client.workflow.getHandle(watcherOf(job, queue));
    // Every run's since the first look: the watcher continues as new now and then (see below).
    let firstRun: string | undefined;
    const events = async () => eventsSinceRun(watcher.workflowId, (firstRun ??= (await watcher.describe()).runId));
    // This follow-up's only: the watcher is the shard's, and another test's follow-up on it may be asked about.
    const acceptedUpdates = (list: temporal.api.history.v1.IHistoryEvent[], name: string) =>
      list.filter((event) => {
        const input = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
        if (input?.name !== name) return false;
        const args = (input.args?.payloads ?? []).map((payload) => Buffer.from(payload.data ?? []).toString('utf8'));
        return args.some((text) => text.includes(workflowId));
      }).length;

    // Read several times, and nobody asked: the reader reported nothing, and no query carried reports in.
    await waitFor(async () => h.simulator.counts(job.projectId, job.jobId).gets >= 4, 'four reads');
    const staleReport: WaitReadReport = {
      workflowId,
      runId: (await h.client.workflow.getHandle(workflowId).describe()).runId,
      round: 1,
      replyTo: 'forged',
      reads: 999,
      lastRead: { atMs: Date.now(), status: 'completed' },
      failingSinceMs: null,
      failedReads: 0,
      lastError: null,
      nextReadAtMs: null,
    };
    // The old way in, with the wait's true name: reports as a query's arguments. A query only reads.
    const held = await watcher.query(watchedWaitQuery, workflowId);
    await watcher.query('watchChanges', 0, [{ ...staleReport, replyTo: held?.registration.replyTo }]);
    const unasked = await watcher.query(watchedWaitQuery, workflowId);
    expect(unasked).toMatchObject({ report: null, figuresAskedUntilMs: null, everyReadNoted: false });
    expect(acceptedUpdates(await events(), 'reportReads')).toBe(0);

    // The first status asks, and its answer has the reader's reads: those made before the ask, unless the watcher
    // continued as new meanwhile (this test server suggests it after 60 events), whose next reader counts from zero.
    const runBefore = (await watcher.describe()).runId;
    const askedAtMs = Date.now();
    const first = figures(await followUps.status(workflowId));
    const sameRun = (await watcher.describe()).runId === runBefore;
    expect(first?.reads).toBeGreaterThanOrEqual(sameRun ? 2 : 1);
    expect(first?.lastRead?.status).toBe('active');
    // While asked about, each read is reported as it is made.
    await waitFor(
      async () => (figures(await followUps.status(workflowId))?.reads ?? 0) >= (first?.reads ?? 0) + 3,
      'three more reads reported',
    );
    // By Update, in history: reads that end while a report is in flight go together in the next one, so on a loaded
    // machine three reads can come in fewer reports, never in none.
    expect(acceptedUpdates(await events(), 'reportReads')).toBeGreaterThanOrEqual(1);

    // A flood of asks: refused by the validator while the last ask runs, so at most one more is written for each
    // renewal period that passed (none, unless the machine took that long).
    const readsBeforeFlood = figures(await followUps.status(workflowId))?.reads ?? 0;
    const asksBefore = acceptedUpdates(await events(), 'watchFigures');
    const flood = await Promise.allSettled(
      Array.from({ length: 200 }, () => watcher.executeUpdate(watchFiguresUpdate, { args: [workflowId] })),
    );
    const renewals = Math.floor((Date.now() - askedAtMs) / LIVE_FIGURES_RENEW_WITHIN_MS) + 1;
    expect(acceptedUpdates(await events(), 'watchFigures') - asksBefore).toBeLessThanOrEqual(renewals);
    const refused = flood.filter((result) => result.status === 'rejected');
    expect(refused.length).toBeGreaterThanOrEqual(200 - renewals);
    // Refused by the validator, or by the server while the watcher's workflow task is tried again (on a machine
    // loaded by CPU hogs the flood's task ran past its timeout): either way nothing is written.
    for (const result of refused) expect(refusedUnwritten((result as PromiseRejectedResult).reason)).toBe(true);
    // The watcher goes on reporting after the flood, and the count never goes back. This test server suggests
    // continuing as new after 60 events, which the watcher's history passes about here: the next run's reader counts
    // from zero, and is counted on from the figure the run before showed.
    const afterFlood = figures(await followUps.status(workflowId))?.reads ?? 0;
    const shown: number[] = [];
    await waitFor(async () => {
      const reads = figures(await followUps.status(workflowId))?.reads;
      if (typeof reads === 'number') shown.push(reads);
      return (reads ?? 0) > Math.max(afterFlood, readsBeforeFlood);
    }, 'a read reported after the flood');
    expect(shown).toEqual([...shown].sort((a, b) => a - b));
    expect(shown[0]).toBeGreaterThanOrEqual(readsBeforeFlood);

    // Reports from anyone but the reader: another wait's name, garbage, too many. Refused; the figures stand.
    for (const reports of [[staleReport], [{ garbage: true }], 'not a list', []] as unknown[]) {
      const sent = watcher.executeUpdate(reportReadsUpdate, { args: [reports as never] });
      expect(
        refusedUnwritten(
          await sent.then(
            () => 'accepted',
            (error: unknown) => error,
          ),
        ),
      ).toBe(true);
    }
    const after = await watcher.query(watchedWaitQuery, workflowId);
    expect(after?.report?.reads).toBeLessThan(999);
    expect(after?.report?.replyTo).not.toBe('forged');

    await followUps.cancel(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
  });

  test("a long reader waits on the watcher's awaitChanges between changes; looks from anyone else are refused without history: malformed, without the reader's name, behind the book, of an earlier attempt, beside the reader's own, or of later attempts more than once a heartbeat timeout", async () => {
    const queue = long.taskQueue;
    const job = uniqueJob('long-looks');
    h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
    const followUps = h.followUps(queue);
    const { workflowId } = await followUps.start({ ...job, prompt: 'Work on it', polling: FAST_POLLING });
    const watcher = h.client.workflow.getHandle(watcherOf(job, queue));
    // The looks of one run of the watcher (it may continue as new meanwhile: a stop answers its reader's look).
    const looks = async (run: string | undefined = undefined) => {
      const history = await h.client.workflow
        .getHandle(watcherOf(job, queue), run)
        .fetchHistory()
        .catch((error: unknown) => {
          // Not started yet: the follow-up's send starts it.
          if (error instanceof WorkflowNotFoundError || (error as { code?: number }).code === 5) return { events: [] };
          throw error;
        });
      const list = history.events ?? [];
      const accepted = list.filter(
        (event) =>
          event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'awaitChanges',
      ).length;
      const ids = new Set(
        list.flatMap((event) =>
          event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'awaitChanges'
            ? [event.workflowExecutionUpdateAcceptedEventAttributes.protocolInstanceId]
            : [],
        ),
      );
      const completed = list.filter(
        (event) =>
          event.workflowExecutionUpdateCompletedEventAttributes &&
          ids.has(event.workflowExecutionUpdateCompletedEventAttributes.meta?.updateId),
      ).length;
      return { accepted, completed };
    };
    await waitFor(async () => {
      const { accepted, completed } = await looks();
      return accepted > completed && (await h.simulator.counts(job.projectId, job.jobId).gets) >= 2;
    }, "the reader's look to be taken while it reads");
    const described = await watcher.describe();
    const attempt = described.raw.pendingActivities?.[0]?.attempt ?? 1;
    // The name the run gave its long reader, in the reading activity's input.
    const readerName = async (run: string): Promise<string> => {
      const history = await h.client.workflow.getHandle(watcherOf(job, queue), run).fetchHistory();
      const inputs = (history.events ?? []).flatMap((event) => {
        const scheduled = event.activityTaskScheduledEventAttributes;
        return scheduled?.activityType?.name === 'watchJobs' ? (scheduled.input?.payloads ?? []) : [];
      });
      const name = (defaultPayloadConverter.fromPayload(inputs.at(-1)!) as { reader?: string }).reader;
      expect(typeof name).toBe('string');
      return name!;
    };
    const run = h.client.workflow.getHandle(watcherOf(job, queue), described.runId);
    const book = await run.query(watchChangesQuery, 0);
    const asks = book.asks ?? 0;
    const reader = await readerName(described.runId);
    const before = await looks(described.runId);
    for (const look of [
      'garbage',
      { version: -1, asks, attempt, reader },
      // Right in every figure but the reader's name: absent, or another.
      { version: book.version, asks, attempt: attempt + 1 },
      { version: book.version, asks, attempt: attempt + 1, reader: 'someone-else' },
      { version: book.version - 1, asks, attempt, reader },
      { version: book.version, asks: asks + 1, attempt, reader },
      { version: book.version, asks, attempt: attempt - 1, reader },
      { version: book.version, asks, attempt, reader },
    ]) {
      const sent = run.executeUpdate(awaitChangesUpdate, { args: [look as never] });
      expect(
        refusedUnwritten(
          await sent.then(
            () => 'accepted',
            (error: unknown) => error,
          ),
        ),
      ).toBe(true);
    }
    const after = await looks(described.runId);
    // Nothing written by the refused looks (a look of the reader's own, answered meanwhile, would count once each).
    expect(after.accepted - after.completed).toBe(before.accepted - before.completed);

    // A change (the follow-up leaves) answers the reader's look, and it looks again (in this run or the next).
    await followUps.cancel(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
    await waitFor(async () => (await looks(described.runId)).completed > after.completed, "the reader's look answered");
    await waitFor(async () => {
      const latest = await looks();
      return latest.accepted > latest.completed;
    }, 'a new look taken');

    // Looks of ever later attempts, as a forger would send to end the reader's: without the reader's name none is
    // taken; with it (read from the history) one may end a look older than the heartbeat timeout (10 s), the rest are
    // refused unwritten, so at most one is taken per timeout that passed.
    const latest = await watcher.describe();
    const latestRun = h.client.workflow.getHandle(watcherOf(job, queue), latest.runId);
    const current = await latestRun.query(watchChangesQuery, 0);
    // Past the heartbeat timeout since the waiting look was taken: a later attempt with the name would now end it.
    await setTimeout(11_000);
    const beforeBlind = await looks(latest.runId);
    // The run may close under the flood (its last wait was cancelled above, so it may continue as new): the server
    // then refuses the rest itself, which is as good a refusal as the validator's. Sent until then.
    const forge = async (look: object): Promise<boolean> => {
      try {
        await latestRun.startUpdate(awaitChangesUpdate, { args: [look], waitForStage: WorkflowUpdateStage.ACCEPTED });
        return true;
      } catch (error) {
        if (
          /workflow is closing|workflow execution already completed/i.test(
            `${String(error)} ${String((error as Error).cause)}`,
          )
        )
          return false;
        throw error;
      }
    };
    for (let later = 1; later <= 50; later += 1) {
      const look = { version: current.version, asks: current.asks ?? 0, attempt: attempt + 1_000 + later };
      if (!(await forge(look))) break;
    }
    expect((await looks(latest.runId)).accepted).toBe(beforeBlind.accepted);
    const latestReader = await readerName(latest.runId);
    const beforeRising = await looks(latest.runId);
    const risingFromMs = Date.now();
    for (let later = 1; later <= 100; later += 1) {
      const look = {
        version: current.version,
        asks: current.asks ?? 0,
        attempt: attempt + 1_000 + later,
        reader: latestReader,
      };
      // Answered once taken or refused (a refusal is the handle's outcome); a look taken waits for a change.
      if (!(await forge(look))) break;
    }
    const timeouts = Math.floor((Date.now() - risingFromMs) / 10_000) + 1;
    expect((await looks(latest.runId)).accepted - beforeRising.accepted).toBeLessThanOrEqual(timeouts);
  });

  test("reads that fail: status gives the watcher's live count, since when, and the error", async () => {
    const { job, followUps, workflowId } = await waitingFollowUp('failing', FAST_POLLING);
    h.simulator.setJobFaults(job.projectId, job.jobId, [{ operation: 'get', kind: 'status', status: 500 }]);
    await waitFor(
      async () => (figures(await followUps.status(workflowId))?.failing?.failedReads ?? 0) >= 3,
      'three failed reads reported',
    );
    // The follow-up itself was told again as the count doubled (1, 2, 4…), so its details and failure can name it.
    await waitFor(
      async () => ((await followUps.status(workflowId)).progress?.failedReads ?? 0) >= 2,
      'the follow-up told of two failed reads',
    );
    // Waited for, not asked once: between a wait's removal and the first turn after its follow-up registers it again
    // (its silence ran out on a slow machine), the watcher holds no report of it yet. CI on Node 24 met that moment.
    let live: ReturnType<typeof figures> = null;
    await waitFor(async () => {
      live = figures(await followUps.status(workflowId));
      return /HTTP 500/.test(live?.failing?.lastError ?? '');
    }, "the watcher's failing figures");
    expect(live!.lastRead?.status).toBeNull();
    let text = { out: '' };
    await waitFor(async () => {
      text = await runCliOn(['status', workflowId], taskQueue);
      return /! reads failing for \S+ \(since \d\d:\d\d:\d\d UTC, \d+ in a row\): .*HTTP 500/.test(text.out);
    }, "status's failing line");
    expect(text.out).toContain('(failed), next read');
    await followUps.cancel(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
  });

  test('a read asked for that is not an answer shows at once: counted, its status, and as the last read', async () => {
    // An hour to the schedule's first read: any read now is the one asked for.
    const { job, followUps, workflowId } = await waitingFollowUp('asked-shown', {
      initialInterval: '1h',
      maxInterval: '1h',
      timeout: '2h',
      settleWindow: '1s',
    });
    const before = await followUps.status(workflowId);
    expect(figures(before)?.lastRead).toBeNull();
    const readsBefore = h.simulator.counts(job.projectId, job.jobId).gets;
    await followUps.pollNow(workflowId);
    await waitFor(
      async () => (await followUps.progress(workflowId)).polls === (before.progress?.polls ?? 0) + 1,
      'the read asked for to be counted',
    );
    expect(h.simulator.counts(job.projectId, job.jobId).gets).toBe(readsBefore + 1);
    await waitFor(
      async () => figures(await followUps.status(workflowId))?.lastRead !== null,
      'the watcher to hold the wait again',
    );
    const after = await followUps.status(workflowId);
    expect(after.progress).toMatchObject({ phase: 'waiting', lastStatus: 'active' });
    expect(figures(after)?.lastRead?.status).toBe('active');
    const text = await runCliOn(['status', workflowId], taskQueue);
    expect(text.out).toMatch(/last read \d\d:\d\d:\d\d UTC \(active\), next read /);
    await followUps.cancel(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
  });

  test('a watcher that is gone: status still answers, and says the figures are unavailable', async () => {
    // A task queue of its own whose reader is stopped before the watcher is terminated: a running reader gives the
    // waits to a new watcher at once (the "terminated by an operator" test above), so "gone" would last a moment only.
    const queue = h.taskQueue();
    const coordination = { watchShards: SHARDS };
    const job = uniqueJob('gone');
    h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
    const followUps = h.followUps(queue);
    const first = await h.worker(queue, undefined, { coordination });
    const { workflowId } = await first.runUntil(async () => {
      // A 1-minute cap: an hour of silence before the follow-up registers again, so the watcher stays gone here.
      const polling = { initialInterval: '200ms', maxInterval: '1m', timeout: '15m', settleWindow: '2s' };
      const started = await followUps.start({ ...job, prompt: 'Work on it', polling });
      await waitFor(
        async () => (await heldWaits(h, queue, SHARDS)).some(({ wait }) => wait.workflowId === started.workflowId),
        'the follow-up to register',
      );
      return started;
    });
    const watcherId = watcherWorkflowId(queue, watchShardOf(job.projectId, job.jobId, SHARDS));
    // Follow-ups answer queries; nothing polls the watchers' queue, so nothing reads or registers again.
    const queriesOnly = await Worker.create({
      connection: h.nativeConnection,
      taskQueue: queue,
      workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! },
    });
    await queriesOnly.runUntil(async () => {
      await h.client.workflow.getHandle(watcherId).terminate('operator test: status without a watcher');
      const status = await followUps.status(workflowId);
      expect(status.progress?.phase).toBe('waiting');
      expect(status.watch).toEqual({
        watcherId,
        available: false,
        reason: expect.stringContaining('not running (TERMINATED)'),
      });
      const text = await runCliOn(['status', workflowId], queue);
      expect(text.code).toBe(ExitCode.Ok);
      expect(text.out).toContain(
        `Watcher ${watcherId}: live figures not available (the watcher is not running (TERMINATED)`,
      );
      const json = FollowUpReportSchema.parse(
        JSON.parse((await runCliOn(['status', workflowId, '--json'], queue)).out),
      );
      expect(json.watch).toMatchObject({ available: false });
    });
    const again = await h.worker(queue, undefined, { coordination });
    await again.runUntil(async () => {
      await followUps.cancel(workflowId);
      expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
    });
  });
});
