/**
 * The two activities: one HTTP call each. They are built by a factory so the worker passes its configured client
 * (and tests a client pointed at the simulator); activities never read the environment.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptors } from '@temporalio/worker';
import { AgentApiErrorType } from '../agent-api/errors';
import type { AgentApiClient, FollowUpRequest, JobRef, SendResult } from '../agent-api/http-client';
import { isKnownStatus, type AgentJob } from '../agent-api/schemas';

/** How often a waiting activity tells Temporal it is alive; the workflow sets a heartbeat timeout well above it. */
const HEARTBEAT_EVERY_MS = 2_000;

/** Builds the activities around one configured agent API client. */
export function createActivities(api: AgentApiClient) {
  return {
    /** Sends the follow-up message once; the workflow decides about any further attempt. */
    async sendFollowUpMessage(request: FollowUpRequest): Promise<SendResult> {
      const result = await whileHeartbeating(() =>
        countedApiCall('send', () => api.sendFollowUpMessage(request, Context.current().cancellationSignal)),
      );
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
      const job = await whileHeartbeating(() => countedApiCall('get_job', () => api.getAgentJob(ref, Context.current().cancellationSignal)));
      warnOnUnknownStatus(job);
      return job;
    },
  };
}

export type FollowUpActivities = ReturnType<typeof createActivities>;

/** Our activity-side metrics; the SDK adds `namespace`, `taskQueue` and `activityType` labels. */
export const ApiMetric = {
  requests: 'agent_followup_api_requests',
  errors: 'agent_followup_api_errors',
} as const;

/** The `operation` label: which agent API call. */
export type ApiOperation = 'send' | 'get_job';

/** A failure type outside AgentApiErrorType (a bug, not an API answer) is counted under this `type`. */
export const UNEXPECTED_API_ERROR = 'Unexpected';

const KNOWN_API_ERROR_TYPES = new Set<string>(Object.values(AgentApiErrorType));

/**
 * Counts one agent API call: `agent_followup_api_requests{operation,outcome}` with outcome ok, error or cancelled
 * (the activity was cancelled or the worker shut down mid-request: not the API's doing), and for errors
 * `agent_followup_api_errors{operation,type}` with the stable failure type. Every attempt counts, retries included,
 * because each one is a real request the API saw (or could not be reached for).
 */
async function countedApiCall<T>(operation: ApiOperation, call: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const requests = context.metricMeter.createCounter(ApiMetric.requests, '1', 'Agent API requests, by operation and outcome');
  try {
    const result = await call();
    requests.add(1, { operation, outcome: 'ok' });
    return result;
  } catch (error) {
    if (context.cancellationSignal.aborted) {
      requests.add(1, { operation, outcome: 'cancelled' });
    } else {
      requests.add(1, { operation, outcome: 'error' });
      const type = error instanceof ApplicationFailure && error.type && KNOWN_API_ERROR_TYPES.has(error.type) ? error.type : UNEXPECTED_API_ERROR;
      context.metricMeter.createCounter(ApiMetric.errors, '1', 'Agent API errors, by operation and failure type').add(1, { operation, type });
    }
    throw error;
  }
}

/**
 * Adds the job's `projectId` and `jobId` to every log line of our activities, the SDK's own ones included
 * ("Activity failed", "Activity completed"), next to the workflowId and activityType the SDK already adds. Both
 * activities take the job reference as their one argument. Register it as a worker activity interceptor.
 */
export function jobLogAttributesInterceptor(): ActivityInterceptors {
  let ref: JobRef | undefined;
  return {
    inbound: {
      async execute(input, next) {
        ref = jobRefOf(input.args[0]);
        return next(input);
      },
    },
    outbound: {
      getLogAttributes(input, next) {
        return next(ref ? { ...input, projectId: ref.projectId, jobId: ref.jobId } : input);
      },
    },
  };
}

function jobRefOf(arg: unknown): JobRef | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  const { projectId, jobId } = arg as Partial<Record<keyof JobRef, unknown>>;
  return typeof projectId === 'string' && typeof jobId === 'string' ? { projectId, jobId } : undefined;
}

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
