/**
 * followUpWorkflow: send one follow-up message, then poll the job with backoff until it ends.
 *
 * Determinism: this file imports only @temporalio/workflow, zod-based pure modules and types. Time comes from the
 * workflow clock; waiting is a durable timer; every HTTP call is an activity.
 *
 * Versions: follow-ups started by v0.1 have histories without the `RECONCILE_PATCH` marker and replay through the
 * original path (`legacy` below: send with activity retries, accept the first terminal read). Everything newer reads
 * the job before sending, decides itself about every further send attempt, and accepts only a fresh terminal read.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  ContinueAsNew,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import { z } from 'zod';
import type { FollowUpActivities } from '../activities';
import { AgentApiErrorType, type ApiFailureDetails } from '../agent-api/errors';
import { AgentJobSchema, isKnownStatus, isTerminal, type AgentJob } from '../agent-api/schemas';
import { resolvePolling, validateFollowUpInput, type FollowUpInput } from '../follow-up/input';
import { renderProgressDetails } from '../follow-up/progress-details';
import {
  AgentJobId,
  AgentJobStatus,
  AgentPrLink,
  AgentProjectId,
  jobAttributeUpdates,
} from '../follow-up/search-attributes';
import {
  FollowUpErrorType,
  type DeliveryEvidence,
  type FollowUpDeliveryUnknownDetails,
  type FollowUpProgress,
  type FollowUpResult,
  type FollowUpTimeoutDetails,
} from '../follow-up/types';
import { nextInterval, sleepBeforePoll } from './backoff';
import { progressQuery } from './definitions';
import { decideDelivery, isFreshTerminal } from './delivery';
import { recordFinished, recordPoll, recordStarted, recordTimeToTerminal } from './metrics';

/** Marks histories of follow-ups that reconcile ambiguous sends and wait for a fresh result. */
export const RECONCILE_PATCH = 'reconcile-sends-and-fresh-results';
/** Marks histories of follow-ups that keep their AgentJobStatus / AgentPrLink search attributes current. */
export const SEARCH_ATTRIBUTES_PATCH = 'upsert-job-search-attributes';

/** Wait before reading the job after an ambiguous send, so a request still being processed can show its effect. */
const RECONCILE_DELAY_MS = 2_000;
/** Reads that must all show the job unchanged before an ambiguous send is taken as not delivered. */
const RECONCILE_READS = 2;
/** Consecutive get-job bodies that break the contract before the follow-up gives up on the API. */
const MAX_INVALID_RESPONSES = 3;
const SEND_BACKOFF = { initialMs: 1_000, maxMs: 60_000 };

// v0.1: one short read per poll; a few quick retries absorb a blip.
const legacy = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 3 },
  summary: 'poll agent job',
});

// Reads: a few quick retries for blips. A 429 or a body that breaks the contract comes straight back to the
// workflow, which waits (Retry-After) or counts (contract) without spending attempts.
const readOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  heartbeatTimeout: '10s',
  retry: {
    initialInterval: '1s',
    backoffCoefficient: 2,
    maximumInterval: '10s',
    maximumAttempts: 3,
    nonRetryableErrorTypes: [AgentApiErrorType.RateLimited, AgentApiErrorType.InvalidResponse],
  },
};
const { getAgentJob: pollJob } = proxyActivities<FollowUpActivities>({ ...readOptions, summary: 'poll agent job' });
const { getAgentJob: readJobBeforeSend } = proxyActivities<FollowUpActivities>({
  ...readOptions,
  summary: 'read job before sending',
});
const { getAgentJob: readJobToReconcile } = proxyActivities<FollowUpActivities>({
  ...readOptions,
  summary: 'read job to reconcile an ambiguous send',
});
// One attempt per activity: a resend is the workflow's decision, never Temporal's (README, "Never sending twice").
// The heartbeat timeout notices a worker that died mid-send within seconds.
const { sendFollowUpMessage: sendOnce } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '60s',
  heartbeatTimeout: '10s',
  retry: { maximumAttempts: 1 },
  summary: 'send follow-up message',
});

/** State carried across continue-as-new, so the message is never resent and the deadline holds from the start. */
const CarriedStateSchema = z.strictObject({
  sentAtMs: z.number(),
  deadlineMs: z.number(),
  polls: z.number().int().min(0),
  pollErrors: z.number().int().min(0),
  intervalMs: z.number().positive(),
  lastJob: AgentJobSchema.nullable(),
  lastError: z.string().nullable(),
  runs: z.number().int().min(1),
  // Absent in state carried by v0.1 runs.
  snapshot: AgentJobSchema.nullable().optional(),
  sawActive: z.boolean().optional(),
  sendAttempts: z.number().int().min(0).optional(),
  delivery: z.enum(['response', 'reconciled']).optional(),
  invalidResponses: z.number().int().min(0).optional(),
});
export type FollowUpCarriedState = z.infer<typeof CarriedStateSchema>;

/** Sends the follow-up once, follows the job to a terminal status and returns the final job with its `prLink`. */
export async function followUpWorkflow(
  rawInput: FollowUpInput,
  carried?: FollowUpCarriedState,
): Promise<FollowUpResult> {
  const validated = validateFollowUpInput(rawInput);
  if (!validated.ok) {
    throw ApplicationFailure.create({
      type: FollowUpErrorType.InvalidInput,
      message: `Invalid follow-up input: ${validated.problems}`,
      nonRetryable: true,
    });
  }
  const input = validated.value;
  const polling = resolvePolling(input.polling);
  const ref = { projectId: input.projectId, jobId: input.jobId };
  const reconciling = patched(RECONCILE_PATCH);
  // Upserts are commands: histories recorded before this version have none, and must replay without them.
  const upsertingAttributes = patched(SEARCH_ATTRIBUTES_PATCH);

  const progress: FollowUpProgress = {
    phase: carried ? 'polling' : reconciling ? 'reading' : 'sending',
    ...ref,
    lastStatus: carried?.lastJob?.status ?? null,
    lastStatusUnknown: carried?.lastJob ? !isKnownStatus(carried.lastJob.status) : false,
    polls: carried?.polls ?? 0,
    pollErrors: carried?.pollErrors ?? 0,
    nextPollAt: null,
    lastError: carried?.lastError ?? null,
    sentAt: carried ? new Date(carried.sentAtMs).toISOString() : null,
    deadline: carried ? new Date(carried.deadlineMs).toISOString() : null,
    runs: carried?.runs ?? 1,
    sendAttempts: carried?.sendAttempts ?? 0,
    delivery: carried?.delivery ?? null,
    rateLimitedUntil: null,
    prLink: carried?.lastJob?.prLink ?? null,
  };
  setHandler(progressQuery, () => progress);
  if (!carried) recordStarted();
  updateSearchAttributes(carried?.lastJob ?? null);
  publish();

  try {
    const state = carried
      ? CarriedStateSchema.parse(carried)
      : reconciling
        ? await readThenSend(input.prompt)
        : await legacySend(input.prompt);
    return await pollUntilTerminal(state);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    progress.phase = isCancellation(error)
      ? 'cancelled'
      : error instanceof ApplicationFailure && error.type === FollowUpErrorType.TimedOut
        ? 'timed-out'
        : 'failed';
    recordFinished(progress.phase === 'timed-out' ? 'timed_out' : progress.phase === 'cancelled' ? 'cancelled' : 'error');
    publish();
    throw error;
  }

  /** v0.1 send: kept as it was so running v0.1 follow-ups replay. */
  async function legacySend(prompt: string): Promise<FollowUpCarriedState> {
    const startedAtMs = Date.now();
    const deadlineMs = startedAtMs + polling.timeoutMs;
    progress.deadline = new Date(deadlineMs).toISOString();
    const { sendFollowUpMessage } = proxyActivities<FollowUpActivities>({
      startToCloseTimeout: '60s',
      scheduleToCloseTimeout: polling.timeoutMs,
      retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '60s' },
      summary: 'send follow-up message',
    });
    let sent;
    try {
      sent = await sendFollowUpMessage({ ...ref, prompt });
    } catch (error) {
      if (error instanceof ActivityFailure && error.cause instanceof TimeoutFailure) {
        throw timedOut(null, 0, 'the follow-up message could not be sent');
      }
      throw error;
    }
    return accepted(sent.job, 'response', deadlineMs, null, 1);
  }

  /**
   * Reads the job (a baseline for reconciling and for telling a fresh result from a stale one; a missing job fails
   * here, before anything is sent), then sends, deciding after each failure whether another attempt is safe.
   */
  async function readThenSend(prompt: string): Promise<FollowUpCarriedState> {
    const deadlineMs = Date.now() + polling.timeoutMs;
    progress.deadline = new Date(deadlineMs).toISOString();
    const snapshot = await readWithRetries(readJobBeforeSend, deadlineMs, null);
    observe(snapshot);

    // The same on every attempt and every run of this follow-up, so an API that honours it never applies it twice.
    const idempotencyKey = `agent-followup:${workflowInfo().workflowId}`;
    let backoffMs = SEND_BACKOFF.initialMs;
    for (let attempt = 1; ; attempt += 1) {
      progress.phase = 'sending';
      progress.sendAttempts = attempt;
      publish();
      let waitMs: number;
      const attemptStartedAtMs = Date.now();
      try {
        const sent = await sendOnce({ ...ref, prompt, idempotencyKey });
        return accepted(sent.job, 'response', deadlineMs, snapshot, attempt);
      } catch (error) {
        const kind = classifySendFailure(error);
        if (kind === 'final') throw error;
        progress.lastError = describeFailure(error as ActivityFailure);
        waitMs = retryAfterOf(error) ?? backoffMs;
        if (kind === 'ambiguous') {
          log.warn('The send failed in a way that leaves delivery open', { ...ref, policy: input.onAmbiguousSend ?? 'reconcile', error: progress.lastError });
          const policy = input.onAmbiguousSend ?? 'reconcile';
          if (policy === 'fail') throw deliveryUnknown(snapshot, null, attempt);
          if (policy === 'reconcile') {
            progress.phase = 'reconciling';
            publish();
            // Two reads, apart: a single lagging read could show the job unchanged although the message was taken.
            let decision: ReturnType<typeof decideDelivery> = 'not-delivered';
            let now = snapshot;
            for (let read = 0; read < RECONCILE_READS && decision === 'not-delivered'; read += 1) {
              await sleep(RECONCILE_DELAY_MS);
              const readAtMs = Date.now();
              now = await readWithRetries(readJobToReconcile, deadlineMs, snapshot);
              observe(now);
              decision = decideDelivery(snapshot, now, readAtMs - attemptStartedAtMs);
            }
            log.info('Reconciled an ambiguous send', { ...ref, decision, before: snapshot.status, after: now.status });
            if (decision === 'delivered') {
              const state = accepted(now, 'reconciled', deadlineMs, snapshot, attempt);
              // The read was after the send: an `active` there is this follow-up's work.
              state.sawActive = now.status === 'active';
              return state;
            }
            if (decision === 'unknown') throw deliveryUnknown(snapshot, now, attempt);
          }
        }
      }
      if (Date.now() + waitMs >= deadlineMs) throw timedOut(snapshot, 0, 'the follow-up message could not be sent');
      await sleep(waitMs);
      backoffMs = Math.min(backoffMs * 2, SEND_BACKOFF.maxMs);
    }
  }

  /** A read that rides out transient failures and rate limits until the deadline; definite failures end it. */
  async function readWithRetries(
    read: typeof pollJob,
    deadlineMs: number,
    lastJob: AgentJob | null,
  ): Promise<AgentJob> {
    let backoffMs = SEND_BACKOFF.initialMs;
    let invalidResponses = 0;
    for (;;) {
      let waitMs: number;
      try {
        return await read(ref);
      } catch (error) {
        if (!isTransientReadFailure(error)) throw error;
        if (error.cause instanceof ApplicationFailure && error.cause.type === AgentApiErrorType.InvalidResponse) {
          invalidResponses += 1;
          if (invalidResponses >= MAX_INVALID_RESPONSES) throw contractViolation(invalidResponses, error.cause);
        }
        progress.lastError = describeFailure(error);
        waitMs = retryAfterOf(error) ?? backoffMs;
      }
      if (Date.now() + waitMs >= deadlineMs) throw timedOut(lastJob, 0, 'the job could not be read');
      await sleep(waitMs);
      backoffMs = Math.min(backoffMs * 2, SEND_BACKOFF.maxMs);
    }
  }

  function accepted(
    job: AgentJob | null,
    delivery: DeliveryEvidence,
    deadlineMs: number,
    snapshot: AgentJob | null,
    sendAttempts: number,
  ): FollowUpCarriedState {
    const sentAtMs = Date.now();
    log.info('Follow-up message accepted', { ...ref, status: job?.status ?? null, delivery });
    observe(job);
    progress.phase = 'polling';
    progress.sentAt = new Date(sentAtMs).toISOString();
    progress.delivery = delivery;
    progress.lastError = null;
    const base: FollowUpCarriedState = {
      sentAtMs,
      deadlineMs,
      polls: 0,
      pollErrors: 0,
      intervalMs: polling.initialIntervalMs,
      lastJob: job,
      lastError: null,
      runs: 1,
    };
    // v0.1 state has none of these, which is how a continued run knows to keep the v0.1 rules.
    return reconciling ? { ...base, snapshot, sawActive: false, sendAttempts, delivery, invalidResponses: 0 } : base;
  }

  async function pollUntilTerminal(state: FollowUpCarriedState): Promise<FollowUpResult> {
    let pollsThisRun = 0;
    let waitAtLeastMs = 0;
    for (;;) {
      const now = Date.now();
      if (now >= state.deadlineMs) {
        throw timedOut(state.lastJob, state.polls, `last status: ${state.lastJob?.status ?? 'never read'}`);
      }
      // Always wait before reading: right after the send, a read would only show what the agent was doing before.
      const delay = sleepBeforePoll(Math.max(state.intervalMs, waitAtLeastMs), now, state.deadlineMs);
      waitAtLeastMs = 0;
      progress.nextPollAt = new Date(now + delay).toISOString();
      publish();
      await sleep(delay);
      progress.nextPollAt = null;
      progress.rateLimitedUntil = null;

      pollsThisRun += 1;
      const readAtMs = Date.now();
      try {
        const job = reconciling ? await pollJob(ref) : await legacy.getAgentJob(ref);
        const previous = state.lastJob;
        state.polls += 1;
        state.lastJob = job;
        state.lastError = null;
        if (state.invalidResponses !== undefined) state.invalidResponses = 0;
        progress.polls = state.polls;
        progress.lastError = null;
        recordPoll(job.status);
        observe(job);
        if (job.status === 'active' && state.sawActive !== undefined) state.sawActive = true;
        const fresh = isFreshTerminal({
          job,
          snapshot: state.snapshot,
          sawActive: state.sawActive ?? true,
          previous,
          sentAtMs: state.sentAtMs,
          readAtMs,
          settleWindowMs: polling.settleWindowMs,
        });
        if (fresh) return finish(state, job);
        if (isTerminal(job.status)) {
          log.info('Terminal read still matches the job before the send; waiting for it to settle', { ...ref, status: job.status });
        }
      } catch (error) {
        if (!isTransientReadFailure(error)) throw error;
        const failureType = error.cause instanceof ApplicationFailure ? error.cause.type : undefined;
        if (failureType === AgentApiErrorType.RateLimited) {
          // The API asked us to wait: not an error of ours, so it neither counts nor grows the interval.
          waitAtLeastMs = retryAfterOf(error) ?? state.intervalMs;
          progress.rateLimitedUntil = new Date(Date.now() + waitAtLeastMs).toISOString();
          progress.lastError = describeFailure(error);
          continue;
        }
        if (failureType === AgentApiErrorType.InvalidResponse && state.invalidResponses !== undefined) {
          state.invalidResponses += 1;
          if (state.invalidResponses >= MAX_INVALID_RESPONSES) {
            throw contractViolation(state.invalidResponses, error.cause as ApplicationFailure);
          }
        }
        state.pollErrors += 1;
        state.lastError = describeFailure(error);
        progress.pollErrors = state.pollErrors;
        progress.lastError = state.lastError;
        log.warn('Polling the agent job failed; will try again at the next interval', { ...ref, error: state.lastError });
      }
      state.intervalMs = nextInterval(state.intervalMs, polling);

      if (workflowInfo().continueAsNewSuggested || pollsThisRun >= polling.maxPollsPerRun) {
        log.info('Continuing as new to keep history bounded', { ...ref, polls: state.polls });
        await continueAsNew<typeof followUpWorkflow>(rawInput, { ...state, runs: state.runs + 1 });
      }
    }
  }

  function finish(state: FollowUpCarriedState, job: AgentJob): FollowUpResult {
    progress.phase = 'finished';
    log.info('Agent job reached a terminal status', { ...ref, status: job.status, polls: state.polls });
    const outcome = job.status as FollowUpResult['outcome'];
    recordFinished(outcome);
    publish();
    recordTimeToTerminal((Date.now() - state.sentAtMs) / 1000, outcome);
    return {
      job,
      outcome,
      prLink: job.prLink ?? null,
      polls: state.polls,
      pollErrors: state.pollErrors,
      runs: state.runs,
      sentAt: new Date(state.sentAtMs).toISOString(),
      finishedAt: new Date(Date.now()).toISOString(),
      ...(state.sendAttempts !== undefined ? { sendAttempts: state.sendAttempts } : {}),
      ...(state.delivery !== undefined ? { delivery: state.delivery } : {}),
    };
  }

  function observe(job: AgentJob | null): void {
    if (!job) return;
    progress.lastStatus = job.status;
    progress.lastStatusUnknown = !isKnownStatus(job.status);
    progress.prLink = job.prLink ?? null;
    if (progress.lastStatusUnknown) {
      log.warn('Agent job reports an undocumented status; treating it as not finished', { ...ref, status: job.status });
    }
    updateSearchAttributes(job);
    publish();
  }

  /** Keeps AgentJobStatus and AgentPrLink current, so a visibility query by status finds the follow-up. */
  function updateSearchAttributes(job: AgentJob | null): void {
    if (!upsertingAttributes) return;
    const attributes = workflowInfo().typedSearchAttributes;
    const updates = jobAttributeUpdates(ref, job, {
      projectId: attributes.get(AgentProjectId),
      jobId: attributes.get(AgentJobId),
      status: attributes.get(AgentJobStatus),
      prLink: attributes.get(AgentPrLink),
    });
    if (updates.length > 0) upsertSearchAttributes(updates);
  }

  /** The Web UI's "Current details": no history events, so it can change as often as the progress does. */
  function publish(): void {
    setCurrentDetails(renderProgressDetails(progress));
  }

  function timedOut(lastJob: AgentJob | null, polls: number, why: string): ApplicationFailure {
    const details: FollowUpTimeoutDetails = { lastJob, polls, timeoutMs: polling.timeoutMs };
    return ApplicationFailure.create({
      type: FollowUpErrorType.TimedOut,
      message: `The agent job did not reach completed, archived or failed within ${polling.timeoutMs} ms (${why}).`,
      nonRetryable: true,
      details: [details],
    });
  }

  function deliveryUnknown(before: AgentJob, after: AgentJob | null, sendAttempts: number): ApplicationFailure {
    const details: FollowUpDeliveryUnknownDetails = { before, after, sendAttempts };
    return ApplicationFailure.create({
      type: FollowUpErrorType.DeliveryUnknown,
      message:
        `The follow-up to project '${ref.projectId}', job '${ref.jobId}' may or may not have reached the agent: a send ` +
        `failed ambiguously (${progress.lastError ?? 'unknown error'}) and ` +
        (after
          ? `the job (status ${after.status}, before the send ${before.status}) cannot show whether it was taken. `
          : 'the policy is not to resend. ') +
        'Nothing was resent. Check the job; to send again, start a follow-up with a new workflow id.',
      nonRetryable: true,
      details: [details],
    });
  }
}

function contractViolation(times: number, cause: ApplicationFailure): ApplicationFailure {
  return ApplicationFailure.create({
    type: FollowUpErrorType.ContractViolation,
    message: `get-job answered ${times} times in a row with a body that breaks the job contract: ${cause.message}`,
    nonRetryable: true,
  });
}

/** How a failed single-attempt send leaves the message: final (rejected, cancelled), not delivered, or ambiguous. */
function classifySendFailure(error: unknown): 'final' | 'not-delivered' | 'ambiguous' {
  if (isCancellation(error) || !(error instanceof ActivityFailure)) return 'final';
  const cause = error.cause;
  // The worker died or hung mid-send (heartbeat or start-to-close timeout): the request may have gone out.
  if (cause instanceof TimeoutFailure) return 'ambiguous';
  if (cause instanceof ApplicationFailure) {
    if (cause.type === AgentApiErrorType.SendAmbiguous) return 'ambiguous';
    return cause.nonRetryable ? 'final' : 'not-delivered';
  }
  return 'ambiguous';
}

/** A read failure that retrying later may fix: anything but cancellation or a definite, non-retryable rejection. */
function isTransientReadFailure(error: unknown): error is ActivityFailure {
  if (!(error instanceof ActivityFailure) || isCancellation(error)) return false;
  if (!(error.cause instanceof ApplicationFailure)) return true;
  const type = error.cause.type;
  return !error.cause.nonRetryable || type === AgentApiErrorType.RateLimited || type === AgentApiErrorType.InvalidResponse;
}

/** The API's Retry-After, when the failure carries one. */
function retryAfterOf(error: unknown): number | undefined {
  if (!(error instanceof ActivityFailure) || !(error.cause instanceof ApplicationFailure)) return undefined;
  const details = error.cause.details?.[0] as ApiFailureDetails | undefined;
  return typeof details?.retryAfterMs === 'number' ? details.retryAfterMs : undefined;
}

function describeFailure(error: ActivityFailure): string {
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'Error'}: ${cause.message}`;
  return cause?.message ?? error.message;
}
