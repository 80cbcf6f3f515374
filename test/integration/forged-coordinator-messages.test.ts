/**
 * Issue 73 point 1, the coordinator's trust: messages sent by name with the raw client, as anyone with access to the
 * namespace can, well-formed, decide nothing. A `leave` without the holder's ticket (or with a wrong one, or with the
 * public first run id the ticket names) hands no job on; a `standing` or `slotOutcome` under that public id grants or
 * frees no slot; a check-in for a follow-up that does not run is refused after the coordinator describes it and holds
 * no place and no slot; no check-in sets the budget; a raw `setBudget` is held to the CLI's rule in the workflow.
 */
import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { coordinatorWorkflowId, PROJECT_COORDINATOR_WORKFLOW_TYPE } from '../../src/kernel/workflow-ids';
import { createHarness, FAST_POLLING, sealedTicket, uniqueJob, waitFor, type Harness } from '../support/harness';
import type { projectCoordinatorWorkflow } from '../../src/coordinator/project-coordinator';
import { projectQuery } from '../../src/coordinator/messages';

jest.setTimeout(240_000);

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/** A follow-up chain's first run id: what anyone who can describe or list workflows reads. */
async function firstRunIdOf(workflowId: string): Promise<string> {
  const description = await h.client.workflow.getHandle(workflowId).describe();
  return description.raw.workflowExecutionInfo?.firstRunId || description.runId;
}

async function historyLength(handle: WorkflowHandle): Promise<number> {
  return (await handle.fetchHistory()).events?.length ?? 0;
}

/** Until the coordinator's last signal was taken in by a completed workflow task. */
async function signalsTakenIn(handle: WorkflowHandle): Promise<void> {
  await waitFor(async () => {
    const events = (await handle.fetchHistory()).events ?? [];
    const lastSignal = events.map((event) => Boolean(event.workflowExecutionSignaledEventAttributes)).lastIndexOf(true);
    return events.slice(lastSignal).some((event) => event.workflowTaskCompletedEventAttributes);
  }, 'the coordinator to take the signals in');
}

test("a forged leave without the holder's ticket, with a wrong one or with its public first run id, hands nothing on: the second follow-up sends after the first one's result, and the first returns its own PR", async () => {
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const job = uniqueJob('leave');
  // The agent works long enough that the second surely waits in the lane while the forged leaves arrive.
  h.simulator.addJob({ ...job, workMs: 6_000 });
  await worker.runUntil(async () => {
    const first = await followUps.start({ ...job, prompt: 'First', polling: FAST_POLLING });
    await waitFor(() => h.simulator.counts(job.projectId, job.jobId).messagesAccepted === 1, 'the first message');
    const second = await followUps.start({ ...job, prompt: 'Second', polling: FAST_POLLING });
    await waitFor(
      async () => (await followUps.progress(second.workflowId).catch(() => null))?.queue?.reason === 'lane',
      'the second to wait in the lane',
    );
    const coordinator = h.client.workflow.getHandle(coordinatorWorkflowId(job.projectId));
    const eventsBefore = await historyLength(coordinator);

    // Its chain's first run id is what anyone who can list workflows reads; the ticket our workers sealed is not.
    const firstRunId = await firstRunIdOf(first.workflowId);
    await coordinator.signal('leave', { workflowId: first.workflowId });
    await coordinator.signal('leave', { workflowId: first.workflowId, ticket: 'not-its-ticket' });
    await coordinator.signal('leave', { workflowId: first.workflowId, ticket: firstRunId });
    await signalsTakenIn(coordinator);

    expect((await coordinator.query(projectQuery)).lanes).toEqual([
      { jobId: job.jobId, holder: first.workflowId, waiting: [second.workflowId] },
    ]);
    expect(h.simulator.counts(job.projectId, job.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
    // Three signals, each a signal event and a workflow task (three events), and at most a timer the loop set again.
    expect((await historyLength(coordinator)) - eventsBefore).toBeLessThanOrEqual(15);

    const firstResult = await followUps.result(first.workflowId);
    const secondResult = await followUps.result(second.workflowId);
    expect([firstResult.outcome, secondResult.outcome]).toEqual(['completed', 'completed']);
    // The simulator numbers a job's pull requests from 101: each follow-up returns the one its own message made.
    expect(firstResult.prLink).toMatch(/\/pull\/101$/);
    expect(secondResult.prLink).toMatch(/\/pull\/102$/);
    expect(h.simulator.counts(job.projectId, job.jobId)).toMatchObject({ posts: 2, prompts: ['First', 'Second'] });
  });
});

test("a standing and a slotOutcome forged under a follow-up's public first run id give nothing: with the project's one send of the hour spent, the waiting follow-up takes no forged slot, and the spent slot still counts", async () => {
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const sent = uniqueJob('forged-slot');
  const waiting = { ...sent, jobId: `${sent.jobId}-b` };
  h.simulator.addJob(sent);
  h.simulator.addJob(waiting);
  await worker.runUntil(async () => {
    await followUps.setProjectBudget(sent.projectId, 1);
    const holder = await followUps.startAndWait({ ...sent, prompt: 'Takes the only slot', polling: FAST_POLLING });
    const waiter = await followUps.start({ ...waiting, prompt: 'Waits for the budget', polling: FAST_POLLING });
    await waitFor(
      async () => (await followUps.projectBudget(sent.projectId))?.waitingForBudget.length === 1,
      'the second follow-up to wait for the budget',
    );
    const handle = h.client.workflow.getHandle(waiter.workflowId);
    const { runId } = await handle.describe();
    const ticket = await firstRunIdOf(waiter.workflowId);
    // The slot it asked for (its run's first ask) and its turn, as the coordinator would grant them, but unsealed.
    const grant = { workflowId: waiter.workflowId, ticket, slot: `${runId}#1`, sendByMs: Date.now() + 60_000 };
    await handle.signal('standing', { ticket, standing: grant, notice: null });
    await signalsTakenIn(handle);
    const coordinator = h.client.workflow.getHandle(coordinatorWorkflowId(sent.projectId));
    const holderTicket = await firstRunIdOf(holder.workflowId);
    const holderRunId = (await h.client.workflow.getHandle(holder.workflowId).describe()).runId;
    const unsent = { slot: `${holderRunId}#1`, outcome: 'unsent', retryAfterMs: null };
    await coordinator.signal('slotOutcome', { workflowId: holder.workflowId, ticket: holderTicket, ...unsent });
    await signalsTakenIn(coordinator);

    // Nothing scheduled a send after the forged grant, and the coordinator still counts the spent slot.
    const events = (await handle.fetchHistory()).events ?? [];
    const sends = events.filter(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'sendFollowUpMessage',
    );
    expect(sends).toHaveLength(0);
    expect(h.simulator.counts(waiting.projectId, waiting.jobId).posts).toBe(0);
    expect(await followUps.projectBudget(sent.projectId)).toMatchObject({
      sentInWindow: 1,
      waitingForBudget: [waiter.workflowId],
    });
    // The true grant still comes: room in the budget lets it send once.
    await followUps.setProjectBudget(sent.projectId, 5);
    expect((await followUps.result(waiter.workflowId)).outcome).toBe('completed');
    expect(h.simulator.counts(waiting.projectId, waiting.jobId).posts).toBe(1);
  });
});

test('ten ghost check-ins with forged defaultLimits are refused after one describe each and hold nothing: no ghost is listed, the budget is unchanged, and a real follow-up to the project sends at once', async () => {
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, { coordination: { sendsPerHour: 10 } });
  const followUps = h.followUps(taskQueue);
  const job = uniqueJob('ghosts');
  h.simulator.addJob(job);
  const coordinator = h.client.workflow.getHandle(coordinatorWorkflowId(job.projectId));
  // Well-formed check-ins for follow-ups that never existed, each asking for a slot and carrying a budget (2,778 and
  // 1, as measured on main), each starting the coordinator if need be as the checkIn activity does. Their tickets are
  // sealed with the workers' own key, as only someone holding the agent API key could: the describe refuses them.
  const ghost = (index: number, sealed = true) =>
    h.client.workflow.executeUpdateWithStart('enter', {
      args: [
        {
          workflowId: `ghost-${index}-${job.projectId}`,
          ticket: sealed ? sealedTicket(`ghost-${index}-${job.projectId}`, `ghost-run-${index}`) : `ghost-run-${index}`,
          jobId: `ghost-job-${index}`,
          startedAtMs: index,
          before: [],
          deadlineMs: Date.now() + 600_000,
          slotFor: `ghost-run-${index}#1`,
          defaultLimit: index % 2 === 0 ? 2_778 : 1,
        },
      ],
      startWorkflowOperation: new WithStartWorkflowOperation<typeof projectCoordinatorWorkflow>(
        PROJECT_COORDINATOR_WORKFLOW_TYPE,
        {
          workflowId: coordinatorWorkflowId(job.projectId),
          taskQueue: h.coordinatorTaskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
          args: [{ projectId: job.projectId, sendsPerHour: 10 }],
        },
      ),
    });
  await worker.runUntil(async () => {
    const refusals = await Promise.allSettled(Array.from({ length: 10 }, (_, index) => ghost(index)));
    for (const refusal of refusals) {
      expect(refusal.status).toBe('rejected');
      const reason = (refusal as PromiseRejectedResult).reason as unknown;
      expect(reason).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((reason as WorkflowUpdateFailedError).cause?.message).toMatch(/no workflow 'ghost-\d+-.*' exists/);
    }
    // Unsealed, a check-in is refused before any describe.
    const unsealed = await ghost(10, false).catch((error: unknown) => error);
    expect(unsealed).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((unsealed as WorkflowUpdateFailedError).cause?.message).toMatch(/not one this worker would seal/);
    // Per ghost: its update accepted and completed, one describe (three activity events), a share of workflow tasks.
    expect(await historyLength(coordinator)).toBeLessThanOrEqual(11 * 9 + 10);
    // They left the coordinator nothing to keep: it ended idle, as a coordinator nobody checked in with does.
    await waitFor(
      async () => (await coordinator.describe()).status.name === 'COMPLETED',
      'the coordinator to end idle',
    );
    expect(await coordinator.result()).toMatchObject({ lanes: [], waitingForBudget: [], limit: 10, sentInWindow: 0 });

    const { workflowId } = await followUps.start({ ...job, prompt: 'Real', polling: FAST_POLLING });
    const result = await followUps.result(workflowId);
    expect(result.outcome).toBe('completed');
    expect(h.simulator.counts(job.projectId, job.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });

    const view = await coordinator.query(projectQuery);
    expect({
      lanes: view.lanes,
      waitingForBudget: view.waitingForBudget,
      limit: view.limit,
      limitSetForProject: view.limitSetForProject,
      waitedForBudget: view.totals.waitedForBudget,
      granted: view.totals.granted,
    }).toEqual({
      lanes: [],
      waitingForBudget: [],
      limit: 10,
      limitSetForProject: false,
      waitedForBudget: 0,
      granted: 1,
    });
    // The real follow-up's coordinator run: one describe and its own check-in, grant and leave, not a wait.
    expect(await historyLength(coordinator)).toBeLessThanOrEqual(30);
  });
});

test('a raw setBudget of 1e12 or 1.5 is refused in the workflow and leaves the budget as it was; the allow flag carried in the signal lets a budget above 100 through', async () => {
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const { projectId } = uniqueJob('budget');
  await worker.runUntil(async () => {
    await followUps.setProjectBudget(projectId, 5);
    const coordinator = h.client.workflow.getHandle(coordinatorWorkflowId(projectId));
    await waitFor(async () => (await coordinator.query(projectQuery)).limit === 5, 'the budget of 5');
    const eventsBefore = await historyLength(coordinator);

    await coordinator.signal('setBudget', { sendsPerHour: 1e12 });
    await coordinator.signal('setBudget', { sendsPerHour: 1.5 });
    await coordinator.signal('setBudget', { sendsPerHour: 500, aboveVendorLimit: 'yes' });
    await signalsTakenIn(coordinator);
    expect(await coordinator.query(projectQuery)).toMatchObject({ limit: 5, limitSetForProject: true });
    expect((await historyLength(coordinator)) - eventsBefore).toBeLessThanOrEqual(12);

    await followUps.setProjectBudget(projectId, 500, { aboveVendorLimit: true });
    await waitFor(async () => (await coordinator.query(projectQuery)).limit === 500, 'the budget of 500');
    await followUps.setProjectBudget(projectId, null);
  });
});
