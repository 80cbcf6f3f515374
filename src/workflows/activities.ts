/**
 * The follow-up's activities as the workflow calls them, one timeout profile each. Types only from the activities
 * module: its code (HTTP, zod) never enters the workflow bundle.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { FollowUpActivities, PollRequest, PollResult } from '../activities';
import type { MessageRequest, SendResult } from '../agent-api/http-client';
import { pollHeartbeatTimeoutMs } from '../follow-up/poll-schedule';
import type { DeliveryRecord } from '../follow-up/types';

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

// One attempt per send: a resend is the workflow's decision, never Temporal's (README, "Never sending twice"). A send
// request gives up well within this (AGENT_API_REQUEST_TIMEOUT is at most 25s), so a timeout here means a lost worker.
const { sendFollowUpMessage: sendOnce } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 1 },
  summary: 'send the follow-up message (one attempt)',
});

/** Sends the follow-up message once. */
export function sendFollowUpMessage(request: MessageRequest): Promise<SendResult> {
  return sendOnce(request);
}

const { findEarlierDelivery: find } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
  summary: 'look for an earlier run of this follow-up that sent the message',
});

/** The delivery record of an earlier run under this workflow id, or null. */
export function findEarlierDelivery(workflowId: string, runId: string): Promise<DeliveryRecord | null> {
  return find({ workflowId, runId });
}
