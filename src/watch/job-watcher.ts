/**
 * jobWatcherWorkflow: reads the jobs of many waiting follow-ups for them (one watcher per shard of a task queue's
 * jobs). Follow-ups register a wait by signal and hear back only when their job answered, or when reads of it begin
 * or stop failing. While the book is small, this workflow's own timers wake short turns of reads (timed-reads.ts):
 * nothing runs between reads. Once it is large, one long activity (watchJobs) reads it: it waits on an Update
 * (`awaitChanges`) that this workflow answers when the book changes, then takes the changes by query, so the book never
 * passes through history and an idle reader asks nothing; it reports its reads back (for `status`) only of waits
 * someone asks live figures of (`watchFigures`), by Update. It continues as new before its signals or
 * history grow large, and ends when no wait is left for a while. Its book goes into the next run's input, which the
 * server limits to 2 MB: a wait that would pass WATCH_BOOK_LIMIT_BYTES is refused (the long reader tells its
 * follow-up, which moves on to the next watcher of its shard, `…/<shard>/1`, and so on).
 */
import {
  ActivityCancellationType,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { WATCH_BOOK_LIMIT_BYTES, WatcherBook } from './watcher-book';
import { checkBookLook, checkRegistration, checkReports, checkUnwatch } from './watch-messages';
import { renderWatcherDetails } from './watcher-details';
import { watchFiguresOf } from './watch-figures';
import { TimedReads } from './timed-reads';
import {
  awaitChangesUpdate,
  LIVE_FIGURES_FOR_MS,
  LIVE_FIGURES_RENEW_WITHIN_MS,
  reportReadsUpdate,
  REPORTS_AT_ONCE,
  unwatchJobSignal,
  watchChangesQuery,
  watchedWaitQuery,
  WATCHER_CONTINUING,
  watchFiguresUpdate,
  watchJobBatchSignal,
  REGISTRATIONS_PER_SIGNAL,
  type BookLook,
  type WatcherStart,
} from './messages';
import { isId } from '../kernel/message-checks';
import { NotedGrowth } from '../workflows/noted-growth';
import { servedTaskQueue } from '../kernel/workflow-ids';
import { type FollowUpActivities } from '../workflows/activity-contract';

/**
 * A run continues as new after this many signals or events, so that replaying it stays short. A watcher that takes
 * signals all the time is evicted at its continue-as-new (the server refuses the completion while a signal that came
 * meanwhile is unhandled) and replays its whole run before its next task: a long run can outgrow the workflow task
 * timeout on a busy worker, every retry with it, and its reading stays cancelled (docs/BENCHMARKS.md).
 */
const SIGNALS_PER_RUN = 1_000;
const EVENTS_PER_RUN = 2_000;
/**
 * From this many waits a long activity reads the book (watchJobs); below it, this workflow's own timers wake short
 * turns of reads (TimedReads). A turn's input carries the waits it reads, about 600 bytes each: past a few hundred a
 * turn's history outweighs the long reader's heartbeats (docs/BENCHMARKS.md).
 */
const LONG_READER_FROM = 200;
/** How long a watcher with nothing to watch stays, so a burst of follow-ups does not start it over and over. */
const IDLE_FOR_MS = 10 * 60_000;
/**
 * How long an ask for live figures waits for the long reader's report: the ask ends the reader's `awaitChanges`, and it
 * reports an asked-for wait at once. Past this the ask answers with what the watcher has.
 */
const REPORT_AWAITED_MS = 4_000;
/**
 * The long reader's heartbeat timeout; also how old a waiting look must be before a later attempt's look may end it:
 * rising attempts (a forger's) end one look per timeout at most, and a true successor that comes sooner (its
 * predecessor died just after it took its look) refreshes by the clock until it tries again.
 */
const READER_HEARTBEAT_TIMEOUT_MS = 10_000;

const { watchJobs } = proxyActivities<FollowUpActivities>({
  // One attempt runs for as long as the watcher. A worker that dies is noticed within the heartbeat timeout and the
  // reading moves to another worker (the retry starts after 1 s): each heartbeat the server records is billed, and
  // the SDK sends one per 0.8 of the timeout, so the timeout is as long as recovery allows (docs/BENCHMARKS.md).
  startToCloseTimeout: '7 days',
  heartbeatTimeout: READER_HEARTBEAT_TIMEOUT_MS,
  retry: { initialInterval: '1s', backoffCoefficient: 1.5, maximumInterval: '5s' },
  // The attempt hears of a stop from its `awaitChanges` at once, of a cancellation only at its next heartbeat: until
  // it has stopped it still reads, so the next run's attempt must not start before, or the two read the same jobs.
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  // Eager dispatch would hand the reading to the worker that ran this workflow's task, and a watcher's tasks stay on
  // the worker that has it cached: every watcher started in one burst would then read on one worker. Through the
  // task queue, each attempt goes to whichever worker polls for it, so the reading spreads over all of them.
  allowEagerDispatch: false,
  summary: 'read the watched jobs on their schedules, and tell their follow-ups when they answer',
});

/** A way of reading the book, stopped before the run continues as new or switches to the other. */
interface Reading {
  long: boolean;
  /** The reading by timers, whose last turn the details show. */
  timed?: TimedReads;
  /** Stops it, and says when it stopped. */
  stop(): Promise<number>;
}

function readLong(name: string): Reading {
  const scope = new CancellationScope();
  const reader = scope
    .run(() => watchJobs({ watcherId: workflowInfo().workflowId, reader: name }))
    .catch((error: unknown) => {
      if (!isCancellation(error)) log.warn('The watch activity ended', { error: String(error) });
    });
  return {
    long: true,
    stop: async () => {
      const stoppedAtMs = Date.now();
      scope.cancel();
      await reader;
      return stoppedAtMs;
    },
  };
}

function readByTimers(book: WatcherBook, onTurn: () => void): Reading {
  const reads = new TimedReads(book, onTurn);
  const running = reads.run();
  return {
    long: false,
    timed: reads,
    stop: async () => {
      reads.stop();
      await running;
      return Date.now();
    },
  };
}

const { adoptBook } = proxyActivities<FollowUpActivities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3 },
  summary: 'take over the waits of the run before this one, if it was terminated',
});

export async function jobWatcherWorkflow(start: WatcherStart = {}): Promise<void> {
  const watcher = new JobWatcher(start);
  setHandler(watchJobBatchSignal, (messages) => watcher.onRegistrations(messages));
  setHandler(unwatchJobSignal, (message) => watcher.onUnwatch(message));
  // Queries only read: the reader's reports come by `reportReads`, an ask for figures by `watchFigures`.
  setHandler(watchChangesQuery, (version) => watcher.changesSince(version));
  setHandler(watchedWaitQuery, (workflowId) => watcher.waitView(workflowId));
  setHandler(awaitChangesUpdate, (look) => watcher.awaitChanges(look), {
    validator: (look) => watcher.checkLook(look),
  });
  setHandler(watchFiguresUpdate, (workflowId) => watcher.askFigures(workflowId), {
    validator: (workflowId) => watcher.checkFiguresAsk(workflowId),
  });
  setHandler(reportReadsUpdate, (reports) => watcher.noteReports(reports), {
    validator: (reports) => watcher.checkReports(reports),
  });
  await watcher.run();
}

/**
 * A watcher's run: its book, how it reads it (by its timers or by the long reader), and the state of the long
 * reader's looks and of the asks for live figures. The handlers above go one line each into it; `run` is the loop.
 */
class JobWatcher {
  private readonly limitBytes: number;
  private readonly longReaderFrom: number;
  private readonly book: WatcherBook;
  private signals = 0;
  private refused = 0;
  /** Set with the reading below: the long reader reports reads only of waits asked about. */
  private readingLong = false;
  /** Asks for live figures taken this run: an ask ends the long reader's `awaitChanges`. */
  private asks = 0;
  /** The long reader is being stopped: its `awaitChanges` answers so, and it ends without waiting for a heartbeat. */
  private readerStopping = false;
  /** This run winds down to continue as new: an ask for figures is refused (WATCHER_CONTINUING) for the next run. */
  private continuing = false;
  /** The latest attempt of the long reader that waits on `awaitChanges`: an earlier attempt's wait (it died) ends. */
  private readerAttempt = 0;
  /** The name drawn for the long reader now running: a look without it is not its own. */
  private readerName = '';
  private looksWaiting = 0;
  /** When the waiting look was taken: only a look taken a heartbeat timeout before may be ended by a later attempt's. */
  private lookTakenAtMs = 0;
  private readonly growth = new NotedGrowth();
  /** The reading now running; null until `run` starts it (a handler may run before). */
  private reading: Reading | null = null;

  constructor(private readonly start: WatcherStart) {
    this.limitBytes =
      typeof start.bookLimitBytes === 'number' && start.bookLimitBytes > 0
        ? start.bookLimitBytes
        : WATCH_BOOK_LIMIT_BYTES;
    this.longReaderFrom =
      typeof start.longReaderFrom === 'number' && start.longReaderFrom >= 0 ? start.longReaderFrom : LONG_READER_FROM;
    this.book = new WatcherBook(start, Date.now(), this.limitBytes);
  }

  /** Read in conditions, so only from what the history holds (noted-growth.ts). */
  private shouldContinue(): boolean {
    return this.growth.reached(EVENTS_PER_RUN) || this.signals >= SIGNALS_PER_RUN;
  }

  /** The registrations one worker made within a few milliseconds, in one signal (start-watching.activity.ts). */
  onRegistrations(messages: unknown): void {
    this.noteSignal();
    if (!Array.isArray(messages) || messages.length === 0 || messages.length > REGISTRATIONS_PER_SIGNAL)
      return void log.warn('Ignored a malformed watchJobBatch signal');
    for (const message of messages) this.register(message);
  }

  onUnwatch(message: unknown): void {
    this.noteSignal();
    const unwatch = checkUnwatch(message);
    if (!unwatch) return void log.warn('Ignored a malformed unwatchJob signal');
    this.book.remove(unwatch.workflowId, unwatch.runId, unwatch.round, unwatch.replyTo);
  }

  private noteSignal(): void {
    this.signals += 1;
    this.growth.note();
  }

  private register(message: unknown): void {
    const registration = checkRegistration(message);
    if (!registration) return void log.warn('Ignored a malformed registration in a watchJobBatch signal');
    if (this.book.admit(registration, Date.now())) return;
    this.refused += 1;
    // Once a run: a full watcher refuses every new wait, and its details keep the count.
    if (this.refused === 1) {
      log.warn('The book is full: waits are refused, and their follow-ups move on to the next watcher of the shard', {
        waits: this.book.size,
        bookBytes: this.book.bookBytes,
        limitBytes: this.limitBytes,
      });
    }
  }

  changesSince(version: unknown) {
    return { ...this.book.changesSince(typeof version === 'number' ? version : 0, Date.now()), asks: this.asks };
  }

  waitView(workflowId: unknown) {
    return this.book.view(String(workflowId), Date.now(), !this.readingLong);
  }

  async awaitChanges(look: BookLook) {
    this.growth.note();
    const { version, asks: asksSeen, attempt } = look;
    this.readerAttempt = Math.max(this.readerAttempt, attempt);
    this.looksWaiting += 1;
    this.lookTakenAtMs = Date.now();
    // No timeout (a timer would be billed and written): an idle book leaves the reader waiting for nothing.
    await condition(
      () =>
        this.readerStopping ||
        this.book.changeVersion !== version ||
        this.asks !== asksSeen ||
        this.readerAttempt > attempt,
    ).finally(() => (this.looksWaiting -= 1));
    return { version: this.book.changeVersion, asks: this.asks, stop: this.readerStopping };
  }

  /**
   * Refusals write nothing: a look that is malformed, without the name drawn for the reader (one sent from
   * elsewhere), behind the book, from an earlier attempt of the reader, beside one of the same attempt already
   * waiting, or of a later attempt while the waiting one is younger than the heartbeat timeout (someone who read
   * the name in the history and sends rising attempts can end a look at most once per timeout).
   */
  checkLook(look: unknown): void {
    const checked = checkBookLook(look);
    if (!checked) throw ApplicationFailure.nonRetryable('awaitChanges takes { version, asks, attempt }: whole numbers');
    if (!this.readingLong || this.readerStopping)
      throw refusal('NotReadingLong', 'this watcher has no long reader now');
    if (checked.reader !== this.readerName)
      throw refusal(
        'NotThisReader',
        "the look does not carry the name this watcher gave its reader (the watchJobs activity's input)",
      );
    if (checked.version !== this.book.changeVersion || checked.asks !== this.asks)
      throw refusal(
        'BookChanged',
        `the book is at version ${this.book.changeVersion} with ${this.asks} asks: read the changes (watchChanges) first`,
      );
    const waitingYoung = this.looksWaiting > 0 && Date.now() - this.lookTakenAtMs < READER_HEARTBEAT_TIMEOUT_MS;
    if (
      checked.attempt < this.readerAttempt ||
      (checked.attempt === this.readerAttempt && this.looksWaiting > 0) ||
      (checked.attempt > this.readerAttempt && waitingYoung)
    )
      throw refusal('AlreadyAwaited', `attempt ${this.readerAttempt} of the reader awaits the book's changes already`);
  }

  async askFigures(workflowId: string) {
    this.growth.note();
    const reportBefore = this.book.lastReport(workflowId);
    if (this.book.askFigures(workflowId, Date.now(), Date.now() + LIVE_FIGURES_FOR_MS)) this.asks += 1;
    this.refreshDetails();
    // A reader by timers notes every read already; the long reader reports at its next look at the book, unless it
    // is being stopped (an ask must not hold up a switch or continue-as-new; the next reader reports it).
    if (this.readingLong)
      await condition(
        () => this.readerStopping || this.book.lastReport(workflowId) !== reportBefore,
        REPORT_AWAITED_MS,
      );
    return this.book.view(workflowId, Date.now(), !this.readingLong);
  }

  /**
   * Refusals write nothing: an ask that is malformed, for a wait not held here, or already answered for a while;
   * and, while this run winds down, every ask: its reader is stopping, and the next run answers.
   */
  checkFiguresAsk(workflowId: unknown): void {
    if (!isId(workflowId)) throw ApplicationFailure.nonRetryable('watchFigures takes a follow-up workflow id');
    if (!this.book.view(workflowId, Date.now()))
      throw refusal('NotWatchedHere', `this watcher holds no wait of ${workflowId}`);
    if (this.continuing || this.shouldContinue())
      throw ApplicationFailure.create({
        type: WATCHER_CONTINUING,
        message: 'this watcher is continuing as new: ask again in a moment, and its next run answers',
      });
    const askedUntil = this.book.figuresAskedUntil(workflowId, Date.now());
    if (askedUntil !== null && askedUntil - Date.now() > LIVE_FIGURES_RENEW_WITHIN_MS)
      throw refusal(
        'FiguresAlreadyAsked',
        `the live figures of ${workflowId} are reported already: read them with the watchedWait query`,
      );
  }

  noteReports(reports: unknown): void {
    this.growth.note();
    this.book.noteReports(checkReports(reports));
    // Reports come only of waits someone asks about: the Web UI's details show them as they come.
    this.refreshDetails();
  }

  checkReports(reports: unknown): void {
    if (!Array.isArray(reports) || reports.length === 0 || reports.length > REPORTS_AT_ONCE)
      throw ApplicationFailure.nonRetryable(`reportReads takes 1 to ${REPORTS_AT_ONCE} reports`);
    const checked = checkReports(reports);
    if (checked.length !== reports.length) throw ApplicationFailure.nonRetryable('reportReads: a report is malformed');
    if (!checked.some((report) => this.book.holdsWaitOf(report)))
      throw ApplicationFailure.nonRetryable('reportReads: no report is of a wait this watcher holds');
  }

  /** Sets the watcher's details; a no-op until the reading exists (a handler may run before it). */
  private refreshDetails(): void {
    if (this.reading) this.showDetails(this.reading);
  }

  /** Set again after each turn by timers (not a command: no history), so the Web UI shows the last reads. */
  private showDetails(reading: Reading): void {
    const nowMs = Date.now();
    const asked = this.book.figuresAskedNow(nowMs).flatMap(({ workflowId, untilMs }) => {
      const view = this.book.view(workflowId, nowMs, !reading.long);
      return view ? [{ workflowId, untilMs, figures: watchFiguresOf(view, nowMs) }] : [];
    });
    setCurrentDetails(
      renderWatcherDetails({
        taskQueue: servedTaskQueue(workflowInfo().taskQueue),
        waits: this.book.size,
        bookBytes: this.book.bookBytes,
        limitBytes: this.limitBytes,
        refused: this.refused,
        readsByTimers: !reading.long,
        lastTurn: reading.timed?.lastTurn ?? null,
        nextTurnAtMs: reading.timed?.nextTurnAtMs() ?? null,
        asked,
      }),
    );
  }

  private startReading(long: boolean): Reading {
    this.readingLong = long;
    this.readerStopping = false;
    this.readerAttempt = 0;
    this.readerName = long ? uuid4() : '';
    // A turn's reads come back from an activity: a point in history where the growth can be noted (noted-growth.ts).
    return long
      ? readLong(this.readerName)
      : readByTimers(this.book, () => {
          this.growth.note();
          this.refreshDetails();
        });
  }

  private stopReading(reading: Reading): Promise<number> {
    this.readerStopping = true;
    return reading.stop();
  }

  /**
   * The reading: by this workflow's own timers while the book is small, by one long activity once it is large (or has
   * refusals to tell, which only the long reader does), switched when the book crosses the line, with a margin. The
   * run continues as new before its signals or history grow large, and ends when no wait is left for a while.
   */
  async run(): Promise<void> {
    const adopting = this.adoptBook();
    let reading = this.startReading(!(this.book.size < this.longReaderFrom && this.book.refusalCount === 0));
    this.reading = reading;
    for (;;) {
      this.growth.note();
      this.showDetails(reading);
      const size = this.book.size;
      const refusedBefore = this.refused;
      if (size === 0) {
        const busy = await condition(() => this.book.size > 0 || this.shouldContinue(), IDLE_FOR_MS);
        if (!busy) break;
      } else {
        await condition(() => this.book.size !== size || this.refused !== refusedBefore || this.shouldContinue());
      }
      if (this.shouldContinue()) {
        this.continuing = true;
        await adopting;
        const readerStoppedAtMs = await this.stopReading(reading);
        await condition(allHandlersFinished);
        await continueAsNew<typeof jobWatcherWorkflow>({
          ...this.book.carried(readerStoppedAtMs),
          bookLimitBytes: this.limitBytes,
          ...(this.start.longReaderFrom !== undefined ? { longReaderFrom: this.start.longReaderFrom } : {}),
        });
      }
      if (this.switchDue(reading)) {
        const long = !reading.long;
        await this.stopReading(reading);
        reading = this.startReading(long);
        this.reading = reading;
      }
    }
    await adopting;
    await this.stopReading(reading);
  }

  private switchDue(reading: Reading): boolean {
    const { size, refusalCount } = this.book;
    return reading.long
      ? size < this.longReaderFrom / 2 && this.refused === 0 && refusalCount === 0
      : size >= this.longReaderFrom || this.refused > 0;
  }

  /** Started afresh (not continued): a run before it terminated under its waits leaves them to this one. */
  private adoptBook(): Promise<void> {
    if (workflowInfo().continuedFromExecutionRunId !== undefined) return Promise.resolve();
    return adoptBook({ watcherId: workflowInfo().workflowId, runId: workflowInfo().runId }).then(
      (registrations) => {
        // Read at once: nobody read them since their watcher was terminated.
        for (const registration of registrations) this.book.admit({ ...registration, readAtOnce: true }, Date.now());
      },
      (error: unknown) => log.warn('Could not take over the waits of the run before', { error: String(error) }),
    );
  }
}

/** A refusal of an update that writes nothing and is not tried again. */
function refusal(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}
