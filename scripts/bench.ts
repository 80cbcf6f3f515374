/**
 * `npm run bench [-- --follow-ups 60,300 --work-ms 2000 --report docs/BENCHMARKS.md]`: how many follow-ups one and two
 * worker processes carry, how long each takes, how the work is shared, how much memory a worker holds and how long a
 * SIGTERM drain takes. Real processes (the built worker) on a local Temporal dev server and the simulator over
 * loopback. Figures go to the report; nothing here asserts a time (tests never do).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { FollowUpClient } from '../src/client';
import { findTemporalCli } from '../src/dev/temporal-cli';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../src/follow-up/search-attributes';
import { AgentApiSimulator } from '../src/simulator/simulator';

const BENCH_API_KEY = 'mint_bench_not_a_real_key';
const WORKER_SCRIPT = join(__dirname, '..', 'src', 'worker.js');

interface RunFigures {
  workers: number;
  followUps: number;
  wallSeconds: number;
  perSecond: number;
  latencyP50: number;
  latencyP95: number;
  latencyMax: number;
  tasksByWorker: Record<string, number>;
  peakRssMiB: number[];
  drainSeconds: number[];
  historyEventsMean: number;
  sendsPerFollowUp: number;
}

interface WorkerProcess {
  identity: string;
  child: ChildProcess;
  ready: Promise<void>;
  exited: Promise<number | null>;
}

function startWorker(identity: string, env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, [WORKER_SCRIPT], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, TEMPORAL_WORKER_IDENTITY: identity },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('polling task queue')) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker ${identity} exited early (${code}):\n${output}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { identity, child, ready, exited };
}

/** Peak resident memory of a process so far (Linux), in MiB. */
function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

async function runOnce(
  env: TestWorkflowEnvironment,
  simulator: AgentApiSimulator,
  workers: number,
  followUps: number,
): Promise<RunFigures> {
  const taskQueue = `bench-${workers}w-${Date.now()}`;
  const processes = Array.from({ length: workers }, (_, index) =>
    startWorker(`bench-worker-${index + 1}`, {
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      AGENT_API_KEY: BENCH_API_KEY,
      AGENT_API_BASE_URL: simulator.baseUrl,
      // INFO: the start-up line is how the bench knows the worker is polling.
      LOG_LEVEL: 'INFO',
    }),
  );
  await Promise.all(processes.map((worker) => worker.ready));
  const client = new FollowUpClient(env.client, { taskQueue });
  const jobs = Array.from({ length: followUps }, (_, index) => ({ projectId: 'bench', jobId: `${taskQueue}-${index}` }));
  for (const job of jobs) simulator.addJob(job);

  const startedAt = performance.now();
  const latencies = await Promise.all(
    jobs.map(async (job) => {
      const began = performance.now();
      const { result } = await client.startAndWait({
        ...job,
        prompt: 'Benchmark follow-up',
        polling: { initialInterval: '500ms', backoffCoefficient: 1.5, maxInterval: '2s', timeout: '10m' },
      });
      if (result.outcome !== 'completed') throw new Error(`${job.jobId} ended ${result.outcome}`);
      return (performance.now() - began) / 1000;
    }),
  );
  const wallSeconds = (performance.now() - startedAt) / 1000;

  const tasksByWorker: Record<string, number> = {};
  let events = 0;
  for await (const execution of env.client.workflow.list({ query: `TaskQueue="${taskQueue}"` })) {
    const history = await env.client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    events += history.events?.length ?? 0;
    for (const event of history.events ?? []) {
      const identity = event.activityTaskStartedEventAttributes?.identity ?? event.workflowTaskStartedEventAttributes?.identity;
      if (identity) tasksByWorker[identity] = (tasksByWorker[identity] ?? 0) + 1;
    }
  }
  const sends = jobs.reduce((sum, job) => sum + simulator.counts(job.projectId, job.jobId).messagesAccepted, 0);

  const peaks = processes.map((worker) => peakRssMiB(worker.child.pid as number));
  const drainSeconds = await Promise.all(
    processes.map(async (worker) => {
      const began = performance.now();
      worker.child.kill('SIGTERM');
      const code = await worker.exited;
      if (code !== 0) throw new Error(`worker ${worker.identity} exited ${code} after SIGTERM`);
      return (performance.now() - began) / 1000;
    }),
  );
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    workers,
    followUps,
    wallSeconds,
    perSecond: followUps / wallSeconds,
    latencyP50: percentile(sorted, 50),
    latencyP95: percentile(sorted, 95),
    latencyMax: sorted[sorted.length - 1] ?? NaN,
    tasksByWorker,
    peakRssMiB: peaks,
    drainSeconds,
    historyEventsMean: events / followUps,
    sendsPerFollowUp: sends / followUps,
  };
}

function report(runs: RunFigures[], workMs: number): string {
  const fixed = (value: number, digits = 1) => value.toFixed(digits);
  const rows = runs.map(
    (run) =>
      `| ${run.workers} | ${run.followUps} | ${fixed(run.wallSeconds)} | ${fixed(run.perSecond, 2)} | ${fixed(run.latencyP50)} / ${fixed(run.latencyP95)} / ${fixed(run.latencyMax)} | ` +
      `${Object.entries(run.tasksByWorker).sort().map(([id, count]) => `${id}: ${count}`).join(', ')} | ${run.peakRssMiB.map((mib) => fixed(mib, 0)).join(', ')} | ` +
      `${run.drainSeconds.map((s) => fixed(s, 2)).join(', ')} | ${fixed(run.historyEventsMean, 0)} | ${fixed(run.sendsPerFollowUp, 2)} |`,
  );
  return [
    '# Benchmarks',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)}: ${cpus().length} cores, ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, one local \`temporal server start-dev\` (SQLite in memory) ` +
      'and the simulator in the same machine, worker processes built from `dist/`.',
    '',
    `Each follow-up: read, send, then polls (500ms, x1.5, up to 2s) until the simulated agent finishes after ${workMs} ms. ` +
      'All follow-ups start at once. Latency is from start to result, as a caller sees it.',
    '',
    '| workers | follow-ups | wall (s) | follow-ups/s | latency p50 / p95 / max (s) | tasks taken (workflow + activity) | peak RSS per worker (MiB) | SIGTERM drain (s) | history events per follow-up | sends per follow-up |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    'Reading it: a follow-up mostly waits on durable timers (the dev server fires them at about 1s granularity), so',
    'with few follow-ups latency is the agent time plus a poll or two whatever the number of workers. With many at',
    'once the machine is the limit: on two cores the dev server, the simulator and the workers share the same CPUs, so',
    'a second worker process mostly splits the work (see "tasks taken") and the memory, and adds throughput only as far',
    'as the shared CPUs allow; in production workers run on their own machines. Peak RSS grows with the number of',
    'follow-ups a worker holds in its workflow cache at once. "sends per follow-up" must be exactly 1.00; the drain',
    'is the time from SIGTERM to exit 0 with nothing in flight.',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'follow-ups': { type: 'string', default: '60,300' },
      'work-ms': { type: 'string', default: '2000' },
      report: { type: 'string' },
    },
  });
  const sizes = (values['follow-ups'] ?? '').split(',').map(Number);
  const workMs = Number(values['work-ms']);
  if (sizes.some((size) => !Number.isInteger(size) || size < 1) || !Number.isInteger(workMs) || workMs < 0) {
    throw new Error('--follow-ups must be whole numbers ≥ 1, comma-separated, and --work-ms a whole number ≥ 0');
  }
  const cli = findTemporalCli();
  if (!cli) throw new Error('No Temporal CLI found: run scripts/install-temporal-cli.sh or set TEMPORAL_CLI_PATH');
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      extraArgs: ['--log-level', 'error'],
      searchAttributes: [...FOLLOW_UP_SEARCH_ATTRIBUTES],
    },
  });
  const simulator = await AgentApiSimulator.start({ apiKey: BENCH_API_KEY, defaultWorkMs: workMs });
  try {
    const runs: RunFigures[] = [];
    for (const followUps of sizes) {
      for (const workers of [1, 2]) {
        const figures = await runOnce(env, simulator, workers, followUps);
        console.log(JSON.stringify(figures));
        runs.push(figures);
      }
    }
    const text = report(runs, workMs);
    if (values.report) {
      writeFileSync(values.report, text);
      console.log(`wrote ${values.report}`);
    } else {
      console.log(`\n${text}`);
    }
  } finally {
    await simulator.close();
    await env.teardown();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
