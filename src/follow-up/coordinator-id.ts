/**
 * Workflow ids of the project coordinators (workflows/project-coordinator.ts): one per project, holding its send
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
