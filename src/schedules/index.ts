/**
 * Recurring follow-ups on Temporal Schedules: the same follow-up (project, job, prompt, polling) sent on a cron
 * expression or a fixed interval. Everything is validated before Temporal is called, each run is an ordinary
 * follow-up workflow with a unique id, and `describe` shows how the recent runs ended (docs/SCHEDULES.md).
 *
 * cron.ts holds our cron policy (Temporal checks the syntax); request.ts holds the defaults and the request checks;
 * options.ts is what is sent to Temporal; views.ts is what callers get back; client.ts is the `FollowUpSchedules` class.
 */
export { FollowUpSchedules } from './client';
export { peakRunsPerHour } from './cadence';
export { cronPolicyProblems } from './cron';
export { type ListSchedulesFilter } from './list-filter';
export { buildScheduleOptions, type FollowUpScheduleOptions } from './options';
export {
  checkScheduleRequest,
  DEFAULT_CATCHUP_WINDOW_MS,
  followUpScheduleId,
  InvalidScheduleError,
  isKnownTimeZone,
  SCHEDULE_OVERLAP_CHOICES,
  type CheckedScheduleRequest,
  type FollowUpScheduleRequest,
  type ScheduleOverlapChoice,
} from './request';
export {
  type CreatedFollowUpSchedule,
  type FollowUpScheduleListEntry,
  type FollowUpScheduleSpecView,
  type FollowUpScheduleView,
  type ScheduledFollowUpRun,
} from './views';
