/**
 * Temporal going away under the CLI, on a dev server of this file's own that it SIGKILLs and starts again: every
 * command says it is Temporal that does not answer (address, namespace, what to check), never that a worker stopped,
 * and `send --wait` carries on once the server is back.
 */
import { ExitCode } from '../../src/cli';
import { TemporalUnreachableError } from '../../src/client';
import { startCliOn } from '../support/cli-runner';
import { createHarness, uniqueJob, waitFor, type Harness } from '../support/harness';
import { startDevServer, type DevServer } from '../../scripts/stack/dev-server';

let server: DevServer;
let h: Harness;
beforeAll(async () => {
  server = await startDevServer({ persistent: true });
  h = await createHarness({}, { address: server.address });
});
afterAll(async () => {
  await h?.close();
  await server?.close();
});

const fast = ['--initial-interval', '100', '--max-interval', '300'];
const outageSaid = () => `Temporal at ${server.address} (namespace 'default') is not answering`;

test('send --wait through an outage: says Temporal is not answering, not that a worker stopped, and ends right once it is back', async () => {
  const job = uniqueJob('outage-wait');
  h.simulator.addJob({ ...job, workMs: 4_000 });
  const queue = h.taskQueue();
  const worker = await h.worker(queue);
  await worker.runUntil(async () => {
    // The outage is the subject: `send` must find the worker polling before it, or it rightly warns of none first.
    const followUps = h.followUps(queue);
    await waitFor(async () => (await followUps.workers()).some((each) => each.live), 'the worker to poll its queue');
    const args = ['send', '--project', job.projectId, '--job', job.jobId, '--prompt', 'Through it', '--wait', ...fast];
    const cli = startCliOn(args, queue, 100, h.coordinatorTaskQueue, { address: server.address });
    await waitFor(() => h.simulator.counts(job.projectId, job.jobId).posts === 1, 'the message to be sent');
    await server.kill();
    await waitFor(() => cli.run.err.includes(outageSaid()), 'the CLI to say Temporal is not answering', 120_000);
    expect(cli.run.err).toContain('Waiting for it to come back');
    expect(cli.run.err).toContain('TEMPORAL_ADDRESS');
    await server.restart();
    const run = await cli.done;
    expect(run.code).toBe(ExitCode.Ok);
    expect(run.out).toContain(h.simulator.job(job.projectId, job.jobId).prLink!);
    expect(run.err).toContain('Temporal answers again');
    // Said once, and never put on a worker.
    expect(run.err.split(outageSaid()).length).toBe(2);
    expect(run.err).not.toMatch(/No worker answered|may have stopped|no worker polls/i);
  });
  expect(h.simulator.counts(job.projectId, job.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
}, 300_000);

test('status, cancel and poll-now in an outage, from the CLI and the library: each says Temporal is not answering, with the address, the namespace and what to check', async () => {
  const job = uniqueJob('outage-commands');
  h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
  const queue = h.taskQueue();
  const worker = await h.worker(queue);
  const followUps = h.followUps(queue);
  await worker.runUntil(async () => {
    const { workflowId } = await followUps.start({ ...job, prompt: 'Keep working' });
    await waitFor(() => h.simulator.counts(job.projectId, job.jobId).posts === 1, 'the message to be sent');
    await server.kill();
    const [runs, calls] = await Promise.all([
      Promise.all(
        [
          ['status', workflowId],
          ['cancel', workflowId],
          ['poll-now', workflowId],
          ['status', workflowId, '--json'],
        ].map((args) => startCliOn(args, queue, 100, h.coordinatorTaskQueue, { address: server.address }).done),
      ),
      // A client connected before the outage: its calls fail after connecting.
      Promise.all(
        [
          followUps.status(workflowId),
          followUps.progress(workflowId, { timeoutMs: 2_000 }),
          followUps.cancel(workflowId),
          followUps.pollNow(workflowId),
        ].map((call) =>
          call.then(
            () => null,
            (error: unknown) => error,
          ),
        ),
      ),
    ]);
    // A command started in the outage cannot connect: it says so, where, and what to check.
    for (const run of runs) {
      expect(run.code).toBe(ExitCode.Error);
      expect(run.err).toContain(`Temporal at ${server.address} (namespace 'default')`);
      expect(run.err).toContain('TEMPORAL_ADDRESS');
    }
    expect(JSON.parse(runs[3]!.out)).toMatchObject({ error: { type: 'TemporalUnreachableError' } });
    for (const error of calls) {
      expect(error).toBeInstanceOf(TemporalUnreachableError);
      expect((error as Error).message).toContain(outageSaid());
      expect((error as Error).message).toContain('TEMPORAL_ADDRESS');
      expect((error as Error).message).not.toMatch(/No worker answered|may have stopped/);
    }
    await server.restart();
    // Nothing was lost: the follow-up is where it was, and a cancel now works.
    expect((await followUps.status(workflowId)).executionStatus).toBe('RUNNING');
    await followUps.cancel(workflowId);
    expect((await followUps.outcome(workflowId)).kind).toBe('cancelled');
  });
}, 300_000);
