/**
 * `pollNow` by job's visibility query: the open follow-ups of one job, with no status term the dev server's SQLite
 * would plan by (poll-now.test.ts runs it against the dev server; the bench's lookups part measures it).
 */
import { temporal } from '@temporalio/proto';
import { openFollowUpsOfJobQuery } from '../../src/client/job-follow-ups-query';

const { WorkflowExecutionStatus } = temporal.api.enums.v1;
const OPEN = ['UNSPECIFIED', 'RUNNING', 'PAUSED'];

/** WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW → ContinuedAsNew, as visibility names it. */
function visibilityName(key: string): string {
  return key
    .replace('WORKFLOW_EXECUTION_STATUS_', '')
    .split('_')
    .map((word) => word[0] + word.slice(1).toLowerCase())
    .join('');
}

test('every status the server can give an ended run is ruled out, and no open one', () => {
  const query = openFollowUpsOfJobQuery({ projectId: 'proj', jobId: 'job-1' });
  for (const key of Object.keys(WorkflowExecutionStatus).filter((name) => isNaN(Number(name)))) {
    const short = key.replace('WORKFLOW_EXECUTION_STATUS_', '');
    const term = `ExecutionStatus != '${visibilityName(key)}'`;
    if (OPEN.includes(short)) expect(query).not.toContain(term);
    else expect(query).toContain(term);
  }
});

test("the job's keywords lead, and no term asks for one status", () => {
  const query = openFollowUpsOfJobQuery({ projectId: 'proj', jobId: 'job-1' });
  expect(
    query.startsWith("AgentProjectId = 'proj' AND AgentJobId = 'job-1' AND WorkflowType = 'followUpWorkflow'"),
  ).toBe(true);
  expect(query).not.toMatch(/ExecutionStatus\s*=\s*'/);
});
