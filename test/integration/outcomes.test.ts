import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FollowUpErrorType, type FollowUpTimeoutDetails } from '../../src/kernel/types';
import { createHarness, FAST_POLLING, uniqueJob, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

describe('a follow-up ends with the final job', () => {
  test('a completed job returns its prLink, and the message was delivered exactly once', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, outcome: 'completed' });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const { result } = await worker.runUntil(
      h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Add tests for the parser', polling: FAST_POLLING }),
    );
    expect(result.outcome).toBe('completed');
    expect(result.prLink).toMatch(/^https:\/\/github\.com\/acme\/.+\/pull\/\d+$/);
    expect(result.job).toEqual(h.simulator.job(ref.projectId, ref.jobId));
    expect(result.polls).toBeGreaterThanOrEqual(1);
    const counts = h.simulator.counts(ref.projectId, ref.jobId);
    expect(counts).toMatchObject({ posts: 1, messagesAccepted: 1 });
    expect(counts.prompts).toEqual(['Add tests for the parser']);
  });

  test('a job that changed no files completes with a null prLink', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, outcome: 'no-changes' });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const { result } = await worker.runUntil(
      h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Check the README', polling: FAST_POLLING }),
    );
    expect(result.outcome).toBe('completed');
    expect(result.prLink).toBeNull();
    expect(result.job.prLink).toBeNull();
  });

  test('a job that fails is a result, not a workflow failure', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, outcome: 'failed' });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const { result } = await worker.runUntil(
      h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Do the impossible', polling: FAST_POLLING }),
    );
    expect(result.outcome).toBe('failed');
    expect(result.job.status).toBe('failed');
    expect(result.prLink).toBeNull();
  });

  test('a job that gets archived while the agent works is returned as archived', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, outcome: 'archived' });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const { result } = await worker.runUntil(
      h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Tidy up', polling: FAST_POLLING }),
    );
    expect(result.outcome).toBe('archived');
    expect(result.job.archivedAt).toEqual(expect.any(String));
  });

  test('a follow-up to an already archived job returns the archived job', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, status: 'archived' });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const { result } = await worker.runUntil(
      h.followUps(taskQueue).startAndWait({ ...ref, prompt: 'Anything', polling: FAST_POLLING }),
    );
    expect(result.outcome).toBe('archived');
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
  });

  test('a job that never ends fails with FollowUpTimedOut carrying the last job seen', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    const error = await worker.runUntil(
      followUps.startAndWait({ ...ref, prompt: 'Slow work', polling: { ...FAST_POLLING, timeout: '2s' } }).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const cause = (error as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe(FollowUpErrorType.TimedOut);
    const details = (cause as ApplicationFailure).details?.[0] as FollowUpTimeoutDetails;
    expect(details.lastJob?.status).toBe('active');
    expect(details.polls).toBeGreaterThanOrEqual(1);
  });
});
