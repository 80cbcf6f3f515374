/**
 * The follow-up's activities as the workflow calls them, one timeout profile each. Types only from the activities
 * module: its code (HTTP, zod) never enters the workflow bundle.
 */
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import { pollHeartbeatTimeoutMs } from '../../kernel/poll-schedule';
import {
  type FollowUpActivities,
  type PollRequest,
  type PollResult,
  type SendOutcomeReads,
  type SendOutcomeRequest,
  type SendRequest,
  type SentMessage,
} from '../activity-contract';

/** Room after the deadline for the last poll, planned on the deadline itself, to finish. */
const LAST_POLL_GRACE_MS = 30_000;

/**
 * Polls until the job answers the request (poll-agent-job.ts). Temporal's retry timer carries the wait between
 * infrequent polls and after failed reads; the schedule-to-close timeout is the follow-up's deadline, so the wait
 * fails with retry state TIMEOUT once no poll is left.
 */
export function pollAgentJob(request: PollRequest, deadlineMs: number, summary: string): Promise<PollResult> {
  const remainingMs = Math.max(deadlineMs - Date.now(), 0) + LAST_POLL_GRACE_MS;
  const { pollAgentJob: poll } = proxyActivities<FollowUpActivities>({
    scheduleToCloseTimeout: remainingMs,
    startToCloseTimeout: remainingMs,
    heartbeatTimeout: pollHeartbeatTimeoutMs(request.schedule),
    // Used only after a crash or a failed read without a planned poll; the activity plans every other retry itself.
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
    summary,
  });
  return poll(request);
}

/**
 * The reads that settle a send whose outcome is open (read-send-outcome.ts), retried until the follow-up's deadline:
 * a later read can still show the message arrived. The heartbeats notice a lost worker while the trust window runs.
 */
export function readSendOutcome(request: SendOutcomeRequest): Promise<SendOutcomeReads> {
  const remainingMs = Math.max(request.deadlineMs - Date.now(), 0) + LAST_POLL_GRACE_MS;
  const { readSendOutcome: read } = proxyActivities<FollowUpActivities>({
    scheduleToCloseTimeout: remainingMs,
    startToCloseTimeout: remainingMs,
    heartbeatTimeout: '10s',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
    summary: `read job ${request.jobId} ${request.reads === 2 ? 'twice' : `${request.reads} times`}, apart, to see whether an interrupted send arrived`,
  });
  return read(request);
}

/**
 * Sends the follow-up message once, under a slot of the project's send budget: a resend is the workflow's decision,
 * never Temporal's (docs/RELIABILITY.md, "Never sending twice"). No deadline cuts it off: the workflow checks the deadline before
 * it asks for a slot, and a request that has left is carried to its answer (AGENT_API_REQUEST_TIMEOUT is at most
 * 25s, so a start-to-close timeout means a lost worker). Cancelling the follow-up waits for the send's own outcome,
 * so it always knows whether its message went out.
 */
export function sendFollowUpMessage(request: SendRequest): Promise<SentMessage> {
  return send(request);
}

const { sendFollowUpMessage: send } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  // A worker that dies mid-send is noticed this soon, so the reconciliation reads come within its trust window.
  heartbeatTimeout: '10s',
  retry: { maximumAttempts: 1 },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  summary: "send the follow-up message (one attempt, under a slot of the project's send budget)",
});
