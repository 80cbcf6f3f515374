/** The processes a benchmark runs and measures: a Temporal dev server and worker processes, read from /proc. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startDevServer as startSharedDevServer } from '../stack/dev-server';

/** CPU time (user + system) a process has used so far, in ms. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export interface CpuWindow<K extends string> {
  fromMs: number;
  toMs: number;
  /** CPU (ms) each process used in the window. */
  usedMs: Record<K, number>;
}

/** Sleeps through a window of `windowMs` and reports the CPU each of the named processes used in it. */
export async function cpuOverWindow<K extends string>(
  pids: Record<K, number>,
  windowMs: number,
): Promise<CpuWindow<K>> {
  const names = Object.keys(pids) as K[];
  const fromMs = Date.now();
  const before = names.map((name) => cpuMs(pids[name]));
  await sleep(windowMs);
  const usedMs = Object.fromEntries(
    names.map((name, index) => [name, cpuMs(pids[name]) - (before[index] as number)]),
  ) as Record<K, number>;
  return { fromMs, toMs: Date.now(), usedMs };
}

/** Resident memory of a process now, in MiB. */
export function rssMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

/** Peak resident memory of a process so far, in MiB. */
export function peakRssMiB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

export interface DevServer {
  pid: number;
  address: string;
  client: Client;
  /**
   * The requests the server's frontend has taken in namespace `default` so far, by operation (its `service_requests`
   * metric): what clients and workers asked of Temporal, the closest a dev server comes to what Cloud bills.
   */
  serviceRequests(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

/** A dev server in memory (scripts/stack/dev-server.ts), with a client and its request counts, for a bench's figures. */
export async function startDevServer(extraArgs: string[] = []): Promise<DevServer> {
  const server = await startSharedDevServer({ extraArgs, metrics: true });
  const connection = await Connection.connect({ address: server.address });
  return {
    pid: server.pid() as number,
    address: server.address,
    client: new Client({ connection, namespace: 'default' }),
    serviceRequests: () => frontendRequests(server.metricsUrl as string),
    async stop() {
      await connection.close();
      await server.close();
    },
  };
}

const SERVICE_REQUEST = /^service_requests\{([^}]*)\}\s+([0-9.e+]+)$/;

async function frontendRequests(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(url)).text();
  const counts: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = SERVICE_REQUEST.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries(
      [...(match[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]),
    );
    if (labels.service_name !== 'frontend' || labels.namespace !== 'default' || !labels.operation) continue;
    counts[labels.operation] = (counts[labels.operation] ?? 0) + Number(match[2]);
  }
  return counts;
}

/** What `after` has more of than `before`, per operation. */
export function requestsBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([operation, count]) => [operation, count - (before[operation] ?? 0)])
      .filter(([, count]) => (count as number) > 0),
  );
}

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** When the worker said it polls its task queue (epoch ms). */
  ready: Promise<number>;
}

const WORKER_SCRIPT = join(__dirname, '..', '..', 'src', 'worker.js');

/**
 * The built worker (`node dist/src/worker.js`), configured only through its environment, as in production; or another
 * worker `script` that says "polling task queue" once it runs.
 */
export function startWorker(env: Record<string, string>, script = WORKER_SCRIPT): WorkerProcess {
  const child = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'INFO', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
      if (output.includes('polling task queue')) resolve(Date.now());
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the worker exited early (${code}):\n${output.slice(-3_000)}`)));
  });
  ready.catch(() => undefined);
  return { child, pid: child.pid as number, ready };
}

export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await exited;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export { freePort } from '../stack/dev-server';
