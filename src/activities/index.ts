/**
 * The follow-up's activities, built by a factory so the worker passes its configured API client and Temporal client
 * (and tests ones pointed at the simulator); activities never read the environment.
 */
import { attemptClock } from './attempt-clock';
import { ApplicationFailure, CancelledFailure, Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ActivityInterceptors } from '@temporalio/worker';
import type { AgentApiClient, JobRef, MessageRequest, SendResult } from '../agent-api/http-client';
import { SEND_SLOT_EXPIRED, type SendFailureDetails } from '../follow-up/types';
import { countedApiCall } from './api-metrics';
import { createCoordinationActivities, type CoordinationSettings } from './coordination';
import { readTroubleSignal } from '../workflows/definitions';
import { createPollAgentJob } from './poll-agent-job';
import { createWatchJobs } from './watch-jobs';
import type { WatchRegistration } from '../follow-up/watch-registry';
import { JOB_WATCHER_WORKFLOW_TYPE, watchJobSignal } from '../workflows/definitions';
import type { jobWatcherWorkflow } from '../workflows/job-watcher';

export type { PollRequest, PollResult, PollCheckpoint } from './poll-agent-job';
export type { CheckedIn, CheckInRequest, CoordinationSettings } from './coordination';
export type { WatchJobsRequest } from './watch-jobs';
export { ApiMetric, UNEXPECTED_API_ERROR } from './api-metrics';

export interface ActivityDependencies {
  api: AgentApiClient;
  /** A client on the worker's own connection: the only way to read earlier runs of a follow-up. */
  temporal: Client;
  /** Aborted when the worker begins to stop, so long waits hand over at once instead of at the grace time's end. */
  stopping?: AbortSignal;
  /** How many waits may sleep in a polling loop at once (poll-agent-job.ts); unlimited if not given. */
  maxPollLoops?: number;
  /** Where project coordinators run and the budget a new one starts with. */
  coordination: CoordinationSettings;
}

/** A send under a slot of the project's budget: the request may leave only before `sendByMs`. */
export interface SendRequest extends MessageRequest {
  sendByMs: number;
}

/** The API's answer, and when the request left. */
export interface SentMessage extends SendResult {
  requestStartedAtMs: number;
}



/** Builds the activities around their dependencies. */
export function createActivities({ api, temporal, stopping = new AbortController().signal, maxPollLoops = Number.POSITIVE_INFINITY, coordination }: ActivityDependencies) {
  return {
    /**
     * Sends the follow-up message once, under a send slot of the project's budget; the workflow decides about any
     * further attempt. The request leaves only before `sendByMs` (the slot's lease) and only if the follow-up is not
     * being cancelled; once it has left it is carried to its answer, so a cancelled follow-up still learns whether its
     * message went out. Every outcome says when the request left (`requestStartedAtMs`), or that none did: the
     * workflow's "was it sent?" rules count from the request, never from when the send was scheduled.
     */
    async sendFollowUpMessage(request: SendRequest): Promise<SentMessage> {
      const context = Context.current();
      const now = attemptClock(context.info);
      if (context.cancellationSignal.aborted) throw new CancelledFailure('The follow-up was cancelled before its message was sent', [notSent()]);
      if (now() >= request.sendByMs) {
        throw ApplicationFailure.create({
          type: SEND_SLOT_EXPIRED,
          message: "The send slot's lease ran out before the request could leave; nothing was sent",
          nonRetryable: true,
          details: [notSent()],
        });
      }
      const requestStartedAtMs = now();
      // The first heartbeat goes out at once: a worker that dies mid-request leaves this time in the failure.
      context.heartbeat({ requestStartedAtMs });
      const timer = setInterval(() => context.heartbeat({ requestStartedAtMs }), Math.max((context.info.heartbeatTimeoutMs ?? 9_000) / 3, 500));
      try {
        const result = await countedApiCall('send', () => api.sendFollowUpMessage(messageOf(request)));
        if (result.job === null) {
          log.warn('Follow-up accepted, but the response broke the job contract; polling will read the job', { problem: result.responseProblem });
        }
        return { ...result, requestStartedAtMs };
      } catch (error) {
        throw withRequestStart(error, requestStartedAtMs);
      } finally {
        clearInterval(timer);
      }
    },

    pollAgentJob: createPollAgentJob(api, {
      stopping,
      maxLoops: maxPollLoops,
      // To this run only: a later run of the follow-up starts its own wait, which tells it for itself.
      reportTrouble: ({ workflowId, runId }, trouble) => temporal.workflow.getHandle(workflowId, runId).signal(readTroubleSignal, trouble),
    }),

    ...createCoordinationActivities(temporal, coordination),

    watchJobs: createWatchJobs(api, temporal, stopping),

    /**
     * Registers a wait with its shard's watcher, starting the watcher if it is not running (signal-with-start: only a
     * client call can start it). The follow-up signals a running watcher itself; it calls this when that fails.
     */
    async registerWatch({ watcherId, registration }: { watcherId: string; registration: WatchRegistration }): Promise<void> {
      await temporal.workflow.signalWithStart<typeof jobWatcherWorkflow, [WatchRegistration]>(JOB_WATCHER_WORKFLOW_TYPE, {
        workflowId: watcherId,
        taskQueue: Context.current().info.taskQueue,
        args: [{}],
        signal: watchJobSignal,
        signalArgs: [registration],
        staticSummary: 'Reads the jobs of waiting follow-ups for them, and tells each when its job answered',
      });
    },
  };
}

export type FollowUpActivities = ReturnType<typeof createActivities>;

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

function notSent(): SendFailureDetails {
  return { request: 'not-sent' };
}

/** The failure with the time its request left added to its details, everything else kept as it was. */
function withRequestStart(error: unknown, requestStartedAtMs: number): unknown {
  if (!(error instanceof ApplicationFailure)) return error;
  const [first, ...rest] = error.details ?? [];
  const details: SendFailureDetails = { ...(typeof first === 'object' && first !== null ? first : {}), requestStartedAtMs };
  const copy = ApplicationFailure.create({
    type: error.type ?? undefined,
    message: error.message,
    nonRetryable: error.nonRetryable === true,
    details: [details, ...rest],
    ...(error.nextRetryDelay !== undefined && error.nextRetryDelay !== null ? { nextRetryDelay: error.nextRetryDelay } : {}),
    ...(error.category !== undefined && error.category !== null ? { category: error.category } : {}),
  });
  copy.stack = error.stack;
  return copy;
}

/** The message itself, without the slot's lease. */
function messageOf({ projectId, jobId, prompt, idempotencyKey }: SendRequest): MessageRequest {
  return { projectId, jobId, prompt, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) };
}
