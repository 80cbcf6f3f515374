/**
 * A follow-up's shared job watcher, asked for that follow-up's live figures (`status` in shared mode). The figures
 * are read by query (nothing goes into history); a long reader reports reads to its watcher only of the waits someone
 * asks about, so the first ask, and one every LIVE_FIGURES_RENEW_WITHIN_MS while someone keeps asking, is an Update
 * (`watchFigures`) that answers once the reader has reported. A watcher that is gone, stuck or from another build
 * never fails the status: the figures are then unavailable, with the reason. Client-side only.
 */
import { setTimeout } from 'node:timers/promises';
import {
  ApplicationFailure,
  isGrpcCancelledError,
  isGrpcDeadlineError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import { z } from 'zod';
import { nextReadAtMs, watchFiguresOf, type SharedWatchStatus } from './watch-figures';
import { LIVE_FIGURES_RENEW_WITHIN_MS, WATCHER_CONTINUING, watchedWaitQuery, watchFiguresUpdate } from './messages';

const WatchedWaitViewSchema = z.object({
  registration: z.looseObject({
    round: z.number(),
    readAtOnce: z.boolean(),
    readBefore: z.object({ atMs: z.number(), status: z.string() }).optional(),
    // What the wait knew of the job and when its settle window ends: the first read may come at the window's end.
    known: z
      .object({ status: z.string(), prLink: z.string().nullable(), archivedAt: z.string().nullable() })
      .nullable(),
    acceptUnchangedFromMs: z.number().nullable(),
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

/** How long before asking a watcher that continues as new again: its wind-down takes a workflow task or two. */
const ASK_AGAIN_AFTER_MS = 250;
/** Left of the status's deadline for its last query to the watcher. */
const LAST_QUERY_MS = 1_000;

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
      const asked = figuresAskedSoon(answer.data)
        ? answer.data
        : ((await askFigures(handle, workflowId)) ?? answer.data);
      const view = reportAwaited(asked, deadline) ? await firstReport(handle, workflowId, asked, deadline) : asked;
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
 * A watcher continuing as new refuses the ask (writing nothing): asked again until the status's deadline, its next
 * run answers. Null, and the query's view stands: the ask was refused otherwise (one made meanwhile by someone else),
 * ran past the deadline while the reader had not reported yet, failed, or its answer was not understood.
 */
async function askFigures(handle: WorkflowHandle, workflowId: string): Promise<View | null> {
  for (;;) {
    try {
      const answer = WatchedWaitViewSchema.nullable().safeParse(
        await handle.executeUpdate(watchFiguresUpdate, { args: [workflowId] }),
      );
      return answer.success ? answer.data : null;
    } catch (error) {
      if (!(error instanceof WorkflowUpdateFailedError && failureType(error.cause) === WATCHER_CONTINUING)) return null;
      // Past the deadline the next ask fails at once (the connection's deadline), and the query's view stands.
      await setTimeout(ASK_AGAIN_AFTER_MS);
    }
  }
}

/**
 * Whether the wait is asked about and its reader has not reported a read of it yet, while one is due before the
 * status's last query: an ask the watcher took as its run wound down (its reader was stopping; the next run's reader
 * reports the ask it carried, before its first read of the wait), or a reader slower than the watcher waits.
 */
function reportAwaited(view: View, deadline: number): boolean {
  if (view.everyReadNoted === true || view.figuresAskedUntilMs === null) return false;
  const { report } = view;
  if (report !== null && report.round === view.registration.round && (report.reads > 0 || report.failedReads > 0))
    return false;
  const next = nextReadAtMs(view, Date.now());
  return report === null || report.round !== view.registration.round || (next !== null && next < lastQueryAt(deadline));
}

/** When the status's last query to the watcher goes, to be answered by its deadline. */
function lastQueryAt(deadline: number): number {
  return deadline - LAST_QUERY_MS;
}

/**
 * The wait's view once its reader has reported a read of it, read by query (nothing goes into history) until the
 * status's last query; the last view read, if it has not by then.
 */
async function firstReport(handle: WorkflowHandle, workflowId: string, view: View, deadline: number): Promise<View> {
  let last = view;
  while (reportAwaited(last, deadline) && Date.now() + ASK_AGAIN_AFTER_MS < lastQueryAt(deadline)) {
    await setTimeout(ASK_AGAIN_AFTER_MS);
    const answer = WatchedWaitViewSchema.nullable().safeParse(await handle.query(watchedWaitQuery, workflowId));
    if (!answer.success || answer.data === null) return last;
    last = answer.data;
  }
  return last;
}

function failureType(cause: unknown): string | undefined {
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}
