/**
 * Issue 41, point 3: a project budget that listens to the vendor. Others' uses of a project (its dashboard, other
 * services) count in the vendor's 100 per hour and cannot be seen from here; the first 429 is how the coordinator
 * learns of them. It then pauses every send of the project until one probe is accepted, so the follow-ups waiting
 * meet no 429 of their own, and says so in `budget show`, `status` and the Web UI.
 *
 * The vendor's window is shortened to a minute on both sides (the simulator's limit and the coordinator's window), so
 * the others' uses age out by the first probe, a minute after the first 429, as they would within the hour.
 */
import type { ProjectView } from '../../src/coordinator/project-coordination';
import { coordinatorWorkflowId } from '../../src/kernel/workflow-ids';
import { describeProgress } from '../../src/command-line/render';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';
import { projectQuery, standingSignal } from '../../src/coordinator/messages';
import { followUpWorkflowId } from '../../src/client';
import { followUpStartMetadata } from '../../src/client/start-metadata';

jest.setTimeout(600_000);

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ honourIdempotencyKey: false });
});
afterAll(async () => {
  await h.close();
});

const WINDOW_MS = 60_000;

async function project(projectId: string): Promise<ProjectView> {
  return h.client.workflow.getHandle(coordinatorWorkflowId(projectId)).query(projectQuery);
}

test('40 uses made elsewhere, a budget of 80, 80 follow-ups at once: at most 3 meet a 429, each is sent once, none times out', async () => {
  const { projectId } = uniqueJob('outside');
  const jobs = Array.from({ length: 80 }, (_, index) => ({ projectId, jobId: `job-${index + 1}` }));
  for (const job of jobs) h.simulator.addJob({ ...job, workMs: 500 });
  // The vendor's 100 per window, 40 of them used elsewhere just now: 60 of ours fit until those age out.
  h.simulator.setSendLimit(projectId, { sends: 100, windowMs: WINDOW_MS });
  h.simulator.useOutside(projectId, 40);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, {
    coordination: { sendsPerHour: (80 * 3_600_000) / WINDOW_MS, windowMs: WINDOW_MS },
  });
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const ids = await Promise.all(
      jobs.map(
        async (job) =>
          (
            await followUps.start({
              ...job,
              prompt: `Follow up on ${job.jobId}`,
              polling: { ...FAST_POLLING, timeout: '70m' },
            })
          ).workflowId,
      ),
    );

    // While the API refuses the project: the coordinator says since when and when it probes (in `budget show` and on
    // its Web UI page), and so does every follow-up waiting for it (`status`, its Web UI page).
    let paused: ProjectView | null = null;
    await waitFor(async () => {
      const view = await project(projectId).catch(() => null);
      if (view?.refusal && view.waitingForBudget.length > 0) paused = view;
      return paused !== null;
    }, 'the coordinator to pause on a 429 with follow-ups waiting');
    const { refusal, waitingForBudget } = paused as unknown as ProjectView;
    expect(refusal).toMatchObject({ since: expect.any(String) });
    const coordinator = h.client.workflow.getHandle(coordinatorWorkflowId(projectId));
    await waitFor(async () => {
      const { currentDetails } = await coordinator.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      return currentDetails?.startsWith(`**The agent API refused sends for project ${projectId} since`) === true;
    }, "the coordinator's Web UI page to lead with the refusal");
    let told = '';
    await waitFor(async () => {
      const { progress } = await followUps.status(waitingForBudget[0] as string);
      told = progress ? describeProgress(progress) : '';
      return told.includes(`The agent API refused sends for project ${projectId} since`);
    }, 'a waiting follow-up to say the API refused the project');
    expect(told).toMatch(/next probe \d\d:\d\d:\d\d UTC|a probe send awaits its answer/);

    const outcomes = await Promise.all(ids.map((id) => followUps.outcome(id)));
    expect(outcomes.filter((outcome) => outcome.kind !== 'completed')).toEqual([]);
    const after = await project(projectId);
    expect(after.refusal).toBeNull();
    expect(after.totals.refused).toBeGreaterThanOrEqual(1);
  });
  const counts = jobs.map((job) => h.simulator.counts(job.projectId, job.jobId));
  // Each sent exactly once; only the sends in flight when the first 429 came (and a refused probe) met one.
  expect(counts.map((count) => count.messagesAccepted)).toEqual(jobs.map(() => 1));
  const refused = counts.reduce((sum, count) => sum + count.rateLimited, 0);
  expect(refused).toBeGreaterThanOrEqual(1);
  expect(refused).toBeLessThanOrEqual(3);
});

test("a follow-up told 'wait' by its check-in while a 429 paused the project shows the pause, though it heard that first", async () => {
  // The check-in answers after its read of the job, held here until the check-in gives up on it (5 s). With a 2 s
  // workflow task the worker hands on the task meanwhile, so the notice of the pause, signalled after the answer was
  // said, reaches the follow-up first. Shown in the order heard, the answer's "wait for the window" would stay.
  const windowMs = 60_000;
  const { projectId } = uniqueJob('told-late');
  const first = { projectId, jobId: 'job-sent' };
  const second = { projectId, jobId: 'job-waiting' };
  h.simulator.addJob({ ...first, workMs: 200, faults: [{ operation: 'send', kind: 'latency', latencyMs: 3_000 }] });
  h.simulator.addJob({
    ...second,
    workMs: 200,
    faults: [{ operation: 'get', kind: 'latency', latencyMs: 10_000, times: 1 }],
  });
  // A budget of one send per window, and the vendor's one used elsewhere: the first send meets a 429.
  h.simulator.setSendLimit(projectId, { sends: 1, windowMs });
  h.simulator.useOutside(projectId, 1);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, {
    coordination: { sendsPerHour: 3_600_000 / windowMs, windowMs },
  });
  const followUps = h.followUps(taskQueue);
  const polling = { ...FAST_POLLING, timeout: '5m' };
  const input = { ...second, prompt: 'Follow up', polling };
  const request = followUps.validate(input);
  const waitingId = followUpWorkflowId(request);
  await worker.runUntil(async () => {
    const sent = await followUps.start({ ...first, prompt: 'Follow up', polling });
    await waitFor(async () => (await project(projectId).catch(() => null))?.sentInWindow === 1, 'the first send');
    await h.client.workflow.start('followUpWorkflow', {
      taskQueue,
      workflowId: waitingId,
      args: [input],
      ...followUpStartMetadata(request),
      workflowTaskTimeout: '2s',
    });
    let told = '';
    await waitFor(async () => {
      const { progress } = await followUps.status(waitingId);
      told = progress ? describeProgress(progress) : '';
      return told.includes(`The agent API refused sends for project ${projectId} since`);
    }, 'the waiting follow-up to say the API refused the project');
    // It is still the pause it waits for (with the refused follow-up, ahead of it): no probe goes for a minute.
    expect(await project(projectId)).toMatchObject({
      refusal: { since: expect.any(String) },
      waitingForBudget: [sent.workflowId, waitingId],
    });
    await Promise.all([followUps.cancel(sent.workflowId), followUps.cancel(waitingId)]);
  });
  // The case this test is for: the notice of the pause was heard before the check-in's answer (its marker).
  const events = (await h.client.workflow.getHandle(waitingId).fetchHistory()).events ?? [];
  const noticeAt = events.findIndex(
    (event) => event.workflowExecutionSignaledEventAttributes?.signalName === standingSignal.name,
  );
  const answerAt = events.findIndex((event) => event.markerRecordedEventAttributes);
  expect(noticeAt).toBeGreaterThan(0);
  expect(noticeAt).toBeLessThan(answerAt);
});
