import { ExitCode } from '../../src/cli';
import { runCliOn } from '../support/cli-runner';
import { createHarness, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const cli = runCliOn;

const fast = ['--initial-interval', '100', '--max-interval', '300'];

test('send --wait --json prints the final job with its prLink and exits 0', async () => {
  const ref = uniqueJob();
  h.simulator.addJob(ref);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const run = await worker.runUntil(
    cli(['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Fix the flaky test', '--wait', '--json', ...fast], taskQueue),
  );
  expect(run.code).toBe(ExitCode.Ok);
  const printed = JSON.parse(run.out) as { result: { outcome: string; prLink: string; job: { id: string } } };
  expect(printed.result.outcome).toBe('completed');
  expect(printed.result.prLink).toMatch(/\/pull\/\d+$/);
  expect(printed.result.job.id).toBe(ref.jobId);
});

test.each([
  ['failed', ExitCode.JobFailed],
  ['archived', ExitCode.JobArchived],
] as const)('send --wait exits with the documented code when the job ends %s', async (outcome, code) => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, outcome });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const run = await worker.runUntil(
    cli(['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Go', '--wait', ...fast], taskQueue),
  );
  expect(run.code).toBe(code);
  expect(run.out).toContain(`ended ${outcome}`);
});

test('send --wait exits 5 when the follow-up times out', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const run = await worker.runUntil(
    cli(['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Slow', '--wait', '--timeout', '1s', ...fast], taskQueue),
  );
  expect(run.code).toBe(ExitCode.TimedOut);
  expect(run.err).toContain('did not reach completed, archived or failed');
});

test('send --wait exits 6 with the API reason when the job does not exist', async () => {
  const ref = uniqueJob();
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const run = await worker.runUntil(
    cli(['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Hi', '--wait', '--json', ...fast], taskQueue),
  );
  expect(run.code).toBe(ExitCode.Rejected);
  const printed = JSON.parse(run.out) as { error: { type: string; message: string } };
  expect(printed.error.type).toBe('AgentJobNotFound');
  expect(printed.error.message).toContain(ref.jobId);
});

test('send without --wait prints the workflow id; status and cancel work on it', async () => {
  const ref = uniqueJob();
  h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  await worker.runUntil(async () => {
    const sent = await cli(['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Later', '--json', ...fast], taskQueue);
    expect(sent.code).toBe(ExitCode.Ok);
    const { workflowId, attached } = JSON.parse(sent.out) as { workflowId: string; attached: boolean };
    expect(attached).toBe(false);

    await waitFor(async () => {
      const status = await cli(['status', workflowId, '--json'], taskQueue);
      const { progress } = JSON.parse(status.out) as { progress?: { polls: number } };
      return (progress?.polls ?? 0) >= 1;
    }, 'a first poll');

    const again = await cli(['send', '--project', ref.projectId, '--job', ref.jobId, '--prompt', 'Later', ...fast], taskQueue);
    expect(again.out).toContain('Attached to the existing follow-up');

    const cancelled = await cli(['cancel', workflowId], taskQueue);
    expect(cancelled.code).toBe(ExitCode.Ok);
    await waitFor(async () => (await cli(['status', workflowId], taskQueue)).out.includes('CANCELLED'), 'cancellation');
  });
  expect(h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(1);
});

test.each([
  [['send', '--job', 'j', '--prompt', 'x'], /missing --project/],
  [['send', '--project', 'p', '--job', 'a/b', '--prompt', 'x'], /jobId may contain only/],
  [['send', '--project', 'p', '--job', 'j', '--prompt', ''], /prompt must not be empty/],
  [['send', '--project', 'p', '--job', 'j', '--prompt', 'x', '--timeout', 'forever'], /polling\.timeout is not a duration/],
  [['send', '--project', 'p', '--job', 'j', '--prompt', 'x', '--backoff-coefficient', 'fast'], /--backoff-coefficient must be a number/],
  [['send', '--project', 'p', '--job', 'j', '--prompt', 'x', '--bogus'], /Unknown option '--bogus'/],
  [['status'], /exactly one workflow id/],
  [['launch'], /unknown command 'launch'/],
])('bad input %j exits 2 with a clear message and never connects', async (args, message) => {
  const run = await cli(args, 'unused');
  expect(run.code).toBe(ExitCode.BadInput);
  expect(run.err).toMatch(message);
  expect(run.connected).toBe(false);
});

test('status of an unknown workflow id exits 2 and says so', async () => {
  const run = await cli(['status', 'followup-no-such-thing'], 'unused');
  expect(run.code).toBe(ExitCode.BadInput);
  expect(run.err).toContain("no follow-up with workflow id 'followup-no-such-thing'");
});

test('--help prints usage with the exit codes and exits 0', async () => {
  const run = await cli(['--help'], 'unused');
  expect(run.code).toBe(ExitCode.Ok);
  expect(run.out).toContain('agent-followup send --project ID --job ID');
  expect(run.out).toContain('Exit codes');
});
