/**
 * Checking in with a project's coordinator: update-with-start (the coordinator may not be running, and only a client
 * call can start it), tried again within the attempt while its validator refuses for now (back-pressure), and a look
 * at the holder of its id when no answer comes, which fails the follow-up at once if a foreign workflow holds it.
 */
import type { CheckInRequest } from '../workflows/activity-contract';
import type { ProjectCoordinatorWorkflow } from './messages';
import { setTimeout as delay } from 'node:timers/promises';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ApplicationFailure, Context, log } from '@temporalio/activity';
import {
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import { coordinatorWorkflowId, PROJECT_COORDINATOR_WORKFLOW_TYPE } from '../kernel/workflow-ids';
import type { CheckInAnswer, EnterRequest } from './project-coordination';
import { CHECK_IN_REFUSED, COORDINATOR_BUSY, FollowUpErrorType } from '../kernel/types';
import { KeyedGate } from './keyed-gate.activity';
import { enterUpdate } from './messages';
import type { CoordinationSettings } from './coordination.activity';

/** How long one check-in may wait for the coordinator's answer before the holder of its id is looked at. */
const CHECK_IN_ANSWER_MS = 10_000;
/** Refused for now (busy, or Temporal's limit of updates in flight): tried again within the attempt, for this long. */
const CHECK_IN_ATTEMPT_MS = 20_000;
/** The pause after a refusal, doubling: jittered, so a burst of refused check-ins does not come back together. */
const REFUSED_PAUSE = { firstMs: 500, maxMs: 5_000 } as const;
/** Check-ins of one worker process in flight to one coordinator, below Temporal's 10 updates in flight per workflow. */
const CHECK_INS_IN_FLIGHT_PER_COORDINATOR = 4;

/** The check-in of one worker, with its gate on check-ins in flight per coordinator and the foreign holders it told. */
export function createEnterCoordinator(client: Client, settings: CoordinationSettings) {
  const reportedForeign = new Set<string>();
  const inFlight = new KeyedGate(CHECK_INS_IN_FLIGHT_PER_COORDINATOR);
  return enterCoordinator;

  /**
   * The check-in itself, tried again within the attempt while the coordinator refuses it for now (closing its run,
   * full) or Temporal refuses another update in flight; past CHECK_IN_ATTEMPT_MS the attempt fails and Temporal's retry
   * policy brings it back. An answer that does not come in time, or a refusal no coordinator gives, means something
   * else may hold the coordinator's id: that is looked at, and fails the follow-up at once if so.
   */
  async function enterCoordinator(
    request: CheckInRequest,
    enter: EnterRequest,
    sendsPerHour: number,
  ): Promise<CheckInAnswer> {
    const coordinatorId = coordinatorWorkflowId(request.projectId);
    const giveUpAtMs = Date.now() + CHECK_IN_ATTEMPT_MS;
    let pauseMs: number = REFUSED_PAUSE.firstMs;
    for (;;) {
      try {
        const answered = await inFlight.run(coordinatorId, giveUpAtMs, () =>
          client.withDeadline(Date.now() + CHECK_IN_ANSWER_MS, () =>
            client.workflow.executeUpdateWithStart(enterUpdate, {
              args: [enter],
              updateId: `check-in/${request.runId}/${request.sequence ?? 0}`,
              startWorkflowOperation: coordinatorStart(request.projectId, settings, sendsPerHour),
            }),
          ),
        );
        if (answered !== 'timedOut') return answered.done;
        throw ApplicationFailure.create({
          type: COORDINATOR_BUSY,
          message: `The check-ins of this worker to the coordinator of project '${request.projectId}' are many at once; checking in again`,
          nextRetryDelay: jittered(REFUSED_PAUSE.maxMs),
        });
      } catch (error) {
        if (error instanceof ApplicationFailure) throw error;
        const refusal = refusalOf(error);
        if (refusal === 'invalid')
          throw ApplicationFailure.create({ type: CHECK_IN_REFUSED, message: describe(error), nonRetryable: true });
        if (refusal !== 'busy') await failIfForeign(client, settings, reportedForeign, coordinatorId);
        if (Date.now() + pauseMs >= giveUpAtMs) {
          throw ApplicationFailure.create({
            type: COORDINATOR_BUSY,
            message: `The coordinator of project '${request.projectId}' did not take the check-in yet (${describe(error)}); checking in again`,
            nextRetryDelay: jittered(REFUSED_PAUSE.maxMs),
          });
        }
        await delay(jittered(pauseMs), undefined, { signal: Context.current().cancellationSignal });
        pauseMs = Math.min(pauseMs * 2, REFUSED_PAUSE.maxMs);
      }
    }
  }
}

/** Fails the check-in for good when the coordinator's id is held by something that will never answer it. */
async function failIfForeign(
  client: Client,
  settings: CoordinationSettings,
  reportedForeign: Set<string>,
  coordinatorId: string,
): Promise<void> {
  let description;
  try {
    description = await client.workflow.getHandle(coordinatorId).describe();
  } catch {
    return;
  }
  const { type, taskQueue, runId, status } = description;
  if (status.name !== 'RUNNING') return;
  if (type === PROJECT_COORDINATOR_WORKFLOW_TYPE && taskQueue === settings.taskQueue) return;
  const terminate = `temporal workflow terminate --workflow-id '${coordinatorId}' --reason 'not the project coordinator'`;
  const message =
    type === PROJECT_COORDINATOR_WORKFLOW_TYPE
      ? `The project's coordinator '${coordinatorId}' (run ${runId}) runs on task queue '${taskQueue}', not on this worker's ` +
        `'${settings.taskQueue}', and did not answer the check-in, so nothing was sent. Fix: set the same AGENT_COORDINATOR_TASK_QUEUE ` +
        `on every worker, or end it (${terminate}; its send window restarts empty), then start the follow-up again.`
      : `The workflow '${coordinatorId}' (run ${runId}) is a workflow of type '${type}', and it holds the id of the project's ` +
        `coordinator: no follow-up to this project can be coordinated while it runs, so nothing was sent. Fix: end it ` +
        `(${terminate}), then start the follow-up again.`;
  if (!reportedForeign.has(runId)) {
    reportedForeign.add(runId);
    log.error('A foreign workflow holds a project coordinator id', {
      coordinatorId,
      runId,
      workflowType: type,
      taskQueue,
    });
  }
  throw ApplicationFailure.create({
    type: FollowUpErrorType.CoordinatorIdTaken,
    message,
    nonRetryable: true,
    details: [{ workflowId: coordinatorId, runId, workflowType: type, taskQueue }],
  });
}

/** The coordinator's start, for a check-in that finds none running (update-with-start). */
function coordinatorStart(
  projectId: string,
  settings: CoordinationSettings,
  sendsPerHour: number,
): WithStartWorkflowOperation<ProjectCoordinatorWorkflow> {
  return new WithStartWorkflowOperation<ProjectCoordinatorWorkflow>(PROJECT_COORDINATOR_WORKFLOW_TYPE, {
    workflowId: coordinatorWorkflowId(projectId),
    taskQueue: settings.taskQueue,
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [
      {
        projectId,
        sendsPerHour,
        ...(settings.windowMs ? { windowMs: settings.windowMs } : {}),
        ...(settings.sendsAtOnce ? { sendsAtOnce: settings.sendsAtOnce } : {}),
      },
    ],
    staticSummary: `Project ${projectId}: send budget and one follow-up at a time per job`,
  });
}

/** How an update failed: refused for now (try again), refused as malformed, or anything else (look at the holder). */
function refusalOf(error: unknown): 'busy' | 'invalid' | 'other' {
  if (error instanceof WorkflowUpdateFailedError) {
    const type = (error.cause as { type?: unknown } | undefined)?.type;
    if (type === COORDINATOR_BUSY) return 'busy';
    if (type === CHECK_IN_REFUSED) return 'invalid';
    return 'other';
  }
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return 'other';
  // Temporal's own refusals of one more update in flight, or of a run that just closed, are for now.
  const code = (error as { cause?: { code?: unknown } }).cause?.code ?? (error as { code?: unknown }).code;
  return code === GrpcStatus.RESOURCE_EXHAUSTED || code === GrpcStatus.ABORTED || code === GrpcStatus.UNAVAILABLE
    ? 'busy'
    : 'other';
}

function describe(error: unknown): string {
  if (error instanceof WorkflowUpdateFailedError && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** Between half and all of `ms`. */
function jittered(ms: number): number {
  return Math.round(ms / 2 + Math.random() * (ms / 2));
}
