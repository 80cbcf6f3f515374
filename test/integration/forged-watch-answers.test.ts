/**
 * Issue 73: a watcher's answer is a hint, never a fact. Anyone who may signal the namespace can read a wait's name
 * (the watcher's own query hands it to its reader, and histories hold it) and send a well-formed `jobReads` answer with it.
 * Such an answer may make the follow-up read the job itself (one GET), and nothing more: the result is always the
 * follow-up's own read, which shows the same id, status and prLink as what the watcher told.
 */
import type { temporal } from '@temporalio/proto';
import { createHarness, uniqueJob, waitFor, type Harness } from '../support/harness';
import { heldWaits, startWatchingWorker, type WatchingWorker } from '../support/shard-watchers';
import type { WatchRegistration } from '../../src/watch/messages';
import { jobReadsSignal } from '../../src/workflows/follow-up/messages';

const SHARDS = 1;
let h: Harness;
let watching: WatchingWorker;
let taskQueue: string;

beforeAll(async () => {
  h = await createHarness();
  watching = await startWatchingWorker(h, SHARDS);
  taskQueue = watching.taskQueue;
});
afterAll(async () => {
  await watching?.stop();
  await h?.close();
});

// The watcher reads every 2 s; the settle window (1 s) has passed by the time a forged answer arrives.
const POLLING = { initialInterval: '2s', maxInterval: '2s', timeout: '2m', settleWindow: '1s' } as const;

/** The wait the watcher holds for the follow-up, as its query answers anyone (the name included). */
async function heldWait(workflowId: string): Promise<WatchRegistration | undefined> {
  return (await heldWaits(h, taskQueue, SHARDS)).find(({ wait }) => wait.workflowId === workflowId)?.wait;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function historyOf(workflowId: string): Promise<HistoryEvent[]> {
  return (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

/** The follow-up's own reads made to check what its watcher told (one GET each). */
function confirmingReads(events: HistoryEvent[]): number {
  return events.filter((event) =>
    /its watcher told/.test(
      event.userMetadata?.summary?.data ? Buffer.from(event.userMetadata.summary.data).toString() : '',
    ),
  ).length;
}

async function runningFollowUpWithWait(prefix: string) {
  const job = uniqueJob(prefix);
  h.simulator.addJob({ ...job, workMs: 60 * 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Wait for the real end', polling: POLLING });
  await waitFor(async () => (await heldWait(workflowId)) !== undefined, 'the follow-up to register its wait');
  // Past the settle window, where a terminal read the follow-up believed would be its result at once.
  await waitFor(
    async () => Date.now() - Date.parse((await followUps.progress(workflowId)).sentAt ?? '') > 1_500,
    'the settle window to pass',
  );
  const wait = (await heldWait(workflowId)) as WatchRegistration;
  return { job, followUps, workflowId, wait, handle: h.client.workflow.getHandle(workflowId) };
}

/** Until the follow-up has dealt with the forged answer: it registered a later wait, or it ended (on main, it does). */
async function forgeryHandled(workflowId: string, round: number): Promise<void> {
  const handle = h.client.workflow.getHandle(workflowId);
  await waitFor(
    async () =>
      (await handle.describe()).status.name !== 'RUNNING' || ((await heldWait(workflowId))?.round ?? 0) > round,
    'the follow-up to deal with the forged answer',
  );
}

test('a forged completed answer with the wait’s name read from the watcher’s query does not end the follow-up; the real end does, with the real PR', async () => {
  const { job, followUps, workflowId, wait, handle } = await runningFollowUpWithWait('forged-completed');
  const getsBefore = h.simulator.counts(job.projectId, job.jobId).gets;
  await handle.signal(jobReadsSignal, {
    answer: {
      round: wait.round,
      replyTo: wait.replyTo,
      kind: 'read',
      job: { id: job.jobId, status: 'completed', prLink: 'https://evil.example/pull/667' },
      readAtMs: Date.now(),
      polls: 1,
      sawActive: true,
    },
  });
  await forgeryHandled(workflowId, wait.round);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  const progress = await followUps.progress(workflowId);
  expect(progress.phase).toBe('waiting');
  expect(progress.lastStatus).toBe('active');
  // The forged answer cost one own read at most (the watcher's reads every 2 s run on beside it).
  expect(confirmingReads(await historyOf(workflowId))).toBe(1);
  expect(h.simulator.counts(job.projectId, job.jobId).gets).toBeGreaterThan(getsBefore);

  h.simulator.finishJob(job.projectId, job.jobId, { prLink: 'https://github.com/acme/app/pull/42' });
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe('https://github.com/acme/app/pull/42');
  const events = await historyOf(workflowId);
  // The forged answer and the real one each confirmed by one own read, no more.
  expect(confirmingReads(events)).toBe(2);
  console.log(`forged completed: ${events.length} events`);
  // A watched follow-up that sends and waits is 32 events here; the forged answer adds its signal, one read and a
  // wait's registration with their workflow tasks (49 measured); a busy machine may retry a workflow task or two.
  expect(events.length).toBeLessThanOrEqual(60);
});

test('a forged failure answer with the wait’s name does not end the follow-up AgentJobNotFound; the real end does, with the real PR', async () => {
  const { job, followUps, workflowId, wait, handle } = await runningFollowUpWithWait('forged-failure');
  await handle.signal(jobReadsSignal, {
    answer: {
      round: wait.round,
      replyTo: wait.replyTo,
      kind: 'failure',
      type: 'AgentJobNotFound',
      message: 'Agent job not found (forged)',
      details: [],
      polls: 1,
    },
  });
  await forgeryHandled(workflowId, wait.round);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  expect((await followUps.progress(workflowId)).phase).toBe('waiting');
  expect(confirmingReads(await historyOf(workflowId))).toBe(1);

  h.simulator.finishJob(job.projectId, job.jobId, { prLink: 'https://github.com/acme/app/pull/43' });
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe('https://github.com/acme/app/pull/43');
  const events = await historyOf(workflowId);
  expect(confirmingReads(events)).toBe(2);
  console.log(`forged failure: ${events.length} events`);
  expect(events.length).toBeLessThanOrEqual(60);
});

test('a watched follow-up takes its result from its own read: one GET more than its watcher’s reads, no more', async () => {
  const job = uniqueJob('own-read');
  h.simulator.addJob({ ...job, workMs: 3_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Finish on your own', polling: POLLING });
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  const events = await historyOf(workflowId);
  const gets = h.simulator.counts(job.projectId, job.jobId).gets;
  // The figure for the report: the job's GETs, ours and its watcher's, and the history.
  console.log(`own-read: ${gets} GETs for one follow-up, ${events.length} events`);
  expect(confirmingReads(events)).toBe(1);
  // 26 events on main, 32 with the own read (its activity and a workflow task).
  expect(events.length).toBeLessThanOrEqual(40);
});
