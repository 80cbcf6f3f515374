/**
 * A worker that has just died is still listed as polling its task queue for a few minutes. `status` must not wait a
 * minute on a progress query nobody will answer: it says so after a short deadline and tells what the server keeps.
 */
import { followUpWorkflowId } from '../../src/client/ids';
import { runCliOn as cli, startCliOn } from '../support/cli-runner';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

test('status right after the only worker stopped answers from the server instead of hanging on the query', async () => {
  const ref = uniqueJob('dead-worker');
  h.simulator.addJob({ ...ref, workMs: 60 * 60_000 });
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  // Polling for itself (no watchers), so that the server keeps its running wait: the poll activity's last heartbeat.
  const worker = await h.worker(taskQueue, undefined, { coordination: { watchShards: 0 } });
  const { workflowId } = await followUps.start({
    ...ref,
    prompt: 'Work for an hour',
    polling: { ...FAST_POLLING, timeout: '1h' },
  });
  await worker.runUntil(
    waitFor(
      async () => (await followUps.progress(workflowId).catch(() => null))?.lastStatus === 'active',
      'the follow-up to see the job working',
    ),
  );
  // The worker is gone, but the server still lists it among the task queue's pollers.
  expect((await followUps.workers()).length).toBeGreaterThan(0);

  const status = await followUps.status(workflowId);
  expect(status.executionStatus).toBe('RUNNING');
  expect(status.progress).toBeUndefined();
  expect(status.progressUnavailable).toContain('no worker answered within 5s');
  expect(status.lastKnown).toMatchObject({ jobStatus: 'active', prLink: null });
  // The running wait, from the server alone (it may have just begun, with no read of its own yet).
  expect(status.lastKnown?.poll).toMatchObject({ polls: expect.any(Number), lastError: null });

  const text = await cli(['status', workflowId], taskQueue);
  expect(text.out).toContain('Progress: not available (no worker answered within 5s');
  expect(text.out).toContain('Last known (kept by the server): job status active');
  expect(text.out).toMatch(/Running wait \(kept by the server\): \d+ read\(s\)/);
  await followUps.cancel(workflowId);
});

test('send --wait says within 15s that no worker answers when its only worker stops, and again when one returns', async () => {
  const ref = uniqueJob('dead-worker-wait');
  h.simulator.addJob({ ...ref, workMs: 60 * 60_000 });
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const first = await h.worker(taskQueue);
  const firstRun = first.run();
  const prompt = 'Outlive a worker';
  const waiting = startCliOn(
    ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', prompt, '--wait', '--timeout', '1h'],
    taskQueue,
  );
  const workflowId = followUpWorkflowId({ ...ref, prompt });
  await waitFor(
    async () => (await followUps.progress(workflowId).catch(() => null))?.lastStatus === 'active',
    'the follow-up to see the job working',
  );
  first.shutdown();
  await firstRun;
  // The stopped worker is still listed, and looks live: only the unanswered query shows it is gone.
  expect((await followUps.workers()).some((worker) => worker.live)).toBe(true);
  await waitFor(() => waiting.run.err.includes('warning: no worker answered follow-up'), 'the warning');
  const second = await h.worker(taskQueue);
  const run = await second.runUntil(async () => {
    await waitFor(
      () => waiting.run.err.includes('A worker answers the follow-up again; it goes on.'),
      'the worker to be noticed',
    );
    h.simulator.finishJob(ref.projectId, ref.jobId);
    return waiting.done;
  });
  expect(run.code).toBe(0);
  expect(run.err).toContain(
    `warning: no worker answered follow-up ${workflowId} within 5s: the workers listed on task queue '${taskQueue}' may have stopped`,
  );
  expect(run.out).toContain(`Job ${ref.jobId} ended completed`);
  // Said once each way, not at every unanswered query.
  expect(run.err.split('warning: no worker answered').length - 1).toBe(1);
});
