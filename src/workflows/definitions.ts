/** Message definitions shared by the workflows and their callers. */
import type { QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/common';
import type {
  CheckInAnswer,
  EnterRequest,
  ProjectView,
  QueueNotice,
  SendAnswered,
  TurnGrant,
} from '../follow-up/project-coordination';
import type { AskedRead, FollowUpProgress, ReadTrouble, SendAnswer } from '../follow-up/types';
import type { WaitReadReport, WatchedWaitView } from '../follow-up/watch-figures';
import type { WatchAnswer } from '../follow-up/watch-answer';
import type { Unwatch, WatchChanges, WatchRegistration } from '../follow-up/watch-registry';

export const FOLLOW_UP_WORKFLOW_TYPE = 'followUpWorkflow';
export const FOLLOW_UP_NOTIFY_WORKFLOW_TYPE = 'followUpNotifyWorkflow';
export const PROJECT_COORDINATOR_WORKFLOW_TYPE = 'projectCoordinatorWorkflow';
export const BUDGET_DEFAULTS_WORKFLOW_TYPE = 'budgetDefaultsWorkflow';
export const CHECK_AGENT_JOB_WORKFLOW_TYPE = 'checkAgentJobWorkflow';
export const JOB_WATCHER_WORKFLOW_TYPE = 'jobWatcherWorkflow';

/** Where the follow-up stands: phase, last status, place in a queue, reads, last error. */
export const progressQuery = queryNamed<FollowUpProgress>('progress');
/**
 * To a follow-up: read the job now (the caller knows it changed), instead of at the next point of the schedule. The
 * answer says when the read is due. An update, not a signal: while a read asked for is still due, another ask is the
 * same one, and the validator refuses it (POLL_NOW_COVERED, with that time) before anything is written to history.
 */
export const pollNowUpdate = updateNamed<AskedRead, []>('pollNow');
/**
 * To a follow-up: answer once the send is done or cannot be done now (sent, queued, reconciling), or fail with the
 * follow-up's own failure when it ends before sending. `start(..., { waitFor: 'sent' })` sends it with the start
 * (update-with-start). Takes no arguments; the validator refuses any.
 */
export const sendAnswerUpdate = updateNamed<SendAnswer, []>('sendAnswer');
/** To a follow-up, from its poll activity: reading the job began to fail, or (null) succeeds again. */
export const readTroubleSignal = signalNamed<[ReadTrouble | null]>('readTrouble');

/**
 * To a project's coordinator, by update-with-start from the follow-up's check-in: take (or keep) the follow-up's place
 * in its job's lane and ask for a send slot. The answer is its standing. An update, not a signal: the coordinator's
 * validator refuses a malformed check-in, and one that would grow its run past what it keeps, before anything is
 * written to history; the sender tries again later (back-pressure a signal cannot give).
 */
export const enterUpdate = updateNamed<CheckInAnswer, [EnterRequest]>('enter');
/** To a coordinator: a follow-up is done with its job, or gives up waiting (with its check-in's ticket). */
export const leaveSignal = signalNamed<[{ workflowId: string; ticket?: string }]>('leave');
/** To a coordinator: a slot under which no request left (the job was busy, the lease ran out), so it does not count. */
export const returnSlotSignal = signalNamed<[{ workflowId: string; slot: string }]>('returnSlot');
/**
 * To a coordinator: how the API answered a send (a 429 always; any answer when the grant asked for it), so a refusal
 * pauses every send of the project and an accepted probe ends the pause.
 */
export const sendAnsweredSignal = signalNamed<[SendAnswered]>('sendAnswered');
/** To a coordinator: the project's own budget (sends per hour), or null to follow the workers' default again. */
export const setBudgetSignal = signalNamed<[{ sendsPerHour: number | null }]>('setBudget');
/** To the budget defaults: every project's budget unless set for the project (null: the workers' setting again). */
export const setDefaultBudgetSignal = signalNamed<[{ sendsPerHour: number | null }]>('setDefaultBudget');
/** The budget defaults: the namespace's default budget per project, or null (the workers' setting). */
export const defaultBudgetQuery = queryNamed<{ sendsPerHour: number | null }>('defaultBudget');
/** The coordinator as it stands: budget, use of the window, lanes. */
export const projectQuery = queryNamed<ProjectView>('project');
/** To a job watcher: watch this wait of a follow-up (replacing its earlier one). */
export const watchJobSignal = signalNamed<[WatchRegistration]>('watchJob');
/** To a job watcher: the follow-up's wait `replyTo` is no longer needed (it left, or its `round` was answered). */
export const unwatchJobSignal = signalNamed<[Unwatch]>('unwatchJob');
/**
 * A job watcher's changes since a version: its polling activity asks, so the book never goes through history. It
 * passes its reports of the reads made since it last asked along (for `status`; a query's arguments are not in history).
 */
export const watchChangesQuery = queryNamed<WatchChanges, [number, WaitReadReport[]?]>('watchChanges');
/** A job watcher's live figures for one follow-up (by workflow id): `status` asks; null when it holds no wait of it. */
export const watchedWaitQuery = queryNamed<WatchedWaitView | null, [string]>('watchedWait');
/** To a follow-up, from its watcher: the read that answers its wait, or why the wait cannot go on. */
export const jobAnswerSignal = signalNamed<[WatchAnswer]>('jobAnswer');

/** To a follow-up: the job is yours, and maybe a send slot with it (with the ticket of its check-in). */
export const turnSignal = signalNamed<[TurnGrant]>('turn');
/** To a follow-up that waits: for whom or for what, and the ticket of its check-in. */
export const queueNoticeSignal = signalNamed<[QueueNotice, string]>('queueNotice');

/**
 * The plain objects the SDK's `defineSignal` and `defineQuery` return (a type and a name), made here so that the
 * client, which shares these definitions with the workflows, does not load the workflow SDK to get them.
 */
function signalNamed<Args extends unknown[]>(name: string): SignalDefinition<Args> {
  return { type: 'signal', name } as SignalDefinition<Args>;
}

function updateNamed<Result, Args extends unknown[]>(name: string): UpdateDefinition<Result, Args> {
  return { type: 'update', name } as UpdateDefinition<Result, Args>;
}

function queryNamed<Result, Args extends unknown[] = []>(name: string): QueryDefinition<Result, Args> {
  return { type: 'query', name } as QueryDefinition<Result, Args>;
}
