/**
 * Many follow-ups to one job: the job's lane lets one at a time send and wait, in arrival order, so each result is
 * the job as it ended after its own message. The simulator does not honour Idempotency-Key here: a second delivery
 * would be counted, not hidden. Every agent run makes a new pull request, numbered 101, 102, ... per job, so a result
 * names the message it belongs to.
 */
import { CancelledFailure, type WorkflowFailedError } from '@temporalio/client';
import { laneWorkflowId, type LaneView } from '../../src/follow-up/lane';
import type { FollowUpResult } from '../../src/follow-up/types';
import { laneQuery } from '../../src/workflows/definitions';
import { runCliOn } from '../support/cli-runner';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ honourIdempotencyKey: false, defaultWorkMs: 400 });
});
afterAll(async () => {
  await h.close();
});

/** The pull request number a result ended with. */
function prNumber(result: FollowUpResult): number {
  return Number(/\/pull\/(\d+)$/.exec(result.prLink ?? '')?.[1]);
}

/** Each result is the job after its own message: the i-th message accepted made pull request 101 + (busy ? 1 : 0) + i. */
function expectAttributable(ref: { projectId: string; jobId: string }, results: Array<{ prompt: string; result: FollowUpResult }>, firstPr = 101): void {
  const prompts = h.simulator.counts(ref.projectId, ref.jobId).prompts;
  expect([...prompts].sort()).toEqual(results.map((each) => each.prompt).sort());
  for (const { prompt, result } of results) {
    expect({ prompt, pr: prNumber(result) }).toEqual({ prompt, pr: firstPr + prompts.indexOf(prompt) });
  }
  // And in the order they were served.
  const bySend = [...results].sort((a, b) => Date.parse(a.result.sentAt) - Date.parse(b.result.sentAt));
  expect(bySend.map((each) => each.prompt)).toEqual(prompts);
}

test('two prompts to a busy job started 5 ms apart are sent one after the other, each with its own result', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, busyForMs: 1_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const results = await worker.runUntil(async () => {
    const first = followUps.startAndWait({ ...ref, prompt: 'Prompt A', polling: FAST_POLLING });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = followUps.startAndWait({ ...ref, prompt: 'Prompt B', polling: FAST_POLLING });
    return [
      { prompt: 'Prompt A', result: (await first).result },
      { prompt: 'Prompt B', result: (await second).result },
    ];
  });
  // Pull request 101 was the earlier work's; ours are 102 and 103.
  expectAttributable(ref, results, 102);
  expect(h.simulator.counts(ref.projectId, ref.jobId).statusesAtSend).toEqual(['completed', 'completed']);
});

test('when the first send is dropped before the API read it, both messages still arrive once each, in order', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 1_500, faults: [{ operation: 'send', kind: 'drop-before-processing', times: 1 }] });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const results = await worker.runUntil(async () => {
    const [a, b] = await Promise.all([
      followUps.startAndWait({ ...ref, prompt: 'First', polling: FAST_POLLING }),
      followUps.startAndWait({ ...ref, prompt: 'Second', polling: FAST_POLLING }),
    ]);
    return [
      { prompt: 'First', result: a.result },
      { prompt: 'Second', result: b.result },
    ];
  });
  const counts = h.simulator.counts(ref.projectId, ref.jobId);
  expect(counts.messagesAccepted).toBe(2);
  expect(counts.dropped).toBe(1);
  // Neither takes the other's work as proof of its own delivery.
  expect(results.map((each) => each.result.delivery).sort()).toEqual(['response', 'response']);
  expectAttributable(ref, results);
});

test('ten follow-ups to one job: ten messages, one at a time in arrival order, each result its own', async () => {
  const ref = uniqueJob();
  h.simulator.addJob(ref);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const prompts = Array.from({ length: 10 }, (_, index) => `Step ${index + 1}`);
  const results = await worker.runUntil(async () => {
    const started: string[] = [];
    for (const prompt of prompts) started.push((await followUps.start({ ...ref, prompt, polling: FAST_POLLING })).workflowId);
    return Promise.all(started.map(async (workflowId, index) => ({ prompt: prompts[index] as string, result: await followUps.result(workflowId) })));
  });
  expect(h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(10);
  expectAttributable(ref, results);
  // No message went to the job while another follow-up's work was still going on.
  expect(h.simulator.counts(ref.projectId, ref.jobId).statusesAtSend.every((status) => status !== 'active')).toBe(true);
});

test('a follow-up cancelled while it waits its turn leaves the lane; the others go on and it never sends', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 1_500 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const outcome = await worker.runUntil(async () => {
    const first = await followUps.start({ ...ref, prompt: 'Goes first', polling: FAST_POLLING });
    await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the first send');
    // Both wait; which of the two joined first (and so is next) is the lane's arrival order, not the start order.
    const two = [
      (await followUps.start({ ...ref, prompt: 'Waiting A', polling: FAST_POLLING })).workflowId,
      (await followUps.start({ ...ref, prompt: 'Waiting B', polling: FAST_POLLING })).workflowId,
    ];
    const places = async () => Promise.all(two.map(async (id) => (await followUps.progress(id)).ahead));
    await waitFor(async () => (await places()).sort().join() === '1,2', 'both to know their places');
    const [placeA] = await places();
    const [second, third] = placeA === 1 ? two : [...two].reverse();
    const waiting = await followUps.progress(second as string);
    await followUps.cancel(second as string);
    const cancelled = await followUps.result(second as string).then(() => undefined, (e: unknown) => e);
    const [a, c] = await Promise.all([followUps.result(first.workflowId), followUps.result(third as string)]);
    const goesAfter = (await h.client.workflow.getHandle(third as string).describe()).workflowId === two[0] ? 'Waiting A' : 'Waiting B';
    const lane = await h.client.workflow.getHandle(laneWorkflowId(ref.projectId, ref.jobId, taskQueue)).query<LaneView>(laneQuery);
    return { waiting, cancelled, a, c, lane, goesAfter };
  });
  expect(outcome.waiting).toMatchObject({ phase: 'queued', ahead: 1 });
  expect((outcome.cancelled as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
  expect(h.simulator.counts(ref.projectId, ref.jobId).prompts).toEqual(['Goes first', outcome.goesAfter]);
  expect([prNumber(outcome.a), prNumber(outcome.c)]).toEqual([101, 102]);
  expect(outcome.lane).toMatchObject({ holder: null, waiting: [], served: 2 });
});

test('a follow-up whose deadline comes while it waits its turn times out without sending, and leaves the lane', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const outcome = await worker.runUntil(async () => {
    const first = await followUps.start({ ...ref, prompt: 'Holds the job', polling: FAST_POLLING });
    await waitFor(() => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the first send');
    const second = await followUps.start({ ...ref, prompt: 'Gives up', polling: { ...FAST_POLLING, timeout: '3s' } });
    const error = await followUps.result(second.workflowId).then(() => undefined, (e: unknown) => e);
    const lane = await h.client.workflow.getHandle(laneWorkflowId(ref.projectId, ref.jobId, taskQueue)).query<LaneView>(laneQuery);
    await followUps.cancel(first.workflowId);
    const history = await h.client.workflow.getHandle(second.workflowId).fetchHistory();
    const timerSummaries = (history.events ?? [])
      .filter((event) => event.timerStartedEventAttributes)
      .map((event) => Buffer.from(event.userMetadata?.summary?.data ?? new Uint8Array()).toString('utf8'));
    return { error, lane, timerSummaries };
  });
  // The Web UI's timeline names the timer it waited on.
  expect(outcome.timerSummaries).toEqual([`"give up waiting in the lane of job ${ref.jobId} at the follow-up's deadline"`]);
  expect(((outcome.error as WorkflowFailedError).cause as Error).message).toContain('earlier follow-ups to the job were still running');
  expect(outcome.lane.waiting).toEqual([]);
  expect(h.simulator.counts(ref.projectId, ref.jobId).prompts).toEqual(['Holds the job']);
});

test('the lane of a job and the place of each follow-up in it are visible through the query and progress', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const seen = await worker.runUntil(async () => {
    const ids: string[] = [];
    for (const prompt of ['One', 'Two', 'Three']) {
      ids.push((await followUps.start({ ...ref, prompt, polling: FAST_POLLING })).workflowId);
      // Checked in: it holds the job (and is on with it), or it knows its place.
      await waitFor(async () => {
        const progress = await followUps.progress(ids.at(-1) as string);
        return progress.ahead !== null || ['sending', 'waiting'].includes(progress.phase);
      }, `${prompt} to check in`);
    }
    await waitFor(async () => (await followUps.progress(ids[2] as string)).ahead === 2, 'the third to know its place');
    const lane = await h.client.workflow.getHandle(laneWorkflowId(ref.projectId, ref.jobId, taskQueue)).query<LaneView>(laneQuery);
    const progress = await Promise.all(ids.map((id) => followUps.progress(id)));
    const status = await runCliOn(['status', ids[2] as string], taskQueue);
    const details = await h.client.workflow.getHandle(ids[2] as string).query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    for (const id of ids) await followUps.cancel(id);
    return { ids, lane, progress, status, details };
  });
  // The same words in the CLI and in the Web UI's current details.
  expect(seen.status.out).toContain(`Waiting behind 2 follow-up(s) to job ${ref.jobId}`);
  expect(seen.details.currentDetails).toContain(`Waiting behind 2 follow-up(s) to job ${ref.jobId}`);
  expect(seen.lane).toMatchObject({ projectId: ref.projectId, jobId: ref.jobId, holder: { workflowId: seen.ids[0] }, waiting: seen.ids.slice(1) });
  expect(seen.progress.map((each) => [each.phase, each.ahead])).toEqual([
    ['waiting', null],
    ['queued', 1],
    ['queued', 2],
  ]);
});
