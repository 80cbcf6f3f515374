/**
 * The reads that settle an interrupted send, in the SDK's MockActivityEnvironment against the simulator over real
 * loopback HTTP: how many reads, how far apart, when they stop early, and what a failed read or a stopping worker does.
 */
import { ApplicationFailureCategory } from '@temporalio/common';
import { createReadSendOutcome } from '../../src/activities/read-send-outcome';
import { WORKER_STOPPING } from '../../src/activities/poll-agent-job';
import { jobState } from '../../src/kernel/agent-job';
import { RETRY_AFTER_PAST_DEADLINE, type RetryAfterPastDeadlineDetails } from '../../src/kernel/types';
import { RECONCILE_DELAY_MS } from '../../src/workflows/follow-up/decisions';
import type { SendOutcomeReads, SendOutcomeRequest } from '../../src/workflows/activity-contract';
import type { AgentApiSimulator } from '../../src/simulator/simulator';
import { failureOf } from '../support/failures';
import { loopbackApi } from '../support/loopback-api';
import { quietActivityEnvironment } from '../support/quiet-activity-environment';

const loopback = loopbackApi('mint_test_outcome_key_0001');
let counter = 0;

function freshJob(spec: Partial<Parameters<AgentApiSimulator['addJob']>[0]> = {}) {
  counter += 1;
  const ref = { projectId: `proj-outcome-${counter}`, jobId: `job-outcome-${counter}` };
  const job = loopback.simulator.addJob({ ...ref, ...spec });
  return { ref, job };
}

function run(request: SendOutcomeRequest, stopping = new AbortController().signal): Promise<SendOutcomeReads> {
  const env = quietActivityEnvironment({ attempt: 1, heartbeatTimeoutMs: 10_000 });
  return env.run(createReadSendOutcome(loopback.api, stopping), request);
}

/** `ageMs`: how long ago the request left (past RECONCILE_DELAY_MS, the first read comes at once). */
function outcomeRequest(
  ref: { projectId: string; jobId: string },
  baseline: SendOutcomeRequest['baseline'],
  ageMs = 10_000,
) {
  return { ...ref, baseline, requestStartedAtMs: Date.now() - ageMs, reads: 2, deadlineMs: Date.now() + 3_600_000 };
}

test('a job that stands where it stood is read twice, the reads apart, the first once the request is old enough', async () => {
  const { ref, job } = freshJob();
  const request = outcomeRequest(ref, jobState(job), 0);
  const { reads } = await run(request);
  expect(reads.map((read) => read.job.status)).toEqual(['completed', 'completed']);
  expect(reads[0]!.readAtMs - request.requestStartedAtMs).toBeGreaterThanOrEqual(RECONCILE_DELAY_MS);
  expect(reads[1]!.readAtMs - reads[0]!.readAtMs).toBeGreaterThanOrEqual(RECONCILE_DELAY_MS);
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(2);
});

test('a job that moved decides at once: one read, no second', async () => {
  const { ref, job } = freshJob();
  await loopback.api.sendFollowUpMessage({ ...ref, prompt: 'go' });
  const { reads } = await run(outcomeRequest(ref, jobState(job)));
  expect(reads.map((read) => read.job.status)).toEqual(['active']);
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(1);
});

test('a failed read proves nothing and is made again: two reads that answered, three requests', async () => {
  const { ref, job } = freshJob();
  loopback.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 503, times: 1 }]);
  const { reads } = await run(outcomeRequest(ref, jobState(job)));
  expect(reads.map((read) => read.job.status)).toEqual(['completed', 'completed']);
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(3);
});

test('a Retry-After past the deadline ends the reads at once, saying so', async () => {
  const { ref, job } = freshJob();
  loopback.simulator.injectFaults(ref.projectId, ref.jobId, [
    { operation: 'get', status: 429, retryAfter: String(10 * 24 * 3600) },
  ]);
  const request = { ...outcomeRequest(ref, jobState(job)), deadlineMs: Date.now() + 90_000 };
  const failure = await failureOf(run(request));
  expect(failure.type).toBe(RETRY_AFTER_PAST_DEADLINE);
  expect(failure.nonRetryable).toBe(true);
});

test('a Retry-After past the deadline after other failed reads says how many failed, and since when', async () => {
  const { ref, job } = freshJob();
  loopback.simulator.injectFaults(ref.projectId, ref.jobId, [
    { operation: 'get', status: 503, times: 1 },
    { operation: 'get', status: 429, retryAfter: String(10 * 24 * 3600) },
  ]);
  const startedAtMs = Date.now();
  const request = { ...outcomeRequest(ref, jobState(job)), deadlineMs: Date.now() + 90_000 };
  const failure = await failureOf(run(request));
  expect(failure.type).toBe(RETRY_AFTER_PAST_DEADLINE);
  const details = failure.details?.[0] as RetryAfterPastDeadlineDetails;
  expect(details.failedReads).toBe(2);
  expect(details.failingSinceMs).toBeGreaterThanOrEqual(startedAtMs);
  expect(details.lastError).toContain('AgentApiRateLimited');
});

test('a stopping worker hands the reads over at once (BENIGN, retried at once elsewhere), having read nothing', async () => {
  const { ref, job } = freshJob();
  const stopping = new AbortController();
  stopping.abort();
  const failure = await failureOf(run(outcomeRequest(ref, jobState(job)), stopping.signal));
  expect(failure.type).toBe(WORKER_STOPPING);
  expect(failure.category).toBe(ApplicationFailureCategory.BENIGN);
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(0);
});
