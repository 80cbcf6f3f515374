/**
 * The follow-up's activities as the workflow calls them, one timeout profile each. Types only from the activities
 * module: its code (HTTP, zod) never enters the workflow bundle.
 */
import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import { pollHeartbeatTimeoutMs } from '../../kernel/poll-schedule';
import type { PollSchedule } from '../../kernel/poll-schedule';
import type { JobRef } from '../../kernel/agent-job';
import { type WatchRegistration } from '../../watch/messages';
import {
  type CheckedIn,
  type CheckInRequest,
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

/**
 * Checks in with the project's coordinator: joins the job's lane, asks for a send slot, and (first time) finds what
 * earlier runs of this follow-up sent. Retried until the follow-up's deadline, never past it.
 *
 * A run's first check-in is a local activity: it runs inside the run's first workflow task, so a follow-up whose
 * check-in gives it the job and a slot schedules its send in that same task (one workflow task and no activity task
 * before the send: the burst figures are in docs/BENCHMARKS.md). A lost task leaves no record of it, so it runs again:
 * the coordinator repeats its answer (by the update's id, or by the slot key, which the run asks for again), a turn
 * its lost answer led to is kept (project-turn.ts, `take`), and the read it makes is only a read. The deadline it is
 * judged by counts from the recorded start (follow-up-run.ts). Later check-ins (a slot asked again, silence while
 * waiting) are rare and may wait long: activities, so a long wait writes nothing.
 */
export function checkIn(request: CheckInRequest): Promise<CheckedIn> {
  const timeouts = {
    scheduleToCloseTimeout: Math.max(request.deadlineMs - Date.now(), 1_000),
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', maximumInterval: '30s' },
  } as const;
  if (request.findEarlier) {
    const { checkIn: local } = proxyLocalActivities<FollowUpActivities>({
      ...timeouts,
      summary:
        "check in with the project's coordinator, look for an earlier run that sent the message, and read the job if given it",
    });
    return local(request);
  }
  const { checkIn: check } = proxyActivities<FollowUpActivities>({
    ...timeouts,
    summary: "ask the project's coordinator for a send slot",
  });
  return check(request);
}

/** Registers a wait with its shard's watcher, starting the watcher if need be: every registration but the send's own. */
export function registerWatch(
  request: { watcherId: string; registration: WatchRegistration },
  deadlineMs: number,
): Promise<void> {
  const { registerWatch: register } = proxyActivities<FollowUpActivities>({
    scheduleToCloseTimeout: Math.max(deadlineMs - Date.now(), 1_000),
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', maximumInterval: '30s' },
    summary: `register with the job watcher ${request.watcherId} (starting it)`,
  });
  return register(request);
}

/**
 * One read of the job, made by the follow-up itself: a read asked for (pollNow) while a shared watcher follows the job,
 * which would come to it only at its next look at its book (a workflow task and a query later, or 2 s for a watcher
 * that reads by its timers); or the read that confirms what a watcher told before it ends a wait. Exactly one GET: the schedule given to the poll
 * ends now, so no second read is planned, and a failed read is not retried (the wait goes back to the watcher, which
 * reads again at once and tells of the failure as it tells of any other). `known: null` returns the read as it is.
 */
export function readAgentJobOnce(
  ref: JobRef,
  schedule: PollSchedule,
  summary = `read job ${ref.jobId} now (asked for)`,
): Promise<PollResult> {
  const { pollAgentJob: read } = proxyActivities<FollowUpActivities>({
    // AGENT_API_REQUEST_TIMEOUT is at most 25 s; the heartbeats during the read notice a lost worker sooner.
    startToCloseTimeout: '30s',
    heartbeatTimeout: '10s',
    retry: { maximumAttempts: 1 },
    summary,
  });
  return read({
    ...ref,
    known: null,
    acceptUnchangedFromMs: null,
    readAtOnce: true,
    schedule: { ...schedule, deadlineMs: Date.now() },
  });
}
