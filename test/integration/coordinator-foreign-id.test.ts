/**
 * Issue 37, a foreign workflow under a coordinator's id: anyone who may start workflows in the namespace can take
 * `agent-followup-project/<project>` first (TEMPORAL-FACTS.md, "Signal-with-start ... nothing checks the type"). A
 * follow-up to that project must then fail at once with a failure that says what holds the id and how to free it,
 * never wait out its timeout, and never send; follow-ups to other projects go on as usual.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FollowUpErrorType } from '../../src/kernel/types';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

jest.setTimeout(10 * 60_000);

const COORDINATOR_ID_TAKEN = FollowUpErrorType.CoordinatorIdTaken;

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ honourIdempotencyKey: false });
});
afterAll(async () => {
  await h?.close();
});

test('a follow-up to a project whose coordinator id is held by another workflow type fails with CoordinatorIdTaken, naming the id, the type and the fix, and sends nothing; another project is unaffected', async () => {
  const taken = uniqueJob('taken');
  const other = uniqueJob('unaffected');
  h.simulator.addJob(taken);
  h.simulator.addJob(other);
  const coordinatorId = `agent-followup-project/${taken.projectId}`;
  // What someone's typo or the Web UI's "Start Workflow" can do: a workflow of another type, on a queue nobody polls.
  const foreign = await h.client.workflow.start('someOtherWorkflow', {
    workflowId: coordinatorId,
    taskQueue: `${h.taskQueue()}-nobody-polls`,
    args: [],
  });
  try {
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    await worker.runUntil(async () => {
      const polling = { ...FAST_POLLING, timeout: '10m' };
      const { workflowId } = await followUps.start({
        ...taken,
        prompt: 'To a project whose coordinator id is taken',
        polling,
      });
      const unaffected = await followUps.start({
        ...other,
        prompt: 'To a project with a free coordinator id',
        polling,
      });
      // The other project first: it is not held up by the taken id.
      expect((await followUps.outcome(unaffected.workflowId)).kind).toBe('completed');
      expect(h.simulator.counts(other.projectId, other.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });

      // Well before the follow-up's own 10 minutes: a guard, so a follow-up that waits shows how it stands.
      const handle = h.client.workflow.getHandle(workflowId);
      await waitFor(
        async () => (await handle.describe()).status.name !== 'RUNNING',
        'the follow-up to end',
        5 * 60_000,
      ).catch(async (error: unknown) => {
        throw new Error(
          `${String(error)}; it stands at ${JSON.stringify(await followUps.progress(workflowId).catch((caught: unknown) => String(caught)))}`,
        );
      });
      const error = await followUps.result(workflowId).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const failure = innermostApplicationFailure(error as WorkflowFailedError);
      expect(failure?.type).toBe(COORDINATOR_ID_TAKEN);
      expect(failure?.message).toContain(coordinatorId);
      expect(failure?.message).toContain('someOtherWorkflow');
      expect(failure?.message).toMatch(/terminate/i);
      expect(h.simulator.counts(taken.projectId, taken.jobId).messagesAccepted).toBe(0);
      // The foreign workflow is left alone: only its owner (or an operator) may end it.
      expect((await foreign.describe()).status.name).toBe('RUNNING');
    });
  } finally {
    await foreign.terminate('test: clean up the foreign workflow').catch(() => undefined);
  }
});

/** The deepest ApplicationFailure in the chain (workflow → activity → application failure), where the type sits. */
function innermostApplicationFailure(error: WorkflowFailedError): ApplicationFailure | undefined {
  let found: ApplicationFailure | undefined;
  let cause: unknown = error.cause;
  while (cause instanceof Error) {
    if (cause instanceof ApplicationFailure) found = cause;
    cause = (cause as Error & { cause?: unknown }).cause;
  }
  return found;
}
