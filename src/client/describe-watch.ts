/**
 * A follow-up's shared job watcher, asked for that follow-up's live figures (`status` in shared mode). The figures
 * are read by query (nothing goes into history); a long reader reports reads to its watcher only of the waits someone
 * asks about, so the first ask, and one every LIVE_FIGURES_RENEW_WITHIN_MS while someone keeps asking, is an Update
 * (`watchFigures`) that answers once the reader has reported. A watcher that is gone, stuck or from another build
 * never fails the status: the figures are then unavailable, with the reason. Client-side only.
 */
import {
  isGrpcCancelledError,
  isGrpcDeadlineError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { z } from 'zod';
import { watchFiguresOf, type SharedWatchStatus } from '../workflows/job-watcher/watch-figures';
import { LIVE_FIGURES_RENEW_WITHIN_MS, watchedWaitQuery, watchFiguresUpdate } from '../workflows/job-watcher/messages';

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
  figuresAskedUntilMs: z.number().nullable(),
  everyReadNoted: z.boolean().optional(),
});
type View = z.infer<typeof WatchedWaitViewSchema>;

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
      const view = figuresAskedSoon(answer.data)
        ? answer.data
        : ((await askFigures(handle, workflowId)) ?? answer.data);
      // The client's clock, not the workflow's: the next read is counted from now.
      return { watcherId, available: true, ...watchFiguresOf(view, Date.now()) };
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

/** Whether the watcher has this wait's reads noted for a while yet without an ask: by its timers, or asked lately. */
function figuresAskedSoon(view: View): boolean {
  if (view.everyReadNoted === true) return true;
  return view.figuresAskedUntilMs !== null && view.figuresAskedUntilMs - Date.now() > LIVE_FIGURES_RENEW_WITHIN_MS;
}

/**
 * Asks the watcher to have its reader report this wait's reads for a while, and answers with the view once it has.
 * Null, and the query's view stands: the ask was refused (one made meanwhile by someone else), ran past the status's
 * deadline while the reader had not reported yet, failed, or its answer was not understood.
 */
async function askFigures(handle: WorkflowHandle, workflowId: string): Promise<View | null> {
  try {
    const answer = WatchedWaitViewSchema.nullable().safeParse(
      await handle.executeUpdate(watchFiguresUpdate, { args: [workflowId] }),
    );
    return answer.success ? answer.data : null;
  } catch {
    return null;
  }
}
