/** Shapes shared by the workflow, the client and the CLI. Pure types and constants: workflow code imports them. */
import type { AgentJob, TerminalJobStatus } from '../agent-api/schemas';

/** Stable failure `type` names raised by the workflow itself (the API's own are in agent-api/errors.ts). */
export const FollowUpErrorType = {
  InvalidInput: 'InvalidFollowUpInput',
  TimedOut: 'FollowUpTimedOut',
} as const;

/** What a finished follow-up returns. A job that ends `failed` or `archived` is a result, not a workflow failure. */
export interface FollowUpResult {
  /** The final job exactly as the API returned it, including `prLink`. */
  job: AgentJob;
  outcome: TerminalJobStatus;
  /** The pull request link, or null when the agent changed no files (or the job did not complete). */
  prLink: string | null;
  /** Successful get-job reads over the whole follow-up (all runs). */
  polls: number;
  /** Get-job reads that failed after their retries; polling went on. */
  pollErrors: number;
  /** Workflow runs in the chain: 1 plus the number of continue-as-new. */
  runs: number;
  sentAt: string;
  finishedAt: string;
}

export type FollowUpPhase = 'sending' | 'polling' | 'finished' | 'timed-out' | 'cancelled' | 'failed';

/** The answer of the `progress` query. Times are ISO 8601 strings (workflow time). */
export interface FollowUpProgress {
  phase: FollowUpPhase;
  projectId: string;
  jobId: string;
  /** Last status the API reported; may be a value outside the documented four. */
  lastStatus: string | null;
  /** True when `lastStatus` is not one of the four documented statuses. */
  lastStatusUnknown: boolean;
  polls: number;
  pollErrors: number;
  nextPollAt: string | null;
  lastError: string | null;
  sentAt: string | null;
  deadline: string | null;
  runs: number;
}

/** The details of a `FollowUpTimedOut` failure. */
export interface FollowUpTimeoutDetails {
  lastJob: AgentJob | null;
  polls: number;
  timeoutMs: number;
}
