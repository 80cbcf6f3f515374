/**
 * The poll activity in the SDK's MockActivityEnvironment, reading the simulator over real loopback HTTP: when it loops,
 * when it hands the wait to Temporal's retry timer (and with what delay), what it reports, and when it gives up.
 */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { type MockActivityEnvironment } from '@temporalio/testing';
import { quietActivityEnvironment } from '../support/quiet-activity-environment';
import type { PollCheckpoint } from '../../src/activities/poll-agent-job';
import { createPollAgentJob, JOB_UNCHANGED, WORKER_STOPPING } from '../../src/activities/poll-agent-job';
import {
  RETRY_AFTER_PAST_DEADLINE,
  type ReadTrouble,
  type RetryAfterPastDeadlineDetails,
} from '../../src/kernel/types';
import { jobState } from '../../src/kernel/agent-job';
import { failureOf } from '../support/failures';
import type { AgentApiSimulator } from '../../src/simulator/simulator';
import { loopbackApi } from '../support/loopback-api';
import { type PollRequest, type PollResult } from '../../src/workflows/activity-contract';

const API_KEY = 'mint_test_poll_key_0001';
const loopback = loopbackApi(API_KEY);
let counter = 0;

function freshJob(spec: Partial<Parameters<AgentApiSimulator['addJob']>[0]> = {}) {
  counter += 1;
  const ref = { projectId: `proj-poll-${counter}`, jobId: `job-poll-${counter}` };
  const job = loopback.simulator.addJob({ ...ref, ...spec });
  return { ref, job };
}

/** A request for a wait on `ref` that started now, polling every `intervalMs`. */
function waitRequest(
  ref: { projectId: string; jobId: string },
  known: PollRequest['known'],
  intervalMs: number,
  extra: Partial<PollRequest> = {},
): PollRequest {
  const now = Date.now();
  return {
    ...ref,
    known,
    acceptUnchangedFromMs: null,
    schedule: {
      startedAtMs: now,
      initialIntervalMs: intervalMs,
      backoffCoefficient: 1,
      maxIntervalMs: intervalMs,
      deadlineMs: now + 3_600_000,
    },
    readAtOnce: false,
    ...extra,
  };
}

type PollActivity = ReturnType<typeof createPollAgentJob>;

function run(
  request: PollRequest,
  info: Partial<ConstructorParameters<typeof MockActivityEnvironment>[0]> = {},
  stopping = new AbortController().signal,
  activity: PollActivity = createPollAgentJob(loopback.api, { stopping, maxLoops: Number.POSITIVE_INFINITY }),
) {
  const env = quietActivityEnvironment({ attempt: 1, heartbeatTimeoutMs: 10_000, ...info });
  const heartbeats: PollCheckpoint[] = [];
  env.on('heartbeat', (details: PollCheckpoint) => heartbeats.push(details));
  const done: Promise<PollResult> = env.run(activity, request);
  return { env, heartbeats, done };
}

test('with nothing known, the first read is the answer', async () => {
  const { ref } = freshJob();
  const { done } = run(waitRequest(ref, null, 60_000, { readAtOnce: true }));
  const result = await done;
  expect(result.job.status).toBe('completed');
  expect(result.polls).toBe(1);
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(1);
});

test('infrequent polling: an unchanged read ends the attempt with a BENIGN failure whose retry delay is the next planned poll', async () => {
  const { ref, job } = freshJob({ busyForMs: 600_000 });
  const failure = await failureOf(run(waitRequest(ref, jobState(job), 60_000), { attempt: 2 }).done);
  expect(failure.type).toBe(JOB_UNCHANGED);
  expect(failure.category).toBe(ApplicationFailureCategory.BENIGN);
  expect(failure.nonRetryable).toBe(false);
  const delayMs = Number(failure.nextRetryDelay);
  expect(delayMs).toBeGreaterThan(30_000);
  expect(delayMs).toBeLessThanOrEqual(60_000);
  expect((failure.details?.[0] as PollCheckpoint).polls).toBe(2);
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(1);
});

test('the first attempt of a wait does not read before the first planned poll', async () => {
  const { ref, job } = freshJob({ busyForMs: 600_000 });
  const failure = await failureOf(run(waitRequest(ref, jobState(job), 60_000)).done);
  expect(failure.type).toBe(JOB_UNCHANGED);
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(0);
});

test('a 429 with Retry-After: 0 waits for the next planned poll, never polling faster than planned', async () => {
  const { ref, job } = freshJob({ busyForMs: 600_000 });
  loopback.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 429, retryAfter: '0' }]);
  const failure = await failureOf(run(waitRequest(ref, jobState(job), 60_000), { attempt: 2 }).done);
  expect(failure.type).toBe('AgentApiRateLimited');
  expect(Number(failure.nextRetryDelay)).toBeGreaterThan(30_000);
});

test('a 429 asking for longer than the planned gap is obeyed', async () => {
  const { ref, job } = freshJob({ busyForMs: 600_000 });
  loopback.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 429, retryAfter: '300' }]);
  const failure = await failureOf(run(waitRequest(ref, jobState(job), 60_000), { attempt: 2 }).done);
  expect(Number(failure.nextRetryDelay)).toBeGreaterThan(290_000);
});

test('frequent polling: polls loop inside one attempt, heartbeating, until the job changes; active reads are reported', async () => {
  const { ref, job } = freshJob();
  // The job is idle (`completed`); a message makes it active, and the wait watches for the end.
  await loopback.api.sendFollowUpMessage({ ...ref, prompt: 'go' });
  const { done, heartbeats } = run(waitRequest(ref, { ...jobState(job), status: 'active', prLink: null }, 100));
  await waitUntil(() => loopback.simulator.counts(ref.projectId, ref.jobId).gets >= 3);
  loopback.simulator.finishJob(ref.projectId, ref.jobId);
  const result = await done;
  expect(result.job.status).toBe('completed');
  expect(result.sawActive).toBe(true);
  expect(result.polls).toBeGreaterThanOrEqual(4);
  expect(heartbeats.length).toBeGreaterThanOrEqual(1);
  expect(heartbeats.at(-1)?.sawActive).toBe(true);
});

test('a gap longer than half the heartbeat timeout is slept in pieces, with a heartbeat between them', async () => {
  const { ref, job } = freshJob({ busyForMs: 600_000 });
  const { done, heartbeats } = run(waitRequest(ref, jobState(job), 1_000), { heartbeatTimeoutMs: 200 });
  await waitUntil(() => loopback.simulator.counts(ref.projectId, ref.jobId).gets >= 1);
  // Before the first read (1s in), a heartbeat at least every 100ms.
  expect(heartbeats.length).toBeGreaterThanOrEqual(8);
  loopback.simulator.finishJob(ref.projectId, ref.jobId);
  expect((await done).job.status).toBe('completed');
});

test('past its loop limit, a worker hands even a frequent wait to the retry timer, and a loop that ends frees its place', async () => {
  const activity = createPollAgentJob(loopback.api, { stopping: new AbortController().signal, maxLoops: 1 });
  const first = freshJob({ busyForMs: 600_000 });
  const looping = run(waitRequest(first.ref, jobState(first.job), 100), {}, undefined, activity);
  await waitUntil(() => loopback.simulator.counts(first.ref.projectId, first.ref.jobId).gets >= 1);

  const second = freshJob({ busyForMs: 600_000 });
  const handedOver = await failureOf(
    run(waitRequest(second.ref, jobState(second.job), 5_000), {}, undefined, activity).done,
  );
  expect(handedOver.type).toBe(JOB_UNCHANGED);
  expect(Number(handedOver.nextRetryDelay)).toBeLessThanOrEqual(5_000);
  expect(loopback.simulator.counts(second.ref.projectId, second.ref.jobId).gets).toBe(0);

  loopback.simulator.finishJob(first.ref.projectId, first.ref.jobId);
  await looping.done;
  const third = freshJob({ busyForMs: 600_000 });
  const loopsAgain = run(waitRequest(third.ref, jobState(third.job), 100), {}, undefined, activity);
  await waitUntil(() => loopback.simulator.counts(third.ref.projectId, third.ref.jobId).gets >= 2);
  loopback.simulator.finishJob(third.ref.projectId, third.ref.jobId);
  expect((await loopsAgain.done).job.status).toBe('completed');
});

test('an unchanged terminal read is returned once the time asked for has come', async () => {
  const { ref, job } = freshJob();
  const acceptFrom = Date.now() + 250;
  const { done } = run(waitRequest(ref, jobState(job), 100, { acceptUnchangedFromMs: acceptFrom }));
  const result = await done;
  expect(result.readAtMs).toBeGreaterThanOrEqual(acceptFrom);
  expect(result.job.status).toBe('completed');
  expect(result.polls).toBeGreaterThanOrEqual(2);
  expect(result.sawActive).toBe(false);
});

test("an unchanged terminal read inside the settle window is read again when the window ends, not at the schedule's next point", async () => {
  const { ref, job } = freshJob();
  // The next planned point is ten minutes away: without the read at the window's end the attempt would hand the wait
  // to the retry timer instead of answering.
  const request = waitRequest(ref, jobState(job), 10 * 60_000, {
    acceptUnchangedFromMs: Date.now() + 300,
    readAtOnce: true,
  });
  const result = await run(request).done;
  expect(result.job.status).toBe('completed');
  expect(result.polls).toBe(2);
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(2);
});

test('three bodies in a row that break the contract end the wait with a non-retryable contract violation', async () => {
  const { ref, job } = freshJob({ faults: [{ operation: 'get', kind: 'invalid-schema' }] });
  const failure = await failureOf(run(waitRequest(ref, jobState(job), 100)).done);
  expect(failure.type).toBe('AgentApiContractViolation');
  expect(failure.nonRetryable).toBe(true);
  expect(failure.message).toContain("field 'status'");
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(3);
});

test('the count of broken bodies carries over from the previous attempt through its heartbeat', async () => {
  const { ref, job } = freshJob({ faults: [{ operation: 'get', kind: 'invalid-schema' }] });
  const carried: PollCheckpoint = {
    attempt: 1,
    polls: 2,
    sawActive: false,
    invalidInARow: 2,
    lastStatus: null,
    lastError: 'x',
    nextPollAtMs: null,
  };
  const failure = await failureOf(
    run(waitRequest(ref, jobState(job), 60_000), { attempt: 2, heartbeatDetails: carried }).done,
  );
  expect(failure.type).toBe('AgentApiContractViolation');
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(1);
});

test('a definite refusal (401) ends the wait at once for the workflow to decide', async () => {
  const { ref, job } = freshJob();
  loopback.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 401 }]);
  const failure = await failureOf(run(waitRequest(ref, jobState(job), 100), { attempt: 2 }).done);
  expect(failure.type).toBe('AgentApiUnauthorized');
  expect(failure.nonRetryable).toBe(true);
});

test('a worker that begins to stop ends a polling loop at once, so another worker carries the wait on', async () => {
  const { ref, job } = freshJob();
  const stopping = new AbortController();
  const { done } = run(waitRequest(ref, jobState(job), 5_000), {}, stopping.signal);
  setTimeout(() => stopping.abort(), 50);
  const failure = await failureOf(done);
  expect(failure.type).toBe(WORKER_STOPPING);
  expect(failure.category).toBe(ApplicationFailureCategory.BENIGN);
});

test('with no poll left before the deadline, the retry delay runs past it so Temporal ends the wait as timed out', async () => {
  const { ref, job } = freshJob({ busyForMs: 600_000 });
  const request = waitRequest(ref, jobState(job), 60_000);
  request.schedule.deadlineMs = Date.now() - 1;
  const failure = await failureOf(run(request, { attempt: 2 }).done);
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(Number(failure.nextRetryDelay)).toBeGreaterThanOrEqual(24 * 60 * 60 * 1000);
});

describe('errors as errors', () => {
  /** A poll activity whose reports to the follow-up are kept, in order. */
  function reporting() {
    const told: Array<ReadTrouble | null> = [];
    const activity = createPollAgentJob(loopback.api, {
      stopping: new AbortController().signal,
      maxLoops: Number.POSITIVE_INFINITY,
      reportTrouble: async (_execution, trouble) => void told.push(trouble),
    });
    return { told, activity };
  }

  test('the follow-up hears once that reads began to fail and once that they succeed again; each heartbeat carries the streak', async () => {
    const { ref, job } = freshJob();
    await loopback.api.sendFollowUpMessage({ ...ref, prompt: 'go' });
    loopback.simulator.injectFaults(ref.projectId, ref.jobId, [
      { operation: 'get', status: 500 },
      { operation: 'get', status: 500 },
      { operation: 'get', status: 500 },
    ]);
    const { told, activity } = reporting();
    const { done, heartbeats } = run(
      waitRequest(ref, { ...jobState(job), status: 'active', prLink: null }, 50),
      {},
      undefined,
      activity,
    );
    await waitUntil(() => told.length === 2);
    loopback.simulator.finishJob(ref.projectId, ref.jobId);
    const result = await done;
    expect(result.job.status).toBe('completed');
    expect(told[0]).toEqual({ since: expect.any(String), lastError: expect.stringContaining('500') });
    expect(told[1]).toBeNull();
    const streak = heartbeats.filter((beat) => (beat.failedReads ?? 0) > 0);
    // The sleeps between reads heartbeat too: each count shows at least once, in order.
    expect([...new Set(streak.map((beat) => beat.failedReads))]).toEqual([1, 2, 3]);
    expect(new Set(streak.map((beat) => beat.failingSinceMs)).size).toBe(1);
    expect(new Date(streak[0]!.failingSinceMs!).toISOString()).toBe(told[0]!.since);
    expect(heartbeats.at(-1)?.failedReads).toBe(0);
  });

  test('a streak carried from the previous attempt goes on counting, and the follow-up, already told, is not told again', async () => {
    const { ref, job } = freshJob({ busyForMs: 600_000 });
    loopback.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 503 }]);
    const carried: PollCheckpoint = {
      attempt: 3,
      polls: 4,
      sawActive: true,
      invalidInARow: 0,
      lastStatus: 'active',
      lastError: 'AgentApiServerError: 503',
      nextPollAtMs: null,
      failingSinceMs: 1_700_000_000_000,
      failedReads: 2,
      troubleTold: true,
    };
    const { told, activity } = reporting();
    const { done, heartbeats } = run(
      waitRequest(ref, jobState(job), 60_000),
      { attempt: 4, heartbeatDetails: carried },
      undefined,
      activity,
    );
    const failure = await failureOf(done);
    expect(failure.type).not.toBe(JOB_UNCHANGED);
    expect(told).toEqual([]);
    expect(heartbeats.at(-1)).toMatchObject({ failingSinceMs: 1_700_000_000_000, failedReads: 3, troubleTold: true });
  });

  test('a Retry-After past the deadline ends the wait at once, saying so, instead of waiting for the deadline', async () => {
    const { ref, job } = freshJob({ busyForMs: 600_000 });
    loopback.simulator.injectFaults(ref.projectId, ref.jobId, [
      { operation: 'get', status: 429, retryAfter: String(10 * 24 * 3600) },
    ]);
    const request = waitRequest(ref, jobState(job), 60_000);
    request.schedule.deadlineMs = Date.now() + 90_000;
    const failure = await failureOf(run(request, { attempt: 2 }).done);
    expect(failure.type).toBe(RETRY_AFTER_PAST_DEADLINE);
    expect(failure.nonRetryable).toBe(true);
    const details = failure.details?.[0] as RetryAfterPastDeadlineDetails;
    // The client caps a Retry-After at an hour (retry-after.ts): still far past this deadline.
    expect(details.retryAfterMs).toBeGreaterThan(90_000);
    expect(details.failedReads).toBe(1);
    expect(details.lastError).toContain('AgentApiRateLimited');
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  const giveUpAt = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > giveUpAt) throw new Error('gave up waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
