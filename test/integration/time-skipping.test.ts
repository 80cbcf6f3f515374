/**
 * `startTestStack({ timeSkipping: true })`: the same stack on Temporal's time-skipping test server, where hours of a
 * follow-up's waiting pass while the test awaits its outcome. The simulator's agent works in the server's time, so its
 * GETs carry the server's clock: that is how these tests see hours pass, with no wall-clock assertion.
 */
import { startTestStack, type TestStack } from '../../src/testing';
import { ensureTemporalTestServer } from '../../scripts/stack/temporal-cli';

const HOUR_MS = 3_600_000;
let stack: TestStack;
beforeAll(async () => {
  // The Java build from Maven Central (installed once, then cached): the SDK's own download is not reachable everywhere.
  const testServerPath = ensureTemporalTestServer((line) => console.log(line));
  stack = await startTestStack({ timeSkipping: testServerPath ? { testServerPath } : true });
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
