/**
 * A job's lane outlives the processes around it: five follow-ups wait in one lane while the worker is killed with
 * SIGKILL and the Temporal dev server is restarted on its database file. None is lost, none is sent twice, and they
 * are served one at a time. Its own dev server (own port and file), since this one is torn down mid-test.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { FollowUpClient } from '../../src/client';
import { findTemporalCli, SEND_BUDGET_SERVER_ARGS } from '../../scripts/dev/temporal-cli';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/follow-up/search-attributes';
import { configureSendBudget } from '../../src/send-budget';
import { AgentApiSimulator } from '../../src/simulator/simulator';
import { freePort, startBuiltScript, type StartedScript } from '../support/processes';
import { FAST_POLLING, TEST_API_KEY, UNPACED_SENDS_PER_HOUR, waitFor } from '../support/harness';

jest.setTimeout(300_000);

test('five follow-ups waiting in one lane survive a worker SIGKILL and a server restart: all served once, in turn', async () => {
  const cli = findTemporalCli();
  if (!cli) throw new Error('no Temporal CLI');
  const dir = mkdtempSync(join(tmpdir(), 'agent-followup-lane-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const startServer = () =>
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli },
        ip: '127.0.0.1',
        port,
        dbFilename: join(dir, 'temporal.sqlite'),
        extraArgs: ['--log-level', 'error', ...SEND_BUDGET_SERVER_ARGS],
        searchAttributes: [...FOLLOW_UP_SEARCH_ATTRIBUTES],
      },
    });
  let env = await startServer();
  const simulator = await AgentApiSimulator.start({ apiKey: TEST_API_KEY, honourIdempotencyKey: false, defaultWorkMs: 1_500 });
  const taskQueue = `lane-durability-${Date.now()}`;
  const startWorker = (): StartedScript =>
    startBuiltScript('worker.js', [], {
      AGENT_API_KEY: TEST_API_KEY,
      AGENT_API_BASE_URL: simulator.baseUrl,
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      AGENT_SENDS_PER_PROJECT_PER_HOUR: String(UNPACED_SENDS_PER_HOUR),
      WORKER_SHUTDOWN_GRACE_TIME: '5s',
      AGENT_API_REQUEST_TIMEOUT: '5s',
    });
  let connection = await Connection.connect({ address });
  await configureSendBudget(connection.workflowService, { namespace: 'default', taskQueue }, { sendsPerProjectPerHour: UNPACED_SENDS_PER_HOUR, weights: {} });
  let worker = startWorker();
  const ref = { projectId: 'lane-durability', jobId: 'job-1' };
  simulator.addJob(ref);
  try {
    let followUps = new FollowUpClient(new Client({ connection, namespace: 'default' }), { taskQueue });
    const prompts = Array.from({ length: 6 }, (_, index) => `Lane step ${index + 1}`);
    const ids: string[] = [];
    for (const prompt of prompts) ids.push((await followUps.start({ ...ref, prompt, polling: { ...FAST_POLLING, timeout: '4m' } })).workflowId);
    // One holds the job, five wait; then the worker dies mid-work and the server goes down and comes back.
    await waitFor(() => simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1, 'the first send');
    worker.child.kill('SIGKILL');
    await worker.exited;
    await connection.close();
    await env.teardown();
    env = await startServer();
    connection = await Connection.connect({ address });
    followUps = new FollowUpClient(new Client({ connection, namespace: 'default' }), { taskQueue });
    worker = startWorker();
    const results = await Promise.all(ids.map((id) => followUps.result(id)));

    const counts = simulator.counts(ref.projectId, ref.jobId);
    expect(counts.messagesAccepted).toBe(6);
    expect([...counts.prompts].sort()).toEqual([...prompts].sort());
    // One at a time: no message reached the job while it was working on another follow-up's.
    expect(counts.statusesAtSend.every((status) => status !== 'active')).toBe(true);
    // Each result is the job after its own message: pull requests 101..106 in the order the messages were taken.
    for (const [index, id] of ids.entries()) {
      expect({ id, pr: results[index]?.prLink }).toEqual({ id, pr: `https://github.com/acme/${ref.projectId}/pull/${101 + counts.prompts.indexOf(prompts[index] as string)}` });
    }
  } finally {
    worker.child.kill('SIGKILL');
    await worker.exited;
    await connection.close();
    await simulator.close();
    await env.teardown();
  }
});
