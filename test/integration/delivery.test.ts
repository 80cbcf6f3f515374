/**
 * Exactly one follow-up per request, whatever the send's failure, and never a stale result. The simulator here does
 * NOT honour Idempotency-Key unless a test says so, so a second delivery would be counted, not hidden.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { ApplicationFailure } from '@temporalio/common';
import { AgentApiClient } from '../../src/agent-api/http-client';
import { FollowUpErrorType, type FollowUpDeliveryUnknownDetails } from '../../src/kernel/types';
import { AgentApiSimulator } from '../../src/simulator/simulator';
import { followUpWorkflowId } from '../../src/client';
import { followUpStartMetadata } from '../../src/client/start-metadata';
import { createHarness, FAST_POLLING, TEST_API_KEY, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ honourIdempotencyKey: false });
});
afterAll(async () => {
  await h.close();
});

async function followUp(ref: { projectId: string; jobId: string }, extra: object = {}, api?: AgentApiClient) {
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, api);
  return worker.runUntil(
    h
      .followUps(taskQueue)
      .startAndWait({ ...ref, prompt: 'Please add tests', polling: FAST_POLLING, ...extra })
      .then(
        ({ result }) => ({ result, error: undefined }),
        (error: unknown) => ({ result: undefined, error }),
      ),
  );
}

test('a send whose connection drops after the API took it is reconciled, not resent', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({
    ...ref,
    workMs: 4_000,
    faults: [{ operation: 'send', kind: 'drop-after-processing', times: 1 }],
  });
  const { result } = await followUp(ref);
  expect(result?.outcome).toBe('completed');
  expect(result?.delivery).toBe('reconciled');
  expect(result?.sendAttempts).toBe(1);
  const counts = h.simulator.counts(ref.projectId, ref.jobId);
  expect(counts.dropped).toBe(1);
  expect(counts).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('a send whose connection drops before the API read it is sent again, once', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, faults: [{ operation: 'send', kind: 'drop-before-processing', times: 1 }] });
  const { result } = await followUp(ref);
  expect(result?.outcome).toBe('completed');
  expect(result?.delivery).toBe('response');
  expect(result?.sendAttempts).toBe(2);
  // Two POSTs, the first of which the API never read.
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 2, dropped: 1, messagesAccepted: 1 });
});

test('a send that failed long after its request left is settled by one activity, with no timer: the trust window counts from the request', async () => {
  const ref = uniqueJob();
  // Held 6 s, then dropped unread: the failure comes when the request is already older than the pause before a read.
  h.simulator.addJob({
    ...ref,
    faults: [
      { operation: 'send', kind: 'latency', latencyMs: 6_000, times: 1 },
      { operation: 'send', kind: 'drop-before-processing', times: 1 },
    ],
  });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const input = { ...ref, prompt: 'Please add tests', polling: FAST_POLLING };
  const { result } = await worker.runUntil(h.followUps(taskQueue).startAndWait(input));
  expect(result.outcome).toBe('completed');
  expect(result.sendAttempts).toBe(2);
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 2, dropped: 1, messagesAccepted: 1 });
  const events =
    (await h.client.workflow.getHandle(followUpWorkflowId(h.followUps(taskQueue).validate(input))).fetchHistory())
      .events ?? [];
  const failedAt = events.findIndex((event) => event.activityTaskFailedEventAttributes);
  const resentAt = events.findIndex(
    (event, index) =>
      index > failedAt && event.activityTaskScheduledEventAttributes?.activityType?.name === 'sendFollowUpMessage',
  );
  const between = events.slice(failedAt + 1, resentAt);
  // Both reads (one lagging read must not decide) in one activity, so no workflow task or timer falls between them.
  // Then the attempt is settled as not sent and the follow-up starts over (a fresh read, a check-in for a slot).
  const steps = between.flatMap((event) =>
    event.timerStartedEventAttributes
      ? ['pause']
      : event.activityTaskScheduledEventAttributes
        ? [String(event.activityTaskScheduledEventAttributes.activityType?.name)]
        : [],
  );
  expect(steps[0]).toBe('readSendOutcome');
  expect(steps).not.toContain('pause');
});

test('a send that times out after the request was written is reconciled from the job', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({
    ...ref,
    workMs: 4_000,
    faults: [{ operation: 'send', kind: 'latency', latencyMs: 1_000, times: 1 }],
  });
  const { result } = await followUp(ref, {}, h.api({ requestTimeoutMs: 300 }));
  expect(result?.outcome).toBe('completed');
  expect(result?.delivery).toBe('reconciled');
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('a 500 on the send, which the API did not act on, is reconciled and sent again, once', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, faults: [{ operation: 'send', kind: 'status', status: 500, times: 1 }] });
  const { result } = await followUp(ref);
  expect(result?.outcome).toBe('completed');
  expect(result?.sendAttempts).toBe(2);
  const counts = h.simulator.counts(ref.projectId, ref.jobId);
  expect(counts).toMatchObject({ posts: 2, messagesRejected: 1, messagesAccepted: 1 });
});

test("with onAmbiguousSend 'fail' an ambiguous send ends with FollowUpDeliveryUnknown and is never repeated", async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, faults: [{ operation: 'send', kind: 'drop-after-processing', times: 1 }] });
  const { error } = await followUp(ref, { onAmbiguousSend: 'fail' });
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause.type).toBe(FollowUpErrorType.DeliveryUnknown);
  expect(cause.message).toContain('Nothing was resent');
  expect((cause.details?.[0] as FollowUpDeliveryUnknownDetails).sendAttempts).toBe(1);
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('a job busy with earlier work is waited for: the message goes out once it is idle, and the result is its own', async () => {
  const ref = uniqueJob();
  const taskQueue = h.taskQueue();
  // The worker first: its start took longer than the job's busy time on a loaded CI machine, and the check-in then
  // found the job idle already.
  const worker = await h.worker(taskQueue);
  // The earlier work ends with pull request 101; this follow-up's own work makes 102.
  h.simulator.addJob({ ...ref, busyForMs: 3_000 });
  const input = { ...ref, prompt: 'Please add tests', polling: FAST_POLLING };
  const { result } = await worker.runUntil(h.followUps(taskQueue).startAndWait(input));
  expect(result.outcome).toBe('completed');
  expect(result.prLink).toMatch(/\/pull\/102$/);
  const counts = h.simulator.counts(ref.projectId, ref.jobId);
  expect(counts).toMatchObject({ posts: 1, messagesAccepted: 1 });
  expect(counts.statusesAtSend).toEqual(['completed']);
  // The wait for the busy job was the job watcher's, as the wait after the send is: the follow-up's only read of its
  // own before the send confirms the end of the earlier work its watcher told (issue 73).
  const history = await h.client.workflow
    .getHandle(followUpWorkflowId(h.followUps(taskQueue).validate(input)))
    .fetchHistory();
  const activityTypes = (history.events ?? []).flatMap(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
  const beforeSend = activityTypes.slice(0, activityTypes.indexOf('sendFollowUpMessage'));
  expect(beforeSend).toContain('registerWatch');
  expect(beforeSend.filter((name) => name === 'pollAgentJob')).toEqual(['pollAgentJob']);
});

test('a job still busy at the deadline: the follow-up times out saying nothing was sent, and sends nothing', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, busyForMs: 10 * 60_000 });
  const { error } = await followUp(ref, { polling: { ...FAST_POLLING, timeout: '4s' } });
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const failure = (error as WorkflowFailedError).cause as ApplicationFailure;
  expect(failure.type).toBe(FollowUpErrorType.TimedOut);
  expect(failure.message).toContain('within 4s (the message was not sent: the job was still active)');
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 0, messagesAccepted: 0 });
});

test('on a free lane the job is read with the check-in, a local activity: the send is the first activity task', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 500 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const input = { ...ref, prompt: 'Please add tests', polling: FAST_POLLING };
  const { result } = await worker.runUntil(h.followUps(taskQueue).startAndWait(input));
  expect(result.outcome).toBe('completed');
  const history = await h.client.workflow
    .getHandle(followUpWorkflowId(h.followUps(taskQueue).validate(input)))
    .fetchHistory();
  const events = history.events ?? [];
  const activityTypes = events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  expect(activityTypes[0]).toBe('sendFollowUpMessage');
  // The check-in ran in the workflow task that scheduled the send: its marker comes before the send.
  const sendAt = events.findIndex((event) => event.activityTaskScheduledEventAttributes);
  const markers = events.slice(0, sendAt).filter((event) => event.markerRecordedEventAttributes);
  expect(markers).toHaveLength(1);
  // The read was made all the same: the message found the job idle, and went out once.
  const counts = h.simulator.counts(ref.projectId, ref.jobId);
  expect(counts).toMatchObject({ posts: 1, messagesAccepted: 1 });
  expect(counts.statusesAtSend).toEqual(['completed']);
  expect(counts.gets).toBeGreaterThanOrEqual(2);
});

test('a first check-in that outlasts its workflow task replays as it ran: the run keeps its deadline and its decisions', async () => {
  const ref = uniqueJob();
  // The read the check-in makes is held longer than the worker may keep a 2 s workflow task open, so the worker
  // completes that task empty and goes on in the next one (a local activity's task heartbeat).
  h.simulator.addJob({
    ...ref,
    workMs: 500,
    faults: [{ operation: 'get', kind: 'latency', latencyMs: 2_500, times: 1 }],
  });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const input = { ...ref, prompt: 'Please add tests', polling: FAST_POLLING };
  const request = followUps.validate(input);
  const workflowId = followUpWorkflowId(request);
  await worker.runUntil(async () => {
    // As the client starts it (its search attributes given, so its first task has nothing to write), with a short task.
    await h.client.workflow.start('followUpWorkflow', {
      taskQueue,
      workflowId,
      args: [input],
      ...followUpStartMetadata(request),
      workflowTaskTimeout: '2s',
    });
    expect((await followUps.result(workflowId)).outcome).toBe('completed');
  });
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const marker = events.findIndex((event) => event.markerRecordedEventAttributes);
  expect(
    events.slice(0, marker).filter((event) => event.workflowTaskCompletedEventAttributes).length,
  ).toBeGreaterThanOrEqual(2);
  // Replayed from the start, as a new worker would after a crash: a decision that read the clock of the first task
  // would differ here and fail with a nondeterminism error.
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE ?? '' } },
      history,
      workflowId,
    ),
  ).resolves.toBeUndefined();
});

test("with onAmbiguousSend 'retry' the resend carries the same Idempotency-Key, and an API that honours it applies it once", async () => {
  const honouring = await AgentApiSimulator.start({
    apiKey: TEST_API_KEY,
    defaultWorkMs: 300,
    honourIdempotencyKey: true,
  });
  try {
    const ref = uniqueJob();
    honouring.addJob({ ...ref, faults: [{ operation: 'send', kind: 'drop-after-processing', times: 1 }] });
    const api = new AgentApiClient({ baseUrl: honouring.baseUrl, apiKey: TEST_API_KEY, requestTimeoutMs: 5_000 });
    const { result } = await followUp(ref, { onAmbiguousSend: 'retry' }, api);
    expect(result?.outcome).toBe('completed');
    const counts = honouring.counts(ref.projectId, ref.jobId);
    // Two POSTs with one key; the API applied the message once.
    expect(counts).toMatchObject({ posts: 2, messagesAccepted: 1, duplicatesSuppressed: 1 });
    expect(counts.idempotencyKeys).toHaveLength(2);
    expect(new Set(counts.idempotencyKeys).size).toBe(1);
  } finally {
    await honouring.close();
  }
});

test("a lagging read that still shows the previous run's result is not returned as this follow-up's result", async () => {
  const ref = uniqueJob();
  const previousPr = 'https://github.com/acme/previous/pull/7';
  h.simulator.addJob({
    ...ref,
    status: 'completed',
    prLink: previousPr,
    workMs: 3_000,
    faults: [{ operation: 'get', kind: 'stale-terminal', times: 2 }],
  });
  // The settle window must outlast the lag; the default is 30s.
  const { result } = await followUp(ref, { polling: { ...FAST_POLLING, settleWindow: '15s' } });
  expect(result?.outcome).toBe('completed');
  expect(result?.prLink).not.toBe(previousPr);
  expect(result?.prLink).toBe(h.simulator.job(ref.projectId, ref.jobId).prLink);
});

test('an unchanged result is accepted once the settle window has passed', async () => {
  const ref = uniqueJob();
  // Fails again as before, within the first poll: the same observable state as before the send.
  h.simulator.addJob({ ...ref, status: 'failed', outcome: 'failed', workMs: 50 });
  const { result } = await followUp(ref);
  expect(result?.outcome).toBe('failed');
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('429s with Retry-After on reads are waited out, and the message is still sent once', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({
    ...ref,
    workMs: 2_000,
    faults: [{ operation: 'get', kind: 'status', status: 429, retryAfter: '1', times: 3 }],
  });
  const { result } = await followUp(ref);
  expect(result?.outcome).toBe('completed');
  expect(result?.sendAttempts).toBe(1);
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('get-job bodies that keep breaking the contract fail the follow-up, naming the field', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const error = await worker.runUntil(async () => {
    const { workflowId } = await followUps.start({ ...ref, prompt: 'Contract', polling: FAST_POLLING });
    await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the send');
    h.simulator.setJobFaults(ref.projectId, ref.jobId, [{ operation: 'get', kind: 'invalid-schema' }]);
    return followUps.result(workflowId).then(
      () => undefined,
      (e: unknown) => e,
    );
  });
  const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause.type).toBe(FollowUpErrorType.ContractViolation);
  expect(cause.nonRetryable).toBe(true);
  expect(cause.message).toContain("field 'status'");
  expect(cause.message).not.toContain('simulated-agent');
});

test('a job that cannot even be read before the send, because its body breaks the contract, fails without sending', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, faults: [{ operation: 'get', kind: 'invalid-schema' }] });
  const { error } = await followUp(ref);
  const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause.type).toBe(FollowUpErrorType.ContractViolation);
  expect(cause.message).toContain("field 'status'");
  expect(h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(0);
});
