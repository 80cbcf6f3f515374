/**
 * Signed, durable callbacks (issue 41 point 2): a follow-up with `notify` has the worker POST its ending, signed with
 * AGENT_NOTIFY_SECRET, to the receiver, retried while the receiver fails, carried through a worker SIGKILL, with one
 * delivery id on every attempt; a failing callback never changes the follow-up's outcome, and the secret is in no
 * history, log or body.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Webhook } from 'standardwebhooks';
import { FollowUpClient } from '../../src/client';
import { DELIVERY_HEADER, NotificationSecretError, verifyNotification } from '../../src/notify/signature';
import { FOLLOW_UP_NOTIFY_WORKFLOW_TYPE } from '../../src/kernel/workflow-ids';
import { randomBytes } from 'node:crypto';
import { Client } from '@temporalio/client';
import { AesGcmPayloadCodec, parsePayloadKeys } from '../../src/encryption';
import { startBuiltScript, type StartedScript } from '../support/processes';
import { createHarness, FAST_POLLING, TEST_API_KEY, uniqueJob, waitFor, type Harness } from '../support/harness';

// The Standard Webhooks form (whsec_ and base64 of 32 bytes), so an off-the-shelf verifier takes it as it is.
const SECRET = 'whsec_bm90aWZ5LXNlY3JldC03ZjNhOWMyZTFiNWQ0ZjYwLWFiY2Q=';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  answered: number | 'held';
}

/** A receiver that answers each request as `answer` says, in order; 'hold' keeps the request open until closed. */
async function startReceiver(answers: Array<number | 'hold'>): Promise<{
  url: string;
  received: Received[];
  close(): Promise<void>;
}> {
  const received: Received[] = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = answers[received.length] ?? 200;
      received.push({
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        answered: answer === 'hold' ? 'held' : answer,
      });
      if (answer === 'hold') held.push(response);
      else response.writeHead(answer).end(answer === 200 ? 'ok' : 'try later');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/agent?team=web`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const response of held) response.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ defaultWorkMs: 300 });
});
afterAll(async () => {
  await h.close();
});

function startWorker(taskQueue: string, secret: string | null, env: Record<string, string> = {}): StartedScript {
  return startBuiltScript('worker.js', [], {
    ...h.workerEnv(),
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    ...(secret ? { AGENT_NOTIFY_SECRET: secret } : {}),
    WORKER_SHUTDOWN_GRACE_TIME: '2s',
    AGENT_API_REQUEST_TIMEOUT: '2s',
    LOG_LEVEL: 'TRACE',
    ...env,
  });
}

function verified(each: Received) {
  return verifyNotification({ secret: SECRET, body: each.body, headers: each.headers });
}

test('a receiver that fails twice gets the callback on the third attempt: signed, one delivery id, outcome unchanged', async () => {
  const receiver = await startReceiver([503, 500, 200]);
  const taskQueue = h.taskQueue();
  const worker = startWorker(taskQueue, SECRET);
  try {
    const followUps = h.followUps(taskQueue);
    const done = uniqueJob('done');
    h.simulator.addJob(done);
    const missing = uniqueJob('missing');
    const [completed, rejected] = await Promise.all([
      followUps.start({ ...done, prompt: 'Call me back', polling: FAST_POLLING, notify: { url: receiver.url } }),
      followUps.start({
        ...missing,
        prompt: 'No such job',
        polling: FAST_POLLING,
        notify: { url: `${receiver.url}&n=2` },
      }),
    ]);
    const outcome = await followUps.outcome(completed.workflowId);
    expect(outcome.kind).toBe('completed');
    expect((await followUps.outcome(rejected.workflowId)).kind).toBe('rejected');
    await waitFor(
      () => receiver.received.filter((each) => each.answered === 200).length === 2,
      'both callbacks delivered',
    );
    const byFollowUp = (workflowId: string) =>
      receiver.received.filter((each) => JSON.parse(each.body).workflowId === workflowId).map(verified);
    const ofCompleted = byFollowUp(completed.workflowId);
    const ofRejected = byFollowUp(rejected.workflowId);
    // Three attempts in all before both were taken; each follow-up's attempts carry one delivery id, each its own.
    expect(ofCompleted.length + ofRejected.length).toBe(4);
    expect(new Set(ofCompleted.map((each) => each.deliveryId)).size).toBe(1);
    expect(new Set(ofRejected.map((each) => each.deliveryId)).size).toBe(1);
    expect(ofCompleted[0]?.deliveryId).not.toBe(ofRejected[0]?.deliveryId);
    expect(ofCompleted.at(-1)?.notification).toMatchObject({
      workflowId: completed.workflowId,
      projectId: done.projectId,
      jobId: done.jobId,
      outcome: 'completed',
      prLink: outcome.kind === 'completed' ? outcome.result.prLink : 'none',
      job: { status: 'completed' },
      failure: null,
    });
    expect(ofRejected.at(-1)?.notification).toMatchObject({
      outcome: 'rejected',
      sentAt: null,
      failure: { type: 'AgentJobNotFound' },
    });
    // The off-the-shelf Standard Webhooks verifier takes every attempt as it arrived.
    for (const each of receiver.received) {
      expect(new Webhook(SECRET).verify(each.body, each.headers as Record<string, string>)).toEqual(
        JSON.parse(each.body),
      );
    }
    // A forged, altered or re-labelled callback does not verify; an empty secret verifies nothing.
    // The completed follow-up's last callback, labelled with the other follow-up's delivery id (whichever came last).
    const last = receiver.received
      .filter((each) => JSON.parse(each.body).workflowId === completed.workflowId)
      .at(-1) as Received;
    expect(ofRejected[0]?.deliveryId).toBeDefined();
    const relabelled = { ...last.headers, [DELIVERY_HEADER]: `${ofRejected[0]?.deliveryId}` };
    expect(() => verifyNotification({ secret: SECRET, body: last.body, headers: relabelled })).toThrow(
      /re-labelled delivery id/,
    );
    expect(() => new Webhook(SECRET).verify(last.body, relabelled as unknown as Record<string, string>)).toThrow();
    expect(() => verifyNotification({ secret: '', body: last.body, headers: last.headers })).toThrow(
      NotificationSecretError,
    );
    expect(() => verifyNotification({ secret: SECRET, body: `${last.body} `, headers: last.headers })).toThrow(
      /does not match/,
    );
    expect(() =>
      verifyNotification({ secret: 'another-secret-0000', body: last.body, headers: last.headers }),
    ).toThrow();
    // The receiver's 200 reaches the callback's record a workflow task after the receiver sent it.
    await waitFor(
      async () => (await followUps.status(completed.workflowId)).callback?.state === 'delivered',
      'the callback recorded as delivered',
    );
    const status = await followUps.status(completed.workflowId);
    expect(status.callback).toMatchObject({ state: 'delivered', status: 200 });
    // The secret is in no history (the follow-up's, its callback's), no body and no log line.
    for (const workflowId of [
      completed.workflowId,
      rejected.workflowId,
      status.callback?.callbackWorkflowId as string,
    ]) {
      const history = historyToJSON(await h.client.workflow.getHandle(workflowId).fetchHistory());
      expect(history.includes(SECRET)).toBe(false);
    }
    expect(
      receiver.received.some((each) => each.body.includes(SECRET) || JSON.stringify(each.headers).includes(SECRET)),
    ).toBe(false);
  } finally {
    worker.child.kill('SIGTERM');
    await receiver.close();
  }
  const exit = await worker.exited;
  expect(exit.code).toBe(0);
  expect(exit.output.includes(SECRET)).toBe(false);
}, 120_000);

test('a worker SIGKILLed while the receiver holds the callback: another worker delivers it', async () => {
  const receiver = await startReceiver(['hold', 200]);
  const taskQueue = h.taskQueue();
  let worker = startWorker(taskQueue, SECRET);
  try {
    const followUps = new FollowUpClient(h.client, { taskQueue, coordinatorTaskQueue: h.coordinatorTaskQueue });
    const ref = uniqueJob('killed');
    h.simulator.addJob(ref);
    const { workflowId } = await followUps.start({
      ...ref,
      prompt: 'Survive',
      polling: FAST_POLLING,
      notify: { url: receiver.url },
    });
    expect((await followUps.outcome(workflowId)).kind).toBe('completed');
    await waitFor(() => receiver.received.length === 1, 'the first attempt to arrive');
    worker.child.kill('SIGKILL');
    await worker.exited;
    worker = startWorker(taskQueue, SECRET);
    await waitFor(() => receiver.received.some((each) => each.answered === 200), 'the callback after the kill', 90_000);
    const attempts = receiver.received.map(verified);
    expect(new Set(attempts.map((each) => each.deliveryId)).size).toBe(1);
    expect(attempts.at(-1)?.notification).toMatchObject({ workflowId, outcome: 'completed' });
    await waitFor(
      async () => (await followUps.status(workflowId)).callback?.state === 'delivered',
      'status to say delivered',
    );
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await receiver.close();
  }
}, 150_000);

test("the worker's AGENT_NOTIFY_URL: a follow-up without a notify of its own calls it back there; one with its own, there", async () => {
  const [workers, own] = [await startReceiver([]), await startReceiver([])];
  const taskQueue = h.taskQueue();
  const worker = startWorker(taskQueue, SECRET, { AGENT_NOTIFY_URL: workers.url });
  try {
    const followUps = h.followUps(taskQueue);
    const [plain, asked] = [uniqueJob('default-url'), uniqueJob('own-url')];
    for (const ref of [plain, asked]) h.simulator.addJob(ref);
    const [byDefault, byInput] = await Promise.all([
      followUps.start({ ...plain, prompt: 'Tell the service', polling: FAST_POLLING }),
      followUps.start({ ...asked, prompt: 'Tell me', polling: FAST_POLLING, notify: { url: own.url } }),
    ]);
    for (const { workflowId } of [byDefault, byInput])
      expect((await followUps.outcome(workflowId)).kind).toBe('completed');
    await waitFor(() => workers.received.length === 1 && own.received.length === 1, 'one callback each');
    expect(verified(workers.received[0] as Received).notification).toMatchObject({
      workflowId: byDefault.workflowId,
      outcome: 'completed',
    });
    expect(verified(own.received[0] as Received).notification).toMatchObject({ workflowId: byInput.workflowId });
    await waitFor(
      async () => (await followUps.status(byDefault.workflowId)).callback?.state === 'delivered',
      "status to show the default callback's delivery",
    );
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await Promise.all([workers.close(), own.close()]);
  }
}, 120_000);

test('a worker without AGENT_NOTIFY_SECRET: the callback fails at once and says so, the outcome stands', async () => {
  const receiver = await startReceiver([]);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const running = worker.run();
  try {
    const followUps = h.followUps(taskQueue);
    const ref = uniqueJob('unsigned');
    h.simulator.addJob(ref);
    const { workflowId } = await followUps.start({
      ...ref,
      prompt: 'Unsigned',
      polling: FAST_POLLING,
      notify: { url: receiver.url },
    });
    expect((await followUps.outcome(workflowId)).kind).toBe('completed');
    await waitFor(
      async () => (await followUps.status(workflowId)).callback?.state === 'failed',
      'the callback to fail',
    );
    const status = await followUps.status(workflowId);
    expect(status.callback).toMatchObject({
      state: 'failed',
      reason: expect.stringContaining('set AGENT_NOTIFY_SECRET'),
    });
    expect(status.outcome?.kind).toBe('completed');
    expect(receiver.received).toEqual([]);
  } finally {
    worker.shutdown();
    await running;
    await receiver.close();
  }
});

test('a raw start of the callback workflow with a made-up ending posts nothing and fails CallbackNotAttested', async () => {
  const receiver = await startReceiver([]);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, { notify: { secret: SECRET } });
  const running = worker.run();
  try {
    // A completed follow-up with a PR, under an id that never existed: as an attacker with start rights would try.
    const madeUp = {
      workflowId: 'followup/never/existed/0001',
      projectId: 'never',
      jobId: 'existed',
      outcome: 'completed',
      prLink: 'https://evil.example/pull/666',
      job: { id: 'existed', status: 'completed', prLink: 'https://evil.example/pull/666' },
      sentAt: '2026-11-28T12:00:00.000Z',
      finishedAt: '2026-11-28T12:01:00.000Z',
      failure: null,
    };
    const handle = await h.client.workflow.start(FOLLOW_UP_NOTIFY_WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `${madeUp.workflowId}/notify/forged-${h.taskQueue()}`,
      args: [{ url: receiver.url, notification: madeUp }],
    });
    const failure = await handle.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(ApplicationFailure);
    expect((failure as WorkflowFailedError).cause).toMatchObject({
      type: 'CallbackNotAttested',
      nonRetryable: true,
      message: expect.stringContaining('not by the follow-up whose ending it reports'),
    });
    expect(receiver.received).toEqual([]);
    // Refused in the workflow itself: no activity was scheduled, so no post could be signed.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((event) => event.activityTaskScheduledEventAttributes)).toBe(false);
    expect(events.length).toBeLessThanOrEqual(5);
  } finally {
    worker.shutdown();
    await running;
    await receiver.close();
  }
});

test('with encrypted payloads, a completed and a cancelled follow-up are called back: their endings read as recorded', async () => {
  const receiver = await startReceiver([]);
  const taskQueue = h.taskQueue();
  const dataConverter = {
    payloadCodecs: [new AesGcmPayloadCodec(parsePayloadKeys(`k1:${randomBytes(32).toString('base64')}`))],
  };
  const worker = await h.worker(taskQueue, undefined, {
    notify: { secret: SECRET, allowLoopback: true },
    dataConverter,
  });
  const running = worker.run();
  try {
    const followUps = new FollowUpClient(new Client({ connection: h.client.connection, dataConverter }), {
      taskQueue,
      coordinatorTaskQueue: h.coordinatorTaskQueue,
    });
    const [done, long] = [uniqueJob('sealed'), uniqueJob('cancelled')];
    h.simulator.addJob(done);
    h.simulator.addJob({ ...long, workMs: 120_000 });
    const completed = await followUps.start({
      ...done,
      prompt: 'Sealed',
      polling: FAST_POLLING,
      notify: { url: receiver.url },
    });
    const cancelled = await followUps.start(
      { ...long, prompt: 'Stop me', polling: FAST_POLLING, notify: { url: receiver.url } },
      { waitFor: 'sent' },
    );
    await followUps.cancel(cancelled.workflowId);
    expect((await followUps.outcome(completed.workflowId)).kind).toBe('completed');
    expect((await followUps.outcome(cancelled.workflowId)).kind).toBe('cancelled');
    await waitFor(() => receiver.received.length === 2, 'both callbacks');
    const byId = new Map(receiver.received.map((each) => [verified(each).notification.workflowId, verified(each)]));
    expect(byId.get(completed.workflowId)?.notification).toMatchObject({ outcome: 'completed', failure: null });
    expect(byId.get(cancelled.workflowId)?.notification).toMatchObject({ outcome: 'cancelled' });
    // Each callback: one activity that checks its parent and posts, nothing retried into history.
    for (const { workflowId } of [completed, cancelled]) {
      const callbackId = (await followUps.status(workflowId)).callback?.callbackWorkflowId as string;
      const events = (await h.client.workflow.getHandle(callbackId).fetchHistory()).events ?? [];
      expect(events.filter((event) => event.activityTaskScheduledEventAttributes)).toHaveLength(1);
    }
  } finally {
    worker.shutdown();
    await running;
    await receiver.close();
  }
});

test('a bad notify is bad input, refused before anything starts', async () => {
  const followUps = h.followUps(h.taskQueue());
  const ref = uniqueJob('bad-notify');
  await expect(
    followUps.start({ ...ref, prompt: 'x', notify: { url: 'ftp://user:pw@example.com/hook' } }),
  ).rejects.toMatchObject({ problems: [expect.objectContaining({ field: 'notify.url' })] });
});
