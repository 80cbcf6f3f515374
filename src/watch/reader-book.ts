/**
 * The reader's book (the watcher's polling activity keeps it; pure): every registered wait with when it is next due, what its reads
 * so far showed, and whether its follow-up heard of trouble. The rules are the per-follow-up poll's: the same schedule
 * (nextPollAt), the same "is this read an answer" (`isAnswer`), the same counting of failed reads.
 */
import { jobState, type AgentJob, type JobState } from '../kernel/agent-job';
import { firstReadAt, isAnswer, lastPollAtOrBefore, nextPollAt, nextReadAfter } from '../kernel/poll-schedule';
import { type WatchChanges, type WatchRegistration, type WaitReadReport } from './messages';

export interface WatchedWait {
  registration: WatchRegistration;
  /** When the next read is due (null: none is left before the deadline). */
  dueAtMs: number | null;
  polls: number;
  sawActive: boolean;
  /** This reader's read of the wait before the last (for the "read twice" rule; null: none since it took the wait). */
  previous?: JobState | null;
  /** The last read of the job for this run: when, and the status it found (null: it failed). */
  lastRead: { atMs: number; status: string | null } | null;
  failingSinceMs: number | null;
  failedReads: number;
  lastError: string | null;
  /** Bodies in a row that broke the job contract: a few more and the wait fails (read-rules.ts). */
  invalidReads: number;
  /** The follow-up was told that reads fail (and not yet that they succeed again). */
  troubleTold: boolean;
  /** A read is in flight. */
  reading: boolean;
  /** Its answer went out: nothing more is read until the follow-up registers its next wait. */
  answered: boolean;
}

/**
 * When a wait new to the book is first read: its next planned poll (or its settle window's end, if sooner:
 * firstReadAt), or at once the one missed while no one read.
 */
function firstDue(registration: WatchRegistration, nowMs: number, unreadSinceMs: number | null): number | null {
  if (unreadSinceMs !== null) {
    const missed = lastPollAtOrBefore(registration.schedule, nowMs);
    if (missed !== null && missed > unreadSinceMs) return missed;
  }
  return firstReadAt(registration, nowMs);
}

export class ReaderBook {
  private readonly waits = new Map<string, WatchedWait>();
  version = 0;

  get size(): number {
    return this.waits.size;
  }

  get(workflowId: string): WatchedWait | undefined {
    return this.waits.get(workflowId);
  }

  /**
   * Takes the watcher's changes in: a new wait (or a new round of one) starts fresh; a repeated one keeps its state.
   * `unreadSinceMs`: no one read for the watcher since then (a reader taking over after a crash), so a wait whose poll
   * fell due after it is due at once, the most overdue first.
   */
  apply(changes: WatchChanges, nowMs: number, unreadSinceMs: number | null = null): void {
    if (changes.full) {
      const keep = new Set(changes.upserts.map((registration) => registration.workflowId));
      for (const workflowId of this.waits.keys()) if (!keep.has(workflowId)) this.waits.delete(workflowId);
    }
    for (const workflowId of changes.removed) this.waits.delete(workflowId);
    for (const registration of changes.upserts) {
      const kept = this.waits.get(registration.workflowId);
      if (kept && kept.registration.runId === registration.runId && kept.registration.round === registration.round)
        continue;
      const sameRun = kept !== undefined && kept.registration.runId === registration.runId;
      this.waits.set(registration.workflowId, {
        registration,
        dueAtMs: registration.readAtOnce ? nowMs : firstDue(registration, nowMs, unreadSinceMs),
        // Reads of a round replaced before it was answered (a read asked for, a registration again) never reached the
        // follow-up: they carry over, so its count of reads never goes back. An answered round's went with its answer.
        polls: sameRun && !kept.answered ? kept.polls : 0,
        sawActive: false,
        previous: null,
        lastRead: sameRun ? kept.lastRead : null,
        // Errors carry over to the next round of the same run: the API's health did not change with it.
        failingSinceMs: sameRun ? kept.failingSinceMs : null,
        failedReads: sameRun ? kept.failedReads : 0,
        lastError: sameRun ? kept.lastError : null,
        invalidReads: sameRun ? kept.invalidReads : 0,
        troubleTold: sameRun ? kept.troubleTold : false,
        // A read of the earlier round still in flight answers that round, which the follow-up no longer takes.
        reading: false,
        answered: false,
      });
    }
    this.version = changes.version;
  }

  /**
   * The waits due by `nowMs`, earliest first, at most `limit`. None is taken early: a read before its planned point
   * would stand for it, and a job ending in between would wait a whole gap more. Waits share wake-ups because their
   * capped points fall on the same clock instants (poll-schedule.ts).
   */
  due(nowMs: number, limit: number): WatchedWait[] {
    if (limit <= 0) return [];
    const due: WatchedWait[] = [];
    for (const wait of this.waits.values()) {
      if (wait.answered || wait.reading || wait.dueAtMs === null) continue;
      if (wait.dueAtMs <= nowMs) due.push(wait);
    }
    return due.sort((a, b) => (a.dueAtMs as number) - (b.dueAtMs as number)).slice(0, limit);
  }

  /** When the next read of any wait is due (null: none); with `firstOnly`, of the waits not read yet. */
  nextDueAtMs(firstOnly = false): number | null {
    let next: number | null = null;
    for (const wait of this.waits.values()) {
      if (wait.answered || wait.reading || wait.dueAtMs === null) continue;
      if (firstOnly && wait.polls > 0) continue;
      if (next === null || wait.dueAtMs < next) next = wait.dueAtMs;
    }
    return next;
  }

  /** The registrations of the waits not answered yet: what a watcher that lost its book must be given again. */
  unanswered(): WatchRegistration[] {
    return [...this.waits.values()].filter((wait) => !wait.answered).map((wait) => wait.registration);
  }

  /** The follow-up's run is gone: forget its wait here, unless a later run registered since (the watcher is told separately). */
  drop(workflowId: string, runId: string): void {
    if (this.waits.get(workflowId)?.registration.runId === runId) this.waits.delete(workflowId);
  }
}

/** The planned read after this one: after now, and after the point this read stood for (it may have been late). */
function nextAfter(wait: WatchedWait, nowMs: number): number | null {
  return nextPollAt(wait.registration.schedule, Math.max(nowMs, wait.dueAtMs ?? nowMs));
}

/** A read came back: count it; whether it answers; when the next is due if not. */
export function readSucceeded(
  wait: WatchedWait,
  job: AgentJob,
  readAtMs: number,
  nowMs: number,
): { answer: boolean; recovered: boolean; previous: JobState | null } {
  wait.polls += 1;
  wait.lastRead = { atMs: readAtMs, status: job.status };
  if (job.status === 'active') wait.sawActive = true;
  const previous = wait.previous ?? null;
  wait.previous = jobState(job);
  const recovered = wait.troubleTold;
  wait.failingSinceMs = null;
  wait.failedReads = 0;
  wait.lastError = null;
  wait.invalidReads = 0;
  const answer = isAnswer(wait.registration, job, readAtMs, { previous, sawActive: wait.sawActive });
  if (answer) wait.answered = true;
  else wait.dueAtMs = nextReadAfter(wait.registration, job, nextAfter(wait, nowMs));
  return { answer, recovered, previous };
}

/**
 * A read failed and may succeed later: count it, and plan the next read at the schedule's next point or later if the
 * API asked (Retry-After). Says whether that wait would pass the follow-up's deadline.
 */
export function readFailed(
  wait: WatchedWait,
  error: string,
  readAtMs: number,
  nowMs: number,
  retryAfterMs: number,
): { pastDeadline: boolean } {
  wait.polls += 1;
  wait.lastRead = { atMs: readAtMs, status: null };
  wait.failingSinceMs ??= readAtMs;
  wait.failedReads += 1;
  wait.lastError = error;
  if (retryAfterMs > 0 && nowMs + retryAfterMs >= wait.registration.schedule.deadlineMs) return { pastDeadline: true };
  const planned = nextAfter(wait, nowMs);
  wait.dueAtMs = planned === null ? null : Math.max(planned, nowMs + retryAfterMs);
  return { pastDeadline: false };
}

/** What the reader tells its watcher of a wait, for `status` (watch-figures.ts). */
export function reportOf(wait: WatchedWait): WaitReadReport {
  const { workflowId, runId, round, replyTo } = wait.registration;
  return {
    workflowId,
    runId,
    round,
    replyTo,
    reads: wait.polls,
    lastRead: wait.lastRead,
    failingSinceMs: wait.failingSinceMs,
    failedReads: wait.failedReads,
    lastError: wait.lastError,
    nextReadAtMs: wait.dueAtMs,
  };
}
