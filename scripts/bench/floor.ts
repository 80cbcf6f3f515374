/**
 * The floor of a burst: N workflows of the simplest shape a user would write (floor/floor-workflow.ts: one activity
 * that POSTs the message) started together on the same dev server, simulator and start pace as the burst part, each
 * to a job of its own. No design whose follow-up is a workflow with its send as an activity can send a burst faster
 * on this machine than this does, so the burst targets are read against it.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { AgentApiSimulator } from '../../src/simulator/simulator';
import { BENCH_API_KEY } from './bench-stack';
import { cpuMs, requestsBetween, sleep, startDevServer, startWorker, stopChild } from './processes';
import { inBatches, mean, percentile } from './stats';

export interface FloorRow {
  workflows: number;
  startToPostP50S: number;
  startToPostP99S: number;
  /** From the first start to the last POST. */
  lastPostS: number;
  posted: number;
  cpuPerWorkflowMs: number;
  workerCpuPerWorkflowMs: number;
  serverCpuPerWorkflowMs: number;
  /** A sample's workflow tasks and history events, start to end. */
  tasksPerWorkflow: number;
  eventsPerWorkflow: number;
  temporalRequestsPerWorkflow: Record<string, number>;
}

const FLOOR_WORKER = join(__dirname, 'floor', 'floor-worker.js');

export async function runFloor(options: { workflows: number; log: (line: string) => void }): Promise<FloorRow> {
  const n = options.workflows;
  const server = await startDevServer([]);
  const posts = new Map<string, number>();
  const simulator = await AgentApiSimulator.start({
    sendsPerProjectPerHour: null,
    apiKey: BENCH_API_KEY,
    defaultWorkMs: 3_600_000,
    onRequest: (request) => {
      if (request.operation === 'send' && !posts.has(request.jobId)) posts.set(request.jobId, request.atMs);
    },
  });
  const taskQueue = `floor-${randomUUID().slice(0, 8)}`;
  const worker = startWorker(
    {
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      AGENT_API_BASE_URL: simulator.baseUrl,
      AGENT_API_KEY: BENCH_API_KEY,
    },
    FLOOR_WORKER,
  );
  try {
    await worker.ready;
    const jobs = Array.from({ length: n }, (_, index) => ({ projectId: `floor-p${index}`, jobId: `floor-${index}` }));
    for (const job of jobs) simulator.addJob(job);
    const startedAt = new Map<string, number>();
    const workerCpuBefore = cpuMs(worker.pid);
    const serverCpuBefore = cpuMs(server.pid);
    const requestsBefore = await server.serviceRequests();
    const began = Date.now();
    // As the burst part starts follow-ups: up to 200 start calls in flight.
    await inBatches(jobs, 200, async (job) => {
      startedAt.set(job.jobId, Date.now());
      await server.client.workflow.start('floorSendWorkflow', {
        taskQueue,
        workflowId: `floor/${job.jobId}`,
        args: [{ ...job, prompt: `Floor follow-up to ${job.jobId}` }],
      });
    });
    options.log(`floor ${n}: started in ${((Date.now() - began) / 1000).toFixed(1)}s`);
    const deadline = Date.now() + 30 * 60_000;
    while (posts.size < n && Date.now() < deadline) await sleep(250);
    const workerCpuMs = cpuMs(worker.pid) - workerCpuBefore;
    const serverCpuMs = cpuMs(server.pid) - serverCpuBefore;
    const requests = requestsBetween(requestsBefore, await server.serviceRequests());
    const waits = jobs.map(
      (job) => ((posts.get(job.jobId) ?? Number.NaN) - (startedAt.get(job.jobId) as number)) / 1000,
    );
    const lastPostS = (Math.max(...posts.values()) - began) / 1000;
    options.log(`floor ${n}: ${posts.size} posted, the last ${lastPostS.toFixed(1)}s after the first start`);
    const histories = await inBatches(jobs.slice(0, 30), 10, (job) =>
      server.client.workflow.getHandle(`floor/${job.jobId}`).fetchHistory(),
    );
    return {
      workflows: n,
      startToPostP50S: percentile(waits, 50),
      startToPostP99S: percentile(waits, 99),
      lastPostS,
      posted: posts.size,
      cpuPerWorkflowMs: (workerCpuMs + serverCpuMs) / n,
      workerCpuPerWorkflowMs: workerCpuMs / n,
      serverCpuPerWorkflowMs: serverCpuMs / n,
      tasksPerWorkflow: mean(
        histories.map((history) => (history.events ?? []).filter((e) => e.workflowTaskCompletedEventAttributes).length),
      ),
      eventsPerWorkflow: mean(histories.map((history) => (history.events ?? []).length)),
      temporalRequestsPerWorkflow: Object.fromEntries(
        Object.entries(requests).map(([operation, count]) => [operation, count / n]),
      ),
    };
  } finally {
    await stopChild(worker.child, 'SIGKILL');
    await simulator.close();
    await server.stop();
  }
}
