/**
 * What a follow-up's lane needs from outside workflow code: checking in (joining the lane, which must start it when it
 * is not running: update-with-start is a client call; and, in the same step, looking up what earlier runs of this
 * follow-up did with the message), and asking whether the lane's holder still runs.
 */
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { laneWorkflowId, type LaneJoined } from '../follow-up/lane';
import type { DeliveryRecord } from '../follow-up/types';
import { JOB_LANE_WORKFLOW_TYPE, joinLaneUpdate } from '../workflows/definitions';
import type { jobLaneWorkflow } from '../workflows/job-lane';
import { createFindEarlierDelivery } from './earlier-delivery';

export interface CheckInRequest {
  projectId: string;
  jobId: string;
  /** The follow-up checking in. */
  workflowId: string;
  runId: string;
  /** The lane runs on the follow-up's own task queue. */
  taskQueue: string;
}

export interface CheckedIn extends LaneJoined {
  /** What an earlier run under this workflow id did with the message (null: none sent it). */
  earlier: DeliveryRecord | null;
}

/** Builds the lane activities around a Temporal client of the worker's connection. */
export function createLaneActivities(client: Client) {
  const findEarlierDelivery = createFindEarlierDelivery(client);
  return {
    /** Takes the follow-up's place in its job's lane (starting the lane if need be) and finds earlier runs' records. */
    async checkIn(request: CheckInRequest): Promise<CheckedIn> {
      const [joined, earlier] = await Promise.all([
        client.workflow.executeUpdateWithStart(joinLaneUpdate, {
          args: [{ workflowId: request.workflowId }],
          startWorkflowOperation: new WithStartWorkflowOperation<typeof jobLaneWorkflow>(JOB_LANE_WORKFLOW_TYPE, {
            workflowId: laneWorkflowId(request.projectId, request.jobId, request.taskQueue),
            taskQueue: request.taskQueue,
            args: [{ projectId: request.projectId, jobId: request.jobId }],
            workflowIdConflictPolicy: 'USE_EXISTING',
            staticSummary: `Lane of ${request.projectId}/${request.jobId}: one follow-up at a time`,
          }),
        }),
        findEarlierDelivery({ workflowId: request.workflowId, runId: request.runId }),
      ]);
      return { ...joined, earlier };
    },

    /** Whether the follow-up with this workflow id has a running run. */
    async followUpIsRunning(workflowId: string): Promise<boolean> {
      try {
        return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
  };
}
