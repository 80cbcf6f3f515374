/** What the client's calls take and answer, and how long they give a worker to answer. */
import type {
  CallbackStatus,
  FollowUpProgress,
  FollowUpResult,
  PollActivityProgress,
  SendAnswer,
} from '../kernel/types';
import type { AgentJobCheck } from '../workflows/check-job/check-job';
import type { SharedWatchStatus } from '../watch/watch-figures';
import { type FollowUpOutcome } from './outcome';

export interface FollowUpClientOptions {
  taskQueue: string;
  /** Lower than the default to refuse long prompts earlier. */
  maxPromptLength?: number;
  /** Where project coordinators run (AGENT_COORDINATOR_TASK_QUEUE); the workers' default when not given. */
  coordinatorTaskQueue?: string;
}

export interface StartFollowUpOptions {
  /**
   * Overrides the deterministic id; pass a fresh one to send the same prompt to the same job again on purpose. A taken
   * id attaches only to a follow-up with the same project, job and prompt (else WorkflowIdInUseError); ids starting
   * with `agent-followup-project/` are reserved (ReservedWorkflowIdError).
   */
  workflowId?: string;
  /**
   * 'sent': answer in the same round trip how the send stands (update-with-start): `send` is `sent` (with the job the
   * API answered), `queued` (lane, budget, job busy, or pausing before another attempt, with `nextSlotAt` when
   * known), `reconciling`, or `unanswered` past `answerTimeoutMs`; a follow-up that ends before sending (job not
   * found, key refused) throws its failure instead, with nothing sent. The follow-up goes on in every case.
   */
  waitFor?: 'sent';
  /** With `waitFor`: how long a worker has to answer (default 10 s); the follow-up is started either way. */
  answerTimeoutMs?: number;
}

export interface StartedFollowUp {
  workflowId: string;
  /**
   * True when a follow-up with this id and the same project, job and prompt already existed (running, or completed)
   * and no new message was sent.
   */
  attached: boolean;
  /** When attached: when the follow-up attached to was first started (ISO 8601), before any continue-as-new. */
  startedAt?: string;
  /** When attached: its Temporal status at that moment (RUNNING, or how it ended). */
  executionStatus?: string;
  /** With `waitFor: 'sent'`: how the send stands. */
  send?: SendAnswer;
}

export interface FollowUpStatus {
  workflowId: string;
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, CONTINUED_AS_NEW. */
  executionStatus: string;
  /** How it ended, once it has: the job's ending with the result, or the failure's kind, type and message. */
  outcome?: FollowUpOutcome;
  /** What the follow-up last knew (status, polls, last error, PR): read from a worker, so absent without one. */
  progress?: FollowUpProgress;
  result?: FollowUpResult;
  /** Why `progress` is missing, when it is (no worker polls the task queue, or none answered in time). */
  progressUnavailable?: string;
  /**
   * Shared watching, while a watcher reads the job for the follow-up: the watcher's live figures
   * for it (watched since, last read, failing reads, next read), or why they are not available.
   */
  watch?: SharedWatchStatus;
  /** Once it ended, when it asked for a callback (`notify`): delivering (attempts, last error), delivered or failed. */
  callback?: CallbackStatus;
  /**
   * When no worker answered: what the server itself keeps of the follow-up (its search attributes), so a dead worker
   * never leaves the caller with nothing.
   */
  lastKnown?: {
    jobStatus: string | null;
    prLink: string | null;
    /** The running wait, as the server describes its pending activity (reads, last error, next read): no worker needed. */
    poll: PollActivityProgress | null;
  };
}

/** How long `status` waits for a worker to answer the progress query before it says what the server keeps instead. */
export const PROGRESS_QUERY_DEADLINE_MS = 5_000;

/** How long `start(..., { waitFor: 'sent' })` gives a worker to answer by default. */
export const SEND_ANSWER_TIMEOUT_MS = 10_000;
/**
 * A poller the server saw this recently may still be alive: an idle worker's long poll comes back empty after about a
 * minute and it polls again at once. The server keeps listing pollers for minutes after they stopped.
 */
export const LIVE_POLLER_WINDOW_MS = 75_000;

/** What `checkJob` found: the job, no such job, or why it could not tell. */
export type AgentJobCheckResult =
  ({ found: true } & AgentJobCheck) | { found: false; type: string; message: string } | { found: null; reason: string };

/** What `pollNow` did. */
export interface PollNowAnswer {
  /** False: the follow-up has ended and reads its job no more. */
  requested: boolean;
  /** The follow-up's workflow status when asked. */
  executionStatus: string;
  /** When the read asked for is due (ISO 8601); null when not requested. */
  readAt: string | null;
  /** An earlier ask already had a read due, which begins after this one: nothing new was asked. */
  covered: boolean;
}

/** `pollNow({ projectId, jobId })`: what each running follow-up of the job answered, oldest first. */
export interface JobPollNowAnswer {
  followUps: Array<PollNowAnswer & { workflowId: string }>;
}
