/** Shapes shared by the workflow, the activities, the client and the CLI. Pure types and constants. */
import type { AgentJob, JobState, TerminalJobStatus } from './agent-job';

/** Stable failure `type` names raised by the workflow itself (the API's own are in agent-api/errors.ts). */
export const FollowUpErrorType = {
  InvalidInput: 'InvalidFollowUpInput',
  TimedOut: 'FollowUpTimedOut',
  /** A send failed ambiguously and the job could not show whether the message was taken; nothing was resent. */
  DeliveryUnknown: 'FollowUpDeliveryUnknown',
  /** get-job kept answering with bodies that break the job contract. */
  ContractViolation: 'AgentApiContractViolation',
  /** A workflow that is not the project's coordinator holds the coordinator's id; nothing was sent. */
  CoordinatorIdTaken: 'CoordinatorIdTaken',
} as const;

/**
 * How we know the message reached the API: `response` (the API answered the send), `reconciled` (a send failed
 * ambiguously and a read showed it was taken), `earlier-run` (an earlier run of this follow-up delivered it).
 */
export type DeliveryEvidence = 'response' | 'reconciled' | 'earlier-run';

/** What a finished follow-up returns. A job that ends `failed` or `archived` is a result, not a workflow failure. */
export interface FollowUpResult {
  /** The final job: the vendor's documented fields as the API returned them, including `prLink`. */
  job: AgentJob;
  outcome: TerminalJobStatus;
  /** The pull request link, or null when the agent changed no files (or the job did not complete). */
  prLink: string | null;
  /** Get-job reads over the whole follow-up (reads lost with a crashed worker may be missing). */
  polls: number;
  /** Workflow runs in the chain: 1 plus the number of continue-as-new. */
  runs: number;
  sentAt: string;
  finishedAt: string;
  /** Send attempts, including ones that certainly did not reach the API. */
  sendAttempts: number;
  delivery: DeliveryEvidence;
}

export type FollowUpPhase =
  | 'queued'
  | 'starting'
  | 'waiting-for-idle'
  | 'sending'
  | 'reconciling'
  | 'waiting'
  | 'finished'
  | 'timed-out'
  | 'cancelled'
  | 'failed';

/** The answer of the `progress` query. Times are ISO 8601 strings (workflow time). */
export interface FollowUpProgress {
  phase: FollowUpPhase;
  projectId: string;
  jobId: string;
  /** The status of the last read after this follow-up's message (null before one); may be outside the documented four. */
  lastStatus: string | null;
  /** True when `lastStatus` is not one of the four documented statuses. */
  lastStatusUnknown: boolean;
  /** Why the follow-up is still waiting on a terminal read: not yet its own, or being read a second time. */
  waitingFor: 'work' | 'settle' | 'confirmation' | null;
  /**
   * While queued: what for. Behind other follow-ups to the job, or for a slot of the project's send budget (null:
   * checking in with the project's coordinator, or not queued).
   */
  queue: QueuePlace | null;
  /** Get-job reads the workflow has heard back about (the running poll activity's own are in `poll`). */
  polls: number;
  /**
   * When the last read it heard back about came in (workflow time); null before one. Reads that change nothing are not
   * told while a wait runs. Absent from follow-ups started by an earlier version.
   */
  lastReadAt?: string | null;
  /** The last call to the API that failed (a read or a send), while calls fail; null once one succeeds. */
  lastError: string | null;
  /** When the calls now failing began to fail (ISO 8601); null while the last call succeeded. */
  errorsSince: string | null;
  sentAt: string | null;
  deadline: string | null;
  runs: number;
  sendAttempts: number;
  /** Set once the message is known to have reached the API. */
  delivery: DeliveryEvidence | null;
  /** The job's pull-request link in the last read, when it has one. */
  prLink: string | null;
  /** How the follow-up ended (outcome-kind.ts); null while it runs. The same word as its AgentFollowUpOutcome. */
  outcome: FollowUpOutcomeKind | null;
  /**
   * The shared job watcher reading the job for this follow-up while it waits, by workflow id;
   * null when it polls for itself or is not waiting. Absent from follow-ups started by an earlier version.
   */
  watcherId?: string | null;
  /** Reads failed in a row, at least, as the shared watcher last told (null or absent: not told, or reads succeed). */
  failedReads?: number | null;
  /**
   * It left a wait its watcher held and never answered (cancelled, or its deadline passed): the watcher's reads of that
   * wait are told only with an answer, so they are not in `polls`. Absent: none left so.
   */
  leftWatchedWait?: boolean;
  /** The poll activity under way, as Temporal describes it (filled in by the client, not by the workflow). */
  poll?: PollActivityProgress;
}

/** Why a queued follow-up waits, as its project's coordinator told it. Times are ISO 8601 strings. */
export type QueuePlace =
  | { reason: 'lane'; jobId: string; ahead: number }
  | {
      reason: 'budget';
      /** Sends counted in the window at `countedAt`, and the most it allows. */
      sentInWindow: number;
      limit: number;
      windowMs: number;
      /** When this follow-up can expect its slot (null: not known). */
      nextSlotAt: string | null;
      /** Follow-ups of the project waiting for a slot before this one. */
      ahead: number;
      /** The API refused the project's sends (429) since then; `nextSlotAt` is the next probe. Absent while sends go. */
      refusedSince?: string;
      /**
       * When the coordinator counted `sentInWindow` and `ahead` (absent from earlier versions). It tells a follow-up
       * again only when its slot moves, so the count ages as the window fills; the client counts afresh when it asks.
       */
      countedAt?: string;
    };

/** The running poll activity, from `describe()`: the workflow does not hear about polls that change nothing. */
export interface PollActivityProgress {
  /** Reads made by this wait so far (approximate after a worker crash). */
  polls: number;
  nextPollAt: string | null;
  lastStatus: string | null;
  lastError: string | null;
  /** When the reads now failing began to fail; null while the last read succeeded. */
  failingSince: string | null;
  /** Reads failed in a row since then. */
  failedReads: number;
}

/**
 * What the poll activity tells its follow-up when reading the job begins to fail (null: reads succeed again): the
 * follow-up hears of a change in the API's health, never of each failed read (those stay on the pending activity).
 */
export interface ReadTrouble {
  since: string;
  lastError: string;
  /**
   * Reads failed in a row when this was sent. A shared watcher tells again each time the count doubles (1, 2, 4, 8…),
   * so the follow-up knows the count within a factor of two at the cost of a few signals; absent from the poll
   * activity, whose pending attempt shows the live count.
   */
  failedReads?: number;
}

/** The details of a `FollowUpDeliveryUnknown` failure. */
export interface FollowUpDeliveryUnknownDetails {
  before: JobState;
  after: JobState | null;
  sendAttempts: number;
  /** How long after the request the read that could not decide came; null when no read was made. */
  readAfterMs: number | null;
}

/** The details of a `FollowUpTimedOut` failure. */
export interface FollowUpTimeoutDetails {
  /** The job as last read after this follow-up's message; null when none was (or nothing was sent). */
  lastJob: AgentJob | null;
  polls: number;
  timeoutMs: number;
  /** Calls to the API were failing when the follow-up gave up: since when, how many reads in a row, the last error. */
  errors?: { since: string; failedReads: number | null; lastError: string };
  /** Set when the follow-up gave up before its deadline, because the API asked (Retry-After) to wait past it. */
  retryAfterMs?: number;
}

/** Failure type of "the API asked to wait past the follow-up's deadline": the workflow ends it as timed out, early. */
export const RETRY_AFTER_PAST_DEADLINE = 'RetryAfterPastDeadline';

/** What a RetryAfterPastDeadline failure of the poll activity carries for the follow-up's own failure. */
export interface RetryAfterPastDeadlineDetails {
  retryAfterMs: number;
  failingSinceMs: number | null;
  failedReads: number;
  lastError: string;
}

/** The failure type of a send refused because its slot's lease ran out before the request could leave. */
export const SEND_SLOT_EXPIRED = 'SendSlotExpired';
/** The send's failure when the server did not acknowledge the record that its request was about to leave. */
export const SEND_NOT_RECORDED = 'SendNotRecorded';

/** A coordinator's validator refused a check-in for now (its run is closing, or it keeps all it can): try again later. */
export const COORDINATOR_BUSY = 'CoordinatorBusy';
/** A coordinator's validator refused a malformed check-in: trying again cannot help. */
export const CHECK_IN_REFUSED = 'CheckInRefused';

/** A `pollNow` refused because a read asked for is already due: that read, which begins after it, covers it. */
export const POLL_NOW_COVERED = 'PollNowCovered';

/**
 * A `sendAnswer` refused because the follow-up can answer at once: the answer is the refusal's details, so a repeated
 * start that waits for the send writes nothing to history once the send is answered.
 */
export const SEND_ANSWERED = 'SendAnswered';

/** The answer to `pollNow`, and the details of its POLL_NOW_COVERED refusal: when the read asked for is due. */
export interface AskedRead {
  readAtMs: number;
}

/** What a send failure says about its request, beyond the API's own details (agent-api/errors.ts). */
export interface SendFailureDetails {
  delivery?: 'not-delivered' | 'ambiguous';
  /** `not-sent`: no request left (refused before it, or cancelled before it). */
  request?: 'not-sent';
  /**
   * When the request left, as the worker's clock said; the server acknowledged it before the request did leave, so a
   * failure without it (in its details or its last heartbeat) sent nothing.
   */
  requestStartedAtMs?: number;
}

/** The memo key under which a run records its delivery, so a later run of the same follow-up never sends twice. */
export const DELIVERY_MEMO_KEY = 'agentFollowUpDelivery';

/**
 * A run's record of its message, in its memo: `sending` before each attempt (the outcome of an interrupted attempt
 * is unknown), `not-sent` when the attempt certainly sent nothing, `delivered` once known. A new run under the same
 * workflow id resumes from it instead of sending.
 */
export interface DeliveryRecord {
  state: 'sending' | 'not-sent' | 'delivered';
  /** The idle job just before the send. */
  baseline: JobState;
  /** When the last attempt began (workflow time). */
  attemptStartedAtMs: number;
  sendAttempts: number;
  /** Set once delivered. */
  sentAtMs?: number;
  via?: DeliveryEvidence;
  /** The job was seen `active` after the send. */
  sawActive: boolean;
}

/**
 * What `start(input, { waitFor: 'sent' })` answers: the follow-up's send as it stands when it first can say. The
 * follow-up goes on durably whatever the answer.
 */
export type SendAnswer =
  /** The API answered 2xx (or a reconciliation read showed the message arrived); `job` as it answered or was read. */
  | { state: 'sent'; sentAt: string; job: AgentJob | null }
  /**
   * Not now: behind other follow-ups to the job (`lane`), behind the project's send budget (`budget`), while the job
   * works on earlier work (`job-busy`), or pausing before another attempt after one the API did not take (`retry`).
   * `position` counts from 1 (null: not known); `nextSlotAt`, when known, is when the send can go.
   */
  | {
      state: 'queued';
      reason: 'lane' | 'budget' | 'job-busy' | 'retry';
      position: number | null;
      nextSlotAt: string | null;
    }
  /** A send whose arrival is open (a timeout, a dropped connection): reads of the job will tell. */
  | { state: 'reconciling' }
  /** No worker answered within the caller's time; the follow-up is started and goes on. */
  | { state: 'unanswered'; timeoutMs: number };

/**
 * The body of a follow-up's callback (`notify`), posted when it ends whatever the outcome and signed over its raw
 * bytes (docs/LIBRARY.md, "Callbacks"). `failure` says why when it ended without a final job.
 */
export interface FollowUpNotification {
  workflowId: string;
  projectId: string;
  jobId: string;
  outcome: FollowUpOutcomeKind;
  prLink: string | null;
  job: AgentJob | null;
  sentAt: string | null;
  finishedAt: string;
  failure: { type: string | null; message: string } | null;
}

/** Failure type of a callback that is not a follow-up's own ending (no parent, another parent, another ending). */
export const CALLBACK_NOT_ATTESTED = 'CallbackNotAttested';

/** What the callback workflow delivers: the body, to where. */
export interface NotificationDelivery {
  url: string;
  notification: FollowUpNotification;
}

/** A delivered callback: the receiver's status, when, and after how many attempts. */
export interface NotificationDelivered {
  status: number;
  deliveredAt: string;
  attempt: number;
}

/** A follow-up's callback as `status` shows it (absent when it asked for none, or has not ended yet). */
export type CallbackStatus =
  | {
      state: 'delivering';
      callbackWorkflowId: string;
      attempts: number;
      lastError: string | null;
      nextAttemptAt: string | null;
    }
  | { state: 'delivered'; callbackWorkflowId: string; deliveredAt: string; status: number; attempts: number }
  | { state: 'failed'; callbackWorkflowId: string; reason: string };

/** The names of the ways a follow-up ends (outcome-kind.ts tells a failure's). */
/** The follow-up returned the job as it ended: the job's final status. */
export type EndedKind = 'completed' | 'failed' | 'archived';

/** The follow-up did not return a final job (outcome.ts says what each means). */
export type DidNotEndKind = 'timed-out' | 'rejected' | 'invalid-input' | 'delivery-unknown' | 'cancelled' | 'error';

export type FollowUpOutcomeKind = EndedKind | DidNotEndKind;
