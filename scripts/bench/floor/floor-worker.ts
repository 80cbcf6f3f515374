/**
 * The worker of the floor workflow (floor-workflow.ts), as its user would run it: the SDK's default worker settings,
 * the message POSTed with `fetch`. Configured by its environment; says "polling task queue" once it runs.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import type { FloorActivities } from './floor-workflow';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

async function main(): Promise<void> {
  const baseUrl = required('AGENT_API_BASE_URL');
  const apiKey = required('AGENT_API_KEY');
  const taskQueue = required('TEMPORAL_TASK_QUEUE');
  const activities: FloorActivities = {
    async postMessage({ projectId, jobId, prompt }) {
      const url = `${baseUrl}/v2/agent/${encodeURIComponent(projectId)}/job/${encodeURIComponent(jobId)}/message`;
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt }),
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`the agent API answered ${response.status}`);
    },
  };
  const connection = await NativeConnection.connect({ address: required('TEMPORAL_ADDRESS') });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowsPath: require.resolve('./floor-workflow'),
    activities,
  });
  console.log(`floor worker polling task queue ${taskQueue}`);
  await worker.run();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
