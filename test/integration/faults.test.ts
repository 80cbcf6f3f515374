/**
 * Never wrong after a fault: each case here once broke a follow-up (issue 8) and is now a test on the real dev
 * server. The simulator does not honour Idempotency-Key, so a second delivery would be counted, not hidden.
 */
import { type WorkflowFailedError } from '@temporalio/client';
import { type ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { followUpWorkflowId } from '../../src/client';
import type { FollowUpCheckpoint } from '../../src/workflows/follow-up/checkpoint';
import { FollowUpErrorType, type FollowUpTimeoutDetails } from '../../src/kernel/types';
import type { FaultRule } from '../../src/simulator/simulator';
import {
  createHarness,
  FAST_POLLING,
  TEST_SERVER_CONTINUE_AS_NEW_AFTER,
  uniqueJob,
  waitFor,
  type Harness,
} from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ honourIdempotencyKey: false });
});
afterAll(async () => {
  await h.close();
});

async function historyLength(workflowId: string): Promise<number> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  return history.events?.length ?? 0;
}

describe('a storm of rate-limited reads', () => {
  test('reads answered 429 with Retry-After: 0 show as errors, reach the history only as "errors began", and do not end the follow-up', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 60_000 });
    const taskQueue = h.taskQueue();
    // The follow-up's own poll (a wait no watcher holds): its live figures come from its activity's heartbeats.
    const worker = await h.worker(taskQueue, undefined, { coordination: { watchShards: 0 } });
    const followUps = h.followUps(taskQueue);
    const outcome = await worker.runUntil(async () => {
      const { workflowId } = await followUps.start({ ...ref, prompt: 'Storm', polling: FAST_POLLING });
      await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the send');
      // The follow-up is waiting: its poll activity is pending, and the history stands still.
      await waitFor(async () => {
        const progress = await followUps.progress(workflowId);
        return progress.phase === 'waiting' && progress.poll !== undefined;
      }, 'the wait after the send');
      const eventsBefore = await historyLength(workflowId);
      h.simulator.setJobFaults(ref.projectId, ref.jobId, [
        { operation: 'get', kind: 'status', status: 429, retryAfter: '0' },
      ]);
      const getsBefore = h.simulator.counts(ref.projectId, ref.jobId).gets;
      // Errors as errors, while they last: the workflow's own view (Web UI, query) and the live count from the
      // activity, as fresh as its last heartbeat (at most 0.8 × its heartbeat timeout old).
      let during = await followUps.progress(workflowId);
      await waitFor(async () => {
        during = await followUps.progress(workflowId);
        return (during.poll?.failedReads ?? 0) >= 5;
      }, 'the live count of failed reads');
      await waitFor(
        () => h.simulator.counts(ref.projectId, ref.jobId).gets >= getsBefore + 40,
        '40 rate-limited reads',
      );
      const eventsAfter = await historyLength(workflowId);
      // Reads succeed again (still active): the follow-up hears it, and shows no error.
      h.simulator.setJobFaults(ref.projectId, ref.jobId, []);
      await waitFor(async () => (await followUps.progress(workflowId)).lastError === null, 'the errors to clear');
      const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
      const signals = (history.events ?? []).filter(
        (event) => event.workflowExecutionSignaledEventAttributes?.signalName === 'jobReads',
      );
      h.simulator.finishJob(ref.projectId, ref.jobId);
      return { eventsBefore, eventsAfter, during, signals: signals.length, result: await followUps.result(workflowId) };
    });
    expect(outcome.during.lastError).toContain('AgentApiRateLimited');
    expect(outcome.during.errorsSince).not.toBeNull();
    expect(outcome.during.poll?.lastError).toContain('AgentApiRateLimited');
    expect(outcome.during.poll?.failingSince).toBe(outcome.during.errorsSince);
    // The failed reads themselves never reach the workflow: one signal when they began (4 events with its task)...
    expect(outcome.eventsAfter - outcome.eventsBefore).toBeLessThanOrEqual(4);
    // ...and one when they ended.
    expect(outcome.signals).toBe(2);
    expect(outcome.result.outcome).toBe('completed');
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test('a storm of refused sends continues as new before the history limit and delivers once', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    // Each refused attempt adds events; 12 of them outgrow the test server's continue-as-new suggestion.
    h.simulator.injectFaults(ref.projectId, ref.jobId, [
      { operation: 'send', status: 429, retryAfter: '0', times: 12 },
    ]);
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const { result, workflowId } = await worker.runUntil(
      h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Refused', polling: FAST_POLLING }),
    );
    expect(result.outcome).toBe('completed');
    expect(result.sendAttempts).toBe(13);
    expect(result.runs).toBeGreaterThanOrEqual(2);
    expect(await historyLength(workflowId)).toBeLessThanOrEqual(TEST_SERVER_CONTINUE_AS_NEW_AFTER + 30);
    // Each refused POST was one attempt; the one that went through was the last.
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 13, messagesAccepted: 1 });
  });
});

describe('a follow-up that ends after errors names them', () => {
  /** Sends a follow-up to a job that works for long, then has its reads fail as `rules` say; returns its failure. */
  async function failureAfterSend(
    prompt: string,
    timeout: string,
    rules: FaultRule[],
  ): Promise<ApplicationFailure | null> {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 600_000 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    return worker.runUntil(async () => {
      const { workflowId } = await followUps.start({ ...ref, prompt, polling: { ...FAST_POLLING, timeout } });
      await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the send');
      h.simulator.setJobFaults(ref.projectId, ref.jobId, rules);
      return followUps.result(workflowId).then(
        () => null,
        (error: WorkflowFailedError) => error.cause as ApplicationFailure,
      );
    });
  }

  test('timed out during HTTP 500s: the failure says since when reads failed, how many, and the last error', async () => {
    const failure = await failureAfterSend('Outage', '6s', [{ operation: 'get', kind: 'status', status: 500 }]);
    expect(failure?.type).toBe(FollowUpErrorType.TimedOut);
    expect(failure?.message).toMatch(
      /within 6s .*Calls to the agent API had failed since \d\d:\d\d:\d\d UTC \(\d+ reads in a row\); last: AgentApiServerError: .*HTTP 500/,
    );
    const details = failure?.details?.[0] as FollowUpTimeoutDetails;
    expect(details.errors?.failedReads).toBeGreaterThan(1);
    expect(details.errors?.lastError).toContain('HTTP 500');
  });

  test('a GET Retry-After past the deadline ends the follow-up at once as timed out, saying when and why', async () => {
    // Every read is asked to wait: the watcher's, and the follow-up's own read that must confirm what it was told.
    const failure = await failureAfterSend('Come back later', '10m', [
      { operation: 'get', kind: 'status', status: 503, retryAfter: String(10 * 24 * 3600) },
    ]);
    expect(failure?.type).toBe(FollowUpErrorType.TimedOut);
    // Not "within 10m": it gave up long before, because no read could come in time.
    expect(failure?.message).toMatch(
      /^The follow-up gave up after \d+s of its 10m: the agent API asked \(Retry-After\) to wait 1h before it would read job '/,
    );
    expect(failure?.message).toContain('last: AgentApiServerError');
    expect((failure?.details?.[0] as FollowUpTimeoutDetails).retryAfterMs).toBe(3_600_000);
  });
});

test('a job body of 2 MB with one large unknown field completes, keeping only the documented fields', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 1_500, extraFields: { transcript: 'x'.repeat(2 * 1024 * 1024) } });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const { result } = await worker.runUntil(
    h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Big body', polling: FAST_POLLING }),
  );
  expect(result.outcome).toBe('completed');
  expect(result.prLink).not.toBeNull();
  expect(Object.keys(result.job).sort()).toEqual([
    'archivedAt',
    'createdAt',
    'id',
    'model',
    'prLink',
    'source',
    'status',
  ]);
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

test('a send under way when its worker stops is carried to its answer: sent once, known by the response, never sent again', async () => {
  const ref = uniqueJob();
  // The API takes 3s to answer (it processes the message all the same); the worker stops after 0.2s of grace.
  h.simulator.addJob({
    ...ref,
    workMs: 3_000,
    faults: [{ operation: 'send', kind: 'latency', latencyMs: 3_000, times: 1 }],
  });
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...ref, prompt: 'Stop mid-send', polling: FAST_POLLING });
  const first = await h.worker(taskQueue, undefined, { shutdownGraceTimeMs: 200 });
  await first.runUntil(
    waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).idempotencyKeys.length === 1, 'the send on the wire'),
  );
  const second = await h.worker(taskQueue);
  const result = await second.runUntil(followUps.result(workflowId));
  expect(result.outcome).toBe('completed');
  // A request that has left is never cut off (it would leave delivery open): the stopping worker lets it answer.
  expect(result.delivery).toBe('response');
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
});

describe('a follow-up started again after its message went out resumes instead of sending again', () => {
  test('after a key refused mid-wait (fixed, then the same input started again)', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 3_000 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    const input = { ...ref, prompt: 'Key rotated', polling: FAST_POLLING };
    const { first, result } = await worker.runUntil(async () => {
      const { workflowId } = await followUps.start(input);
      await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the send');
      // The key is refused for every read (the watcher's, and the follow-up's own that confirms it) until it is fixed.
      h.simulator.setJobFaults(ref.projectId, ref.jobId, [{ operation: 'get', kind: 'status', status: 401 }]);
      const failure = await followUps.result(workflowId).then(
        () => undefined,
        (e: unknown) => e,
      );
      h.simulator.setJobFaults(ref.projectId, ref.jobId, []);
      const again = await followUps.start(input);
      return { first: failure, result: await followUps.result(again.workflowId) };
    });
    expect(((first as WorkflowFailedError).cause as ApplicationFailure).type).toBe('AgentApiUnauthorized');
    expect(result.outcome).toBe('completed');
    expect(result.delivery).toBe('earlier-run');
    expect(result.prLink).toBe(h.simulator.job(ref.projectId, ref.jobId).prLink);
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test('after it timed out', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    const input = { ...ref, prompt: 'Slow agent', polling: { ...FAST_POLLING, timeout: '3s' } };
    const { first, result } = await worker.runUntil(async () => {
      const { workflowId } = await followUps.start(input);
      const failure = await followUps.result(workflowId).then(
        () => undefined,
        (e: unknown) => e,
      );
      h.simulator.finishJob(ref.projectId, ref.jobId);
      const again = await followUps.start(input);
      return { first: failure, result: await followUps.result(again.workflowId) };
    });
    expect(((first as WorkflowFailedError).cause as ApplicationFailure).type).toBe(FollowUpErrorType.TimedOut);
    expect(result.outcome).toBe('completed');
    expect(result.delivery).toBe('earlier-run');
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test('after it was cancelled while the send was on the wire: the cancel waited for the send, so the re-run resumes from its record', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({
      ...ref,
      workMs: 4_000,
      faults: [{ operation: 'send', kind: 'latency', latencyMs: 1_500, times: 1 }],
    });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    const input = { ...ref, prompt: 'Cancelled mid-send', polling: FAST_POLLING };
    const { first, result } = await worker.runUntil(async () => {
      const { workflowId } = await followUps.start(input);
      await waitFor(
        () => h.simulator.counts(ref.projectId, ref.jobId).idempotencyKeys.length === 1,
        'the send on the wire',
      );
      await followUps.cancel(workflowId);
      const failure = await followUps.result(workflowId).then(
        () => undefined,
        (e: unknown) => e,
      );
      await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the API to take it');
      const again = await followUps.start(input);
      return { first: failure, result: await followUps.result(again.workflowId) };
    });
    expect((first as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    expect(result.outcome).toBe('completed');
    expect(result.delivery).toBe('earlier-run');
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test('a new workflow id is the explicit way to send the same prompt again', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 300 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    const input = { ...ref, prompt: 'Twice on purpose', polling: FAST_POLLING };
    await worker.runUntil(async () => {
      await followUps.startAndWait(input);
      await followUps.startAndWait(input, { workflowId: `${followUpWorkflowId(followUps.validate(input))}-again` });
    });
    expect(h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(2);
  });
});

describe('every workflow argument is checked before it is used', () => {
  async function startRaw(args: unknown[]) {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const error = await worker.runUntil(
      h.client.workflow
        .execute('followUpWorkflow', {
          taskQueue,
          workflowId: `raw-${ref.jobId}`,
          args: args.map((arg) => (arg === 'REF' ? { ...ref, prompt: 'Raw' } : arg)),
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        ),
    );
    return { error, counts: h.simulator.counts(ref.projectId, ref.jobId) };
  }

  test('a second argument from a starter fails the follow-up with InvalidFollowUpInput and sends nothing', async () => {
    const { error, counts } = await startRaw(['REF', 'b']);
    const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe(FollowUpErrorType.InvalidInput);
    expect(cause.message).toContain('takes one argument');
    expect(counts.messagesAccepted).toBe(0);
  });

  test('a forged checkpoint claiming the message was delivered is refused, not trusted', async () => {
    const forged: FollowUpCheckpoint = {
      deadlineMs: Date.now() + 60_000,
      runs: 1,
      polls: 0,
      sendAttempts: 1,
      lastJob: null,
      delivered: {
        baseline: { status: 'completed', prLink: 'https://github.com/acme/old/pull/1', archivedAt: null },
        sentAtMs: 0,
        via: 'response',
        sawActive: true,
        known: { status: 'completed', prLink: 'https://github.com/acme/old/pull/1', archivedAt: null },
        previous: null,
      },
    };
    const { error, counts } = await startRaw(['REF', forged]);
    expect(((error as WorkflowFailedError).cause as ApplicationFailure).type).toBe(FollowUpErrorType.InvalidInput);
    expect(counts.messagesAccepted).toBe(0);
  });

  test('a duration of the wrong type fails the follow-up with InvalidFollowUpInput, not its workflow task', async () => {
    const { error, counts } = await startRaw([
      { projectId: 'p', jobId: 'j', prompt: 'x', polling: { timeout: { days: 1 } } },
    ]);
    const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe(FollowUpErrorType.InvalidInput);
    expect(cause.message).toContain('polling.timeout');
    expect(counts.messagesAccepted).toBe(0);
  });
});
