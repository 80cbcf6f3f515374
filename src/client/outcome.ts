/**
 * How a follow-up ended, as one value a caller can switch on: the job's own ending, or why the follow-up failed.
 * `FollowUpClient.outcome()` returns it and the CLI turns it into its exit codes, so the library and the command say
 * the same thing. Temporal reports a failed follow-up as a `WorkflowFailedError` whose reason sits two causes deep
 * (workflow → activity → application failure); this is the one place that digs it out.
 */
import { WorkflowFailedError } from '@temporalio/client';
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  TemporalFailure,
  TerminatedFailure,
  TimeoutFailure,
} from '@temporalio/common';
import { failureKind, type DidNotEndKind, type EndedKind } from '../kernel/outcome-kind';
import type { AgentApiErrorType } from '../agent-api/errors';
import type { FollowUpErrorType, FollowUpResult } from '../kernel/types';

/**
 * The follow-up ran to the job's end: the job's final status says how the agent did. One member per kind, so a check
 * of `kind` narrows in an if-chain as it does in a switch.
 */
export type FollowUpEnded = { [K in EndedKind]: { kind: K; result: FollowUpResult } }[EndedKind];

/**
 * The failure type of a follow-up that did not end: ours, the agent API's, what Temporal reports for a cancelled,
 * terminated or timed-out workflow, or any other type a failure carried (kept as a string, still offered by editors).
 */
export type FollowUpFailureType =
  | (typeof FollowUpErrorType)[keyof typeof FollowUpErrorType]
  | AgentApiErrorType
  | 'Cancelled'
  | 'Terminated'
  | 'WorkflowTimeout'
  | 'WorkflowFailed'
  | (string & Record<never, never>);

/**
 * The follow-up did not return a final job.
 * - `timed-out`: the job did not end before the follow-up's timeout (the message was sent, unless `message` says not).
 * - `rejected`: the agent API refused it for good (no such job, bad key, bad request) or kept breaking its contract
 *   (`AgentApiContractViolation`); `type` names the reason.
 * - `invalid-input`: the input broke a rule; nothing was sent.
 * - `delivery-unknown`: a send failed in a way that may or may not have delivered it, and was not repeated.
 * - `cancelled`: cancelled or terminated.
 * - `error`: anything else (`type` is the failure type).
 */
export type FollowUpDidNotEnd = {
  [K in DidNotEndKind]: {
    kind: K;
    /** The failure type: one of FollowUpErrorType, an agent API error type such as `AgentJobNotFound`, or Temporal's. */
    type: FollowUpFailureType;
    message: string;
  };
}[DidNotEndKind];

export type FollowUpOutcome = FollowUpEnded | FollowUpDidNotEnd;

/** The outcome of a follow-up that returned its result. */
export function endedOutcome(result: FollowUpResult): FollowUpEnded {
  return { kind: result.outcome, result };
}

/** The outcome of a follow-up whose result threw; anything that is not a follow-up's failure is rethrown. */
export function failedOutcome(error: unknown): FollowUpDidNotEnd {
  if (!(error instanceof WorkflowFailedError)) throw error;
  let cause: unknown = error.cause;
  if (cause instanceof CancelledFailure)
    return { kind: 'cancelled', type: 'Cancelled', message: 'the follow-up was cancelled' };
  if (cause instanceof TerminatedFailure)
    return { kind: 'cancelled', type: 'Terminated', message: 'the follow-up was terminated' };
  if (cause instanceof TimeoutFailure)
    return { kind: 'timed-out', type: 'WorkflowTimeout', message: 'the follow-up ran past its workflow timeout' };
  // The innermost ApplicationFailure: the activity's reason is more useful than "Activity task failed".
  let application: ApplicationFailure | undefined;
  while (cause instanceof Error) {
    if (cause instanceof ApplicationFailure) application = cause;
    cause = (cause as Error & { cause?: unknown }).cause;
  }
  if (!application) return { kind: 'error', type: 'WorkflowFailed', message: chainOf(error) };
  const type = application.type ?? 'Error';
  return { kind: failureKind(type, application.nonRetryable === true), type, message: application.message };
}

/** Waits for a follow-up's result and says how it ended, without throwing for the follow-up's own failures. */
export async function settleFollowUp(result: Promise<FollowUpResult>): Promise<FollowUpOutcome> {
  try {
    return endedOutcome(await result);
  } catch (error) {
    return failedOutcome(error);
  }
}

/**
 * "Workflow execution failed: activity sendFollowUpMessage failed: timed out (HEARTBEAT)": every failure of the chain,
 * for a follow-up ended by something that carries no reason of its own (Temporal's "Workflow execution failed" alone
 * says nothing).
 */
function chainOf(error: WorkflowFailedError): string {
  const parts: string[] = [error.message];
  let cause: unknown = error.cause;
  while (cause instanceof Error) {
    if (cause instanceof ActivityFailure) parts.push(`activity ${cause.activityType} failed`);
    else if (cause instanceof TimeoutFailure) parts.push(`timed out (${cause.timeoutType ?? 'unknown timeout'})`);
    else parts.push(cause instanceof TemporalFailure && cause.message === '' ? cause.name : cause.message);
    cause = (cause as Error & { cause?: unknown }).cause;
  }
  return parts.join(': ');
}
