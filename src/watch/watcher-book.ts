/**
 * The watcher's book (workflow side, pure): the waits registered with it, each under the id of the follow-up
 * that waits, and a version for every change, so its polling activity asks for the changes since it last asked rather
 * than the whole book (a query's answer is a payload: 2 MB at most). The book goes whole into the next run's input at
 * continue-as-new, which the server refuses past 2 MB (and then terminates the watcher): so it keeps to a size in
 * bytes, and a wait that would pass it is refused (its follow-up moves on to the next watcher of its shard).
 */
import { isObject, isTime } from '../kernel/message-checks';
import type {
  CarriedBook,
  WaitReadReport,
  WatchChanges,
  WatchedWaitView,
  WatchRefusal,
  WatchRegistration,
} from './messages';
import { checkReports } from './watch-messages';

/**
 * The book's size a watcher keeps to, in bytes of its continue-as-new input: 1.5 MB of the server's 2 MB limit on a
 * payload (limit.blobSize.error), with the refusals' share and a margin for the input's frame. At about 570 bytes a
 * wait (its name, `replyTo`, is 47 of them), 2,600 waits.
 */
export const WATCH_BOOK_LIMIT_BYTES = 1_500_000;

/** At most this many asks go to the next run, the latest first (about 350 bytes each, within the input's margin). */
const ASKS_CARRIED = 200;
/** The refusals' share of the input (about 1,500 of them); past it the oldest are dropped. */
const REFUSALS_LIMIT_BYTES = 200_000;
/**
 * How long before its reader stopped a refusal is still carried to the next run: a refusal is a change, which the
 * reader takes within seconds (its `awaitChanges`, or the clock's refresh every 2 s), so an older one was told.
 * Within a run refusals stay until their follow-up registers again or leaves, or the refusals' share is full.
 */
const REFUSALS_KEPT_MS = 2 * 60_000;

export class WatcherBook {
  private readonly entries = new Map<
    string,
    { registration: WatchRegistration; version: number; sinceMs: number; bytes: number }
  >();
  /** What the waits kept take in the continue-as-new input. */
  private bytes = 0;
  private readonly removed = new Map<string, number>();
  /** By workflow id, oldest first. */
  private readonly refusals = new Map<string, { refusal: WatchRefusal; version: number; bytes: number }>();
  private refusalBytes = 0;
  /** The reader's last report per wait, for `status` only: nothing the workflow decides depends on it. */
  private readonly reports = new Map<string, WaitReadReport>();
  /**
   * Reads of a wait's round counted by readers before the one reporting now, by workflow id. A reader counts from
   * zero (a new attempt, a switch between timers and the long activity, the next run of this watcher), so its reports
   * are added to these: the figure `status` shows never goes back. With them, their last read: a reader that has not
   * read yet reports none, and the read shown must not go back to none either.
   */
  private readonly readsBefore = new Map<
    string,
    { round: number; reads: number; lastRead: WaitReadReport['lastRead'] }
  >();
  /** Until when someone asks for a wait's live figures (`watchFigures`), by workflow id, the latest ask last. */
  private readonly figuresAsked = new Map<string, number>();
  private version = 0;

  /**
   * From what the run before carried. Its waits are all kept, even past `limitBytes` (a limit lowered since): only new
   * ones are refused.
   */
  constructor(
    carried: CarriedBook = {},
    nowMs = 0,
    readonly limitBytes = WATCH_BOOK_LIMIT_BYTES,
  ) {
    const since = typeof carried.watchedSince === 'object' && carried.watchedSince !== null ? carried.watchedSince : {};
    for (const registration of Array.isArray(carried.registrations) ? carried.registrations : []) {
      this.upsert(registration, since[registration.workflowId] ?? nowMs);
    }
    for (const refusal of Array.isArray(carried.refusals) ? carried.refusals : []) this.refuse(refusal);
    // The report shown last stays shown until this run's reader reports; it counts from zero, so on from that one.
    for (const [workflowId, ask] of Object.entries(isObject(carried.figuresAsked) ? carried.figuresAsked : {})) {
      const kept = this.entries.get(workflowId);
      if (!kept || !isObject(ask) || !isTime(ask.untilMs)) continue;
      this.figuresAsked.set(workflowId, ask.untilMs);
      const [report] = checkReports([ask.report]);
      if (report?.workflowId === workflowId && report.round === kept.registration.round && this.holdsWaitOf(report))
        this.reports.set(workflowId, report);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bumped by every change: a reader in the workflow (timed-reads.ts) takes the changes since the one it saw. */
  get changeVersion(): number {
    return this.version;
  }

  /** Refusals kept for a reader to tell. */
  get refusalCount(): number {
    return this.refusals.size;
  }

  /** What the waits take in the continue-as-new input, in bytes: at most `limitBytes` but for waits carried. */
  get bookBytes(): number {
    return this.bytes;
  }

  /** What the continue-as-new input takes, in bytes, refusals included (its frame aside). */
  get carriedBytes(): number {
    return this.bytes + this.refusalBytes;
  }

  /**
   * Takes a wait in (as `upsert`) if the book has room for it, and says whether it did. A wait refused is kept only as
   * a refusal for the reader to tell: the follow-up's earlier wait is forgotten, as this one replaces it.
   */
  admit(registration: WatchRegistration, nowMs = 0): boolean {
    const kept = this.entries.get(registration.workflowId);
    // A new round of a wait kept replaces it, so only the difference counts; a repeat of an older round changes nothing.
    const older =
      kept !== undefined &&
      kept.registration.runId === registration.runId &&
      kept.registration.round > registration.round;
    if (older || this.bytes - (kept?.bytes ?? 0) + carriedBytes(registration) <= this.limitBytes) {
      this.upsert(registration, nowMs);
      return true;
    }
    this.remove(registration.workflowId);
    const { workflowId, runId, round, replyTo } = registration;
    this.refuse({ workflowId, runId, round, replyTo, atMs: nowMs });
    return false;
  }

  /** Adds a wait, or replaces the follow-up's earlier one; an earlier round of the same run than the one kept is ignored. */
  upsert(registration: WatchRegistration, nowMs = 0): void {
    const kept = this.entries.get(registration.workflowId);
    if (kept && kept.registration.runId === registration.runId && kept.registration.round > registration.round) return;
    this.version += 1;
    // A run's next wait (the next round) is watched on since its first: the operator asks how long it has been watched.
    const sameRun = kept !== undefined && kept.registration.runId === registration.runId;
    if (!sameRun) {
      this.reports.delete(registration.workflowId);
      this.readsBefore.delete(registration.workflowId);
    }
    const bytes = carriedBytes(registration);
    this.bytes += bytes - (kept?.bytes ?? 0);
    this.entries.set(registration.workflowId, {
      registration,
      version: this.version,
      sinceMs: sameRun ? kept.sinceMs : nowMs,
      bytes,
    });
    this.removed.delete(registration.workflowId);
    this.forgetRefusal(registration.workflowId);
  }

  /**
   * The follow-up's run no longer waits (`runId` absent: whichever run registered), or its wait `round` was answered.
   * With `replyTo` (every `unwatchJob` carries it) only the wait of that name goes: a signal from anyone who does not
   * know the name of the wait, or about an earlier one, changes nothing.
   */
  remove(workflowId: string, runId?: string, round?: number, replyTo?: string): void {
    const refused = this.refusals.get(workflowId)?.refusal;
    // A follow-up that leaves (cancelled, timed out) before it heard of its refusal needs to hear of it no more.
    if (
      round === undefined &&
      (runId === undefined || refused?.runId === runId) &&
      (replyTo === undefined || refused?.replyTo === replyTo)
    )
      this.forgetRefusal(workflowId);
    const kept = this.entries.get(workflowId);
    if (!kept || (runId !== undefined && kept.registration.runId !== runId)) return;
    if (replyTo !== undefined && kept.registration.replyTo !== replyTo) return;
    if (round !== undefined && kept.registration.round > round) return;
    this.version += 1;
    this.bytes -= kept.bytes;
    this.entries.delete(workflowId);
    this.reports.delete(workflowId);
    this.readsBefore.delete(workflowId);
    this.figuresAsked.delete(workflowId);
    this.removed.set(workflowId, this.version);
  }

  /** Whether a report is of a wait held here: the same run, and the wait's name (a report from anyone else is not). */
  holdsWaitOf(report: WaitReadReport): boolean {
    const kept = this.entries.get(report.workflowId)?.registration;
    return kept !== undefined && kept.runId === report.runId && kept.replyTo === report.replyTo;
  }

  /** Keeps the reader's reports of waits held here (`holdsWaitOf`); the rest change nothing. */
  noteReports(reports: readonly WaitReadReport[]): void {
    for (const report of reports) {
      if (!this.holdsWaitOf(report)) continue;
      const before = this.readsBefore.get(report.workflowId);
      // A new round is a new wait: its reads are counted afresh.
      if (before !== undefined && before.round !== report.round) this.readsBefore.delete(report.workflowId);
      // Fewer reads than the last report of the same round: a reader that counts from zero reports now.
      const last = this.reports.get(report.workflowId);
      if (last !== undefined && last.round === report.round && report.reads < last.reads)
        this.readsBefore.set(report.workflowId, {
          round: report.round,
          reads: this.shownReads(last),
          lastRead: this.shownReport(report.workflowId)?.lastRead ?? null,
        });
      this.reports.set(report.workflowId, report);
    }
  }

  /**
   * Someone asks at `nowMs` for a wait's live figures until `untilMs`; false (nothing noted) for a wait not held here.
   * Asks that ran out are forgotten here.
   */
  askFigures(workflowId: string, nowMs: number, untilMs: number): boolean {
    if (!this.entries.has(workflowId)) return false;
    for (const [asked, until] of this.figuresAsked) if (until <= nowMs) this.figuresAsked.delete(asked);
    // Moved to the end: the latest ask is the one its watcher's details show first.
    this.figuresAsked.delete(workflowId);
    this.figuresAsked.set(workflowId, untilMs);
    return true;
  }

  /** Until when a wait's live figures are asked for (null: not now). */
  figuresAskedUntil(workflowId: string, nowMs: number): number | null {
    const until = this.figuresAsked.get(workflowId);
    return until !== undefined && until > nowMs ? until : null;
  }

  /** The waits whose live figures are asked for at `nowMs`, with until when: the latest ask first. */
  figuresAskedNow(nowMs: number): Array<{ workflowId: string; untilMs: number }> {
    return [...this.figuresAsked]
      .filter(([workflowId, until]) => until > nowMs && this.entries.has(workflowId))
      .map(([workflowId, untilMs]) => ({ workflowId, untilMs }))
      .reverse();
  }

  /**
   * One follow-up's wait as this watcher holds it, with its reader's last report (null: not registered here);
   * `everyReadNoted` while the watcher's own timers read, so every read is noted without an ask.
   */
  view(workflowId: string, nowMs: number, everyReadNoted = false): WatchedWaitView | null {
    const kept = this.entries.get(workflowId);
    if (!kept) return null;
    return {
      registration: kept.registration,
      watchedSinceMs: kept.sinceMs,
      report: this.shownReport(workflowId),
      figuresAskedUntilMs: this.figuresAskedUntil(workflowId, nowMs),
      everyReadNoted,
    };
  }

  /**
   * What the next run takes over: every wait, and the refusals made less than two minutes before the reader stopped
   * (`readerStoppedAtMs`), which the next reader tells. A refusal made after it stopped, while the run winds down
   * (minutes on a loaded server), was never told: measured from now, it would be dropped and its follow-up left
   * waiting for its silence to end.
   */
  carried(readerStoppedAtMs: number): Required<CarriedBook> {
    this.forgetRefusalsBefore(readerStoppedAtMs - REFUSALS_KEPT_MS);
    // Only the asks that still last (one that ran out before the reader stopped is nobody's now): the other waits'
    // figures are shown afresh by the next run, and carry nothing.
    const asks = [...this.figuresAsked]
      .filter(([workflowId, until]) => until > readerStoppedAtMs && this.entries.has(workflowId))
      .slice(-ASKS_CARRIED);
    const figuresAsked: Required<CarriedBook>['figuresAsked'] = {};
    for (const [workflowId, untilMs] of asks) {
      const report = this.shownReport(workflowId);
      const ofThisRound = report !== null && report.round === this.entries.get(workflowId)?.registration.round;
      figuresAsked[workflowId] = { untilMs, report: ofThisRound ? report : null };
    }
    return {
      registrations: this.all(),
      watchedSince: Object.fromEntries([...this.entries].map(([workflowId, entry]) => [workflowId, entry.sinceMs])),
      refusals: [...this.refusals.values()].map((entry) => entry.refusal),
      figuresAsked,
    };
  }

  /**
   * The reader's last report of a wait, with the reads counted before it added and, until it reads, the read before
   * it (null: none reported in this run).
   */
  private shownReport(workflowId: string): WaitReadReport | null {
    const report = this.reports.get(workflowId);
    if (report === undefined) return null;
    const before = this.readsBefore.get(workflowId);
    const earlier = before !== undefined && before.round === report.round ? before.lastRead : null;
    return { ...report, reads: this.shownReads(report), lastRead: report.lastRead ?? earlier };
  }

  /** The reader's last report of a wait as it came (the same object until the next one: a handler awaits a new one). */
  lastReport(workflowId: string): WaitReadReport | undefined {
    return this.reports.get(workflowId);
  }

  private shownReads(report: WaitReadReport): number {
    const before = this.readsBefore.get(report.workflowId);
    return report.reads + (before !== undefined && before.round === report.round ? before.reads : 0);
  }

  /**
   * The changes after `since` (0: everything); a version this run never gave out gets the whole book. With them, the
   * waits whose live figures are asked for at `nowMs`. Reads the book only (a query answers it).
   */
  changesSince(since: number, nowMs: number): WatchChanges {
    const refusals = [...this.refusals.values()];
    const watched = [...this.figuresAsked].filter(([, until]) => until > nowMs).map(([workflowId]) => workflowId);
    if (since <= 0 || since > this.version) {
      return {
        version: this.version,
        full: true,
        upserts: this.all(),
        removed: [],
        refused: refusals.map((entry) => entry.refusal),
        watched,
      };
    }
    const upserts = [...this.entries.values()]
      .filter((entry) => entry.version > since)
      .map((entry) => entry.registration);
    const removed = [...this.removed].filter(([, version]) => version > since).map(([workflowId]) => workflowId);
    const refused = refusals.filter((entry) => entry.version > since).map((entry) => entry.refusal);
    return { version: this.version, full: false, upserts, removed, refused, watched };
  }

  /** Keeps a refusal for the reader, within the refusals' share of the input (the oldest go first). */
  private refuse(refusal: WatchRefusal): void {
    this.forgetRefusal(refusal.workflowId);
    this.version += 1;
    const bytes = utf8Length(JSON.stringify(refusal)) + 1;
    this.refusals.set(refusal.workflowId, { refusal, version: this.version, bytes });
    this.refusalBytes += bytes;
    for (const [workflowId] of this.refusals) {
      if (this.refusalBytes <= REFUSALS_LIMIT_BYTES) break;
      this.forgetRefusal(workflowId);
    }
  }

  private forgetRefusal(workflowId: string): void {
    const kept = this.refusals.get(workflowId);
    if (!kept) return;
    this.refusals.delete(workflowId);
    this.refusalBytes -= kept.bytes;
  }

  private forgetRefusalsBefore(atMs: number): void {
    for (const [workflowId, { refusal }] of this.refusals) {
      if (refusal.atMs >= atMs) break;
      this.forgetRefusal(workflowId);
    }
  }

  all(): WatchRegistration[] {
    return [...this.entries.values()].map((entry) => entry.registration);
  }
}

/** A wait's share of the continue-as-new input: its registration, and its entry in `watchedSince` (id and time). */
function carriedBytes(registration: WatchRegistration): number {
  return utf8Length(JSON.stringify(registration)) + utf8Length(JSON.stringify(registration.workflowId)) + 16;
}

/** The length of a string in UTF-8, as the payload stores it (a surrogate pair is 4 bytes, each half counted as 2). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    bytes += code < 0x80 ? 1 : code < 0x800 || (code >= 0xd800 && code <= 0xdfff) ? 2 : 3;
  }
  return bytes;
}

/**
 * FNV-1a over the job's identity, then MurmurHash3's final mix: the same job always goes to the same shard, whoever
 * waits for it. FNV-1a alone spreads badly over a few shards: its lowest bit is the parity of the characters' lowest
 * bits, so ids that repeat their digits (`p-17`/`job-17`) all took shard 0 of 2. The mix makes every bit count.
 */
export function watchShardOf(projectId: string, jobId: string, shards: number): number {
  let hash = 0x811c9dc5;
  const text = `${projectId}/${jobId}`;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  hash = Math.imul(hash ^ (hash >>> 16), 0x85ebca6b);
  hash = Math.imul(hash ^ (hash >>> 13), 0xc2b2ae35);
  hash = (hash ^ (hash >>> 16)) >>> 0;
  return hash % Math.max(1, Math.floor(shards));
}
