/**
 * A project's coordinator outlives the processes around it: follow-ups wait in one job's lane and for the project's
 * send budget while the worker is killed with SIGKILL and the Temporal dev server is restarted on its database file.
 * None is lost, none is sent twice, each job's follow-ups are served one at a time in arrival order, and no window
 * ever holds more sends than the budget. Its own dev server (own port and file), since this one is torn down mid-test.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { FollowUpClient } from '../../src/client';
import { findTemporalCli } from '../../scripts/stack/temporal-cli';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/kernel/search-attributes';
import { AgentApiSimulator } from '../../src/simulator/simulator';
import { budgetedWorkerEnv, freePort, startBuiltScript, type StartedScript } from '../support/processes';
import { FAST_POLLING, TEST_API_KEY, waitFor } from '../support/harness';
import { maxInAnyWindow } from '../support/windows';

jest.setTimeout(300_000);

/** The budget under test: 4 sends in any 20 s window (720 an hour, scaled to the shortened window). */
const WINDOW_MS = 20_000;
const SENDS_PER_WINDOW = 4;

test('a lane of six and eight more jobs of one project survive a worker SIGKILL and a server restart: each sent once, in turn, never more than the budget in a window', async () => {
  const cli = findTemporalCli();
  if (!cli) throw new Error('no Temporal CLI');
  const dir = mkdtempSync(join(tmpdir(), 'agent-followup-coordinator-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const startServer = () =>
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli },
        ip: '127.0.0.1',
        port,
        dbFilename: join(dir, 'temporal.sqlite'),
        extraArgs: ['--log-level', 'error'],
        searchAttributes: [...FOLLOW_UP_SEARCH_ATTRIBUTES],
      },
    });
  let env = await startServer();
  // The vendor's rule on the same short window: a send past the budget would be answered 429.
  const simulator = await AgentApiSimulator.start({
    apiKey: TEST_API_KEY,
    honourIdempotencyKey: false,
    defaultWorkMs: 1_500,
    sendLimit: { sends: SENDS_PER_WINDOW, windowMs: WINDOW_MS },
  });
  const taskQueue = `coordinator-durability-${Date.now()}`;
  const startWorker = (): StartedScript =>
    startBuiltScript(
      'worker.js',
      [],
      budgetedWorkerEnv({
        apiBaseUrl: simulator.baseUrl,
        apiKey: TEST_API_KEY,
        address,
        taskQueue,
        sendsPerWindow: SENDS_PER_WINDOW,
        windowMs: WINDOW_MS,
      }),
    );
  let connection = await Connection.connect({ address });
  let worker = startWorker();
  const projectId = 'coordinator-durability';
  const lane = { projectId, jobId: 'job-lane' };
  const others = Array.from({ length: 8 }, (_, index) => ({ projectId, jobId: `job-${index + 1}` }));
  for (const job of [lane, ...others]) simulator.addJob(job);
  const polling = { ...FAST_POLLING, timeout: '4m' };
  try {
    let followUps = new FollowUpClient(new Client({ connection, namespace: 'default' }), { taskQueue });
    const prompts = Array.from({ length: 6 }, (_, index) => `Lane step ${index + 1}`);
    const laneIds: string[] = [];
    // Each starts once the one before it has checked in, so arrival order is start order.
    for (const prompt of prompts) {
      const { workflowId } = await followUps.start({ ...lane, prompt, polling });
      laneIds.push(workflowId);
      await waitFor(
        async () =>
          (await followUps.progress(workflowId).catch(() => null))?.queue != null ||
          simulator.counts(projectId, lane.jobId).messagesAccepted > 0,
        `${prompt} to check in`,
      );
    }
    const otherIds: string[] = [];
    for (const job of others)
      otherIds.push((await followUps.start({ ...job, prompt: `Once to ${job.jobId}`, polling })).workflowId);
    // The window is full (4 sent), the rest wait; then the worker dies and the server goes down and comes back.
    await waitFor(
      () =>
        [lane, ...others].reduce((sum, job) => sum + simulator.counts(projectId, job.jobId).messagesAccepted, 0) >=
        SENDS_PER_WINDOW,
      'the first window of sends',
    );
    worker.child.kill('SIGKILL');
    await worker.exited;
    await connection.close();
    await env.teardown();
    env = await startServer();
    connection = await Connection.connect({ address });
    followUps = new FollowUpClient(new Client({ connection, namespace: 'default' }), { taskQueue });
    worker = startWorker();
    const results = await Promise.all(laneIds.map((id) => followUps.result(id)));
    await Promise.all(otherIds.map((id) => followUps.result(id)));

    const laneCounts = simulator.counts(projectId, lane.jobId);
    // Exactly once each, in arrival order, and never to a job still working on the one before.
    expect(laneCounts.prompts).toEqual(prompts);
    expect(laneCounts.statusesAtSend.every((status) => status !== 'active')).toBe(true);
    for (const [index, id] of laneIds.entries()) {
      expect({ id, pr: results[index]?.prLink }).toEqual({
        id,
        pr: `https://github.com/acme/${projectId}/pull/${101 + index}`,
      });
    }
    const all = [lane, ...others].map((job) => simulator.counts(projectId, job.jobId));
    expect(all.map((counts) => counts.messagesAccepted)).toEqual([6, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(all.reduce((sum, counts) => sum + counts.rateLimited, 0)).toBe(0);
    expect(
      maxInAnyWindow(
        all.flatMap((counts) => counts.acceptedAtMs),
        WINDOW_MS,
      ),
    ).toBeLessThanOrEqual(SENDS_PER_WINDOW);
  } finally {
    worker.child.kill('SIGKILL');
    await worker.exited;
    await connection.close();
    await simulator.close();
    await env.teardown();
  }
});
