/**
 * readWatchedJobs: one turn of a watcher that reads by its own durable timers (timed-reads.ts). It reads
 * the waits the watcher found due, tells their follow-ups as the long reader would (wait-reader.activity.ts), and hands every
 * wait's new state back to the watcher, which keeps it in its history: nothing runs between turns, so a waiting
 * follow-up costs a timer and an activity per turn, and turns are shared by every wait due together.
 */
import { setMaxListeners } from 'node:events';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { AgentApiClient } from '../agent-api/http-client';
import {
  TURN_STARTS_EARLY_MS,
  type ReadWatchedJobsRequest,
  type ReadWatchedJobsResult,
} from '../workflows/activity-contract';
import type { WatchedWait } from './reader-book';
import { createWaitReader } from './wait-reader.activity';
import { sleepUnlessAborted } from '../agent-api/abort-signals';

/** Reads in flight at once, as the long reader's. */
const READS_AT_ONCE = 16;
/**
 * A turn heartbeats only once it has run this long (a turn of a few reads ends well before): a heartbeat is an Action
 * a Cloud user pays for, and the turn's heartbeat timeout (twice this) is what notices a worker that died mid-turn.
 */
const HEARTBEAT_AFTER_MS = 10_000;

export function createReadWatchedJobs(api: AgentApiClient, temporal: Client, stopping: AbortSignal) {
  return async function readWatchedJobs({
    waits,
    notBeforeMs,
  }: ReadWatchedJobsRequest): Promise<ReadWatchedJobsResult> {
    const context = Context.current();
    // Each read in flight listens for the attempt's cancellation.
    setMaxListeners(READS_AT_ONCE + 8, context.cancellationSignal);
    const aborted = () => context.cancellationSignal.aborted || stopping.aborted;
    const gone = new Set<WatchedWait>();
    const read = createWaitReader(api, temporal, context, aborted, {
      answered: async () => undefined,
      gone: async (wait) => void gone.add(wait),
    });
    const heartbeats = setInterval(() => context.heartbeat(), HEARTBEAT_AFTER_MS);
    try {
      const earlyByMs = notBeforeMs === undefined ? 0 : Math.min(notBeforeMs - Date.now(), TURN_STARTS_EARLY_MS);
      // Looped: a timer may fire a millisecond before the clock shows its time, and no wait is read before its point.
      const untilMs = Date.now() + Math.max(0, earlyByMs);
      while (!aborted() && Date.now() < untilMs)
        await sleepUnlessAborted(untilMs - Date.now(), [context.cancellationSignal, stopping]);
      const queue = [...waits];
      await Promise.all(
        Array.from({ length: Math.min(READS_AT_ONCE, queue.length) }, async () => {
          for (let wait = queue.shift(); wait && !aborted(); wait = queue.shift()) await read(wait);
        }),
      );
    } finally {
      clearInterval(heartbeats);
    }
    if (aborted()) {
      if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
      // The next attempt, on whichever worker polls the queue, reads the turn again (a read twice changes nothing).
      throw ApplicationFailure.create({
        type: 'WorkerStopping',
        message: "This worker is stopping; the watcher's turn is read again by whichever worker polls its task queue.",
      });
    }
    // Named by identity only: the watcher keeps each registration, and this result goes into its history.
    return {
      waits: waits.map((wait) => {
        const { workflowId, runId, round, replyTo } = wait.registration;
        return { wait: { ...wait, registration: { workflowId, runId, round, replyTo } }, gone: gone.has(wait) };
      }),
    };
  };
}
