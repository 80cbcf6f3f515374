/**
 * The visibility query for the open follow-ups of one job (`pollNow` by job). "Not closed" rather than
 * `ExecutionStatus = 'Running'`: on the dev server's SQLite that term, beside the workflow type, made the planner walk
 * every running workflow of the namespace (docs/BENCHMARKS.md, "The check-in's look-ups"). An open run that is not
 * running (paused) is listed too; the caller asks only those that run.
 */
import { FOLLOW_UP_WORKFLOW_TYPE } from '../kernel/workflow-ids';

/** Every status a visibility list can give a run that has ended. */
const CLOSED_STATUSES = ['Completed', 'Failed', 'Canceled', 'Terminated', 'ContinuedAsNew', 'TimedOut'] as const;

/** Both ids must have passed identifierProblem, which allows no quotes or spaces: they are put in as they are. */
export function openFollowUpsOfJobQuery(job: { projectId: string; jobId: string }): string {
  return [
    `AgentProjectId = '${job.projectId}'`,
    `AgentJobId = '${job.jobId}'`,
    `WorkflowType = '${FOLLOW_UP_WORKFLOW_TYPE}'`,
    ...CLOSED_STATUSES.map((closed) => `ExecutionStatus != '${closed}'`),
  ].join(' AND ');
}
