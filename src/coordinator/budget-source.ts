/**
 * Where a coordinator's budget comes from: `budget set` (the `setBudget` signal, checked by coordinator-messages.ts)
 * and the workers' default, which the coordinator reads itself with each follow-up it confirms (`confirmFollowUp`, run
 * by a worker polling the coordinators' queue: the namespace's default from the budget defaults' memo, else that
 * worker's AGENT_SENDS_PER_PROJECT_PER_HOUR). No message a follow-up or anyone else sends carries it. Pure.
 */
import { HOUR_MS } from './project-coordination';

/** A budget per hour as a budget per window (the same unless a test shortened the window). */
export function perWindow(sendsPerHour: number, windowMs: number): number {
  return windowMs === HOUR_MS ? sendsPerHour : Math.max(1, Math.round((sendsPerHour * windowMs) / HOUR_MS));
}

/**
 * The workers' default as a budget per window, or null when the activity's answer is not one (kept as it was). Not
 * held to the vendor's 100: it is the workers' own configuration (validated at their start-up), and tests scale it
 * to their short windows there (`coordination.sendsPerHour` with `windowMs`), the one test-only path to such figures.
 */
export function defaultLimitFrom(sendsPerHour: unknown, windowMs: number): number | null {
  return typeof sendsPerHour === 'number' && Number.isFinite(sendsPerHour) && sendsPerHour >= 1
    ? perWindow(sendsPerHour, windowMs)
    : null;
}
