/**
 * Every workflow id and task queue name of ours, and the workflow types' names: one module, so their spaces cannot
 * overlap unnoticed. Our ids all start with `agent-followup`, with '/' between their parts (no project or job id may
 * contain one, so no two ids meet).
 *
 * Workflow ids of the project coordinators (src/coordinator/): one per project, holding its send
 * budget and its jobs' lanes. They live in a space of their own: no follow-up may be started with an id in it (the
 * client refuses, and the follow-up workflow fails at once if another starter tries), so a follow-up can never occupy
 * a coordinator's place, and a coordinator checks its own id, so it never occupies a follow-up's. Pure: workflow code
 * imports it.
 */

/**
 * The task queue every worker of a namespace runs coordinators on, unless AGENT_COORDINATOR_TASK_QUEUE says
 * otherwise: one queue for the namespace, so follow-ups of every task queue and service share one coordinator per
 * project.
 */
export const DEFAULT_COORDINATOR_TASK_QUEUE = 'agent-followup-coordinators';

/** Every coordinator's id starts with this; project ids cannot contain '/', so the rest names exactly one project. */
export const COORDINATOR_ID_PREFIX = 'agent-followup-project/';

/** The workflow id of the coordinator of `projectId`. */
export function coordinatorWorkflowId(projectId: string): string {
  return `${COORDINATOR_ID_PREFIX}${projectId}`;
}

/**
 * The workflow that keeps the namespace's default budget (`budget set` without `--project`). In the coordinators'
 * space, under a name no project id can have ('*' is not allowed in one).
 */
export const BUDGET_DEFAULTS_WORKFLOW_ID = `${COORDINATOR_ID_PREFIX}*`;

/** The memo key under which it shows its default, so workers read it without a query. */
export const DEFAULT_BUDGET_MEMO_KEY = 'sendsPerProjectPerHour';

/** Whether `workflowId` falls in the coordinators' space (and so may not be a follow-up's). */
export function isCoordinatorWorkflowId(workflowId: string): boolean {
  return workflowId.startsWith(COORDINATOR_ID_PREFIX);
}

/** The workflow types the workers register (workflows/index.ts), by the names clients start them with. */
export const FOLLOW_UP_WORKFLOW_TYPE = 'followUpWorkflow';
export const FOLLOW_UP_NOTIFY_WORKFLOW_TYPE = 'followUpNotifyWorkflow';
export const PROJECT_COORDINATOR_WORKFLOW_TYPE = 'projectCoordinatorWorkflow';
export const BUDGET_DEFAULTS_WORKFLOW_TYPE = 'budgetDefaultsWorkflow';
export const CHECK_AGENT_JOB_WORKFLOW_TYPE = 'checkAgentJobWorkflow';
export const JOB_WATCHER_WORKFLOW_TYPE = 'jobWatcherWorkflow';

/** The task queue of the follow-ups when AGENT_TASK_QUEUE does not name another. */
export const DEFAULT_TASK_QUEUE = 'agent-followup';

/**
 * Every follow-up's default id starts with this (client/ids.ts adds project, job and the digest of the tuple, keyed
 * when payloads are encrypted, so an id in clear gives no prompt away).
 */
export const FOLLOW_UP_ID_PREFIX = 'agent-followup/';

/** Every follow-up schedule's default id starts with this. */
export const SCHEDULE_ID_PREFIX = 'agent-followup-schedule/';

/**
 * A follow-up's callback workflow (workflows/notify/): under the follow-up's id and its first run, so a follow-up
 * that continues as new still has one callback, and the id is the delivery id receivers dedupe on.
 */
export function notifyWorkflowId(followUpWorkflowId: string, firstExecutionRunId: string): string {
  return `${followUpWorkflowId}/notify/${firstExecutionRunId}`;
}

/** Where the job watchers' workflow ids start: no follow-up may take one. */
export const WATCHER_ID_PREFIX = 'agent-followup-watch/';

/**
 * How many watchers past its shard's a wait moves on to when each refused it (a full book, or an id another workflow
 * holds), before its follow-up polls for itself: a book holds about 2,600 waits, so a shard's chain holds over 20,000.
 */
export const MAX_OVERFLOW = 8;

/**
 * The watcher of a shard of one task queue's jobs (each deployment reads with its own key); `overflow` k > 0: the k-th
 * watcher a wait moves on to when the ones before it refused it (their books full, or their ids held by another
 * workflow).
 */
export function watcherWorkflowId(taskQueue: string, shard: number, overflow = 0): string {
  return `${WATCHER_ID_PREFIX}${taskQueue}/${shard}${overflow > 0 ? `/${overflow}` : ''}`;
}

/** A workflow that is not one of this deployment's job watchers holds a watcher's id: its follow-ups read for themselves. */
export const WATCHER_ID_TAKEN = 'WatcherIdTaken';

/**
 * The task queue the watchers of a follow-up task queue run on. A queue of their own gives them a workflow cache of
 * their own: in the follow-ups' cache, thousands of follow-ups evict them, and an evicted watcher replays thousands of
 * signals for every look at its book.
 */
export function watcherTaskQueue(followUpTaskQueue: string): string {
  return `${followUpTaskQueue}/watchers`;
}

/** The follow-ups' task queue a watcher serves, from the queue it runs on (the inverse of watcherTaskQueue). */
export function servedTaskQueue(watcherQueue: string): string {
  return watcherQueue.endsWith('/watchers') ? watcherQueue.slice(0, -'/watchers'.length) : watcherQueue;
}
