/**
 * The live figures of one watched wait, for `status`: what the watcher's reader reports of its reads, what the watcher
 * workflow answers when asked about one follow-up (both by query: nothing of it goes into history), and what the
 * client shows. Pure: the watcher workflow, its activity and the client share it.
 */
import { firstReadAt } from '../kernel/poll-schedule';
import type { WaitReadReport, WatchRegistration } from './messages';

/** What the figures are made of: the parts of the watcher's answer they read. */
export interface WatchedWaitFacts {
  registration: Pick<
    WatchRegistration,
    'round' | 'readAtOnce' | 'schedule' | 'readBefore' | 'known' | 'acceptUnchangedFromMs'
  >;
  watchedSinceMs: number;
  report: Omit<WaitReadReport, 'workflowId' | 'runId' | 'replyTo'> | null;
}

/** The live figures as the library and the CLI show them (ISO 8601 times). */
export interface SharedWatchFigures {
  watchedSince: string;
  /** The watcher's last read of the job, as far as it reported (null: none reported). */
  lastRead: { at: string; status: string | null } | null;
  /** Reads of the current wait, as far as the reader reported (null: none reported). */
  reads: number | null;
  /** Reads now failing: since when, how many in a row, the last error (null: the last read succeeded). */
  failing: { since: string; failedReads: number; lastError: string } | null;
  /** The next read: the reader's plan, else the schedule's next point (null: none before the deadline). */
  nextReadAt: string | null;
}

/** `status`'s view of the follow-up's watcher: its live figures, or why they could not be had. */
export type SharedWatchStatus =
  | ({ watcherId: string; available: true } & SharedWatchFigures)
  | { watcherId: string; available: false; reason: string };

/**
 * The next read: at once when one was asked for and not yet made; the reader's plan when it is still ahead; else the
 * first read the reader would plan from now (the reader reads at those points, so this holds while it has not
 * reported): the schedule's next point, or the settle window's end when the job it knows ended and waits that out.
 */
export function nextReadAtMs(view: WatchedWaitFacts, nowMs: number): number | null {
  const { registration, report } = view;
  const reportOfThisRound = report !== null && report.round === registration.round ? report : null;
  if (registration.readAtOnce && (reportOfThisRound === null || reportOfThisRound.reads === 0)) return nowMs;
  if (reportOfThisRound?.nextReadAtMs != null && reportOfThisRound.nextReadAtMs > nowMs)
    return reportOfThisRound.nextReadAtMs;
  return firstReadAt(registration, nowMs);
}

/** The later of the watcher's last read and the follow-up's own just before it registered (a read asked for). */
function latestRead(
  watcherRead: { atMs: number; status: string | null } | null,
  ownRead: { atMs: number; status: string } | null,
): { atMs: number; status: string | null } | null {
  if (watcherRead === null || ownRead === null) return watcherRead ?? ownRead;
  return ownRead.atMs > watcherRead.atMs ? ownRead : watcherRead;
}

/** The figures `status` shows, from the watcher's answer, at `nowMs`. */
export function watchFiguresOf(view: WatchedWaitFacts, nowMs: number): SharedWatchFigures {
  const { report } = view;
  const iso = (ms: number) => new Date(ms).toISOString();
  const next = nextReadAtMs(view, nowMs);
  const lastRead = latestRead(report?.lastRead ?? null, view.registration.readBefore ?? null);
  return {
    watchedSince: iso(view.watchedSinceMs),
    lastRead: lastRead ? { at: iso(lastRead.atMs), status: lastRead.status } : null,
    reads: report !== null && report.round === view.registration.round ? report.reads : null,
    failing:
      report !== null && report.lastError !== null && report.failingSinceMs !== null
        ? { since: iso(report.failingSinceMs), failedReads: report.failedReads, lastError: report.lastError }
        : null,
    nextReadAt: next === null ? null : iso(next),
  };
}
