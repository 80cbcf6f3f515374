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
import {
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import type { AgentApiClient } from '../agent-api/http-client';
import type { WatchAnswer } from './watch-answer';
import { reportOf, ReaderBook, type WatchedWait } from './reader-book';
import { sleepUnlessAborted } from '../agent-api/abort-signals';
import type { StartWatching } from './start-watching.activity';
import { createWaitReader, type ReadWait } from './wait-reader.activity';
import { ReaderWakeups } from './reader-wakeups.activity';
import { jobReadsSignal } from '../workflows/follow-up/messages';
import {
  awaitChangesUpdate,
  LIVE_FIGURES_FOR_MS,
  reportReadsUpdate,
  REPORTS_AT_ONCE,
  unwatchJobSignal,
  watchChangesQuery,
  type WatchChanges,
  type WatchRefusal,
} from './messages';
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

export interface LongReaderDependencies {
  api: AgentApiClient;
  temporal: Client;
  /** Aborted when the worker begins to stop. */
  stopping: AbortSignal;
  startWatching: StartWatching;
  wakeups: ReaderWakeups;
}

export function createWatchJobs(
  api: AgentApiClient,
  temporal: Client,
  stopping: AbortSignal,
  startWatching: StartWatching,
  wakeups = new ReaderWakeups(),
) {
  const dependencies: LongReaderDependencies = { api, temporal, stopping, startWatching, wakeups };
  return async function watchJobs(request: WatchJobsRequest): Promise<void> {
    await new LongReader(dependencies, request, Context.current()).run();
  };
}

/** One attempt of a watcher's long reader: its book, its reads in flight, and what it has told and reported. */
class LongReader {
  private readonly watcherId: string;
  private readonly reader: WatchJobsRequest['reader'];
  private readonly watcher: WorkflowHandle;
  /** The watcher's run this attempt belongs to: its `awaitChanges` goes to this run only. */
  private readonly ownRun: WorkflowHandle;
  private readonly book = new ReaderBook();
  private readonly read: ReadWait;
  /** Waits read since the last refresh began: those someone asks figures of are reported after it. */
  private readSinceRefresh = new Set<string>();
  /**
   * The waits someone asks live figures of, as of the refresh that last listed them: each read of one is reported as
   * it ends, for as long as an ask lasts (a renewed ask changes the book's asks, so a refresh lists it again).
   */
  private readonly asked = new Map<string, number>();
  /** Waits whose report is still to go to the watcher (the one in flight aside). */
  private readonly reportDue = new Set<string>();
  private reporting = false;
  private inFlight = 0;
  /** The last look at the book found more due than room to read them. */
  private backlog = false;
  private refreshedAtMs = 0;
  /** The book's count of asks for figures at the last refresh; null: its watcher has no `awaitChanges` (older build). */
  private asksSeen: number | null = null;
  /** `awaitChanges` said the book changed: refresh, CHANGES_APART_MS after the last refresh at the soonest. */
  private changed = false;
  /** The watcher is stopping this reader (continue-as-new, a switch to timers, its end): finish the reads, return. */
  private stopAsked = false;
  /** The Update in flight, and whether the watcher took it (then nothing is refreshed by the clock). */
  private awaiting: Promise<void> | null = null;
  private awaitTaken = false;
  private awaitAgainAtMs = 0;
  private readonly reads = new Set<Promise<void>>();
  /** The book query under way: reads of the book as it is go on meanwhile. */
  private refreshing: Promise<void> | null = null;
  /** What ends the attempt from a refresh: the watcher gone, or a book that could not be taken in. */
  private endWith: unknown = null;
  /** A wait was registered from this worker since the last refresh began: look at the book at once. */
  private refreshAsked = false;
  /** Ends the loop's sleep early (a registration, or the refresh it asked for came back). */
  private sleeping = new AbortController();
  /**
   * Refusals the attempt before told (its last heartbeat says until when): a new attempt gets the whole book, and
   * telling its refusals again would cost each of their follow-ups a history event for nothing.
   */
  private refusalsToldBeforeMs: number | null;
  /**
   * After a crash, the waits whose reads fell due since the attempt before last heartbeat are read at once (the most
   * overdue first), not at their next planned read a whole gap later. Only for the first book taken in.
   */
  private unreadSinceMs: number | null;
  private readonly figures = { reads: 0, failedReads: 0, lastReadAtMs: null as number | null };
  /** Refusals whose signal failed, by follow-up (its latest only): tried again after the next refresh. */
  private readonly untold = new Map<string, RefusalToTell>();
  /** One telling at a time, in the order of the refreshes: `refusalsToldBeforeMs` only moves forward. */
  private telling: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: LongReaderDependencies,
    { watcherId, reader }: WatchJobsRequest,
    private readonly context: Context,
  ) {
    this.watcherId = watcherId;
    this.reader = reader;
    this.watcher = deps.temporal.workflow.getHandle(watcherId);
    this.ownRun = deps.temporal.workflow.getHandle(watcherId, context.info.workflowExecution?.runId);
    this.refusalsToldBeforeMs = refusalsToldBefore(context.info.heartbeatDetails);
    this.unreadSinceMs = readingUntil(context.info.heartbeatDetails);
    this.read = createWaitReader(deps.api, deps.temporal, context, () => this.aborted(), {
      // The watcher then forgets the wait (the follow-up registers its next wait, if any).
      answered: async ({ registration: { workflowId, runId, round, replyTo } }) => {
        await this.watcher.signal(unwatchJobSignal, { workflowId, runId, round, replyTo }).catch(() => undefined);
      },
      // The follow-up ended (or was terminated) without leaving: forget its wait, here and in the book.
      gone: async ({ registration: { workflowId, runId, replyTo } }) => {
        this.book.drop(workflowId, runId);
        await this.watcher.signal(unwatchJobSignal, { workflowId, runId, replyTo }).catch(() => undefined);
      },
    });
  }

  async run(): Promise<void> {
    // Each read in flight listens for the attempt's cancellation.
    setMaxListeners(READS_AT_ONCE + 8, this.context.cancellationSignal);
    const stopListening = this.deps.wakeups.listen(this.watcherId, () => {
      this.refreshAsked = true;
      this.sleeping.abort();
    });
    // From a timer, not from the loop: on a worker so busy that the book query waits seconds for a workflow task, a
    // heartbeat behind that query timed the attempt out, and every retry did the same (docs/BENCHMARKS.md).
    const heartbeats = setInterval(() => this.context.heartbeat(this.progress()), HEARTBEAT_EVERY_MS);
    this.context.heartbeat(this.progress());
    try {
      while (!(await this.turn()));
    } catch (error) {
      if (this.watcherRunClosed()) await this.putBackWaits();
      throw error;
    } finally {
      clearInterval(heartbeats);
      stopListening();
    }
  }

  /** One turn of the loop: refresh the book if due, read what is due, sleep until the next thing; true: done. */
  private async turn(): Promise<boolean> {
    if (this.aborted()) {
      if (this.context.cancellationSignal.aborted) throw this.context.cancellationSignal.reason;
      // The worker is stopping: end the attempt now, so the watcher's retry runs on another worker at once.
      throw ApplicationFailure.create({
        type: 'WorkerStopping',
        message: "This worker is stopping; the watcher's next attempt reads on whichever worker polls its task queue.",
      });
    }
    // The watcher no longer exists: there is no book to read for.
    if (this.endWith !== null) throw this.endWith;
    if (this.stopAsked) {
      // The next reader must not start while this one still reads (the watcher waits for this attempt to end).
      await Promise.all(this.reads);
      return true;
    }
    this.refreshIfDue();
    if (
      this.awaiting === null &&
      this.refreshing === null &&
      this.asksSeen !== null &&
      !this.changed &&
      !this.refreshAsked &&
      Date.now() >= this.awaitAgainAtMs
    )
      this.awaiting = this.awaitChanges(this.asksSeen);
    this.readDue();
    this.sleeping = new AbortController();
    await sleepUnlessAborted(this.sleepMs(), [
      this.context.cancellationSignal,
      this.deps.stopping,
      this.sleeping.signal,
    ]);
    return false;
  }

  private refreshIfDue(): void {
    const sinceRefreshMs = Date.now() - this.refreshedAtMs;
    const refreshDue =
      this.refreshAsked ||
      (this.changed && sinceRefreshMs >= CHANGES_APART_MS) ||
      (!this.awaitTaken && sinceRefreshMs >= BOOK_REFRESH_MS);
    if (this.refreshing !== null || !refreshDue) return;
    const asked = this.refreshAsked || this.changed;
    this.refreshAsked = false;
    this.changed = false;
    this.refreshing = this.refresh().finally(() => {
      this.refreshedAtMs = Date.now();
      this.refreshing = null;
      // The new wait may be due before the next turn; a change meanwhile asks for another refresh.
      if (asked || this.refreshAsked || this.changed) this.sleeping.abort();
    });
  }

  /** Until the next read due, the next refresh by the clock, or the next first read, whichever comes first. */
  private sleepMs(): number {
    const next = this.book.nextDueAtMs();
    const firstRead = this.book.nextDueAtMs(true);
    const sinceRefreshNowMs = Date.now() - this.refreshedAtMs;
    const clockRefreshInMs = this.awaitTaken ? Number.POSITIVE_INFINITY : BOOK_REFRESH_MS - sinceRefreshNowMs;
    return Math.min(
      Math.max(TURN_MS, Math.min(clockRefreshInMs, next === null ? BOOK_REFRESH_MS : next - Date.now())),
      // A refresh under way wakes the loop as it ends.
      this.changed && this.refreshing === null
        ? Math.max(0, CHANGES_APART_MS - sinceRefreshNowMs)
        : Number.POSITIVE_INFINITY,
      firstRead === null ? Number.POSITIVE_INFINITY : Math.max(FIRST_READS_TOGETHER_MS, firstRead - Date.now()),
    );
  }

  private aborted(): boolean {
    return this.context.cancellationSignal.aborted || this.deps.stopping.aborted;
  }

  private isAsked(workflowId: string): boolean {
    return (this.asked.get(workflowId) ?? -Infinity) > Date.now();
  }

  private progress(): ReaderProgress {
    return {
      watching: this.book.size,
      inFlight: this.inFlight,
      reads: this.figures.reads,
      failedReads: this.figures.failedReads,
      lastReadAt: isoOrNull(this.figures.lastReadAtMs),
      // A scan of the book, once a heartbeat: the loop scans it at every turn anyway.
      nextReadAt: isoOrNull(this.book.nextDueAtMs()),
      refusalsToldBeforeMs: this.refusalsToldBeforeMs,
      aliveAtMs: Date.now(),
    };
  }

  /**
   * Tells the watcher of the reads of waits someone asks figures of, by Update (one at a time; a report that could
   * not go is tried again after the next read or refresh). The watcher refuses reports of waits it no longer holds.
   */
  private sendReports(): void {
    if (this.reporting || this.reportDue.size === 0) return;
    const ids = [...this.reportDue].slice(0, REPORTS_AT_ONCE);
    for (const workflowId of ids) this.reportDue.delete(workflowId);
    const reports = ids.flatMap((workflowId) => {
      const wait = this.book.get(workflowId);
      return wait ? [reportOf(wait)] : [];
    });
    if (reports.length === 0) return;
    this.reporting = true;
    this.watcher
      .executeUpdate(reportReadsUpdate, { args: [reports] })
      .catch((error: unknown) => {
        if (error instanceof WorkflowUpdateFailedError) return;
        for (const workflowId of ids) this.reportDue.add(workflowId);
        log.warn('Could not report reads to the watcher; trying again after the next read', {
          watcherId: this.watcherId,
          error: String(error),
        });
      })
      .finally(() => {
        this.reporting = false;
        this.sendReports();
      });
  }

  /** Brings the book up to date by query; what was read meanwhile is weighed against the waits asked about then. */
  private refresh(): Promise<void> {
    const askedAtMs = Date.now();
    const read = this.readSinceRefresh;
    this.readSinceRefresh = new Set();
    return this.watcher.query(watchChangesQuery, this.book.version).then(
      (changes) => this.takeChanges(changes, read, askedAtMs),
      (error: unknown) => {
        if (error instanceof WorkflowNotFoundError) this.endWith = error;
        else
          log.warn('Could not bring the book up to date from the watcher; trying again at the next refresh', {
            watcherId: this.watcherId,
            error: String(error),
          });
        for (const workflowId of read) this.readSinceRefresh.add(workflowId);
      },
    );
  }

  private takeChanges(changes: WatchChanges, read: ReadonlySet<string>, askedAtMs: number): void {
    const watched = new Set(
      (Array.isArray(changes.watched) ? changes.watched : []).filter((id) => typeof id === 'string'),
    );
    // A wait asked about since the last refresh is reported at once, read or not; the others once read again.
    for (const workflowId of watched)
      if (read.has(workflowId) || !this.isAsked(workflowId)) this.reportDue.add(workflowId);
    for (const workflowId of watched) this.asked.set(workflowId, askedAtMs + LIVE_FIGURES_FOR_MS);
    for (const workflowId of this.asked.keys()) if (!watched.has(workflowId)) this.asked.delete(workflowId);
    this.asksSeen = typeof changes.asks === 'number' ? changes.asks : null;
    const toldBefore = this.refusalsToldBeforeMs;
    const refused = (Array.isArray(changes.refused) ? changes.refused : []).filter(
      (refusal) => toldBefore === null || refusal.atMs >= toldBefore - REFUSAL_CLOCK_MARGIN_MS,
    );
    // A refused wait replaces an earlier one, whose reads (not yet answered) the follow-up still counts.
    const refusals = refused.map((refusal) => ({ refusal, polls: this.unansweredReadsOf(refusal) }));
    try {
      this.book.apply(changes, Date.now(), this.unreadSinceMs);
      this.unreadSinceMs = null;
    } catch (error) {
      this.endWith = error;
    }
    this.sendReports();
    this.telling = this.telling
      .then(async () => {
        const untoldBefore = [...this.untold.values()];
        this.untold.clear();
        await this.tellRefused([...untoldBefore, ...refusals]);
        // Every refusal made before this query has been told (or waits in `untold`, which the heartbeat does not carry).
        if (this.untold.size === 0) this.refusalsToldBeforeMs = askedAtMs;
      })
      .catch((error: unknown) =>
        log.warn('Could not tell refusals', { watcherId: this.watcherId, error: String(error) }),
      );
  }

  private unansweredReadsOf({ workflowId, runId }: WatchRefusal): number {
    const kept = this.book.get(workflowId);
    return kept && kept.registration.runId === runId && !kept.answered ? kept.polls : 0;
  }

  /**
   * Tells the follow-ups whose waits were refused (the book is full), so they move on to the next watcher of their
   * shard; a few at a time, beside the reads. A run that ended hears nothing; a signal that failed is tried again
   * after the next refresh.
   */
  private async tellRefused(refusals: readonly RefusalToTell[]): Promise<void> {
    for (let at = 0; at < refusals.length; at += READS_AT_ONCE) {
      await Promise.all(
        refusals.slice(at, at + READS_AT_ONCE).map(async (toTell) => {
          const { workflowId, runId, round, replyTo } = toTell.refusal;
          const refused: WatchAnswer = { round, replyTo, kind: 'refused', polls: toTell.polls };
          try {
            await this.deps.temporal.workflow.getHandle(workflowId, runId).signal(jobReadsSignal, { answer: refused });
          } catch (error) {
            if (error instanceof WorkflowNotFoundError) return;
            log.warn('Could not tell a follow-up its wait was refused; trying again at the next refresh', {
              workflowId,
              error: String(error),
            });
            const later = this.untold.get(workflowId);
            if (!later || later.refusal.round <= round) this.untold.set(workflowId, toTell);
          }
        }),
      );
    }
  }

  /**
   * The watcher's run closed under this attempt without stopping it first (it stops its reader before it continues
   * as new or ends): terminated or reset by an operator, its book lost. This attempt holds the book, so it gives
   * every unanswered wait to a new watcher at once; otherwise their follow-ups would hear nothing until their silence
   * ran out (sixty poll gaps). A reset run takes them in again too; a wait it still holds is kept as it is.
   */
  private async putBackWaits(): Promise<void> {
    const { watcherId } = this;
    // The closed run still answers queries (its history replayed): a wait it took since the last refresh is in it.
    await this.ownRun.query(watchChangesQuery, this.book.version).then(
      (changes) => this.book.apply(changes, Date.now()),
      (error: unknown) =>
        log.warn('Could not read the last book of the ended watcher; registering the waits this reader knew', {
          watcherId,
          error: String(error),
        }),
    );
    const waits = this.book.unanswered();
    log.warn('The job watcher ended under its reader (terminated or reset): registering its waits with a new one', {
      watcherId,
      waits: waits.length,
    });
    const address = { watcherId, taskQueue: this.context.info.taskQueue };
    let failed = 0;
    for (let at = 0; at < waits.length; at += READS_AT_ONCE) {
      await Promise.all(
        waits
          .slice(at, at + READS_AT_ONCE)
          .map((registration) => this.deps.startWatching(address, registration).catch(() => void (failed += 1))),
      );
    }
    // Their follow-ups register again by themselves after their silence: nothing is lost, only later.
    if (failed > 0)
      log.warn('Some waits could not be registered again; their follow-ups will after their silence', {
        watcherId,
        failed,
      });
  }

  /**
   * Waits on the watcher's `awaitChanges` with what the last refresh saw; its answer asks for a refresh (at least
   * CHANGES_APART_MS after the last) or stops the reader. Refused because the book moved on meanwhile: refresh.
   * Refused otherwise, or failed: the clock refreshes the book until it is tried again.
   */
  private awaitChanges(asks: number): Promise<void> {
    const look = {
      version: this.book.version,
      asks,
      attempt: this.context.info.attempt,
      ...(this.reader ? { reader: this.reader } : {}),
    };
    const ended = AbortSignal.any([this.context.cancellationSignal, this.deps.stopping]);
    return this.deps.temporal
      .withAbortSignal(ended, async () => {
        const handle = await this.ownRun.startUpdate(awaitChangesUpdate, {
          args: [look],
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        });
        this.awaitTaken = true;
        return handle.result();
      })
      .then((news) => {
        if (news.stop) this.stopAsked = true;
        else if (news.version !== this.book.version || news.asks !== this.asksSeen) this.changed = true;
      })
      .catch((error: unknown) => this.awaitRefused(error))
      .finally(() => {
        this.awaiting = null;
        this.awaitTaken = false;
        this.sleeping.abort();
      });
  }

  private awaitRefused(error: unknown): void {
    if (error instanceof WorkflowUpdateFailedError && failureType(error.cause) === 'BookChanged') {
      this.changed = true;
      return;
    }
    // Only the watcher refuses so, and only while it stops its long reader: the look it did not take is as good
    // as a stop (the cancellation would come at the next heartbeat the SDK sends, up to 8 s later).
    if (error instanceof WorkflowUpdateFailedError && failureType(error.cause) === 'NotReadingLong') {
      this.stopAsked = true;
      return;
    }
    this.awaitAgainAtMs = Date.now() + AWAIT_RETRY_MS;
    if (!this.aborted())
      log.info("The watcher's awaitChanges was refused or failed: refreshing the book by the clock for now", {
        watcherId: this.watcherId,
        error: String(error),
      });
  }

  private watcherRunClosed(): boolean {
    const { cancellationSignal } = this.context;
    return (
      this.endWith instanceof WorkflowNotFoundError ||
      (cancellationSignal.aborted && cancellationReason(cancellationSignal.reason) === 'NOT_FOUND')
    );
  }

  private readDue(): void {
    if (this.stopAsked) return;
    const room = READS_AT_ONCE - this.inFlight;
    const due = this.book.due(Date.now(), room);
    // More may be due than there is room for (after a recovery): each read that ends makes the next at once.
    if (room > 0) this.backlog = due.length === room;
    for (const wait of due) {
      wait.reading = true;
      this.inFlight += 1;
      const reading = this.read(wait).finally(() => {
        this.reads.delete(reading);
        wait.reading = false;
        this.readEnded(wait);
      });
      this.reads.add(reading);
    }
  }

  private readEnded(wait: WatchedWait): void {
    this.inFlight -= 1;
    this.figures.reads += 1;
    if (wait.failingSinceMs !== null) this.figures.failedReads += 1;
    this.figures.lastReadAtMs = Date.now();
    const { workflowId } = wait.registration;
    this.readSinceRefresh.add(workflowId);
    if (this.isAsked(workflowId)) {
      this.reportDue.add(workflowId);
      this.sendReports();
    }
    if (this.backlog && !this.aborted() && !this.stopAsked) this.readDue();
  }
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
