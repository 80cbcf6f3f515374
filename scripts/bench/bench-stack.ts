/**
 * One measured stack for a benchmark part: a fresh dev server, the simulator in this process (timing every request
 * it receives), and the built worker as a child process.
 */
import { randomUUID } from 'node:crypto';
import { FollowUpClient } from '../../src/client';
import { AgentApiSimulator, type SimulatedRequest } from '../../src/simulator/simulator';
import { startDevServer, startWorker, stopChild, type DevServer, type WorkerProcess } from './processes';

export const BENCH_API_KEY = 'mint_bench_not_a_real_key';

export interface BenchStack {
  server: DevServer;
  simulator: AgentApiSimulator;
  /** Every request the simulator received, by job id, in order. */
  requests: Map<string, SimulatedRequest[]>;
  taskQueue: string;
  followUps: FollowUpClient;
  worker: WorkerProcess;
  /** Starts a (replacement) worker process with the stack's settings. */
  startWorker(): WorkerProcess;
  stop(): Promise<void>;
}

export async function startBenchStack(options: { workMs: number; workerEnv?: Record<string, string>; sendsPerProjectPerHour?: number; sendLimit?: { sends: number; windowMs: number } }): Promise<BenchStack> {
  const server = await startDevServer([]);
  const requests = new Map<string, SimulatedRequest[]>();
  const simulator = await AgentApiSimulator.start({
    // Many sends to one project on purpose: the vendor's hourly limit is not what this measures.
    sendsPerProjectPerHour: null,
    apiKey: BENCH_API_KEY,
    defaultWorkMs: options.workMs,
    ...(options.sendLimit ? { sendLimit: options.sendLimit } : {}),
    onRequest: (request) => {
      const list = requests.get(request.jobId);
      if (list) list.push(request);
      else requests.set(request.jobId, [request]);
    },
  });
  const taskQueue = `bench-${randomUUID().slice(0, 8)}`;
  // These parts measure waiting, not pacing: a budget that never holds a send back (the budget part sets its own).
  const sendsPerProjectPerHour = options.sendsPerProjectPerHour ?? 360_000;
  const env = {
    AGENT_SENDS_PER_PROJECT_PER_HOUR: String(sendsPerProjectPerHour),
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    AGENT_API_BASE_URL: simulator.baseUrl,
    AGENT_API_KEY: BENCH_API_KEY,
    ...options.workerEnv,
  };
  const stack: BenchStack = {
    server,
    simulator,
    requests,
    taskQueue,
    followUps: new FollowUpClient(server.client, { taskQueue }),
    worker: startWorker(env),
    startWorker: () => startWorker(env),
    async stop() {
      await stopChild(stack.worker.child, 'SIGKILL');
      await simulator.close();
      await server.stop();
    },
  };
  // A worker that cannot start (a bad --env, say) must not leave the dev server and simulator running.
  await stack.worker.ready.catch(async (error: unknown) => {
    await stack.stop();
    throw error;
  });
  return stack;
}

/** The times (epoch ms) of one job's requests of one kind. */
export function requestTimes(stack: BenchStack, jobId: string, operation: SimulatedRequest['operation']): number[] {
  return (stack.requests.get(jobId) ?? []).filter((request) => request.operation === operation).map((request) => request.atMs);
}
