/**
 * The names of the ways a follow-up ends, shared by the workflow (its AgentFollowUpOutcome search attribute), the
 * library's `outcome()` and the CLI's exit codes, so the Web UI, the code and the terminal say the same word. Pure:
 * workflow code imports it.
 */
import { FollowUpErrorType, type DidNotEndKind } from './types';

export type { DidNotEndKind, EndedKind, FollowUpOutcomeKind } from './types';

/** The kind of a failure that ended the follow-up, from its type and whether it may be retried. */
export function failureKind(type: string | null | undefined, nonRetryable: boolean): DidNotEndKind {
  if (type === FollowUpErrorType.TimedOut) return 'timed-out';
  if (type === FollowUpErrorType.InvalidInput) return 'invalid-input';
  if (type === FollowUpErrorType.DeliveryUnknown) return 'delivery-unknown';
  return nonRetryable ? 'rejected' : 'error';
}
