/**
 * Every message a coordinator or a follow-up takes is checked: a malformed, stale or foreign one, sent by name with
 * the raw client as anyone with access to the namespace could, changes no outcome, fails no workflow task, and leaves
 * the job's order and the project's count as they were.
 */
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import {
  coordinatorWorkflowId,
  FOLLOW_UP_WORKFLOW_TYPE,
  PROJECT_COORDINATOR_WORKFLOW_TYPE,
} from '../../src/kernel/workflow-ids';
import { createHarness, FAST_POLLING, sealedTicket, waitFor, type Harness } from '../support/harness';
import type { projectCoordinatorWorkflow } from '../../src/coordinator/project-coordinator';
import { enterUpdate, leaveSignal, projectQuery } from '../../src/coordinator/messages';
jest.setTimeout(240_000);

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

test('forged, stale and malformed messages to a coordinator and to its follow-ups change nothing: each job still gets its messages once, in start order', async () => {
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const projectId = `forged-${Date.now()}`;
  const job = { projectId, jobId: 'job-1' };
  // The agent works long enough that the second follow-up surely waits in the lane while the messages arrive.
  h.simulator.addJob({ ...job, workMs: 6_000 });
  await worker.runUntil(async () => {
    const first = await followUps.start({ ...job, prompt: 'First', polling: FAST_POLLING });
    await waitFor(() => h.simulator.counts(projectId, job.jobId).messagesAccepted === 1, 'the first message');
    const second = await followUps.start({ ...job, prompt: 'Second', polling: FAST_POLLING });
    await waitFor(
      async () => (await followUps.progress(second.workflowId).catch(() => null))?.queue?.reason === 'lane',
      'the second to wait in the lane',
    );

    const coordinator = h.client.workflow.getHandle(coordinatorWorkflowId(projectId));
    const before = await coordinator.query(projectQuery);
    const eventsBefore = (await coordinator.fetchHistory()).events?.length ?? 0;
    // A malformed check-in is refused by the validator, before anything is written.
    for (const garbage of [
      'garbage',
      { workflowId: second.workflowId },
      { workflowId: 'x', ticket: 't', jobId: 'j', startedAtMs: 1, before: 'nobody', deadlineMs: 1, slotFor: null },
    ]) {
      await expect(coordinator.executeUpdate('enter', { args: [garbage] })).rejects.toBeInstanceOf(
        WorkflowUpdateFailedError,
      );
    }
    expect((await coordinator.fetchHistory()).events?.length ?? 0).toBe(eventsBefore);
    // Signals by name: garbage, another follow-up's leave without its ticket's run, a stale leave of the holder, a
    // slot never granted, a budget of nonsense.
    await coordinator.signal('leave', 'garbage');
    await coordinator.signal('leave', { workflowId: first.workflowId, ticket: 'an-earlier-run' });
    await coordinator.signal('leave', null);
    await coordinator.signal('slotOutcome', {
      workflowId: first.workflowId,
      slot: 'never-granted#1',
      outcome: 'unsent',
      retryAfterMs: null,
    });
    await coordinator.signal('slotOutcome', {
      workflowId: first.workflowId,
      slot: 'never-granted#1',
      outcome: 'refused',
      retryAfterMs: 3_600_000,
    });
    await coordinator.signal('slotOutcome', 42);
    await coordinator.signal('setBudget', { sendsPerHour: 'lots' });
    await coordinator.signal('setBudget', { sendsPerHour: -3 });
    // To the waiting follow-up: a forged turn (another run's ticket, and none at all) and garbage notices.
    const waiting = h.client.workflow.getHandle(second.workflowId);
    const forgedTurn = {
      workflowId: second.workflowId,
      ticket: 'not-its-check-in',
      slot: 'forged#1',
      sendByMs: Date.now() + 60_000,
    };
    await waiting.signal('standing', { ticket: 'not-its-check-in', standing: forgedTurn, notice: null });
    await waiting.signal('standing', { standing: { ...forgedTurn, ticket: undefined }, notice: null });
    await waiting.signal('standing', 'garbage');
    await waiting.signal('standing', {
      ticket: 'not-its-check-in',
      standing: null,
      notice: { reason: 'lane', jobId: job.jobId, ahead: -5 },
    });
    await waiting.signal('standing', null);

    await waitFor(async () => {
      const events = (await coordinator.fetchHistory()).events ?? [];
      const lastSignal = events
        .map((event) => Boolean(event.workflowExecutionSignaledEventAttributes))
        .lastIndexOf(true);
      return events.slice(lastSignal).some((event) => event.workflowTaskCompletedEventAttributes);
    }, 'the coordinator to take the signals in');
    const after = await coordinator.query(projectQuery);
    expect({ lanes: after.lanes, limit: after.limit, limitSetForProject: after.limitSetForProject }).toEqual({
      lanes: before.lanes,
      limit: before.limit,
      limitSetForProject: before.limitSetForProject,
    });
    // The second is still behind the first: the forged turn did not let it send early.
    expect(h.simulator.counts(projectId, job.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });

    const results = await Promise.all([followUps.result(first.workflowId), followUps.result(second.workflowId)]);
    expect(results.map((result) => result.outcome)).toEqual(['completed', 'completed']);
    expect(h.simulator.counts(projectId, job.jobId)).toMatchObject({ posts: 2, prompts: ['First', 'Second'] });
    // No workflow task of either side failed on a message.
    for (const handle of [coordinator, h.client.workflow.getHandle(first.workflowId), waiting]) {
      const events = (await handle.fetchHistory()).events ?? [];
      expect(events.filter((event) => event.workflowTaskFailedEventAttributes)).toEqual([]);
    }
  });
});

test("a slot granted to a follow-up the coordinator cannot tell still counts: the grant may have reached it in a check-in's answer, and only the follow-up knows it sent nothing", async () => {
  const worker = await h.worker(h.taskQueue());
  const projectId = `untold-${Date.now()}`;
  const coordinator = h.client.workflow.getHandle(coordinatorWorkflowId(projectId));
  // Two check-ins to one job by follow-ups that run when they check in (the coordinator confirms each by a describe:
  // here two follow-ups on a queue nobody polls) and end after, as a follow-up that sent and finished has: the first
  // gets the job and a slot in its answer, the second waits in the lane. Each starts the coordinator with the
  // check-in, as the checkIn activity does: a coordinator started empty ends at its first task, and a check-in sent
  // after that task would find it closing.
  const idle = `${h.taskQueue()}-nobody-polls`;
  const tickets = new Map<string, string>();
  for (const workflowId of ['ended-first', 'ended-second'].map((name) => `${name}-${projectId}`)) {
    const started = await h.client.workflow.start(FOLLOW_UP_WORKFLOW_TYPE, { workflowId, taskQueue: idle, args: [] });
    // As the checkIn activity seals it: the coordinator's describe checks the chain it names.
    tickets.set(workflowId, sealedTicket(workflowId, started.firstExecutionRunId));
  }
  const checkIn = (name: string, startedAtMs: number) =>
    h.client.workflow.executeUpdateWithStart(enterUpdate, {
      args: [
        {
          workflowId: `${name}-${projectId}`,
          ticket: tickets.get(`${name}-${projectId}`) as string,
          jobId: 'job-1',
          startedAtMs,
          before: [],
          deadlineMs: Date.now() + 600_000,
          slotFor: `run-${name}#1`,
        },
      ],
      startWorkflowOperation: new WithStartWorkflowOperation<typeof projectCoordinatorWorkflow>(
        PROJECT_COORDINATOR_WORKFLOW_TYPE,
        {
          workflowId: coordinatorWorkflowId(projectId),
          taskQueue: h.coordinatorTaskQueue,
          workflowIdConflictPolicy: 'USE_EXISTING',
          args: [{ projectId, sendsPerHour: 80 }],
        },
      ),
    });
  await worker.runUntil(async () => {
    const first = await checkIn('ended-first', 1);
    expect(first.standing).toEqual(expect.objectContaining({ slot: 'run-ended-first#1' }));
    expect((await checkIn('ended-second', 2)).notice).toEqual(expect.objectContaining({ reason: 'lane' }));
    // Both end; the first leaves: the second is granted the job and a slot by a signal that cannot reach it.
    for (const name of ['ended-first', 'ended-second'])
      await h.client.workflow.getHandle(`${name}-${projectId}`).terminate('ended, as a follow-up that sent has');
    const firstId = `ended-first-${projectId}`;
    await coordinator.signal(leaveSignal, { workflowId: firstId, ticket: tickets.get(firstId) as string });
    await waitFor(
      async () => (await coordinator.query(projectQuery)).lanes.length === 0,
      'the coordinator to drop the follow-up it cannot tell',
    );
    const view = await coordinator.query(projectQuery);
    expect({ sentInWindow: view.sentInWindow, granted: view.totals.granted, returned: view.totals.returned }).toEqual({
      sentInWindow: 2,
      granted: 2,
      returned: 0,
    });
  });
});
