/**
 * `agent-followup/worker`: the follow-up worker for services that run it in their own process instead of
 * `node dist/src/worker.js`. Build an AgentApiClient with your key (from your secret store, never from workflow
 * input), connect to Temporal with `connectWorker` (quiet: WARN and above, unless you pass a logger), and run the
 * worker; it serves every follow-up started on its task queue.
 */
import './peers/worker-peer';
export { createFollowUpWorker, FollowUpWorker, type FollowUpWorkerOptions } from './worker/follow-up-worker';
export { AgentApiClient } from './agent-api/http-client';
export { DEFAULT_SENDS_PER_PROJECT_PER_HOUR } from './kernel/send-budget-rule';
export { DEFAULT_COORDINATOR_TASK_QUEUE } from './kernel/workflow-ids';
export { NativeConnection, DefaultLogger, type Logger, type LogLevel } from '@temporalio/worker';
export { connectWorker, installQuietRuntime, type WorkerConnectionOptions } from './worker/connection';
export { createLineLogger, type LineLoggerOptions } from './observability/logging';
export { NamespaceNotReadyError } from './client/namespace-errors';
