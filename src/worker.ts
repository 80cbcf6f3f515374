#!/usr/bin/env node
/**
 * The worker: `npx agent-followup-worker` where the package is installed, `npm run worker` in a clone. Configuration
 * comes from the environment (see the README's table); the API key is read here and handed to the activities, so it
 * never enters workflow input, history or logs.
 */
import './peers/worker-command-peer';
import { NativeConnection, Runtime, type Logger } from '@temporalio/worker';
import { AgentApiClient } from './agent-api/http-client';
import { ConfigError, loadWorkerConfig, type WorkerConfig } from './config';
import { apiKeySecrets, createLineLogger } from './observability/logging';
import { workerRuntimeOptions } from './observability/runtime';
import { createFollowUpWorker } from './worker/follow-up-worker';
import { NamespaceNotReadyError } from './client/namespace-errors';
import { AesGcmPayloadCodec } from './encryption/aes-gcm-codec';
import { payloadKeySecrets } from './encryption/payload-keys';

/** Everything no log line may contain: the agent API key (whole and its secret part) and a Temporal API key. */
function secretsOf(config: WorkerConfig): string[] {
  const temporalApiKey = config.temporal.connectionOptions.apiKey;
  return [
    ...apiKeySecrets(config.agentApi.apiKey),
    ...(typeof temporalApiKey === 'string' ? [temporalApiKey] : []),
    ...(config.payloadKeys ?? []).map(({ key }) => Buffer.from(key).toString('base64')),
    ...(config.notify.secret ? [config.notify.secret] : []),
  ];
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
    const worker = await createFollowUpWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      api: new AgentApiClient(config.agentApi),
      shutdownGraceTimeMs: config.shutdownGraceTimeMs,
      maxCachedWorkflows: config.maxCachedWorkflows,
      maxConcurrentActivities: config.maxConcurrentActivities,
      identity: config.identity,
      notify: config.notify,
      ...(config.payloadKeys ? { dataConverter: { payloadCodecs: [new AesGcmPayloadCodec(config.payloadKeys)] } } : {}),
      coordination: {
        taskQueue: config.temporal.coordinatorTaskQueue,
        sendsPerHour: config.sendsPerProjectPerHour,
        watchShards: config.watchShards,
        ...(config.sendWindowMs !== undefined ? { windowMs: config.sendWindowMs } : {}),
      },
    });
    logger.info(
      `agent-followup worker polling task queue '${config.temporal.taskQueue}' on ${config.temporal.connectionOptions.address} ` +
        `(namespace '${config.temporal.namespace}'), agent API ${config.agentApi.baseUrl}. Ctrl-C or SIGTERM drains and stops.`,
      {
        taskQueue: config.temporal.taskQueue,
        namespace: config.temporal.namespace,
        identity: worker.options.identity,
        metricsAddress: config.observability.metricsAddress,
        // Which key encrypts new payloads (its id only), or none: payloads in clear.
        payloadKeyId: config.payloadKeys?.[0]?.id ?? null,
      },
    );
    // The SDK's runtime turns SIGINT/SIGTERM into a graceful shutdown; run() resolves once in-flight work is done.
    await worker.run();
    logger.info('agent-followup worker stopped after draining', {
      taskQueue: config.temporal.taskQueue,
      identity: worker.options.identity,
    });
  } finally {
    await connection.close();
  }
}

/** Before the Runtime exists (a bad environment), still honour LOG_FORMAT=json so log shippers can parse the line. */
function reportEarly(message: string): void {
  const format = process.env.LOG_FORMAT?.toLowerCase() === 'json' ? 'json' : 'text';
  // The key may be malformed (that is often why we are here), but it is still the key: redact it all the same.
  createLineLogger({
    format,
    level: 'ERROR',
    secrets: [...apiKeySecrets(process.env.AGENT_API_KEY), ...payloadKeySecrets(process.env)],
  }).error(message);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    // Both are fixed outside this process (the environment, the namespace): exit 2 with the fix, no stack.
    if (error instanceof ConfigError || error instanceof NamespaceNotReadyError) {
      reportEarly(message);
      process.exitCode = 2;
      return;
    }
    if (processLogger) processLogger.error(`agent-followup worker stopped: ${message}`, { error });
    else reportEarly(`agent-followup worker stopped: ${message}`);
    process.exitCode = 1;
  });
}
