/**
 * The floor of a burst (bench part `floor`): what a user who starts one Temporal workflow per follow-up would write
 * first, the design card's shape with nothing else: one activity that POSTs the message, then done. No budget, no
 * lane, no record of what left, no wait. Whatever a follow-up of ours adds to its path is measured against this.
 */
import { proxyActivities } from '@temporalio/workflow';

export interface FloorActivities {
  postMessage(input: { projectId: string; jobId: string; prompt: string }): Promise<void>;
}

const { postMessage } = proxyActivities<FloorActivities>({ startToCloseTimeout: '30s' });

export async function floorSendWorkflow(input: { projectId: string; jobId: string; prompt: string }): Promise<void> {
  await postMessage(input);
}
