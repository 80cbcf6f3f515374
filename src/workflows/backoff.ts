import type { ResolvedPolling } from '../follow-up/input';

/** The interval after `current`: grown by the coefficient, never above the cap. */
export function nextInterval(current: number, polling: ResolvedPolling): number {
  return Math.min(Math.round(current * polling.backoffCoefficient), polling.maxIntervalMs);
}

/** How long to sleep before the next poll: the interval, cut short so the last poll lands on the deadline. */
export function sleepBeforePoll(interval: number, nowMs: number, deadlineMs: number): number {
  return Math.max(0, Math.min(interval, deadlineMs - nowMs));
}
