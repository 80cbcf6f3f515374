/**
 * watchJobs: the reading half of a job watcher. One long attempt per watcher run: it waits on its watcher workflow's
 * `awaitChanges` Update, which answers only when the book changed (or the reader is to stop), then takes the changes
 * by query (nothing in history); it reads every due job with bounded concurrency, and signals a follow-up only when
 * its job answered, when its reads begin or stop failing, or when its wait cannot go on. A healthy wait costs its
 * follow-up nothing between those, and an unchanged book costs nothing at all. It reports its reads back to the
 * watcher (for `status`) only of the waits someone asks live figures of, each as soon as it is read. After a worker
 * dies, the heartbeat timeout moves the reading to another worker; the book is rebuilt from the workflow, and every job
 * whose read fell due since the last heartbeat of the attempt before is read at once.
 */
import type { WatchJobsRequest } from '../workflows/activity-contract';
import { setMaxListeners } from 'node:events';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, WorkflowUpdateStage, type Client } from '@temporalio/client';
import type { AgentApiClient } from '../agent-api/http-client';
import type { WatchAnswer } from '../workflows/follow-up/watch-answer';
import { reportOf, ReaderBook } from '../workflows/job-watcher/reader-book';
import { sleepUnlessAborted } from '../agent-api/abort-signals';
import type { StartWatching } from './start-watching';
import { createWaitReader } from './wait-reader';
import { ReaderWakeups } from './reader-wakeups';
import { jobAnswerSignal } from '../workflows/follow-up/messages';
import {
  awaitChangesUpdate,
  LIVE_FIGURES_FOR_MS,
  reportReadsUpdate,
  REPORTS_AT_ONCE,
  unwatchJobSignal,
  watchChangesQuery,
  type WatchRefusal,
} from '../workflows/job-watcher/messages';
/**
 * How often the book is brought up to date while no `awaitChanges` waits for its changes (a watcher of an earlier
 * build, or the Update refused or failing). Each refresh is a query, a workflow task on some worker: refreshing more
 * often made the queries a large share of the CPU per read (docs/BENCHMARKS.md).
 */
const BOOK_REFRESH_MS = 2_000;
/** How soon the Update is tried again after it was refused or failed; meanwhile the book is refreshed by the clock. */
const AWAIT_RETRY_MS = 30_000;
/**
 * Refreshes the Update asks for come at least this far apart: in a burst of registrations each exchange costs the
 * watcher a workflow task and two history events, and a first read 200 ms after the send still comes within a second.
 */
const CHANGES_APART_MS = 500;
/** Reads in flight at once, per watcher. */
const READS_AT_ONCE = 16;
/**
 * The loop's shortest turn: reads falling due within it go out together, at most this late. Waking for each read on
 * its own cost a heartbeat, a timer and a scan of the book every time (docs/BENCHMARKS.md), and a second late is
 * nothing on gaps of 5 to 60 s.
 */
const TURN_MS = 1_000;
/**
 * A wait not read yet is read at its first due point, not at the next turn: on a fast schedule the first read must
 * come within a second of the send, or a job done by then reads as unchanged. First reads due within this go together.
 */
const FIRST_READS_TOGETHER_MS = 200;
/**
 * How often the attempt hands a heartbeat to the SDK, whose core sends at most one per 0.8 of the timeout. Every
 * `heartbeat()` call is serialised first: one call per read was a quarter of the worker's main thread.
 */
const HEARTBEAT_EVERY_MS = 1_000;

/**
 * Room for the clocks of the watcher's workflow task (a refusal's time) and of this worker (when the book was asked
 * for): a refusal made this long before the last telling of the attempt before is told again, to be sure.
 */
const REFUSAL_CLOCK_MARGIN_MS = 2 * 60_000;

/**
 * What the reader heartbeats: figures for operators (the Web UI shows them as the pending activity's heartbeat
 * details), and until when its refusals were told (for the next attempt). The figures ride on the heartbeats recovery
 * needs anyway, so they cost nothing more; they are as fresh as the last heartbeat Core sent.
 */
interface ReaderProgress {
  watching: number;
  inFlight: number;
  /** Reads this attempt made, and how many of them failed. */
  reads: number;
  failedReads: number;
  /** When this attempt's last read ended, and when the next is due (ISO times; null: none yet, or none waiting). */
  lastReadAt: string | null;
  nextReadAt: string | null;
  /** Every refusal made before this time (this worker's clock) was told; null: none told yet. */
  refusalsToldBeforeMs: number | null;
  /** When it heartbeat (this worker's clock): the attempt after it knows since when no one read. */
  aliveAtMs: number;
}

interface RefusalToTell {
  refusal: WatchRefusal;
  /** Reads of the wait it replaced, not yet answered. */
  polls: number;
}

/** Until when the attempt before was reading, from its last heartbeat (null: there was none). */
function readingUntil(details: unknown): number | null {
  if (typeof details !== 'object' || details === null) return null;
  const alive = (details as Partial<ReaderProgress>).aliveAtMs;
  return typeof alive === 'number' && Number.isFinite(alive) ? alive : null;
}

/** Until when the attempt before told its refusals, from its last heartbeat (null: it told none, or there was none). */
function refusalsToldBefore(details: unknown): number | null {
  if (typeof details !== 'object' || details === null) return null;
  const told = (details as Partial<ReaderProgress>).refusalsToldBeforeMs;
  return typeof told === 'number' && Number.isFinite(told) ? told : null;
}

export function createWatchJobs(
  api: AgentApiClient,
  temporal: Client,
  stopping: AbortSignal,
  startWatching: StartWatching,
  wakeups = new ReaderWakeups(),
) {
  return async function watchJobs({ watcherId, reader }: WatchJobsRequest): Promise<void> {
    const context = Context.current();
    // Each read in flight listens for the attempt's cancellation.
    setMaxListeners(READS_AT_ONCE + 8, context.cancellationSignal);
    const watcher = temporal.workflow.getHandle(watcherId);
    const book = new ReaderBook();
    /** Waits read since the last refresh began: those someone asks figures of are reported after it. */
    let readSinceRefresh = new Set<string>();
    /**
     * The waits someone asks live figures of, as of the refresh that last listed them: each read of one is reported as
     * it ends, for as long as an ask lasts (a renewed ask changes the book's asks, so a refresh lists it again).
     */
    const asked = new Map<string, number>();
    const isAsked = (workflowId: string): boolean => (asked.get(workflowId) ?? -Infinity) > Date.now();
    /** Waits whose report is still to go to the watcher (the one in flight aside). */
    const reportDue = new Set<string>();
    let reporting = false;
    let inFlight = 0;
    /** The last look at the book found more due than room to read them. */
    let backlog = false;
    let refreshedAtMs = 0;
    /** The book's count of asks for figures at the last refresh; null: its watcher has no `awaitChanges` (older build). */
    let asksSeen: number | null = null;
    /** `awaitChanges` said the book changed: refresh, CHANGES_APART_MS after the last refresh at the soonest. */
    let changed = false;
    /** The watcher is stopping this reader (continue-as-new, a switch to timers, its end): finish the reads, return. */
    let stopAsked = false;
    /** The Update in flight, and whether the watcher took it (then nothing is refreshed by the clock). */
    let awaiting: Promise<void> | null = null;
    let awaitTaken = false;
    let awaitAgainAtMs = 0;
    const reads = new Set<Promise<void>>();
    const ownRun = temporal.workflow.getHandle(watcherId, context.info.workflowExecution?.runId);
    /** The book query under way: reads of the book as it is go on meanwhile. */
    let refreshing: Promise<void> | null = null;
    /** What ends the attempt from a refresh: the watcher gone, or a book that could not be taken in. */
    let endWith: unknown = null;
    /** A wait was registered from this worker since the last refresh began: look at the book at once. */
    let refreshAsked = false;
    /** Ends the loop's sleep early (a registration, or the refresh it asked for came back). */
    let sleeping = new AbortController();
    const stopListening = wakeups.listen(watcherId, () => {
      refreshAsked = true;
      sleeping.abort();
    });
    const aborted = () => context.cancellationSignal.aborted || stopping.aborted;
    // Refusals the attempt before told (its last heartbeat says until when): a new attempt gets the whole book, and
    // telling its refusals again would cost each of their follow-ups a history event for nothing.
    let refusalsToldBeforeMs = refusalsToldBefore(context.info.heartbeatDetails);
    // After a crash, the waits whose reads fell due since the attempt before last heartbeat are read at once (the most
    // overdue first), not at their next planned read a whole gap later. Only for the first book taken in.
    let unreadSinceMs = readingUntil(context.info.heartbeatDetails);
    const figures = { reads: 0, failedReads: 0, lastReadAtMs: null as number | null };
    const progress = (): ReaderProgress => ({
      watching: book.size,
      inFlight,
      reads: figures.reads,
      failedReads: figures.failedReads,
      lastReadAt: isoOrNull(figures.lastReadAtMs),
      // A scan of the book, once a heartbeat: the loop scans it at every turn anyway.
      nextReadAt: isoOrNull(book.nextDueAtMs()),
      refusalsToldBeforeMs,
      aliveAtMs: Date.now(),
    });
    // From a timer, not from the loop: on a worker so busy that the book query waits seconds for a workflow task, a
    // heartbeat behind that query timed the attempt out, and every retry did the same (docs/BENCHMARKS.md).
    const heartbeats = setInterval(() => context.heartbeat(progress()), HEARTBEAT_EVERY_MS);
    context.heartbeat(progress());

    /**
     * Tells the watcher of the reads of waits someone asks figures of, by Update (one at a time; a report that could
     * not go is tried again after the next read or refresh). The watcher refuses reports of waits it no longer holds.
     */
    const sendReports = (): void => {
      if (reporting || reportDue.size === 0) return;
      const ids = [...reportDue].slice(0, REPORTS_AT_ONCE);
      for (const workflowId of ids) reportDue.delete(workflowId);
      const reports = ids.flatMap((workflowId) => {
        const wait = book.get(workflowId);
        return wait ? [reportOf(wait)] : [];
      });
      if (reports.length === 0) return;
      reporting = true;
      watcher
        .executeUpdate(reportReadsUpdate, { args: [reports] })
        .catch((error: unknown) => {
          if (error instanceof WorkflowUpdateFailedError) return;
          for (const workflowId of ids) reportDue.add(workflowId);
          log.warn('Could not report reads to the watcher; trying again after the next read', {
            watcherId,
            error: String(error),
          });
        })
        .finally(() => {
          reporting = false;
          sendReports();
        });
    };

    /** Brings the book up to date by query; what was read meanwhile is weighed against the waits asked about then. */
    const refresh = (): Promise<void> => {
      const askedAtMs = Date.now();
      const read = readSinceRefresh;
      readSinceRefresh = new Set();
      return watcher.query(watchChangesQuery, book.version).then(
        (changes) => {
          const watched = new Set(
            (Array.isArray(changes.watched) ? changes.watched : []).filter((id) => typeof id === 'string'),
          );
          // A wait asked about since the last refresh is reported at once, read or not; the others once read again.
          for (const workflowId of watched) if (read.has(workflowId) || !isAsked(workflowId)) reportDue.add(workflowId);
          for (const workflowId of watched) asked.set(workflowId, askedAtMs + LIVE_FIGURES_FOR_MS);
          for (const workflowId of asked.keys()) if (!watched.has(workflowId)) asked.delete(workflowId);
          asksSeen = typeof changes.asks === 'number' ? changes.asks : null;
          const refused = (Array.isArray(changes.refused) ? changes.refused : []).filter(
            (refusal) =>
              refusalsToldBeforeMs === null || refusal.atMs >= refusalsToldBeforeMs - REFUSAL_CLOCK_MARGIN_MS,
          );
          // A refused wait replaces an earlier one, whose reads (not yet answered) the follow-up still counts.
          const refusals = refused.map((refusal) => ({ refusal, polls: unansweredReadsOf(refusal) }));
          try {
            book.apply(changes, Date.now(), unreadSinceMs);
            unreadSinceMs = null;
          } catch (error) {
            endWith = error;
          }
          sendReports();
          telling = telling
            .then(async () => {
              const untoldBefore = [...untold.values()];
              untold.clear();
              await tellRefused([...untoldBefore, ...refusals]);
              // Every refusal made before this query has been told (or waits in `untold`, which the heartbeat does not carry).
              if (untold.size === 0) refusalsToldBeforeMs = askedAtMs;
            })
            .catch((error: unknown) => log.warn('Could not tell refusals', { watcherId, error: String(error) }));
        },
        (error: unknown) => {
          if (error instanceof WorkflowNotFoundError) endWith = error;
          else
            log.warn('Could not bring the book up to date from the watcher; trying again at the next refresh', {
              watcherId,
              error: String(error),
            });
          for (const workflowId of read) readSinceRefresh.add(workflowId);
        },
      );
    };

    /** Refusals whose signal failed, by follow-up (its latest only): tried again after the next refresh. */
    const untold = new Map<string, RefusalToTell>();
    /** One telling at a time, in the order of the refreshes: `refusalsToldBeforeMs` only moves forward. */
    let telling: Promise<void> = Promise.resolve();
    const unansweredReadsOf = ({ workflowId, runId }: WatchRefusal): number => {
      const kept = book.get(workflowId);
      return kept && kept.registration.runId === runId && !kept.answered ? kept.polls : 0;
    };
    /**
     * Tells the follow-ups whose waits were refused (the book is full), so they move on to the next watcher of their
     * shard; a few at a time, beside the reads. A run that ended hears nothing; a signal that failed is tried again
     * after the next refresh.
     */
    const tellRefused = async (refusals: readonly RefusalToTell[]): Promise<void> => {
      for (let at = 0; at < refusals.length; at += READS_AT_ONCE) {
        await Promise.all(
          refusals.slice(at, at + READS_AT_ONCE).map(async (toTell) => {
            const { workflowId, runId, round, replyTo } = toTell.refusal;
            const refused: WatchAnswer = { round, replyTo, kind: 'refused', polls: toTell.polls };
            try {
              await temporal.workflow.getHandle(workflowId, runId).signal(jobAnswerSignal, refused);
            } catch (error) {
              if (error instanceof WorkflowNotFoundError) return;
              log.warn('Could not tell a follow-up its wait was refused; trying again at the next refresh', {
                workflowId,
                error: String(error),
              });
              const later = untold.get(workflowId);
              if (!later || later.refusal.round <= round) untold.set(workflowId, toTell);
            }
          }),
        );
      }
    };

    const read = createWaitReader(api, temporal, context, aborted, {
      // The watcher then forgets the wait (the follow-up registers its next wait, if any).
      answered: async ({ registration: { workflowId, runId, round, replyTo } }) => {
        await watcher.signal(unwatchJobSignal, { workflowId, runId, round, replyTo }).catch(() => undefined);
      },
      // The follow-up ended (or was terminated) without leaving: forget its wait, here and in the book.
      gone: async ({ registration: { workflowId, runId, replyTo } }) => {
        book.drop(workflowId, runId);
        await watcher.signal(unwatchJobSignal, { workflowId, runId, replyTo }).catch(() => undefined);
      },
    });

    /**
     * The watcher's run closed under this attempt without stopping it first (it stops its reader before it continues
     * as new or ends): terminated or reset by an operator, its book lost. This attempt holds the book, so it gives
     * every unanswered wait to a new watcher at once; otherwise their follow-ups would hear nothing until their silence
     * ran out (sixty poll gaps). A reset run takes them in again too; a wait it still holds is kept as it is.
     */
    const putBackWaits = async (): Promise<void> => {
      // The closed run still answers queries (its history replayed): a wait it took since the last refresh is in it.
      await temporal.workflow
        .getHandle(watcherId, context.info.workflowExecution?.runId)
        .query(watchChangesQuery, book.version)
        .then(
          (changes) => book.apply(changes, Date.now()),
          (error: unknown) =>
            log.warn('Could not read the last book of the ended watcher; registering the waits this reader knew', {
              watcherId,
              error: String(error),
            }),
        );
      const waits = book.unanswered();
      log.warn('The job watcher ended under its reader (terminated or reset): registering its waits with a new one', {
        watcherId,
        waits: waits.length,
      });
      const address = { watcherId, taskQueue: context.info.taskQueue };
      let failed = 0;
      for (let at = 0; at < waits.length; at += READS_AT_ONCE) {
        await Promise.all(
          waits
            .slice(at, at + READS_AT_ONCE)
            .map((registration) => startWatching(address, registration).catch(() => void (failed += 1))),
        );
      }
      // Their follow-ups register again by themselves after their silence: nothing is lost, only later.
      if (failed > 0)
        log.warn('Some waits could not be registered again; their follow-ups will after their silence', {
          watcherId,
          failed,
        });
    };
    /**
     * Waits on the watcher's `awaitChanges` with what the last refresh saw; its answer asks for a refresh (at least
     * CHANGES_APART_MS after the last) or stops the reader. Refused because the book moved on meanwhile: refresh.
     * Refused otherwise, or failed: the clock refreshes the book until it is tried again.
     */
    function awaitChanges(asks: number): Promise<void> {
      const look = { version: book.version, asks, attempt: context.info.attempt, ...(reader ? { reader } : {}) };
      const ended = AbortSignal.any([context.cancellationSignal, stopping]);
      return temporal
        .withAbortSignal(ended, async () => {
          const handle = await ownRun.startUpdate(awaitChangesUpdate, {
            args: [look],
            waitForStage: WorkflowUpdateStage.ACCEPTED,
          });
          awaitTaken = true;
          return handle.result();
        })
        .then((news) => {
          if (news.stop) stopAsked = true;
          else if (news.version !== book.version || news.asks !== asksSeen) changed = true;
        })
        .catch((error: unknown) => {
          if (error instanceof WorkflowUpdateFailedError && failureType(error.cause) === 'BookChanged') {
            changed = true;
            return;
          }
          // Only the watcher refuses so, and only while it stops its long reader: the look it did not take is as good
          // as a stop (the cancellation would come at the next heartbeat the SDK sends, up to 8 s later).
          if (error instanceof WorkflowUpdateFailedError && failureType(error.cause) === 'NotReadingLong') {
            stopAsked = true;
            return;
          }
          awaitAgainAtMs = Date.now() + AWAIT_RETRY_MS;
          if (!aborted())
            log.info("The watcher's awaitChanges was refused or failed: refreshing the book by the clock for now", {
              watcherId,
              error: String(error),
            });
        })
        .finally(() => {
          awaiting = null;
          awaitTaken = false;
          sleeping.abort();
        });
    }

    const watcherRunClosed = (): boolean =>
      endWith instanceof WorkflowNotFoundError ||
      (context.cancellationSignal.aborted && cancellationReason(context.cancellationSignal.reason) === 'NOT_FOUND');

    try {
      for (;;) {
        if (aborted()) {
          if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
          // The worker is stopping: end the attempt now, so the watcher's retry runs on another worker at once.
          throw ApplicationFailure.create({
            type: 'WorkerStopping',
            message:
              "This worker is stopping; the watcher's next attempt reads on whichever worker polls its task queue.",
          });
        }
        // The watcher no longer exists: there is no book to read for.
        if (endWith !== null) throw endWith;
        if (stopAsked) {
          // The next reader must not start while this one still reads (the watcher waits for this attempt to end).
          await Promise.all(reads);
          return;
        }
        const sinceRefreshMs = Date.now() - refreshedAtMs;
        const refreshDue =
          refreshAsked ||
          (changed && sinceRefreshMs >= CHANGES_APART_MS) ||
          (!awaitTaken && sinceRefreshMs >= BOOK_REFRESH_MS);
        if (refreshing === null && refreshDue) {
          const asked = refreshAsked || changed;
          refreshAsked = false;
          changed = false;
          refreshing = refresh().finally(() => {
            refreshedAtMs = Date.now();
            refreshing = null;
            // The new wait may be due before the next turn; a change meanwhile asks for another refresh.
            if (asked || refreshAsked || changed) sleeping.abort();
          });
        }
        if (
          awaiting === null &&
          refreshing === null &&
          asksSeen !== null &&
          !changed &&
          !refreshAsked &&
          Date.now() >= awaitAgainAtMs
        )
          awaiting = awaitChanges(asksSeen);
        readDue();
        const next = book.nextDueAtMs();
        const firstRead = book.nextDueAtMs(true);
        const sinceRefreshNowMs = Date.now() - refreshedAtMs;
        const clockRefreshInMs = awaitTaken ? Number.POSITIVE_INFINITY : BOOK_REFRESH_MS - sinceRefreshNowMs;
        const sleepMs = Math.min(
          Math.max(TURN_MS, Math.min(clockRefreshInMs, next === null ? BOOK_REFRESH_MS : next - Date.now())),
          // A refresh under way wakes the loop as it ends.
          changed && refreshing === null ? Math.max(0, CHANGES_APART_MS - sinceRefreshNowMs) : Number.POSITIVE_INFINITY,
          firstRead === null ? Number.POSITIVE_INFINITY : Math.max(FIRST_READS_TOGETHER_MS, firstRead - Date.now()),
        );
        sleeping = new AbortController();
        await sleepUnlessAborted(sleepMs, [context.cancellationSignal, stopping, sleeping.signal]);
      }
    } catch (error) {
      if (watcherRunClosed()) await putBackWaits();
      throw error;
    } finally {
      clearInterval(heartbeats);
      stopListening();
    }

    function readDue(): void {
      if (stopAsked) return;
      const room = READS_AT_ONCE - inFlight;
      const due = book.due(Date.now(), room);
      // More may be due than there is room for (after a recovery): each read that ends makes the next at once.
      if (room > 0) backlog = due.length === room;
      for (const wait of due) {
        wait.reading = true;
        inFlight += 1;
        const reading = read(wait).finally(() => {
          reads.delete(reading);
          wait.reading = false;
          inFlight -= 1;
          figures.reads += 1;
          if (wait.failingSinceMs !== null) figures.failedReads += 1;
          figures.lastReadAtMs = Date.now();
          const { workflowId } = wait.registration;
          readSinceRefresh.add(workflowId);
          if (isAsked(workflowId)) {
            reportDue.add(workflowId);
            sendReports();
          }
          if (backlog && !aborted() && !stopAsked) readDue();
        });
        reads.add(reading);
      }
    }
  };
}

function failureType(cause: unknown): string | undefined {
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** Why the attempt was cancelled: NOT_FOUND when its workflow run has closed (the SDK's CancelledFailure message). */
function cancellationReason(reason: unknown): string | undefined {
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : undefined;
}

function isoOrNull(atMs: number | null): string | null {
  return atMs === null ? null : new Date(atMs).toISOString();
}
