/**
 * A Temporal dev server spawned as a child process (`temporal server start-dev`, our search attributes registered):
 * what the benchmarks, the chaos run and the tests that crash servers share. Spawned directly rather than through
 * TestWorkflowEnvironment (whose teardown is a shutdown the SDK manages, not a crash), so a kill here is SIGKILL:
 * nothing flushed, nothing said goodbye. With `persistent`, it keeps its history in a SQLite file of its own, so it
 * can be killed and started again on the same port with its history intact.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/kernel/search-attributes';
import { findTemporalCli } from './temporal-cli';

export interface DevServerOptions {
  /** More `temporal server start-dev` arguments, e.g. `--dynamic-config-value` settings. */
  extraArgs?: string[];
  /** Keep the history in a SQLite file, across kill and restart (default: in memory, gone with the process). */
  persistent?: boolean;
  /** Serve Prometheus metrics (`service_requests` and the rest) on a port of its own. */
  metrics?: boolean;
}

export interface DevServer {
  /** host:port, the same across restarts. */
  address: string;
  /** The running server's process id (for its CPU), or null while it is down. */
  pid(): number | null;
  /** Where its metrics are, when asked for. */
  metricsUrl: string | null;
  /** SIGKILL: the server dies mid-whatever, as a crashed host would. */
  kill(): Promise<void>;
  /** Starts it again on the same port (and file, when persistent), and waits until it answers. */
  restart(): Promise<void>;
  /** Kills it (if running) and removes its files. */
  close(): Promise<void>;
  /** The server's last output lines, for a failure message. */
  tail(): string;
}

export async function startDevServer(options: DevServerOptions = {}): Promise<DevServer> {
  const cli = findTemporalCli();
  if (!cli) throw new Error('no Temporal CLI: run scripts/install/install-temporal-cli.sh or set TEMPORAL_CLI_PATH');
  const dir = options.persistent ? mkdtempSync(join(tmpdir(), 'agent-followup-dev-server-')) : null;
  const port = await freePort();
  const metricsPort = options.metrics ? await freePort() : null;
  const address = `127.0.0.1:${port}`;
  const args = [
    'server',
    'start-dev',
    '--headless',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    'default',
    '--log-level',
    'error',
    ...(dir ? ['--db-filename', join(dir, 'temporal.sqlite')] : []),
    ...(metricsPort !== null ? ['--metrics-port', String(metricsPort)] : []),
    ...FOLLOW_UP_SEARCH_ATTRIBUTES.flatMap((key) => [
      '--search-attribute',
      `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`,
    ]),
    ...(options.extraArgs ?? []),
  ];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const output: string[] = [];
  const spawnServer = async () => {
    const next = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.length > 40) output.shift();
    };
    next.stdout?.on('data', collect);
    next.stderr?.on('data', collect);
    exited = new Promise((resolve) => next.once('exit', () => resolve()));
    child = next;
    await untilAnswering(address, next, () => output.join(''));
  };
  const kill = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    child = undefined;
  };
  await spawnServer();
  return {
    address,
    pid: () => child?.pid ?? null,
    metricsUrl: metricsPort !== null ? `http://127.0.0.1:${metricsPort}/metrics` : null,
    kill,
    restart: spawnServer,
    async close() {
      await kill();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
    tail: () => output.join('').split('\n').slice(-20).join('\n'),
  };
}

/** A TCP port that was free a moment ago on loopback (for a child's listener). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Waits until the server answers for the `default` namespace (a minute at most: a guard, not a measurement). */
async function untilAnswering(address: string, child: ChildProcess, output: () => string): Promise<void> {
  const giveUpAt = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the dev server exited at start-up:\n${output()}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace: 'default' });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      if (Date.now() > giveUpAt)
        throw new Error(`the dev server at ${address} did not answer within a minute: ${String(error)}\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
