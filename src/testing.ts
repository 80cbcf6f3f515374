/**
 * `agent-followup/testing`: what a service's own tests need, in one call (`startTestStack`: a Temporal dev server with
 * the follow-up's search attributes, the agent API simulator and a follow-up worker), or the simulator alone
 * (`startAgentApiSimulator`), the same one this project's tests, demo and compose stack use. It speaks the vendor's API over real HTTP on loopback: script jobs (how long the agent works,
 * how the job ends, its pull request) and faults (status codes, latency, dropped connections, 429s), then read what
 * it saw. Point a worker's AgentApiClient at `url`; any admin key of the documented form (`mint_` and 8+ characters)
 * is accepted unless `apiKey` asks for one exact key. As strict as the vendor unless an option says otherwise: 100
 * sends per project per rolling hour, no `Idempotency-Key` honoured, the non-admin key kinds refused.
 */
import './peers/testing-peers';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogLevel } from '@temporalio/worker';
import { AgentApiClient } from './agent-api/http-client';
import { FollowUpClient } from './client';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from './kernel/search-attributes';
import { createFollowUpWorker, type FollowUpWorker } from './worker/follow-up-worker';
import { AgentApiSimulator, type SimulatedRequest, type SimulatorOptions } from './simulator/simulator';
import { temporal } from '@temporalio/proto';
import type { DataConverter, Duration } from '@temporalio/common';
import { findTemporalCli, findTemporalTestServer, testServerMissing } from './temporal-cli';
import { installQuietRuntime } from './worker/connection';
import { relevel } from './observability/logging';

export {
  AgentApiSimulator,
  type JobCounts,
  type SimulatedRequest,
  type SimulatorOptions,
  type SimulatorStats,
} from './simulator/simulator';
export type { FaultRule, SimulatedFault, SimulatedJobSpec, SimulatedOutcome } from './simulator/simulator';

export interface TestAgentApi extends AgentApiSimulator {
  /** `http://127.0.0.1:<port>`: the base URL for AgentApiClient. */
  readonly url: string;
  /** Every request it answered, in order (operation, project, job, time). */
  readonly requests: SimulatedRequest[];
}

/** Starts a simulator on a free loopback port; `await api.close()` when done. */
export async function startAgentApiSimulator(options: SimulatorOptions = {}): Promise<TestAgentApi> {
  const requests: SimulatedRequest[] = [];
  const simulator = await AgentApiSimulator.start({
    ...options,
    onRequest: (request) => {
      requests.push(request);
      options.onRequest?.(request);
    },
  });
  return Object.assign(simulator, { url: simulator.baseUrl, requests });
}

export interface TestStackOptions {
  /** The simulator's options (jobs, faults, its rate limit, …); its key is the stack's own. */
  simulator?: Omit<SimulatorOptions, 'apiKey'>;
  /** The Temporal CLI binary; by default TEMPORAL_CLI_PATH, `temporal` on PATH, or this project's cache of it. */
  temporalCliPath?: string;
  /**
   * The SDK's log level (default WARN: the stack says nothing unless something is wrong). The follow-ups' own endings
   * and failed attempts, which a test asserts on, and the time-skipping server's missing heartbeat capability are
   * logged at DEBUG: `logLevel: 'DEBUG'` shows them.
   */
  logLevel?: LogLevel;
  /**
   * Run on Temporal's time-skipping test server instead of the dev server: while a test awaits a follow-up's outcome
   * (or `stack.sleep`), the server jumps over timers, so an hour-long timeout ends in seconds. The server is
   * `TEMPORAL_TEST_SERVER_PATH`, or the cache scripts/install/install-temporal-test-server.sh fills (the Java build from
   * Maven Central), else the SDK's download. It has no visibility, so what lists follow-ups (`list`, `status` by
   * search attributes, the Web UI) and the check for an earlier run's message are not there (docs/LIBRARY.md#testing).
   */
  timeSkipping?: boolean | { testServerPath?: string };
  /**
   * The payload codecs of the stack's client and worker, as in production: `dataConverterFromEnvironment()` (or
   * `{ payloadCodecs: [new AesGcmPayloadCodec(keys)] }`) tests your service with encrypted payloads.
   */
  dataConverter?: Pick<DataConverter, 'payloadCodecs'>;
  /** The worker's AGENT_NOTIFY_SECRET, to test your callback receiver (`notify`) against signed callbacks. */
  notifySecret?: string;
}

export interface TestStack {
  /** A client on the stack's server and its worker's task queue. */
  readonly followUps: FollowUpClient;
  /** The simulator the worker talks to: seed jobs, script faults, read what it saw. */
  readonly api: TestAgentApi;
  /** The dev server's address (host:port), for clients of your own. */
  readonly address: string;
  readonly taskQueue: string;
  readonly worker: FollowUpWorker;
  /** Whether the server skips time (`timeSkipping`). */
  readonly timeSkipping: boolean;
  /** Lets `duration` pass: skipped on the time-skipping server, waited out in real time on the dev server. */
  sleep(duration: Duration): Promise<void>;
  /** Stops the worker, the simulator and the dev server. */
  close(): Promise<void>;
}

/**
 * Starts a Temporal dev server (the official CLI's `temporal server start-dev`, with the follow-up's search
 * attributes), the agent API simulator and a follow-up worker between them, running until `close()`. A test then
 * starts follow-ups with `stack.followUps` as a service would. It takes a few seconds: start one per test file.
 * Without a local CLI the SDK downloads one (that needs the internet); when it cannot, the error says what to install
 * or set.
 */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  installQuietRuntime(
    relevel(new DefaultLogger(options.logLevel ?? 'WARN'), (level, message) =>
      ASSERTED_BY_TESTS.some((pattern) => pattern.test(message)) ? 'DEBUG' : level,
    ),
  );
  const timeSkipping = options.timeSkipping !== undefined && options.timeSkipping !== false;
  const client = options.dataConverter ? { client: { dataConverter: options.dataConverter } } : {};
  const env = timeSkipping
    ? await startTimeSkippingServer(options.timeSkipping, client)
    : await startDevServer(options.temporalCliPath, client);
  const apiKey = `mint_test_stack_${randomUUID().replace(/-/g, '')}`;
  let api: TestAgentApi | undefined;
  try {
    // On the time-skipping server the agent works in the server's time, so an hour of work passes as fast as the
    // follow-up's timers do; the clock is read as each request arrives.
    let serverNowMs = timeSkipping ? await env.currentTimeMs() : 0;
    const clock = timeSkipping
      ? {
          now: () => serverNowMs,
          beforeRequest: async () => {
            serverNowMs = Math.max(serverNowMs, await env.currentTimeMs());
          },
        }
      : {};
    api = await startAgentApiSimulator({ ...options.simulator, ...clock, apiKey });
    const taskQueue = `agent-followup-test-${randomUUID()}`;
    const worker = await createFollowUpWorker({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      api: new AgentApiClient({ baseUrl: api.url, apiKey, requestTimeoutMs: 5_000 }),
      // Its own coordinators' task queue, so two stacks on one server never share a project's budget.
      // The test server skips timers, not a watcher's reading (one long activity in real time): there each polls itself.
      coordination: { taskQueue: `${taskQueue}-coordinators`, ...(timeSkipping ? { watchShards: 0 } : {}) },
      shutdownGraceTimeMs: 1_000,
      ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
      // Its receivers are the test's own, on this machine: loopback is allowed here, and only here, by default.
      ...(options.notifySecret ? { notify: { secret: options.notifySecret, allowLoopback: true } } : {}),
      // The test server skips timers, not sleeps inside an activity: every wait goes on the retry timer there. It
      // cannot list search attributes either; startTimeSkippingServer registered them.
      ...(timeSkipping ? { maxPollLoops: 0, checkNamespace: false } : {}),
    });
    const running = worker.run();
    const followUps = new FollowUpClient(env.client, { taskQueue, coordinatorTaskQueue: `${taskQueue}-coordinators` });
    const simulator = api;
    return {
      followUps,
      api: simulator,
      address: env.address,
      taskQueue,
      worker,
      timeSkipping,
      sleep: (duration) => env.sleep(duration),
      async close() {
        worker.shutdown();
        await running.catch(() => undefined);
        await simulator.close();
        await env.teardown();
      },
    };
  } catch (error) {
    await api?.close();
    await env.teardown();
    throw error;
  }
}

/** The stack's client options: its data converter, when the stack has one. */
type ClientOption = { client?: { dataConverter: Pick<DataConverter, 'payloadCodecs'> } };

/** `temporal server start-dev` with the follow-up's search attributes. */
async function startDevServer(
  temporalCliPath: string | undefined,
  client: ClientOption,
): Promise<TestWorkflowEnvironment> {
  const cli = temporalCliPath ?? findTemporalCli();
  try {
    return await TestWorkflowEnvironment.createLocal({
      ...client,
      server: {
        ...(cli ? { executable: { type: 'existing-path' as const, path: cli } } : {}),
        // Not even its errors: on a loaded machine it logs "Frontend is not healthy yet" at ERROR while the SDK asks
        // whether it is up, and "context canceled" as it stops, into the output of a test that passes. A server that
        // does not come up fails createLocal all the same.
        extraArgs: ['--log-level', 'never', '--output', 'none'],
        searchAttributes: [...FOLLOW_UP_SEARCH_ATTRIBUTES],
      },
    });
  } catch (error) {
    // Without a CLI of its own the SDK downloads one from temporal.download: offline, its error says only that.
    if (cli) throw error;
    throw new Error(NO_TEMPORAL_CLI(error instanceof Error ? error.message : String(error)));
  }
}

/**
 * What a passing test would otherwise print at WARN: a follow-up ending as the test arranged (timed out, rejected, a
 * job that failed), the attempts its injected faults fail, and the time-skipping server's lack of a capability the dev
 * server has (it keeps heartbeat details on failure; docs/LIBRARY.md#testing says what that changes).
 */
const ASSERTED_BY_TESTS = [
  /^Follow-up ended without a result/,
  /^Workflow failed$/,
  /^Activity failed$/,
  /^Temporal Server 1\.16\.0 or newer is required/,
];

/** The one message for a machine without the Temporal CLI where the SDK could not download it either. */
const NO_TEMPORAL_CLI = (cause: string) =>
  'startTestStack needs the Temporal CLI (`temporal server start-dev`). None was found (TEMPORAL_CLI_PATH, ' +
  '`temporal` on PATH, ~/.cache/agent-followup), and the SDK could not download one (' +
  cause.split('\n')[0] +
  '). Install it (https://docs.temporal.io/cli#install; offline with Go from a module proxy: ' +
  '`GOBIN=$HOME/.local/bin go install github.com/temporalio/cli/cmd/temporal@v1.5.1`) and put it on PATH, or set ' +
  'TEMPORAL_CLI_PATH to a `temporal` binary.';

/** Temporal's time-skipping test server, with the follow-up's search attributes registered through its operator API. */
async function startTimeSkippingServer(
  option: TestStackOptions['timeSkipping'],
  client: ClientOption,
): Promise<TestWorkflowEnvironment> {
  const path = (typeof option === 'object' ? option.testServerPath : undefined) ?? findTemporalTestServer();
  const env = await TestWorkflowEnvironment.createTimeSkipping({
    ...client,
    ...(path ? { server: { executable: { type: 'existing-path', path } } } : {}),
  }).catch((error: unknown) => {
    throw path ? error : testServerMissing(error);
  });
  try {
    const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(FOLLOW_UP_SEARCH_ATTRIBUTES.map((attribute) => [attribute.name, keyword])),
    });
    return env;
  } catch (error) {
    await env.teardown();
    throw error;
  }
}
