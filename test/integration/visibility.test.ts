/**
 * Finding and understanding follow-ups the way people do in the Web UI and with `temporal workflow list`: by the
 * custom search attributes (registered on the test dev server by the globalSetup), the summary and details, and the
 * live "Current details". Visibility is eventually consistent, so lists are read until they show what is expected.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { FollowUpWorker } from '../../src/worker/follow-up-worker';
import { MAX_SUMMARY_BYTES, utf8Length } from '../../src/client/start-metadata';
import { AgentFollowUpOutcome, AgentJobStatus, AgentPrLink, AgentProjectId } from '../../src/kernel/search-attributes';
import type { followUpWorkflow } from '../../src/workflows/follow-up/follow-up';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

async function list(query: string): Promise<WorkflowExecutionInfo[]> {
  const found: WorkflowExecutionInfo[] = [];
  for await (const execution of h.client.workflow.list({ query })) found.push(execution);
  return found;
}

/** Lists until the ids found are exactly `expected` (visibility lags behind the workflow by a moment). */
async function expectListed(query: string, expected: string[]): Promise<WorkflowExecutionInfo[]> {
  let found: WorkflowExecutionInfo[] = [];
  await waitFor(
    async () => {
      found = await list(query);
      return sameIds(found, expected);
    },
    `the list query ${query} to return ${expected.join(', ')}`,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; last answer: ${found.map((e) => e.workflowId).join(', ') || 'none'}`);
  });
  return found;
}

function sameIds(found: WorkflowExecutionInfo[], expected: string[]): boolean {
  const ids = [...new Set(found.map((execution) => execution.workflowId))].sort();
  return JSON.stringify(ids) === JSON.stringify([...expected].sort());
}

describe('follow-ups are found by visibility queries', () => {
  let worker: FollowUpWorker;
  let running: Promise<void>;
  let taskQueue: string;
  beforeAll(async () => {
    taskQueue = h.taskQueue();
    worker = await h.worker(taskQueue);
    running = worker.run();
  });
  afterAll(async () => {
    worker.shutdown();
    await running;
  });

  test('by job id: every follow-up of the job, and none of another job', async () => {
    const ref = uniqueJob();
    const other = uniqueJob();
    h.simulator.addJob({ ...ref, outcome: 'completed' });
    h.simulator.addJob({ ...other, outcome: 'completed' });
    const followUps = h.followUps(taskQueue);
    const first = await followUps.startAndWait({ ...ref, prompt: 'Add tests', polling: FAST_POLLING });
    const second = await followUps.startAndWait({ ...ref, prompt: 'Now fix the lint warnings', polling: FAST_POLLING });
    await followUps.startAndWait({ ...other, prompt: 'Add tests', polling: FAST_POLLING });

    const found = await expectListed(`AgentJobId="${ref.jobId}"`, [first.workflowId, second.workflowId]);
    for (const execution of found) {
      expect(execution.typedSearchAttributes.get(AgentProjectId)).toBe(ref.projectId);
      expect(execution.typedSearchAttributes.get(AgentJobStatus)).toBe('completed');
    }
    // The pull request's link is there too, and finds the follow-up that produced it.
    const link = second.result.prLink as string;
    expect(link).toMatch(/^https:\/\//);
    const byLink = await expectListed(`AgentPrLink="${link}"`, [second.workflowId]);
    expect(byLink[0]?.typedSearchAttributes.get(AgentPrLink)).toBe(link);
  });

  test('by status: a follow-up whose job is still active, then the same one once it ended', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, outcome: 'failed', workMs: 600_000 });
    const followUps = h.followUps(taskQueue);
    const { workflowId } = await followUps.start({ ...ref, prompt: 'A long task', polling: FAST_POLLING });

    await expectListed(`AgentJobId="${ref.jobId}" AND AgentJobStatus="active" AND ExecutionStatus="Running"`, [
      workflowId,
    ]);
    h.simulator.finishJob(ref.projectId, ref.jobId);
    const result = await followUps.result(workflowId);
    expect(result.outcome).toBe('failed');
    await expectListed(`AgentJobId="${ref.jobId}" AND AgentJobStatus="failed"`, [workflowId]);
    expect(await list(`AgentJobId="${ref.jobId}" AND AgentJobStatus="active"`)).toEqual([]);
  });

  test('how each follow-up ended is its AgentFollowUpOutcome, and AgentJobStatus never stays "active" after it ended', async () => {
    const followUps = h.followUps(taskQueue);
    const done = uniqueJob();
    h.simulator.addJob({ ...done, outcome: 'failed' });
    const missing = uniqueJob(); // never added: the API answers 404
    const slow = uniqueJob();
    h.simulator.addJob({ ...slow, outcome: 'completed', workMs: 600_000 });
    const cancelled = uniqueJob();
    h.simulator.addJob({ ...cancelled, outcome: 'completed', workMs: 600_000 });

    const jobFailed = await followUps.startAndWait({ ...done, prompt: 'Try it', polling: FAST_POLLING });
    const notFound = await followUps.start({ ...missing, prompt: 'Try it', polling: FAST_POLLING });
    const timedOut = await followUps.start({ ...slow, prompt: 'Try it', polling: { ...FAST_POLLING, timeout: '3s' } });
    const toCancel = await followUps.start({ ...cancelled, prompt: 'Try it', polling: FAST_POLLING });
    // While it runs, a follow-up has a job status and no outcome yet.
    await expectListed(`AgentJobId="${cancelled.jobId}" AND AgentJobStatus="active" AND AgentFollowUpOutcome IS NULL`, [
      toCancel.workflowId,
    ]);
    await h.client.workflow.getHandle(toCancel.workflowId).cancel();
    for (const { workflowId } of [notFound, timedOut, toCancel]) {
      await h.client.workflow
        .getHandle(workflowId)
        .result()
        .catch(() => undefined);
    }

    const jobs = [done, missing, slow, cancelled].map((ref) => `"${ref.jobId}"`).join(', ');
    const expected: Array<[string, string, string | undefined]> = [
      [jobFailed.workflowId, 'failed', 'failed'],
      [notFound.workflowId, 'rejected', undefined],
      [timedOut.workflowId, 'timed-out', undefined],
      [toCancel.workflowId, 'cancelled', undefined],
    ];
    for (const [workflowId, outcome, status] of expected) {
      const [found] = await expectListed(`AgentJobId IN (${jobs}) AND AgentFollowUpOutcome="${outcome}"`, [workflowId]);
      expect(found?.typedSearchAttributes.get(AgentFollowUpOutcome)).toBe(outcome);
      expect(found?.typedSearchAttributes.get(AgentJobStatus)).toBe(status);
    }
    expect(await list(`AgentJobId IN (${jobs}) AND AgentJobStatus="active"`)).toEqual([]);
  });

  test("before its message a follow-up shows nothing of the job: the earlier result is not this follow-up's status", async () => {
    // The job finished earlier work with a pull request, and is busy again: the follow-up waits to send.
    const ref = uniqueJob('before-send');
    h.simulator.addJob({ ...ref, busyForMs: 10 * 60_000 });
    const followUps = h.followUps(taskQueue);
    const { workflowId } = await followUps.start({
      ...ref,
      prompt: 'After the current work',
      polling: { ...FAST_POLLING, timeout: '10m' },
    });
    await waitFor(
      async () => (await followUps.progress(workflowId).catch(() => null))?.phase === 'waiting-for-idle',
      'the follow-up to wait for the job',
    );
    const progress = await followUps.progress(workflowId);
    expect(progress).toMatchObject({ lastStatus: null, prLink: null, sentAt: null });
    expect(progress.polls).toBeGreaterThan(0);
    const described = await h.client.workflow.getHandle(workflowId).describe();
    expect(described.typedSearchAttributes.get(AgentJobStatus)).toBeUndefined();
    // Cancelled before sending: it ends with nothing of the job to show, in the attributes as in its status.
    await followUps.cancel(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
    const status = await followUps.status(workflowId);
    expect(status.outcome?.kind).toBe('cancelled');
    expect(status.progress).toMatchObject({ lastStatus: null, prLink: null });
    await expectListed(`AgentJobId="${ref.jobId}" AND AgentFollowUpOutcome="cancelled" AND AgentJobStatus IS NULL`, [
      workflowId,
    ]);
  });

  test('a follow-up started without our client (another SDK, the Web UI) gets its attributes from the workflow', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, outcome: 'completed' });
    const handle = await h.client.workflow.start<typeof followUpWorkflow>('followUpWorkflow', {
      taskQueue,
      workflowId: `bare-${randomUUID()}`,
      args: [{ ...ref, prompt: 'Started by hand', polling: FAST_POLLING }],
    });
    await handle.result();
    await expectListed(
      `AgentProjectId="${ref.projectId}" AND AgentJobId="${ref.jobId}" AND AgentJobStatus="completed"`,
      [handle.workflowId],
    );
  });
});

describe('the Web UI shows what a follow-up is at a glance', () => {
  test('summary, details, activity summaries and the live current details', async () => {
    const ref = uniqueJob();
    h.simulator.addJob({ ...ref, outcome: 'completed', workMs: 600_000 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const prompt = `Rewrite the parser — ${'with care, '.repeat(60)}and add tests`;
    const followUps = h.followUps(taskQueue);
    await worker.runUntil(async () => {
      const { workflowId } = await followUps.start({ ...ref, prompt, polling: FAST_POLLING });
      const handle = h.client.workflow.getHandle(workflowId);

      const description = await handle.describe();
      const summary = (await description.staticSummary()) as string;
      expect(summary).toContain(`${ref.projectId}/${ref.jobId}`);
      expect(summary).toContain('Rewrite the parser — with care');
      expect(utf8Length(summary)).toBeLessThanOrEqual(MAX_SUMMARY_BYTES);
      expect(summary).not.toContain('and add tests');
      const details = (await description.staticDetails()) as string;
      expect(details).toContain(`job \`${ref.jobId}\``);

      // The overview's current details come from the worker, through the SDK's built-in metadata query.
      let current = '';
      await waitFor(async () => {
        const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
        current = metadata.currentDetails ?? '';
        return current.includes('Waiting for the job to end') && current.includes('`active`');
      }, 'the current details to show the job active');
      // Its last read and the next ones its wait plans, right under the headline: the panel is short.
      expect(current.split('\n')[2]).toMatch(
        /^- (Last read told \d\d:\d\d:\d\d UTC \(`active`\)|No read told yet); next planned as of \d\d:\d\d:\d\d: \d\d:\d\d:\d\d/,
      );
      expect(current).toMatch(/Reads reported: \d+/);
      expect(current).toContain('Gives up at:');

      h.simulator.finishJob(ref.projectId, ref.jobId);
      const result = await followUps.result(workflowId);
      const finished = await handle
        .query<{ currentDetails?: string }>('__temporal_workflow_metadata')
        .catch(() => null);
      // A completed workflow may already be gone from the worker's cache; when it answers, it says finished.
      if (finished) {
        expect(finished.currentDetails).toContain('**Finished**');
        expect(finished.currentDetails).not.toContain('Gives up at');
      }
      expect(result.outcome).toBe('completed');

      const history = await handle.fetchHistory();
      const activitySummaries = new Set<string>();
      for (const event of history.events ?? []) {
        // The first check-in is a local activity: its summary is on its marker.
        const step = event.activityTaskScheduledEventAttributes ?? event.markerRecordedEventAttributes;
        const payload = step ? event.userMetadata?.summary : undefined;
        if (payload?.data) activitySummaries.add(Buffer.from(payload.data).toString('utf8'));
      }
      // One summary per kind of step; on a free lane the check-in reads the job, so no read of its own before the send.
      expect([...activitySummaries]).toEqual(
        expect.arrayContaining([
          '"check in with the project\'s coordinator, look for an earlier run that sent the message, and read the job if given it"',
          '"send the follow-up message (one attempt, under a slot of the project\'s send budget)"',
        ]),
      );
      expect([...activitySummaries]).not.toContain(`"read job ${ref.jobId} before sending"`);
      // Its job watcher reads for it while it waits (no step of its own); a later wait, if any, registers with the
      // watcher, named in the summary below.
      for (const summary of activitySummaries) {
        expect(summary).toMatch(
          new RegExp(
            `^"(check in with the project's coordinator|read job ${ref.jobId}|send the follow-up message|register with the job watcher )`,
          ),
        );
      }
    });
  });
});
