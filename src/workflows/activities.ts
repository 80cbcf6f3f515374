/**
 * The follow-up's activities as the workflow calls them, one timeout profile each. Types only from the activities
 * module: its code (HTTP, zod) never enters the workflow bundle.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { CheckedIn, CheckInRequest, FollowUpActivities, PollRequest, PollResult } from '../activities';
import type { MessageRequest, SendResult } from '../agent-api/http-client';
import { pollHeartbeatTimeoutMs } from '../follow-up/poll-schedule';
import { sendsTaskQueue } from '../follow-up/task-queues';

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
 * Sends the follow-up message once: a resend is the workflow's decision, never Temporal's (README, "Never sending
 * twice"). The send waits its turn on the sends task queue, whose per-project rate limit is the send budget shared by
 * every worker (README, "The send budget"): `fairnessKey` is the project, and eager dispatch (which would bypass the
 * limit) is off. It may wait there until the follow-up's deadline; once picked up, a request gives up well within
 * 30s (AGENT_API_REQUEST_TIMEOUT is at most 25s), so a start-to-close timeout means a lost worker.
 */
export function sendFollowUpMessage(request: MessageRequest, deadlineMs: number): Promise<SendResult> {
  const { sendFollowUpMessage: sendOnce } = proxyActivities<FollowUpActivities>({
    taskQueue: sendsTaskQueue(workflowInfo().taskQueue),
    priority: { fairnessKey: request.projectId },
    allowEagerDispatch: false,
    scheduleToCloseTimeout: Math.max(deadlineMs - Date.now(), 1_000),
    startToCloseTimeout: '30s',
    // A worker that dies mid-send is noticed this soon, so the reconciliation reads come within its trust window.
    heartbeatTimeout: '10s',
    retry: { maximumAttempts: 1 },
    summary: 'send the follow-up message (one attempt, within the project\'s send budget)',
  });
  return sendOnce(request);
}

const { checkIn: check } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '30s' },
  summary: "join the job's lane and look for an earlier run that sent the message",
});

/** Joins the job's lane (one follow-up at a time per job) and finds what earlier runs of this follow-up sent. */
export function checkIn(request: CheckInRequest): Promise<CheckedIn> {
  return check(request);
}
