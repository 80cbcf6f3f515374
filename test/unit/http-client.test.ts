/**
 * The HTTP client against the simulator over real loopback HTTP (no fetch mocks), so URL encoding, headers, status
 * mapping and redaction are tested the way they run in production.
 */
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import {
  AgentApiClient,
  DEFAULT_GET_JOB_PATH,
  DEFAULT_SEND_PATH,
  buildUrl,
  encodePathSegment,
  type JobRef,
} from '../../src/agent-api/http-client';
import { AgentApiSimulator } from '../../src/simulator/simulator';
import { failureOf } from '../support/failures';

const API_KEY = 'mint_test_unit_key_0001';
const API_SECRET = 'test_unit_key_0001';
const OTHER_KEY = 'mint_test_unit_key_0002';
const WORK_MS = 50;

let clock = Date.parse('2025-01-01T00:00:00Z');
let simulator: AgentApiSimulator;
let client: AgentApiClient;
let jobCounter = 0;

/** A job that exists only for the calling test. */
function freshJob(overrides: Partial<Parameters<AgentApiSimulator['addJob']>[0]> = {}): JobRef {
  jobCounter += 1;
  const ref = { projectId: `proj-http-${jobCounter}`, jobId: `job-http-${jobCounter}` };
  simulator.addJob({ ...ref, ...overrides });
  return { projectId: overrides.projectId ?? ref.projectId, jobId: overrides.jobId ?? ref.jobId };
}

function clientFor(baseUrl: string, overrides: { apiKey?: string; requestTimeoutMs?: number } = {}): AgentApiClient {
  return new AgentApiClient({ baseUrl, apiKey: API_KEY, requestTimeoutMs: 2_000, ...overrides });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

beforeAll(async () => {
  simulator = await AgentApiSimulator.start({ apiKey: API_KEY, defaultWorkMs: WORK_MS, now: () => clock });
  client = clientFor(simulator.baseUrl);
});

afterAll(async () => {
  await simulator.close();
});

describe('encodePathSegment and buildUrl', () => {
  test('each id becomes one encoded path segment of the send path', () => {
    expect(buildUrl('https://api.example.com', DEFAULT_SEND_PATH, { projectId: 'p 1', jobId: 'a/b' })).toBe(
      'https://api.example.com/v2/agent/p%201/job/a%2Fb/message',
    );
  });

  test('trailing slashes of the base URL are dropped and its path prefix is kept', () => {
    expect(
      buildUrl('https://proxy.example.com/agent-api//', DEFAULT_GET_JOB_PATH, { projectId: 'p', jobId: 'j' }),
    ).toBe('https://proxy.example.com/agent-api/v2/agent/p/job/j');
  });

  test('a template without a leading slash still gets one', () => {
    expect(buildUrl('https://api.example.com', 'v3/{projectId}/{id}', { projectId: 'p', jobId: 'j' })).toBe(
      'https://api.example.com/v3/p/j',
    );
  });

  test('query, fragment, percent and dot characters in ids cannot change the parsed path', () => {
    const url = new URL(
      buildUrl('https://api.example.com', DEFAULT_GET_JOB_PATH, { projectId: '100%', jobId: '../x?y#z' }),
    );
    expect(url.pathname).toBe('/v2/agent/100%25/job/..%2Fx%3Fy%23z');
    expect(url.search).toBe('');
    expect(url.hash).toBe('');
  });

  test('dollar patterns in an id are inserted literally, not as replacement patterns', () => {
    expect(buildUrl('https://api.example.com', DEFAULT_GET_JOB_PATH, { projectId: "$&$'", jobId: '$`' })).toBe(
      "https://api.example.com/v2/agent/%24%26%24'/job/%24%60",
    );
  });

  test.each(['', '.', '..'])('the segment %j is refused with a non-retryable bad request', (value) => {
    let failure: unknown;
    try {
      encodePathSegment('jobId', value);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ApplicationFailure);
    const applicationFailure = failure as ApplicationFailure;
    expect(applicationFailure.type).toBe('AgentApiBadRequest');
    expect(applicationFailure.nonRetryable).toBe(true);
    expect(applicationFailure.message).toContain(`jobId ${JSON.stringify(value)} cannot be used in a URL path`);
  });

  test.each([
    ['projectId', { projectId: '..', jobId: 'j' }],
    ['jobId', { projectId: 'p', jobId: '.' }],
  ])('buildUrl refuses a dot segment in %s and names it', (name, ref) => {
    expect(() => buildUrl('https://api.example.com', DEFAULT_SEND_PATH, ref)).toThrow(`${name} "`);
  });

  test('three dots are an ordinary segment, not a parent-directory step', () => {
    expect(encodePathSegment('jobId', '...')).toBe('...');
  });
});

describe('AgentApiClient.sendFollowUpMessage', () => {
  test('a follow-up makes the job active with a null prLink and is counted once with its prompt', async () => {
    const ref = freshJob({ prLink: 'https://github.com/acme/docs/pull/1' });
    const result = await client.sendFollowUpMessage({ ...ref, prompt: 'Also fix the broken link.' });
    expect(result.responseProblem).toBeUndefined();
    expect(result.job).toMatchObject({ id: ref.jobId, status: 'active', prLink: null });
    const counts = simulator.counts(ref.projectId, ref.jobId);
    expect(counts.messagesAccepted).toBe(1);
    expect(counts.messagesRejected).toBe(0);
    expect(counts.prompts).toEqual(['Also fix the broken link.']);
  });

  test('an empty prompt is refused by the API as a non-retryable bad request and nothing is accepted', async () => {
    const ref = freshJob();
    const failure = await failureOf(client.sendFollowUpMessage({ ...ref, prompt: '' }));
    expect(failure.type).toBe('AgentApiBadRequest');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('HTTP 400');
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ messagesAccepted: 0, messagesRejected: 1 });
  });

  test('a 200 answer whose body breaks the contract resolves with no job and names the bad field', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'send', status: 200, body: '{"id":1}' }]);
    const result = await client.sendFollowUpMessage({ ...ref, prompt: 'Rename the page.' });
    expect(result.job).toBeNull();
    expect(result.responseProblem).toMatch(/^field 'id': /);
    // The simulator answers a fault instead of processing the request, so it records no accepted message.
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      messagesAccepted: 0,
      messagesRejected: 1,
      prompts: [],
    });
    expect(simulator.job(ref.projectId, ref.jobId).status).toBe('completed');
  });

  test('a 200 answer that is not JSON resolves with no job and says so', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'send', status: 200, body: '<html>ok</html>' }]);
    const result = await client.sendFollowUpMessage({ ...ref, prompt: 'Rename the page.' });
    expect(result).toEqual({ job: null, responseProblem: 'the body is not valid JSON' });
  });

  test('a rate-limited send is retryable after the delay the API asked for', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'send', status: 429, retryAfter: '12' }]);
    const failure = await failureOf(client.sendFollowUpMessage({ ...ref, prompt: 'Try again.' }));
    expect(failure.type).toBe('AgentApiRateLimited');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(12_000);
  });

  test('a dot-segment job id is refused before any request is made', async () => {
    const failure = await failureOf(client.sendFollowUpMessage({ projectId: 'p', jobId: '..', prompt: 'x' }));
    expect(failure.type).toBe('AgentApiBadRequest');
    expect(failure.nonRetryable).toBe(true);
  });
});

describe('AgentApiClient.getAgentJob', () => {
  test('the job stays active until the work time has passed', async () => {
    const ref = freshJob();
    await client.sendFollowUpMessage({ ...ref, prompt: 'Add an example.' });
    clock += WORK_MS - 1;
    expect(await client.getAgentJob(ref)).toMatchObject({ status: 'active', prLink: null });
  });

  test('after the work time the job is completed with a pull request link', async () => {
    const ref = freshJob();
    await client.sendFollowUpMessage({ ...ref, prompt: 'Add an example.' });
    clock += WORK_MS;
    const job = await client.getAgentJob(ref);
    expect(job.status).toBe('completed');
    expect(job.prLink).toBe(`https://github.com/acme/${ref.projectId}/pull/101`);
    expect(simulator.counts(ref.projectId, ref.jobId).gets).toBe(1);
  });

  test('a job id with a slash reaches that job, not another path', async () => {
    const ref = freshJob({ jobId: `a/b-${jobCounter + 1}` });
    const job = await client.getAgentJob(ref);
    expect(job.id).toBe(ref.jobId);
    const result = await client.sendFollowUpMessage({ ...ref, prompt: 'Slash test.' });
    expect(result.job?.id).toBe(ref.jobId);
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ gets: 1, messagesAccepted: 1 });
  });

  test('a job id that starts with "../" is not folded into a parent path', async () => {
    const ref = freshJob({ jobId: `../job-dots-${jobCounter + 1}` });
    expect((await client.getAgentJob(ref)).id).toBe(ref.jobId);
  });

  test('a project id with a percent sign reaches the right project', async () => {
    const ref = freshJob({ projectId: `proj-100%-${jobCounter + 1}` });
    const job = await client.getAgentJob(ref);
    expect(job.id).toBe(ref.jobId);
    expect(job.source?.repository).toBe(`https://github.com/acme/${ref.projectId}`);
  });

  test('a project id holding an already-encoded slash is sent literally, not decoded', async () => {
    const ref = freshJob({ projectId: `proj%2Fliteral-${jobCounter + 1}` });
    expect((await client.getAgentJob(ref)).source?.repository).toBe(`https://github.com/acme/${ref.projectId}`);
  });

  test('a status the vendor does not list reaches the caller unchanged; undocumented fields are left out', async () => {
    const ref = freshJob({ extraFields: { status: 'paused', title: 'Docs refresh' } });
    const job = await client.getAgentJob(ref);
    expect(job.status).toBe('paused');
    expect('title' in job).toBe(false);
  });

  test("another job's body breaks the contract: the id must be the job asked for", async () => {
    const ref = freshJob();
    const other = { ...simulator.job(ref.projectId, ref.jobId), id: 'someone-else' };
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 200, body: JSON.stringify(other) }]);
    const failure = await failureOf(client.getAgentJob(ref));
    expect(failure.type).toBe('AgentApiInvalidResponse');
    expect(failure.message).toContain("another job's id");
  });

  test('an unknown job is a non-retryable job-not-found failure', async () => {
    const failure = await failureOf(client.getAgentJob({ projectId: 'proj-missing', jobId: 'job-missing' }));
    expect(failure.type).toBe('AgentJobNotFound');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain("project 'proj-missing', job 'job-missing'");
  });

  test('a wrong key is a non-retryable unauthorized failure whose message does not contain the key', async () => {
    const ref = freshJob();
    const failure = await failureOf(clientFor(simulator.baseUrl, { apiKey: OTHER_KEY }).getAgentJob(ref));
    expect(failure.type).toBe('AgentApiUnauthorized');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('HTTP 401');
    expect(failure.message).not.toContain(OTHER_KEY);
    expect(failure.message).not.toContain('test_unit_key_0002');
    expect(simulator.counts(ref.projectId, ref.jobId).gets).toBe(0);
  });

  test('a 429 with Retry-After 7 is retryable after 7000 ms', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 429, retryAfter: '7' }]);
    const failure = await failureOf(client.getAgentJob(ref));
    expect(failure.type).toBe('AgentApiRateLimited');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(7_000);
    // The fault answered one request only; the next read goes through.
    expect((await client.getAgentJob(ref)).id).toBe(ref.jobId);
  });

  test('a 503 is a retryable server error', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 503 }]);
    const failure = await failureOf(client.getAgentJob(ref));
    expect(failure.type).toBe('AgentApiServerError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('HTTP 503');
  });

  test('a 200 body that breaks the contract is a retryable invalid-response failure naming the field', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 200, body: '{"id":1}' }]);
    const failure = await failureOf(client.getAgentJob(ref));
    expect(failure.type).toBe('AgentApiInvalidResponse');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain("field 'id'");
    expect(failure.message).toContain(`job '${ref.jobId}'`);
  });

  test("the vendor's error body is quoted by its message, and a key it echoes is redacted", async () => {
    const ref = freshJob();
    const body = JSON.stringify({ error: `key ${API_KEY} is revoked; secret ${API_SECRET} unknown` });
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 403, body }]);
    const failure = await failureOf(client.getAgentJob(ref));
    expect(failure.type).toBe('AgentApiForbidden');
    expect(failure.message).toContain('The API said: key [REDACTED] is revoked; secret [REDACTED] unknown');
    expect(failure.message).not.toContain('{"error"');
    expect(failure.message).not.toContain(API_SECRET);
  });

  test('an error body of another shape is quoted as an excerpt, redacted too', async () => {
    const ref = freshJob();
    const body = `<html>gateway says: secret ${API_SECRET} unknown</html>`;
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 403, body }]);
    const failure = await failureOf(client.getAgentJob(ref));
    expect(failure.message).toContain('secret [REDACTED] unknown');
    expect(failure.message).not.toContain(API_SECRET);
  });

  test('a send cut off mid-request by cancellation or a stopping worker is ambiguous, never "not delivered"', async () => {
    const controller = new AbortController();
    const server = createServer(() => controller.abort(new Error('WORKER_SHUTDOWN')));
    try {
      const baseUrl = await listen(server);
      const failure = await failureOf(
        clientFor(baseUrl).sendFollowUpMessage({ projectId: 'p', jobId: 'j', prompt: 'x' }, controller.signal),
      );
      expect(failure.type).toBe('AgentApiSendAmbiguous');
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toContain('the worker is shutting down');
    } finally {
      await closeServer(server);
    }
  });

  test('a closed port is a retryable network failure', async () => {
    const server = createServer();
    const baseUrl = await listen(server);
    await closeServer(server);
    const failure = await failureOf(clientFor(baseUrl).getAgentJob({ projectId: 'p', jobId: 'j' }));
    expect(failure.type).toBe('AgentApiNetworkError');
    expect(failure.nonRetryable).toBe(false);
    // undici's errors come from another realm under jest; the cause's code must still reach the message.
    expect(failure.message).toContain('ECONNREFUSED');
    expect(failure.message).toContain("Could not reach the agent API for get job for project 'p', job 'j'");
    expect(failure.message).toContain('check AGENT_API_BASE_URL');
  });

  test('a server that never answers is a retryable request timeout', async () => {
    const server = createServer(() => {
      // Never answers: the client's own timeout must end the request.
    });
    try {
      const baseUrl = await listen(server);
      const failure = await failureOf(
        clientFor(baseUrl, { requestTimeoutMs: 100 }).getAgentJob({ projectId: 'p', jobId: 'j' }),
      );
      expect(failure.type).toBe('AgentApiRequestTimeout');
      expect(failure.nonRetryable).toBe(false);
      expect(failure.message).toContain('within 100ms');
    } finally {
      await closeServer(server);
    }
  });

  test('an already-aborted signal rejects with its reason, not an ApplicationFailure, and sends nothing', async () => {
    const ref = freshJob();
    const controller = new AbortController();
    const reason = new Error('activity cancelled by the test');
    controller.abort(reason);
    await expect(client.getAgentJob(ref, controller.signal)).rejects.toBe(reason);
    await expect(client.sendFollowUpMessage({ ...ref, prompt: 'x' }, controller.signal)).rejects.toBe(reason);
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      gets: 0,
      messagesAccepted: 0,
      messagesRejected: 0,
    });
  });

  test("a finished request leaves nothing attached to the caller's signal (a polling loop reuses one for hours)", async () => {
    const ref = freshJob();
    const controller = new AbortController();
    await client.getAgentJob(ref, controller.signal);
    await expect(client.getAgentJob({ ...ref, jobId: 'no-such-job' }, controller.signal)).rejects.toBeDefined();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  test('a signal aborted while the request is in flight rejects with its reason, not a timeout', async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled mid-request');
    const server = createServer(() => controller.abort(reason));
    try {
      const baseUrl = await listen(server);
      await expect(clientFor(baseUrl).getAgentJob({ projectId: 'p', jobId: 'j' }, controller.signal)).rejects.toBe(
        reason,
      );
    } finally {
      await closeServer(server);
    }
  });
});
