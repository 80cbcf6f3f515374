/**
 * The worker: `npm run worker`. Configuration comes from the environment (see the README's table); the API key is
 * read here and handed to the activities, so it never enters workflow input, history or logs.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, type Logger, type WorkerOptions } from '@temporalio/worker';
import { createActivities, jobLogAttributesInterceptor } from './activities';
import { AgentApiClient } from './agent-api/http-client';
import { ConfigError, loadWorkerConfig, type WorkerConfig } from './config';
import { apiKeySecrets, createLineLogger } from './observability/logging';
import { workerRuntimeOptions } from './observability/runtime';
import { checkSearchAttributes, searchAttributeFix } from './search-attribute-check';
import { WORKER_DEFAULTS } from './worker-defaults';

export interface FollowUpWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  api: AgentApiClient;
  /** A prebuilt bundle; by default the one `npm run build` writes, else the workflows are bundled at start-up. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  shutdownGraceTimeMs?: number;
  identity?: string;
  /** Workflows kept in memory between their tasks; see WORKER_DEFAULTS. */
  maxCachedWorkflows?: number;
  /** Activities at once; a frequent-polling wait holds one for its whole loop. */
  maxConcurrentActivities?: number;
}

/** Where `npm run build` puts the prebuilt workflow bundle (dist/workflow-bundle.js). */
export const PREBUILT_BUNDLE_PATH = join(__dirname, '..', 'workflow-bundle.js');

/** The prebuilt bundle when there is one (production), else the workflow sources to bundle now (development). */
function workflowCode(options: FollowUpWorkerOptions): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  if (options.workflowBundle) return { workflowBundle: options.workflowBundle };
  if (existsSync(PREBUILT_BUNDLE_PATH)) return { workflowBundle: { codePath: PREBUILT_BUNDLE_PATH } };
  return { workflowsPath: require.resolve('./workflows') };
}

/**
 * Creates a worker that runs the follow-up workflow and its activities on one task queue. It uses whatever Runtime
 * the process has: `main` installs ours (logger, metrics); tests install their own.
 */
export async function createFollowUpWorker(options: FollowUpWorkerOptions): Promise<Worker> {
  const stopping = new AbortController();
  const worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...(options.identity ? { identity: options.identity } : {}),
    activities: createActivities({
      api: options.api,
      temporal: new Client({ connection: options.connection, namespace: options.namespace }),
      stopping: stopping.signal,
    }),
    interceptors: { activity: [jobLogAttributesInterceptor] },
    ...workflowCode(options),
    maxCachedWorkflows: options.maxCachedWorkflows ?? WORKER_DEFAULTS.maxCachedWorkflows,
    stickyQueueScheduleToStartTimeout: WORKER_DEFAULTS.stickyQueueScheduleToStartTimeout,
    maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? WORKER_DEFAULTS.maxConcurrentActivities,
    // The SDK's default of 0 would cancel in-flight HTTP calls at once on SIGTERM; let them finish instead.
    shutdownGraceTime: options.shutdownGraceTimeMs ?? 30_000,
  });
  // Long waits end their loop as soon as the worker begins to stop, so another worker carries them on at once
  // instead of after the grace time (a send, meanwhile, is left to finish).
  const watch = setInterval(() => {
    const state = worker.getState();
    if (state !== 'INITIALIZED' && state !== 'RUNNING') {
      stopping.abort();
      clearInterval(watch);
    }
  }, 250);
  watch.unref();
  return worker;
}

/** Everything no log line may contain: the agent API key (whole and its secret part) and a Temporal API key. */
function secretsOf(config: WorkerConfig): string[] {
  const temporalApiKey = config.temporal.connectionOptions.apiKey;
  return [...apiKeySecrets(config.agentApi.apiKey), ...(typeof temporalApiKey === 'string' ? [temporalApiKey] : [])];
}

/** Set once the Runtime is installed, so a later failure is reported in the configured format. */
let processLogger: Logger | undefined;

async function main(): Promise<void> {
  const config = loadWorkerConfig();
  const logger = createLineLogger({
    format: config.observability.logFormat,
    level: config.observability.logLevel,
    secrets: secretsOf(config),
  });
  // Once per process and before any connection: Core takes its logging and metrics exporter from here.
  try {
    Runtime.install(workerRuntimeOptions(config.observability, logger));
  } catch (error) {
    // In practice: the metrics address is taken (another worker on this host?) or not ours to bind.
    throw new Error(
      `could not start the Temporal runtime${config.observability.metricsAddress ? ` with metrics on WORKER_METRICS_ADDRESS=${config.observability.metricsAddress}` : ''}: ` +
        (error instanceof Error ? error.message : String(error)),
    );
  }
  processLogger = logger;
  const connection = await NativeConnection.connect(config.temporal.connectionOptions);
  try {
    const attributes = await checkSearchAttributes(connection.operatorService, config.temporal.namespace);
    if (attributes.ok === false) throw new ConfigError(searchAttributeFix(config.temporal.namespace, attributes.problems));
    if (attributes.ok === 'unknown') {
      logger.warn('Could not check the namespace for the follow-up search attributes; make sure they are registered', {
        namespace: config.temporal.namespace,
        reason: attributes.reason,
      });
    }
    const worker = await createFollowUpWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      api: new AgentApiClient(config.agentApi),
      shutdownGraceTimeMs: config.shutdownGraceTimeMs,
      maxCachedWorkflows: config.maxCachedWorkflows,
      maxConcurrentActivities: config.maxConcurrentActivities,
      identity: config.identity,
    });
    logger.info(
      `agent-followup worker polling task queue '${config.temporal.taskQueue}' on ${config.temporal.connectionOptions.address} ` +
        `(namespace '${config.temporal.namespace}'), agent API ${config.agentApi.baseUrl}. Ctrl-C or SIGTERM drains and stops.`,
      {
        taskQueue: config.temporal.taskQueue,
        namespace: config.temporal.namespace,
        identity: worker.options.identity,
        metricsAddress: config.observability.metricsAddress,
      },
    );
    // The SDK's runtime turns SIGINT/SIGTERM into a graceful shutdown; run() resolves once in-flight work is done.
    await worker.run();
    logger.info('agent-followup worker stopped after draining', { taskQueue: config.temporal.taskQueue, identity: worker.options.identity });
  } finally {
    await connection.close();
  }
}

/** Before the Runtime exists (a bad environment), still honour LOG_FORMAT=json so log shippers can parse the line. */
function reportEarly(message: string): void {
  const format = process.env.LOG_FORMAT?.toLowerCase() === 'json' ? 'json' : 'text';
  // The key may be malformed (that is often why we are here), but it is still the key: redact it all the same.
  createLineLogger({ format, level: 'ERROR', secrets: apiKeySecrets(process.env.AGENT_API_KEY) }).error(message);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof ConfigError) {
      reportEarly(message);
      process.exitCode = 2;
      return;
    }
    if (processLogger) processLogger.error(`agent-followup worker stopped: ${message}`, { error });
    else reportEarly(`agent-followup worker stopped: ${message}`);
    process.exitCode = 1;
  });
}
