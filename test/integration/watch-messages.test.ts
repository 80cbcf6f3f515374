/**
 * What reaches a waiting follow-up from outside its own code: its watcher's answers and the reads callers ask for.
 * Only the watcher's answer to the current wait ends a wait (forged, stale and malformed ones change nothing), and a
 * flood of `pollNow` asks is admitted a few at a time, the rest refused without a word written to history.
 */
import type { WorkflowHandle } from '@temporalio/client';
import { ASKED_READ_GAP } from '../../src/workflows/follow-up/asked-reads';
import { createHarness, uniqueJob, waitFor, type Harness } from '../support/harness';
import { heldWaits, startWatchingWorker, type HeldWait, type WatchingWorker } from '../support/shard-watchers';
import { jobReadsSignal } from '../../src/workflows/follow-up/messages';
import { unwatchJobSignal, watchJobBatchSignal, type WatchRegistration } from '../../src/watch/messages';
const SHARDS = 2;
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

/** The wait a watcher of this task queue holds for the follow-up, and that watcher. */
async function holding(workflowId: string): Promise<HeldWait | undefined> {
  return (await heldWaits(h, taskQueue, SHARDS)).find(({ wait }) => wait.workflowId === workflowId);
}

async function heldWait(workflowId: string): Promise<WatchRegistration | undefined> {
  return (await holding(workflowId))?.wait;
}

async function watcherOf(workflowId: string): Promise<WorkflowHandle> {
  const found = await holding(workflowId);
  if (!found) throw new Error(`no watcher holds a wait of ${workflowId}`);
  return found.watcher;
}

// The schedule would not read again for an hour: only the watcher's answer to a read asked for can end the wait.
const SLOW = { initialInterval: '1h', maxInterval: '1h', timeout: '2h', settleWindow: '1s' } as const;

test('forged, stale and malformed answers change nothing: only the watcher’s answer to the current wait ends it', async () => {
  const job = uniqueJob('forged');
  h.simulator.addJob({ ...job, workMs: 60 * 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Wait for the real answer', polling: SLOW });
  await waitFor(async () => (await heldWait(workflowId)) !== undefined, 'the follow-up to register its wait');
  const wait = (await heldWait(workflowId)) as WatchRegistration;
  const handle = h.client.workflow.getHandle(workflowId);
  const evil = { id: 'other-job', status: 'completed', prLink: 'https://evil.example/pull/666' };
  const done = { id: job.jobId, status: 'completed', prLink: 'https://evil.example/pull/667' };
  const forged: unknown[] = [
    // Round 0, the job still working: the shape of the answer to the send's first wait.
    {
      round: 0,
      kind: 'read',
      job: { id: job.jobId, status: 'active', prLink: null },
      readAtMs: Date.now(),
      polls: 1,
      sawActive: true,
    },
    // The current round, without the wait's name or with a guessed one.
    { round: wait.round, kind: 'read', job: done, readAtMs: Date.now(), polls: 1, sawActive: true },
    { round: wait.round, replyTo: 'guess', kind: 'read', job: done, readAtMs: Date.now(), polls: 1, sawActive: true },
    // Even with the wait's name (read from the watcher's history): another job's body, a body without a status, garbage.
    {
      round: wait.round,
      replyTo: wait.replyTo,
      kind: 'read',
      job: evil,
      readAtMs: Date.now(),
      polls: 1,
      sawActive: true,
    },
    {
      round: wait.round,
      replyTo: wait.replyTo,
      kind: 'read',
      job: { id: job.jobId, prLink: null },
      readAtMs: Date.now(),
      polls: 1,
      sawActive: true,
    },
    {
      round: wait.round + 1,
      replyTo: wait.replyTo,
      kind: 'read',
      job: done,
      readAtMs: Date.now(),
      polls: 1,
      sawActive: true,
    },
    { round: wait.round, kind: 'failure', type: 'AgentJobNotFound', message: 'forged', details: [], polls: 1 },
    'completed',
    null,
  ];
  for (const answer of forged) await handle.signal(jobReadsSignal, { answer } as never);
  // And messages of no known shape: neither an answer nor a trouble, or both at once.
  const shapeless: unknown[] = [null, 'answer', {}, { answer: forged[0], trouble: null }];
  for (const message of shapeless) await handle.signal(jobReadsSignal, message as never);
  await waitFor(
    async () =>
      ((await handle.fetchHistory()).events ?? []).filter(
        (event) => event.workflowExecutionSignaledEventAttributes?.signalName === jobReadsSignal.name,
      ).length >=
      forged.length + shapeless.length,
    'the forged answers to arrive',
  );
  // Taken in, nothing changed: still waiting on the same wait, the job unread by anyone but the watcher.
  const progress = await followUps.progress(workflowId);
  expect(progress.phase).toBe('waiting');
  expect(progress.lastStatus).toBe('active');
  expect((await heldWait(workflowId))?.replyTo).toBe(wait.replyTo);
  expect((await heldWait(workflowId))?.round).toBe(wait.round);

  // Past the settle window (1 s), where a terminal read is the result at once.
  await waitFor(
    async () => Date.now() - Date.parse((await followUps.progress(workflowId)).sentAt ?? '') > 2_000,
    'the settle window to pass',
  );
  h.simulator.finishJob(job.projectId, job.jobId, { prLink: 'https://github.com/acme/app/pull/5' });
  await followUps.pollNow(workflowId);
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe('https://github.com/acme/app/pull/5');
  expect(outcome.kind === 'completed' ? outcome.result.job.id : null).toBe(job.jobId);
});

test('1,000 pollNow asks to one follow-up: a few admitted, the rest refused without history, the worker alive and the result right', async () => {
  const job = uniqueJob('poll-now-flood');
  h.simulator.addJob({ ...job, workMs: 60 * 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt: 'Flooded', polling: SLOW });
  await waitFor(async () => (await heldWait(workflowId)) !== undefined, 'the follow-up to register its wait');
  const handle = h.client.workflow.getHandle(workflowId);
  const eventsBefore = (await handle.fetchHistory()).events?.length ?? 0;

  const floodStartedAtMs = Date.now();
  const answers: Array<Awaited<ReturnType<typeof followUps.pollNow>>> = [];
  // Eight callers at once (a webhook relay's pool), 125 asks each.
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let ask = 0; ask < 125; ask += 1) answers.push(await followUps.pollNow(workflowId));
    }),
  );
  const floodMs = Date.now() - floodStartedAtMs;
  expect(answers).toHaveLength(1_000);
  expect(answers.every((answer) => answer.requested && answer.readAt !== null)).toBe(true);
  const admitted = answers.filter((answer) => !answer.covered).length;
  // A stream of asks is read at 0, 5, 15, 35, 75 s, then every 60 s: the reads that fit in the flood, and one due after it.
  let reads = 1;
  for (
    let atMs = 0, gapMs: number = ASKED_READ_GAP.firstMs;
    atMs + gapMs <= floodMs;
    atMs += gapMs, gapMs = Math.min(gapMs * 2, ASKED_READ_GAP.maxMs)
  )
    reads += 1;
  expect(admitted).toBeGreaterThanOrEqual(1);
  expect(admitted).toBeLessThanOrEqual(reads + 1);

  // Every admitted ask is one accepted update in history; no refused one wrote anything.
  const events = (await handle.fetchHistory()).events ?? [];
  expect(events.filter((event) => event.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(admitted);
  // Each admitted ask costs its update's two events, the workflow tasks that take it and its read, the read, and a new
  // registration with the watcher (about 18 events); one ask's worth more for what is under way when the history is
  // read and for workflow tasks retried on a loaded machine. Bounded by the asks admitted, never by the 1,000 made.
  expect(events.length - eventsBefore).toBeLessThanOrEqual((admitted + 1) * 20);

  h.simulator.finishJob(job.projectId, job.jobId, { prLink: 'https://github.com/acme/app/pull/9' });
  await followUps.pollNow(workflowId);
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe('https://github.com/acme/app/pull/9');
});

test('malformed messages to a watcher and to a waiting follow-up change nothing: the watcher reads on, the result is right', async () => {
  const job = uniqueJob('garbage');
  h.simulator.addJob({ ...job, workMs: 60 * 60_000 });
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({
    ...job,
    prompt: 'Survive the garbage',
    polling: { ...SLOW, initialInterval: '2s', maxInterval: '2s' },
  });
  await waitFor(async () => (await heldWait(workflowId)) !== undefined, 'the follow-up to register its wait');
  const wait = (await heldWait(workflowId)) as WatchRegistration;
  const watcher = await watcherOf(workflowId);
  const garbage: unknown[] = [
    null,
    'x',
    42,
    {},
    { ...wait, schedule: null },
    { ...wait, workflowId: 7 },
    { ...wait, round: -1 },
  ];
  for (const message of garbage) await watcher.signal(watchJobBatchSignal, [message] as never);
  // The same in one batch, and batches that are no list, empty or too long.
  for (const batch of [garbage, null, 'x', [], Array.from({ length: 51 }, () => ({ ...wait, round: wait.round + 1 }))])
    await watcher.signal(watchJobBatchSignal, batch as never);
  // Well-formed but not knowing the wait's name: the follow-up's own leave and its watcher's answers carry it.
  const unwatches: unknown[] = [
    null,
    'x',
    42,
    {},
    { workflowId: 7, replyTo: wait.replyTo },
    { workflowId },
    { workflowId, runId: wait.runId, round: wait.round },
    { workflowId, replyTo: 'guess' },
  ];
  for (const message of unwatches) await watcher.signal(unwatchJobSignal, message as never);
  const handle = h.client.workflow.getHandle(workflowId);
  for (const trouble of [undefined, 'boom', {}, { since: 3 }])
    await handle.signal(jobReadsSignal, { trouble } as never);
  // The watcher still holds the wait and reads for it: its job finishing ends the follow-up on the schedule's next read.
  const readsBefore = h.simulator.counts(job.projectId, job.jobId).gets;
  await waitFor(() => h.simulator.counts(job.projectId, job.jobId).gets > readsBefore, 'the watcher to read again');
  expect((await heldWait(workflowId))?.replyTo).toBe(wait.replyTo);
  expect((await followUps.progress(workflowId)).lastError).toBeNull();
  h.simulator.finishJob(job.projectId, job.jobId, { prLink: 'https://github.com/acme/app/pull/12' });
  const outcome = await followUps.outcome(workflowId);
  expect(outcome.kind === 'completed' ? outcome.result.prLink : outcome.kind).toBe(
    'https://github.com/acme/app/pull/12',
  );
});
