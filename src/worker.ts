/**
 * The worker: `npm run worker`. Configuration comes from the environment (see the README's table); the API key is
 * read here and handed to the activities, so it never enters workflow input, history or logs.
 */
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from './activities';
import { AgentApiClient } from './agent-api/http-client';
import { ConfigError, loadWorkerConfig } from './config';

export interface FollowUpWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  api: AgentApiClient;
  /** A prebuilt bundle (tests build one per run); otherwise the workflows are bundled at start-up. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  shutdownGraceTimeMs?: number;
  identity?: string;
}

/** Creates a worker that runs the follow-up workflow and its activities on one task queue. */
export async function createFollowUpWorker(options: FollowUpWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.identity ? { identity: options.identity } : {}),
    activities: createActivities(options.api),
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: require.resolve('./workflows') }),
    // The SDK's default of 0 would cancel in-flight HTTP calls at once on SIGTERM; let them finish instead.
    shutdownGraceTime: options.shutdownGraceTimeMs ?? 30_000,
  });
}

async function main(): Promise<void> {
  const config = loadWorkerConfig();
  const connection = await NativeConnection.connect(config.temporal.connectionOptions);
  try {
    const worker = await createFollowUpWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      api: new AgentApiClient(config.agentApi),
      shutdownGraceTimeMs: config.shutdownGraceTimeMs,
    });
    console.log(
      `agent-followup worker polling task queue '${config.temporal.taskQueue}' on ${config.temporal.connectionOptions.address} ` +
        `(namespace '${config.temporal.namespace}'), agent API ${config.agentApi.baseUrl}. Ctrl-C or SIGTERM drains and stops.`,
    );
    // The SDK's runtime turns SIGINT/SIGTERM into a graceful shutdown; run() resolves once it is done.
    await worker.run();
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exitCode = 2;
      return;
    }
    console.error('agent-followup worker stopped:', error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
