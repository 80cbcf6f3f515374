/**
 * A worker that has just died is still listed as polling its task queue for a few minutes. `status` must not wait a
 * minute on a progress query nobody will answer: it says so after a short deadline and tells what the server keeps.
 */
import { runCliOn as cli } from '../support/cli-runner';
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
  const worker = await h.worker(taskQueue);
  const { workflowId } = await followUps.start({ ...ref, prompt: 'Work for an hour', polling: { ...FAST_POLLING, timeout: '1h' } });
  await worker.runUntil(waitFor(async () => (await followUps.progress(workflowId).catch(() => null))?.lastStatus === 'active', 'the follow-up to see the job working'));
  // The worker is gone, but the server still lists it among the task queue's pollers.
  expect((await followUps.workers()).length).toBeGreaterThan(0);

  const status = await followUps.status(workflowId);
  expect(status.executionStatus).toBe('RUNNING');
  expect(status.progress).toBeUndefined();
  expect(status.progressUnavailable).toContain('no worker answered within 5s');
  expect(status.lastKnown).toEqual({ jobStatus: 'active', prLink: null });

  const text = await cli(['status', workflowId], taskQueue);
  expect(text.out).toContain('Progress: not available (no worker answered within 5s');
  expect(text.out).toContain('Last known (kept by the server): job status active');
  await followUps.cancel(workflowId);
});
