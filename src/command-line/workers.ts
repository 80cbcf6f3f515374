/** Whether a worker polls the task queue: without one, a follow-up waits silently, so the CLI says so. */
import type { FollowUpClient } from '../index';

/** The warning to print when no worker polls the task queue, or null when one does. */
export async function noWorkerWarning(followUps: FollowUpClient): Promise<string | null> {
  if ((await followUps.workers()).some((worker) => worker.live)) return null;
  const { taskQueue } = followUps.options;
  const namespace = followUps.client.options.namespace;
  return (
    `warning: no worker polls task queue '${taskQueue}' in namespace '${namespace}', so nothing will happen until one ` +
    'starts. Start one with the same TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TEMPORAL_TASK_QUEUE ' +
    '(npx agent-followup-worker where the package is installed, npm run worker in a clone of agent-followup, or the ' +
    'compose stack; docs/DEVELOPMENT.md, "Run the pieces by hand").'
  );
}

/** The warning to print when workers are listed but none answers the follow-up's query in time. */
export function unansweredWarning(followUps: FollowUpClient, workflowId: string, timeoutMs: number): string {
  return (
    `warning: no worker answered follow-up ${workflowId} within ${timeoutMs / 1000}s: the workers listed on task queue ` +
    `'${followUps.options.taskQueue}' may have stopped. The follow-up is safe in Temporal and goes on when a worker runs again.`
  );
}
