/**
 * The messages a job watcher takes (checked by watch-messages.ts), as plain definitions the follow-ups' activities
 * and the client share without loading the workflow SDK.
 */
import { queryNamed, signalNamed, updateNamed } from '../kernel/message-definitions';
import type { WaitRequest } from '../kernel/poll-schedule';

/**
 * To a job watcher: watch these waits of follow-ups (each replacing its follow-up's earlier one). One worker's
 * registrations to one watcher within a few milliseconds go together, and a lone one is a batch of one: a burst of
 * one signal each was refused "Workflow is busy" (docs/BENCHMARKS.md).
 */
export const watchJobBatchSignal = signalNamed<[WatchRegistration[]]>('watchJobBatch');

/** Registrations one `watchJobBatch` carries at most (the watcher ignores a larger one). */
export const REGISTRATIONS_PER_SIGNAL = 50;

/** To a job watcher: the follow-up's wait `replyTo` is no longer needed (it left, or its `round` was answered). */
export const unwatchJobSignal = signalNamed<[Unwatch]>('unwatchJob');

/**
 * A job watcher's changes since a version: its reading activity asks, so the book never goes through history. Only
 * reads the watcher's state: the reader's reports reach it by `reportReads`.
 */
export const watchChangesQuery = queryNamed<WatchChanges, [number]>('watchChanges');

/**
 * To a job watcher, from its long reader: answer once the book has changed since the reader's last look (`version`,
 * `asks`: a wait registered or gone, a refusal, an ask for figures) or the reader is to stop, so an idle reader costs
 * nothing between changes. The answer is small: the changes themselves come by `watchChanges`, so the book never
 * passes through history. Refused, writing nothing, when the reader is behind (it looks at the book at once), when a
 * later attempt of the reader waits already, or for a malformed look; a waiting one ends when a later attempt's is
 * taken, so a reader that died leaves none behind for long.
 */
export const awaitChangesUpdate = updateNamed<BookNews, [BookLook]>('awaitChanges');

/** What the long reader last saw of its book: the version and the count of asks for figures, and its attempt. */
export interface BookLook {
  version: number;
  asks: number;
  attempt: number;
  /** The name the watcher gave the reader in its activity's input (WatchJobsRequest.reader). */
  reader?: string;
}

/** The answer to `awaitChanges`: the book's version and asks now, and whether the reader is to stop. */
export interface BookNews {
  version: number;
  asks: number;
  stop: boolean;
}

/**
 * To a job watcher, from `status` (and `send --wait`'s progress): someone asks for this follow-up's live figures, so
 * for the next LIVE_FIGURES_FOR_MS its long reader reports each read of the wait as it makes it. Answers with the
 * wait's view once the reader has reported (a few seconds at most). Refused, writing nothing, for a wait the watcher
 * does not hold or whose figures are already reported for more than LIVE_FIGURES_RENEW_WITHIN_MS: a flood of asks
 * costs the watcher's history nothing.
 */
export const watchFiguresUpdate = updateNamed<WatchedWaitView | null, [string]>('watchFigures');

/**
 * To a job watcher, from its long reader: what it read of waits someone asks figures of (`watchFigures`). Refused,
 * writing nothing, when no report names a wait the watcher holds by its run and name (`replyTo`).
 */
export const reportReadsUpdate = updateNamed<void, [WaitReadReport[]]>('reportReads');

/**
 * The `watchFigures` refusal of a watcher continuing as new: nothing is written, and an ask sent again a moment later
 * reaches its next run, which holds the same waits.
 */
export const WATCHER_CONTINUING = 'WatcherContinuing';

/** How long one ask for live figures has the long reader report a wait's reads. */
export const LIVE_FIGURES_FOR_MS = 30_000;
/** An asker asks again when less than this is left; until then the watcher refuses an ask for the same wait. */
export const LIVE_FIGURES_RENEW_WITHIN_MS = 15_000;
/** Reports one `reportReads` carries at most (the watcher refuses more): a wait asked about is a person looking. */
export const REPORTS_AT_ONCE = 500;

/** A job watcher's live figures for one follow-up (by workflow id): `status` asks; null when it holds no wait of it. */
export const watchedWaitQuery = queryNamed<WatchedWaitView | null, [string]>('watchedWait');

/** One wait of one follow-up, as it registers with its shard's watcher. */
export interface WatchRegistration extends WaitRequest {
  /** The follow-up that waits (its workflow id and run): where answers go. */
  workflowId: string;
  runId: string;
  projectId: string;
  jobId: string;
  /** Which wait of the follow-up this is: answers name it, so a late answer to an earlier wait is never taken. */
  round: number;
  /**
   * The wait's own name, drawn by the follow-up for each wait and known only to it and its watcher: answers carry it
   * back, and one without it (a signal from anyone else) changes nothing.
   */
  replyTo: string;
  /**
   * The read the follow-up made itself just before (a read asked for that was not its answer): `status` shows it as
   * the last read until the watcher makes a later one.
   */
  readBefore?: { atMs: number; status: string };
}

/**
 * A wait the book had no room for. The reader tells its follow-up (a client signal, as it tells answers: a signal
 * from the watcher itself costs its history two events and the server delivers them one workflow task at a time),
 * and the follow-up polls that wait for itself.
 */
export interface WatchRefusal {
  workflowId: string;
  runId: string;
  round: number;
  replyTo: string;
  atMs: number;
}

/** A follow-up's wait it no longer needs (`runId` absent: whichever run's), or whose `round` was answered. */
export interface Unwatch {
  workflowId: string;
  /** The wait's name: only the wait of that name goes. */
  replyTo: string;
  runId?: string;
  round?: number;
}

/** What changed since a version: registrations added or replaced, the follow-ups that left, and waits refused. */
export interface WatchChanges {
  version: number;
  /** True when `upserts` is the whole book (the asker's version was from before this run). */
  full: boolean;
  upserts: WatchRegistration[];
  removed: string[];
  refused: WatchRefusal[];
  /**
   * The follow-ups whose live figures someone asks for now: the long reader reports their reads as it makes them
   * (absent from a watcher of an earlier build).
   */
  watched?: string[];
  /** Asks for figures taken this run so far: the reader hands it back to `awaitChanges` (absent from an earlier build). */
  asks?: number;
}

/** What a reader tells its watcher of one wait after reading it (for `status`; see `reportReads`). */
export interface WaitReadReport {
  workflowId: string;
  runId: string;
  round: number;
  /** The wait's name: a report without the name of a wait the watcher holds changes nothing. */
  replyTo: string;
  /** Reads the follow-up has not heard of yet: this round's, and those of its run's earlier rounds left unanswered. */
  reads: number;
  /** The last read: when, and the status it found (null: that read failed). */
  lastRead: { atMs: number; status: string | null } | null;
  failingSinceMs: number | null;
  failedReads: number;
  lastError: string | null;
  /** When the reader plans the next read (null: none before the deadline). */
  nextReadAtMs: number | null;
}

/** The watcher's answer about one follow-up: its wait as registered, since when, and its reader's last report. */
export interface WatchedWaitView {
  registration: WatchRegistration;
  /** When this run of the follow-up first registered with this watcher run (or the run it continued from). */
  watchedSinceMs: number;
  /** Null: the reader has reported nothing since the watcher's worker took it in (a restart, a new watcher run). */
  report: WaitReadReport | null;
  /**
   * Until when the long reader reports this wait's reads as it makes them (null: nobody asked, or not lately). A reader
   * by timers notes every read anyway.
   */
  figuresAskedUntilMs: number | null;
  /** True while the watcher reads by its own timers: it notes every read itself, so nobody needs to ask. */
  everyReadNoted?: boolean;
}

/** What a watcher starts with: nothing, or what the run before carried (continue-as-new). */
export interface WatcherStart extends CarriedBook {
  /** The size the book keeps to (default WATCH_BOOK_LIMIT_BYTES): lower for a server with a lower payload limit. */
  bookLimitBytes?: number;
  /** From how many waits a long activity reads the book rather than this workflow's timers (tests set 0: always). */
  longReaderFrom?: number;
}

/** What a watcher carries to its next run (continue-as-new). */
export interface CarriedBook {
  registrations?: WatchRegistration[];
  /** When each wait was first registered, by workflow id. */
  watchedSince?: Record<string, number>;
  /** Refusals the reader may not have told yet. */
  refusals?: WatchRefusal[];
  /**
   * The waits someone asks live figures of as the run ends, by workflow id: until when, and the reader's last report
   * as `status` showed it (null: none yet). The next run's reader reports them at once and counts on from that report.
   */
  figuresAsked?: Record<string, { untilMs: number; report: WaitReadReport | null }>;
}

/** The watcher's workflow as its starters see it (a follow-up's registration starts it with its first `watchJobBatch`). */
export type JobWatcherWorkflow = (start?: WatcherStart) => Promise<void>;
