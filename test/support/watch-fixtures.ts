/** A wait as a follow-up registers it with its watcher, for the unit tests of the books on both sides. */
import type { PollSchedule } from '../../src/kernel/poll-schedule';
import { type WatchRegistration } from '../../src/watch/messages';

/** The default schedule from `startedAtMs`: points at +5 s, 15 s, 35 s, 75 s, then every 60 s, for an hour. */
export function defaultSchedule(startedAtMs: number): PollSchedule {
  return {
    startedAtMs,
    initialIntervalMs: 5_000,
    backoffCoefficient: 2,
    maxIntervalMs: 60_000,
    deadlineMs: startedAtMs + 3_600_000,
  };
}

export function watchRegistration(
  schedule: PollSchedule,
  overrides: Partial<WatchRegistration> = {},
): WatchRegistration {
  return {
    workflowId: 'followup/p/j/1',
    runId: 'run-1',
    projectId: 'p',
    jobId: 'j',
    known: { status: 'active', prLink: null, archivedAt: null },
    acceptUnchangedFromMs: null,
    schedule,
    readAtOnce: false,
    round: 1,
    replyTo: 'reply-1',
    ...overrides,
  };
}
