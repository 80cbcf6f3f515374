/**
 * Shared watching (AGENT_WATCH_SHARDS): waiting follow-ups are read by their shard's job watcher instead of each
 * polling for itself. The same rules decide what a read means; these tests check that results stay right, that a
 * waiting follow-up has no activity of its own pending, and that a follow-up survives its watcher going away.
 */
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FollowUpWorker } from '../../src/worker/follow-up-worker';
import { watcherWorkflowId } from '../../src/follow-up/watch-registry';
import { watchChangesQuery } from '../../src/workflows/definitions';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

const SHARDS = 2;
let h: Harness;
let taskQueue: string;
let worker: FollowUpWorker;
let running: Promise<void>;

beforeAll(async () => {
  h = await createHarness();
  taskQueue = h.taskQueue();
  worker = await h.worker(taskQueue, undefined, { coordination: { watchShards: SHARDS } });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await h?.close();
});

/** Every wait the shard watchers of this task queue hold. */
async function watched(): Promise<string[]> {
  const ids: string[] = [];
  for (let shard = 0; shard < SHARDS; shard += 1) {
    const handle = h.client.workflow.getHandle(watcherWorkflowId(taskQueue, shard));
    try {
      // A terminated or ended watcher watches nothing, whatever its last state says.
      if ((await handle.describe()).status.name !== 'RUNNING') continue;
      const changes = await handle.query(watchChangesQuery, 0);
      ids.push(...changes.upserts.map((registration) => registration.workflowId));
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }
  return ids;
}

test('30 follow-ups to 30 jobs of 3 projects: every result right, each message sent once, no job read for another', async () => {
  const followUps = h.followUps(taskQueue);
  const jobs = Array.from({ length: 30 }, (_, i) => ({ projectId: `watch-p${i % 3}-${taskQueue.slice(5, 13)}`, jobId: `job-${i}` }));
  for (const job of jobs) h.simulator.addJob({ ...job, workMs: 1_500 });
  const started = await Promise.all(jobs.map((job) => followUps.start({ ...job, prompt: `Fix ${job.jobId}`, polling: FAST_POLLING })));
  const outcomes = await Promise.all(started.map(({ workflowId }) => followUps.outcome(workflowId)));
  outcomes.forEach((outcome, i) => {
    expect(outcome.kind).toBe('completed');
    const job = jobs[i] as (typeof jobs)[number];
    const final = h.simulator.job(job.projectId, job.jobId);
    expect(outcome.kind === 'completed' ? outcome.result.job.id : null).toBe(final.id);
    expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe(final.prLink);
    expect(final.prLink).toMatch(/\/pull\/\d+$/);
    expect(h.simulator.counts(job.projectId, job.jobId).prompts).toEqual([`Fix ${job.jobId}`]);
  });
  // Each follow-up left its watcher when it ended.
  await waitFor(async () => (await watched()).length === 0, 'the watchers to forget the ended follow-ups');
});

test('a waiting follow-up has no activity of its own pending: its watcher reads for it', async () => {
  const job = uniqueJob('quiet');
  h.simulator.addJob({ ...job, workMs: 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Work on it', polling: FAST_POLLING });
  await waitFor(() => h.simulator.counts(job.projectId, job.jobId).gets >= 6, 'reads by the watcher');
  const description = await h.client.workflow.getHandle(workflowId).describe();
  const pending = (description.raw.pendingActivities ?? []).map((activity) => activity.activityType?.name);
  expect(pending).toEqual([]);
  expect(await watched()).toContain(workflowId);
  h.simulator.finishJob(job.projectId, job.jobId);
  expect((await followUps.outcome(workflowId)).kind).toBe('completed');
});

test('a follow-up cancelled while registered leaves its watcher', async () => {
  const job = uniqueJob('cancelled');
  h.simulator.addJob({ ...job, workMs: 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Never mind', polling: FAST_POLLING });
  await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register');
  await followUps.cancel(workflowId);
  expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
  expect(await watched()).not.toContain(workflowId);
});

test('the deadline ends a watched follow-up as timed out, with the last status it was told', async () => {
  const job = uniqueJob('deadline');
  h.simulator.addJob({ ...job, workMs: 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Too slow', polling: { ...FAST_POLLING, timeout: '4s' } });
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('timed-out');
  expect(outcome.kind === 'timed-out' ? outcome.message : '').toMatch(/within 4s \(last status: active\)/);
  expect(await watched()).not.toContain(workflowId);
});

test('a read asked for (pollNow) is made by the watcher at once', async () => {
  const job = uniqueJob('now');
  // No pull request before: the result (with one) cannot look like the job before the message, so one read decides.
  h.simulator.addJob({ ...job, prLink: null, workMs: 500 });
  const followUps = h.followUps(taskQueue);
  // A schedule that would not read again for an hour after the first reads.
  const { workflowId } = await followUps.start({ ...job, prompt: 'Quick one', polling: { initialInterval: '1h', maxInterval: '1h', timeout: '2h', settleWindow: '1s' } });
  await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register after its send');
  await waitFor(() => h.simulator.job(job.projectId, job.jobId).status === 'completed', 'the agent to finish the message');
  const readsBefore = h.simulator.counts(job.projectId, job.jobId).gets;
  await followUps.pollNow(workflowId);
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(h.simulator.counts(job.projectId, job.jobId).gets).toBe(readsBefore + 1);
});

test('a watcher terminated by an operator: its follow-ups register again and end right', async () => {
  const job = uniqueJob('orphan');
  h.simulator.addJob({ ...job, workMs: 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Keep going', polling: FAST_POLLING });
  await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register');
  const firstRuns = new Map<number, string>();
  for (let shard = 0; shard < SHARDS; shard += 1) {
    const handle = h.client.workflow.getHandle(watcherWorkflowId(taskQueue, shard));
    const description = await handle.describe().catch(() => null);
    if (description?.status.name !== 'RUNNING') continue;
    firstRuns.set(shard, description.runId);
    await handle.terminate('operator test');
  }
  // Ten poll gaps of silence (4 s at FAST_POLLING's cap), then the follow-up registers again, starting a new watcher.
  await waitFor(async () => (await watched()).includes(workflowId), 'the follow-up to register with a new watcher');
  h.simulator.finishJob(job.projectId, job.jobId);
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(firstRuns.size).toBeGreaterThan(0);
});
