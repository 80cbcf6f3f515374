/**
 * What each integration test file needs: a connection to the run's dev server, the shared workflow bundle, a
 * simulator on loopback, and workers on a task queue of the test's own.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { AgentApiClient } from '../../src/agent-api/http-client';
import { FollowUpClient } from '../../src/client';
import { AgentApiSimulator, type SimulatorOptions } from '../../src/simulator/simulator';
import {
  createFollowUpWorker,
  type FollowUpWorker,
  type FollowUpWorkerOptions,
} from '../../src/worker/follow-up-worker';
import { installQuietRuntime } from './quiet-runtime';
import { createTicketSealer, TICKET_KEY_PURPOSE } from '../../src/coordinator/ticket-seal.activity';

export { TEST_SERVER_CONTINUE_AS_NEW_AFTER, TEST_SERVER_HISTORY_LIMIT } from './server-limits';

export const TEST_API_KEY = 'mint_test_not_a_real_key_0001';

/**
 * The ticket the test workers (TEST_API_KEY) seal for a follow-up chain: for tests that check in by hand, as only
 * someone holding the workers' agent API key could.
 */
export function sealedTicket(workflowId: string, firstRunId: string): string {
  const key = new AgentApiClient({ baseUrl: 'http://127.0.0.1', apiKey: TEST_API_KEY, requestTimeoutMs: 1_000 });
  return createTicketSealer(key.derivedKey(TICKET_KEY_PURPOSE)).seal(workflowId, firstRunId);
}

export interface Harness {
  client: Client;
  nativeConnection: NativeConnection;
  simulator: AgentApiSimulator;
  /** A fresh task queue (and id prefix) for one test. */
  taskQueue(): string;
  /** A worker on `taskQueue` whose activities call the simulator (or `api` when given). */
  worker(taskQueue: string, api?: AgentApiClient, options?: Partial<FollowUpWorkerOptions>): Promise<FollowUpWorker>;
  followUps(taskQueue: string): FollowUpClient;
  /**
   * The coordinator task queue of this test file's workers: its own, so no other file's worker runs its
   * coordinators (every worker of a real namespace shares one).
   */
  coordinatorTaskQueue: string;
  /** The environment a worker process needs to share this file's coordinators. */
  workerEnv(): {
    AGENT_COORDINATOR_TASK_QUEUE: string;
    AGENT_NOTIFY_ALLOW_LOOPBACK: string;
    AGENT_API_ALLOW_LOOPBACK: string;
  };
  api(overrides?: Partial<ConstructorParameters<typeof AgentApiClient>[0]>): AgentApiClient;
  close(): Promise<void>;
}

/** Connects to the run's dev server and starts a simulator; call once per test file (beforeAll). */
export async function createHarness(
  simulatorOptions: SimulatorOptions = {},
  server: { address?: string } = {},
): Promise<Harness> {
  const address = server.address ?? process.env.TEST_TEMPORAL_ADDRESS;
  const bundlePath = process.env.TEST_WORKFLOW_BUNDLE;
  if (!address || !bundlePath)
    throw new Error('integration tests need the jest globalSetup (run them with `npm test`)');
  installQuietRuntime();
  const connection = await Connection.connect({ address });
  const nativeConnection = await NativeConnection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });
  // As the vendor: a repeated Idempotency-Key is processed again (a test of a key's use turns that on itself).
  const simulator = await AgentApiSimulator.start({
    apiKey: TEST_API_KEY,
    defaultWorkMs: 300,
    ...simulatorOptions,
  });
  const api = (overrides: Partial<ConstructorParameters<typeof AgentApiClient>[0]> = {}) =>
    new AgentApiClient({ baseUrl: simulator.baseUrl, apiKey: TEST_API_KEY, requestTimeoutMs: 5_000, ...overrides });
  const coordinatorTaskQueue = `test-coordinators-${randomUUID()}`;
  return {
    client,
    nativeConnection,
    simulator,
    coordinatorTaskQueue,
    // The simulator and the tests' callback receivers listen on this machine, which a worker refuses unless told
    // (address-guard.ts).
    workerEnv: () => ({
      AGENT_COORDINATOR_TASK_QUEUE: coordinatorTaskQueue,
      AGENT_NOTIFY_ALLOW_LOOPBACK: 'true',
      AGENT_API_ALLOW_LOOPBACK: 'true',
    }),
    taskQueue: () => `test-${randomUUID()}`,
    worker: (taskQueue, customApi, options = {}) =>
      createFollowUpWorker({
        connection: nativeConnection,
        namespace: 'default',
        taskQueue,
        api: customApi ?? api(),
        workflowBundle: { codePath: bundlePath },
        shutdownGraceTimeMs: 2_000,
        ...options,
        coordination: { taskQueue: coordinatorTaskQueue, ...options.coordination },
      }),
    followUps: (taskQueue) => new FollowUpClient(client, { taskQueue, coordinatorTaskQueue }),
    api,
    async close() {
      await simulator.close();
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/** Unique ids so tests never share a job or a workflow. */
export function uniqueJob(prefix = 'job'): { projectId: string; jobId: string } {
  const id = randomUUID().slice(0, 8);
  return { projectId: `proj-${id}`, jobId: `${prefix}-${id}` };
}

/** Polling fast enough for tests; the behaviour is the same as with production intervals. */
export const FAST_POLLING = {
  initialInterval: 100,
  backoffCoefficient: 1.5,
  maxInterval: 400,
  timeout: '2m',
  // Test agents finish within one poll, so an unchanged result (no-changes, failed) is accepted after this.
  settleWindow: '2s',
} as const;

/** Waits until `condition` holds, checking every 50 ms; fails after `deadlineMs` (a guard, not a timing assertion). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  deadlineMs = 60_000,
): Promise<void> {
  const giveUpAt = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > giveUpAt) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
