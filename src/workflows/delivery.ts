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
 * - otherwise it stands exactly where it stood → not delivered (an accepted message makes the job `active`, seed §4.1),
 *   but only if the read was made within RECONCILE_TRUST_MS of the attempt (`readGapMs`); later it is unknown.
 */
export function decideDelivery(before: AgentJob, after: AgentJob, readGapMs = 0): DeliveryDecision {
  if (before.status === 'active' || before.status === 'archived') return 'unknown';
  if (!isTerminal(before.status)) return 'unknown';
  if (after.status === 'active') return 'delivered';
  if (!isTerminal(after.status)) return 'unknown';
  if (!sameObservableState(before, after)) return 'delivered';
  // "Unchanged" proves nothing once an agent could have taken the message and already finished the same way again.
  return readGapMs <= RECONCILE_TRUST_MS ? 'not-delivered' : 'unknown';
}

/**
 * How long after a send attempt started a read showing the job unchanged still proves the message was not taken.
 * It assumes an agent needs longer than this to finish a follow-up (real runs take minutes).
 */
export const RECONCILE_TRUST_MS = 30_000;

export interface TerminalReadContext {
  job: AgentJob;
  /** The job as read just before the send; undefined for follow-ups started before reconciliation existed. */
  snapshot: AgentJob | null | undefined;
  /** A read after the send has shown the job `active`. */
  sawActive: boolean;
  /** The read before this one (null if none since the send). */
  previous: AgentJob | null;
  sentAtMs: number;
  /** When this read was asked for (workflow time): a worker restart may process its answer much later. */
  readAtMs: number;
  settleWindowMs: number;
}

/**
 * Whether a terminal read belongs to this follow-up, not to the job's previous run (a lagging read can still show
 * it). It does at once when it differs from the job as it was before the send. A read that shows the job exactly as
 * before (the same outcome twice looks the same) counts only when the read before it showed the same, and a read
 * after the send has shown the job `active` or the settle window had passed when it was asked for.
 */
export function isFreshTerminal(read: TerminalReadContext): boolean {
  if (!isTerminal(read.job.status)) return false;
  if (read.snapshot === undefined || read.snapshot === null) return true;
  if (!sameObservableState(read.job, read.snapshot)) return true;
  const confirmed = read.previous !== null && sameObservableState(read.previous, read.job);
  const settled = read.sawActive || read.readAtMs - read.sentAtMs >= read.settleWindowMs;
  return confirmed && settled;
}
