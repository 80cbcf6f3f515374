/**
 * The follow-up's poll activity as Temporal describes it. Polls that find the job unchanged never reach the workflow
 * (that is what makes them cheap), so "how many polls, when is the next one, what went wrong last" lives on the
 * pending activity: its heartbeat details while it loops, its last (BENIGN) failure between infrequent polls. The
 * client adds this to the `progress` query's answer. Client-side only.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { LoadedDataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { checkpointOfFailure, readCheckpoint, type PollCheckpoint } from '../workflows/follow-up/poll-checkpoint';
import type { PollActivityProgress } from '../kernel/types';
import { decodedPayloads } from './decoded-payloads';

const POLL_ACTIVITY = 'pollAgentJob';

/** The running poll's progress, or undefined when no poll activity is pending. */
export async function describePollActivity(
  description: WorkflowExecutionDescription,
  converter: LoadedDataConverter,
): Promise<PollActivityProgress | undefined> {
  const pending = description.raw.pendingActivities?.find((activity) => activity.activityType?.name === POLL_ACTIVITY);
  if (!pending) return undefined;
  const fromHeartbeat = readCheckpoint((await decodedPayloads(converter, pending.heartbeatDetails?.payloads))[0]);
  const failure = pending.lastFailure;
  const application = failure?.applicationFailureInfo;
  const fromFailure = application
    ? checkpointOfFailure(await decodedPayloads(converter, application.details?.payloads))
    : undefined;
  // The newer of the two: a failure is written after the heartbeats of the same attempt.
  const checkpoint = pickNewer(fromHeartbeat, fromFailure);
  const attempt = pending.attempt ?? 1;
  const nextRetry = pending.nextAttemptScheduleTime?.seconds;
  const nextPollAtMs =
    nextRetry != null
      ? Number(nextRetry) * 1000 + Math.floor((pending.nextAttemptScheduleTime?.nanos ?? 0) / 1e6)
      : (checkpoint?.nextPollAtMs ?? null);
  // A BENIGN failure is "nothing changed yet", not an error.
  const failedForReal =
    failure &&
    application?.category !== temporal.api.enums.v1.ApplicationErrorCategory.APPLICATION_ERROR_CATEGORY_BENIGN;
  const lastError = failedForReal
    ? `${application?.type || 'Error'}: ${failure.message ?? ''}`
    : (checkpoint?.lastError ?? null);
  return {
    polls: checkpoint ? checkpoint.polls + Math.max(0, attempt - checkpoint.attempt - 1) : Math.max(0, attempt - 1),
    nextPollAt: nextPollAtMs !== null ? new Date(nextPollAtMs).toISOString() : null,
    lastStatus: checkpoint?.lastStatus ?? null,
    lastError,
    failingSince:
      lastError !== null && typeof checkpoint?.failingSinceMs === 'number'
        ? new Date(checkpoint.failingSinceMs).toISOString()
        : null,
    failedReads: lastError !== null ? (checkpoint?.failedReads ?? 0) : 0,
  };
}

function pickNewer(a: PollCheckpoint | undefined, b: PollCheckpoint | undefined): PollCheckpoint | undefined {
  if (!a) return b;
  if (!b) return a;
  return b.attempt > a.attempt || (b.attempt === a.attempt && b.polls >= a.polls) ? b : a;
}
