/**
 * The follow-up worker as a library: what the worker process runs, and what a service embeds in its own process
 * (with its own connection, Runtime and API client).
 */
import { existsSync } from 'node:fs';
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { Client, type ClientInterceptors } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from '../encryption/aes-gcm-codec';
import { FAILURE_CONVERTER_PATH } from '../encryption/payload-keys';
import {
  Runtime,
  Worker,
  type ActivityInterceptorsFactory,
  type NativeConnection,
  type WorkerOptions,
} from '@temporalio/worker';
import {
  createActivities,
  jobLogAttributesInterceptor,
  type CoordinationSettings,
  type NotifySettings,
} from '../activities';
import { DEFAULT_COORDINATION } from '../coordinator/coordination.activity';
import type { AgentApiClient } from '../agent-api/http-client';
import { NamespaceNotReadyError } from '../client/namespace-errors';
import { checkSearchAttributes } from '../client/namespace-setup';
import { pollLoopLimit, WORKER_DEFAULTS } from '../config/worker-defaults';
import { watcherTaskQueue } from '../kernel/workflow-ids';
import { watcherStartOf } from '../watch/start-watching.activity';
import { startWatcherGuard, WatchersInSight, type WatcherGuard } from '../watch/watcher-guard.worker';

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
  /**
   * The project coordinators: the task queue they run on (the same for every worker of the namespace) and the budget
   * a project has unless `budget set` gave it its own (AGENT_SENDS_PER_PROJECT_PER_HOUR, 80 by default); and the
   * shared job watchers (`watchShards`, 2 by default; 0: each follow-up polls its own job).
   */
  coordination?: Partial<CoordinationSettings>;
  /**
   * Waits that may poll in a loop inside one activity at once (default: a share of `maxConcurrentActivities`). 0 puts
   * every wait's sleep on Temporal's retry timer, which the time-skipping test server skips (a loop sleeps in real time).
   */
  maxPollLoops?: number;
  /**
   * Check at start-up that the namespace has the follow-up's search attributes (default true). Only for a server that
   * cannot be asked (the time-skipping test server) where the caller registered them itself.
   */
  checkNamespace?: boolean;
  /**
   * How payloads are converted and encoded, e.g. `dataConverterFromEnvironment()` for encrypted prompts. Every client
   * and worker of the namespace needs the same codec; workflow code is prebuilt, so a custom payload converter cannot
   * be given here, only codecs. With an AesGcmPayloadCodec, failure messages are encoded too
   * (encryption/failure-converter.ts): a `workflowBundle` of your own must then be built with
   * `failureConverterPath: FAILURE_CONVERTER_PATH`.
   */
  dataConverter?: Pick<DataConverter, 'payloadCodecs'>;
  /**
   * Interceptors of your own: activity ones run after ours (tests use one to hold an activity back as a saturated
   * worker would); client ones wrap the client the activities use to reach the coordinators and watchers. The
   * workflows are prebuilt, so they take no workflow interceptors.
   */
  interceptors?: { activity?: ActivityInterceptorsFactory[]; client?: ClientInterceptors };
  /**
   * Callbacks (a follow-up's `notify`): the secret they are signed with (AGENT_NOTIFY_SECRET; without it a follow-up
   * that asks for one ends with its callback failed, CallbackNotConfigured) and whether plain http:// may go to
   * another host than this machine.
   */
  notify?: NotifySettings;
}

/** Where `npm run build` puts the prebuilt workflow bundle (dist/workflow-bundle.js). */
export const PREBUILT_BUNDLE_PATH = join(__dirname, '..', '..', 'workflow-bundle.js');

/**
 * The same workflows bundled with the encoding failure converter, for workers with a payload codec: the workflow
 * sandbox turns failures into messages itself, so which converter it uses is fixed when the code is bundled.
 */
export const PREBUILT_ENCRYPTING_BUNDLE_PATH = join(__dirname, '..', '..', 'workflow-bundle-encrypting.js');

/** The prebuilt bundle when there is one (production), else the workflow sources to bundle now (development). */
function workflowCode(
  options: FollowUpWorkerOptions,
  encrypting: boolean,
): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  if (options.workflowBundle) return { workflowBundle: options.workflowBundle };
  const prebuilt = encrypting ? PREBUILT_ENCRYPTING_BUNDLE_PATH : PREBUILT_BUNDLE_PATH;
  if (existsSync(prebuilt)) return { workflowBundle: { codePath: prebuilt } };
  return { workflowsPath: require.resolve('../workflows') };
}

/**
 * A follow-up worker: up to three SDK workers in one process, run and stopped together. The main one runs the
 * follow-ups and their activities on the deployment's task queue. The coordinators run on the namespace's coordinator
 * queue, which every deployment shares, so one project has one budget and one lane per job whichever service sends to
 * it. With shared watching, the job watchers run on a queue of their own (watcherTaskQueue), with a cache of their own.
 */
export class FollowUpWorker {
  constructor(
    readonly main: Worker,
    /** Null when another FollowUpWorker of this process already runs the coordinator queue (a queue is polled once per process). */
    readonly coordinators: Worker | null,
    /** Null without shared watching (`watchShards: 0`). */
    readonly watchers: Worker | null = null,
    private readonly release: () => void = () => undefined,
    /** Watches over the shard watchers while the workers run (watch/watcher-guard.worker.ts); none without shared watching. */
    private readonly guardWatchers: (() => { stop(): void }) | null = null,
  ) {}

  get options(): Worker['options'] {
    return this.main.options;
  }

  getState(): ReturnType<Worker['getState']> {
    return this.main.getState();
  }

  /** Runs them all until shut down (SIGINT/SIGTERM through the Runtime, or `shutdown()`); if one fails, all stop. */
  async run(): Promise<void> {
    await this.together(this.all().map((worker) => worker.run()));
  }

  /** Runs them all until `work` settles, then stops them; resolves as `work` does. */
  async runUntil<R>(work: Promise<R> | (() => Promise<R>)): Promise<R> {
    const promise = typeof work === 'function' ? work() : work;
    const [result] = await this.together([
      this.main.runUntil(promise),
      ...this.others().map((worker) => worker.runUntil(promise.catch(() => undefined))),
    ]);
    return result as R;
  }

  shutdown(): void {
    for (const worker of this.all()) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
  }

  private all(): Worker[] {
    return [this.main, ...this.others()];
  }

  private others(): Worker[] {
    return [this.coordinators, this.watchers].filter((worker): worker is Worker => worker !== null);
  }

  private async together(runs: Promise<unknown>[]): Promise<unknown[]> {
    const guard = this.guardWatchers?.();
    try {
      return await Promise.all(runs);
    } catch (error) {
      this.shutdown();
      await Promise.allSettled(runs);
      throw error;
    } finally {
      guard?.stop();
      this.release();
    }
  }
}

/**
 * The one start-up check of every worker (the process, an embedded one, the tests'): the namespace answers and has the
 * follow-up's search attributes. Without them each follow-up's workflow task would fail over and over, so the worker
 * refuses to start with the fix (NamespaceNotReadyError); a server that will not say (an API key without operator
 * rights) gets a warning, and the worker starts.
 */
async function checkNamespace(connection: NativeConnection, namespace: string): Promise<void> {
  const attributes = await checkSearchAttributes(connection.operatorService, namespace);
  if (attributes.ok === false) throw new NamespaceNotReadyError(namespace, attributes.problems);
  if (attributes.ok === 'unknown') {
    Runtime.instance().logger.warn(
      'Could not check the namespace for the follow-up search attributes; make sure they are registered (npx agent-followup setup)',
      {
        namespace,
        reason: attributes.reason,
      },
    );
  }
}

/**
 * Coordinators kept in memory between their tasks. A burst to many projects touches each coordinator a few times in
 * a short while; an evicted one replays its (short, continued-as-new) history.
 */
const COORDINATORS_CACHED = 1_000;

/** Watchers kept in memory: far more than run (2 shards, each a chain of at most 9), as each holds a large book. */
const WATCHERS_CACHED = 1_024;

/**
 * Coordinator queues some FollowUpWorker of this process polls. The SDK lets a process poll a task queue once, so a
 * service that embeds workers for several task queues runs the coordinators in the first of them.
 */
const coordinatorQueuesPolled = new Set<string>();

/**
 * Creates a worker that runs the follow-ups of one task queue. It uses whatever Runtime the process has: the worker's
 * `main` installs ours (logger, metrics); tests and services that embed it install their own.
 */
export async function createFollowUpWorker(options: FollowUpWorkerOptions): Promise<FollowUpWorker> {
  if (options.checkNamespace !== false) await checkNamespace(options.connection, options.namespace);
  const stopping = new AbortController();
  // Every wait and every read in flight listens for the worker stopping.
  setMaxListeners(0, stopping.signal);
  const coordination: CoordinationSettings = { ...DEFAULT_COORDINATION, ...options.coordination };
  const maxConcurrentActivities = options.maxConcurrentActivities ?? WORKER_DEFAULTS.maxConcurrentActivities;
  const { encrypting, dataConverter } = dataConverterOf(options);
  const temporal = new Client({
    connection: options.connection,
    namespace: options.namespace,
    dataConverter,
    ...(options.interceptors?.client ? { interceptors: options.interceptors.client } : {}),
  });
  // The watchers a registration from this worker reached: its guard keeps them in sight.
  const watchersInSight = new WatchersInSight();
  const activities = createActivities({
    api: options.api,
    watchersInSight,
    temporal,
    stopping: stopping.signal,
    maxPollLoops: options.maxPollLoops ?? pollLoopLimit(maxConcurrentActivities),
    coordination,
    ...(options.notify ? { notify: options.notify } : {}),
  });
  const { confirmFollowUp, watchJobs, readWatchedJobs, adoptBook, ...followUpActivities } = activities;
  const common = commonWorkerOptions(options, dataConverter);
  const main = await Worker.create({
    ...common,
    taskQueue: options.taskQueue,
    activities: followUpActivities,
    ...workflowCode(options, encrypting),
    maxCachedWorkflows: options.maxCachedWorkflows ?? WORKER_DEFAULTS.maxCachedWorkflows,
    stickyQueueScheduleToStartTimeout: WORKER_DEFAULTS.stickyQueueScheduleToStartTimeout,
    maxConcurrentActivityTaskExecutions: maxConcurrentActivities,
  });
  const coordinatorsKey = `${options.namespace}\u0000${coordination.taskQueue}`;
  const side = { ...common, ...workflowCode(options, encrypting) };
  const coordinators = coordinatorQueuesPolled.has(coordinatorsKey)
    ? null
    : await createSideWorker(side, coordination.taskQueue, { confirmFollowUp }, COORDINATORS_CACHED);
  if (coordinators) coordinatorQueuesPolled.add(coordinatorsKey);
  const watchers = coordination.watchShards
    ? await createSideWorker(
        side,
        watcherTaskQueue(options.taskQueue),
        { watchJobs, readWatchedJobs, adoptBook },
        WATCHERS_CACHED,
      )
    : null;
  abortWhenStopping(main, stopping);
  const released = () => (coordinators ? coordinatorQueuesPolled.delete(coordinatorsKey) : undefined);
  const guard = () => guardWatchers(temporal, options.taskQueue, coordination, watchersInSight);
  return new FollowUpWorker(main, coordinators, watchers, released, watchers ? guard : null);
}

/** The worker's guard of its shards' watchers (watch/watcher-guard.worker.ts), started while its workers run. */
function guardWatchers(
  temporal: Client,
  taskQueue: string,
  coordination: CoordinationSettings,
  inSight: WatchersInSight,
): WatcherGuard {
  return startWatcherGuard({
    temporal,
    taskQueue,
    shards: coordination.watchShards ?? 0,
    start: watcherStartOf(coordination),
    inSight,
    log: Runtime.instance().logger,
  });
}

/** What the worker's three workers (follow-ups, coordinators, watchers) share. */
function commonWorkerOptions(
  options: FollowUpWorkerOptions,
  dataConverter: ReturnType<typeof dataConverterOf>['dataConverter'],
) {
  return {
    connection: options.connection,
    namespace: options.namespace,
    ...(options.identity ? { identity: options.identity } : {}),
    interceptors: { activity: [jobLogAttributesInterceptor, ...(options.interceptors?.activity ?? [])] },
    dataConverter,
    // The SDK's default of 0 would cancel in-flight HTTP calls at once on SIGTERM; let them finish instead.
    shutdownGraceTime: options.shutdownGraceTimeMs ?? 30_000,
  };
}

/**
 * The worker's data converter: with a payload key the payloads are secret, so failure messages (an API's error may
 * quote the prompt) are encoded with them; a codec that only passes payloads through keeps them in clear, as before.
 */
function dataConverterOf(options: FollowUpWorkerOptions) {
  const payloadCodecs = options.dataConverter?.payloadCodecs ?? [];
  const encrypting = payloadCodecs.some((codec) => codec instanceof AesGcmPayloadCodec);
  const dataConverter = encrypting
    ? { payloadCodecs, failureConverterPath: FAILURE_CONVERTER_PATH }
    : { payloadCodecs };
  return { encrypting, dataConverter };
}

/**
 * Long waits end their loop as soon as the worker begins to stop, so another worker carries them on at once instead
 * of after the grace time (a send, meanwhile, is left to finish).
 */
function abortWhenStopping(main: Worker, stopping: AbortController): void {
  const watch = setInterval(() => {
    const state = main.getState();
    if (state !== 'INITIALIZED' && state !== 'RUNNING') {
      stopping.abort();
      clearInterval(watch);
    }
  }, 250);
  watch.unref();
}

/** A worker of the coordinators' or the watchers' task queue, beside the follow-ups' own. */
function createSideWorker(
  options: Omit<WorkerOptions, 'taskQueue' | 'activities'>,
  taskQueue: string,
  activities: object,
  maxCachedWorkflows: number,
): Promise<Worker> {
  return Worker.create({
    ...options,
    taskQueue,
    activities,
    maxCachedWorkflows,
    stickyQueueScheduleToStartTimeout: WORKER_DEFAULTS.stickyQueueScheduleToStartTimeout,
  });
}
