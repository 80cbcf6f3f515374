/**
 * N long-waiting follow-ups on one worker process, polling every 10 s (or 60 s, the default cap), beside the vendor's
 * loop (every 5 s) for the same N in one process: memory, CPU per idle poll, how late polls run, how soon each message
 * goes out.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { AgentApiSimulator, type SimulatedRequest } from '../../src/simulator/simulator';
import {
  BENCH_API_KEY,
  PER_FOLLOW_UP_POLLING,
  requestTimes,
  startBenchStack,
  startFollowUpsAndAwaitSends,
} from './bench-stack';
import { eventMs, fetchHistories } from './history';
import { cpuOverWindow, peakRssMiB, sleep, stopChild } from './processes';
import { HOUR_MS, percentile } from './stats';

export interface SizeRow {
  n: number;
  /** How often ours polls: 10 s loops inside an activity; 60 s (the default cap) is each poll on the retry timer. */
  intervalMs: number;
  ours: {
    peakRssMiB: number;
    cpuPerPollMs: number;
    workerCpuPerPollMs: number;
    serverCpuPerPollMs: number;
    polls: number;
    latenessP50Ms: number;
    latenessP99Ms: number;
    firstSendP50S: number;
    firstSendP99S: number;
    firstSendMaxS: number;
    firstWorkflowTaskP50Ms: number;
    firstWorkflowTaskP99Ms: number;
    /** The same for the N follow-ups started together, queueing behind each other. */
    firstWorkflowTaskUnderLoadP50Ms: number;
    sentExactlyOnce: number;
  };
  /** Not measured again for a row that repeats an N at another interval of ours. */
  vendor: VendorFigures | null;
}

export interface VendorFigures {
  peakRssMiB: number;
  cpuPerPollMs: number;
  polls: number;
  latenessP50Ms: number;
  latenessP99Ms: number;
  /** What one waiter costs per hour of waiting: CPU (s) and GETs (720 at 5 s, less any lateness). */
  cpuPerWaiterHourS: number;
  getsPerWaiterHour: number;
}

const VENDOR_INTERVAL_MS = 5_000;
/** Ours polls at a fixed interval, so every poll of the window is an idle poll of the same kind. */
const pollingEvery = (intervalMs: number) =>
  ({ initialInterval: intervalMs, backoffCoefficient: 1, maxInterval: intervalMs, timeout: '2h' }) as const;

export async function runSize(options: {
  n: number;
  intervalMs: number;
  windowMs: number;
  withVendor: boolean;
  workerEnv?: Record<string, string>;
  log: (line: string) => void;
}): Promise<SizeRow> {
  const ours = await measureOurs(options);
  const vendor = options.withVendor ? await measureVendor(options) : null;
  return { n: options.n, intervalMs: options.intervalMs, ours, vendor };
}

async function measureOurs({
  n,
  intervalMs,
  windowMs,
  workerEnv,
  log,
}: {
  n: number;
  intervalMs: number;
  windowMs: number;
  workerEnv?: Record<string, string>;
  log: (line: string) => void;
}): Promise<SizeRow['ours']> {
  const POLLING = pollingEvery(intervalMs);
  const stack = await startBenchStack({
    workMs: 24 * 3_600_000,
    workerEnv: { WORKER_MAX_CONCURRENT_ACTIVITIES: String(n + 200), ...PER_FOLLOW_UP_POLLING, ...workerEnv },
  });
  try {
    const jobs = Array.from({ length: n }, (_, index) => ({ projectId: 'bench-size', jobId: `size-${n}-${index}` }));
    for (const job of jobs) stack.simulator.addJob(job);
    const { workflowIds, startedAt } = await startFollowUpsAndAwaitSends(
      stack,
      jobs,
      { prompt: 'A long-waiting follow-up', polling: POLLING },
      (line) => log(`sizes: N=${n}: ${line}`),
    );
    await sleep(2 * intervalMs + 5_000);

    const {
      fromMs: from,
      toMs: to,
      usedMs,
    } = await cpuOverWindow({ worker: stack.worker.pid, server: stack.server.pid }, windowMs);
    const gets = jobs.flatMap((job) => requestTimes(stack, job.jobId, 'get').filter((at) => at >= from && at <= to));
    const lateness = jobs.flatMap((job) =>
      gapsIn(requestTimes(stack, job.jobId, 'get'), from, to).map((gap) => gap - intervalMs),
    );
    const firstSends = jobs.map(
      (job) =>
        ((requestTimes(stack, job.jobId, 'send')[0] ?? Number.NaN) - (startedAt.get(job.jobId) ?? Number.NaN)) / 1000,
    );
    const firstTasksUnderLoad = await firstWorkflowTaskMs(
      stack.server.client,
      workflowIds.filter((_, index) => index % Math.max(1, Math.floor(n / 100)) === 0),
    );
    // One at a time, with the N others waiting: what a new follow-up's first task costs, without a queue ahead of it.
    const alone: string[] = [];
    for (let index = 0; index < 20; index += 1) {
      const job = { projectId: 'bench-size', jobId: `alone-${n}-${index}` };
      stack.simulator.addJob(job);
      alone.push((await stack.followUps.start({ ...job, prompt: 'One more', polling: POLLING })).workflowId);
      for (
        const giveUpAt = Date.now() + 60_000;
        requestTimes(stack, job.jobId, 'send').length === 0 && Date.now() < giveUpAt;
      )
        await sleep(50);
    }
    const firstTasks = await firstWorkflowTaskMs(stack.server.client, alone);
    return {
      peakRssMiB: peakRssMiB(stack.worker.pid),
      cpuPerPollMs: (usedMs.worker + usedMs.server) / gets.length,
      workerCpuPerPollMs: usedMs.worker / gets.length,
      serverCpuPerPollMs: usedMs.server / gets.length,
      polls: gets.length,
      latenessP50Ms: percentile(lateness, 50),
      latenessP99Ms: percentile(lateness, 99),
      firstSendP50S: percentile(firstSends, 50),
      firstSendP99S: percentile(firstSends, 99),
      firstSendMaxS: Math.max(...firstSends),
      firstWorkflowTaskP50Ms: percentile(firstTasks, 50),
      firstWorkflowTaskP99Ms: percentile(firstTasks, 99),
      firstWorkflowTaskUnderLoadP50Ms: percentile(firstTasksUnderLoad, 50),
      sentExactlyOnce: jobs.filter((job) => stack.simulator.counts(job.projectId, job.jobId).messagesAccepted === 1)
        .length,
    };
  } finally {
    await stack.stop();
  }
}

/** The vendor's loop for N jobs in one process of its own, every 5 s: its CPU, memory and GETs in a steady window. */
export async function measureVendor({
  n,
  windowMs,
  log,
}: {
  n: number;
  windowMs: number;
  log: (line: string) => void;
}): Promise<VendorFigures> {
  const requests = new Map<string, number[]>();
  const simulator = await AgentApiSimulator.start({
    // Many sends to one project on purpose: the vendor's hourly limit is not what this measures.
    sendsPerProjectPerHour: null,
    apiKey: BENCH_API_KEY,
    defaultWorkMs: 24 * 3_600_000,
    onRequest: (request: SimulatedRequest) => {
      if (request.operation !== 'get') return;
      const list = requests.get(request.jobId);
      if (list) list.push(request.atMs);
      else requests.set(request.jobId, [request.atMs]);
    },
  });
  const jobIds = Array.from({ length: n }, (_, index) => `vendor-${n}-${index}`);
  for (const jobId of jobIds) simulator.addJob({ projectId: 'bench-size', jobId });
  const settleMs = 2 * VENDOR_INTERVAL_MS + 5_000;
  // The job list goes in on stdin: at 10,000 jobs it is past the size an environment variable may have (E2BIG).
  const child = spawn(process.execPath, [join(__dirname, 'vendor-loop.js')], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.stdin?.end(
    JSON.stringify({
      baseUrl: simulator.baseUrl,
      apiKey: BENCH_API_KEY,
      projectId: 'bench-size',
      jobIds,
      intervalMs: VENDOR_INTERVAL_MS,
      durationMs: settleMs + windowMs + 10_000,
    }),
  );
  try {
    await sleep(settleMs);
    const { fromMs: from, toMs: to, usedMs } = await cpuOverWindow({ vendor: child.pid as number }, windowMs);
    const used = usedMs.vendor;
    const peak = peakRssMiB(child.pid as number);
    const gets = jobIds.flatMap((jobId) => (requests.get(jobId) ?? []).filter((at) => at >= from && at <= to));
    const lateness = jobIds.flatMap((jobId) =>
      gapsIn(requests.get(jobId) ?? [], from, to).map((gap) => gap - VENDOR_INTERVAL_MS),
    );
    log(`the vendor's loop at N=${n} measured`);
    const waiterHours = (n * (to - from)) / HOUR_MS;
    return {
      peakRssMiB: peak,
      cpuPerPollMs: used / gets.length,
      polls: gets.length,
      latenessP50Ms: percentile(lateness, 50),
      latenessP99Ms: percentile(lateness, 99),
      cpuPerWaiterHourS: used / 1000 / waiterHours,
      getsPerWaiterHour: gets.length / waiterHours,
    };
  } finally {
    await stopChild(child, 'SIGKILL');
    await simulator.close();
  }
}

/** Gaps between consecutive times that both fall in [from, to]. */
export function gapsIn(times: number[], from: number, to: number): number[] {
  const inside = times.filter((at) => at >= from && at <= to);
  return inside.slice(1).map((at, index) => at - (inside[index] as number));
}

/** How long each follow-up's first workflow task ran (started → completed, server times), in ms. */
async function firstWorkflowTaskMs(client: Client, workflowIds: string[]): Promise<number[]> {
  const results = (await fetchHistories(client, workflowIds)).map((events) => {
    const started = events.find((event) => event.workflowTaskStartedEventAttributes);
    const completed = events.find((event) => event.workflowTaskCompletedEventAttributes);
    return started && completed ? eventMs(completed) - eventMs(started) : Number.NaN;
  });
  return results.filter(Number.isFinite);
}
