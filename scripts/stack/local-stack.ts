/**
 * A whole local stack in one process, for the demo and for recording replay histories: a Temporal dev server (the
 * official CLI), the agent API simulator and a worker. Not used in production.
 */
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { NativeConnection } from '@temporalio/worker';
import { AgentApiClient } from '../../src/agent-api/http-client';
import { FollowUpClient } from '../../src/client';
import { AgentApiSimulator, type SimulatorOptions } from '../../src/simulator/simulator';
import { createFollowUpWorker, type FollowUpWorker } from '../../src/worker/follow-up-worker';
import { findTemporalCli } from './temporal-cli';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/kernel/search-attributes';

/** Obviously fake, and only ever sent to the local simulator. */
export const LOCAL_API_KEY = 'mint_local_demo_key';

export interface LocalStack {
  env: TestWorkflowEnvironment;
  /** `host:port` of the dev server, for TEMPORAL_ADDRESS. */
  address: string;
  taskQueue: string;
  simulator: AgentApiSimulator;
  worker: FollowUpWorker;
  followUps: FollowUpClient;
  /** Awaits `work`, failing early if the worker stops. */
  run<T>(work: Promise<T>): Promise<T>;
  uiUrl?: string;
  teardown(): Promise<void>;
}

export interface LocalStackOptions {
  ui?: boolean;
  uiPort?: number;
  /** The dev server's gRPC port (default: a free one). */
  temporalPort?: number;
  taskQueue?: string;
  simulator?: SimulatorOptions;
  dbFilename?: string;
  /** More `temporal server start-dev` arguments, e.g. `--dynamic-config-value` settings. */
  serverArgs?: string[];
  /** The per-project send budget set on the sends queue (default: the production default, 80 an hour). */
  sendsPerProjectPerHour?: number;
  /** Shared job watchers per task queue (AGENT_WATCH_SHARDS; default 2, 0: each follow-up polls its own job). */
  watchShards?: number;
}

/** Starts the dev server, the simulator and a worker; throws with a fix when no Temporal CLI can be found. */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const cli = findTemporalCli();
  if (!cli) {
    throw new Error(
      'No Temporal CLI found. Run scripts/install/install-temporal-cli.sh (builds it from the Go module proxy), ' +
        'or set TEMPORAL_CLI_PATH to a `temporal` binary.',
    );
  }
  const uiPort = options.uiPort ?? 8233;
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: cli },
      ui: options.ui ?? false,
      ...(options.ui ? { uiPort } : {}),
      ...(options.temporalPort !== undefined ? { port: options.temporalPort } : {}),
      ...(options.dbFilename ? { dbFilename: options.dbFilename } : {}),
      extraArgs: ['--log-level', 'error', ...(options.serverArgs ?? [])],
      searchAttributes: [...FOLLOW_UP_SEARCH_ATTRIBUTES],
    },
  });
  const simulator = await AgentApiSimulator.start({ apiKey: LOCAL_API_KEY, ...options.simulator });
  const taskQueue = options.taskQueue ?? 'agent-followup-local';
  let worker: FollowUpWorker;
  try {
    worker = await createFollowUpWorker({
      connection: env.nativeConnection as NativeConnection,
      namespace: 'default',
      taskQueue,
      api: new AgentApiClient({ baseUrl: simulator.baseUrl, apiKey: LOCAL_API_KEY, requestTimeoutMs: 5_000 }),
      shutdownGraceTimeMs: 2_000,
      coordination: {
        ...(options.sendsPerProjectPerHour !== undefined ? { sendsPerHour: options.sendsPerProjectPerHour } : {}),
        ...(options.watchShards !== undefined ? { watchShards: options.watchShards } : {}),
      },
    });
  } catch (error) {
    await simulator.close();
    await env.teardown();
    throw error;
  }
  // A worker runs once; it serves every follow-up of this stack until teardown.
  const running = worker.run();
  const stopped = running.then(() => {
    throw new Error('the worker stopped');
  });
  stopped.catch(() => undefined);
  return {
    env,
    address: env.address,
    taskQueue,
    simulator,
    worker,
    followUps: new FollowUpClient(env.client, { taskQueue }),
    run: (work) => Promise.race([work, stopped]),
    uiUrl: options.ui ? `http://localhost:${uiPort}` : undefined,
    async teardown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await simulator.close();
      await env.teardown();
    },
  };
}
