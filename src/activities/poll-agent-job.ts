/**
 * pollAgentJob: reads the job on the wait's schedule until it differs from what the workflow already knows, so a
 * poll that finds "still active, nothing changed" costs no workflow task and no history event.
 *
 * Temporal's polling guidance, both halves (docs/HOW-IT-WORKS.md, "How a follow-up waits, and what it costs"):
 * - polls closer together than FREQUENT_POLL_LIMIT_MS run in a loop inside one attempt, heartbeating (frequent
 *   polling: one activity task for many polls);
 * - a longer gap ends the attempt with a BENIGN failure whose `nextRetryDelay` is the gap, so Temporal's retry timer
 *   carries the wait (infrequent polling: no worker holds anything, a new worker picks it up at once).
 * The schedule is fixed points from the wait's start (poll-schedule.ts), so every attempt knows the next poll from
 * the clock; the heartbeat details carry only counters.
 */
import type { PollRequest, PollResult } from '../workflows/activity-contract';
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { sleepUnlessAborted } from '../agent-api/abort-signals';
import { attemptClock } from './attempt-clock';
import type { AgentApiClient } from '../agent-api/http-client';
import { isKnownStatus, type AgentJob } from '../kernel/agent-job';
import { readCheckpoint, type PollCheckpoint } from '../workflows/follow-up/poll-checkpoint';
import { FREQUENT_POLL_LIMIT_MS, firstReadAt, isAnswer, nextPollAt, nextReadAfter } from '../kernel/poll-schedule';
import type { ReadTrouble } from '../kernel/types';
import { apiCounters, countedApiCall } from './api-metrics';
import { judgeFailedRead, retryAfterPastDeadline } from './read-rules';

export { MAX_INVALID_RESPONSES } from './read-rules';

/** Failure type of "the job has not changed yet": expected, so BENIGN (no error logs or failure metrics). */
export const JOB_UNCHANGED = 'AgentJobUnchanged';
/** Failure type of "this worker is stopping": the wait moves to another worker at once. */
export const WORKER_STOPPING = 'WorkerStopping';

export { readCheckpoint, checkpointOfFailure, type PollCheckpoint } from '../workflows/follow-up/poll-checkpoint';

/** Tells the follow-up that runs this activity that reading its job began to fail, or (null) succeeds again. */
export type ReportReadTrouble = (
  execution: { workflowId: string; runId: string },
  trouble: ReadTrouble | null,
) => Promise<void>;

export interface PollLoopLimits {
  /** Aborted when the worker begins to stop: loops end at once so another worker carries them on. */
  stopping: AbortSignal;
  /**
   * How many waits may loop in this worker at once. A loop holds an activity slot while it sleeps; past this many,
   * a wait hands its sleep to the retry timer instead, so reads and retries always find a free slot.
   */
  maxLoops: number;
  /** How the follow-up hears of a change in the API's health (not given: it hears only of reads that answer). */
  reportTrouble?: ReportReadTrouble;
}

/** Builds the poll activity around one configured API client. */
export function createPollAgentJob(api: AgentApiClient, { stopping, maxLoops, reportTrouble }: PollLoopLimits) {
  let loops = 0;
  return async function pollAgentJob(request: PollRequest): Promise<PollResult> {
    let holdsLoop = false;
    const mayLoop = () => {
      if (!holdsLoop && loops < maxLoops) {
        holdsLoop = true;
        loops += 1;
      }
      return holdsLoop;
    };
    try {
      return await poll(api, { stopping, reportTrouble }, request, mayLoop);
    } finally {
      if (holdsLoop) loops -= 1;
    }
  };
}

/** One attempt of the wait; `mayLoop()` says whether it may keep sleeping in this worker (and claims a loop). */
async function poll(
  api: AgentApiClient,
  { stopping, reportTrouble }: Omit<PollLoopLimits, 'maxLoops'>,
  request: PollRequest,
  mayLoop: () => boolean,
): Promise<PollResult> {
  const context = Context.current();
  const now = attemptClock(context.info);
  const checkpoint = checkpointOfAttempt(context.info.attempt, context.info.heartbeatDetails);
  const tell = troubleTeller(reportTrouble, context, checkpoint);
  let dueAtMs: number | null = context.info.attempt > 1 || request.readAtOnce ? now() : firstReadAt(request, now());

  for (;;) {
    const nowMs = now();
    if (dueAtMs === null) throw unchanged(checkpoint, 'no poll is left before the deadline', ONE_DAY_MS);
    const gap = dueAtMs - nowMs;
    if (gap > 0) {
      checkpoint.nextPollAtMs = dueAtMs;
      if (gap >= FREQUENT_POLL_LIMIT_MS || !mayLoop())
        throw unchanged(checkpoint, `next poll in ${Math.round(gap / 1000)}s`, gap);
      await sleepHeartbeating(context, stopping, gap, checkpoint);
      // A timer may fire a millisecond before the clock shows its time; a read at the settle window's end made that
      // early is not accepted, and the next would come a whole gap later.
      const signals = [context.cancellationSignal, stopping];
      while (now() < dueAtMs && !signals.some((signal) => signal.aborted))
        await sleepUnlessAborted(dueAtMs - now(), signals);
    }
    if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
    if (stopping.aborted) throw stoppingFailure(checkpoint);

    const readAtMs = now();
    checkpoint.polls += 1;
    let job: AgentJob;
    try {
      job = await heartbeatingWhile(
        context,
        checkpoint,
        countedApiCall('get_job', () => api.getAgentJob(request, context.cancellationSignal)),
      );
    } catch (error) {
      const waitMs = await afterReadFailure(error, checkpoint, request, context, readAtMs);
      await tell({
        since: new Date(checkpoint.failingSinceMs ?? readAtMs).toISOString(),
        lastError: checkpoint.lastError ?? 'the read failed',
      });
      // The next attempt (a retry, or another worker) continues the count and knows what the follow-up was told.
      context.heartbeat({ ...checkpoint });
      dueAtMs = nextReadAfterFailure(error, waitMs, request, checkpoint, now);
      if (dueAtMs - now() >= FREQUENT_POLL_LIMIT_MS || !mayLoop())
        throw withRetryDelay(error, dueAtMs - now(), checkpoint);
      continue;
    }
    const { heartbeatDue } = noteRead(checkpoint, job);
    apiCounters(context).polls.add(1, { status: statusLabel(job.status) });
    // An answer reaches the follow-up anyway, and clears its errors there.
    if (isAnswer(request, job, readAtMs))
      return { job, readAtMs, polls: checkpoint.polls, sawActive: checkpoint.sawActive };
    await tell(null);
    // The next attempt must know what this one saw: errors that ended, the first `active`.
    if (heartbeatDue) context.heartbeat({ ...checkpoint });
    dueAtMs = nextReadAfter(request, job, nextPollAt(request.schedule, now()));
  }
}

/** Tells the follow-up of a change in the API's health once per change: a storm of failed reads costs it nothing. */
function troubleTeller(
  reportTrouble: ReportReadTrouble | undefined,
  context: Context,
  checkpoint: PollCheckpoint,
): (trouble: ReadTrouble | null) => Promise<void> {
  return async (trouble) => {
    const execution = context.info.workflowExecution;
    if (!reportTrouble || !execution || (trouble !== null) === checkpoint.troubleTold) return;
    try {
      await reportTrouble(execution, trouble);
      checkpoint.troubleTold = trouble !== null;
    } catch (error) {
      // The follow-up may have ended or moved on (this attempt is then cancelled); the pending activity still says.
      log.debug('Could not tell the follow-up about its reads', { error: String(error) });
    }
  };
}

/** The checkpoint an attempt starts from: the one the attempt before heartbeat, carried on. */
function checkpointOfAttempt(attempt: number, heartbeatDetails: unknown): PollCheckpoint {
  const carried = readCheckpoint(heartbeatDetails);
  // An attempt that never heartbeated made exactly one read (the retry phase), so counting attempts fills the gap.
  return {
    attempt,
    polls: carried ? carried.polls + Math.max(0, attempt - carried.attempt - 1) : attempt - 1,
    sawActive: carried?.sawActive === true,
    invalidInARow: carried?.invalidInARow ?? 0,
    lastStatus: carried?.lastStatus ?? null,
    lastError: carried?.lastError ?? null,
    nextPollAtMs: null,
    failingSinceMs: carried?.failingSinceMs ?? null,
    failedReads: carried?.failedReads ?? 0,
    troubleTold: carried?.troubleTold === true,
  };
}

/**
 * When to read again after a failed read that did not end the wait: the next planned poll, or later if the API asked.
 * Throws when no read can come before the deadline (the API asks past it, or no poll is left).
 */
function nextReadAfterFailure(
  error: unknown,
  waitMs: number,
  request: PollRequest,
  checkpoint: PollCheckpoint,
  now: () => number,
): number {
  const planned = nextPollAt(request.schedule, now());
  const asked = now() + waitMs;
  // The API asks to wait past the deadline: no read can come in time, so say so now rather than at the deadline.
  if (waitMs > 0 && asked >= request.schedule.deadlineMs)
    throw retryAfterPastDeadlineFailure(error, waitMs, request, checkpoint);
  // No poll left before the deadline: a retry delay past it makes Temporal end the wait as timed out.
  if (planned === null) throw withRetryDelay(error, ONE_DAY_MS, checkpoint);
  return Math.max(planned, now() + waitMs);
}

/** Notes a read that answered in the checkpoint; `heartbeatDue`: it saw what the next attempt must know. */
function noteRead(checkpoint: PollCheckpoint, job: AgentJob): { heartbeatDue: boolean } {
  const hadInvalid = checkpoint.invalidInARow > 0;
  const recovered = (checkpoint.failedReads ?? 0) > 0;
  checkpoint.invalidInARow = 0;
  checkpoint.lastError = null;
  checkpoint.failingSinceMs = null;
  checkpoint.failedReads = 0;
  checkpoint.lastStatus = job.status;
  const firstActive = job.status === 'active' && !checkpoint.sawActive;
  if (job.status === 'active') checkpoint.sawActive = true;
  if (!isKnownStatus(job.status)) {
    log.warn('Agent job has a status the API contract does not list; treating it as not finished', {
      status: job.status,
    });
  }
  return { heartbeatDue: hadInvalid || firstActive || recovered };
}

/**
 * Decides about a failed read by the readers' rules (read-rules.ts): a failure that ends the wait is thrown, anything
 * else waits for the next planned poll (or longer, if the API asked with Retry-After). Returns the least time to wait.
 */
async function afterReadFailure(
  error: unknown,
  checkpoint: PollCheckpoint,
  request: PollRequest,
  context: Context,
  readAtMs: number,
): Promise<number> {
  if (context.cancellationSignal.aborted) throw error;
  const judged = judgeFailedRead(error, checkpoint.invalidInARow, request);
  if (judged.ends) {
    // A definite failure goes to the workflow as it came; only the readers' own verdicts are made here.
    if (judged.definite) throw error;
    throw ApplicationFailure.create({ ...judged.failure, nonRetryable: true });
  }
  checkpoint.lastError = judged.lastError;
  checkpoint.failingSinceMs ??= readAtMs;
  checkpoint.failedReads = (checkpoint.failedReads ?? 0) + 1;
  if (judged.invalid) checkpoint.invalidInARow += 1;
  log.warn('Reading the agent job failed; trying again at the next planned poll', { error: checkpoint.lastError });
  return judged.retryAfterMs;
}

/** A slow request must not outlast the heartbeat timeout unnoticed; a fast one (the usual) sends no heartbeat. */
async function heartbeatingWhile<T>(context: Context, checkpoint: PollCheckpoint, work: Promise<T>): Promise<T> {
  const every = (context.info.heartbeatTimeoutMs ?? 0) / 3;
  if (every <= 0) return work;
  const timer = setInterval(() => context.heartbeat({ ...checkpoint }), every);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

/**
 * Sleeps until the next poll, heartbeating at least every half heartbeat timeout, so a gap as long as the timeout
 * does not time the wait out. Core sends at most one heartbeat per 0.8 × the timeout; the rest cost nothing.
 */
async function sleepHeartbeating(
  context: Context,
  stopping: AbortSignal,
  ms: number,
  checkpoint: PollCheckpoint,
): Promise<void> {
  const timeoutMs = context.info.heartbeatTimeoutMs ?? 0;
  const chunkMs = timeoutMs > 0 ? timeoutMs / 2 : ms;
  for (let left = ms; left > 0; left -= chunkMs) {
    context.heartbeat({ ...checkpoint });
    await sleepUnlessAborted(Math.min(left, chunkMs), [context.cancellationSignal, stopping]);
    if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
    if (stopping.aborted) throw stoppingFailure(checkpoint);
  }
}

const ONE_DAY_MS = 24 * 60 * 60 * 1000;

/** "Nothing changed yet; poll again in `delayMs`": Temporal's retry timer carries the wait until then. */
function unchanged(checkpoint: PollCheckpoint, why: string, delayMs: number): ApplicationFailure {
  return ApplicationFailure.create({
    type: JOB_UNCHANGED,
    message: `The job is still ${checkpoint.lastStatus ?? 'unread'} (${why}).`,
    category: ApplicationFailureCategory.BENIGN,
    nextRetryDelay: Math.max(1, Math.round(delayMs)),
    details: [checkpoint],
  });
}

/** The worker is stopping: end this attempt so another worker carries the wait on without waiting for a timeout. */
function stoppingFailure(checkpoint: PollCheckpoint): ApplicationFailure {
  return ApplicationFailure.create({
    type: WORKER_STOPPING,
    message: "This worker is stopping; the wait's next attempt runs on whichever worker polls its task queue.",
    category: ApplicationFailureCategory.BENIGN,
    nextRetryDelay: 1,
    details: [checkpoint],
  });
}

function retryAfterPastDeadlineFailure(
  error: unknown,
  waitMs: number,
  request: PollRequest,
  checkpoint: PollCheckpoint,
): ApplicationFailure {
  const failure = error as ApplicationFailure;
  const ending = retryAfterPastDeadline(request, {
    retryAfterMs: waitMs,
    failingSinceMs: checkpoint.failingSinceMs ?? null,
    failedReads: checkpoint.failedReads ?? 0,
    lastError: `${failure.type ?? 'Error'}: ${failure.message}`,
  });
  return ApplicationFailure.create({ ...ending, nonRetryable: true });
}

/** The read's own failure, retried by Temporal at the next planned poll. */
function withRetryDelay(error: unknown, delayMs: number, checkpoint: PollCheckpoint): ApplicationFailure {
  const failure = error as ApplicationFailure;
  return ApplicationFailure.create({
    type: failure.type ?? 'Error',
    message: failure.message,
    // The API's own details first, as they were; the wait's checkpoint last (the streak, for `status` and the end).
    details: [...(failure.details ?? []), { ...checkpoint }],
    nextRetryDelay: Math.max(1, Math.round(delayMs)),
  });
}

/** Statuses outside the contract are bucketed, so an API that invents values cannot explode label cardinality. */
export function statusLabel(status: string): string {
  return isKnownStatus(status) ? status : 'other';
}
