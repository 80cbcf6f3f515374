/**
 * When a wait polls the job: at fixed points counted from the wait's start (interval, then ×coefficient, capped),
 * the last one on the deadline. Points, not gaps, so any attempt of the wait activity (a retry, or a new worker after
 * a crash) knows the next poll from the clock alone. And which read answers a wait (`isAnswer`), when the next read is
 * due after one that did not (`nextReadAfter`): one rule for every reader, the follow-up's own poll and the watcher's.
 * Pure: the workflow and the activity share it.
 */
import { isTerminal, jobState, sameJobState, type AgentJob, type JobState } from './agent-job';
import { isNews, type ReaderMemory, type ResultRule } from './result-rule';

/**
 * Polls closer together than this run in a loop inside one activity attempt (frequent polling: one task, many polls);
 * farther apart, each poll is an attempt of its own, scheduled by Temporal's retry timer (infrequent polling).
 */
export const FREQUENT_POLL_LIMIT_MS = 30_000;

/**
 * The heartbeat timeout of a wait: how soon Temporal notices that a worker running a polling loop died. A loop
 * heartbeats at each poll (and at least every half of this while it sleeps, should a Retry-After ask for longer than
 * a gap) and Core sends at most one heartbeat per 0.8 × this, so it is several poll gaps long (one server write per
 * several polls), and bounded: longer delays the takeover after a crash. Shorter takes over sooner but costs a
 * server write per poll, more than a small server keeps up with (the trade measured: docs/BENCHMARKS.md). A worker
 * that stops normally hands its loops over at once.
 */
export function pollHeartbeatTimeoutMs(schedule: Pick<PollSchedule, 'maxIntervalMs'>): number {
  const longestLoopGap = Math.min(schedule.maxIntervalMs, FREQUENT_POLL_LIMIT_MS);
  return Math.min(Math.max(6 * longestLoopGap, 10_000), 60_000);
}

export interface PollSchedule {
  startedAtMs: number;
  initialIntervalMs: number;
  backoffCoefficient: number;
  maxIntervalMs: number;
  /** No poll is planned after this; the last one lands on it. */
  deadlineMs: number;
}

/**
 * The first planned poll strictly after `afterMs`, or null when none is left before the deadline.
 *
 * The ramp (the first interval, then ×coefficient while below the cap) counts from the wait's start; once capped,
 * the points are the multiples of the cap on the clock (every minute on the minute, at the default 60 s), whatever
 * the start. So every capped wait of a watcher falls due at the same instant and one wake-up reads them all, each at
 * its own planned point: no read is made early to share a wake-up, and a job that ends just before a planned point
 * is read at that point, not a gap later. The ramp's last gap to the grid is shorter than the cap, never longer.
 */
export function nextPollAt(schedule: PollSchedule, afterMs: number): number | null {
  if (afterMs >= schedule.deadlineMs) return null;
  const rampEnd = rampPointAtOrBefore(schedule, afterMs);
  if (rampEnd.next !== null) return Math.min(rampEnd.next, schedule.deadlineMs);
  return Math.min(capPointAfter(schedule, Math.max(rampEnd.last as number, afterMs)), schedule.deadlineMs);
}

/**
 * The last planned poll at or before `atMs`, or null when none has come yet. A reader taking over after a crash reads
 * at once a wait whose poll fell due while no one was reading, instead of waiting a whole gap for the next one.
 */
export function lastPollAtOrBefore(schedule: PollSchedule, atMs: number): number | null {
  if (atMs >= schedule.deadlineMs) return schedule.deadlineMs;
  const rampEnd = rampPointAtOrBefore(schedule, atMs);
  if (rampEnd.next !== null) return rampEnd.last;
  const onGrid = Math.floor(atMs / capOf(schedule)) * capOf(schedule);
  return Math.max(onGrid, rampEnd.last as number);
}

function capOf(schedule: PollSchedule): number {
  return Math.max(schedule.maxIntervalMs, 1);
}

/** The first multiple of the cap after `afterMs`. */
function capPointAfter(schedule: PollSchedule, afterMs: number): number {
  return (Math.floor(afterMs / capOf(schedule)) + 1) * capOf(schedule);
}

/**
 * Walks the ramp up to `atMs`: its last point at or before it (null: none yet) and its next point after it (null: the
 * ramp ended at or before `atMs`, and `last` is its final point). The first interval is always kept, so a schedule
 * asking for its first read 30 s after the send reads then, even at a 30 s cap.
 */
function rampPointAtOrBefore(schedule: PollSchedule, atMs: number): { last: number | null; next: number | null } {
  const cap = capOf(schedule);
  let interval = Math.min(schedule.initialIntervalMs, cap);
  let at = schedule.startedAtMs + interval;
  if (at > atMs) return { last: null, next: at };
  interval = Math.min(interval * schedule.backoffCoefficient, cap);
  while (interval < cap) {
    if (at + interval > atMs) return { last: at, next: at + interval };
    at += interval;
    interval = Math.min(interval * schedule.backoffCoefficient, cap);
  }
  return { last: at, next: null };
}

/**
 * What one wait asks of whoever reads the job for it (its own poll, or its watcher): the reads' schedule, and which
 * read answers. The one shape behind a poll's request and a watcher's registration.
 */
export interface WaitRequest {
  /** What the follow-up already knows; null: the first successful read answers. */
  known: JobState | null;
  /** A terminal read unchanged from `known` answers once this time has come (null: only a change answers). */
  acceptUnchangedFromMs: number | null;
  schedule: PollSchedule;
  /** Read at once (a read asked for, or a re-registration after silence), rather than at the schedule's next point. */
  readAtOnce: boolean;
  /**
   * After the follow-up's first answer since the send: a read that would answer is told only when it is news
   * (`isNews`), so a job flapping between states already seen wakes the follow-up once per state, not once per read.
   */
  result?: ResultRule;
}

/**
 * Whether a read answers the wait: it changed, or it is the unchanged terminal read asked for, and (for a wait with a
 * result rule) it is news to the follow-up. `memory`: what the reader itself read of the wait before (none: nothing).
 */
export function isAnswer(
  registration: Pick<WaitRequest, 'known' | 'acceptUnchangedFromMs' | 'result'>,
  job: AgentJob,
  readAtMs: number,
  memory: ReaderMemory = { previous: null, sawActive: false },
): boolean {
  const changed = registration.known === null || !sameJobState(jobState(job), registration.known);
  const accepted =
    changed ||
    (isTerminal(job.status) &&
      registration.acceptUnchangedFromMs !== null &&
      readAtMs >= registration.acceptUnchangedFromMs);
  return accepted && (registration.result === undefined || isNews(registration.result, job, readAtMs, memory));
}

/**
 * When the next read is due after one that did not answer: the schedule's next point, or sooner the moment the read's
 * result would be accepted unchanged (a job found ended and waiting out the settle window), so a follow-up whose job
 * ended early is answered when the window ends, not at the schedule's next point, up to a gap later.
 */
export function nextReadAfter(
  registration: Pick<WaitRequest, 'known' | 'acceptUnchangedFromMs' | 'schedule'>,
  job: AgentJob | JobState,
  planned: number | null,
): number | null {
  const settledAtMs = registration.acceptUnchangedFromMs;
  const settling =
    settledAtMs !== null &&
    settledAtMs < registration.schedule.deadlineMs &&
    isTerminal(job.status) &&
    registration.known !== null &&
    sameJobState(jobState(job), registration.known);
  if (!settling) return planned;
  return planned === null ? settledAtMs : Math.min(planned, settledAtMs);
}

/**
 * When a new wait is first read, nothing asked for and nothing missed: the schedule's first point, or sooner the
 * moment the ended job it already knows would be accepted unchanged (its settle window's end): a wait registered
 * after a read asked for found the job ended inside the window is answered when the window ends, not a gap later.
 */
export function firstReadAt(
  registration: Pick<WaitRequest, 'known' | 'acceptUnchangedFromMs' | 'schedule'>,
  nowMs: number,
): number | null {
  const planned = nextPollAt(registration.schedule, nowMs);
  const first = registration.known === null ? planned : nextReadAfter(registration, registration.known, planned);
  return first === null ? null : Math.max(first, nowMs);
}
