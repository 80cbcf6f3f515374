/**
 * findEarlierOfJob: in one visibility list, the two things a check-in must know before it asks for the job.
 * - The running follow-ups to the same job that the server started before this one: the coordinator gives a job to
 *   its follow-ups in the order they were started, so a check-in names those it must go after even when they have not
 *   checked in yet (a slow worker, a coordinator reset). Visibility is eventually consistent: a follow-up started
 *   within its lag before this one may be missing (docs/HOW-IT-WORKS.md says when order holds).
 * - The earlier runs under this workflow id (earlier-delivery.activity.ts reads what they did with the message).
 *
 * One list rather than one each, and led by the job's two keywords with the running condition inside the `OR`: on
 * the dev server's SQLite a top-level `ExecutionStatus = "Running"` made the planner walk every running workflow of
 * the namespace, so the two lists cost O(running) each (docs/BENCHMARKS.md, "Two choices these bursts made").
 */
import { ServiceError, type Client } from '@temporalio/client';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { MAX_BEFORE } from './coordinator-messages';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../kernel/workflow-ids';

export interface EarlierOfJobQuery {
  projectId: string;
  jobId: string;
  workflowId: string;
  /** The asking run, which is not an earlier one. */
  runId: string;
  /** When the server started the asking follow-up's chain. */
  startedAtMs: number;
  /** Whether the earlier runs of the id are wanted: only a run's first check-in reads what they sent. */
  findEarlier: boolean;
}

/** A run under the asking follow-up's workflow id, other than the asking one. */
export interface EarlierRun {
  runId: string;
  startMs: number;
}

export interface EarlierOfJob {
  /** Running follow-ups to the job started before the asking one (at most MAX_BEFORE). */
  before: string[];
  /** Earlier runs under the asking workflow id, for the same project and job; none when they were not wanted. */
  runs: EarlierRun[];
}

/** Builds the lookup around a Temporal client of the worker's connection. */
export function createFindEarlierOfJob(client: Client) {
  return async function findEarlierOfJob(query: EarlierOfJobQuery): Promise<EarlierOfJob> {
    const ofJob = `AgentProjectId = ${quote(query.projectId)} AND AgentJobId = ${quote(query.jobId)}`;
    const earlierStarted = [
      `WorkflowType = ${quote(FOLLOW_UP_WORKFLOW_TYPE)}`,
      `ExecutionStatus = "Running"`,
      `StartTime < ${quote(new Date(query.startedAtMs).toISOString())}`,
    ].join(' AND ');
    const before = new Set<string>();
    const runs: EarlierRun[] = [];
    try {
      let complete = true;
      for await (const execution of client.workflow.list({
        query: `${ofJob} AND (WorkflowId = ${quote(query.workflowId)} OR (${earlierStarted}))`,
        pageSize: MAX_BEFORE,
      })) {
        if (execution.workflowId === query.workflowId) {
          if (query.findEarlier && execution.runId !== query.runId)
            runs.push({ runId: execution.runId, startMs: execution.startTime.getTime() });
        } else if (before.size < MAX_BEFORE) {
          before.add(execution.workflowId);
        } else {
          // A lane longer than a check-in can name: the runs of this id are looked for on their own, not page by page.
          complete = false;
          break;
        }
      }
      if (!complete && query.findEarlier) {
        runs.length = 0;
        for await (const execution of client.workflow.list({
          query: `${ofJob} AND WorkflowId = ${quote(query.workflowId)}`,
        })) {
          if (execution.runId !== query.runId)
            runs.push({ runId: execution.runId, startMs: execution.startTime.getTime() });
        }
      }
    } catch (error) {
      // Without visibility (the time-skipping test server) the lane orders those that check in, and no run is earlier.
      if (!hasNoVisibility(error)) throw error;
      return { before: [], runs: [] };
    }
    return { before: [...before], runs };
  };
}

/** A visibility-query string literal. */
export function quote(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The server has no visibility at all (Temporal's time-skipping test server): no earlier run can be listed there. */
export function hasNoVisibility(error: unknown): boolean {
  const cause = error instanceof ServiceError ? error.cause : undefined;
  return typeof cause === 'object' && cause !== null && (cause as { code?: unknown }).code === GrpcStatus.UNIMPLEMENTED;
}
