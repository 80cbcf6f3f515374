/**
 * A watcher reading by its own durable timers, while its book is small: it sleeps until the next read falls due,
 * then one short activity (readWatchedJobs) reads every wait due by then (capped waits fall due on the same clock
 * instants, so they share a turn; poll-schedule.ts) and hands their new state back. Between turns nothing runs and nothing is
 * asked of Temporal: a turn costs a timer and an activity whatever the number of waits it reads. The reading state is
 * this workflow's own (from its history), so `status` shows it without a query that changes anything.
 */
import { condition, log, proxyActivities } from '@temporalio/workflow';
import {
  TURN_STARTS_EARLY_MS,
  type FollowUpActivities,
  type ReadWatchedJobsResult,
  type WaitAfterRead,
} from '../workflows/activity-contract';
import { ReaderBook, reportOf, type WatchedWait } from './reader-book';
import type { WatcherBook } from './watcher-book';
import type { TurnSummary } from './watcher-details';

const { readWatchedJobs } = proxyActivities<FollowUpActivities>({
  // A turn's reads each end within the API client's own timeouts: this only bounds a turn that hangs.
  startToCloseTimeout: '10 minutes',
  // A turn heartbeats only after 10 s (read-watched-jobs.activity.ts): a worker that dies mid-turn is noticed within this.
  heartbeatTimeout: '20s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
  summary: 'read the watched jobs due now, and tell their follow-ups',
});

export class TimedReads {
  private readonly reading = new ReaderBook();
  private turns = 0;
  private stopping = false;
  /** The last turn that ended, for the watcher's details. */
  lastTurn: TurnSummary | null = null;

  /** `onTurn`: after each turn's reads were taken in (the watcher shows them in its details). */
  constructor(
    private readonly book: WatcherBook,
    private readonly onTurn: () => void = () => undefined,
  ) {}

  /** When the next turn is due (null: no read is planned). */
  nextTurnAtMs(): number | null {
    return this.reading.nextDueAtMs();
  }

  /** Reads on timers until `stop()`; resolves once the turns under way have ended. */
  async run(): Promise<void> {
    for (;;) {
      this.takeChanges();
      if (this.stopping) break;
      this.startTurn();
      const seen = this.book.changeVersion;
      const target = this.reading.nextDueAtMs();
      // A turn that ends plans its waits' next reads: only one earlier than the timer set needs a new timer.
      const woken = () => {
        if (this.stopping || this.book.changeVersion !== seen) return true;
        const next = this.reading.nextDueAtMs();
        return next !== null && (target === null || next < target);
      };
      if (target === null) await condition(woken);
      else await condition(woken, Math.max(1, target - TURN_STARTS_EARLY_MS - Date.now()));
    }
    await condition(() => this.turns === 0);
  }

  stop(): void {
    this.stopping = true;
  }

  private takeChanges(): void {
    if (this.reading.version === this.book.changeVersion) return;
    this.reading.apply(this.book.changesSince(this.reading.version, Date.now()), Date.now());
  }

  private startTurn(): void {
    // The timer rang a little ahead, so that the activity starts in time: the waits due by then go together, and the
    // turn reads at the latest of their points, so none is read before its own.
    const due = this.reading.due(Date.now() + TURN_STARTS_EARLY_MS, Number.POSITIVE_INFINITY);
    if (due.length === 0) return;
    const notBeforeMs = Math.max(...due.map((wait) => wait.dueAtMs ?? 0));
    for (const wait of due) wait.reading = true;
    this.turns += 1;
    readWatchedJobs({ waits: due, ...(notBeforeMs > Date.now() ? { notBeforeMs } : {}) })
      .then(
        (result) => this.takeTurn(result),
        (error: unknown) => {
          // Read again at the next turn.
          log.warn('A turn of reads failed', { error: String(error) });
          for (const wait of due) wait.reading = false;
        },
      )
      .finally(() => (this.turns -= 1));
  }

  /** Keeps each wait's new state, unless a newer wait of its follow-up replaced it meanwhile. */
  private takeTurn({ waits }: ReadWatchedJobsResult): void {
    const found: Record<string, number> = {};
    for (const { wait, gone } of waits) {
      if (gone) continue;
      const status = wait.lastRead?.status ?? 'failed';
      found[status] = (found[status] ?? 0) + 1;
    }
    this.lastTurn = { atMs: Date.now(), found };
    for (const { wait, gone } of waits) {
      const { workflowId, runId, round, replyTo } = wait.registration;
      if (gone) this.book.remove(workflowId, runId, undefined, replyTo);
      const kept = this.reading.get(workflowId);
      if (!kept || !sameWait(kept, wait)) continue;
      Object.assign(kept, wait, { registration: kept.registration, reading: false });
      // Answered: the follow-up registers its next wait, if any.
      if (kept.answered) this.book.remove(workflowId, runId, round, replyTo);
      else this.book.noteReports([reportOf(kept)]);
    }
    this.onTurn();
  }
}

function sameWait(a: WatchedWait, b: WaitAfterRead): boolean {
  return (
    a.registration.runId === b.registration.runId &&
    a.registration.round === b.registration.round &&
    a.registration.replyTo === b.registration.replyTo
  );
}
