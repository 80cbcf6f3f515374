/** What a job watcher tells a waiting follow-up (pure types and checks: workflow code imports them). */
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { isAgentJobOf, isJobState, type AgentJob, type JobState } from '../kernel/agent-job';
import { FollowUpErrorType, RETRY_AFTER_PAST_DEADLINE } from '../kernel/types';

/** The API client's failure for a get-job body that breaks the contract (agent-api/errors.ts, not loaded here). */
const INVALID_RESPONSE = 'AgentApiInvalidResponse';

/** What every answer names: the wait it answers (its round and the name the follow-up drew for it). */
export interface AnswerTo {
  round: number;
  replyTo: string;
}

export type WatchAnswer = AnswerTo &
  (
    | {
        kind: 'read';
        job: AgentJob;
        /** When the read was made (watcher's clock). */
        readAtMs: number;
        /** Reads this wait made. */
        polls: number;
        /** A read of this wait showed the job `active`. */
        sawActive: boolean;
        /** The reader's read of this wait before this one (null: none), for a wait with a result rule. */
        previous?: JobState | null;
      }
    | {
        /** The wait cannot go on: a definite failure (job not found, key refused, contract broken) or a Retry-After past the deadline. */
        kind: 'failure';
        type: string;
        message: string;
        details: unknown[];
        polls: number;
      }
    | {
        /** The watcher's book is full (WATCH_BOOK_LIMIT_BYTES): it keeps nothing of this wait, and the follow-up polls for itself. */
        kind: 'refused';
        polls: number;
      }
  );

/**
 * Whether `value` answers the wait `to` of the job `jobId`: the wait's round and name, and a well-formed answer whose
 * read is of that job. Anything else (a late answer to an earlier wait, a signal from anyone but the watcher, another
 * job's body, garbage) is not an answer and changes nothing.
 */
export function isAnswerTo(value: unknown, to: AnswerTo, jobId: string): value is WatchAnswer {
  if (!isWatchAnswer(value) || value.round !== to.round || value.replyTo !== to.replyTo) return false;
  return value.kind !== 'read' || isAgentJobOf(value.job, jobId);
}

/**
 * Whether `value` is a well-formed answer to a wait before `to`: the expected leftover when a read asked for replaced
 * that wait, worth a note in the log rather than a warning (which is kept for answers nobody should have sent).
 */
export function isEarlierAnswer(value: unknown, to: AnswerTo): boolean {
  return isWatchAnswer(value) && value.round < to.round;
}

export function isWatchAnswer(value: unknown): value is WatchAnswer {
  if (typeof value !== 'object' || value === null) return false;
  const answer = value as Partial<WatchAnswer>;
  if (typeof answer.round !== 'number' || typeof answer.replyTo !== 'string' || typeof answer.polls !== 'number')
    return false;
  if (answer.kind === 'read')
    return (
      typeof answer.job === 'object' &&
      answer.job !== null &&
      typeof answer.readAtMs === 'number' &&
      typeof answer.sawActive === 'boolean' &&
      (answer.previous === undefined || answer.previous === null || isJobState(answer.previous))
    );
  if (answer.kind === 'refused') return true;
  return answer.kind === 'failure' && typeof answer.type === 'string' && typeof answer.message === 'string';
}

/**
 * Whether the follow-up's own read `own` confirms a job its watcher told (`told`): the same job id, status and prLink.
 * An answer is a hint to read, never a fact (issue 73): anyone who may signal the namespace can send a well-formed
 * answer with the wait's name, which histories hold.
 */
export function confirmsTold(told: AgentJob, own: AgentJob): boolean {
  return told.id === own.id && told.status === own.status && (told.prLink ?? null) === (own.prLink ?? null);
}

/**
 * The definite failure (non-retryable) of the follow-up's own read, which ends a wait as the watcher's told failure
 * would; null for a read that failed only for now (the told failure is then not believed, and the wait goes on).
 */
export function definiteFailureOf(error: unknown): ApplicationFailure | null {
  if (!(error instanceof ActivityFailure) || !(error.cause instanceof ApplicationFailure)) return null;
  return error.cause.nonRetryable ? error.cause : null;
}

/**
 * Whether the follow-up's own read, failed with `error`, shows the failure its watcher told (`toldType`): the same
 * failure type, or, for a contract broken again and again, one more body that breaks it (the watcher counted the ones
 * before; one read cannot count them again).
 */
export function confirmsFailure(toldType: string, error: unknown): boolean {
  if (!(error instanceof ActivityFailure) || !(error.cause instanceof ApplicationFailure)) return false;
  const ownType = error.cause.type;
  return ownType === toldType || (toldType === FollowUpErrorType.ContractViolation && ownType === INVALID_RESPONSE);
}

/**
 * Whether the follow-up's own read failed only because the API asked to wait (Retry-After) less than the follow-up has
 * left. That read is made with its deadline now (readAgentJobOnce), so it calls any Retry-After "past the deadline";
 * only one past the follow-up's own `deadlineMs` ends the wait, the rest are a read that failed for now.
 */
export function isRetryAfterWithin(error: unknown, deadlineMs: number, nowMs: number): boolean {
  if (!(error instanceof ActivityFailure) || !(error.cause instanceof ApplicationFailure)) return false;
  if (error.cause.type !== RETRY_AFTER_PAST_DEADLINE) return false;
  const retryAfterMs = (error.cause.details?.[0] as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof retryAfterMs === 'number' && nowMs + retryAfterMs < deadlineMs;
}
