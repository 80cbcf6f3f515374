/**
 * Registering a wait with its shard's job watcher, from an activity (only a client call can start a watcher): the
 * follow-up's own registrations, the send's first wait, and a reader putting back the waits of a watcher that was
 * terminated under it. Every registration is checked to have reached one of our watchers: a workflow of another kind
 * under a watcher's id takes a signal without a word and would leave the wait unanswered until its deadline.
 */
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { JobWatcherWorkflow, WatcherStart } from './messages';
import { JOB_WATCHER_WORKFLOW_TYPE, WATCHER_ID_TAKEN, watcherTaskQueue } from '../kernel/workflow-ids';
import { REGISTRATIONS_PER_SIGNAL, watchJobBatchSignal, type WatchRegistration } from './messages';
import type { CoordinationSettings } from '../coordinator/coordination.activity';
import type { ReaderWakeups } from './reader-wakeups.activity';
import type { WatchersInSight } from './watcher-guard.worker';

export interface WatcherAddress {
  watcherId: string;
  /** The task queue our watchers of this shard run on (watcherTaskQueue of the follow-ups' queue). */
  taskQueue: string;
}

/** The watcher's address as a follow-up of the current activity's task queue registers with it. */
export function watcherAddressOf(watcherId: string): WatcherAddress {
  return { watcherId, taskQueue: watcherTaskQueue(Context.current().info.taskQueue) };
}

export type StartWatching = (address: WatcherAddress, registration: WatchRegistration) => Promise<void>;

/** What a watcher's run says it does, in the Web UI's list and summary. */
export const WATCHER_SUMMARY = 'Reads the jobs of waiting follow-ups for them, and tells each when its job answered';

/** What a watcher this worker starts is started with: the book's limits its settings give. */
export function watcherStartOf(coordination: CoordinationSettings): WatcherStart {
  return {
    ...(coordination.watchBookLimitBytes !== undefined ? { bookLimitBytes: coordination.watchBookLimitBytes } : {}),
    ...(coordination.watchLongReaderFrom !== undefined ? { longReaderFrom: coordination.watchLongReaderFrom } : {}),
  };
}

/** How long a registration waits for others to the same watcher to go in its signal. */
const GATHER_MS = 20;

interface Gathered {
  address: WatcherAddress;
  registrations: WatchRegistration[];
  settle: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * Signals `registration` to its watcher, starting the watcher if none runs. The registrations this worker makes to one
 * watcher within GATHER_MS go in one signal (`watchJobBatch`), each answered when it is taken: a burst costs the
 * watcher a signal per batch rather than one per wait. The run that took the signal is checked once per worker (one
 * describe per watcher run; a watcher continues as new every few thousand signals): a foreign one fails the
 * registrations with WatcherIdTaken, logged once per run as an error with the fix.
 */
/** The failure of a registration that reached a foreign workflow under a watcher's id, with the fix. */
function watcherIdTaken(
  watcherId: string,
  runId: string,
  { type, taskQueue }: { type: string; taskQueue: string },
): ApplicationFailure {
  const terminate = `temporal workflow terminate --workflow-id '${watcherId}' --reason 'not a job watcher'`;
  return ApplicationFailure.create({
    type: WATCHER_ID_TAKEN,
    message:
      `The workflow '${watcherId}' (run ${runId}) is a workflow of type '${type}' on task queue '${taskQueue}', and it ` +
      `holds the id of a job watcher: the follow-ups of its shard move on to the next watcher of the shard's chain (` +
      `'${watcherId}/1', ...) while it runs, at the cost of a refused registration each. Fix: end it (${terminate}); ` +
      `the next wait starts a watcher of ours.`,
    nonRetryable: true,
    details: [{ workflowId: watcherId, runId, workflowType: type }],
  });
}

/** Logged once per foreign run, as an error: the registrations it takes fail, each with the fix. */
function reportForeign(watcherId: string, runId: string, { type, taskQueue }: { type: string; taskQueue: string }) {
  log.error('A foreign workflow holds a job watcher id', { watcherId, runId, workflowType: type, taskQueue });
}

export function createStartWatching(
  temporal: Client,
  start: WatcherStart,
  { wakeups, inSight }: { wakeups?: ReaderWakeups; inSight?: WatchersInSight } = {},
): StartWatching {
  const ours = new Set<string>();
  const reportedForeign = new Set<string>();
  const gathering = new Map<string, Gathered>();
  const send = async (gathered: Gathered): Promise<void> => {
    if (gathering.get(gathered.address.watcherId) === gathered) gathering.delete(gathered.address.watcherId);
    clearTimeout(gathered.timer);
    try {
      await signal(gathered.address, gathered.registrations);
      for (const { resolve } of gathered.settle) resolve();
    } catch (error) {
      for (const { reject } of gathered.settle) reject(error);
    }
  };
  const signal = async ({ watcherId, taskQueue }: WatcherAddress, registrations: WatchRegistration[]) => {
    const handle = await temporal.workflow.signalWithStart<JobWatcherWorkflow, [WatchRegistration[]]>(
      JOB_WATCHER_WORKFLOW_TYPE,
      {
        workflowId: watcherId,
        taskQueue,
        args: [start],
        signal: watchJobBatchSignal,
        signalArgs: [registrations],
        staticSummary: WATCHER_SUMMARY,
      },
    );
    const runId = handle.signaledRunId;
    // Held by one of ours: the worker's guard keeps it in sight from now on (watcher-guard.worker.ts).
    const held = () => {
      inSight?.add(watcherId);
      wakeups?.wake(watcherId);
    };
    if (ours.has(runId)) return held();
    const description = await temporal.workflow.getHandle(watcherId, runId).describe();
    if (description.type === JOB_WATCHER_WORKFLOW_TYPE && description.taskQueue === taskQueue) {
      ours.add(runId);
      return held();
    }
    if (!reportedForeign.has(runId)) reportForeign(watcherId, runId, description);
    reportedForeign.add(runId);
    throw watcherIdTaken(watcherId, runId, description);
  };
  return (address, registration) =>
    new Promise<void>((resolve, reject) => {
      let gathered = gathering.get(address.watcherId);
      if (!gathered) {
        const opened: Gathered = { address, registrations: [], settle: [] };
        opened.timer = setTimeout(() => void send(opened), GATHER_MS);
        gathering.set(address.watcherId, opened);
        gathered = opened;
      }
      gathered.registrations.push(registration);
      gathered.settle.push({ resolve, reject });
      if (gathered.registrations.length >= REGISTRATIONS_PER_SIGNAL) void send(gathered);
    });
}
