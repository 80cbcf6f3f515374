/**
 * checkAgentJobWorkflow: reads a job once, for a caller without the API key (the key lives only in the workers'
 * environment). `agent-followup schedule create` asks it before creating a schedule, so a schedule for a job that does
 * not exist is warned about at once rather than found by its first run. It reads with the follow-up's own poll
 * activity and sends nothing.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { JobRef } from '../../kernel/agent-job';
import { type FollowUpActivities } from '../activity-contract';

/** What a check found: the job's status as the API answered it. */
export interface AgentJobCheck {
  status: string;
  prLink: string | null;
}

/** How long a check may take, its reads included: a caller waits for it in a terminal. */
const CHECK_TIMEOUT_MS = 20_000;

const { pollAgentJob } = proxyActivities<FollowUpActivities>({
  scheduleToCloseTimeout: CHECK_TIMEOUT_MS,
  startToCloseTimeout: CHECK_TIMEOUT_MS,
  // A flaky read is read again; a definite answer (no such job, bad key) ends the check at once (non-retryable).
  retry: { initialInterval: '1s', maximumAttempts: 3 },
  summary: 'read the job once to check it exists',
});

/** Reads the job once; fails with the API's own failure (AgentJobNotFound, AgentApiUnauthorized, ...) when it cannot. */
export async function checkAgentJobWorkflow(ref: JobRef): Promise<AgentJobCheck> {
  const now = Date.now();
  const { job } = await pollAgentJob({
    projectId: ref.projectId,
    jobId: ref.jobId,
    known: null,
    acceptUnchangedFromMs: null,
    readAtOnce: true,
    schedule: {
      startedAtMs: now,
      initialIntervalMs: 1_000,
      backoffCoefficient: 2,
      maxIntervalMs: 5_000,
      deadlineMs: now + CHECK_TIMEOUT_MS,
    },
  });
  return { status: job.status, prLink: job.prLink };
}
