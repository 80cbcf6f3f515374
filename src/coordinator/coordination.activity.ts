/**
 * What a follow-up's coordination needs from outside workflow code: checking in with its project's coordinator
 * (check-in.activity.ts), finding the follow-ups to the same job started before it and what earlier runs of the follow-up did
 * with the message, and, for the coordinator, asking whether a follow-up still runs.
 */
import type { CheckedIn, CheckInRequest, FollowUpClaim, FollowUpConfirmation } from '../workflows/activity-contract';
import type { AgentJob, JobRef } from '../kernel/agent-job';
import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  BUDGET_DEFAULTS_WORKFLOW_ID,
  DEFAULT_BUDGET_MEMO_KEY,
  DEFAULT_COORDINATOR_TASK_QUEUE,
  FOLLOW_UP_WORKFLOW_TYPE,
} from '../kernel/workflow-ids';
import { HOUR_MS, recheckAfterMs, type EnterRequest } from './project-coordination';
import { DEFAULT_WATCH_SHARDS } from '../config/watch-defaults';
import { createReadEarlierDelivery } from './earlier-delivery.activity';
import { createFindEarlierOfJob } from './earlier-of-job.activity';
import { createEnterCoordinator } from './check-in.activity';
import { DEFAULT_SENDS_PER_PROJECT_PER_HOUR } from '../kernel/send-budget-rule';
import { chainOfTicket } from './coordinator-messages';
import type { TicketSealer } from './ticket-seal.activity';

export interface CoordinationSettings {
  /** Where coordinators run: one queue for the namespace, so follow-ups of every task queue share them. */
  taskQueue: string;
  /** The default budget of a project (AGENT_SENDS_PER_PROJECT_PER_HOUR). */
  sendsPerHour: number;
  /** The window's length for coordinators this worker starts; only tests shorten it. */
  windowMs?: number;
  /**
   * Sends of a window that go at once before the coordinator awaits the API's answers (SENDS_AT_ONCE, 20); only tests
   * of an API without a rate limit raise it, where awaiting answers would only slow a burst down.
   */
  sendsAtOnce?: number;
  /** Waits go through shared job watchers of this many shards (2 by default; 0 or absent: each polls its own job). */
  watchShards?: number;
  /**
   * The size in bytes a watcher this worker starts keeps its book to (default WATCH_BOOK_LIMIT_BYTES, from the server's
   * 2 MB payload limit): lower it for a server with a lower limit.blobSize.error. Tests lower it to fill a book.
   */
  watchBookLimitBytes?: number;
  /**
   * From how many waits a watcher this worker starts reads its book with one long activity rather than its own timers
   * (default 200, see job-watcher.ts). Only tests set it, to exercise the long reader with a few waits.
   */
  watchLongReaderFrom?: number;
}

export const DEFAULT_COORDINATION: CoordinationSettings = {
  taskQueue: DEFAULT_COORDINATOR_TASK_QUEUE,
  sendsPerHour: DEFAULT_SENDS_PER_PROJECT_PER_HOUR,
  watchShards: DEFAULT_WATCH_SHARDS,
};

/** How long the read made with a check-in may take: past it the follow-up reads by its usual path. */
const READ_AT_CHECK_IN_MS = 5_000;

/** One GET of a job, as the activities make it (counted, under the API client's own timeout). */
export type ReadJob = (ref: JobRef, signal: AbortSignal) => Promise<AgentJob>;

/**
 * Builds the coordination activities around a Temporal client of the worker's connection; `readJob` makes the read
 * before the send when a check-in gives the job at once.
 */
export function createCoordinationActivities(
  client: Client,
  settings: CoordinationSettings,
  readJob: ReadJob,
  sealer: TicketSealer,
  notifyUrl?: string,
) {
  const findEarlierOfJob = createFindEarlierOfJob(client);
  const readEarlierDelivery = createReadEarlierDelivery(client);
  const defaultSendsPerHour = createDefaultBudgetReader(client, settings.sendsPerHour);
  const enterCoordinator = createEnterCoordinator(client, settings);
  return {
    /**
     * Takes the follow-up's place in its job's lane and asks for a send slot (starting the coordinator if need be);
     * on the first check-in of a run, first finds what earlier runs sent, which decides whether a slot is needed.
     */
    async checkIn(request: CheckInRequest): Promise<CheckedIn> {
      const [{ before, runs }, sendsPerHour] = await Promise.all([findEarlierOfJob(request), defaultSendsPerHour()]);
      const earlier = request.findEarlier ? await readEarlierDelivery(request.workflowId, runs) : null;
      const slotFor = earlier?.state === 'delivered' ? null : request.slotFor;
      // Sealed here, for the chain the follow-up names: the coordinator's describe checks the chain is the one running.
      const ticket = sealer.seal(request.workflowId, chainOfTicket(request.ticket));
      const enter: EnterRequest = {
        workflowId: request.workflowId,
        ticket,
        jobId: request.jobId,
        startedAtMs: request.startedAtMs,
        before,
        deadlineMs: request.deadlineMs,
        slotFor,
      };
      const answer = await enterCoordinator(request, enter, sendsPerHour);
      const given = answer.standing?.workflowId === request.workflowId && answer.standing.ticket === ticket;
      const jobRead =
        request.readJob === true && earlier === null && given ? await readAtCheckIn(readJob, request) : undefined;
      return {
        ticket,
        earlier,
        recheckAfterMs: recheckAfterMs(settings.windowMs ?? HOUR_MS),
        // Every wait goes through this worker's watchers, whatever its schedule, when it has some.
        ...(settings.watchShards ? { watchShards: settings.watchShards } : {}),
        ...(notifyUrl !== undefined ? { notifyUrl } : {}),
        standing: answer.standing,
        notice: answer.notice,
        ...(jobRead ? { jobRead } : {}),
      };
    },

    confirmFollowUp: createConfirmFollowUp(client, sealer, defaultSendsPerHour),
  };
}

/**
 * Whether a check-in comes from a running follow-up of ours, of the chain its sealed ticket names: the seal opens, and
 * a describe (the server's record) shows that chain running, so a well-formed check-in for a follow-up that does not
 * exist (or is another type, or ended, or is another chain under that id) takes nothing. With it, the workers' default
 * budget, so no message sets it.
 */
function createConfirmFollowUp(
  client: Client,
  sealer: TicketSealer,
  defaultSendsPerHour: () => Promise<number>,
): (claim: FollowUpClaim) => Promise<FollowUpConfirmation> {
  return async (claim) => {
    // A ticket our workers did not seal for this follow-up needs no describe.
    if (claim.ticket !== null && sealer.open(claim.workflowId, claim.ticket) === null) {
      const problem = `the ticket is not one this worker would seal for '${claim.workflowId}'`;
      return { problem, unsealed: true, defaultSendsPerHour: await defaultSendsPerHour() };
    }
    const [problem, sendsPerHour] = await Promise.all([followUpProblem(client, claim), defaultSendsPerHour()]);
    return { problem, defaultSendsPerHour: sendsPerHour };
  };
}

async function followUpProblem(client: Client, { workflowId, ticket }: FollowUpClaim): Promise<string | null> {
  let description;
  try {
    description = await client.workflow.getHandle(workflowId).describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return `no workflow '${workflowId}' exists`;
    throw error;
  }
  if (description.type !== FOLLOW_UP_WORKFLOW_TYPE)
    return `'${workflowId}' is a workflow of type '${description.type}', not a follow-up`;
  if (description.status.name !== 'RUNNING') return `the follow-up '${workflowId}' is not running`;
  // The ticket names the chain's first run id (the same across continue-as-new, new for a re-run under the id).
  const firstRunId = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
  if (ticket !== null && firstRunId !== chainOfTicket(ticket))
    return `the running follow-up '${workflowId}' is not the run this check-in names`;
  return null;
}

/**
 * The read before the send, made with the check-in that gave the job. Only a shortcut: a read that fails or is slow
 * decides nothing (it is logged and dropped), and the follow-up reads by its usual path, under the read rules.
 */
async function readAtCheckIn(readJob: ReadJob, ref: JobRef): Promise<AgentJob | undefined> {
  const signal = AbortSignal.any([Context.current().cancellationSignal, AbortSignal.timeout(READ_AT_CHECK_IN_MS)]);
  try {
    return await readJob({ projectId: ref.projectId, jobId: ref.jobId }, signal);
  } catch (error) {
    log.info('The read with the check-in failed; the follow-up reads the job itself', {
      error: error instanceof Error ? error.message : String(error),
    });
    return undefined;
  }
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
