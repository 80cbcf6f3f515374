/**
 * readSendOutcome: the reads that settle a send whose outcome is open (deliver.ts, `settleOpenAttempt`). Both reads of
 * the job are made in one attempt, spaced by `reconcilePauseMs`, because what they decide depends on when they were
 * made: an unchanged job proves "not delivered" only within RECONCILE_TRUST_MS of the request. Made as two activities
 * with a timer between them, a workflow task that timed out on a loaded worker pushed the second read past that window,
 * and a message the API never took ended "delivery unknown" (docs/RELIABILITY.md, "Findings").
 *
 * A failed read follows the readers' rules (read-rules.ts): it is read again after the same pause (or the API's
 * Retry-After), a failure that ends a wait ends these reads too, and the workflow decides on each read that answered.
 */
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import { Context, log } from '@temporalio/activity';
import type { AgentApiClient } from '../agent-api/http-client';
import { sameJobState } from '../kernel/agent-job';
import { RECONCILE_DELAY_MS, reconcilePauseMs } from '../workflows/follow-up/decisions';
import type { SendOutcomeReads, SendOutcomeRequest } from '../workflows/activity-contract';
import { sleepUnlessAborted } from '../agent-api/abort-signals';
import { apiCounters, countedApiCall } from './api-metrics';
import { attemptClock } from './attempt-clock';
import { judgeFailedRead, retryAfterPastDeadline } from './read-rules';
import { statusLabel, WORKER_STOPPING } from './poll-agent-job';

export function createReadSendOutcome(api: AgentApiClient, stopping: AbortSignal) {
  return async function readSendOutcome(request: SendOutcomeRequest): Promise<SendOutcomeReads> {
    const context = Context.current();
    const now = attemptClock(context.info);
    const heartbeatEveryMs = (context.info.heartbeatTimeoutMs ?? 0) / 3;
    const heartbeats = heartbeatEveryMs > 0 ? setInterval(() => context.heartbeat(), heartbeatEveryMs) : undefined;
    const reads: SendOutcomeReads['reads'] = [];
    let invalidInARow = 0;
    let failedReads = 0;
    let failingSinceMs: number | null = null;
    // Before a read made again after a failed one: the pause between reads, or longer if the API asked.
    let againInMs = 0;
    try {
      while (reads.length < request.reads) {
        const pauseMs = Math.max(reconcilePauseMs(reads.length + 1, request.requestStartedAtMs, now()), againInMs);
        await sleepUnlessAborted(pauseMs, [context.cancellationSignal, stopping]);
        if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
        if (stopping.aborted) throw stoppingFailure();
        const readAtMs = now();
        try {
          const job = await countedApiCall('get_job', () => api.getAgentJob(request, context.cancellationSignal));
          apiCounters(context).polls.add(1, { status: statusLabel(job.status) });
          reads.push({ job, readAtMs });
          // A job that moved from where it stood decides at once (delivered, or unknown): no further read can undo it.
          if (!sameJobState(job, request.baseline)) break;
          invalidInARow = 0;
          failedReads = 0;
          failingSinceMs = null;
          againInMs = 0;
        } catch (error) {
          if (context.cancellationSignal.aborted) throw error;
          const judged = judgeFailedRead(error, invalidInARow, request);
          if (judged.ends) {
            if (judged.definite) throw error;
            throw ApplicationFailure.create({ ...judged.failure, nonRetryable: true });
          }
          if (judged.invalid) invalidInARow += 1;
          failedReads += 1;
          failingSinceMs ??= readAtMs;
          const { retryAfterMs } = judged;
          if (retryAfterMs > 0 && now() + retryAfterMs >= request.deadlineMs) {
            const ending = retryAfterPastDeadline(request, {
              retryAfterMs,
              failingSinceMs,
              failedReads,
              lastError: judged.lastError,
            });
            throw ApplicationFailure.create({ ...ending, nonRetryable: true });
          }
          log.warn('Reading the job after an interrupted send failed; reading it again', { error: judged.lastError });
          // The same read again: a read that failed proves nothing either way, so the count stays.
          againInMs = Math.max(retryAfterMs, RECONCILE_DELAY_MS);
        }
      }
      return { reads };
    } finally {
      if (heartbeats) clearInterval(heartbeats);
    }
  };
}

/** The worker is stopping: the reads start again on whichever worker polls the task queue. */
function stoppingFailure(): ApplicationFailure {
  return ApplicationFailure.create({
    type: WORKER_STOPPING,
    message: "This worker is stopping; the reads' next attempt runs on whichever worker polls its task queue.",
    category: ApplicationFailureCategory.BENIGN,
    nextRetryDelay: 1,
  });
}
