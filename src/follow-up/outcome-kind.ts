/**
 * The names of the ways a follow-up ends, shared by the workflow (its AgentFollowUpOutcome search attribute), the
 * library's `outcome()` and the CLI's exit codes, so the Web UI, the code and the terminal say the same word. Pure:
 * workflow code imports it.
 */
import { FollowUpErrorType } from './types';

/** The follow-up returned the job as it ended: the job's final status. */
export type EndedKind = 'completed' | 'failed' | 'archived';

/** The follow-up did not return a final job (outcome.ts says what each means). */
export type DidNotEndKind = 'timed-out' | 'rejected' | 'invalid-input' | 'delivery-unknown' | 'cancelled' | 'error';

export type FollowUpOutcomeKind = EndedKind | DidNotEndKind;

/** The kind of a failure that ended the follow-up, from its type and whether it may be retried. */
export function failureKind(type: string | null | undefined, nonRetryable: boolean): DidNotEndKind {
  if (type === FollowUpErrorType.TimedOut) return 'timed-out';
  if (type === FollowUpErrorType.InvalidInput) return 'invalid-input';
  if (type === FollowUpErrorType.DeliveryUnknown) return 'delivery-unknown';
  return nonRetryable ? 'rejected' : 'error';
}
