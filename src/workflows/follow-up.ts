/**
 * followUpWorkflow: send one follow-up message, then poll the job with backoff until it ends.
 *
 * Determinism: this file imports only @temporalio/workflow, zod-based pure modules and types. Time comes from the
 * workflow clock; waiting is a durable timer; every HTTP call is an activity.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  ContinueAsNew,
  isCancellation,
  log,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
  TimeoutFailure,
} from '@temporalio/workflow';
import { z } from 'zod';
import type { FollowUpActivities } from '../activities';
import { AgentJobSchema, isKnownStatus, isTerminal, type AgentJob } from '../agent-api/schemas';
import { resolvePolling, validateFollowUpInput, type FollowUpInput } from '../follow-up/input';
import {
  FollowUpErrorType,
  type FollowUpProgress,
  type FollowUpResult,
  type FollowUpTimeoutDetails,
} from '../follow-up/types';
import { nextInterval, sleepBeforePoll } from './backoff';
import { progressQuery } from './definitions';

// One short read per poll. A few quick retries absorb a blip; a longer outage is recorded in `lastError` and the
// polling loop carries on at its own pace until the deadline.
const { getAgentJob } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 3 },
  summary: 'poll agent job',
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

  const progress: FollowUpProgress = {
    phase: carried ? 'polling' : 'sending',
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
  };
  setHandler(progressQuery, () => progress);

  try {
    const state = carried ? CarriedStateSchema.parse(carried) : await send(input.prompt);
    return await pollUntilTerminal(state);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    progress.phase = isCancellation(error)
      ? 'cancelled'
      : error instanceof ApplicationFailure && error.type === FollowUpErrorType.TimedOut
        ? 'timed-out'
        : 'failed';
    throw error;
  }

  async function send(prompt: string): Promise<FollowUpCarriedState> {
    const startedAtMs = Date.now();
    const deadlineMs = startedAtMs + polling.timeoutMs;
    progress.deadline = new Date(deadlineMs).toISOString();
    // Retries here are for failures that happen before the API took the message (see the README's table); the
    // overall timeout bounds them.
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
    const sentAtMs = Date.now();
    log.info('Follow-up message accepted', { ...ref, status: sent.job?.status ?? null });
    observe(sent.job);
    progress.phase = 'polling';
    progress.sentAt = new Date(sentAtMs).toISOString();
    return {
      sentAtMs,
      deadlineMs,
      polls: 0,
      pollErrors: 0,
      intervalMs: polling.initialIntervalMs,
      lastJob: sent.job,
      lastError: null,
      runs: 1,
    };
  }

  async function pollUntilTerminal(state: FollowUpCarriedState): Promise<FollowUpResult> {
    let pollsThisRun = 0;
    for (;;) {
      const now = Date.now();
      if (now >= state.deadlineMs) {
        throw timedOut(state.lastJob, state.polls, `last status: ${state.lastJob?.status ?? 'never read'}`);
      }
      // Always wait before reading: right after the send, a read would only show what the agent was doing before.
      const delay = sleepBeforePoll(state.intervalMs, now, state.deadlineMs);
      progress.nextPollAt = new Date(now + delay).toISOString();
      await sleep(delay);
      progress.nextPollAt = null;

      pollsThisRun += 1;
      try {
        const job = await getAgentJob(ref);
        state.polls += 1;
        state.lastJob = job;
        state.lastError = null;
        progress.polls = state.polls;
        progress.lastError = null;
        observe(job);
        if (isTerminal(job.status)) {
          progress.phase = 'finished';
          log.info('Agent job reached a terminal status', { ...ref, status: job.status, polls: state.polls });
          return {
            job,
            outcome: job.status,
            prLink: job.prLink ?? null,
            polls: state.polls,
            pollErrors: state.pollErrors,
            runs: state.runs,
            sentAt: new Date(state.sentAtMs).toISOString(),
            finishedAt: new Date(Date.now()).toISOString(),
          };
        }
      } catch (error) {
        if (!isTransientPollFailure(error)) throw error;
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

  function observe(job: AgentJob | null): void {
    if (!job) return;
    progress.lastStatus = job.status;
    progress.lastStatusUnknown = !isKnownStatus(job.status);
    if (progress.lastStatusUnknown) {
      log.warn('Agent job reports an undocumented status; treating it as not finished', { ...ref, status: job.status });
    }
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
}

/** A poll failure that retrying later may fix: anything but cancellation or a definite, non-retryable rejection. */
function isTransientPollFailure(error: unknown): error is ActivityFailure {
  if (!(error instanceof ActivityFailure) || isCancellation(error)) return false;
  return !(error.cause instanceof ApplicationFailure && error.cause.nonRetryable);
}

function describeFailure(error: ActivityFailure): string {
  const cause = error.cause;
  if (cause instanceof ApplicationFailure) return `${cause.type ?? 'Error'}: ${cause.message}`;
  return cause?.message ?? error.message;
}
