/**
 * Delivery: the follow-up's message reaches the agent once, never twice and never not at all (README, "Never
 * sending twice"). Each attempt reads the job first and waits until it is idle (not working on earlier work), so the
 * job before the send is a finished result this follow-up's own can be told apart from; then it sends once, and after
 * a failure decides whether another attempt is safe.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  log,
  sleep,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import {
  SEND_SLOT_EXPIRED,
  FollowUpErrorType,
  type DeliveryRecord,
  type FollowUpDeliveryUnknownDetails,
} from '../../kernel/types';
import type { ApiFailureDetails } from '../../agent-api/errors';
import { isTerminal, jobState, type AgentJob, type JobState } from '../../kernel/agent-job';
import type { Delivered } from './checkpoint';
import {
  classifySendFailure,
  decideDelivery,
  refusedByRateLimit,
  requestLeft,
  requestStartOf,
  whatTheReadsShowed,
} from './decisions';
import { pollAgentJob, readSendOutcome, sendFollowUpMessage } from './activity-proxies';
import { scheduleFrom, scheduleShape } from './run-schedule';
import { waitForJobChange, withJobWatch } from './job-change';
import { confirmTold, sharedWatcherId } from '../../watch/shared-watch';
import type { FollowUpRun } from './follow-up-run';
import { describeFailure } from './run-failures';
import type { HeldSlot, ProjectTurn } from '../../coordinator/project-turn';
import type { PollNow } from './poll-now';
import { type FirstWait } from '../activity-contract';

/** Reads that must all show the job unchanged before an ambiguous send is taken as not delivered. */
const RECONCILE_READS = 2;
const SEND_BACKOFF = { initialMs: 1_000, maxMs: 60_000 };

/** An attempt whose outcome is open: the job before it, when its request left (or could have), and why it is open. */
interface OpenAttempt {
  baseline: JobState;
  startedAtMs: number;
  cause: string;
}

/** Delivers the message, or resumes from an earlier run's record of it; returns how we know it arrived. */
export async function deliver(
  run: FollowUpRun,
  turn: ProjectTurn,
  pollNow: PollNow,
  earlier: DeliveryRecord | null,
): Promise<Delivered> {
  if (earlier?.state === 'delivered' && earlier.sentAtMs !== undefined) {
    run.resumeSendAttempts(earlier.sendAttempts);
    const { baseline, sentAtMs, sawActive } = earlier;
    return run.delivered({ baseline, sentAtMs, via: 'earlier-run', sawActive, known: baseline, previous: null });
  }
  let open: OpenAttempt | null = null;
  if (earlier) {
    run.resumeSendAttempts(earlier.sendAttempts);
    open = {
      baseline: earlier.baseline,
      startedAtMs: earlier.attemptStartedAtMs,
      cause: `an earlier run of this follow-up ended while its send of ${new Date(earlier.attemptStartedAtMs).toISOString()} was in flight`,
    };
  }
  // The same on every attempt and every run of this follow-up, so an API that honours it never applies it twice.
  const idempotencyKey = `agent-followup:${workflowInfo().workflowId}`;
  let backoffMs = SEND_BACKOFF.initialMs;
  for (;;) {
    if (open) {
      const settled = await settleOpenAttempt(run, open);
      if (settled) return settled;
      open = null;
    }
    // A message sent after the deadline would start work nobody waits for.
    if (Date.now() >= run.deadlineMs) throw run.timedOut('the follow-up message could not be sent');
    const baseline = await readIdleJob(run, turn, pollNow);
    const slot = await turn.sendSlot();
    // The earliest the request can have left; the activity says when it really did.
    const scheduledAtMs = Date.now();
    run.sending(baseline);
    let after: AfterFailure;
    try {
      return await sendOnce(run, turn, baseline, idempotencyKey, slot);
    } catch (error) {
      after = await afterSendFailure(run, turn, error, jobState(baseline), scheduledAtMs, backoffMs);
    }
    if (after.then === 'settle') open = after.open;
    if (after.then !== 'pause') continue;
    const { waitMs } = after;
    // Nothing arrived (or, for `retry`, the Idempotency-Key covers a duplicate): try again after a pause.
    if (Date.now() + waitMs >= run.deadlineMs) throw run.timedOut('the follow-up message could not be sent');
    run.retryingAt(Date.now() + waitMs);
    await sleep(waitMs, { summary: `wait before sending again (the last attempt certainly did not arrive)` });
    run.retryingAt(null);
    backoffMs = Math.min(backoffMs * 2, SEND_BACKOFF.maxMs);
    await run.continueAsNewIfSuggested(undefined);
  }
}

/** What follows a send that failed: send again now, settle an open attempt first, or pause and send again. */
type AfterFailure = { then: 'send-again' } | { then: 'settle'; open: OpenAttempt } | { then: 'pause'; waitMs: number };

/** One send under a slot; the delivery it records, its answer told to the coordinator. */
async function sendOnce(
  run: FollowUpRun,
  turn: ProjectTurn,
  baseline: AgentJob,
  idempotencyKey: string,
  slot: HeldSlot,
): Promise<Delivered> {
  const { job, requestStartedAtMs, watching, acceptedTold } = await sendFollowUpMessage({
    ...run.ref,
    prompt: run.request.prompt,
    idempotencyKey,
    sendByMs: slot.sendByMs,
    ...firstWait(run, baseline),
    ...turn.acceptedSlot(slot),
  });
  run.firstWaitRegistered(watching ?? null);
  // The answer is what the next read is compared with; it is no proof of work on this message (only a read is).
  const delivered = run.delivered({
    baseline: jobState(baseline),
    sentAtMs: requestStartedAtMs,
    via: 'response',
    sawActive: false,
    known: jobState(job ?? baseline),
    previous: null,
  });
  // The job as the API answered this message: the first state this follow-up shows.
  if (job) run.observe(job, 0);
  // After the delivery is recorded, so a caller waiting for "sent" does not wait for this signal too.
  await turn.answered(false, null, acceptedTold === true);
  return delivered;
}

/**
 * After a failed send: the coordinator told what became of the slot, then whether another attempt is safe (by the
 * failure's kind and the follow-up's `onAmbiguousSend`), and when.
 */
async function afterSendFailure(
  run: FollowUpRun,
  turn: ProjectTurn,
  error: unknown,
  baseline: JobState,
  scheduledAtMs: number,
  backoffMs: number,
): Promise<AfterFailure> {
  const refused = refusedByRateLimit(error);
  if (!requestLeft(error)) {
    // Certainly nothing went out (no request is made before the server has its record): the slot does not
    // count, a later run has nothing open to settle, and sending again is safe.
    await turn.giveBack();
    run.notSent();
    if (isCancellation(error)) throw error;
    if (isSlotExpired(error)) return { then: 'send-again' };
  } else if (refused) {
    await turn.answered(true, retryAfterOf(error) ?? null);
  } else if (answeredByApi(error)) {
    await turn.answered(false, null);
  } else {
    turn.spent();
  }
  const kind = classifySendFailure(error);
  if (kind === 'final') throw error;
  run.noteError(describeFailure(error));
  log.warn(
    kind === 'ambiguous'
      ? 'The send failed in a way that leaves delivery open'
      : 'The send did not arrive; sending again later',
    { ...run.ref, policy: run.request.onAmbiguousSend, error: run.progress.lastError },
  );
  if (kind === 'ambiguous') {
    const cause = run.progress.lastError ?? 'the send failed without saying why';
    if (run.request.onAmbiguousSend === 'fail') throw deliveryUnknown(run, cause, baseline, null);
    if (run.request.onAmbiguousSend === 'reconcile')
      return { then: 'settle', open: { baseline, startedAtMs: requestStartOf(error) ?? scheduledAtMs, cause } };
  }
  const retryAfterMs = retryAfterOf(error);
  // Asked to wait past the deadline: no send can come in time, and the failure says so now, not at the deadline.
  if (retryAfterMs !== undefined && Date.now() + retryAfterMs >= run.deadlineMs)
    throw run.gaveUpEarly(retryAfterMs, 'take the message');
  // A 429 paused the project's sends at its coordinator: the next slot comes with its accepted probe, and no
  // follow-up tries again on its own meanwhile.
  if (refused) {
    // Each refused attempt adds events; a storm of them continues as new like any other retry.
    await run.continueAsNewIfSuggested(undefined);
    return { then: 'send-again' };
  }
  return { then: 'pause', waitMs: retryAfterMs ?? backoffMs };
}

/**
 * Reads the job and, while it is working on something else, waits until it is idle: a message sent to a busy job
 * would leave this follow-up unable to tell its own result from the earlier work's. The wait is the same as the one
 * after the send: the job's watcher reads for it.
 */
async function readIdleJob(run: FollowUpRun, turn: ProjectTurn, pollNow: PollNow): Promise<AgentJob> {
  run.enter('starting');
  const readWithCheckIn = turn.takeJobRead();
  let read = readWithCheckIn
    ? { job: readWithCheckIn, polls: 1 }
    : await pollAgentJob(
        { ...run.ref, known: null, acceptUnchangedFromMs: null, schedule: scheduleFrom(run), readAtOnce: true },
        run.deadlineMs,
        `read job ${run.ref.jobId} before sending`,
      );
  run.observe(read.job, read.polls);
  if (isTerminal(read.job.status)) return read.job;
  // A slot held through a wait of unknown length would keep the project's other sends waiting for its answer.
  await turn.giveBack();
  return withJobWatch(run, null, async (shared) => {
    while (!isTerminal(read.job.status)) {
      run.enter('waiting-for-idle');
      const busy = read.job;
      const changed = await waitForJobChange(run, pollNow, shared, {
        known: jobState(busy),
        acceptUnchangedFromMs: null,
        summary: (readAtOnce) =>
          `${readAtOnce ? 'read now (asked for), then ' : ''}wait for job ${run.ref.jobId} to finish its ${busy.status} work before sending`,
      });
      // The job's end, as its watcher told it, lets the message go only once the follow-up's own read shows it.
      const own =
        'told' in changed && isTerminal(changed.job.status)
          ? await confirmTold(run, scheduleFrom(run), changed)
          : changed;
      if (own === null) continue;
      read = own;
      run.observe(read.job, read.polls);
      await run.continueAsNewIfSuggested(undefined);
    }
    return read.job;
  });
}

/**
 * After a send whose outcome is open: reads the job (twice, apart, in one activity, since one lagging read can show
 * it unchanged) and decides each read with `decideDelivery`. Returns the delivery, null when it certainly did not
 * arrive, or fails the follow-up with FollowUpDeliveryUnknown when the job cannot tell.
 */
async function settleOpenAttempt(run: FollowUpRun, open: OpenAttempt): Promise<Delivered | null> {
  run.enter('reconciling');
  const { reads } = await readSendOutcome({
    ...run.ref,
    baseline: open.baseline,
    requestStartedAtMs: open.startedAtMs,
    reads: RECONCILE_READS,
    deadlineMs: run.deadlineMs,
  });
  for (const { job, readAtMs } of reads) {
    run.observe(job, 1);
    const decision = decideDelivery(open.baseline, jobState(job), readAtMs - open.startedAtMs);
    log.info('Reconciling an open send', { ...run.ref, decision, before: open.baseline.status, after: job.status });
    if (decision === 'delivered') {
      const delivered = run.delivered({
        baseline: open.baseline,
        sentAtMs: open.startedAtMs,
        via: 'reconciled',
        sawActive: job.status === 'active',
        known: jobState(job),
        previous: null,
      });
      // The read that showed the message arrived is a read after it: shown.
      run.observe(job, 0);
      return delivered;
    }
    if (decision === 'unknown')
      throw deliveryUnknown(run, open.cause, open.baseline, jobState(job), readAtMs - open.startedAtMs);
  }
  // Fewer reads than asked, all unchanged, prove less than the rule needs: never taken as "not delivered".
  const last = reads[reads.length - 1];
  if (reads.length < RECONCILE_READS || !last)
    throw deliveryUnknown(
      run,
      open.cause,
      open.baseline,
      jobState(last?.job ?? open.baseline),
      last ? last.readAtMs - open.startedAtMs : null,
    );
  return null;
}

/** With shared watching, the send registers the first wait with the job's watcher (see FirstWait). */
function firstWait(run: FollowUpRun, baseline: AgentJob): { watch?: FirstWait } {
  if (run.watchShards === null) return {};
  // The schedule starts with the send's answer, in the activity.
  const schedule = scheduleShape(run);
  return {
    watch: {
      watcherId: sharedWatcherId(run.ref, run.watchShards),
      baseline: jobState(baseline),
      settleWindowMs: run.request.polling.settleWindowMs,
      schedule,
      replyTo: uuid4(),
    },
  };
}

/** What the API said of a failed send (its status, its Retry-After), when it answered at all. */
function apiAnswerOf(error: unknown): ApiFailureDetails | undefined {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof ApplicationFailure ? (cause.details?.[0] as ApiFailureDetails | undefined) : undefined;
}

/** Whether the API answered the failed send with a status (not a timeout or a broken connection). */
function answeredByApi(error: unknown): boolean {
  return typeof apiAnswerOf(error)?.status === 'number';
}

/** The API's Retry-After, when the failure carries one. */
function retryAfterOf(error: unknown): number | undefined {
  const retryAfterMs = apiAnswerOf(error)?.retryAfterMs;
  return typeof retryAfterMs === 'number' ? retryAfterMs : undefined;
}

/**
 * The failure of a follow-up that cannot tell whether its message arrived. `readAfterMs` is how long after the request
 * the read that could not decide came: an unchanged job read past the trust window is the one case a kill can leave
 * behind when its request never left (docs/RELIABILITY.md, "Never sending twice"), so the message says it in figures.
 */
function deliveryUnknown(
  run: FollowUpRun,
  cause: string,
  before: JobState,
  after: JobState | null,
  readAfterMs: number | null = null,
): ApplicationFailure {
  const details: FollowUpDeliveryUnknownDetails = {
    before,
    after,
    sendAttempts: run.progress.sendAttempts,
    readAfterMs,
  };
  return ApplicationFailure.create({
    type: FollowUpErrorType.DeliveryUnknown,
    message:
      `The follow-up to project '${run.ref.projectId}', job '${run.ref.jobId}' may or may not have reached the agent: a send ` +
      `failed ambiguously (${cause}) and ${whatTheReadsShowed(before, after, readAfterMs)}` +
      'Nothing was resent. Check the job; to send again, start a follow-up with a new workflow id.',
    nonRetryable: true,
    details: [details],
  });
}

function isSlotExpired(error: unknown): boolean {
  return (
    error instanceof ActivityFailure &&
    error.cause instanceof ApplicationFailure &&
    error.cause.type === SEND_SLOT_EXPIRED
  );
}
