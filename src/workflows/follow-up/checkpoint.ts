/**
 * What a follow-up carries into its next run when it continues as new, and the check a run makes before trusting
 * it. Only a run that really was continued may take one (the workflow checks `continuedFromExecutionRunId`): a
 * checkpoint passed by a starter could otherwise skip the send. Pure: workflow code imports it.
 */
import { isJobState, type AgentJob, type JobState } from '../../kernel/agent-job';
import type { DeliveryEvidence } from '../../kernel/types';

/** A delivered message and what the follow-up has learnt about its result so far. */
export interface Delivered {
  baseline: JobState;
  sentAtMs: number;
  via: DeliveryEvidence;
  sawActive: boolean;
  /** The last read after the send (or the send's own answer), what the next wait compares with. */
  known: JobState;
  /** The read before the last one, for the "read twice" rule. */
  previous: JobState | null;
}

export interface FollowUpCheckpoint {
  deadlineMs: number;
  runs: number;
  polls: number;
  sendAttempts: number;
  lastJob: AgentJob | null;
  /** The run held its job's lane; the continued run keeps the turn (absent: false). */
  holdsLane?: boolean;
  /** Absent while the message has not gone out: the next run reads the job again and sends. */
  delivered?: Delivered;
  /** The workers' shared watchers have this many shards (absent: the follow-up polls its job itself). */
  watchShards?: number;
  /** The workers' callback URL (AGENT_NOTIFY_URL), learned at check-in, for a follow-up without its own `notify`. */
  notifyUrl?: string;
  /** The follow-up's sealed ticket, from its first check-in: the coordinator's messages carry it. */
  ticket?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;
const isTime = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
const isNullableString = (value: unknown) => value === null || typeof value === 'string';

function isJob(value: unknown): value is AgentJob {
  return (
    isRecord(value) &&
    typeof value.id === 'string' &&
    typeof value.status === 'string' &&
    isNullableString(value.prLink)
  );
}

function isDelivered(value: unknown): value is Delivered {
  return (
    isRecord(value) &&
    isJobState(value.baseline) &&
    isTime(value.sentAtMs) &&
    (value.via === 'response' || value.via === 'reconciled' || value.via === 'earlier-run') &&
    typeof value.sawActive === 'boolean' &&
    isJobState(value.known) &&
    (value.previous === null || isJobState(value.previous))
  );
}

/** True when `value` has the checkpoint's shape (written by our own continue-as-new). */
export function isCheckpoint(value: unknown): value is FollowUpCheckpoint {
  return (
    isRecord(value) &&
    isTime(value.deadlineMs) &&
    isCount(value.runs) &&
    (value.runs as number) >= 1 &&
    isCount(value.polls) &&
    isCount(value.sendAttempts) &&
    (value.lastJob === null || isJob(value.lastJob)) &&
    (value.holdsLane === undefined || typeof value.holdsLane === 'boolean') &&
    (value.delivered === undefined || isDelivered(value.delivered)) &&
    (value.watchShards === undefined || (isCount(value.watchShards) && (value.watchShards as number) >= 1)) &&
    (value.notifyUrl === undefined || typeof value.notifyUrl === 'string') &&
    (value.ticket === undefined || typeof value.ticket === 'string')
  );
}
