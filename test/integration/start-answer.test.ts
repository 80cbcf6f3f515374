/**
 * A start that answers (issue 41 point 1): `start(input, { waitFor: 'sent' })` says in the same call how the send
 * stands (sent with the job, queued behind the budget or the lane, reconciling), or throws the follow-up's own
 * failure when it ends before sending; the follow-up goes on durably in every case.
 */
import { FollowUpNotSentError, type FollowUpClient } from '../../src/client';
import { ExitCode } from '../../src/command-line/io';
import type { FollowUpWorker } from '../../src/worker/follow-up-worker';
import { runCliOn } from '../support/cli-runner';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
let worker: FollowUpWorker;
let running: Promise<void>;
let followUps: FollowUpClient;
beforeAll(async () => {
  h = await createHarness({ defaultWorkMs: 300 });
  const taskQueue = h.taskQueue();
  worker = await h.worker(taskQueue);
  running = worker.run();
  followUps = h.followUps(taskQueue);
});
afterAll(async () => {
  worker.shutdown();
  await running;
  await h.close();
});

test('to an idle job: sent, with the job the API answered, in the same call; then it follows the job to its end', async () => {
  const ref = uniqueJob('idle');
  h.simulator.addJob(ref);
  const started = await followUps.start({ ...ref, prompt: 'Add a test', polling: FAST_POLLING }, { waitFor: 'sent' });
  expect(started.send).toEqual({
    state: 'sent',
    sentAt: expect.any(String),
    job: expect.objectContaining({ id: ref.jobId }),
  });
  // Sent means the API took it: the POST is there before the call returned.
  expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  const outcome = await followUps.outcome(started.workflowId);
  expect(outcome.kind).toBe('completed');
  expect(outcome.kind === 'completed' ? outcome.result.sentAt : null).toBe(
    started.send.state === 'sent' ? started.send.sentAt : '',
  );
  // Attaching to it again answers from the follow-up as it is: sent, nothing sent again.
  const again = await followUps.start({ ...ref, prompt: 'Add a test', polling: FAST_POLLING }, { waitFor: 'sent' });
  expect(again).toMatchObject({ workflowId: started.workflowId, attached: true, send: { state: 'sent' } });
  expect(h.simulator.counts(ref.projectId, ref.jobId).posts).toBe(1);
});

test("with the project's budget spent: queued for the budget, next slot as budget show says", async () => {
  const first = uniqueJob('budget-a');
  const second = { projectId: first.projectId, jobId: `${first.jobId}-b` };
  h.simulator.addJob(first);
  h.simulator.addJob(second);
  await followUps.setProjectBudget(first.projectId, 1);
  const sent = await followUps.start({ ...first, prompt: 'One', polling: FAST_POLLING }, { waitFor: 'sent' });
  expect(sent.send.state).toBe('sent');
  const queued = await followUps.start({ ...second, prompt: 'Two', polling: FAST_POLLING }, { waitFor: 'sent' });
  expect(queued.send).toEqual({ state: 'queued', reason: 'budget', position: 1, nextSlotAt: expect.any(String) });
  const budget = await followUps.projectBudget(first.projectId);
  const told = queued.send.state === 'queued' ? Date.parse(queued.send.nextSlotAt as string) : NaN;
  expect(Math.abs(told - Date.parse(budget?.nextSlotAt as string))).toBeLessThanOrEqual(1_000);
  expect(h.simulator.counts(second.projectId, second.jobId).posts).toBe(0);
  await followUps.cancel(queued.workflowId);
});

test('behind another follow-up to the same job: queued in its lane', async () => {
  const ref = uniqueJob('lane');
  h.simulator.addJob({ ...ref, workMs: 60_000 });
  const first = await followUps.start({ ...ref, prompt: 'First', polling: FAST_POLLING }, { waitFor: 'sent' });
  expect(first.send.state).toBe('sent');
  const second = await followUps.start({ ...ref, prompt: 'Second', polling: FAST_POLLING }, { waitFor: 'sent' });
  // Second in line: the follow-up holding the job counts as ahead.
  expect(second.send).toEqual({ state: 'queued', reason: 'lane', position: 2, nextSlotAt: null });
  await followUps.cancel(second.workflowId);
  await followUps.cancel(first.workflowId);
});

test('a send whose answer was lost: reconciling, and the follow-up settles it by reading the job', async () => {
  const ref = uniqueJob('dropped');
  h.simulator.addJob({ ...ref, faults: [{ operation: 'send', kind: 'drop-after-processing', times: 1 }] });
  const started = await followUps.start({ ...ref, prompt: 'Lost answer', polling: FAST_POLLING }, { waitFor: 'sent' });
  expect(started.send).toEqual({ state: 'reconciling' });
  expect((await followUps.outcome(started.workflowId)).kind).toBe('completed');
  expect(h.simulator.counts(ref.projectId, ref.jobId).posts).toBe(1);
});

test('to a job the API does not know: the refusal is thrown in the same call, nothing sent', async () => {
  const ref = uniqueJob('missing');
  const attempt = followUps.start({ ...ref, prompt: 'Anyone there?', polling: FAST_POLLING }, { waitFor: 'sent' });
  await expect(attempt).rejects.toBeInstanceOf(FollowUpNotSentError);
  await expect(attempt).rejects.toMatchObject({
    type: 'AgentJobNotFound',
    message: expect.stringContaining('ended without sending'),
  });
  // It ended rejected at its read before the send: the job was never there to send to.
  const error = (await attempt.catch((caught: unknown) => caught)) as FollowUpNotSentError;
  expect((await followUps.outcome(error.workflowId)).kind).toBe('rejected');
});

test('without a worker: unanswered after the time given, and the follow-up is started all the same', async () => {
  const ref = uniqueJob('no-worker');
  const idle = h.followUps(h.taskQueue());
  const started = await idle.start(
    { ...ref, prompt: 'Later', polling: FAST_POLLING },
    { waitFor: 'sent', answerTimeoutMs: 1_500 },
  );
  expect(started.send).toEqual({ state: 'unanswered', timeoutMs: 1_500 });
  expect((await idle.status(started.workflowId)).executionStatus).toBe('RUNNING');
  await idle.cancel(started.workflowId);
});

test('the CLI: send --wait-sent says it was sent, or exits with the code of a follow-up that could not send', async () => {
  const ref = uniqueJob('cli');
  h.simulator.addJob(ref);
  const taskQueue = followUps.options.taskQueue;
  const sent = await runCliOn(
    ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'From the shell', '--wait-sent'],
    taskQueue,
    100,
    h.coordinatorTaskQueue,
  );
  expect({ code: sent.code, err: sent.err }).toEqual({
    code: 0,
    err: expect.stringMatching(/^Sent at \S+ \(the job is active\): follow-up /),
  });
  expect(h.simulator.counts(ref.projectId, ref.jobId).posts).toBe(1);
  const missing = uniqueJob('cli-missing');
  const refused = await runCliOn(
    ['send', '--project', missing.projectId, '--job', missing.jobId, '--prompt', 'Anyone?', '--wait-sent', '--json'],
    taskQueue,
    100,
    h.coordinatorTaskQueue,
  );
  expect(refused.code).toBe(ExitCode.Rejected);
  expect(JSON.parse(refused.out)).toMatchObject({ outcome: { kind: 'rejected', type: 'AgentJobNotFound' } });
});

test('a forged sendAnswer with arguments is refused by its validator and writes nothing', async () => {
  const ref = uniqueJob('forged');
  h.simulator.addJob({ ...ref, workMs: 60_000 });
  const { workflowId } = await followUps.start(
    { ...ref, prompt: 'Forge me', polling: FAST_POLLING },
    { waitFor: 'sent' },
  );
  const handle = h.client.workflow.getHandle(workflowId);
  // Counted by kind: the follow-up goes on writing its own events (its reads, its watcher's answers) meanwhile.
  const updateEvents = async () =>
    ((await handle.fetchHistory()).events ?? []).filter(
      (event) =>
        event.workflowExecutionUpdateAcceptedEventAttributes || event.workflowExecutionUpdateCompletedEventAttributes,
    ).length;
  const before = await updateEvents();
  await expect(handle.executeUpdate('sendAnswer', { args: [{ state: 'sent' }] })).rejects.toMatchObject({
    cause: { message: expect.stringMatching(/takes no arguments/) },
  });
  // Refused updates are not in history; a well-formed one, answerable at once, is refused with the answer too.
  expect(await updateEvents()).toBe(before);
  await expect(handle.executeUpdate('sendAnswer')).rejects.toMatchObject({
    cause: { type: 'SendAnswered', details: [expect.objectContaining({ state: 'sent' })] },
  });
  expect(await updateEvents()).toBe(before);
  await followUps.cancel(workflowId);
});

test('1,000 repeated starts that wait for an answered send write nothing to its history', async () => {
  const ref = uniqueJob('repeated');
  h.simulator.addJob({ ...ref, workMs: 120_000 });
  const input = { ...ref, prompt: 'Once only', polling: FAST_POLLING };
  const first = await followUps.start(input, { waitFor: 'sent' });
  expect(first.send.state).toBe('sent');
  const handle = h.client.workflow.getHandle(first.workflowId);
  // Measured once it waits for the long job (its first reads written): from then on it writes nothing of its own.
  const length = async () => (await handle.fetchHistory()).events?.length ?? 0;
  await waitFor(async () => (await followUps.progress(first.workflowId)).phase === 'waiting', 'the wait to begin');
  let previous = -1;
  await waitFor(async () => previous === (previous = await length()), 'the history to stop growing');
  const before = await length();
  const answers: string[] = [];
  let next = 0;
  // Bounded concurrency: 10 callers at a time, as many clients of one service would.
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < 1_000) {
        next += 1;
        const again = await followUps.start(input, { waitFor: 'sent' });
        answers.push(`${again.attached}:${again.send.state}`);
      }
    }),
  );
  expect(answers).toHaveLength(1_000);
  expect(new Set(answers)).toEqual(new Set(['true:sent']));
  expect(await length()).toBe(before);
  expect(h.simulator.counts(ref.projectId, ref.jobId).posts).toBe(1);
  await followUps.cancel(first.workflowId);
}, 300_000);
