/**
 * Explicit workflow ids: a taken id attaches only to a follow-up with the same project, job and prompt, and ids in the
 * coordinators' space are never a follow-up's. Refused on every surface: the library client (typed errors, nothing
 * sent), the CLI (exit 2), and the workflow itself when another starter bypasses the client.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ExitCode } from '../../src/cli';
import { ReservedWorkflowIdError, WorkflowIdInUseError, type FollowUpInput } from '../../src/client';
import { COORDINATOR_ID_PREFIX } from '../../src/kernel/workflow-ids';
import { FollowUpErrorType } from '../../src/kernel/types';
import { runCliOn as cli } from '../support/cli-runner';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const fast = ['--initial-interval', '100', '--max-interval', '300'];

/** What a refused start threw; fails the test when it did not throw. */
async function refusal(start: Promise<unknown>): Promise<unknown> {
  return start.then(
    (started) => {
      throw new Error(`expected the start to be refused, but it returned ${JSON.stringify(started)}`);
    },
    (error: unknown) => error,
  );
}

describe('a taken explicit id attaches only to the same follow-up', () => {
  test.each([
    ['another prompt', 'prompt', (first: FollowUpInput) => ({ ...first, prompt: 'Something else entirely' })],
    ['another job', 'jobId', (first: FollowUpInput) => ({ ...first, jobId: `${first.jobId}-other` })],
  ] as const)(
    'a start with %s is refused with WorkflowIdInUseError naming it; nothing is sent',
    async (_name, field, vary) => {
      const ref = uniqueJob();
      h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
      const first: FollowUpInput = { ...ref, prompt: 'Fix the flaky test', polling: FAST_POLLING };
      const second = vary(first);
      // The other job exists too, so a wrongly sent message would be accepted and counted (adding the same job again would reset it).
      if (second.jobId !== first.jobId) h.simulator.addJob({ projectId: second.projectId, jobId: second.jobId });
      const taskQueue = h.taskQueue();
      const workflowId = `explicit-${randomUUID()}`;
      const followUps = h.followUps(taskQueue);
      const worker = await h.worker(taskQueue);
      await worker.runUntil(async () => {
        expect(await followUps.start(first, { workflowId })).toEqual({ workflowId, attached: false });
        await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the first message');
        const { runId } = await h.client.workflow.getHandle(workflowId).describe();

        const error = await refusal(followUps.start(second, { workflowId }));
        expect(error).toBeInstanceOf(WorkflowIdInUseError);
        const refused = error as WorkflowIdInUseError;
        expect({ workflowId: refused.workflowId, mismatches: refused.mismatches }).toEqual({
          workflowId,
          mismatches: [field],
        });
        expect(refused.message).toContain(
          `workflow id '${workflowId}' belongs to a follow-up to project '${ref.projectId}', job '${ref.jobId}'`,
        );
        expect(refused.message).toContain(`the ${field === 'jobId' ? 'job' : 'prompt'} differs. Nothing was sent`);

        // The first follow-up goes on in the same run; no other started.
        const after = await h.client.workflow.getHandle(workflowId).describe();
        expect({ runId: after.runId, status: after.status.name }).toEqual({ runId, status: 'RUNNING' });
        await followUps.cancel(workflowId);
        await followUps.outcome(workflowId);
      });
      expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
      expect(h.simulator.counts(second.projectId, second.jobId).messagesAccepted).toBe(field === 'jobId' ? 0 : 1);
    },
  );

  test('a start with the same project, job and prompt attaches, even with other options, and sends once', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const input: FollowUpInput = { ...ref, prompt: 'Add a changelog entry', polling: FAST_POLLING };
    const taskQueue = h.taskQueue();
    const workflowId = `explicit-${randomUUID()}`;
    const followUps = h.followUps(taskQueue);
    const worker = await h.worker(taskQueue);
    const result = await worker.runUntil(async () => {
      expect(await followUps.start(input, { workflowId })).toEqual({ workflowId, attached: false });
      const again = await followUps.start({ ...input, polling: { ...FAST_POLLING, timeout: '1h' } }, { workflowId });
      expect(again).toMatchObject({ workflowId, attached: true });
      return followUps.result(workflowId);
    });
    expect(result.outcome).toBe('completed');
    // Once completed, the same id still attaches rather than sending again.
    expect(await followUps.start(input, { workflowId })).toMatchObject({ workflowId, attached: true });
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test('an id reused for another job after its follow-up was cancelled sends to the new job: the old run sent to the old one', async () => {
    const first = uniqueJob();
    const second = { projectId: first.projectId, jobId: `${first.jobId}-next` };
    h.simulator.addJob({ ...first, workMs: 10 * 60_000 });
    h.simulator.addJob(second);
    const taskQueue = h.taskQueue();
    const workflowId = `explicit-${randomUUID()}`;
    const followUps = h.followUps(taskQueue);
    const worker = await h.worker(taskQueue);
    const outcome = await worker.runUntil(async () => {
      await followUps.start({ ...first, prompt: 'Rename the module', polling: FAST_POLLING }, { workflowId });
      await waitFor(() => h.simulator.counts(first.projectId, first.jobId).messagesAccepted === 1, 'the first message');
      await followUps.cancel(workflowId);
      expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
      // A cancelled follow-up's id may be used again (ALLOW_DUPLICATE_FAILED_ONLY), here for another job.
      expect(
        await followUps.start({ ...second, prompt: 'Rename the module', polling: FAST_POLLING }, { workflowId }),
      ).toEqual({ workflowId, attached: false });
      return followUps.outcome(workflowId);
    });
    expect(outcome.kind).toBe('completed');
    expect(h.simulator.counts(second.projectId, second.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
    expect(h.simulator.counts(first.projectId, first.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test('a start under the id of a workflow that is no follow-up is refused, and that workflow is left alone', async () => {
    const ref = uniqueJob();
    // No worker polls this queue, so the other workflow stays running, whatever its type.
    const taskQueue = h.taskQueue();
    const workflowId = `explicit-${randomUUID()}`;
    const other = await h.client.workflow.start('someOtherWorkflow', {
      taskQueue,
      workflowId,
      args: [{ ...ref, prompt: 'Hi' }],
    });
    try {
      const error = await refusal(h.followUps(taskQueue).start({ ...ref, prompt: 'Hi' }, { workflowId }));
      expect(error).toBeInstanceOf(WorkflowIdInUseError);
      expect((error as WorkflowIdInUseError).mismatches).toEqual(['workflowType']);
      expect((error as WorkflowIdInUseError).message).toContain(
        `workflow id '${workflowId}' belongs to a workflow of type 'someOtherWorkflow', not to a follow-up.`,
      );
      const after = await other.describe();
      expect({ runId: after.runId, type: after.type, status: after.status.name }).toEqual({
        runId: other.firstExecutionRunId,
        type: 'someOtherWorkflow',
        status: 'RUNNING',
      });
    } finally {
      await other.terminate('test over');
    }
  });
});

describe("ids in the coordinators' space are never a follow-up's", () => {
  test('the client refuses one before anything starts', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const workflowId = `${COORDINATOR_ID_PREFIX}${randomUUID()}`;
    const error = await refusal(h.followUps(h.taskQueue()).start({ ...ref, prompt: 'Hi' }, { workflowId }));
    expect(error).toBeInstanceOf(ReservedWorkflowIdError);
    expect((error as ReservedWorkflowIdError).workflowId).toBe(workflowId);
    expect((error as ReservedWorkflowIdError).message).toContain(
      `workflow id '${workflowId}' is reserved: ids starting with 'agent-followup-project/' belong to the project coordinators`,
    );
    await expect(h.client.workflow.getHandle(workflowId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  test('the workflow started there directly fails at once with InvalidFollowUpInput and sends nothing', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const taskQueue = h.taskQueue();
    const workflowId = `${COORDINATOR_ID_PREFIX}${randomUUID()}`;
    const worker = await h.worker(taskQueue);
    const error = await worker.runUntil(
      refusal(
        h.client.workflow.execute('followUpWorkflow', {
          taskQueue,
          workflowId,
          args: [{ ...ref, prompt: 'Hi', polling: FAST_POLLING }],
        }),
      ),
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect({
      type: (cause as ApplicationFailure).type,
      nonRetryable: (cause as ApplicationFailure).nonRetryable,
    }).toEqual({
      type: FollowUpErrorType.InvalidInput,
      nonRetryable: true,
    });
    expect((cause as ApplicationFailure).message).toBe(
      `Invalid follow-up input: workflow id '${workflowId}' is reserved: ids starting with 'agent-followup-project/' ` +
        'belong to the project coordinators, never to a follow-up; start the follow-up under another id',
    );
    const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
    expect((history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes)).toEqual([]);
    const counts = h.simulator.counts(ref.projectId, ref.jobId);
    expect({ accepted: counts.messagesAccepted, gets: counts.gets }).toEqual({ accepted: 0, gets: 0 });
  });
});

describe('the CLI', () => {
  test('send --workflow-id of a follow-up with another prompt exits 2 with the message; the first is sent once', async () => {
    const ref = uniqueJob();
    h.simulator.addJob(ref);
    const taskQueue = h.taskQueue();
    const workflowId = `explicit-${randomUUID()}`;
    const send = (prompt: string, ...extra: string[]) =>
      cli(
        [
          'send',
          '--project',
          ref.projectId,
          '--job',
          ref.jobId,
          '--prompt',
          prompt,
          '--workflow-id',
          workflowId,
          ...fast,
          ...extra,
        ],
        taskQueue,
      );
    const worker = await h.worker(taskQueue);
    await worker.runUntil(async () => {
      expect((await send('Fix the flaky test')).code).toBe(ExitCode.Ok);
      for (const extra of [[], ['--json'], ['--wait']]) {
        const refused = await send('Rename the module', ...extra);
        // Under --json the error is on stdout too, in the one shape of every command's errors.
        const out = extra.includes('--json')
          ? (JSON.parse(refused.out) as { error: { type: string } }).error.type
          : refused.out;
        expect({ code: refused.code, out }).toEqual({
          code: ExitCode.BadInput,
          out: extra.includes('--json') ? 'BadInput' : '',
        });
        expect(refused.err).toContain(
          `agent-followup: workflow id '${workflowId}' belongs to a follow-up to project '${ref.projectId}', job '${ref.jobId}' with ` +
            `prompt "Fix the flaky test"; you asked for project '${ref.projectId}', job '${ref.jobId}' with prompt "Rename the module": ` +
            'the prompt differs. Nothing was sent',
        );
        expect(refused.err).not.toContain('warning: attached');
      }
      await h.followUps(taskQueue).result(workflowId);
    });
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test("send --workflow-id in the coordinators' space exits 2 and never connects", async () => {
    const run = await cli(
      ['send', '--project', 'p', '--job', 'j', '--prompt', 'x', '--workflow-id', `${COORDINATOR_ID_PREFIX}p`],
      'unused',
    );
    expect({ code: run.code, connected: run.connected, out: run.out }).toEqual({
      code: ExitCode.BadInput,
      connected: false,
      out: '',
    });
    expect(run.err).toContain(`agent-followup: workflow id '${COORDINATOR_ID_PREFIX}p' is reserved`);
    expect(run.err).toContain('Pick another workflow id (--workflow-id)');
  });
});
