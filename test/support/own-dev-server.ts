/**
 * A Temporal dev server of a test's own, on its own port and SQLite file, that the test can SIGKILL and start again
 * with its history intact. Spawned directly rather than through TestWorkflowEnvironment (whose teardown is a shutdown
 * the SDK manages, not a crash), so a kill here is SIGKILL: nothing flushed, nothing said goodbye.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { findTemporalCli } from '../../scripts/stack/temporal-cli';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/kernel/search-attributes';
import { freePort } from './processes';

export interface OwnDevServer {
  /** host:port, the same across restarts. */
  address: string;
  /** SIGKILL: the server dies mid-whatever, as a crashed host would. */
  kill(): Promise<void>;
  /** Starts it again on the same port and file, and waits until it answers. */
  restart(): Promise<void>;
  /** Kills it (if running) and removes its database file. */
  close(): Promise<void>;
  /** The server's last output lines, for a failure message. */
  tail(): string;
}

/** Starts a dev server with the follow-up's search attributes; `extraArgs` go to `temporal server start-dev`. */
export async function startOwnDevServer(extraArgs: string[] = []): Promise<OwnDevServer> {
  const cli = findTemporalCli();
  if (!cli) throw new Error('no Temporal CLI: run scripts/install/install-temporal-cli.sh or set TEMPORAL_CLI_PATH');
  const dir = mkdtempSync(join(tmpdir(), 'agent-followup-own-server-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    'default',
    '--db-filename',
    join(dir, 'temporal.sqlite'),
    '--headless',
    '--log-level',
    'error',
    ...FOLLOW_UP_SEARCH_ATTRIBUTES.flatMap((key) => [
      '--search-attribute',
      `${key.name}=${TypedSearchAttributes.toMetadataType(key.type)}`,
    ]),
    ...extraArgs,
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
    kill,
    restart: spawnServer,
    async close() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
    tail: () => output.join('').split('\n').slice(-20).join('\n'),
  };
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
