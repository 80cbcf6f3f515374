/**
 * The follow-up's activities, built by a factory so the worker passes its configured API client and Temporal client
 * (and tests ones pointed at the simulator); activities never read the environment.
 */
import { Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ActivityInterceptors } from '@temporalio/worker';
import type { AgentApiClient, JobRef, MessageRequest, SendResult } from '../agent-api/http-client';
import { countedApiCall } from './api-metrics';
import { createLaneActivities } from './lane';
import { createPollAgentJob } from './poll-agent-job';

export type { PollRequest, PollResult, PollCheckpoint } from './poll-agent-job';
export type { CheckedIn, CheckInRequest } from './lane';
export { ApiMetric, UNEXPECTED_API_ERROR } from './api-metrics';

export interface ActivityDependencies {
  api: AgentApiClient;
  /** A client on the worker's own connection: the only way to read earlier runs of a follow-up. */
  temporal: Client;
  /** Aborted when the worker begins to stop, so long waits hand over at once instead of at the grace time's end. */
  stopping?: AbortSignal;
  /** How many waits may sleep in a polling loop at once (poll-agent-job.ts); unlimited if not given. */
  maxPollLoops?: number;
}

/** Builds the activities around their dependencies. */
export function createActivities({ api, temporal, stopping = new AbortController().signal, maxPollLoops = Number.POSITIVE_INFINITY }: ActivityDependencies) {
  return {
    /**
     * Sends the follow-up message once; the workflow decides about any further attempt. A request cut off by a
     * stopping worker fails as ambiguous (http-client.ts), never as "not delivered".
     */
    async sendFollowUpMessage(request: MessageRequest): Promise<SendResult> {
      const result = await heartbeating(() => countedApiCall('send', () => api.sendFollowUpMessage(request, Context.current().cancellationSignal)));
      if (result.job === null) {
        log.warn('Follow-up accepted, but the response broke the job contract; polling will read the job', { problem: result.responseProblem });
      }
      return result;
    },

    pollAgentJob: createPollAgentJob(api, { stopping, maxLoops: maxPollLoops }),

    ...createLaneActivities(temporal),
  };
}

export type FollowUpActivities = ReturnType<typeof createActivities>;

/**
 * Heartbeats while a send is in flight, so a worker that dies mid-send is noticed within the send's heartbeat
 * timeout: its reconciliation then reads the job soon enough after the attempt to tell "not taken" from "unknown"
 * (decisions.ts, RECONCILE_TRUST_MS).
 */
async function heartbeating<T>(work: () => Promise<T>): Promise<T> {
  const context = Context.current();
  context.heartbeat();
  const timer = setInterval(() => context.heartbeat(), Math.max((context.info.heartbeatTimeoutMs ?? 9_000) / 3, 500));
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * Adds the job's `projectId` and `jobId` to every log line of our activities, the SDK's own ones included
 * ("Activity failed", "Activity completed"), next to the workflowId and activityType the SDK already adds. The job
 * activities take the job reference in their one argument. Register it as a worker activity interceptor.
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
