/**
 * One read of a watched wait, and what its follow-up hears of it: the job's answer, the beginning and end of failing
 * reads, or the failure that ends the wait. Both ways a watcher reads (its long reader, watch-jobs.activity.ts, and the short
 * batches its timers wake, read-watched-jobs.activity.ts) read through this, so a wait means the same whichever reads it.
 */
import { type Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { log } from '@temporalio/activity';
import type { AgentApiClient } from '../agent-api/http-client';
import type { WatchAnswer } from './watch-answer';
import { readFailed, readSucceeded, type WatchedWait } from './reader-book';
import { apiCounters, countedApiCall } from '../activities/api-metrics';
import { judgeFailedRead, retryAfterPastDeadline, type WaitFailure } from '../activities/read-rules';
import { jobReadsSignal } from '../workflows/follow-up/messages';

export interface WaitReaderHooks {
  /** The wait's answer reached its follow-up: the watcher forgets the wait. */
  answered(wait: WatchedWait): Promise<void>;
  /** The follow-up's run is gone (ended or terminated without leaving): the watcher forgets the wait. */
  gone(wait: WatchedWait): Promise<void>;
}

/** Reads one wait (its state in `wait` updated in place); never throws but when `aborted()`. */
export type ReadWait = (wait: WatchedWait) => Promise<void>;

export function createWaitReader(
  api: AgentApiClient,
  temporal: Client,
  context: Context,
  aborted: () => boolean,
  hooks: WaitReaderHooks,
): ReadWait {
  const reader = new WaitReader(api, temporal, context, aborted, hooks);
  return (wait) => reader.read(wait);
}

class WaitReader {
  constructor(
    private readonly api: AgentApiClient,
    private readonly temporal: Client,
    private readonly context: Context,
    private readonly aborted: () => boolean,
    private readonly hooks: WaitReaderHooks,
  ) {}

  async read(wait: WatchedWait): Promise<void> {
    const { registration } = wait;
    const readAtMs = Date.now();
    try {
      const job = await countedApiCall('get_job', () =>
        this.api.getAgentJob(registration, this.context.cancellationSignal),
      );
      apiCounters(this.context).polls.add(1, { status: job.status });
      const { answer: answers, recovered, previous } = readSucceeded(wait, job, readAtMs, Date.now());
      if (answers) {
        await this.answer(wait, {
          round: registration.round,
          replyTo: registration.replyTo,
          kind: 'read',
          job,
          readAtMs,
          polls: wait.polls,
          sawActive: wait.sawActive,
          ...(registration.result ? { previous } : {}),
        });
      } else if (
        recovered &&
        (await this.tell(wait, () => this.followUp(wait).signal(jobReadsSignal, { trouble: null })))
      ) {
        wait.troubleTold = false;
      }
    } catch (error) {
      if (this.aborted()) return;
      await this.afterFailedRead(wait, error, readAtMs);
    }
  }

  /** A failed read: the wait ends if the rules say so; else its follow-up hears that reads fail, now and then. */
  private async afterFailedRead(wait: WatchedWait, error: unknown, readAtMs: number): Promise<void> {
    const { registration } = wait;
    const judged = judgeFailedRead(error, wait.invalidReads, registration);
    if (judged.ends) return this.fail(wait, judged.failure);
    const message = judged.lastError;
    if (judged.invalid) wait.invalidReads += 1;
    const { retryAfterMs } = judged;
    const { pastDeadline } = readFailed(wait, message, readAtMs, Date.now(), retryAfterMs);
    if (pastDeadline) {
      return this.fail(
        wait,
        retryAfterPastDeadline(registration, {
          retryAfterMs,
          failingSinceMs: wait.failingSinceMs,
          failedReads: wait.failedReads,
          lastError: message,
        }),
      );
    }
    // Told when failing begins and again each time the count doubles: the follow-up's count is never off by more
    // than half, and a day of failures costs it about a dozen signals.
    if (!wait.troubleTold || isPowerOfTwo(wait.failedReads)) {
      const trouble = {
        since: new Date(wait.failingSinceMs ?? readAtMs).toISOString(),
        lastError: message,
        failedReads: wait.failedReads,
      };
      if (await this.tell(wait, () => this.followUp(wait).signal(jobReadsSignal, { trouble }))) wait.troubleTold = true;
    }
  }

  private followUp(wait: WatchedWait) {
    return this.temporal.workflow.getHandle(wait.registration.workflowId, wait.registration.runId);
  }

  private async tell(wait: WatchedWait, send: () => Promise<void>): Promise<boolean> {
    try {
      await send();
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) {
        await this.hooks.gone(wait);
        return false;
      }
      log.warn('Could not tell a follow-up what its watcher read; trying again at the next read', {
        workflowId: wait.registration.workflowId,
        error: String(error),
      });
      return false;
    }
  }

  /** Answers the wait; the watcher then forgets it (the follow-up registers its next wait, if any). */
  private async answer(wait: WatchedWait, message: WatchAnswer): Promise<void> {
    wait.answered = await this.tell(wait, () => this.followUp(wait).signal(jobReadsSignal, { answer: message }));
    if (wait.answered) await this.hooks.answered(wait);
  }

  private fail(wait: WatchedWait, failure: WaitFailure): Promise<void> {
    return this.answer(wait, {
      round: wait.registration.round,
      replyTo: wait.registration.replyTo,
      kind: 'failure',
      ...failure,
      polls: wait.polls,
    });
  }
}

function isPowerOfTwo(count: number): boolean {
  return count > 0 && (count & (count - 1)) === 0;
}
