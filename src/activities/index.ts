/**
 * The two activities: one HTTP call each. They are built by a factory so the worker passes its configured client
 * (and tests a client pointed at the simulator); activities never read the environment.
 */
import { Context, log } from '@temporalio/activity';
import type { AgentApiClient, FollowUpRequest, JobRef, SendResult } from '../agent-api/http-client';
import { isKnownStatus, type AgentJob } from '../agent-api/schemas';

/** How often a waiting activity tells Temporal it is alive; the workflow sets a heartbeat timeout well above it. */
const HEARTBEAT_EVERY_MS = 2_000;

/** Builds the activities around one configured agent API client. */
export function createActivities(api: AgentApiClient) {
  return {
    /** Sends the follow-up message once; the workflow decides about any further attempt. */
    async sendFollowUpMessage(request: FollowUpRequest): Promise<SendResult> {
      const result = await whileHeartbeating(() => api.sendFollowUpMessage(request, Context.current().cancellationSignal));
      if (result.job === null) {
        log.warn('Follow-up accepted, but the response broke the job contract; polling will read the job', {
          problem: result.responseProblem,
        });
      } else {
        warnOnUnknownStatus(result.job);
      }
      return result;
    },

    /** Reads the job once. */
    async getAgentJob(ref: JobRef): Promise<AgentJob> {
      const job = await whileHeartbeating(() => api.getAgentJob(ref, Context.current().cancellationSignal));
      warnOnUnknownStatus(job);
      return job;
    },
  };
}

export type FollowUpActivities = ReturnType<typeof createActivities>;

/**
 * Heartbeats while a slow request is in flight, so a worker that dies mid-request is noticed within the heartbeat
 * timeout (not the start-to-close timeout), and so cancellation reaches the request promptly.
 */
async function whileHeartbeating<T>(work: () => Promise<T>): Promise<T> {
  const context = Context.current();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

function warnOnUnknownStatus(job: AgentJob): void {
  if (!isKnownStatus(job.status)) {
    log.warn('Agent job has a status the API contract does not list; treating it as not finished', {
      status: job.status,
    });
  }
}
