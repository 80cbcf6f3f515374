/** The simulator's own behaviour, over real loopback HTTP, with an injected clock instead of sleeps. */
import { AgentApiClient, type JobRef } from '../../src/agent-api/http-client';
import { AgentApiSimulator, type SimulatedJobSpec } from '../../src/simulator/simulator';
import { failureOf } from '../support/failures';

const API_KEY = 'mint_test_unit_key_0001';
const WORK_MS = 50;

let clock = Date.parse('2025-06-01T08:00:00Z');
let simulator: AgentApiSimulator;
let client: AgentApiClient;
let jobCounter = 0;

function freshJob(overrides: Partial<SimulatedJobSpec> = {}): JobRef {
  jobCounter += 1;
  const ref = { projectId: `proj-sim-${jobCounter}`, jobId: `job-sim-${jobCounter}` };
  simulator.addJob({ ...ref, ...overrides });
  return ref;
}

function jobUrl(ref: JobRef, suffix = ''): string {
  return `${simulator.baseUrl}/v2/agent/${encodeURIComponent(ref.projectId)}/job/${encodeURIComponent(ref.jobId)}${suffix}`;
}

/** A raw POST of the message endpoint, for requests the client would never send. */
async function postMessage(ref: JobRef, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(jobUrl(ref, '/message'), {
    method: 'POST',
    body,
    headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json', ...headers },
  });
}

beforeAll(async () => {
  simulator = await AgentApiSimulator.start({ apiKey: API_KEY, defaultWorkMs: WORK_MS, now: () => clock });
  client = new AgentApiClient({ baseUrl: simulator.baseUrl, apiKey: API_KEY, requestTimeoutMs: 2_000 });
});

afterAll(async () => {
  await simulator.close();
});

describe('AgentApiSimulator requests', () => {
  test('a request without an Authorization header is refused with 401 and not counted as a read', async () => {
    const ref = freshJob();
    const response = await fetch(jobUrl(ref));
    expect(response.status).toBe(401);
    // The vendor's error body: one human-readable message, no codes.
    expect(await response.json()).toEqual({ error: 'missing Authorization header' });
    expect(simulator.counts(ref.projectId, ref.jobId).gets).toBe(0);
  });

  test('an Authorization header that is not a bearer token is refused with 401', async () => {
    const ref = freshJob();
    const response = await fetch(jobUrl(ref), { headers: { Authorization: `Token ${API_KEY}` } });
    expect(response.status).toBe(401);
  });

  test("the vendor's non-admin key kinds are refused with 401 as its agent endpoints do, unless leniency is asked for", async () => {
    const strict = await AgentApiSimulator.start({ defaultWorkMs: WORK_MS });
    const lenient = await AgentApiSimulator.start({ defaultWorkMs: WORK_MS, acceptNonAdminKeys: true });
    try {
      const ref = freshJob();
      for (const sim of [strict, lenient]) sim.addJob(ref);
      const read = (sim: AgentApiSimulator, key: string) =>
        fetch(`${sim.baseUrl}/v2/agent/${ref.projectId}/job/${ref.jobId}`, {
          headers: { Authorization: `Bearer ${key}` },
        });
      const assistant = await read(strict, 'mint_dsc_assistant-key-1234');
      expect(assistant.status).toBe(401);
      expect(((await assistant.json()) as { error: string }).error).toBe(
        'this is an assistant key (mint_dsc_...); the agent endpoints take an admin key (mint_...)',
      );
      expect((await read(strict, 'mint_us_search-key-12345')).status).toBe(401);
      expect((await read(strict, 'mint_admin-key-12345')).status).toBe(200);
      expect((await read(lenient, 'mint_dsc_assistant-key-1234')).status).toBe(200);
    } finally {
      await Promise.all([strict.close(), lenient.close()]);
    }
  });

  test('an empty prompt is refused with 400, naming the prompt, and counted as rejected', async () => {
    const ref = freshJob();
    const response = await postMessage(ref, JSON.stringify({ prompt: '' }));
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/^field 'prompt'/);
    expect(simulator.counts(ref.projectId, ref.jobId)).toEqual({
      posts: 1,
      messagesAccepted: 0,
      messagesRejected: 1,
      rateLimited: 0,
      duplicatesSuppressed: 0,
      dropped: 0,
      gets: 0,
      changedReads: 0,
      prompts: [],
      statusesAtSend: [],
      acceptedAtMs: [],
      idempotencyKeys: [],
    });
    expect(simulator.job(ref.projectId, ref.jobId).status).toBe('completed');
  });

  test('a body that is not JSON is refused with 400 and counted as rejected', async () => {
    const ref = freshJob();
    expect((await postMessage(ref, 'prompt=hello')).status).toBe(400);
    expect(simulator.counts(ref.projectId, ref.jobId).messagesRejected).toBe(1);
  });

  test('a message with fields besides prompt is refused with 400', async () => {
    const ref = freshJob();
    expect((await postMessage(ref, JSON.stringify({ prompt: 'x', model: 'other' }))).status).toBe(400);
  });

  test('a message that is not sent as JSON is refused with 415', async () => {
    const ref = freshJob();
    const response = await postMessage(ref, JSON.stringify({ prompt: 'x' }), { 'Content-Type': 'text/plain' });
    expect(response.status).toBe(415);
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ messagesAccepted: 0, messagesRejected: 1 });
  });

  test('paths outside the two operations are answered with 404', async () => {
    const ref = freshJob();
    const headers = { Authorization: `Bearer ${API_KEY}` };
    expect((await fetch(`${simulator.baseUrl}/v2/agent/${ref.projectId}`, { headers })).status).toBe(404);
    expect((await fetch(jobUrl(ref, '/message'), { headers })).status).toBe(404);
    expect((await fetch(jobUrl(ref), { method: 'DELETE', headers })).status).toBe(404);
    expect(simulator.counts(ref.projectId, ref.jobId).gets).toBe(0);
  });
});

describe('AgentApiSimulator job states', () => {
  test('an archived job stays archived after a follow-up, though the message is recorded', async () => {
    const ref = freshJob({ status: 'archived' });
    const archivedAt = simulator.job(ref.projectId, ref.jobId).archivedAt;
    expect(archivedAt).toEqual(expect.any(String));
    const result = await client.sendFollowUpMessage({ ...ref, prompt: 'Wake up.' });
    expect(result.job).toMatchObject({ status: 'archived', archivedAt });
    clock += WORK_MS * 10;
    expect(await client.getAgentJob(ref)).toMatchObject({ status: 'archived', archivedAt });
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ messagesAccepted: 1, prompts: ['Wake up.'] });
  });

  test('the no-changes outcome ends completed with a null prLink', async () => {
    const ref = freshJob({ outcome: 'no-changes', prLink: 'https://github.com/acme/docs/pull/5' });
    await client.sendFollowUpMessage({ ...ref, prompt: 'Nothing to do.' });
    clock += WORK_MS;
    expect(await client.getAgentJob(ref)).toMatchObject({ status: 'completed', prLink: null });
  });

  test('the failed outcome ends failed with a null prLink', async () => {
    const ref = freshJob({ outcome: 'failed' });
    await client.sendFollowUpMessage({ ...ref, prompt: 'Break.' });
    clock += WORK_MS;
    expect(await client.getAgentJob(ref)).toMatchObject({ status: 'failed', prLink: null });
  });

  test('the archived outcome ends archived, stamped with the time the work ended', async () => {
    const ref = freshJob({ outcome: 'archived' });
    await client.sendFollowUpMessage({ ...ref, prompt: 'Archive me.' });
    clock += WORK_MS;
    expect(await client.getAgentJob(ref)).toMatchObject({
      status: 'archived',
      archivedAt: new Date(clock).toISOString(),
    });
  });

  test('each completed follow-up opens a new pull request', async () => {
    const ref = freshJob();
    await client.sendFollowUpMessage({ ...ref, prompt: 'First.' });
    clock += WORK_MS;
    expect((await client.getAgentJob(ref)).prLink).toBe(`https://github.com/acme/${ref.projectId}/pull/101`);
    await client.sendFollowUpMessage({ ...ref, prompt: 'Second.' });
    clock += WORK_MS;
    expect((await client.getAgentJob(ref)).prLink).toBe(`https://github.com/acme/${ref.projectId}/pull/102`);
    expect(simulator.counts(ref.projectId, ref.jobId).prompts).toEqual(['First.', 'Second.']);
  });

  test('a job finished by hand can be given a pull request link of its own; other outcomes ignore it', async () => {
    const ref = freshJob();
    await client.sendFollowUpMessage({ ...ref, prompt: 'Done now.' });
    expect(simulator.finishJob(ref.projectId, ref.jobId, { prLink: 'https://github.com/acme/own/pull/7' }).prLink).toBe(
      'https://github.com/acme/own/pull/7',
    );
    expect((await client.getAgentJob(ref)).prLink).toBe('https://github.com/acme/own/pull/7');
    const failing = freshJob({ outcome: 'failed' });
    await client.sendFollowUpMessage({ ...failing, prompt: 'Fail now.' });
    expect(
      simulator.finishJob(failing.projectId, failing.jobId, { prLink: 'https://github.com/acme/own/pull/8' }),
    ).toMatchObject({ status: 'failed', prLink: null });
  });

  test("a job's own work time overrides the simulator's default", async () => {
    const ref = freshJob({ workMs: 10_000 });
    await client.sendFollowUpMessage({ ...ref, prompt: 'Slow work.' });
    clock += WORK_MS;
    expect((await client.getAgentJob(ref)).status).toBe('active');
    clock += 10_000;
    expect((await client.getAgentJob(ref)).status).toBe('completed');
  });

  test('a job added with an active status and no follow-up stays active', async () => {
    const ref = freshJob({ status: 'active' });
    clock += 60_000;
    expect((await client.getAgentJob(ref)).status).toBe('active');
  });

  test('the job returned by addJob is a copy the test cannot use to change the simulator', () => {
    jobCounter += 1;
    const added = simulator.addJob({ projectId: `proj-copy-${jobCounter}`, jobId: `job-copy-${jobCounter}` });
    added.status = 'failed';
    expect(simulator.job(`proj-copy-${jobCounter}`, `job-copy-${jobCounter}`).status).toBe('completed');
  });
});

describe('AgentApiSimulator faults', () => {
  test('a fault with times 2 answers two requests, then requests are processed again', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 500, times: 2 }]);
    expect((await failureOf(client.getAgentJob(ref))).type).toBe('AgentApiServerError');
    expect((await failureOf(client.getAgentJob(ref))).type).toBe('AgentApiServerError');
    expect((await client.getAgentJob(ref)).id).toBe(ref.jobId);
    expect(simulator.counts(ref.projectId, ref.jobId).gets).toBe(3);
  });

  test('a fault for reads does not touch sends', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 503 }]);
    const result = await client.sendFollowUpMessage({ ...ref, prompt: 'Go.' });
    expect(result.job?.status).toBe('active');
    expect((await failureOf(client.getAgentJob(ref))).type).toBe('AgentApiServerError');
  });

  test('a send fault replaces the request, which is counted as rejected and starts no work', async () => {
    const ref = freshJob();
    simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'send', status: 500 }]);
    // Raw HTTP: how the client classifies a failed send is the client's business, not the simulator's.
    expect((await postMessage(ref, JSON.stringify({ prompt: 'Go.' }))).status).toBe(500);
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      messagesAccepted: 0,
      messagesRejected: 1,
      prompts: [],
    });
    expect(simulator.job(ref.projectId, ref.jobId).status).toBe('completed');
  });
});

describe('AgentApiSimulator rate limit', () => {
  test('sends over the hourly limit get 429 without Retry-After (the vendor documents none), then pass again an hour later', async () => {
    let limitedClock = Date.parse('2025-06-01T09:00:00Z');
    const limited = await AgentApiSimulator.start({
      apiKey: API_KEY,
      sendsPerProjectPerHour: 1,
      now: () => limitedClock,
    });
    try {
      const limitedClient = new AgentApiClient({ baseUrl: limited.baseUrl, apiKey: API_KEY, requestTimeoutMs: 2_000 });
      const first = { projectId: 'proj-limited', jobId: 'job-limited-1' };
      const second = { projectId: 'proj-limited', jobId: 'job-limited-2' };
      limited.addJob(first);
      limited.addJob(second);
      await limitedClient.sendFollowUpMessage({ ...first, prompt: 'One.' });
      limitedClock += 600_000;
      const failure = await failureOf(limitedClient.sendFollowUpMessage({ ...second, prompt: 'Two.' }));
      expect(failure.type).toBe('AgentApiRateLimited');
      expect(failure.nextRetryDelay).toBeUndefined();
      expect(limited.counts(second.projectId, second.jobId)).toMatchObject({
        messagesAccepted: 0,
        messagesRejected: 1,
      });
      limitedClock += 3_000_000;
      expect((await limitedClient.sendFollowUpMessage({ ...second, prompt: 'Two.' })).job?.status).toBe('active');
    } finally {
      await limited.close();
    }
  });
});

test("uses made elsewhere (POST /_simulator/projects/{p}/outside-uses) fill the project's window like sends: ours then get 429 until they age out", async () => {
  let windowClock = Date.parse('2025-06-01T09:00:00Z');
  const limited = await AgentApiSimulator.start({ apiKey: API_KEY, sendsPerProjectPerHour: 3, now: () => windowClock });
  try {
    const client = new AgentApiClient({ baseUrl: limited.baseUrl, apiKey: API_KEY, requestTimeoutMs: 2_000 });
    const ref = { projectId: 'proj-shared', jobId: 'job-shared' };
    limited.addJob({ ...ref, workMs: 0 });
    const control = await fetch(`${limited.baseUrl}/_simulator/projects/proj-shared/outside-uses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ count: 2 }),
    });
    expect(control.status).toBe(204);
    const refusedBody = await fetch(`${limited.baseUrl}/_simulator/projects/proj-shared/outside-uses`, {
      method: 'POST',
      body: JSON.stringify({ count: 0 }),
    });
    expect(refusedBody.status).toBe(400);
    await client.sendFollowUpMessage({ ...ref, prompt: 'One.' });
    windowClock += 1_000;
    expect((await failureOf(client.sendFollowUpMessage({ ...ref, prompt: 'Two.' }))).type).toBe('AgentApiRateLimited');
    windowClock += 3_600_000;
    expect((await client.sendFollowUpMessage({ ...ref, prompt: 'Two.' })).job?.status).toBe('active');
  } finally {
    await limited.close();
  }
});

describe('AgentApiSimulator keys', () => {
  test('without a configured key, any key of the documented form is accepted and others are refused', async () => {
    const open = await AgentApiSimulator.start({ defaultWorkMs: WORK_MS, now: () => clock });
    try {
      open.addJob({ projectId: 'proj-open', jobId: 'job-open' });
      const ref = { projectId: 'proj-open', jobId: 'job-open' };
      const anyKey = new AgentApiClient({
        baseUrl: open.baseUrl,
        apiKey: 'mint_test_unit_key_0003',
        requestTimeoutMs: 2_000,
      });
      expect((await anyKey.getAgentJob(ref)).id).toBe('job-open');
      const shortKey = new AgentApiClient({ baseUrl: open.baseUrl, apiKey: 'mint_short', requestTimeoutMs: 2_000 });
      expect((await failureOf(shortKey.getAgentJob(ref))).type).toBe('AgentApiUnauthorized');
      const otherPrefix = new AgentApiClient({
        baseUrl: open.baseUrl,
        apiKey: 'sk_test_unit_key_0003',
        requestTimeoutMs: 2_000,
      });
      expect((await failureOf(otherPrefix.getAgentJob(ref))).type).toBe('AgentApiUnauthorized');
    } finally {
      await open.close();
    }
  });

  test('asking for the base URL of a simulator that is not listening is an error', () => {
    expect(() => new AgentApiSimulator().baseUrl).toThrow('the simulator is not listening');
  });
});

describe('AgentApiSimulator control routes', () => {
  test('the health route answers ok without a key', async () => {
    const response = await fetch(`${simulator.baseUrl}/_simulator/health`);
    expect(await response.json()).toEqual({ ok: true });
  });

  test('jobs and faults can be set up over HTTP and the job read back with its counts', async () => {
    jobCounter += 1;
    const ref = { projectId: `proj-ctl-${jobCounter}`, jobId: `ctl/${jobCounter}` };
    const created = await fetch(`${simulator.baseUrl}/_simulator/jobs`, {
      method: 'POST',
      body: JSON.stringify({ ...ref, status: 'active' }),
    });
    expect(created.status).toBe(201);
    const controlUrl = `${simulator.baseUrl}/_simulator/jobs/${encodeURIComponent(ref.projectId)}/${encodeURIComponent(ref.jobId)}`;
    const faults = await fetch(`${controlUrl}/faults`, {
      method: 'POST',
      body: JSON.stringify([{ operation: 'get', status: 502 }]),
    });
    expect(faults.status).toBe(204);
    expect((await failureOf(client.getAgentJob(ref))).type).toBe('AgentApiServerError');
    const state = (await (await fetch(controlUrl)).json()) as {
      job: { id: string; status: string };
      counts: { gets: number };
    };
    expect(state.job).toMatchObject({ id: ref.jobId, status: 'active' });
    expect(state.counts.gets).toBe(1);
  });

  test('faults for a job the simulator does not know are refused with 400', async () => {
    const response = await fetch(`${simulator.baseUrl}/_simulator/jobs/nope/nope/faults`, {
      method: 'POST',
      body: '[]',
    });
    expect(response.status).toBe(400);
  });
});
