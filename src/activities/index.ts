/**
 * The follow-up's activities, built by a factory so the worker passes its configured API client and Temporal client
 * (and tests ones pointed at the simulator); activities never read the environment.
 */
import type { FollowUpActivities } from '../workflows/activity-contract';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { ActivityInterceptors } from '@temporalio/worker';
import type { AgentApiClient, JobRef } from '../agent-api/http-client';
import { apiCounters, countedApiCall } from './api-metrics';
import {
  createCoordinationActivities,
  type CoordinationSettings,
  type ReadJob,
} from '../coordinator/coordination.activity';
import { createTicketSealer, TICKET_KEY_PURPOSE } from '../coordinator/ticket-seal.activity';
import { createPollAgentJob, statusLabel } from './poll-agent-job';
import { createAdoptBook } from '../watch/adopt-book.activity';
import { createReadSendOutcome } from './read-send-outcome';
import { createReadWatchedJobs } from '../watch/read-watched-jobs.activity';
import { createSendFollowUpMessage } from './send-follow-up-message';
import { createWatchJobs } from '../watch/watch-jobs.activity';
import { createStartWatching, watcherAddressOf, watcherStartOf } from '../watch/start-watching.activity';
import { ReaderWakeups } from '../watch/reader-wakeups.activity';
import type { WatchersInSight } from '../watch/watcher-guard.worker';
import { createDeliverNotification, type NotifySettings } from './deliver-notification';
import { createCheckNotifiedParent } from './notified-parent';
import { jobReadsSignal } from '../workflows/follow-up/messages';
import { type WatchRegistration } from '../watch/messages';

export type { PollCheckpoint } from './poll-agent-job';
export type { CoordinationSettings } from '../coordinator/coordination.activity';
export type * from '../workflows/activity-contract';
export type { NotifySettings } from './deliver-notification';
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
  /** How callbacks are signed and where they may go (deliver-notification.ts). */
  notify?: NotifySettings;
  /** The job watchers the worker's guard keeps in sight: each one a registration reached is added. */
  watchersInSight?: WatchersInSight;
}

/** Builds the activities around their dependencies. */
export function createActivities({
  api,
  temporal,
  stopping = new AbortController().signal,
  maxPollLoops = Number.POSITIVE_INFINITY,
  coordination,
  notify = {},
  watchersInSight,
}: ActivityDependencies): FollowUpActivities {
  // A registration made here wakes this worker's long reader of its watcher, if it has it (a fast first read).
  const wakeups = new ReaderWakeups();
  const startWatching = createStartWatching(temporal, watcherStartOf(coordination), {
    wakeups,
    inSight: watchersInSight,
  });
  return {
    sendFollowUpMessage: createSendFollowUpMessage(api, temporal, startWatching),

    pollAgentJob: createPollAgentJob(api, {
      stopping,
      maxLoops: maxPollLoops,
      // To this run only: a later run of the follow-up starts its own wait, which tells it for itself.
      reportTrouble: ({ workflowId, runId }, trouble) =>
        temporal.workflow.getHandle(workflowId, runId).signal(jobReadsSignal, { trouble }),
    }),

    readSendOutcome: createReadSendOutcome(api, stopping),

    ...createCoordinationActivities(
      temporal,
      coordination,
      countedRead(api),
      createTicketSealer(api.derivedKey(TICKET_KEY_PURPOSE)),
      notify.defaultUrl,
    ),

    watchJobs: createWatchJobs(api, temporal, stopping, startWatching, wakeups),
    readWatchedJobs: createReadWatchedJobs(api, temporal, stopping),
    adoptBook: createAdoptBook(temporal),
    deliverNotification: createDeliverNotification(notify, createCheckNotifiedParent(temporal)),

    /**
     * Registers a wait with its shard's watcher, starting the watcher if it is not running (signal-with-start: only a
     * client call can start it), and makes sure the watcher is ours (else WatcherIdTaken: the follow-up reads for itself).
     */
    async registerWatch({
      watcherId,
      registration,
    }: {
      watcherId: string;
      registration: WatchRegistration;
    }): Promise<void> {
      await startWatching(watcherAddressOf(watcherId), registration);
    },
  };
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

/** One GET of a job, for the read with a check-in: counted by the status it saw, as the polling activities count theirs. */
function countedRead(api: AgentApiClient): ReadJob {
  return async (ref, signal) => {
    const job = await countedApiCall('get_job', () => api.getAgentJob(ref, signal));
    apiCounters(Context.current()).polls.add(1, { status: statusLabel(job.status) });
    return job;
  };
}
