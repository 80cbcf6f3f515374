/**
 * A follow-up's shared job watcher, asked for that follow-up's live figures (`status` in shared mode): by query, so
 * nothing goes into history. A watcher that is gone, stuck or from another build never fails the status: the figures
 * are then unavailable, with the reason. Client-side only.
 */
import { isGrpcCancelledError, isGrpcDeadlineError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { watchFiguresOf, type SharedWatchStatus } from '../workflows/job-watcher/watch-figures';
import { watchedWaitQuery } from '../workflows/job-watcher/messages';

const WatchedWaitViewSchema = z.object({
  registration: z.looseObject({
    round: z.number(),
    readAtOnce: z.boolean(),
    readBefore: z.object({ atMs: z.number(), status: z.string() }).optional(),
    schedule: z.object({
      startedAtMs: z.number(),
      initialIntervalMs: z.number().positive(),
      backoffCoefficient: z.number(),
      maxIntervalMs: z.number().positive(),
      deadlineMs: z.number(),
    }),
  }),
  watchedSinceMs: z.number(),
  report: z
    .object({
      round: z.number(),
      reads: z.number(),
      lastRead: z.object({ atMs: z.number(), status: z.string().nullable() }).nullable(),
      failingSinceMs: z.number().nullable(),
      failedReads: z.number(),
      lastError: z.string().nullable(),
      nextReadAtMs: z.number().nullable(),
    })
    .nullable(),
});

const REGISTERS_AGAIN =
  'a running worker starts a new watcher within about 10 s, which takes its waits over; with no worker, the follow-up registers again after sixty poll gaps of silence (an hour at the default schedule), or at once on poll-now';

/** The watcher's live figures for `workflowId`, or why they are not available; answers within about `timeoutMs`. */
export async function describeWatch(
  client: Client,
  workflowId: string,
  watcherId: string,
  timeoutMs: number,
): Promise<SharedWatchStatus> {
  const unavailable = (reason: string): SharedWatchStatus => ({ watcherId, available: false, reason });
  const handle = client.workflow.getHandle(watcherId);
  const deadline = Date.now() + timeoutMs;
  try {
    return await client.connection.withDeadline(deadline, async () => {
      // A query to an ended watcher would be answered from its history: the waits it held then, not now.
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING')
        return unavailable(`the watcher is not running (${status.name}); ${REGISTERS_AGAIN}`);
      const answer = WatchedWaitViewSchema.nullable().safeParse(await handle.query(watchedWaitQuery, workflowId));
      if (!answer.success)
        return unavailable(`the watcher's answer was not understood: ${z.prettifyError(answer.error)}`);
      if (answer.data === null)
        return unavailable(
          'the watcher holds no wait of this follow-up at the moment (just answered, or registering again)',
        );
      // The client's clock, not the workflow's: the next read is counted from now.
      return { watcherId, available: true, ...watchFiguresOf(answer.data, Date.now()) };
    });
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return unavailable(`no such watcher (it ended); ${REGISTERS_AGAIN}`);
    if (isGrpcDeadlineError(error) || (isGrpcCancelledError(error) && Date.now() >= deadline)) {
      return unavailable(
        `the watcher did not answer within ${timeoutMs / 1000}s (no worker of its task queue answered)`,
      );
    }
    return unavailable(`the watcher could not be asked: ${error instanceof Error ? error.message : String(error)}`);
  }
}
