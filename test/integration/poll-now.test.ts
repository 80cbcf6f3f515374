/**
 * Reading now: a caller who knows the job changed asks a follow-up to read it at once (`pollNow` in the library,
 * `agent-followup poll-now` in the CLI) instead of at the next point of its poll schedule.
 */
import { ExitCode } from '../../src/cli';
import { CliErrorSchema, PollNowReportSchema } from '../../src/command-line/json-output';
import { runCliOn as cli } from '../support/cli-runner';
import { createHarness, uniqueJob, waitFor, type Harness } from '../support/harness';
import { watchedWaitQuery } from '../../src/watch/messages';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

/**
 * Waits until the follow-up waits for its result and its settle window (1 s) has passed: a read inside the window
 * cannot be the result yet (it may be a lagging replica), so the follow-up would rightly go on waiting.
 */
async function waitPastSettleWindow(followUps: ReturnType<Harness['followUps']>, workflowId: string): Promise<void> {
  await waitFor(async () => {
    const progress = await followUps.progress(workflowId).catch(() => null);
    return (
      progress?.phase === 'waiting' && progress.sentAt !== null && Date.now() - Date.parse(progress.sentAt) > 2_000
    );
  }, 'the follow-up to wait for its result, past its settle window');
}

// The next poll after the send is ten minutes away: only a read asked for can end these follow-ups within the test.
const SLOW = ['--initial-interval', '10m', '--max-interval', '10m', '--settle-window', '1s', '--timeout', '30m'];

test('poll-now reads the job at once: the follow-up ends with the result without waiting for its next poll', async () => {
  const ref = uniqueJob('poll-now');
  h.simulator.addJob({ ...ref, workMs: 300 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const sent = await cli(
      ['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Read me now', '--json', ...SLOW],
      taskQueue,
    );
    expect(sent.code).toBe(ExitCode.Ok);
    const { workflowId } = JSON.parse(sent.out) as { workflowId: string };
    await waitPastSettleWindow(followUps, workflowId);
    await waitFor(async () => h.simulator.job(ref.projectId, ref.jobId).status === 'completed', 'the agent to finish');
    const readsBefore = h.simulator.counts(ref.projectId, ref.jobId).gets;

    const asked = await cli(['poll-now', workflowId], taskQueue);
    expect(asked.code).toBe(ExitCode.Ok);
    expect(asked.out).toContain(`Asked follow-up ${workflowId} to read its job now`);
    const outcome = await followUps.outcome(workflowId);
    expect(outcome.kind).toBe('completed');
    // The read asked for, and at most one more that the cancelled wait had under way.
    expect(h.simulator.counts(ref.projectId, ref.jobId).gets - readsBefore).toBeGreaterThanOrEqual(1);
    expect(h.simulator.counts(ref.projectId, ref.jobId).gets - readsBefore).toBeLessThanOrEqual(2);

    // Once it has ended there is nothing to read for: said so, exit 2, and the library says the same.
    const again = await cli(['poll-now', workflowId], taskQueue);
    expect(again.code).toBe(ExitCode.BadInput);
    expect(again.err).toContain(`follow-up ${workflowId} already ended (COMPLETED)`);
    const againJson = await cli(['poll-now', workflowId, '--json'], taskQueue);
    expect(CliErrorSchema.parse(JSON.parse(againJson.out)).error).toMatchObject({
      type: 'AlreadyEnded',
      exitCode: ExitCode.BadInput,
    });
    expect(await followUps.pollNow(workflowId)).toEqual({
      requested: false,
      executionStatus: 'COMPLETED',
      readAt: null,
      covered: false,
    });
  });
});

test('a read asked for while the job is still working changes nothing: the follow-up goes on waiting, then ends on a later read', async () => {
  const ref = uniqueJob('poll-now-early');
  h.simulator.addJob({ ...ref, workMs: 60 * 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const { workflowId } = await followUps.start({
      ...ref,
      prompt: 'Still working',
      polling: { initialInterval: '10m', maxInterval: '10m', settleWindow: '1s', timeout: '30m' },
    });
    await waitPastSettleWindow(followUps, workflowId);
    const readsBefore = h.simulator.counts(ref.projectId, ref.jobId).gets;
    const asked = await followUps.pollNow(workflowId);
    expect(asked).toMatchObject({ requested: true, executionStatus: 'RUNNING', covered: false });
    // The first ask is read at once: due no later than now.
    expect(Date.parse(asked.readAt ?? '')).toBeLessThanOrEqual(Date.now());
    await waitFor(async () => h.simulator.counts(ref.projectId, ref.jobId).gets > readsBefore, 'the read asked for');
    expect((await followUps.progress(workflowId)).phase).toBe('waiting');
    // The agent finishes; a second read asked for ends the follow-up.
    h.simulator.finishJob(ref.projectId, ref.jobId);
    await followUps.pollNow(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('completed');
  });
});

test('poll-now by job: every running follow-up of the job is found by its search attributes and asked; none running is said', async () => {
  const ref = uniqueJob('poll-now-job');
  h.simulator.addJob({ ...ref, workMs: 300 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const { workflowId } = await followUps.start({
      ...ref,
      prompt: 'Read me by my job',
      polling: { initialInterval: '10m', maxInterval: '10m', settleWindow: '1s', timeout: '30m' },
    });
    await waitPastSettleWindow(followUps, workflowId);
    await waitFor(async () => h.simulator.job(ref.projectId, ref.jobId).status === 'completed', 'the agent to finish');
    // Visibility lists it a moment after the start.
    const listed = `AgentProjectId = '${ref.projectId}' AND AgentJobId = '${ref.jobId}' AND ExecutionStatus = 'Running'`;
    await waitFor(async () => (await h.client.workflow.count(listed)).count > 0, 'visibility to list the follow-up');

    const asked = await cli(['poll-now', '--project', ref.projectId, '--job', ref.jobId, '--json'], taskQueue);
    expect(asked.code).toBe(ExitCode.Ok);
    // --json: the same shape as for one id, a list of the follow-ups asked.
    expect(PollNowReportSchema.parse(JSON.parse(asked.out))).toEqual({
      followUps: [{ workflowId, executionStatus: 'RUNNING', readAt: expect.any(String), covered: expect.any(Boolean) }],
    });
    expect((await followUps.outcome(workflowId)).kind).toBe('completed');

    // Nothing runs for the job any more: the library answers an empty list, the CLI says so with exit 2.
    await waitFor(
      async () =>
        (await followUps.pollNow({ projectId: ref.projectId, jobId: ref.jobId })).followUps.every(
          (answer) => !answer.requested,
        ),
      'visibility to see the follow-up closed',
    );
    const none = await cli(['poll-now', '--project', ref.projectId, '--job', ref.jobId], taskQueue);
    expect(none.code).toBe(ExitCode.BadInput);
    expect(none.err).toContain(`no running follow-up of job ${ref.jobId} in project ${ref.projectId}`);
    expect(
      CliErrorSchema.parse(
        JSON.parse((await cli(['poll-now', '--project', ref.projectId, '--job', ref.jobId, '--json'], taskQueue)).out),
      ).error.type,
    ).toBe('NoRunningFollowUp');
  });
});

test('poll-now takes a workflow id or a job, not both and not half of one', async () => {
  const taskQueue = h.taskQueue();
  for (const args of [
    ['poll-now'],
    ['poll-now', 'followup/p/j/x', '--project', 'p', '--job', 'j'],
    ['poll-now', '--project', 'p'],
  ]) {
    const refused = await cli(args, taskQueue);
    expect(refused.code).toBe(ExitCode.BadInput);
    expect(refused.err).toContain('poll-now takes either a workflow id');
  }
  const badId = await cli(['poll-now', '--project', 'a b', '--job', 'j'], taskQueue);
  expect(badId.code).toBe(ExitCode.BadInput);
  expect(badId.err).toContain('projectId may contain only');
});

describe('a read asked for never makes the follow-up end later than its schedule would (issue 76)', () => {
  // Reads ten minutes apart: only the rule under test can end these follow-ups within the test.
  const slow = { initialInterval: '10m', maxInterval: '10m', backoffCoefficient: 1, timeout: '30m' } as const;

  /** Starts a follow-up and returns once its job has ended and the follow-up waits for its result. */
  async function startAndLetTheJobEnd(
    followUps: ReturnType<Harness['followUps']>,
    ref: { projectId: string; jobId: string },
    settleWindow: string,
  ): Promise<string> {
    const { workflowId } = await followUps.start({ ...ref, prompt: 'Quick work', polling: { ...slow, settleWindow } });
    await waitFor(() => {
      const sent = h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1;
      return sent && h.simulator.job(ref.projectId, ref.jobId).status !== 'active';
    }, 'the agent to finish the message');
    await waitFor(async () => (await followUps.progress(workflowId)).phase === 'waiting', 'the follow-up to wait');
    return workflowId;
  }

  test('inside the settle window, an asked read that finds a pull request the job did not have is the result at once', async () => {
    const ref = uniqueJob('poll-now-new-pr');
    h.simulator.addJob({ ...ref, status: 'completed', prLink: 'https://github.com/acme/x/pull/1', workMs: 300 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    await worker.runUntil(async () => {
      // A window of ten minutes: before, the read was not taken, and the follow-up waited it out.
      const workflowId = await startAndLetTheJobEnd(followUps, ref, '10m');
      await followUps.pollNow(workflowId);
      const outcome = await followUps.outcome(workflowId);
      expect(outcome.kind).toBe('completed');
      const { prLink } = h.simulator.job(ref.projectId, ref.jobId);
      expect(prLink).not.toBe('https://github.com/acme/x/pull/1');
      expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toBe(prLink);
    });
  });

  test("inside the settle window, an asked read that finds the job ended without a new pull request: the wait after it reads when the window ends, not at the schedule's next point", async () => {
    const ref = uniqueJob('poll-now-no-changes');
    h.simulator.addJob({
      ...ref,
      status: 'completed',
      prLink: 'https://github.com/acme/x/pull/1',
      outcome: 'no-changes',
      workMs: 300,
    });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    await worker.runUntil(async () => {
      // The window (8 s) ends long before the schedule's next point (10 min after the ask): before, that point.
      const workflowId = await startAndLetTheJobEnd(followUps, ref, '8s');
      await followUps.pollNow(workflowId);
      const outcome = await followUps.outcome(workflowId);
      expect(outcome.kind).toBe('completed');
      expect(outcome.kind === 'completed' ? outcome.result.prLink : 'unread').toBeNull();
    });
  });

  test("a read asked for that finds the job still working keeps the wait's schedule: the reads after it keep their points", async () => {
    const ref = uniqueJob('poll-now-schedule');
    h.simulator.addJob({ ...ref, workMs: 60 * 60_000 });
    const taskQueue = h.taskQueue();
    const worker = await h.worker(taskQueue);
    const followUps = h.followUps(taskQueue);
    await worker.runUntil(async () => {
      const { workflowId } = await followUps.start({
        ...ref,
        prompt: 'Long work',
        polling: { ...slow, settleWindow: '1s' },
      });
      const held = async () => {
        const { watcherId } = await followUps.progress(workflowId);
        if (!watcherId) return null;
        return (await h.client.workflow.getHandle(watcherId).query(watchedWaitQuery, workflowId))?.registration ?? null;
      };
      // The first ask finds the job working: its follow-up's next wait (a schedule of its own) is the one asked again.
      await followUps.pollNow(workflowId);
      await waitFor(async () => (await held())?.known?.status === 'active', 'a wait knowing the job works');
      const before = (await held())!;
      await followUps.pollNow(workflowId);
      await waitFor(async () => ((await held())?.round ?? 0) > before.round, 'the wait back with its watcher');
      const after = (await held())!;
      expect(after.readBefore?.status).toBe('active');
      expect(after.schedule).toEqual(before.schedule);
    });
  });
});
