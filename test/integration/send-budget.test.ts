/**
 * The per-project send budget, on the real dev server (task queue fairness on, one partition per queue): sends of one
 * project are paced by the server's per-fairness-key rate limit across every worker, another project is not held
 * back, and a worker refuses to start on a sends queue without the budget it expects.
 */
import { sendsTaskQueue } from '../../src/follow-up/task-queues';
import { ExitCode } from '../../src/cli';
import { checkSendBudget, configureSendBudget, readSendBudget } from '../../src/send-budget';
import { AgentApiSimulator, type SimulatedRequest } from '../../src/simulator/simulator';
import { runCliOn } from '../support/cli-runner';
import { startBuiltScript } from '../support/processes';
import { createHarness, FAST_POLLING, TEST_API_KEY, type Harness } from '../support/harness';

const VENDOR_LIMIT = { sends: 15, windowMs: 5_000 };

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

test('30 follow-ups to one project are paced by the budget: not one 429, and another project is not held back', async () => {
  // The vendor's limit on a test's time scale: at most 15 sends per project in any 5 seconds. The budget is 2 a second
  // (the server's rate limiter lets a first few through at once, then spaces the rest).
  const sends: SimulatedRequest[] = [];
  const simulator = await AgentApiSimulator.start({
    apiKey: TEST_API_KEY,
    defaultWorkMs: 200,
    sendLimit: VENDOR_LIMIT,
    onRequest: (request) => {
      if (request.operation === 'send') sends.push(request);
    },
  });
  try {
    const taskQueue = h.taskQueue();
    await h.sendBudget(taskQueue, 2 * 3600);
    const busy = Array.from({ length: 30 }, (_, index) => ({ projectId: 'busy-project', jobId: `job-${index}` }));
    const other = Array.from({ length: 3 }, (_, index) => ({ projectId: 'other-project', jobId: `job-${index}` }));
    for (const ref of [...busy, ...other]) simulator.addJob(ref);
    const api = h.api({ baseUrl: simulator.baseUrl });
    const worker = await h.worker(taskQueue, api);
    const followUps = h.followUps(taskQueue);
    const results = await worker.runUntil(async () => {
      const started = [];
      for (const ref of busy) started.push(await followUps.start({ ...ref, prompt: 'Paced', polling: FAST_POLLING }));
      for (const ref of other) started.push(await followUps.start({ ...ref, prompt: 'Not held back', polling: FAST_POLLING }));
      return Promise.all(started.map(({ workflowId }) => followUps.result(workflowId)));
    });
    expect(results.every((result) => result.outcome === 'completed' && result.sendAttempts === 1)).toBe(true);
    for (const ref of [...busy, ...other]) {
      expect({ ...ref, ...simulator.counts(ref.projectId, ref.jobId) }).toMatchObject({ ...ref, messagesAccepted: 1, rateLimited: 0 });
    }
    // The other project's sends did not queue behind the busy one's: all of them went out before its last one.
    const lastBusySend = Math.max(...sends.filter((send) => send.projectId === 'busy-project').map((send) => send.atMs));
    const otherSends = sends.filter((send) => send.projectId === 'other-project').map((send) => send.atMs);
    expect(otherSends).toHaveLength(3);
    expect(otherSends.every((at) => at < lastBusySend)).toBe(true);
  } finally {
    await simulator.close();
  }
});

test('the same 30 sends without a budget meet the rate limit (the control for the test above)', async () => {
  const simulator = await AgentApiSimulator.start({ apiKey: TEST_API_KEY, defaultWorkMs: 200, sendLimit: VENDOR_LIMIT });
  try {
    const taskQueue = h.taskQueue();
    const busy = Array.from({ length: 30 }, (_, index) => ({ projectId: 'busy-project', jobId: `job-${index}` }));
    for (const ref of busy) simulator.addJob(ref);
    const worker = await h.worker(taskQueue, h.api({ baseUrl: simulator.baseUrl }));
    const followUps = h.followUps(taskQueue);
    await worker.runUntil(async () => {
      const started = await Promise.all(busy.map((ref) => followUps.start({ ...ref, prompt: 'Unpaced', polling: FAST_POLLING })));
      await Promise.all(started.map(({ workflowId }) => followUps.result(workflowId)));
    });
    const rateLimited = busy.reduce((sum, ref) => sum + simulator.counts(ref.projectId, ref.jobId).rateLimited, 0);
    // A 429 still waits, as the last line of defence, and every message gets through in the end.
    expect(rateLimited).toBeGreaterThan(0);
    expect(busy.every((ref) => simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1)).toBe(true);
  } finally {
    await simulator.close();
  }
});

test('a budget is stored on the sends queue and read back', async () => {
  const taskQueue = h.taskQueue();
  const where = { namespace: 'default', taskQueue };
  expect(await readSendBudget(h.client.workflowService, where)).toBeNull();
  await configureSendBudget(h.client.workflowService, where, { sendsPerProjectPerHour: 80, weights: {} });
  expect(await readSendBudget(h.client.workflowService, where)).toMatchObject({ sendsPerProjectPerHour: 80 });
});

test('agent-followup budget set and show: the budget from the command line, read back as every worker checks it', async () => {
  const taskQueue = h.taskQueue();
  expect((await runCliOn(['budget', 'show'], taskQueue)).out).toContain('No per-project send budget is set');
  const set = await runCliOn(['budget', 'set', '--sends-per-hour', '80'], taskQueue);
  expect(set.code).toBe(ExitCode.Ok);
  expect(set.out).toContain('Each project may send 80 follow-up message(s) per hour, shared by every worker.');
  const shown = JSON.parse((await runCliOn(['budget', 'show', '--json'], taskQueue)).out) as { budget: { sendsPerProjectPerHour: number } };
  expect(shown.budget.sendsPerProjectPerHour).toBe(80);
  expect(await checkSendBudget(h.client.workflowService, { namespace: 'default', taskQueue }, 80)).toMatchObject({ ok: true });
});

test.each([
  [['budget'], /Usage: agent-followup budget/],
  [['budget', 'set'], /needs --sends-per-hour N/],
  [['budget', 'set', '--sends-per-hour', 'lots'], /--sends-per-hour must be a positive number \(got 'lots'\)/],
  [['budget', 'set', '--sends-per-hour', '80', '--weight', 'big-project'], /--weight must be PROJECT=W/],
])('bad budget input %j exits 2 with a clear message and never connects', async (args, message) => {
  const run = await runCliOn(args, 'unused');
  expect(run.code).toBe(ExitCode.BadInput);
  expect(run.err).toMatch(message);
  expect(run.connected).toBe(false);
});

describe('the worker checks the budget at start-up', () => {
  const start = (taskQueue: string, env: Record<string, string> = {}) =>
    startBuiltScript('worker.js', [], {
      AGENT_API_KEY: TEST_API_KEY,
      AGENT_API_BASE_URL: h.simulator.baseUrl,
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
      TEMPORAL_TASK_QUEUE: taskQueue,
      ...env,
    }).exited;

  test('a sends queue without a budget stops it with exit code 2 and the exact command that sets it', async () => {
    const taskQueue = h.taskQueue();
    const exit = await start(taskQueue);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain(`the sends queue '${sendsTaskQueue(taskQueue)}' has no per-project send budget`);
    expect(exit.stderr).toContain(
      `temporal task-queue config set --namespace default --task-queue ${sendsTaskQueue(taskQueue)} --task-queue-type activity --fairness-key-rps-limit-default ${80 / 3600}`,
    );
  });

  test('a budget other than the one the worker expects stops it, naming both', async () => {
    const taskQueue = h.taskQueue();
    await h.sendBudget(taskQueue, 40);
    const exit = await start(taskQueue, { AGENT_SENDS_PER_PROJECT_PER_HOUR: '80' });
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain('allows 40 sends per project per hour, not the 80 of AGENT_SENDS_PER_PROJECT_PER_HOUR');
  });
});

test('a send still queued behind the budget at the deadline ends the follow-up timed out, never sent and never retried', async () => {
  // One send an hour: the server lets the first through and holds the rest in the queue far past their 4 s deadlines.
  const taskQueue = h.taskQueue();
  await h.sendBudget(taskQueue, 1);
  const jobs = Array.from({ length: 4 }, (_, index) => ({ projectId: `queued-${taskQueue}`, jobId: `job-${index}` }));
  for (const ref of jobs) h.simulator.addJob({ ...ref, workMs: 10 * 60_000 });
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const outcomes = await worker.runUntil(async () => {
    const started = [];
    for (const ref of jobs) started.push(await followUps.start({ ...ref, prompt: 'Queued', polling: { ...FAST_POLLING, timeout: '4s' } }));
    return Promise.all(started.map(async ({ workflowId }) => ({ workflowId, outcome: await followUps.outcome(workflowId) })));
  });
  const neverSent = jobs.filter((ref) => h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 0);
  expect(neverSent.length).toBeGreaterThan(0);
  for (const { workflowId, outcome } of outcomes) {
    expect(outcome.kind).toBe('timed-out');
    const ref = jobs.find((job) => workflowId.includes(`/${job.jobId}/`)) as (typeof jobs)[number];
    if (h.simulator.counts(ref.projectId, ref.jobId).messagesAccepted > 0) continue;
    expect('message' in outcome ? outcome.message : outcome).toContain('the deadline came while the message was waiting to be sent');
    const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
    const sends = (history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'sendFollowUpMessage');
    expect(sends).toHaveLength(1);
  }
});
