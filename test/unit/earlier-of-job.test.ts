/**
 * The check-in's one visibility list: which rows are earlier runs of the follow-up's id and which are earlier
 * follow-ups to its job, a lane longer than a check-in names, and a server without visibility. The integration tests
 * (faults: a run that resumes from an earlier one; coordinator-order: start order) run it against the dev server.
 */
import { ServiceError, type Client } from '@temporalio/client';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { createFindEarlierOfJob } from '../../src/coordinator/earlier-of-job.activity';
import { MAX_BEFORE } from '../../src/coordinator/coordinator-messages';

interface Row {
  workflowId: string;
  runId: string;
  startTime: Date;
}

/** A client whose `workflow.list` answers each query from `answer` and records what it was asked. */
function fakeClient(answer: (query: string) => Row[] | Error) {
  const queries: string[] = [];
  const client = {
    workflow: {
      list: ({ query }: { query: string }) => {
        queries.push(query);
        const rows = answer(query);
        return (async function* () {
          if (rows instanceof Error) throw rows;
          yield* rows;
        })();
      },
    },
  } as unknown as Client;
  return { client, queries };
}

const asking = {
  projectId: 'proj',
  jobId: 'job-1',
  workflowId: 'follow-up-x',
  runId: 'run-now',
  startedAtMs: Date.parse('2026-12-01T12:00:00.000Z'),
  findEarlier: true,
};
const row = (workflowId: string, runId: string, startIso = '2026-12-01T11:00:00.000Z'): Row => ({
  workflowId,
  runId,
  startTime: new Date(startIso),
});

test('one list names the earlier follow-ups to the job and the earlier runs of the id, the asking run in neither', async () => {
  const { client, queries } = fakeClient(() => [
    row('follow-up-a', 'a1'),
    row('follow-up-x', 'run-now', '2026-12-01T12:00:00.000Z'),
    row('follow-up-b', 'b1'),
    row('follow-up-x', 'run-old', '2026-12-01T10:00:00.000Z'),
  ]);
  const found = await createFindEarlierOfJob(client)(asking);
  expect(found).toEqual({
    before: ['follow-up-a', 'follow-up-b'],
    runs: [{ runId: 'run-old', startMs: Date.parse('2026-12-01T10:00:00.000Z') }],
  });
  // The job's keywords lead; the running condition stands only inside the OR (a top-level one walks every running
  // workflow of the namespace on the dev server's SQLite).
  expect(queries).toEqual([
    'AgentProjectId = "proj" AND AgentJobId = "job-1" AND (WorkflowId = "follow-up-x" OR ' +
      '(WorkflowType = "followUpWorkflow" AND ExecutionStatus = "Running" AND StartTime < "2026-12-01T12:00:00.000Z"))',
  ]);
});

test('a lane longer than a check-in names: the first MAX_BEFORE are named and the runs of the id are listed alone', async () => {
  const lane = Array.from({ length: MAX_BEFORE + 5 }, (_, index) => row(`follow-up-${index}`, `r${index}`));
  const { client, queries } = fakeClient((query) =>
    query.includes(' OR ') ? [row('follow-up-x', 'run-early'), ...lane] : [row('follow-up-x', 'run-old')],
  );
  const found = await createFindEarlierOfJob(client)(asking);
  expect(found.before).toEqual(lane.slice(0, MAX_BEFORE).map((earlier) => earlier.workflowId));
  // From the list of the id alone, not the runs seen before the lane was cut off.
  expect(found.runs.map((run) => run.runId)).toEqual(['run-old']);
  expect(queries[1]).toBe('AgentProjectId = "proj" AND AgentJobId = "job-1" AND WorkflowId = "follow-up-x"');
});

test('a re-check-in, which reads no earlier run, makes one list however long the lane, and names no run', async () => {
  const lane = Array.from({ length: MAX_BEFORE + 5 }, (_, index) => row(`follow-up-${index}`, `r${index}`));
  const { client, queries } = fakeClient(() => [row('follow-up-x', 'run-early'), ...lane]);
  const found = await createFindEarlierOfJob(client)({ ...asking, findEarlier: false });
  expect(found.before).toEqual(lane.slice(0, MAX_BEFORE).map((earlier) => earlier.workflowId));
  expect(found.runs).toEqual([]);
  expect(queries).toHaveLength(1);
});

test('a lane of exactly MAX_BEFORE is named whole in one list', async () => {
  const lane = Array.from({ length: MAX_BEFORE }, (_, index) => row(`follow-up-${index}`, `r${index}`));
  const { client, queries } = fakeClient(() => lane);
  const found = await createFindEarlierOfJob(client)(asking);
  expect(found.before).toHaveLength(MAX_BEFORE);
  expect(queries).toHaveLength(1);
});

test('ids with quotes are quoted, so a job id cannot widen the query', async () => {
  const { client, queries } = fakeClient(() => []);
  await createFindEarlierOfJob(client)({ ...asking, jobId: 'j" OR WorkflowId != "' });
  expect(queries[0]).toContain('AgentJobId = "j\\" OR WorkflowId != \\""');
});

test('a server without visibility (the time-skipping test server) has nothing earlier; other failures are thrown', async () => {
  const unimplemented = new ServiceError('no visibility', {
    cause: Object.assign(new Error('x'), { code: GrpcStatus.UNIMPLEMENTED }),
  });
  expect(await createFindEarlierOfJob(fakeClient(() => unimplemented).client)(asking)).toEqual({
    before: [],
    runs: [],
  });
  const down = new ServiceError('unavailable', {
    cause: Object.assign(new Error('x'), { code: GrpcStatus.UNAVAILABLE }),
  });
  await expect(createFindEarlierOfJob(fakeClient(() => down).client)(asking)).rejects.toBe(down);
});
