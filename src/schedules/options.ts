/**
 * What is sent to Temporal for a checked request: the schedule's spec, its action (an ordinary follow-up workflow),
 * its policies, and the memo that keeps the spec as written.
 */
import {
  ScheduleOverlapPolicy,
  type ScheduleOptions,
  type ScheduleOptionsStartWorkflowAction,
} from '@temporalio/client';
import { followUpWorkflowId } from '../client';
import { formatMs } from '../client/input';
import { AgentJobId, AgentProjectId } from '../kernel/search-attributes';
import { followUpStartMetadata } from '../client/start-metadata';
import type { followUpWorkflow } from '../workflows/follow-up/follow-up';
import type { CheckedScheduleRequest, ScheduleOverlapChoice } from './request';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../kernel/workflow-ids';

/** The Temporal policy behind each overlap choice (SCHEDULE_OVERLAP_CHOICES says why only these two). */
const OVERLAP_POLICIES: Record<ScheduleOverlapChoice, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  'buffer-one': ScheduleOverlapPolicy.BUFFER_ONE,
};

/** Where a schedule keeps its spec as written: Temporal compiles cron text into calendars and does not return it. */
export const SPEC_MEMO_KEY = 'agentFollowUpSpec';

/** Where a schedule keeps its creator's note: Temporal's own note is replaced by every pause and unpause. */
export const NOTE_MEMO_KEY = 'agentFollowUpNote';

export type FollowUpScheduleOptions = ScheduleOptions<ScheduleOptionsStartWorkflowAction<typeof followUpWorkflow>>;

/** The spec as written, kept in the schedule's memo. */
export interface SpecMemo {
  cron?: string;
  timezone?: string;
  every?: string;
  offset?: string;
}

/** The Temporal schedule for a checked request. Pure: what `create` sends, and what unit tests look at. */
export function buildScheduleOptions(
  request: CheckedScheduleRequest,
  taskQueue: string,
  /** The default ids' HMAC key of an encrypting client (client/ids.ts). */
  idKey?: Uint8Array,
): FollowUpScheduleOptions {
  const { parsedInput, spec } = request;
  const specMemo: SpecMemo =
    'cron' in spec
      ? { cron: spec.cron, timezone: spec.timezone }
      : { every: formatMs(spec.everyMs), offset: formatMs(spec.offsetMs) };
  return {
    scheduleId: request.scheduleId,
    spec:
      'cron' in spec
        ? { cronExpressions: [spec.cron], timezone: spec.timezone }
        : { intervals: [{ every: spec.everyMs, offset: spec.offsetMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: FOLLOW_UP_WORKFLOW_TYPE,
      taskQueue,
      // A prefix: Temporal appends each run's scheduled time ("-2025-01-31T09:00:00Z"), so every run has its own id,
      // and `WorkflowId STARTS_WITH "agent-followup/{project}/{job}/"` finds scheduled runs beside the ones sent by hand.
      // Two schedules of the same follow-up due at the same second share an id, so only one of them sends.
      workflowId: followUpWorkflowId(parsedInput, idKey),
      // The caller's input as given, like FollowUpClient.start, so the Web UI shows what was asked for.
      args: [request.input],
      // The same summary, details and search attributes as a follow-up started by hand.
      ...followUpStartMetadata(parsedInput),
    },
    policies: {
      overlap: OVERLAP_POLICIES[request.overlap],
      catchupWindow: request.catchupWindowMs,
      // Only a workflow failure (rejected by the API, timed out, delivery unknown) pauses: each of those needs a
      // person before the next send. A job that ends failed or archived is a result and does not pause it.
      pauseOnFailure: request.pauseOnFailure,
    },
    state: {
      paused: request.paused,
      ...(request.note !== undefined ? { note: request.note } : {}),
    },
    memo: { [SPEC_MEMO_KEY]: specMemo, ...(request.note !== undefined ? { [NOTE_MEMO_KEY]: request.note } : {}) },
    // The schedule itself carries the job's attributes, so `temporal schedule list --query 'AgentJobId="…"'` finds it.
    typedSearchAttributes: [
      { key: AgentProjectId, value: parsedInput.projectId },
      { key: AgentJobId, value: parsedInput.jobId },
    ],
  };
}
