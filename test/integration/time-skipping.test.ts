/**
 * `startTestStack({ timeSkipping: true })`: the same stack on Temporal's time-skipping test server, where hours of a
 * follow-up's waiting pass while the test awaits its outcome. The simulator's agent works in the server's time, so its
 * GETs carry the server's clock: that is how these tests see hours pass, with no wall-clock assertion.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyNotification } from '../../src/notify/signature';
import { startTestStack, type TestStack } from '../../src/testing';
import { ensureTemporalTestServer } from '../../scripts/stack/temporal-cli';

const HOUR_MS = 3_600_000;
const NOTIFY_SECRET = 'time-skipping-notify-secret';
let stack: TestStack;
beforeAll(async () => {
  // The Java build from Maven Central (installed once, then cached): the SDK's own download is not reachable everywhere.
  const testServerPath = ensureTemporalTestServer((line) => console.log(line));
  stack = await startTestStack({
    timeSkipping: testServerPath ? { testServerPath } : true,
    notifySecret: NOTIFY_SECRET,
  });
}, 180_000);
afterAll(async () => {
  await stack?.close();
});

/** Server time between the first and the last GET of a job. */
function readSpanMs(jobId: string): number {
  const gets = stack.api.requests
    .filter((request) => request.jobId === jobId && request.operation === 'get')
    .map((request) => request.atMs);
  return Math.max(...gets) - Math.min(...gets);
}

test('a 2h timeout ends the follow-up as timed out after 2h of server time, the message sent once', async () => {
  stack.api.addJob({ projectId: 'skip-project', jobId: 'long-job', workMs: 10 * HOUR_MS });
  const { workflowId } = await stack.followUps.start({
    projectId: 'skip-project',
    jobId: 'long-job',
    prompt: 'Take your time',
    polling: { timeout: '2h' },
  });
  const outcome = await stack.followUps.outcome(workflowId);
  expect(outcome.kind).toBe('timed-out');
  expect(outcome.kind === 'timed-out' ? outcome.message : '').toMatch(/within 2h \(last status: active\)/);
  expect(stack.api.counts('skip-project', 'long-job')).toMatchObject({ posts: 1, prompts: ['Take your time'] });
  // Reads ran on their schedule to the deadline (5 s doubling to 60 s): well over an hour apart in server time.
  expect(readSpanMs('long-job')).toBeGreaterThan(1.5 * HOUR_MS);
  expect(readSpanMs('long-job')).toBeLessThanOrEqual(2 * HOUR_MS + 60_000);
});

test('a job that works 3h ends completed with its pull request, read on the default schedule all along', async () => {
  stack.api.addJob({ projectId: 'skip-project', jobId: 'three-hours', workMs: 3 * HOUR_MS });
  const { workflowId } = await stack.followUps.start({
    projectId: 'skip-project',
    jobId: 'three-hours',
    prompt: 'Refactor it',
    polling: { timeout: '6h' },
  });
  const outcome = await stack.followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  if (outcome.kind !== 'completed') return;
  expect(outcome.result.prLink).toMatch(/\/pull\/\d+$/);
  expect(readSpanMs('three-hours')).toBeGreaterThanOrEqual(3 * HOUR_MS - 60_000);
  // One read a minute once the backoff reaches its 60 s cap: about 180 in three hours.
  expect(stack.api.counts('skip-project', 'three-hours').gets).toBeGreaterThan(150);
  expect(stack.timeSkipping).toBe(true);
});

test('stack.sleep lets server time pass while a follow-up waits', async () => {
  stack.api.addJob({ projectId: 'skip-project', jobId: 'slept', workMs: 10 * HOUR_MS });
  const { workflowId } = await stack.followUps.start({
    projectId: 'skip-project',
    jobId: 'slept',
    prompt: 'Later',
    polling: { timeout: '4h' },
  });
  await stack.sleep('1h');
  const progress = await stack.followUps.progress(workflowId);
  expect(progress.phase).toBe('waiting');
  expect(stack.api.counts('skip-project', 'slept').gets).toBeGreaterThan(40);
  await stack.followUps.cancel(workflowId);
  expect((await stack.followUps.outcome(workflowId)).kind).toBe('cancelled');
});

test('a callback receiver down for 10 minutes of server time: the callback comes once it is up, one delivery id', async () => {
  // 5 s doubling: the 7 attempts before the 8th span 5 + 10 + ... + 320 s, over 10 minutes of the server's time.
  const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(received.length <= 7 ? 503 : 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', () => resolve()));
  try {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    stack.api.addJob({ projectId: 'skip-project', jobId: 'called-back', workMs: 1_000 });
    const { workflowId } = await stack.followUps.start({
      projectId: 'skip-project',
      jobId: 'called-back',
      prompt: 'Call me when done',
      notify: { url },
    });
    expect((await stack.followUps.outcome(workflowId)).kind).toBe('completed');
    const firstRunId = (await stack.followUps.client.workflow.getHandle(workflowId).describe()).raw
      .workflowExecutionInfo?.firstRunId;
    const delivered = await stack.followUps.client.workflow.getHandle(`${workflowId}/notify/${firstRunId}`).result();
    expect(delivered).toMatchObject({ status: 200, attempt: 8 });
    const attempts = received.map((each) => verifyNotification({ secret: NOTIFY_SECRET, ...each }));
    expect(attempts).toHaveLength(8);
    expect(new Set(attempts.map((each) => each.deliveryId))).toEqual(new Set([`${workflowId}/notify/${firstRunId}`]));
    expect(attempts[7]?.notification).toMatchObject({ workflowId, outcome: 'completed' });
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});
