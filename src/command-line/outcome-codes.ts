/** Exit codes by how a follow-up ended: the same words as `outcome()` and the AgentFollowUpOutcome attribute. */
import type { FollowUpOutcome, FollowUpResult } from '../index';
import { endedOutcome, failedOutcome } from '../index';
import { ExitCode } from './io';

const EXIT_CODES: Record<FollowUpOutcome['kind'], number> = {
  completed: ExitCode.Ok,
  failed: ExitCode.JobFailed,
  archived: ExitCode.JobArchived,
  'timed-out': ExitCode.TimedOut,
  rejected: ExitCode.Rejected,
  'invalid-input': ExitCode.BadInput,
  'delivery-unknown': ExitCode.DeliveryUnknown,
  cancelled: ExitCode.Cancelled,
  error: ExitCode.Error,
};

export function exitCodeFor(outcome: FollowUpOutcome): number {
  return EXIT_CODES[outcome.kind];
}

/** The exit code for a follow-up that ended with a terminal job. */
export function exitCodeForOutcome(result: FollowUpResult): number {
  return exitCodeFor(endedOutcome(result));
}

/** Maps a failed follow-up to an exit code and a one-line reason. */
export function classifyFailure(error: unknown): { code: number; type: string; message: string } {
  try {
    const outcome = failedOutcome(error);
    return { code: exitCodeFor(outcome), type: outcome.type, message: outcome.message };
  } catch {
    return { code: ExitCode.Error, type: 'Error', message: error instanceof Error ? error.message : String(error) };
  }
}
