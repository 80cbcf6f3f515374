/**
 * One measured stack for a benchmark part: a fresh dev server, the simulator in this process (timing every request
 * it receives), and the built worker as a child process.
 */
import { randomUUID } from 'node:crypto';
import { FollowUpClient, type FollowUpInput } from '../../src/client';
import { AgentApiSimulator, type SimulatedRequest } from '../../src/simulator/simulator';
import { sleep, startDevServer, startWorker, stopChild, type DevServer, type WorkerProcess } from './processes';
import { inBatches } from './stats';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../../src/kernel/workflow-ids';

export const BENCH_API_KEY = 'mint_bench_not_a_real_key';

export interface BenchStack {
  server: DevServer;
  simulator: AgentApiSimulator;
  /** Every request the simulator received, by job id, in order. */
  requests: Map<string, SimulatedRequest[]>;
  taskQueue: string;
  followUps: FollowUpClient;
  worker: WorkerProcess;
  /** Starts a (replacement or additional) worker process with the stack's settings, and `extraEnv` over them. */
  startWorker(extraEnv?: Record<string, string>): WorkerProcess;
  stop(): Promise<void>;
}

/**
 * The workers' environment for rows that measure each follow-up polling its own job (AGENT_WATCH_SHARDS=0, a
 * refused wait's path); the watch part measures the watchers.
 */
export const PER_FOLLOW_UP_POLLING = { AGENT_WATCH_SHARDS: '0' } as const;

export async function startBenchStack(options: {
  workMs: number;
  workerEnv?: Record<string, string>;
  sendsPerProjectPerHour?: number;
  sendLimit?: { sends: number; windowMs: number };
}): Promise<BenchStack> {
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
    // The bench measures speed, not the vendor's limit: its budgets are far above 100 an hour on purpose.
    AGENT_SENDS_ABOVE_VENDOR_LIMIT: 'true',
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    AGENT_API_BASE_URL: simulator.baseUrl,
    AGENT_API_ALLOW_LOOPBACK: 'true',
    AGENT_API_KEY: BENCH_API_KEY,
    ...options.workerEnv,
  };
  // Every worker started after the first, so that stop() leaves none behind.
  const started: WorkerProcess[] = [];
  const stack: BenchStack = {
    server,
    simulator,
    requests,
    taskQueue,
    followUps: new FollowUpClient(server.client, { taskQueue }),
    worker: startWorker(env),
    startWorker: (extraEnv = {}) => {
      const worker = startWorker({ ...env, ...extraEnv });
      started.push(worker);
      return worker;
    },
    async stop() {
      for (const worker of [stack.worker, ...started]) await stopChild(worker.child, 'SIGKILL');
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
  return (stack.requests.get(jobId) ?? [])
    .filter((request) => request.operation === operation)
    .map((request) => request.atMs);
}

/**
 * `count` jobs on the stack's simulator, named `<prefix>-<n>`, spread over projects of at most 80 (within the vendor's
 * 100 sends an hour, so none waits for the budget).
 */
export function addWaitingJobs(
  stack: BenchStack,
  prefix: string,
  count: number,
  spec: { busyForMs?: number } = {},
): Array<{ projectId: string; jobId: string }> {
  const projects = Math.max(10, Math.ceil(count / 80));
  const jobs = Array.from({ length: count }, (_, index) => ({
    projectId: `${prefix}-p${index % projects}`,
    jobId: `${prefix}-${index}`,
  }));
  for (const job of jobs) stack.simulator.addJob({ ...job, ...spec });
  return jobs;
}

export interface StartedFollowUps {
  workflowIds: string[];
  /** When each job's start call was made (epoch ms), by job id. */
  startedAt: Map<string, number>;
  /** From the first start call to the last one answered, and to the last message reaching the API (ms). */
  startedInMs: number;
  allSentInMs: number;
}

/**
 * Starts a follow-up to each job, 50 start calls in flight (as a service with a backlog would), and waits until
 * every message reached the simulator: what waits after this is N follow-ups that all sent.
 */
export async function startFollowUpsAndAwaitSends(
  stack: BenchStack,
  jobs: ReadonlyArray<{ projectId: string; jobId: string }>,
  input: Omit<FollowUpInput, 'projectId' | 'jobId'>,
  log: (line: string) => void,
): Promise<StartedFollowUps> {
  const startedAt = new Map<string, number>();
  const began = Date.now();
  const workflowIds = await inBatches(jobs, 50, async (job) => {
    startedAt.set(job.jobId, Date.now());
    return (await stack.followUps.start({ ...job, ...input })).workflowId;
  });
  const startedInMs = Date.now() - began;
  log(`${jobs.length} follow-ups started in ${(startedInMs / 1000).toFixed(1)}s; waiting for every send`);
  // A follow-up may end without sending (an ambiguous send on an overloaded machine fails safe): none to wait for.
  let ended = new Set<string>();
  const unsent = () =>
    jobs.filter(
      (job, index) => !ended.has(workflowIds[index] as string) && requestTimes(stack, job.jobId, 'send').length === 0,
    ).length;
  // 5,000 starts took up to 14 min to all send (docs/BENCHMARKS.md, bursts): the patience grows with N.
  for (
    let tick = 1, giveUpAt = Date.now() + Math.max(15 * 60_000, jobs.length * 200);
    unsent() > 0 && Date.now() < giveUpAt;
    tick += 1
  ) {
    await sleep(1_000);
    if (tick % 10 === 0) ended = await closedWorkflowIds(stack);
  }
  const allSentInMs = Date.now() - began;
  const sent = jobs.filter((job) => requestTimes(stack, job.jobId, 'send').length > 0).length;
  log(
    `${sent} of ${jobs.length} messages sent ${(allSentInMs / 1000).toFixed(1)}s after the first start; ${ended.size} follow-up(s) ended first, ${unsent()} still unsent`,
  );
  return { workflowIds, startedAt, startedInMs, allSentInMs };
}

/** The workflows on the stack's dev server that have ended (few, while follow-ups wait: a visibility query). */
async function closedWorkflowIds(stack: BenchStack): Promise<Set<string>> {
  const ids = new Set<string>();
  // Follow-ups only: a watcher's or coordinator's continue-as-new closes a run too.
  const query = `ExecutionStatus != 'Running' AND WorkflowType = '${FOLLOW_UP_WORKFLOW_TYPE}'`;
  for await (const workflow of stack.server.client.workflow.list({ query })) ids.add(workflow.workflowId);
  return ids;
}
