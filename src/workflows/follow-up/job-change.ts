/**
 * One wait for the job to change, the same way before the send (a job busy with earlier work) and after it: the job's
 * watcher reads for the follow-up (shared-watch.ts), a read asked for (`pollNow`) is made at once, and only a follow-up
 * with no watcher to take its wait (none configured, or every watcher of its shard's chain refused) polls for itself.
 */
import { log } from '@temporalio/workflow';
import type { JobState } from '../../kernel/agent-job';
import type { ResultRule } from '../../kernel/result-rule';
import type { PollResult } from '../activity-contract';
import { pollAgentJob } from './activity-proxies';
import { scheduleFrom } from './run-schedule';
import type { FollowUpRun } from './follow-up-run';
import type { PollNow } from './poll-now';
import { ownReadOf, SharedWatch, withEarlierReads, type WatchedRead } from './shared-watch';
import { confirmsTold } from './watch-answer';
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
export function waitForJobChange(
  run: FollowUpRun,
  pollNow: PollNow,
  shared: SharedWatch | null,
  change: JobChange,
): Promise<WatchedRead> {
  const { known, acceptUnchangedFromMs } = change;
  const pollItself = (readAtOnce: boolean) =>
    pollAgentJob(
      { ...run.ref, known, acceptUnchangedFromMs, schedule: scheduleFrom(run), readAtOnce },
      run.deadlineMs,
      change.summary(readAtOnce),
    );
  return pollNow.poll(async (readAtOnce): Promise<WatchedRead> => {
    if (!shared) return pollItself(readAtOnce);
    // Only the watcher tells news alone: its reader remembers its reads of the wait (a poll's attempts do not).
    const result = change.result ? { result: change.result } : {};
    const request = { known, acceptUnchangedFromMs, schedule: scheduleFrom(run), readAtOnce, ...result };
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

/**
 * The follow-up's own read of a job its watcher told it ended, made before that ends anything: the told read counts
 * only if this read shows the same id, status and prLink; otherwise this read stands in its place (it is the job as it
 * is, read by the follow-up). Null when the read failed for now: the told read is not believed, and the wait goes on.
 */
export async function confirmTold(run: FollowUpRun, told: PollResult): Promise<PollResult | null> {
  const own = await ownReadOf(run, scheduleFrom(run), `read job ${run.ref.jobId} to confirm what its watcher told`);
  if (own === null) return null;
  const polls = told.polls + own.polls;
  // Confirmed, it stands where the told read stood: after the read the watcher made before it.
  if (confirmsTold(told.job, own.job))
    return {
      ...own,
      polls,
      sawActive: told.sawActive || own.sawActive,
      ...(told.previous !== undefined ? { previous: told.previous } : {}),
    };
  log.warn('The follow-up’s own read does not show what its watcher told; it goes by its own read', {
    ...run.ref,
    told: { status: told.job.status, prLink: told.job.prLink ?? null },
    read: { status: own.job.status, prLink: own.job.prLink ?? null },
  });
  return { ...own, polls };
}
