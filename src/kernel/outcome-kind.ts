/**
 * The names of the ways a follow-up ends, shared by the workflow (its AgentFollowUpOutcome search attribute), the
 * library's `outcome()` and the CLI's exit codes, so the Web UI, the code and the terminal say the same word. Pure:
 * workflow code imports it.
 */
import { FollowUpErrorType, type DidNotEndKind, type FollowUpOutcomeKind } from './types';

export type { DidNotEndKind, EndedKind, FollowUpOutcomeKind } from './types';

/** The kind of a failure that ended the follow-up, from its type and whether it may be retried. */
export function failureKind(type: string | null | undefined, nonRetryable: boolean): DidNotEndKind {
  if (type === FollowUpErrorType.TimedOut) return 'timed-out';
  if (type === FollowUpErrorType.InvalidInput) return 'invalid-input';
  if (type === FollowUpErrorType.DeliveryUnknown) return 'delivery-unknown';
  return nonRetryable ? 'rejected' : 'error';
}

/** Every way a follow-up ends, in the order the docs list them. */
export const FOLLOW_UP_OUTCOME_KINDS = [
  'completed',
  'failed',
  'archived',
  'timed-out',
  'rejected',
  'invalid-input',
  'delivery-unknown',
  'cancelled',
  'error',
] as const satisfies readonly FollowUpOutcomeKind[];

// Fails to compile when a kind is added to the type and not to the list.
const everyKindListed: Exclude<FollowUpOutcomeKind, (typeof FOLLOW_UP_OUTCOME_KINDS)[number]> extends never
  ? true
  : never = true;
void everyKindListed;
