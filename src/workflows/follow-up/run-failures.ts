/**
 * How a follow-up fails: the failures it decides on (timed out, gave up early on a Retry-After past its deadline) and
 * the shaping of whatever ended it into one failure with the real reason on top. Pure workflow-side functions: they
 * read what the run knows (`FailureFacts`) and return failures; the run shows and counts them.
 */
import { RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { AgentJob } from '../../kernel/agent-job';
import { checkpointOfFailure, readCheckpoint } from './poll-checkpoint';
import { failureKind, type FollowUpOutcomeKind } from '../../kernel/outcome-kind';
import {
  FollowUpErrorType,
  RETRY_AFTER_PAST_DEADLINE,
  type FollowUpProgress,
  type FollowUpTimeoutDetails,
  type RetryAfterPastDeadlineDetails,
} from '../../kernel/types';
import { roughDuration, utcClock } from '../../kernel/words';

/** What a failure says about the run it ends. */
export interface FailureFacts {
  jobId: string;
  /** The job as last read after this follow-up's message (null: none yet). */
  shown: AgentJob | null;
  polls: number;
  timeoutMs: number;
  /** The timeout as the caller wrote it ("10s"). */
  timeoutAsGiven: string;
  deadlineMs: number;
  sent: boolean;
  /** Calls failing when the follow-up ends: since when and the last error (both null when calls succeed). */
  errorsSince: string | null;
  lastError: string | null;
}

/** The deadline passed. `failedReads`: reads failed in a row at the end, when the poll activity said. */
export function timedOutFailure(
  facts: FailureFacts,
  why: string,
  failedReads: number | null = null,
): ApplicationFailure {
  const errors = errorsAtEnd(facts, failedReads);
  const details: FollowUpTimeoutDetails = {
    lastJob: facts.shown,
    polls: facts.polls,
    timeoutMs: facts.timeoutMs,
    ...(errors ? { errors } : {}),
  };
  return ApplicationFailure.create({
    type: FollowUpErrorType.TimedOut,
    message: `The agent job did not reach completed, archived or failed within ${facts.timeoutAsGiven} (${why}).${errors ? ` ${errorsSentence(errors)}` : ''}`,
    nonRetryable: true,
    details: [details],
  });
}

/**
 * The API asked (Retry-After) to wait past the deadline before it would `action` again: no call can come in time, so
 * the follow-up ends now as timed out, saying when it gave up and why rather than "within" its timeout.
 */
export function gaveUpEarlyFailure(
  facts: FailureFacts,
  retryAfterMs: number,
  action: string,
  failedReads: number | null = null,
): ApplicationFailure {
  const errors = errorsAtEnd(facts, failedReads);
  const startedAtMs = facts.deadlineMs - facts.timeoutMs;
  const details: FollowUpTimeoutDetails = {
    lastJob: facts.shown,
    polls: facts.polls,
    timeoutMs: facts.timeoutMs,
    retryAfterMs,
    ...(errors ? { errors } : {}),
  };
  return ApplicationFailure.create({
    type: FollowUpErrorType.TimedOut,
    message:
      `The follow-up gave up after ${roughDuration(Math.max(Date.now() - startedAtMs, 0))} of its ${facts.timeoutAsGiven}: the agent API asked ` +
      `(Retry-After) to wait ${roughDuration(retryAfterMs)} before it would ${action} again, past the deadline ` +
      `(${new Date(facts.deadlineMs).toISOString()})${facts.sent ? '' : '; the message was not sent'}.${errors ? ` ${errorsSentence(errors)}` : ''}`,
    nonRetryable: true,
    details: [details],
  });
}

/** How a follow-up ended on what was thrown: the phase it ends in, the failure it ends with and its outcome label. */
export interface Ending {
  phase: Extract<FollowUpProgress['phase'], 'cancelled' | 'timed-out' | 'failed'>;
  failure: unknown;
  kind: FollowUpOutcomeKind;
  /** The errors to show at the end, when the failure brought newer ones than the run knew. */
  errors: { since: string | null; lastError: string } | null;
  /** "Type: message" of what ended it, for the log. */
  reason: string;
}

/**
 * Turns whatever ended the follow-up into its own failure: a deadline an activity ran into becomes TimedOut, a
 * Retry-After past the deadline becomes the early give-up, an activity's failure is lifted out of Temporal's wrapper.
 */
export function endingOf(error: unknown, facts: FailureFacts): Ending {
  let errors: Ending['errors'] = null;
  if (isDeadline(error)) {
    error = timedOutFailure(
      facts,
      facts.sent ? `last status: ${facts.shown?.status ?? 'not read since the message'}` : 'the message was not sent',
      failedReadsOf(error),
    );
  } else if (causeType(error) === RETRY_AFTER_PAST_DEADLINE) {
    const own = error instanceof ActivityFailure ? (error.cause as ApplicationFailure) : (error as ApplicationFailure);
    const details = own.details?.[0] as RetryAfterPastDeadlineDetails;
    const since =
      facts.errorsSince ?? (details.failingSinceMs !== null ? new Date(details.failingSinceMs).toISOString() : null);
    errors = { since, lastError: details.lastError };
    error = gaveUpEarlyFailure(
      { ...facts, errorsSince: since, lastError: details.lastError },
      details.retryAfterMs,
      `read job '${facts.jobId}'`,
      details.failedReads,
    );
  }
  const phase = isCancellation(error)
    ? 'cancelled'
    : isType(error, FollowUpErrorType.TimedOut)
      ? 'timed-out'
      : 'failed';
  if (phase === 'failed') errors = { since: facts.errorsSince, lastError: describeFailure(error) };
  const reason = describeFailure(error);
  const failure = withoutStack(phase === 'failed' ? ownFailure(error) : error);
  const kind =
    phase === 'cancelled'
      ? 'cancelled'
      : failure instanceof ApplicationFailure
        ? failureKind(failure.type, failure.nonRetryable === true)
        : 'error';
  return { phase, failure, kind, errors, reason };
}

/** The follow-up's deadline passed while an activity waited: its schedule-to-close ran out. */
export function isDeadline(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return false;
  const cause = error.cause;
  if (error.retryState === RetryState.TIMEOUT) return true;
  // None of our activities sets a schedule-to-start timeout of its own, so the server's SCHEDULE_TO_START is the
  // schedule-to-close deadline reached while the task was still queued (a send held back by the project's budget).
  return (
    cause instanceof TimeoutFailure &&
    (cause.timeoutType === TimeoutType.SCHEDULE_TO_CLOSE || cause.timeoutType === TimeoutType.SCHEDULE_TO_START)
  );
}

/** "Type: message" of the failure that ended the follow-up, from the activity's cause when there is one. */
export function describeFailure(error: unknown): string {
  const failure = error instanceof ActivityFailure && error.cause ? error.cause : error;
  if (failure instanceof ApplicationFailure) return `${failure.type ?? 'Error'}: ${failure.message}`;
  return failure instanceof Error ? failure.message : String(failure);
}

/**
 * The Web UI shows a failure's stack trace under its message; for a failure this workflow decided on, that would only
 * show the worker's file paths. Type and message say what happened.
 */
export function withoutStack(error: unknown): unknown {
  if (error instanceof ApplicationFailure) error.stack = '';
  return error;
}

/** The errors still failing calls when the follow-up ends, if any. */
function errorsAtEnd(facts: FailureFacts, failedReads: number | null): FollowUpTimeoutDetails['errors'] {
  if (facts.errorsSince === null || facts.lastError === null) return undefined;
  return { since: facts.errorsSince, failedReads, lastError: facts.lastError };
}

/** "Calls to the agent API had failed since 12:01:05 UTC (14 reads in a row); last: HttpError: …". */
function errorsSentence(errors: NonNullable<FollowUpTimeoutDetails['errors']>): string {
  const count = errors.failedReads
    ? ` (${errors.failedReads} read${errors.failedReads === 1 ? '' : 's'} in a row)`
    : '';
  return `Calls to the agent API had failed since ${utcClock(errors.since)} UTC${count}; last: ${errors.lastError}`;
}

/** Reads failed in a row when the wait ran out, from its last failure or heartbeat (null: not known). */
function failedReadsOf(error: unknown): number | null {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  const checkpoint =
    cause instanceof ApplicationFailure
      ? checkpointOfFailure(cause.details)
      : cause instanceof TimeoutFailure
        ? readCheckpoint(cause.lastHeartbeatDetails)
        : undefined;
  return checkpoint?.failedReads ? checkpoint.failedReads : null;
}

/** The type of an activity's own failure under Temporal's wrapper (or of one a watcher reported), if it has one. */
function causeType(error: unknown): string | undefined {
  if (error instanceof ApplicationFailure) return error.type ?? undefined;
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure
    ? (error.cause.type ?? undefined)
    : undefined;
}

function isType(error: unknown, type: string): boolean {
  return error instanceof ApplicationFailure && error.type === type;
}

/**
 * The failure that ends the follow-up, with the real reason on top: an activity's own failure (AgentJobNotFound,
 * AgentApiUnauthorized, ...) rather than Temporal's "Activity task failed" wrapped around it.
 */
function ownFailure(error: unknown): unknown {
  if (!(error instanceof ActivityFailure) || !(error.cause instanceof ApplicationFailure)) return error;
  const cause = error.cause;
  return ApplicationFailure.create({
    type: cause.type ?? undefined,
    message: cause.message,
    details: cause.details ? [...cause.details] : undefined,
    nonRetryable: true,
  });
}
