/**
 * The rules of a failed read of a job, one set for both readers (a follow-up's own poll, `pollAgentJob`, and the
 * watcher's reader, `watchJobs`): which failures end the wait, when bodies that break the job contract are too many,
 * and what the API's Retry-After means for the wait's deadline. Each reader keeps its own streaks and tells its
 * follow-up its own way; what they decide is the same.
 */
import { ApplicationFailure } from '@temporalio/common';
import { AgentApiErrorType, type ApiFailureDetails } from '../agent-api/errors';
import type { JobRef } from '../kernel/agent-job';
import { FollowUpErrorType, RETRY_AFTER_PAST_DEADLINE, type RetryAfterPastDeadlineDetails } from '../kernel/types';

/** Consecutive job bodies that break the contract before the follow-up gives up on the API. */
export const MAX_INVALID_RESPONSES = 3;

/** A failure that ends the wait, as the follow-up shows it: its type, message and details. */
export interface WaitFailure {
  type: string;
  message: string;
  details: unknown[];
}

/**
 * What a failed read means: the wait ends with `failure` (`definite`: the read's own failure, as it came), or it reads
 * again, no sooner than `retryAfterMs`.
 */
export type FailedRead =
  | { ends: true; failure: WaitFailure; definite: boolean }
  | { ends: false; lastError: string; retryAfterMs: number; invalid: boolean };

/**
 * Judges one failed read. A definite failure (not an API failure that may pass, or one marked non-retryable) ends the
 * wait as it is; the `MAX_INVALID_RESPONSES`th body in a row that breaks the contract ends it as a contract
 * violation (`invalidInARow` counts the ones before this read); anything else is read again at the next planned
 * read, or later if the API asked with Retry-After.
 */
export function judgeFailedRead(error: unknown, invalidInARow: number, job: JobRef): FailedRead {
  if (!(error instanceof ApplicationFailure) || error.nonRetryable)
    return { ends: true, failure: failureOf(error), definite: true };
  const invalid = error.type === AgentApiErrorType.InvalidResponse;
  if (invalid && invalidInARow + 1 >= MAX_INVALID_RESPONSES) {
    return {
      ends: true,
      definite: false,
      failure: {
        type: FollowUpErrorType.ContractViolation,
        message: `get-job answered ${invalidInARow + 1} times in a row with a body that breaks the job contract for project '${job.projectId}', job '${job.jobId}': ${error.message}`,
        details: [],
      },
    };
  }
  const retryAfterMs = (error.details?.[0] as ApiFailureDetails | undefined)?.retryAfterMs;
  return {
    ends: false,
    lastError: `${error.type ?? 'Error'}: ${error.message}`,
    retryAfterMs: typeof retryAfterMs === 'number' ? retryAfterMs : 0,
    invalid,
  };
}

/** The API asked (Retry-After) to wait past the wait's deadline: no read can come in time, so the wait ends now. */
export function retryAfterPastDeadline(job: JobRef, trouble: RetryAfterPastDeadlineDetails): WaitFailure {
  return {
    type: RETRY_AFTER_PAST_DEADLINE,
    message: `The agent API asked (Retry-After) not to read job '${job.jobId}' again for ${Math.round(trouble.retryAfterMs / 1000)}s, past the follow-up's deadline; last error: ${trouble.lastError}`,
    details: [trouble],
  };
}

/** A definite failure as the follow-up shows it: its own type and message. */
function failureOf(error: unknown): WaitFailure {
  if (error instanceof ApplicationFailure)
    return { type: error.type ?? 'Error', message: error.message, details: [...(error.details ?? [])] };
  return { type: 'Error', message: error instanceof Error ? error.message : String(error), details: [] };
}
