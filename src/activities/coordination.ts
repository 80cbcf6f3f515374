/**
 * What a follow-up's coordination needs from outside workflow code: checking in with its project's coordinator
 * (signal-with-start: the coordinator may not be running, and only a client call can start it; a short call, so a
 * burst of follow-ups never queues on Temporal's limit of long-running calls), looking up what earlier runs of the
 * follow-up did with the message, and, for the coordinator, asking whether a follow-up still runs.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { BUDGET_DEFAULTS_WORKFLOW_ID, coordinatorWorkflowId, DEFAULT_BUDGET_MEMO_KEY, DEFAULT_COORDINATOR_TASK_QUEUE } from '../follow-up/coordinator-id';
import { DEFAULT_SENDS_PER_PROJECT_PER_HOUR, HOUR_MS, recheckAfterMs, type EnterRequest, type TurnGrant } from '../follow-up/project-coordination';
import type { DeliveryRecord } from '../follow-up/types';
import { enterSignal, PROJECT_COORDINATOR_WORKFLOW_TYPE, standingQuery } from '../workflows/definitions';
import type { projectCoordinatorWorkflow } from '../workflows/project-coordinator';
import { DEFAULT_WATCH_MIN_INTERVAL_MS, DEFAULT_WATCH_SHARDS } from '../follow-up/watch-defaults';
import { createFindEarlierDelivery } from './earlier-delivery';

export interface CoordinationSettings {
  /** Where coordinators run: one queue for the namespace, so follow-ups of every task queue share them. */
  taskQueue: string;
  /** The default budget of a project (AGENT_SENDS_PER_PROJECT_PER_HOUR). */
  sendsPerHour: number;
  /** The window's length for coordinators this worker starts; only tests shorten it. */
  windowMs?: number;
  /** Waits go through shared job watchers of this many shards (AGENT_WATCH_SHARDS; 0 or absent: each polls its own job). */
  watchShards?: number;
  /**
   * Follow-ups whose polling starts faster than this (`initialInterval`) poll their own job even with watchers
   * (AGENT_WATCH_MIN_INTERVAL): a watcher reads a new wait up to about 3 s after the send (see DEFAULT_WATCH_MIN_INTERVAL_MS).
   * 0: every follow-up waits through the watchers.
   */
  watchMinIntervalMs?: number;
  /**
   * The size in bytes a watcher this worker starts keeps its book to (default WATCH_BOOK_LIMIT_BYTES, from the server's
   * 2 MB payload limit): lower it for a server with a lower limit.blobSize.error. Tests lower it to fill a book.
   */
  watchBookLimitBytes?: number;
}

export const DEFAULT_COORDINATION: CoordinationSettings = {
  taskQueue: DEFAULT_COORDINATOR_TASK_QUEUE,
  sendsPerHour: DEFAULT_SENDS_PER_PROJECT_PER_HOUR,
  watchShards: DEFAULT_WATCH_SHARDS,
  watchMinIntervalMs: DEFAULT_WATCH_MIN_INTERVAL_MS,
};

export interface CheckInRequest {
  projectId: string;
  jobId: string;
  /** The follow-up checking in. */
  workflowId: string;
  runId: string;
  deadlineMs: number;
  /** The send attempt to ask a slot for, unless an earlier run delivered the message. */
  slotFor: string | null;
  /** Look up what earlier runs under this workflow id did (the first check-in of a run). */
  findEarlier: boolean;
  /** The follow-up's first poll gap (`polling.initialInterval`): whether its waits may go through the watchers. */
  initialIntervalMs?: number;
}

export interface CheckedIn {
  /** What an earlier run under this workflow id did with the message (null: none sent it). */
  earlier: DeliveryRecord | null;
  /** How long the follow-up may hear nothing from the coordinator while it waits before it checks in again. */
  recheckAfterMs: number;
  /** This follow-up waits through shared watchers of this many shards (absent: it polls its own job). */
  watchShards?: number;
  /**
   * The follow-up's standing once the coordinator took the check-in in: its turn (and slot) if granted, what the
   * `turn` signal says too, so it need not wait for the signal. Null: it waits in line, or the coordinator did not say
   * in time (the signal says it then).
   */
  standing?: TurnGrant | null;
}

/**
 * How long a check-in waits for the coordinator to say where the follow-up stands (a query, answered after the
 * workflow task that takes the check-in in). Past it the follow-up waits for the `turn` signal, as it would anyway.
 */
const STANDING_QUERY_MS = 2_000;

/** Builds the coordination activities around a Temporal client of the worker's connection. */
export function createCoordinationActivities(client: Client, settings: CoordinationSettings) {
  const findEarlierDelivery = createFindEarlierDelivery(client);
  const defaultSendsPerHour = createDefaultBudgetReader(client, settings.sendsPerHour);
  return {
    /**
     * Takes the follow-up's place in its job's lane and asks for a send slot (starting the coordinator if need be);
     * on the first check-in of a run, first finds what earlier runs sent, which decides whether a slot is needed.
     */
    async checkIn(request: CheckInRequest): Promise<CheckedIn> {
      const [earlier, sendsPerHour] = await Promise.all([
        request.findEarlier ? findEarlierDelivery({ workflowId: request.workflowId, runId: request.runId }) : null,
        defaultSendsPerHour(),
      ]);
      const slotFor = earlier?.state === 'delivered' ? null : request.slotFor;
      const coordinator = await client.workflow.signalWithStart<typeof projectCoordinatorWorkflow, [EnterRequest]>(
        PROJECT_COORDINATOR_WORKFLOW_TYPE,
        {
          workflowId: coordinatorWorkflowId(request.projectId),
          taskQueue: settings.taskQueue,
          args: [{ projectId: request.projectId, sendsPerHour, ...(settings.windowMs ? { windowMs: settings.windowMs } : {}) }],
          signal: enterSignal,
          signalArgs: [
            {
              workflowId: request.workflowId,
              jobId: request.jobId,
              deadlineMs: request.deadlineMs,
              slotFor,
              defaultLimit: sendsPerHour,
            },
          ],
          staticSummary: `Project ${request.projectId}: send budget and one follow-up at a time per job`,
        },
      );
      // Asked rather than waited for: a follow-up waiting for its turn signal costs its history a timer started and
      // cancelled. Any failure (a busy coordinator, its first task not done yet) leaves it to the signal.
      const standing = await client
        .withDeadline(Date.now() + STANDING_QUERY_MS, () => coordinator.query(standingQuery, request.workflowId, slotFor))
        .catch(() => null);
      return {
        earlier,
        recheckAfterMs: recheckAfterMs(settings.windowMs ?? HOUR_MS),
        ...(watchesFor(settings, request) ? { watchShards: settings.watchShards } : {}),
        standing,
      };
    },

    /** Whether the follow-up with this workflow id has a running run. */
    async followUpIsRunning(workflowId: string): Promise<boolean> {
      try {
        return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
  };
}

/** Whether this worker's watchers read for the follow-up: there are some, and its schedule is one they can keep. */
export function watchesFor(settings: CoordinationSettings, request: CheckInRequest): boolean {
  if (!settings.watchShards) return false;
  return request.initialIntervalMs === undefined || request.initialIntervalMs >= (settings.watchMinIntervalMs ?? 0);
}

/** How long a worker trusts its last read of the namespace's default budget. */
const DEFAULT_BUDGET_CACHE_MS = 30_000;

/**
 * The namespace's default budget per project (`budget set` without `--project`, kept by the budget defaults
 * workflow), read from that workflow's memo at most every 30 s per worker; the worker's own setting when none is set
 * or it cannot be read.
 */
function createDefaultBudgetReader(client: Client, workerDefault: number): () => Promise<number> {
  let cached: { value: number; atMs: number } | null = null;
  let reading: Promise<number> | null = null;
  const read = async (): Promise<number> => {
    try {
      const description = await client.workflow.getHandle(BUDGET_DEFAULTS_WORKFLOW_ID).describe();
      const value = description.memo?.[DEFAULT_BUDGET_MEMO_KEY];
      return description.status.name === 'RUNNING' && typeof value === 'number' && value >= 1 ? value : workerDefault;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      return workerDefault;
    }
  };
  return async () => {
    if (cached && Date.now() - cached.atMs < DEFAULT_BUDGET_CACHE_MS) return cached.value;
    reading ??= read()
      .then((value) => {
        cached = { value, atMs: Date.now() };
        return value;
      })
      .catch(() => cached?.value ?? workerDefault)
      .finally(() => {
        reading = null;
      });
    return reading;
  };
}
