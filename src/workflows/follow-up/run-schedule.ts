/** A follow-up's poll schedule, from its polling options and its deadline. */
import type { PollSchedule } from '../../kernel/poll-schedule';
import type { FollowUpRun } from './follow-up-run';

/** The poll schedule of a wait starting now. */
export function scheduleFrom(run: FollowUpRun): PollSchedule {
  return { startedAtMs: Date.now(), ...scheduleShape(run) };
}

/** The schedule without its start (the send's first wait starts it with the send's answer, in the activity). */
export function scheduleShape(run: FollowUpRun): Omit<PollSchedule, 'startedAtMs'> {
  const { initialIntervalMs, backoffCoefficient, maxIntervalMs } = run.request.polling;
  return { initialIntervalMs, backoffCoefficient, maxIntervalMs, deadlineMs: run.deadlineMs };
}
