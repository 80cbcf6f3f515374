/**
 * Pure decisions about one follow-up's message and result, kept apart from the workflow so they are unit-tested on
 * their own and read as the README's tables.
 */
import { isTerminal, type AgentJob } from '../agent-api/schemas';

export type DeliveryDecision = 'delivered' | 'not-delivered' | 'unknown';

/** What a reader can see of a job's progress: the fields a follow-up changes. */
function observable(job: AgentJob): string {
  return JSON.stringify([job.status, job.prLink ?? null, job.archivedAt ?? null]);
}

/** True when the two reads show the job in the same observable state. */
export function sameObservableState(a: AgentJob, b: AgentJob): boolean {
  return observable(a) === observable(b);
}

/**
 * After a send whose outcome is unknown: did the API take the message? `before` is the job read just before the
 * send, `after` a read some seconds after the failure.
 * - it turned `active` from a status that was not → delivered (the agent is working on it);
 * - it ended again with another result (new PR, other status) → delivered (the agent already finished);
 * - it was `active` before, or `archived` (which stays archived), or shows a status we do not know → unknown: the
 *   job would look the same either way;
 * - otherwise it stands exactly where it stood → not delivered (an accepted message makes the job `active`, seed §4.1).
 */
export function decideDelivery(before: AgentJob, after: AgentJob): DeliveryDecision {
  if (before.status === 'active' || before.status === 'archived') return 'unknown';
  if (!isTerminal(before.status)) return 'unknown';
  if (after.status === 'active') return 'delivered';
  if (!isTerminal(after.status)) return 'unknown';
  return sameObservableState(before, after) ? 'not-delivered' : 'delivered';
}

export interface TerminalReadContext {
  job: AgentJob;
  /** The job as read just before the send; undefined for follow-ups started before reconciliation existed. */
  snapshot: AgentJob | null | undefined;
  /** A read after the send has shown the job `active`. */
  sawActive: boolean;
  sentAtMs: number;
  nowMs: number;
  settleWindowMs: number;
}

/**
 * Whether a terminal read belongs to this follow-up, not to the job's previous run (a lagging read right after the
 * send can still show it). It does when a read after the send has shown the job `active`; or when it differs from the
 * job as it was before the send; or when the settle window has passed since the send and the job still stands
 * there (the agent may finish within one poll interval, and the same result twice looks the same).
 */
export function isFreshTerminal(read: TerminalReadContext): boolean {
  if (!isTerminal(read.job.status)) return false;
  if (read.snapshot === undefined || read.snapshot === null || read.sawActive) return true;
  if (!sameObservableState(read.job, read.snapshot)) return true;
  return read.nowMs - read.sentAtMs >= read.settleWindowMs;
}
