/**
 * One wait for the job to change, the same way before the send (a job busy with earlier work) and after it: the job's
 * watcher reads for the follow-up (shared-watch.ts), a read asked for (`pollNow`) is made at once, and only a follow-up
 * with no watcher to take its wait (none configured, or every watcher of its shard's chain refused) polls for itself.
 */
import type { JobState } from '../../kernel/agent-job';
import type { ResultRule } from '../../kernel/result-rule';
import type { PollSchedule } from '../../kernel/poll-schedule';
import { pollAgentJob } from './activity-proxies';
import { scheduleFrom } from './run-schedule';
import type { FollowUpRun } from './follow-up-run';
import type { PollNow } from './poll-now';
import { SharedWatch, withEarlierReads, type WatchedRead } from '../../watch/shared-watch';
import type { WatchRegistration } from '../../watch/messages';

export interface JobChange {
  /** The job as the follow-up knows it: a read that shows it otherwise ends the wait. */
  known: JobState;
  /** From then on, a read that shows the job ended, even unchanged, ends the wait too (null: never). */
  acceptUnchangedFromMs: number | null;
  /** What the wait is for, as the summary of a poll the follow-up makes itself. */
  summary: (readAtOnce: boolean) => string;
  /** After the send's first answer: the watcher tells only news (WaitRequest.result). */
  result?: ResultRule;
}

/**
 * Runs `waits` with the job's watcher opened for them (where the workers watch jobs together, the default; else null)
 * and named in the progress, so `status` knows which watcher to ask for live figures; left afterwards, however they
 * end. `firstRegistered`: the first wait, if the send registered it already.
 */
export async function withJobWatch<T>(
  run: FollowUpRun,
  firstRegistered: WatchRegistration | null,
  waits: (shared: SharedWatch | null) => Promise<T>,
): Promise<T> {
  const shared = run.watchShards !== null ? new SharedWatch(run, run.watchShards, firstRegistered) : null;
  if (shared) run.watchedBy(shared.watcherId);
  try {
    return await waits(shared);
  } finally {
    await shared?.leave();
    if (shared) run.watchedBy(null);
  }
}

/** Waits until a read answers `change`, by the job's watcher when there is one. */
export async function waitForJobChange(
  run: FollowUpRun,
  pollNow: PollNow,
  shared: SharedWatch | null,
  change: JobChange,
): Promise<WatchedRead> {
  // One schedule for the whole wait: a read asked for comes on top of it, and the reads after keep its points, so an
  // ask never puts the next read further off than the schedule had it.
  // The send's first wait keeps the schedule the send started (isSameWait checks its shape).
  const atSend = shared?.scheduleAtSend() ?? null;
  const fresh = scheduleFrom(run);
  const schedule = atSend && sameShape(atSend, fresh) ? atSend : fresh;
  run.readsPlanned(schedule);
  try {
    return await waitOn(run, pollNow, shared, change, schedule);
  } finally {
    run.readsPlanned(null);
  }
}

/** The wait itself: by the watcher, or polling itself when no watcher takes it. */
function waitOn(
  run: FollowUpRun,
  pollNow: PollNow,
  shared: SharedWatch | null,
  change: JobChange,
  schedule: PollSchedule,
): Promise<WatchedRead> {
  const { known, acceptUnchangedFromMs } = change;
  const pollItself = (readAtOnce: boolean) =>
    pollAgentJob(
      { ...run.ref, known, acceptUnchangedFromMs, schedule, readAtOnce },
      run.deadlineMs,
      change.summary(readAtOnce),
    );
  return pollNow.poll(async (readAtOnce): Promise<WatchedRead> => {
    if (!shared) return pollItself(readAtOnce);
    // Only the watcher tells news alone: its reader remembers its reads of the wait (a poll's attempts do not).
    const result = change.result ? { result: change.result } : {};
    const request = { known, acceptUnchangedFromMs, schedule, readAtOnce, ...result };
    let watched = await shared.wait(request);
    // Refused (a full book, or another workflow under the id): the next watcher of the shard's chain takes the wait.
    while ('refused' in watched && shared.moveOn()) {
      run.watchedBy(shared.watcherId);
      const refused = watched;
      const again = await shared.wait({ ...request, readAtOnce: refused.readAtOnce });
      watched =
        'refused' in again
          ? { ...again, polls: again.polls + refused.polls, sawActive: again.sawActive || refused.sawActive }
          : withEarlierReads(again, refused);
    }
    if (!('refused' in watched)) return watched;
    // Every watcher of the chain refused: this wait polls for itself, and the next registers with the last again.
    run.watchedBy(null);
    try {
      return withEarlierReads(await pollItself(watched.readAtOnce), watched);
    } finally {
      run.watchedBy(shared.watcherId);
    }
  });
}

function sameShape(a: PollSchedule, b: PollSchedule): boolean {
  return (
    a.initialIntervalMs === b.initialIntervalMs &&
    a.backoffCoefficient === b.backoffCoefficient &&
    a.maxIntervalMs === b.maxIntervalMs &&
    a.deadlineMs === b.deadlineMs
  );
}
