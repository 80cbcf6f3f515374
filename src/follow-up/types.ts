/** Shapes shared by the workflow, the client and the CLI. Pure types and constants: workflow code imports them. */
import type { AgentJob, TerminalJobStatus } from '../agent-api/schemas';

/** Stable failure `type` names raised by the workflow itself (the API's own are in agent-api/errors.ts). */
export const FollowUpErrorType = {
  InvalidInput: 'InvalidFollowUpInput',
  TimedOut: 'FollowUpTimedOut',
  /** A send failed ambiguously and the job could not show whether the message was taken; nothing was resent. */
  DeliveryUnknown: 'FollowUpDeliveryUnknown',
  /** get-job kept answering with bodies that break the job contract. */
  ContractViolation: 'AgentApiContractViolation',
} as const;

/** How we know the message reached the API. */
export type DeliveryEvidence = 'response' | 'reconciled';

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
  /** Send attempts, including ones that certainly did not reach the API (absent for follow-ups started by v0.1). */
  sendAttempts?: number;
  /** `response`: the API answered the send; `reconciled`: a send failed ambiguously and a read showed it was taken. */
  delivery?: DeliveryEvidence;
}

export type FollowUpPhase =
  | 'reading'
  | 'sending'
  | 'reconciling'
  | 'polling'
  | 'finished'
  | 'timed-out'
  | 'cancelled'
  | 'failed';

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
  sendAttempts: number;
  /** Set once the message is known to have reached the API. */
  delivery: DeliveryEvidence | null;
  /** Until when a rate limit (429 Retry-After) holds the next request back. */
  rateLimitedUntil: string | null;
  /** The job's pull-request link in the last read, when it has one. */
  prLink: string | null;
}

/** The details of a `FollowUpDeliveryUnknown` failure. */
export interface FollowUpDeliveryUnknownDetails {
  before: AgentJob;
  after: AgentJob | null;
  sendAttempts: number;
}

/** The details of a `FollowUpTimedOut` failure. */
export interface FollowUpTimeoutDetails {
  lastJob: AgentJob | null;
  polls: number;
  timeoutMs: number;
}
