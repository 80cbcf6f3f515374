/**
 * The project's send budget as the vendor counts it: at most N sends per project in any rolling window, a burst of
 * up to N at once, the rest as the window slides; shared by every task queue; told truthfully to whoever waits; and a
 * send that waited for it is never "delivery unknown" for that. Tests that watch the window slide shorten it (a worker
 * option the README does not advertise); the simulator enforces the vendor's rule on the same window.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import type { FollowUpClient } from '../../src/client';
import { BUDGET_DEFAULTS_WORKFLOW_ID, coordinatorWorkflowId } from '../../src/kernel/workflow-ids';
import type { ProjectView } from '../../src/coordinator/project-coordination';
import { FollowUpErrorType } from '../../src/kernel/types';
import { describeProgress } from '../../src/command-line/render';
import { createHarness, FAST_POLLING, TEST_API_KEY, uniqueJob, waitFor, type Harness } from '../support/harness';
import { startBuiltScript } from '../support/processes';
import { maxInAnyWindow } from '../support/windows';
import { projectQuery } from '../../src/coordinator/messages';
import { progressQuery } from '../../src/workflows/follow-up/messages';

jest.setTimeout(300_000);

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ honourIdempotencyKey: false });
});
afterAll(async () => {
  await h.close();
});

/** Sends per hour that make `sends` per window of `windowMs` (the worker option is per hour, scaled to the window). */
const perHour = (sends: number, windowMs: number) => (sends * 3_600_000) / windowMs;

function jobsOf(projectId: string, count: number, prefix = 'job'): Array<{ projectId: string; jobId: string }> {
  return Array.from({ length: count }, (_, index) => ({ projectId, jobId: `${prefix}-${index + 1}` }));
}

async function project(projectId: string): Promise<ProjectView> {
  return h.client.workflow.getHandle(coordinatorWorkflowId(projectId)).query(projectQuery);
}

async function coordinatorRunStatuses(projectId: string): Promise<string[]> {
  const statuses: string[] = [];
  for await (const run of h.client.workflow.list({ query: `WorkflowId = '${coordinatorWorkflowId(projectId)}'` }))
    statuses.push(run.status.name);
  return statuses;
}

function acceptedTimes(jobs: Array<{ projectId: string; jobId: string }>): number[] {
  return jobs.flatMap((job) => h.simulator.counts(job.projectId, job.jobId).acceptedAtMs);
}

function rateLimited(jobs: Array<{ projectId: string; jobId: string }>): number {
  return jobs.reduce((sum, job) => sum + h.simulator.counts(job.projectId, job.jobId).rateLimited, 0);
}

async function startAll(
  followUps: FollowUpClient,
  jobs: Array<{ projectId: string; jobId: string }>,
  extra: object = {},
): Promise<string[]> {
  return Promise.all(
    jobs.map(
      async (job) =>
        (await followUps.start({ ...job, prompt: `Follow up on ${job.jobId}`, polling: FAST_POLLING, ...extra }))
          .workflowId,
    ),
  );
}

/** Two jobs of one project, and a worker whose default budget is one send an hour. */
async function twoJobsOneSendAnHour(projectId: string) {
  const [first, second] = jobsOf(projectId, 2) as [
    { projectId: string; jobId: string },
    { projectId: string; jobId: string },
  ];
  for (const job of [first, second]) h.simulator.addJob(job);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, { coordination: { sendsPerHour: 1 } });
  return { first, second, worker, followUps: h.followUps(taskQueue) };
}

test('a burst of 20 follow-ups to one project is sent at once: nobody waits for the default budget', async () => {
  const { projectId } = uniqueJob('burst');
  const jobs = jobsOf(projectId, 20);
  for (const job of jobs) h.simulator.addJob(job);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const ids = await startAll(followUps, jobs);
    const results = await Promise.all(ids.map((id) => followUps.result(id)));
    expect(results.map((result) => result.outcome)).toEqual(jobs.map(() => 'completed'));
    const view = await project(projectId);
    expect(view).toMatchObject({
      limit: 80,
      limitSetForProject: false,
      sentInWindow: 20,
      nextSlotAt: null,
      waitingForBudget: [],
    });
    expect(view.totals).toMatchObject({ granted: 20, waitedForBudget: 0, served: 20 });
  });
  expect(jobs.map((job) => h.simulator.counts(job.projectId, job.jobId).messagesAccepted)).toEqual(jobs.map(() => 1));
  expect(rateLimited(jobs)).toBe(0);
});

/** The events of every run of a workflow id, oldest first. */
async function eventsOfEveryRun(workflowId: string): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  const runs: string[] = [];
  for await (const run of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(run.runId);
  const histories = await Promise.all(
    runs.map((runId) => h.client.workflow.getHandle(workflowId, runId).fetchHistory()),
  );
  return histories.flatMap((history) => history.events ?? []);
}

const decoded = (payloads: temporal.api.common.v1.IPayloads | null | undefined): unknown[] =>
  (payloads?.payloads ?? []).map((payload) => defaultPayloadConverter.fromPayload(payload));

test("past the window's first sends, the send itself tells the coordinator it was accepted: the follow-up signals nothing for it, and the next send is granted on it", async () => {
  const { projectId } = uniqueJob('told');
  const jobs = jobsOf(projectId, 4);
  for (const job of jobs) h.simulator.addJob(job);
  const taskQueue = h.taskQueue();
  // One send at once: every later one in the window is granted only on an earlier one's answer.
  const worker = await h.worker(taskQueue, undefined, { coordination: { sendsAtOnce: 1 } });
  const followUps = h.followUps(taskQueue);
  const ids = await worker.runUntil(async () => {
    const started = await startAll(followUps, jobs);
    const results = await Promise.all(started.map((id) => followUps.result(id)));
    expect(results.map((result) => result.outcome)).toEqual(jobs.map(() => 'completed'));
    return started;
  });
  expect(jobs.map((job) => h.simulator.counts(job.projectId, job.jobId).messagesAccepted)).toEqual(jobs.map(() => 1));
  const followUpEvents = (await Promise.all(ids.map(eventsOfEveryRun))).flat();
  const sendActivities = new Set(
    followUpEvents
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'sendFollowUpMessage')
      .map((event) => String(event.eventId)),
  );
  const sends = followUpEvents.flatMap((event) => {
    const completed = event.activityTaskCompletedEventAttributes;
    return completed && sendActivities.has(String(completed.scheduledEventId))
      ? (decoded(completed.result) as Array<{ acceptedTold?: boolean }>)
      : [];
  });
  const acceptedToldByFollowUps = followUpEvents.flatMap((event) => {
    const signal = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return signal?.signalName === 'slotOutcome'
      ? (decoded(signal.input) as Array<{ outcome: string }>).filter((told) => told.outcome === 'accepted')
      : [];
  });
  const acceptedHeard = (await eventsOfEveryRun(coordinatorWorkflowId(projectId))).flatMap((event) => {
    const signal = event.workflowExecutionSignaledEventAttributes;
    return signal?.signalName === 'slotOutcome'
      ? (decoded(signal.input) as Array<{ outcome: string }>).filter((told) => told.outcome === 'accepted')
      : [];
  });
  // The first send of the window went without awaiting its answer; each of the three after it was told from the send.
  expect({
    told: sends.filter((sent) => sent.acceptedTold === true).length,
    toldByFollowUps: acceptedToldByFollowUps.length,
    heardByCoordinator: acceptedHeard.length,
  }).toEqual({ told: 3, toldByFollowUps: 0, heardByCoordinator: 3 });
});

test('150 at once with a budget of 80: 80 go at once, the rest as the window slides; never more than 80 in a window, no 429', async () => {
  const windowMs = 30_000;
  const simulator = h.simulator;
  const { projectId } = uniqueJob('many');
  const jobs = jobsOf(projectId, 150);
  // The vendor's 100 per window, on the test's short window: a send past our budget would still get through, but
  // one past the vendor's would be refused.
  simulator.setSendLimit(projectId, { sends: 100, windowMs });
  for (const job of jobs) simulator.addJob(job);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, {
    coordination: { sendsPerHour: perHour(80, windowMs), windowMs },
  });
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const ids = await startAll(followUps, jobs, { polling: { ...FAST_POLLING, timeout: '8m' } });
    // Every one ended with its job: a follow-up that did not is shown with its type and message.
    const outcomes = await Promise.all(ids.map((id) => followUps.outcome(id)));
    expect(outcomes.filter((outcome) => outcome.kind !== 'completed')).toEqual([]);
    // The burst was told in rounds, continuing as new between them: no run outgrew the test server's history limit
    // of 400 events (the server terminates such a run, and every follow-up waiting on it with it).
    expect(await coordinatorRunStatuses(projectId)).not.toContain('TERMINATED');
    // A slot whose short lease ran out before its send could start (a busy machine) is given back and asked for again.
    const { totals } = await project(projectId);
    expect(totals.granted - totals.returned).toBe(150);
    // Told to wait: a check-in the coordinator refused for now (its run closing) may come back after the window slid,
    // and then need not wait; the timings below are what the budget promises.
    expect(totals.waitedForBudget).toBeGreaterThan(0);
  });
  const times = acceptedTimes(jobs).sort((a, b) => a - b);
  expect(times).toHaveLength(150);
  expect(maxInAnyWindow(times, windowMs)).toBeLessThanOrEqual(80);
  // The 81st went only once the first had left the window: the first 80 were the burst.
  expect((times[80] as number) - (times[0] as number)).toBeGreaterThanOrEqual(windowMs);
  expect(rateLimited(jobs)).toBe(0);
}, 600_000);

test('follow-ups waiting on a coordinator that was terminated check in again after a silence and are all sent, once each', async () => {
  const windowMs = 30_000;
  const { projectId } = uniqueJob('orphaned');
  const jobs = jobsOf(projectId, 3);
  for (const job of jobs) h.simulator.addJob(job);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, {
    coordination: { sendsPerHour: perHour(1, windowMs), windowMs },
  });
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const ids = await startAll(followUps, jobs, { polling: { ...FAST_POLLING, timeout: '5m' } });
    await waitFor(
      async () => (await project(projectId).catch(() => null))?.waitingForBudget.length === 2,
      'two follow-ups to wait for the budget',
    );
    // What an operator's mistake or a server's history limit does: the coordinator and all it knew are gone.
    await h.client.workflow.getHandle(coordinatorWorkflowId(projectId)).terminate('test: the coordinator is lost');
    const outcomes = await Promise.all(ids.map((id) => followUps.outcome(id)));
    expect(outcomes.filter((outcome) => outcome.kind !== 'completed')).toEqual([]);
  });
  for (const job of jobs)
    expect(h.simulator.counts(job.projectId, job.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('two workers on two task queues share one budget per project and one lane per job', async () => {
  const windowMs = 20_000;
  const { projectId } = uniqueJob('shared');
  const shared = { projectId, jobId: 'shared-job' };
  const jobs = [shared, ...jobsOf(projectId, 3)];
  for (const job of jobs) h.simulator.addJob({ ...job, workMs: 1_000 });
  const [queueA, queueB] = [h.taskQueue(), h.taskQueue()];
  const workerA = await h.worker(queueA, undefined, { coordination: { sendsPerHour: perHour(3, windowMs), windowMs } });
  // The second service: its own process (one process polls a task queue once), its own task queue, the same namespace.
  const workerB = startBuiltScript('worker.js', [], {
    ...h.workerEnv(),
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS as string,
    TEMPORAL_TASK_QUEUE: queueB,
    AGENT_SENDS_PER_PROJECT_PER_HOUR: String(perHour(3, windowMs)),
    AGENT_SENDS_ABOVE_VENDOR_LIMIT: 'true',
    AGENT_SEND_WINDOW_MS: String(windowMs),
    WORKER_SHUTDOWN_GRACE_TIME: '2s',
    AGENT_API_REQUEST_TIMEOUT: '2s',
  });
  const workerBDied = workerB.exited.then((exit) => {
    throw new Error(`service B's worker exited early (code ${exit.code}):\n${exit.output}`);
  });
  workerBDied.catch(() => undefined);
  const [a, b] = [h.followUps(queueA), h.followUps(queueB)];
  const polling = { ...FAST_POLLING, timeout: '3m' };
  try {
    await workerA.runUntil(async () => {
      await Promise.race([
        workerBDied,
        waitFor(async () => (await b.workers()).length > 0, "service B's worker to poll"),
      ]);
      const started = await Promise.all([
        a.start({ ...shared, prompt: 'From service A', polling }),
        b.start({ ...shared, prompt: 'From service B', polling }),
        a.start({ ...(jobs[1] as typeof shared), prompt: 'A to job 1', polling }),
        b.start({ ...(jobs[2] as typeof shared), prompt: 'B to job 2', polling }),
        b.start({ ...(jobs[3] as typeof shared), prompt: 'B to job 3', polling }),
      ]);
      await Promise.all(started.map(({ workflowId }) => a.result(workflowId)));
      const view = await project(projectId);
      expect(view.totals).toMatchObject({ granted: 5, served: 5 });
      // Four follow-ups hold their jobs at once against a budget of 3: one waits. The shared job's second follow-up
      // waits too only if its lane frees before the first window empties (37 s after the first grants): not when the
      // first holder is slow to finish, the likely reason CI on 09521c2 counted 1. The window itself is checked below.
      expect(view.totals.waitedForBudget).toBeGreaterThanOrEqual(1);
    });
  } finally {
    workerB.child.kill('SIGTERM');
    await workerB.exited;
  }
  const sharedCounts = h.simulator.counts(shared.projectId, shared.jobId);
  expect([...sharedCounts.prompts].sort()).toEqual(['From service A', 'From service B']);
  // One lane for the job whichever queue the follow-up came from: never sent while the job worked on the other's.
  expect(sharedCounts.statusesAtSend.every((status) => status !== 'active')).toBe(true);
  expect(maxInAnyWindow(acceptedTimes(jobs), windowMs)).toBeLessThanOrEqual(3);
});

test("a follow-up waiting for the budget says so, with the window's use and its slot; one behind another says how many go first", async () => {
  const { projectId } = uniqueJob('told');
  const [first, second, third] = jobsOf(projectId, 3) as [
    { projectId: string; jobId: string },
    { projectId: string; jobId: string },
    { projectId: string; jobId: string },
  ];
  h.simulator.addJob({ ...first, workMs: 20_000 });
  h.simulator.addJob(second);
  h.simulator.addJob(third);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, { coordination: { sendsPerHour: 1 } });
  const followUps = h.followUps(taskQueue);
  const polling = { ...FAST_POLLING, timeout: '1m' };
  await worker.runUntil(async () => {
    const holder = await followUps.start({ ...first, prompt: 'First', polling });
    await waitFor(() => h.simulator.counts(first.projectId, first.jobId).messagesAccepted === 1, 'the first send');
    const behind = await followUps.start({ ...first, prompt: 'Second, same job', polling });
    const waiting = await followUps.start({ ...second, prompt: 'Other job', polling });
    await waitFor(
      async () => (await followUps.progress(waiting.workflowId)).queue?.reason === 'budget',
      'the budget notice',
    );
    await waitFor(
      async () => (await followUps.progress(behind.workflowId)).queue?.reason === 'lane',
      'the lane notice',
    );

    const budget = await followUps.progress(waiting.workflowId);
    expect(budget).toMatchObject({
      phase: 'queued',
      queue: { reason: 'budget', sentInWindow: 1, limit: 1, windowMs: 3_600_000, ahead: 0 },
    });
    expect(budget.queue?.reason === 'budget' && Date.parse(budget.queue.nextSlotAt ?? '') - Date.now()).toBeGreaterThan(
      50 * 60_000,
    );
    expect(describeProgress(budget)).toMatch(
      /Waiting for the project's send budget: 1 of 1 sent in the last hour, next slot \d\d:\d\d:\d\d UTC \(in (1h\d*m?|\d+m\d*s?)\)/,
    );
    const lane = await followUps.progress(behind.workflowId);
    expect(lane.queue).toEqual({ reason: 'lane', jobId: first.jobId, ahead: 1 });
    expect(describeProgress(lane)).toContain(`Waiting behind 1 follow-up to job ${first.jobId}`);
    const status = await followUps.status(waiting.workflowId);
    expect(status.progress?.queue?.reason).toBe('budget');
    // The coordinator's own account, as `budget show` prints it.
    expect(await followUps.projectBudget(projectId)).toMatchObject({
      limit: 1,
      sentInWindow: 1,
      waitingForBudget: [waiting.workflowId],
    });

    // A follow-up keeps the count it was told when it queued; the client counts afresh from the coordinator.
    const last = await followUps.start({ ...third, prompt: 'Third job', polling });
    await waitFor(async () => {
      const queue = (await followUps.progress(last.workflowId)).queue;
      return queue?.reason === 'budget' && queue.ahead === 1;
    }, 'the third notice, one ahead');
    await followUps.cancel(waiting.workflowId);
    await waitFor(
      async () => (await followUps.projectBudget(projectId))?.waitingForBudget.join() === last.workflowId,
      'the cancelled follow-up gone from the line',
    );
    const told = await h.client.workflow.getHandle(last.workflowId).query(progressQuery);
    expect(told.queue).toMatchObject({ reason: 'budget', ahead: 1 });
    const recounted = await followUps.progress(last.workflowId);
    expect(recounted.queue).toMatchObject({ reason: 'budget', sentInWindow: 1, limit: 1, ahead: 0 });
    const countedAt = recounted.queue?.reason === 'budget' ? Date.parse(recounted.queue.countedAt ?? '') : NaN;
    expect(countedAt).toBeGreaterThan(Date.parse(told.queue?.reason === 'budget' ? (told.queue.countedAt ?? '') : ''));
    expect(describeProgress(recounted)).not.toContain('ahead');
    for (const id of [holder.workflowId, behind.workflowId, last.workflowId]) await followUps.cancel(id);
  });
});

test('a budget set for one project lets its waiting follow-up go; `budget show` tells it', async () => {
  const { projectId } = uniqueJob('set');
  const { first, second, worker, followUps } = await twoJobsOneSendAnHour(projectId);
  await worker.runUntil(async () => {
    const ids = await startAll(followUps, [first, second]);
    await waitFor(
      async () => (await followUps.projectBudget(projectId))?.waitingForBudget.length === 1,
      'one to wait for the budget',
    );
    await followUps.setProjectBudget(projectId, 5);
    await Promise.all(ids.map((id) => followUps.result(id)));
    expect(await followUps.projectBudget(projectId)).toMatchObject({
      limit: 5,
      limitSetForProject: true,
      sentInWindow: 2,
    });
    expect((await followUps.projectBudgets()).map((view) => view.projectId)).toContain(projectId);
  });
});

test('the deadline while waiting for the budget ends the follow-up timed out with nothing sent; a re-run then sends once', async () => {
  const { projectId } = uniqueJob('deadline');
  const { first, second, worker, followUps } = await twoJobsOneSendAnHour(projectId);
  const input = { ...second, prompt: 'Waits past its deadline', polling: { ...FAST_POLLING, timeout: '4s' } };
  await worker.runUntil(async () => {
    await followUps.startAndWait({ ...first, prompt: 'Takes the only slot', polling: FAST_POLLING });
    const { workflowId } = await followUps.start(input);
    const error = await followUps.result(workflowId).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(FollowUpErrorType.TimedOut);
    expect((cause as ApplicationFailure).message).toContain(
      "the project's send budget had no free slot before the deadline; nothing was sent",
    );
    expect(h.simulator.counts(second.projectId, second.jobId).messagesAccepted).toBe(0);
    // Nothing is open: with room in the budget the same follow-up, started again, sends once.
    await followUps.setProjectBudget(projectId, 10);
    const again = await followUps.startAndWait({ ...input, polling: FAST_POLLING });
    expect(again.attached).toBe(false);
    expect(again.result).toMatchObject({ outcome: 'completed', delivery: 'response', sendAttempts: 1 });
  });
  expect(h.simulator.counts(second.projectId, second.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('a follow-up cancelled while waiting for the budget sent nothing, and a re-run sends once (never "delivery unknown")', async () => {
  const { projectId } = uniqueJob('cancel');
  const { first, second, worker, followUps } = await twoJobsOneSendAnHour(projectId);
  const input = { ...second, prompt: 'Cancelled in the queue', polling: FAST_POLLING };
  await worker.runUntil(async () => {
    await followUps.startAndWait({ ...first, prompt: 'Takes the only slot', polling: FAST_POLLING });
    const { workflowId } = await followUps.start(input);
    await waitFor(
      async () => (await followUps.progress(workflowId)).queue?.reason === 'budget',
      'the wait for the budget',
    );
    await followUps.cancel(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
    expect(await followUps.projectBudget(projectId)).toMatchObject({ waitingForBudget: [] });
    await followUps.setProjectBudget(projectId, 10);
    const again = await followUps.startAndWait(input);
    expect(again.result).toMatchObject({ outcome: 'completed', sendAttempts: 1 });
  });
  expect(h.simulator.counts(second.projectId, second.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('a send that waited over 30 s for the budget and then met a 502 before the API took it is sent again, once', async () => {
  const windowMs = 35_000;
  const { projectId } = uniqueJob('late');
  const jobs = jobsOf(projectId, 3);
  const last = jobs[2] as { projectId: string; jobId: string };
  for (const job of jobs) h.simulator.addJob(job);
  h.simulator.injectFaults(last.projectId, last.jobId, [{ operation: 'send', status: 502, times: 1 }]);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, {
    coordination: { sendsPerHour: perHour(2, windowMs), windowMs },
  });
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const ids = await startAll(followUps, jobs.slice(0, 2));
    await Promise.all(ids.map((id) => followUps.result(id)));
    const { result } = await followUps.startAndWait({
      ...last,
      prompt: 'Waits, then meets a 502',
      polling: { ...FAST_POLLING, timeout: '3m' },
    });
    expect(result).toMatchObject({ outcome: 'completed', sendAttempts: 2 });
  });
  expect(h.simulator.counts(last.projectId, last.jobId)).toMatchObject({ messagesAccepted: 1, messagesRejected: 1 });
});

test("a default budget for every project, kept durably, holds a project without its own; cleared, the workers' setting applies again", async () => {
  const { projectId } = uniqueJob('default');
  const jobs = jobsOf(projectId, 2);
  for (const job of jobs) h.simulator.addJob(job);
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const worker = await h.worker(taskQueue);
  await worker.runUntil(async () => {
    // The default is namespace-wide: set, used and cleared while this test's worker runs, so no other test sees it.
    await followUps.setDefaultBudget(1);
    try {
      await waitFor(async () => (await followUps.defaultBudget()) === 1, 'the default to be kept');
      // Forged or malformed changes by name change nothing: the default stays, and its workflow runs on.
      const defaults = h.client.workflow.getHandle(BUDGET_DEFAULTS_WORKFLOW_ID);
      for (const forged of [{ sendsPerHour: 'lots' }, { sendsPerHour: 0 }, 42, {}])
        await defaults.signal('setBudget', forged);
      await waitFor(async () => {
        const events = (await defaults.fetchHistory()).events ?? [];
        const signals = events.filter((event) => event.workflowExecutionSignaledEventAttributes).length;
        const lastSignal = events
          .map((event) => Boolean(event.workflowExecutionSignaledEventAttributes))
          .lastIndexOf(true);
        return signals >= 4 && events.slice(lastSignal).some((event) => event.workflowTaskCompletedEventAttributes);
      }, 'the forged signals to be handled');
      expect((await defaults.describe()).status.name).toBe('RUNNING');
      expect(await followUps.defaultBudget()).toBe(1);
      const ids = await startAll(followUps, jobs);
      await waitFor(
        async () => (await followUps.projectBudget(projectId))?.waitingForBudget.length === 1,
        'one to wait under the default of 1',
      );
      expect(await followUps.projectBudget(projectId)).toMatchObject({
        limit: 1,
        limitSetForProject: false,
        sentInWindow: 1,
      });
      // A project's own budget wins over the default.
      await followUps.setProjectBudget(projectId, 2);
      await Promise.all(ids.map((id) => followUps.result(id)));
    } finally {
      await followUps.setDefaultBudget(null);
      await waitFor(async () => (await followUps.defaultBudget()) === null, 'the default to be cleared');
    }
  });
  expect(jobs.map((job) => h.simulator.counts(job.projectId, job.jobId).messagesAccepted)).toEqual([1, 1]);
});
