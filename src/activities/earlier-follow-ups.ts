/**
 * findEarlierFollowUps: the running follow-ups to the same job that the server started before this one. The
 * coordinator gives a job to its follow-ups in the order they were started, so a check-in names those it must go after
 * even when they have not checked in yet (a slow worker, a coordinator reset). Visibility is eventually consistent: a
 * follow-up started within its lag before this one may be missing (docs/HOW-IT-WORKS.md says when order holds).
 */
import type { Client } from '@temporalio/client';
import { MAX_BEFORE } from '../workflows/project-coordinator/coordinator-messages';
import { hasNoVisibility, quote } from './earlier-delivery';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../kernel/workflow-ids';

export interface EarlierFollowUpsQuery {
  projectId: string;
  jobId: string;
  workflowId: string;
  /** When the server started the asking follow-up's chain. */
  startedAtMs: number;
}

/** Builds the lookup around a Temporal client of the worker's connection. */
export function createFindEarlierFollowUps(client: Client) {
  return async function findEarlierFollowUps(query: EarlierFollowUpsQuery): Promise<string[]> {
    const filter = [
      `WorkflowType = ${quote(FOLLOW_UP_WORKFLOW_TYPE)}`,
      `ExecutionStatus = "Running"`,
      `AgentProjectId = ${quote(query.projectId)}`,
      `AgentJobId = ${quote(query.jobId)}`,
      `StartTime < ${quote(new Date(query.startedAtMs).toISOString())}`,
    ].join(' AND ');
    const earlier = new Set<string>();
    try {
      for await (const execution of client.workflow.list({ query: filter, pageSize: MAX_BEFORE })) {
        if (execution.workflowId !== query.workflowId) earlier.add(execution.workflowId);
        if (earlier.size >= MAX_BEFORE) break;
      }
    } catch (error) {
      // Without visibility (the time-skipping test server) the lane orders those that check in.
      if (!hasNoVisibility(error)) throw error;
    }
    return [...earlier];
  };
}
