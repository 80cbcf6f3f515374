/**
 * `startTestStack()` from `agent-followup/testing`, as a service's test uses it: one call gives a dev server with the
 * search attributes, the simulator and a worker; a follow-up runs on it end to end; `close()` stops everything. With
 * encryption on, as a service that sets AGENT_PAYLOAD_KEYS in production tests it.
 */
import { randomBytes } from 'node:crypto';
import { AesGcmPayloadCodec } from '../../src/encryption';
import { startTestStack, type TestStack } from '../../src/testing';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({
    dataConverter: { payloadCodecs: [new AesGcmPayloadCodec([{ id: 'test', key: randomBytes(32) }])] },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

test('a follow-up runs end to end on the stack: sent once, its own pull request returned', async () => {
  stack.api.addJob({ projectId: 'stack-project', jobId: 'job-1', workMs: 300 });
  const { workflowId } = await stack.followUps.start({
    projectId: 'stack-project',
    jobId: 'job-1',
    prompt: 'Add a test',
    polling: { initialInterval: 200 },
  });
  const outcome = await stack.followUps.outcome(workflowId);
  expect(outcome.kind).toBe('completed');
  expect(outcome.kind === 'completed' ? outcome.result.prLink : null).toMatch(/\/pull\/\d+$/);
  expect(stack.api.counts('stack-project', 'job-1')).toMatchObject({ posts: 1, prompts: ['Add a test'] });
  // The stack's client and worker share the codec: the server holds the input encrypted.
  const history = await stack.followUps.client.workflow.getHandle(workflowId).fetchHistory();
  const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  expect(new TextDecoder().decode(input?.metadata?.encoding ?? new Uint8Array())).toBe('binary/encrypted');
  expect(Buffer.from(input?.data ?? []).includes(Buffer.from('Add a test'))).toBe(false);
  // Its own server, not the suite's: the search attributes are there (the start above would have been refused).
  expect(stack.address).not.toBe(process.env.TEST_TEMPORAL_ADDRESS);
});

test('the simulator of the stack is as strict as the vendor: another key is refused', async () => {
  const response = await fetch(`${stack.api.url}/v2/agent/stack-project/job/job-1`, {
    headers: { Authorization: 'Bearer mint_someone_else_42' },
  });
  expect(response.status).toBe(401);
});
