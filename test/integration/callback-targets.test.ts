/**
 * No URL aims the worker inward (issue 73 point 4): a notify.url naming an internal address or a cloud metadata name is
 * refused at input, by the client and by the workflow when a raw start bypasses it; a name that resolves inward (a
 * test resolver gives the addresses, so nothing off this machine is asked or contacted) is refused at the connection,
 * DNS rebinding included; loopback only where the workers allow it; a redirect is a definite failure; and what a
 * receiver answers is told by its status code and phrase only, never its body.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { InvalidFollowUpInputError } from '../../src/client';
import type { Resolver } from '../../src/address-guard';
import { startBuiltScript } from '../support/processes';
import { createHarness, FAST_POLLING, TEST_API_KEY, uniqueJob, waitFor, type Harness } from '../support/harness';

const SECRET = 'notify-secret-targets-0c1d2e3f4a5b';
const INTERNAL_SECRET = 'INTERNAL-SECRET-db_password=hunter2';

interface Receiver {
  url: string;
  port: number;
  received: IncomingMessage['headers'][];
  close(): Promise<void>;
}

/** A receiver on this machine answering `answers` in order (then 200), each with `body`; every connection closed. */
async function startReceiver(answers: number[], body = 'ok', headers: Record<string, string> = {}): Promise<Receiver> {
  const received: IncomingMessage['headers'][] = [];
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const status = answers[received.length] ?? 200;
      received.push(request.headers);
      // A new connection per request, so each attempt goes through the lookup again.
      response.writeHead(status, { Connection: 'close', ...headers }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/agent`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ defaultWorkMs: 200 });
});
afterAll(async () => {
  await h.close();
});

/** The notify workflow's history of a follow-up that ended: its events and its text. */
async function callbackHistory(followUps: ReturnType<Harness['followUps']>, workflowId: string) {
  const status = await followUps.status(workflowId);
  const callbackWorkflowId = status.callback?.callbackWorkflowId as string;
  const history = await h.client.workflow.getHandle(callbackWorkflowId).fetchHistory();
  return { status, events: history.events ?? [], text: historyToJSON(history) };
}

const LITERALS: [url: string, reason: string][] = [
  ['https://169.254.169.254/latest/meta-data/iam/', 'link-local'],
  ['https://10.0.0.5:8443/admin', 'private-network'],
  ['https://192.168.1.1/', 'private-network'],
  ['https://172.16.0.1/', 'private-network'],
  ['https://[fd00::1]/', 'unique-local'],
  ['https://[fe80::1]/', 'link-local'],
  ['https://100.64.0.1/', 'carrier-grade NAT'],
  ['https://224.0.0.1/', 'multicast'],
  ['https://0.0.0.0:7233/', 'unspecified'],
  ['https://[::ffff:10.0.0.5]/', 'private-network'],
  ['https://0xa9fea9fe/latest/', 'link-local'],
  ['https://metadata.google.internal/computeMetadata/v1/', 'cloud metadata service'],
  ['http://instance-data/latest/meta-data/', 'cloud metadata service'],
];

test('notify.url at each internal address class by literal: the client refuses it and so does a raw start, nothing runs', async () => {
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const worker = await h.worker(taskQueue, undefined, { notify: { secret: SECRET, allowLoopback: true } });
  const ref = uniqueJob('literal');
  h.simulator.addJob(ref);
  await worker.runUntil(async () => {
    for (const [url, reason] of LITERALS) {
      const input = { ...ref, prompt: 'Call me back', polling: FAST_POLLING, notify: { url } };
      const refused = await followUps.start(input).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(InvalidFollowUpInputError);
      expect((refused as Error).message).toContain(reason);
      const workflowId = `raw-${randomUUID()}`;
      const failed = await h.client.workflow.execute('followUpWorkflow', { taskQueue, workflowId, args: [input] }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(WorkflowFailedError);
      const cause = (failed as WorkflowFailedError).cause as ApplicationFailure;
      expect({ type: cause.type, nonRetryable: cause.nonRetryable }).toEqual({
        type: 'InvalidFollowUpInput',
        nonRetryable: true,
      });
      expect(cause.message).toContain(reason);
      // Refused in its first workflow task: started, one task, failed; no activity, no child, no callback.
      const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      expect(events).toHaveLength(5);
    }
  });
  const counts = h.simulator.counts(ref.projectId, ref.jobId);
  expect({ sends: counts.messagesAccepted, gets: counts.gets }).toEqual({ sends: 0, gets: 0 });
}, 120_000);

test('a name that resolves inward is refused at the connection, rebinding included; nothing is contacted', async () => {
  const receiver = await startReceiver([]);
  const inward: Record<string, string> = {
    'hooks.internal.example': '10.0.0.5',
    'metadata-alias.example': '169.254.169.254',
    'v6.internal.example': 'fd00::1',
    'mapped.internal.example': '::ffff:10.0.0.5',
    'cgnat.internal.example': '100.64.0.1',
  };
  let rebound = false;
  const asked: string[] = [];
  // The test's DNS: the names above, and rebind.example at our receiver first and at the private network after.
  const resolve: Resolver = async (hostname) => {
    asked.push(hostname);
    const address = hostname === 'rebind.example' ? (rebound ? '10.0.0.5' : '127.0.0.1') : inward[hostname];
    if (address === undefined) throw Object.assign(new Error(`no test address for ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const worker = await h.worker(taskQueue, undefined, {
    notify: { secret: SECRET, allowLoopback: true, allowInsecureHttp: true, resolve },
  });
  try {
    await worker.runUntil(async () => {
      const start = async (url: string) => {
        const ref = uniqueJob('named');
        h.simulator.addJob(ref);
        const { workflowId } = await followUps.start({
          ...ref,
          prompt: 'Call me',
          polling: FAST_POLLING,
          notify: { url },
        });
        expect((await followUps.outcome(workflowId)).kind).toBe('completed');
        return workflowId;
      };
      const failedCallback = async (workflowId: string) => {
        await waitFor(
          async () => (await followUps.status(workflowId)).callback?.state === 'failed',
          'the callback to fail',
        );
        return callbackHistory(followUps, workflowId);
      };
      const names = Object.keys(inward);
      const started = await Promise.all(names.map((name) => start(`https://${name}/hook`)));
      for (const [index, workflowId] of started.entries()) {
        const name = names[index] as string;
        const { status, events } = await failedCallback(workflowId);
        expect(status.callback).toMatchObject({
          state: 'failed',
          reason: expect.stringContaining(`refused to connect to ${name} (${inward[name]})`),
        });
        // One attempt, refused for good: scheduled once, no retry.
        expect(
          events.filter(
            (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverNotification',
          ),
        ).toHaveLength(1);
        // One activity checks the parent and posts: 12 events at most.
        expect(events.length).toBeLessThanOrEqual(12);
      }
      // The same name, first at the (allowed) receiver, then rebound to a private address: each connection is checked.
      const first = await start(`http://rebind.example:${receiver.port}/hook`);
      await waitFor(async () => (await followUps.status(first)).callback?.state === 'delivered', 'the first callback');
      rebound = true;
      const second = await start(`http://rebind.example:${receiver.port}/hook`);
      const { status } = await failedCallback(second);
      expect(status.callback).toMatchObject({
        reason: expect.stringContaining('refused to connect to rebind.example (10.0.0.5)'),
      });
    });
    expect(receiver.received).toHaveLength(1);
    expect(asked.filter((name) => name === 'rebind.example')).toHaveLength(2);
    for (const name of Object.keys(inward)) expect(asked).toContain(name);
  } finally {
    await receiver.close();
  }
}, 120_000);

test('loopback only where the workers allow it: without AGENT_NOTIFY_ALLOW_LOOPBACK nothing reaches this machine', async () => {
  const receiver = await startReceiver([]);
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const worker = await h.worker(taskQueue, undefined, { notify: { secret: SECRET } });
  try {
    await worker.runUntil(async () => {
      const ids: string[] = [];
      for (const url of [receiver.url, `http://localhost:${receiver.port}/-/quit`, `http://[::1]:${receiver.port}/`]) {
        const ref = uniqueJob('loopback');
        h.simulator.addJob(ref);
        ids.push((await followUps.start({ ...ref, prompt: 'x', polling: FAST_POLLING, notify: { url } })).workflowId);
      }
      for (const workflowId of ids) {
        await waitFor(async () => (await followUps.status(workflowId)).callback?.state === 'failed', 'a refusal');
        expect((await followUps.status(workflowId)).callback).toMatchObject({
          reason: expect.stringContaining('set AGENT_NOTIFY_ALLOW_LOOPBACK=true'),
        });
      }
    });
    expect(receiver.received).toEqual([]);
  } finally {
    await receiver.close();
  }
}, 120_000);

test('a 302 from a receiver is a definite failure: one attempt, not followed, not retried', async () => {
  const receiver = await startReceiver([302, 302], 'moved', { Location: 'http://169.254.169.254/latest/meta-data/' });
  const taskQueue = h.taskQueue();
  const followUps = h.followUps(taskQueue);
  const worker = await h.worker(taskQueue, undefined, { notify: { secret: SECRET, allowLoopback: true } });
  try {
    await worker.runUntil(async () => {
      const ref = uniqueJob('redirected');
      h.simulator.addJob(ref);
      const { workflowId } = await followUps.start({
        ...ref,
        prompt: 'x',
        polling: FAST_POLLING,
        notify: { url: receiver.url },
      });
      expect((await followUps.outcome(workflowId)).kind).toBe('completed');
      await waitFor(async () => (await followUps.status(workflowId)).callback?.state === 'failed', 'the callback');
      const { status, events } = await callbackHistory(followUps, workflowId);
      expect(status.callback).toMatchObject({
        state: 'failed',
        reason: expect.stringContaining('answered HTTP 302 Found, a redirect, which is not followed'),
      });
      expect(
        events.filter(
          (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'deliverNotification',
        ),
      ).toHaveLength(1);
      // One activity checks the parent and posts: 12 events at most.
      expect(events.length).toBeLessThanOrEqual(12);
      expect(status.outcome?.kind).toBe('completed');
    });
    expect(receiver.received).toHaveLength(1);
  } finally {
    await receiver.close();
  }
}, 120_000);

test("a 500 whose body holds a secret: status, the history and the worker's log show only the code and phrase", async () => {
  const receiver = await startReceiver([500], `${INTERNAL_SECRET} (stack trace follows)`);
  const taskQueue = h.taskQueue();
  const worker = startBuiltScript('worker.js', [], {
    ...h.workerEnv(),
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    AGENT_NOTIFY_SECRET: SECRET,
    WORKER_SHUTDOWN_GRACE_TIME: '2s',
    AGENT_API_REQUEST_TIMEOUT: '2s',
    LOG_LEVEL: 'DEBUG',
  });
  try {
    const followUps = h.followUps(taskQueue);
    const ref = uniqueJob('leaky');
    h.simulator.addJob(ref);
    const { workflowId } = await followUps.start({
      ...ref,
      prompt: 'x',
      polling: FAST_POLLING,
      notify: { url: receiver.url },
    });
    expect((await followUps.outcome(workflowId)).kind).toBe('completed');
    // While the 500 waits for its retry, `status` shows what went wrong.
    await waitFor(async () => {
      const callback = (await followUps.status(workflowId)).callback;
      return callback?.state === 'delivering' && callback.lastError !== null;
    }, 'the first attempt to fail');
    const delivering = (await followUps.status(workflowId)).callback;
    expect(delivering).toMatchObject({ state: 'delivering' });
    expect(delivering?.state === 'delivering' ? delivering.lastError : null).toContain(
      'answered HTTP 500 Internal Server Error',
    );
    expect(JSON.stringify(delivering)).not.toContain('INTERNAL-SECRET');
    await waitFor(async () => (await followUps.status(workflowId)).callback?.state === 'delivered', 'the retry');
    const { text } = await callbackHistory(followUps, workflowId);
    expect(text).toContain('HTTP 500 Internal Server Error');
    expect(text).not.toContain('INTERNAL-SECRET');
    expect(receiver.received).toHaveLength(2);
  } finally {
    worker.child.kill('SIGTERM');
    await receiver.close();
  }
  const exit = await worker.exited;
  expect(exit.code).toBe(0);
  // The failed attempt is in the log, by its code and phrase only.
  expect(exit.output).toContain('HTTP 500 Internal Server Error');
  expect(exit.output).not.toContain('INTERNAL-SECRET');
}, 120_000);
