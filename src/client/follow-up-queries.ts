/**
 * The visibility queries for follow-ups: the open ones of one job (`pollNow` by job), and a list's filter (`list`).
 * "Not closed" is spelt out rather than `ExecutionStatus = 'Running'`: on the dev server's SQLite that term, beside
 * the workflow type, made the planner walk every running workflow of the namespace (docs/BENCHMARKS.md, "Two
 * choices these bursts made"). An open run that is not running (paused) is listed too; `pollNow` asks only those that run.
 */
import { FOLLOW_UP_WORKFLOW_TYPE } from '../kernel/workflow-ids';
import type { FollowUpListFilter } from './follow-up-list';

/** Every status a visibility list can give a chain that has ended. */
const ENDED_STATUSES = ['Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'] as const;

/** A run that is open: neither ended nor continued as new. */
const NOT_CLOSED_TERMS = [...ENDED_STATUSES, 'ContinuedAsNew'].map((closed) => `ExecutionStatus != '${closed}'`);

/** Both ids must have passed identifierProblem, which allows no quotes or spaces: they are put in as they are. */
export function openFollowUpsOfJobQuery(job: { projectId: string; jobId: string }): string {
  return [
    `AgentProjectId = '${job.projectId}'`,
    `AgentJobId = '${job.jobId}'`,
    `WorkflowType = '${FOLLOW_UP_WORKFLOW_TYPE}'`,
    ...NOT_CLOSED_TERMS,
  ].join(' AND ');
}

/** The query for a list's filter, checked (checkListFilter): the same rule for the ids as above. */
export function followUpListQuery(filter: FollowUpListFilter): string {
  const terms = [`WorkflowType = '${FOLLOW_UP_WORKFLOW_TYPE}'`];
  if (filter.projectId !== undefined) terms.push(`AgentProjectId = '${filter.projectId}'`);
  if (filter.jobId !== undefined) terms.push(`AgentJobId = '${filter.jobId}'`);
  // A run that continued as new is never listed: its chain's current run stands for it.
  if (filter.state === 'running') terms.push(...NOT_CLOSED_TERMS);
  else if (filter.state === 'ended')
    terms.push(`ExecutionStatus IN (${ENDED_STATUSES.map((s) => `'${s}'`).join(', ')})`);
  else {
    terms.push(`ExecutionStatus != 'ContinuedAsNew'`);
    if (filter.state !== undefined) terms.push(`AgentFollowUpOutcome = '${filter.state}'`);
  }
  return terms.join(' AND ');
}
