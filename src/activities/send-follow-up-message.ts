/**
 * sendFollowUpMessage: the one activity that sends the message, under a send slot of the project's budget. It records
 * when its request leaves before it leaves, so every failure tells whether anything was sent, and on the way back it
 * registers the follow-up's first wait with the job watcher and tells the coordinator the slot was used, both best
 * effort (the follow-up does either itself when the answer says it was not done).
 */
import type { AcceptedSlot, FirstWait, SendRequest, SentMessage } from '../workflows/activity-contract';
import { attemptClock } from './attempt-clock';
import { setTimeout as delay } from 'node:timers/promises';
import { ApplicationFailure, CancelledFailure, Context, log } from '@temporalio/activity';
import { ensureApplicationFailure } from '@temporalio/common';
import { ActivityCancelledError, type Client } from '@temporalio/client';
import type { AgentApiClient, MessageRequest } from '../agent-api/http-client';
import { SEND_NOT_RECORDED, SEND_SLOT_EXPIRED, type SendFailureDetails } from '../kernel/types';
import { countedApiCall } from './api-metrics';
import { jobState, type JobState } from '../kernel/agent-job';
import { watcherAddressOf, type StartWatching } from '../watch/start-watching.activity';
import { slotOutcomeSignal } from '../coordinator/messages';
import type { WatchRegistration } from '../watch/messages';

/** How long registering the first wait may hold up a send's answer: past it the follow-up registers it itself. */
const FIRST_WAIT_REGISTRATION_MS = 5_000;
/** The same for telling the coordinator the send was accepted: past it the follow-up tells it itself. */
const TELL_ACCEPTED_MS = 5_000;

export function createSendFollowUpMessage(api: AgentApiClient, temporal: Client, startWatching: StartWatching) {
  /**
   * Sends the follow-up message once, under a send slot of the project's budget; the workflow decides about any
   * further attempt. The request leaves only before `sendByMs` (the slot's lease) and only if the follow-up is not
   * being cancelled; once it has left it is carried to its answer, so a cancelled follow-up still learns whether its
   * message went out. The request leaves only after the server acknowledged a heartbeat recording when it leaves
   * (`recordRequestStart`), and every outcome says when that was (`requestStartedAtMs`) or that none left: the
   * workflow's "was it sent?" rules count from the request, never from when the send was scheduled.
   */
  return async function sendFollowUpMessage(request: SendRequest): Promise<SentMessage> {
    const context = Context.current();
    const now = attemptClock(context.info);
    if (context.cancellationSignal.aborted)
      throw new CancelledFailure('The follow-up was cancelled before its message was sent', [notSent()]);
    if (now() >= request.sendByMs) throw slotExpired();
    const requestStartedAtMs = now();
    await recordRequestStart(temporal, requestStartedAtMs, Date.now() + (request.sendByMs - now()));
    // The record took a round trip: the lease may have run out meanwhile (nothing has left yet).
    if (now() >= request.sendByMs) throw slotExpired();
    // The server's record carries the time from here on, so a worker that dies mid-request leaves it in the failure.
    const timer = setInterval(
      () => context.heartbeat({ requestStartedAtMs }),
      Math.max((context.info.heartbeatTimeoutMs ?? 9_000) / 3, 500),
    );
    try {
      const result = await countedApiCall('send', () => api.sendFollowUpMessage(messageOf(request)));
      if (result.job === null) {
        log.warn('Follow-up accepted, but the response broke the job contract; polling will read the job', {
          problem: result.responseProblem,
        });
      }
      // Both at once: each is a round trip to Temporal the follow-up's answer waits for.
      const [watching, acceptedTold] = await Promise.all([
        request.watch
          ? registerFirstWait(startWatching, request, request.watch, {
              known: result.job === null ? request.watch.baseline : jobState(result.job),
              acceptUnchangedFromMs: requestStartedAtMs + request.watch.settleWindowMs,
              nowMs: now(),
            })
          : undefined,
        request.tellAccepted ? tellAccepted(temporal, request.tellAccepted) : undefined,
      ]);
      return {
        ...result,
        requestStartedAtMs,
        ...(watching !== undefined ? { watching } : {}),
        ...(acceptedTold !== undefined ? { acceptedTold } : {}),
      };
    } catch (error) {
      throw withRequestStart(error, requestStartedAtMs);
    } finally {
      clearInterval(timer);
    }
  };
}

/**
 * Tells the project's coordinator the send under its slot was accepted, so it grants the next; false if that failed
 * (the follow-up tells it then). The coordinator takes only a slot it holds for this follow-up, and a repeat once.
 */
async function tellAccepted(temporal: Client, { coordinatorId, slot, ticket }: AcceptedSlot): Promise<boolean> {
  const execution = Context.current().info.workflowExecution;
  if (!execution) return false;
  try {
    await temporal.withDeadline(Date.now() + TELL_ACCEPTED_MS, () =>
      temporal.workflow.getHandle(coordinatorId).signal(slotOutcomeSignal, {
        workflowId: execution.workflowId,
        ticket,
        slot,
        outcome: 'accepted',
        retryAfterMs: null,
      }),
    );
    return true;
  } catch (error) {
    log.warn('The message was taken, but telling the project coordinator failed; the follow-up tells it itself', {
      coordinatorId,
      error: String(error),
    });
    return false;
  }
}

/**
 * Registers the first wait of a message just taken. The send has succeeded whatever happens here: a failure only
 * means the follow-up registers the wait itself (null), so it is logged and never thrown.
 */
async function registerFirstWait(
  startWatching: StartWatching,
  request: SendRequest,
  watch: FirstWait,
  { known, acceptUnchangedFromMs, nowMs }: { known: JobState; acceptUnchangedFromMs: number; nowMs: number },
): Promise<WatchRegistration | null> {
  const execution = Context.current().info.workflowExecution;
  // Run outside a workflow (a test's mock environment): there is no follow-up to answer.
  if (!execution) return null;
  const { workflowId, runId } = execution;
  const registration: WatchRegistration = {
    workflowId,
    runId,
    projectId: request.projectId,
    jobId: request.jobId,
    known,
    acceptUnchangedFromMs,
    schedule: { ...watch.schedule, startedAtMs: nowMs },
    readAtOnce: false,
    // Round 0: the follow-up numbers its own waits from 1, so one it registers after a send that died mid-way
    // (this registration made, the answer lost) replaces this one rather than passing for a repeat of it.
    round: 0,
    replyTo: watch.replyTo,
  };
  try {
    // Not a deadline on the call: the signal goes with others gathered for the watcher, outside this context.
    const registered = startWatching(watcherAddressOf(watch.watcherId), registration);
    const timer = delay(FIRST_WAIT_REGISTRATION_MS, 'late' as const, { ref: false });
    if ((await Promise.race([registered, timer])) === 'late')
      throw new Error(`no answer within ${FIRST_WAIT_REGISTRATION_MS} ms`);
    return registration;
  } catch (error) {
    log.warn(
      'The message was taken, but registering its wait with the job watcher failed; the follow-up registers it itself',
      { watcherId: watch.watcherId, error: String(error) },
    );
    return null;
  }
}

function notSent(): SendFailureDetails {
  return { request: 'not-sent' };
}

function slotExpired(): ApplicationFailure {
  return ApplicationFailure.create({
    type: SEND_SLOT_EXPIRED,
    message: "The send slot's lease ran out before the request could leave; nothing was sent",
    nonRetryable: true,
    details: [notSent()],
  });
}

/**
 * Records `requestStartedAtMs` as the attempt's heartbeat and waits for the server to acknowledge it: the request
 * may leave only then, so a failure without that time certainly sent nothing (decisions.ts, `requestLeft`). The SDK's
 * own heartbeat is no use here: it is sent later, and never says whether the server took it. Anything but an
 * acknowledgement (the attempt timed out already, the follow-up is being cancelled, no answer by `deadlineMs`) ends
 * the attempt with `not-sent`.
 */
async function recordRequestStart(temporal: Client, requestStartedAtMs: number, deadlineMs: number): Promise<void> {
  const context = Context.current();
  try {
    await temporal.withDeadline(deadlineMs, () =>
      temporal.activity.heartbeat(context.info.taskToken, { requestStartedAtMs } satisfies SendFailureDetails),
    );
    return;
  } catch (error) {
    if (error instanceof ActivityCancelledError) {
      // Ended as cancelled, as before a request: the SDK learns of it through a heartbeat of its own, which also
      // replaces the record with one saying nothing left.
      context.heartbeat(notSent());
      await context.sleep(context.info.heartbeatTimeoutMs ?? 1_000).catch(() => undefined);
      if (context.cancellationSignal.aborted)
        throw new CancelledFailure('The follow-up was cancelled before its message was sent', [notSent()]);
    }
    throw ApplicationFailure.create({
      type: SEND_NOT_RECORDED,
      message: `The server did not acknowledge that the request was about to leave (${error instanceof Error ? error.message : String(error)}); nothing was sent`,
      nonRetryable: true,
      details: [notSent()],
    });
  }
}

/**
 * The failure with the time its request left added to its details, everything else kept as it was. Any error, not
 * only our failures: a failure after the request left without that time would read as "nothing was sent".
 */
function withRequestStart(error: unknown, requestStartedAtMs: number): ApplicationFailure {
  const failure = ensureApplicationFailure(error);
  const [first, ...rest] = failure.details ?? [];
  const details: SendFailureDetails = {
    ...(typeof first === 'object' && first !== null ? first : {}),
    requestStartedAtMs,
  };
  const copy = ApplicationFailure.create({
    type: failure.type ?? undefined,
    message: failure.message,
    nonRetryable: failure.nonRetryable === true,
    details: [details, ...rest],
    ...(failure.cause ? { cause: failure.cause } : {}),
    ...(failure.nextRetryDelay !== undefined && failure.nextRetryDelay !== null
      ? { nextRetryDelay: failure.nextRetryDelay }
      : {}),
    ...(failure.category !== undefined && failure.category !== null ? { category: failure.category } : {}),
  });
  copy.stack = failure.stack;
  return copy;
}

/** The message itself, without the slot's lease. */
function messageOf({ projectId, jobId, prompt, idempotencyKey }: SendRequest): MessageRequest {
  return { projectId, jobId, prompt, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) };
}
