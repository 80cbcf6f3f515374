/**
 * The visibility queries: `pollNow` by job's (the open follow-ups of one job, with no status term the dev server's
 * SQLite would plan by; poll-now.test.ts runs it against the dev server, the bench's lookups part measures it) and
 * `list`'s (cli.test.ts runs it).
 */
import { temporal } from '@temporalio/proto';
import { followUpListQuery, openFollowUpsOfJobQuery } from '../../src/client/follow-up-queries';
import { checkListFilter, LIST_STATES } from '../../src/client/follow-up-list';

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

describe("list's filter", () => {
  test('every list is of follow-ups, and never of a run that continued as new', () => {
    for (const state of [undefined, ...LIST_STATES]) {
      const query = followUpListQuery(checkListFilter({ state }));
      expect(query.startsWith("WorkflowType = 'followUpWorkflow'")).toBe(true);
      expect(query).toMatch(/ExecutionStatus != 'ContinuedAsNew'|ExecutionStatus IN \('Completed'/);
    }
  });

  test('running is "not closed" spelt out; ended is every ending status; an outcome is its search attribute', () => {
    const terms = (query: string) => new Set(query.split(' AND '));
    expect(terms(followUpListQuery({ projectId: 'proj', jobId: 'job-1', state: 'running' }))).toEqual(
      terms(openFollowUpsOfJobQuery({ projectId: 'proj', jobId: 'job-1' })),
    );
    expect(followUpListQuery({ state: 'ended' })).toBe(
      "WorkflowType = 'followUpWorkflow' AND ExecutionStatus IN ('Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut')",
    );
    expect(followUpListQuery({ projectId: 'proj', state: 'timed-out' })).toBe(
      "WorkflowType = 'followUpWorkflow' AND AgentProjectId = 'proj' AND ExecutionStatus != 'ContinuedAsNew' AND AgentFollowUpOutcome = 'timed-out'",
    );
  });

  test('a bad filter names the field and what it takes, before any request; the limit defaults to 50', () => {
    expect(checkListFilter({}).limit).toBe(50);
    expect(() => checkListFilter({ projectId: "p' OR '1'='1" })).toThrow(
      expect.objectContaining({ problems: [expect.objectContaining({ field: 'projectId' })] }),
    );
    expect(() => checkListFilter({ jobId: '' })).toThrow(/jobId must not be empty/);
    expect(() => checkListFilter({ state: 'done' as never })).toThrow(/state must be one of running, ended, completed/);
    for (const limit of [0, 1.5, 1_001])
      expect(() => checkListFilter({ limit })).toThrow(/limit must be a whole number from 1 to 1000/);
  });
});
