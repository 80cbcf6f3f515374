/**
 * What a job watcher keeps (workflow side, pure): the waits registered with it, each under the id of the follow-up
 * that waits, and a version for every change, so its polling activity asks for the changes since it last asked rather
 * than the whole book (a query's answer is a payload: 2 MB at most).
 */
import type { JobState } from '../agent-api/job';
import type { PollSchedule } from './poll-schedule';
import type { WaitReadReport, WatchedWaitView } from './watch-figures';

/** One wait of one follow-up, as it registers with its shard's watcher. */
export interface WatchRegistration {
  /** The follow-up that waits (its workflow id and run): where answers go. */
  workflowId: string;
  runId: string;
  projectId: string;
  jobId: string;
  /** What the follow-up already knows; null: the first successful read answers. */
  known: JobState | null;
  /** A terminal read unchanged from `known` answers once this time has come (null: only a change answers). */
  acceptUnchangedFromMs: number | null;
  schedule: PollSchedule;
  /** Read at once (a read asked for, or a re-registration after silence), rather than at the schedule's next point. */
  readAtOnce: boolean;
  /** Which wait of the follow-up this is: answers name it, so a late answer to an earlier wait is never taken. */
  round: number;
  /**
   * The read the follow-up made itself just before (a read asked for that was not its answer): `status` shows it as
   * the last read until the watcher makes a later one.
   */
  readBefore?: { atMs: number; status: string };
}

/** What changed since a version: registrations added or replaced, and the follow-ups that left. */
export interface WatchChanges {
  version: number;
  /** True when `upserts` is the whole book (the asker's version was from before this run). */
  full: boolean;
  upserts: WatchRegistration[];
  removed: string[];
}

export class WatchRegistry {
  private readonly entries = new Map<string, { registration: WatchRegistration; version: number; sinceMs: number }>();
  private readonly removed = new Map<string, number>();
  /**
   * The reader's last report per wait, for `status` only. It arrives with the reader's book query, so it is not in
   * history and is lost when the workflow leaves a worker's cache: nothing the workflow decides may depend on it.
   */
  private readonly reports = new Map<string, WaitReadReport>();
  private version = 0;

  /** `watchedSince`: when each carried wait was first registered (from the run before a continue-as-new). */
  constructor(initial: readonly WatchRegistration[] = [], watchedSince: Readonly<Record<string, number>> = {}, nowMs = 0) {
    for (const registration of initial) this.upsert(registration, watchedSince[registration.workflowId] ?? nowMs);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Adds a wait, or replaces the follow-up's earlier one; an earlier round of the same run than the one kept is ignored. */
  upsert(registration: WatchRegistration, nowMs = 0): void {
    const kept = this.entries.get(registration.workflowId);
    if (kept && kept.registration.runId === registration.runId && kept.registration.round > registration.round) return;
    this.version += 1;
    // A run's next wait (the next round) is watched on since its first: the operator asks how long it has been watched.
    const sameRun = kept !== undefined && kept.registration.runId === registration.runId;
    if (!sameRun) this.reports.delete(registration.workflowId);
    this.entries.set(registration.workflowId, { registration, version: this.version, sinceMs: sameRun ? kept.sinceMs : nowMs });
    this.removed.delete(registration.workflowId);
  }

  /** The follow-up's run no longer waits (`runId` absent: whichever run registered), or its wait `round` was answered. */
  remove(workflowId: string, runId?: string, round?: number): void {
    const kept = this.entries.get(workflowId);
    if (!kept || (runId !== undefined && kept.registration.runId !== runId)) return;
    if (round !== undefined && kept.registration.round > round) return;
    this.version += 1;
    this.entries.delete(workflowId);
    this.reports.delete(workflowId);
    this.removed.set(workflowId, this.version);
  }

  /** Keeps the reader's reports of waits still registered by the same run (a report of a run gone is dropped). */
  noteReports(reports: readonly WaitReadReport[]): void {
    for (const report of reports) {
      if (this.entries.get(report.workflowId)?.registration.runId === report.runId) this.reports.set(report.workflowId, report);
    }
  }

  /** One follow-up's wait as this watcher holds it, with its reader's last report (null: not registered here). */
  view(workflowId: string): WatchedWaitView | null {
    const kept = this.entries.get(workflowId);
    if (!kept) return null;
    return { registration: kept.registration, watchedSinceMs: kept.sinceMs, report: this.reports.get(workflowId) ?? null };
  }

  /** When each wait was first registered: carried over a continue-as-new with `all()`. */
  watchedSince(): Record<string, number> {
    return Object.fromEntries([...this.entries].map(([workflowId, entry]) => [workflowId, entry.sinceMs]));
  }

  /** The changes after `since` (0: everything); a version this run never gave out gets the whole book. */
  changesSince(since: number): WatchChanges {
    if (since <= 0 || since > this.version) return { version: this.version, full: true, upserts: this.all(), removed: [] };
    const upserts = [...this.entries.values()].filter((entry) => entry.version > since).map((entry) => entry.registration);
    const removed = [...this.removed].filter(([, version]) => version > since).map(([workflowId]) => workflowId);
    return { version: this.version, full: false, upserts, removed };
  }

  all(): WatchRegistration[] {
    return [...this.entries.values()].map((entry) => entry.registration);
  }
}

/** FNV-1a over the job's identity: the same job always goes to the same shard, whoever waits for it. */
export function watchShardOf(projectId: string, jobId: string, shards: number): number {
  let hash = 0x811c9dc5;
  const text = `${projectId}/${jobId}`;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % Math.max(1, Math.floor(shards));
}

/** Where the job watchers' workflow ids start: no follow-up may take one. */
export const WATCHER_ID_PREFIX = 'agent-followup-watch/';

/** The watcher of a shard of one task queue's jobs (each deployment reads with its own key). */
export function watcherWorkflowId(taskQueue: string, shard: number): string {
  return `${WATCHER_ID_PREFIX}${taskQueue}/${shard}`;
}

/**
 * The task queue the watchers of a follow-up task queue run on. A queue of their own gives them a workflow cache of
 * their own: in the follow-ups' cache, thousands of follow-ups evict them, and an evicted watcher replays thousands of
 * signals for every look at its book.
 */
export function watcherTaskQueue(followUpTaskQueue: string): string {
  return `${followUpTaskQueue}/watchers`;
}
