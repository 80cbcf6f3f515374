/**
 * Sealed tickets (ticket-seal.activity.ts): only a worker holding the same API key makes or opens one, and a seal is
 * good for one follow-up chain alone.
 */
import { AgentApiClient } from '../../src/agent-api/http-client';
import { chainOfTicket } from '../../src/coordinator/coordinator-messages';
import { createTicketSealer, TICKET_KEY_PURPOSE } from '../../src/coordinator/ticket-seal.activity';

const sealerFor = (apiKey: string) =>
  createTicketSealer(
    new AgentApiClient({ baseUrl: 'https://api.example.com', apiKey, requestTimeoutMs: 1_000 }).derivedKey(
      TICKET_KEY_PURPOSE,
    ),
  );
const sealer = sealerFor('mint_workers-key');
const runId = '0198d3a2-7c1e-7b4a-9a55-3f1d2c4b5a69';

test("a sealed ticket names its chain's first run id and opens to it for its follow-up", () => {
  const ticket = sealer.seal('follow-up-1', runId);
  expect(chainOfTicket(ticket)).toBe(runId);
  expect(ticket.startsWith(`${runId}.`)).toBe(true);
  expect(sealer.open('follow-up-1', ticket)).toBe(runId);
  // The same on every worker with the same key: a check-in's ticket opens on the coordinator's worker.
  expect(sealerFor('mint_workers-key').open('follow-up-1', ticket)).toBe(runId);
});

test('a ticket opens for no other follow-up, no other chain, no other key, and not unsealed or tampered with', () => {
  const ticket = sealer.seal('follow-up-1', runId);
  expect(sealer.open('follow-up-2', ticket)).toBeNull();
  expect(sealer.open('follow-up-1', ticket.replace(runId, '0198d3a2-7c1e-7b4a-9a55-3f1d2c4b5a70'))).toBeNull();
  expect(sealerFor('mint_another-key').open('follow-up-1', ticket)).toBeNull();
  expect(sealer.open('follow-up-1', runId)).toBeNull();
  expect(sealer.open('follow-up-1', `${runId}.`)).toBeNull();
  expect(sealer.open('follow-up-1', `${ticket.slice(0, -1)}${ticket.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
  expect(sealer.open('follow-up-1', `${ticket}A`)).toBeNull();
});

test('the ticket key is not the API key, and does not show it', () => {
  const key = new AgentApiClient({
    baseUrl: 'https://api.example.com',
    apiKey: 'mint_workers-key',
    requestTimeoutMs: 1_000,
  }).derivedKey(TICKET_KEY_PURPOSE);
  expect(key.toString('utf8')).not.toContain('workers-key');
  expect(sealer.seal('follow-up-1', runId)).not.toContain('workers-key');
});
