import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { followUpWorkflowId, InvalidFollowUpInputError } from '../../src/client';
import { FollowUpErrorType } from '../../src/kernel/types';
import {
  createHarness,
  FAST_POLLING,
  TEST_SERVER_HISTORY_LIMIT,
  uniqueJob,
  waitFor,
  type Harness,
} from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

test('a worker stopped mid-poll and a new one started finish the follow-up with exactly one POST', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 3_000 });
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...ref, prompt: 'Survive a restart', polling: FAST_POLLING });

  const first = await h.worker(taskQueue);
  await first.runUntil(waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).gets >= 2, 'two polls'));
  expect(h.simulator.job(ref.projectId, ref.jobId).status).toBe('active');

  const second = await h.worker(taskQueue);
  const result = await second.runUntil(followUps.result(workflowId));
  expect(result.outcome).toBe('completed');
  expect(result.prLink).not.toBeNull();
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('continue-as-new keeps the follow-up going across runs without sending the message again', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 1_000 });
  // A storm of refusals: every attempt adds events, so the run outgrows the test server's continue-as-new suggestion.
  h.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'send', status: 429, retryAfter: '1', times: 8 }]);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const { result, workflowId } = await worker.runUntil(
    h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Long run', polling: FAST_POLLING }),
  );
  expect(result.outcome).toBe('completed');
  expect(result.runs).toBeGreaterThanOrEqual(2);
  expect(result.sendAttempts).toBe(9);
  // Eight refused POSTs, then the one accepted; none after it in a later run.
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 9, messagesAccepted: 1 });
  // The last run really was continued from an earlier one.
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  expect(history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId).toBeTruthy();
  expect(history.events?.length).toBeLessThan(TEST_SERVER_HISTORY_LIMIT);
});

test('cancelling the follow-up stops polling and ends the workflow as cancelled', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const worker = await h.worker(taskQueue);
  const outcome = await worker.runUntil(async () => {
    const { workflowId } = await followUps.start({ ...ref, prompt: 'Cancel me', polling: FAST_POLLING });
    await waitFor(async () => (await followUps.progress(workflowId)).polls >= 1, 'a first poll');
    await followUps.cancel(workflowId);
    const error = await followUps.result(workflowId).then(
      () => undefined,
      (e: unknown) => e,
    );
    const progress = await followUps.progress(workflowId);
    return { error, progress, status: (await followUps.status(workflowId)).executionStatus };
  });
  expect(outcome.error).toBeInstanceOf(WorkflowFailedError);
  expect((outcome.error as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  expect(outcome.status).toBe('CANCELLED');
  expect(outcome.progress.phase).toBe('cancelled');
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('starting the same follow-up again attaches to it instead of sending a second message', async () => {
  const ref = uniqueJob();
  h.simulator.addJob(ref);
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const input = { ...ref, prompt: 'Only once, please', polling: FAST_POLLING };

  const first = await followUps.start(input);
  const retried = await followUps.start(input);
  expect(first).toEqual({ workflowId: followUpWorkflowId(input), attached: false });
  expect(retried).toEqual({
    workflowId: first.workflowId,
    attached: true,
    startedAt: expect.any(String),
    executionStatus: 'RUNNING',
  });

  const worker = await h.worker(taskQueue);
  const result = await worker.runUntil(followUps.result(first.workflowId));
  const afterCompletion = await followUps.startAndWait(input);
  expect(afterCompletion).toMatchObject({ attached: true, executionStatus: 'COMPLETED', startedAt: retried.startedAt });
  expect(afterCompletion.result).toEqual(result);
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('bad input is rejected by the client before anything starts', async () => {
  const ref = uniqueJob();
  const followUps = h.followUps(h.taskQueue());
  const input = { ...ref, prompt: '', polling: { initialInterval: '-1s' } };
  await expect(followUps.start(input)).rejects.toThrow(InvalidFollowUpInputError);
  await expect(followUps.start(input)).rejects.toThrow(/prompt must not be empty.*polling\.initialInterval/);
  const started = await h.client.workflow.list({
    query: `WorkflowId = '${followUpWorkflowId({ ...ref, prompt: '' })}'`,
  });
  for await (const execution of started)
    throw new Error(`a workflow was started for bad input: ${execution.workflowId}`);
});

test('bad input that bypasses the client fails the workflow with InvalidFollowUpInput and sends nothing', async () => {
  const ref = uniqueJob();
  h.simulator.addJob(ref);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const error = await worker.runUntil(
    h.client.workflow
      .execute('followUpWorkflow', {
        taskQueue,
        workflowId: `raw-${ref.jobId}`,
        args: [{ ...ref, prompt: 'ok', polling: { backoffCoefficient: 0.5 } }],
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      ),
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause.type).toBe(FollowUpErrorType.InvalidInput);
  expect(cause.nonRetryable).toBe(true);
  expect(cause.message).toMatch(/polling\.backoffCoefficient must be at least 1/);
  expect(h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(0);
});

test('a follow-up to a job the API does not know fails with AgentJobNotFound before anything is sent', async () => {
  const ref = uniqueJob();
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const input = { ...ref, prompt: 'Hello?', polling: FAST_POLLING };
  const error = await worker.runUntil(
    h
      .followUps(taskQueue)
      .startAndWait(input)
      .then(
        () => undefined,
        (e: unknown) => e,
      ),
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  // The reason is on top, not Temporal's "Activity task failed" around it.
  const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect(cause.type).toBe('AgentJobNotFound');
  expect(cause.nonRetryable).toBe(true);
  expect(cause.message).toContain(ref.jobId);
  // The read before the send finds no job, so the send is never scheduled.
  const history = await h.client.workflow
    .getHandle(followUpWorkflowId(h.followUps(taskQueue).validate(input)))
    .fetchHistory();
  const activityTypes = (history.events ?? []).flatMap(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
  expect(activityTypes).toContain('pollAgentJob');
  expect(activityTypes).not.toContain('sendFollowUpMessage');
});

test('polls that keep failing are recorded and polling goes on until the job ends', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 3_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const result = await worker.runUntil(async () => {
    const { workflowId } = await followUps.start({ ...ref, prompt: 'Through the storm', polling: FAST_POLLING });
    await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the send');
    // Failed reads are retried at the next planned poll; the wait goes on.
    h.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 503, times: 4 }]);
    return followUps.result(workflowId);
  });
  expect(result.outcome).toBe('completed');
  const counts = h.simulator.counts(ref.projectId, ref.jobId);
  expect(counts).toMatchObject({ posts: 1, messagesAccepted: 1 });
  expect(counts.gets).toBeGreaterThanOrEqual(6);
});

test('a 429 on the send is retried after Retry-After and the message is accepted once', async () => {
  const ref = uniqueJob();
  h.simulator.addJob(ref);
  h.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'send', status: 429, retryAfter: '1' }]);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const { result } = await worker.runUntil(
    h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Patience', polling: FAST_POLLING }),
  );
  expect(result.outcome).toBe('completed');
  const counts = h.simulator.counts(ref.projectId, ref.jobId);
  expect(counts).toMatchObject({ posts: 2, messagesRejected: 1, messagesAccepted: 1 });
});

test('a status outside the documented four is not terminal: polling goes on', async () => {
  const ref = uniqueJob();
  const job = h.simulator.addJob({ ...ref, workMs: 300 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const result = await worker.runUntil(async () => {
    const { workflowId } = await followUps.start({ ...ref, prompt: 'New statuses', polling: FAST_POLLING });
    await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the send');
    h.simulator.injectFaults(ref.projectId, ref.jobId, [
      { operation: 'get', status: 200, body: JSON.stringify({ ...job, status: 'queued', prLink: null }), times: 2 },
    ]);
    return followUps.result(workflowId);
  });
  expect(result.outcome).toBe('completed');
  expect(result.polls).toBeGreaterThanOrEqual(3);
});
