/**
 * The agent API's base URL meets the same address guard as callbacks (issue 73 point 4), on both transports (reads on
 * kept-alive node:http, sends on fetch): a name is resolved by a test resolver, so nothing off this machine is asked;
 * an inward answer is refused before any connection, a send then certainly not delivered.
 */
import { AgentApiClient } from '../../src/agent-api/http-client';
import type { AddressPolicy, Resolver } from '../../src/address-guard';
import { AgentApiSimulator } from '../../src/simulator/simulator';
import { failureOf } from '../support/failures';

const API_KEY = 'mint_test_guard_key_0001';
let simulator: AgentApiSimulator;

beforeAll(async () => {
  simulator = await AgentApiSimulator.start({ apiKey: API_KEY, defaultWorkMs: 50 });
});
afterAll(async () => {
  await simulator.close();
});

function guardedClient(host: string, policy: Omit<AddressPolicy, 'settingPrefix'>, resolve: Resolver) {
  const port = new URL(simulator.baseUrl).port;
  return new AgentApiClient({
    baseUrl: `http://${host}:${port}`,
    apiKey: API_KEY,
    requestTimeoutMs: 2_000,
    addressGuard: { policy: { ...policy, settingPrefix: 'AGENT_API_ALLOW' }, resolve },
  });
}

test('a base URL whose name resolves to a private address: reads and sends are refused, nothing sent', async () => {
  const asked: string[] = [];
  const client = guardedClient('agent-api.internal.example', { allowLoopback: true }, async (name) => {
    asked.push(name);
    return [{ address: '10.0.0.5', family: 4 }];
  });
  const ref = { projectId: 'guard-p', jobId: 'guard-1' };
  simulator.addJob(ref);
  const read = await failureOf(client.getAgentJob(ref));
  expect({ type: read.type, nonRetryable: read.nonRetryable }).toEqual({
    type: 'AgentApiTargetRefused',
    nonRetryable: true,
  });
  expect(read.message).toContain('refused to connect to agent-api.internal.example (10.0.0.5)');
  expect(read.message).toContain('AGENT_API_ALLOW_PRIVATE_NETWORKS=true');
  const send = await failureOf(client.sendFollowUpMessage({ ...ref, prompt: 'hello' }));
  expect({ type: send.type, details: send.details }).toEqual({
    type: 'AgentApiTargetRefused',
    details: [{ operation: 'send follow-up message', delivery: 'not-delivered' }],
  });
  expect(asked).toEqual(['agent-api.internal.example', 'agent-api.internal.example']);
  expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ gets: 0, messagesAccepted: 0 });
});

test('the same name resolved to loopback with AGENT_API_ALLOW_LOOPBACK: both transports reach the simulator', async () => {
  const client = guardedClient('simulator.test.example', { allowLoopback: true }, async () => [
    { address: '127.0.0.1', family: 4 },
  ]);
  const ref = { projectId: 'guard-p', jobId: 'guard-2' };
  simulator.addJob(ref);
  expect((await client.sendFollowUpMessage({ ...ref, prompt: 'hello' })).job?.id).toBe('guard-2');
  expect((await client.getAgentJob(ref)).id).toBe('guard-2');
});

test('a base URL naming a refused address literally is refused when the client is built', () => {
  expect(
    () =>
      new AgentApiClient({
        baseUrl: 'http://169.254.169.254',
        apiKey: API_KEY,
        requestTimeoutMs: 2_000,
        addressGuard: { policy: { allowPrivateNetworks: true, settingPrefix: 'AGENT_API_ALLOW' } },
      }),
  ).toThrow('AGENT_API_BASE_URL: refused to connect to 169.254.169.254: it is a link-local address');
  expect(() => guardedClient('127.0.0.1', {}, async () => [])).toThrow('set AGENT_API_ALLOW_LOOPBACK=true');
});
