/**
 * The simulator's fault rules, Idempotency-Key handling, error echoing and control routes, over real loopback HTTP.
 * Time that matters to the job is an injected clock; real timers are used only for short latency faults.
 */
import { AgentJobSchema } from '../../src/agent-api/schemas';
import {
  AgentApiSimulator,
  MALFORMED_JOB_BODY,
  type FaultRule,
  type SimulatedJobSpec,
  type SimulatorOptions,
} from '../../src/simulator/simulator';

const API_KEY = 'mint_test_sim_key_0001';
const WORK_MS = 50;

interface Ref {
  projectId: string;
  jobId: string;
}

let clock = Date.parse('2025-07-01T08:00:00Z');
let simulator: AgentApiSimulator;
let jobCounter = 0;
const extraSimulators: AgentApiSimulator[] = [];

beforeAll(async () => {
  simulator = await AgentApiSimulator.start({
    apiKey: API_KEY,
    defaultWorkMs: WORK_MS,
    now: () => clock,
    honourIdempotencyKey: true,
  });
});

afterAll(async () => {
  await Promise.all([simulator, ...extraSimulators].map((running) => running.close()));
});

/** A simulator of the test's own, for options or global rules that must not leak into other tests. */
async function ownSimulator(options: SimulatorOptions = {}): Promise<AgentApiSimulator> {
  const own = await AgentApiSimulator.start({
    apiKey: API_KEY,
    defaultWorkMs: WORK_MS,
    now: () => clock,
    honourIdempotencyKey: true,
    ...options,
  });
  extraSimulators.push(own);
  return own;
}

function freshJob(overrides: Partial<SimulatedJobSpec> = {}, on: AgentApiSimulator = simulator): Ref {
  jobCounter += 1;
  const ref = { projectId: `proj-fault-${jobCounter}`, jobId: `job-fault-${jobCounter}` };
  on.addJob({ ...ref, ...overrides });
  return ref;
}

function jobUrl(ref: Ref, on: AgentApiSimulator = simulator, suffix = ''): string {
  return `${on.baseUrl}/v2/agent/${encodeURIComponent(ref.projectId)}/job/${encodeURIComponent(ref.jobId)}${suffix}`;
}

async function getJob(ref: Ref, on: AgentApiSimulator = simulator, init: RequestInit = {}): Promise<Response> {
  return fetch(jobUrl(ref, on), { headers: { Authorization: `Bearer ${API_KEY}` }, ...init });
}

interface SendOptions {
  on?: AgentApiSimulator;
  idempotencyKey?: string;
  body?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

async function send(ref: Ref, prompt: string, options: SendOptions = {}): Promise<Response> {
  return fetch(jobUrl(ref, options.on, '/message'), {
    method: 'POST',
    body: options.body ?? JSON.stringify({ prompt }),
    signal: options.signal,
    headers: {
      Authorization: `Bearer ${API_KEY}`,
      'Content-Type': 'application/json',
      ...(options.idempotencyKey !== undefined ? { 'Idempotency-Key': options.idempotencyKey } : {}),
      ...options.headers,
    },
  });
}

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

async function postControl(path: string, body: unknown, on: AgentApiSimulator = simulator): Promise<Response> {
  return fetch(`${on.baseUrl}/_simulator/${path}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Polls a condition with a deadline, for effects that happen on the server after the client stopped listening. */
async function waitFor(condition: () => boolean, what: string, deadlineMs = 2_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('status faults', () => {
  test('a status rule on sends answers its status and Retry-After without accepting the message', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'status', status: 503, retryAfter: '7' }] });
    const response = await send(ref, 'Try me.');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await json(response)).toEqual({ error: 'injected 503' });
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      messagesAccepted: 0,
      messagesRejected: 1,
      prompts: [],
    });
    expect(simulator.job(ref.projectId, ref.jobId).status).toBe('completed');
  });

  test('a status rule on reads answers its status and leaves sends alone', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'status', status: 500 }] });
    expect((await getJob(ref)).status).toBe(500);
    expect((await send(ref, 'Go.')).status).toBe(200);
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ gets: 1, messagesAccepted: 1 });
  });
});

describe('latency faults', () => {
  test('a request held by a latency rule is then processed normally', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'latency', latencyMs: 20 }] });
    const response = await send(ref, 'Slowly.');
    expect(response.status).toBe(200);
    expect((await json(response)).status).toBe('active');
    expect(simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(1);
  });

  test('a send held by a latency rule is processed even though the client gave up waiting', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'latency', latencyMs: 100 }] });
    const controller = new AbortController();
    const sending = send(ref, 'Are you there?', { idempotencyKey: 'abandoned-1', signal: controller.signal });
    await waitFor(
      () => simulator.counts(ref.projectId, ref.jobId).idempotencyKeys.length === 1,
      'the request to arrive',
    );
    controller.abort();
    await expect(sending).rejects.toThrow();
    await waitFor(
      () => simulator.counts(ref.projectId, ref.jobId).messagesAccepted === 1,
      'the held send to be processed',
    );
    expect(simulator.job(ref.projectId, ref.jobId).status).toBe('active');
  });

  test('after a latency rule the request goes on to the next rule', async () => {
    const ref = freshJob({
      faults: [
        { operation: 'any', kind: 'latency', latencyMs: 10 },
        { operation: 'get', kind: 'status', status: 502 },
      ],
    });
    expect((await getJob(ref)).status).toBe(502);
  });

  test('closing the simulator abandons a request held by a latency rule instead of waiting for it', async () => {
    const own = await ownSimulator();
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'latency', latencyMs: 600_000 }] }, own);
    const reading = getJob(ref, own);
    await waitFor(() => own.counts(ref.projectId, ref.jobId).gets === 1, 'the read to arrive');
    await own.close();
    await expect(reading).rejects.toThrow();
  }, 5_000);
});

describe('dropped connections', () => {
  test('drop-before-processing destroys the connection and the send is not accepted', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'drop-before-processing' }] });
    await expect(send(ref, 'Lost on the way.')).rejects.toThrow();
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      messagesAccepted: 0,
      messagesRejected: 0,
      dropped: 1,
      prompts: [],
    });
    expect(simulator.job(ref.projectId, ref.jobId).status).toBe('completed');
  });

  test('drop-after-processing accepts the send, then destroys the connection without an answer', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'drop-after-processing' }] });
    await expect(send(ref, 'Answer lost.')).rejects.toThrow();
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      messagesAccepted: 1,
      dropped: 1,
      prompts: ['Answer lost.'],
    });
    expect(simulator.job(ref.projectId, ref.jobId).status).toBe('active');
  });

  test('drop-after-processing on a read counts the read and gives no answer', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'drop-after-processing', times: 1 }] });
    await expect(getJob(ref)).rejects.toThrow();
    expect((await getJob(ref)).status).toBe(200);
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ gets: 2, dropped: 1 });
  });
});

describe('body faults', () => {
  test('malformed-body answers a read with 200 and a body that is not JSON', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'malformed-body' }] });
    const response = await getJob(ref);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toBe(MALFORMED_JOB_BODY);
    expect(() => JSON.parse(text) as unknown).toThrow(SyntaxError);
  });

  test('malformed-body on a send accepts the message, then answers 200 with a body that is not JSON', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'malformed-body' }] });
    const response = await send(ref, 'Garbled reply.');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(MALFORMED_JOB_BODY);
    expect(simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(1);
    expect(simulator.job(ref.projectId, ref.jobId).status).toBe('active');
  });

  test('invalid-schema answers a read with the job without its status', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'invalid-schema' }] });
    const body = await json(await getJob(ref));
    expect(body.id).toBe(ref.jobId);
    expect(body).not.toHaveProperty('status');
    expect(AgentJobSchema.safeParse(body).success).toBe(false);
  });

  test('invalid-schema on a send accepts the message and answers the job without its status', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'invalid-schema' }] });
    const response = await send(ref, 'Odd reply.');
    expect(response.status).toBe(200);
    expect(await json(response)).not.toHaveProperty('status');
    expect(simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(1);
  });

  test('a body fault leaves an error answer as it is, so a refused send never looks accepted', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'malformed-body' }] });
    const response = await send(ref, '');
    expect(response.status).toBe(400);
    expect(String((await json(response)).error)).toMatch(/^field 'prompt'/);
  });
});

describe('stale-terminal faults', () => {
  test('stale reads serve the job as it was before the last accepted follow-up, then the real state once used up', async () => {
    const oldPr = 'https://github.com/acme/stale/pull/7';
    const ref = freshJob({ prLink: oldPr, faults: [{ operation: 'get', kind: 'stale-terminal', times: 2 }] });
    // Before any follow-up there is no earlier state to serve, and the rule keeps its two stale reads for later.
    expect(await json(await getJob(ref))).toMatchObject({ status: 'completed', prLink: oldPr });
    expect((await json(await send(ref, 'Change it.'))).status).toBe('active');
    expect(await json(await getJob(ref))).toMatchObject({ status: 'completed', prLink: oldPr });
    clock += WORK_MS;
    expect(await json(await getJob(ref))).toMatchObject({ status: 'completed', prLink: oldPr });
    expect(await json(await getJob(ref))).toMatchObject({
      status: 'completed',
      prLink: `https://github.com/acme/${ref.projectId}/pull/101`,
    });
  });

  test('a stale-terminal rule for any operation leaves sends alone', async () => {
    const ref = freshJob({ faults: [{ operation: 'any', kind: 'stale-terminal', times: 1 }] });
    expect((await json(await send(ref, 'First.'))).status).toBe('active');
    expect((await json(await getJob(ref))).status).toBe('completed');
    expect((await json(await getJob(ref))).status).toBe('active');
  });
});

describe('rates, times and order', () => {
  test('a rule with rate 0 never fires', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'status', status: 503, rate: 0 }] });
    for (let i = 0; i < 20; i += 1) expect((await getJob(ref)).status).toBe(200);
  });

  test('a rule with rate 1 fires on every matching request', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'status', status: 503, rate: 1 }] });
    for (let i = 0; i < 20; i += 1) expect((await getJob(ref)).status).toBe(503);
  });

  test('a rule with times 3 fires three times, then requests are processed again', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'status', status: 503, times: 3 }] });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await getJob(ref)).status);
    expect(statuses).toEqual([503, 503, 503, 200, 200]);
  });

  test('a rule with every 3 is tried on every third request it matches, and times counts only those it fired on', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'status', status: 503, every: 3, times: 2 }] });
    const statuses: number[] = [];
    for (let i = 0; i < 9; i += 1) statuses.push((await getJob(ref)).status);
    expect(statuses).toEqual([200, 200, 503, 200, 200, 503, 200, 200, 200]);
  });

  test('a stale read every other read flaps the job, and each GET that shows it otherwise than the one before is a changed read', async () => {
    const oldPr = 'https://github.com/acme/flapping/pull/7';
    const ref = freshJob({ prLink: oldPr, faults: [{ operation: 'get', kind: 'stale-terminal', every: 2 }] });
    await getJob(ref);
    expect((await json(await send(ref, 'Flap.'))).status).toBe('active');
    const statuses: unknown[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await json(await getJob(ref))).status);
    // The stale rule counts reads from the send on: the first read after it is fresh, the second stale.
    expect(statuses).toEqual(['active', 'completed', 'active', 'completed']);
    // completed (before the send) -> active -> completed -> active -> completed: four changes.
    expect(simulator.counts(ref.projectId, ref.jobId).changedReads).toBe(4);
  });

  test('the same seed gives the same sequence of fired and not fired over 50 requests at rate 0.5', async () => {
    const sequence = async (seed: number): Promise<boolean[]> => {
      const own = await ownSimulator({ seed });
      const ref = freshJob({ faults: [{ operation: 'get', kind: 'status', status: 503, rate: 0.5 }] }, own);
      const fired: boolean[] = [];
      for (let i = 0; i < 50; i += 1) fired.push((await getJob(ref, own)).status === 503);
      return fired;
    };
    const first = await sequence(42);
    expect(await sequence(42)).toEqual(first);
    expect(first).toContain(true);
    expect(first).toContain(false);
    expect(await sequence(43)).not.toEqual(first);
  });

  test("a job's own rules are tried before the global ones, and a request gets one fault at most", async () => {
    const own = await ownSimulator();
    own.setGlobalFaults([{ operation: 'get', kind: 'status', status: 500 }]);
    const withRule = freshJob({ faults: [{ operation: 'get', kind: 'status', status: 502 }] }, own);
    const plain = freshJob({}, own);
    expect((await getJob(withRule, own)).status).toBe(502);
    expect((await getJob(plain, own)).status).toBe(500);
    own.setGlobalFaults([]);
    expect((await getJob(plain, own)).status).toBe(200);
  });

  test('rules are copied, so the caller changing its array afterwards changes nothing', async () => {
    const rules: FaultRule[] = [{ operation: 'get', kind: 'status', status: 503, times: 1 }];
    const ref = freshJob();
    simulator.setJobFaults(ref.projectId, ref.jobId, rules);
    const [rule] = rules;
    if (rule) rule.times = 100;
    expect((await getJob(ref)).status).toBe(503);
    expect((await getJob(ref)).status).toBe(200);
    expect(rule?.times).toBe(100);
  });

  test('invalid rules are refused with an error naming the problem, and a job with them is not added', () => {
    const ref = { projectId: 'proj-fault-invalid', jobId: 'job-fault-invalid' };
    expect(() => simulator.addJob({ ...ref, faults: [{ operation: 'get', kind: 'status' }] })).toThrow(/\[0\]\.status/);
    expect(() => simulator.job(ref.projectId, ref.jobId)).toThrow('no simulated job');
    expect(() => simulator.setGlobalFaults([{ operation: 'get', kind: 'latency', rate: 1.5, latencyMs: 1 }])).toThrow(
      /rate/,
    );
    expect(() => simulator.setGlobalFaults([{ operation: 'send', kind: 'stale-terminal' }])).toThrow(
      /only changes reads/,
    );
  });
});

describe('Idempotency-Key', () => {
  test('a repeated key answers the job as it is now without processing the send again', async () => {
    const ref = freshJob();
    expect((await json(await send(ref, 'Once.', { idempotencyKey: 'key-once-1' }))).status).toBe('active');
    expect((await json(await send(ref, 'Once.', { idempotencyKey: 'key-once-1' }))).status).toBe('active');
    clock += WORK_MS;
    const later = await send(ref, 'Once.', { idempotencyKey: 'key-once-1' });
    expect(later.status).toBe(200);
    expect(await json(later)).toMatchObject({
      status: 'completed',
      prLink: `https://github.com/acme/${ref.projectId}/pull/101`,
    });
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      posts: 3,
      messagesAccepted: 1,
      duplicatesSuppressed: 2,
      prompts: ['Once.'],
      idempotencyKeys: ['key-once-1', 'key-once-1', 'key-once-1'],
    });
  });

  test('different keys are different messages', async () => {
    const ref = freshJob();
    await send(ref, 'One.', { idempotencyKey: 'key-a' });
    await send(ref, 'Two.', { idempotencyKey: 'key-b' });
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ messagesAccepted: 2, duplicatesSuppressed: 0 });
  });

  test('a key is remembered per job, so the same key on another job is a new message', async () => {
    const first = freshJob();
    const second = freshJob();
    await send(first, 'Hi.', { idempotencyKey: 'key-shared' });
    await send(second, 'Hi.', { idempotencyKey: 'key-shared' });
    expect(simulator.counts(second.projectId, second.jobId).messagesAccepted).toBe(1);
  });

  test('a send whose answer was dropped after processing is not processed again when retried with its key', async () => {
    const ref = freshJob({ faults: [{ operation: 'send', kind: 'drop-after-processing', times: 1 }] });
    await expect(send(ref, 'Retry me.', { idempotencyKey: 'key-retry-1' })).rejects.toThrow();
    const retry = await send(ref, 'Retry me.', { idempotencyKey: 'key-retry-1' });
    expect(retry.status).toBe(200);
    expect((await json(retry)).status).toBe('active');
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      posts: 2,
      messagesAccepted: 1,
      duplicatesSuppressed: 1,
      dropped: 1,
    });
  });

  test('a key seen only on sends that were not accepted is not recorded', async () => {
    const ref = freshJob({
      faults: [
        { operation: 'send', kind: 'status', status: 503, times: 1 },
        { operation: 'send', kind: 'drop-before-processing', times: 1 },
      ],
    });
    expect((await send(ref, 'Go.', { idempotencyKey: 'key-rejected' })).status).toBe(503);
    await expect(send(ref, 'Go.', { idempotencyKey: 'key-rejected' })).rejects.toThrow();
    expect((await send(ref, '', { idempotencyKey: 'key-rejected' })).status).toBe(400);
    expect((await send(ref, 'Go.', { idempotencyKey: 'key-rejected' })).status).toBe(200);
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({
      posts: 4,
      messagesAccepted: 1,
      duplicatesSuppressed: 0,
      idempotencyKeys: ['key-rejected', 'key-rejected', 'key-rejected', 'key-rejected'],
    });
  });

  test('a key seen only on a rate-limited send is not recorded', async () => {
    const own = await ownSimulator({ sendsPerProjectPerHour: 1 });
    const projectId = `proj-fault-limited-${jobCounter}`;
    const first = { projectId, jobId: 'job-limited-a' };
    const second = { projectId, jobId: 'job-limited-b' };
    own.addJob(first);
    own.addJob(second);
    await send(first, 'One.', { on: own, idempotencyKey: 'key-limit-a' });
    expect((await send(second, 'Two.', { on: own, idempotencyKey: 'key-limit-b' })).status).toBe(429);
    clock += 3_600_000;
    expect((await send(second, 'Two.', { on: own, idempotencyKey: 'key-limit-b' })).status).toBe(200);
    expect(own.counts(second.projectId, second.jobId)).toMatchObject({
      messagesAccepted: 1,
      messagesRejected: 1,
      duplicatesSuppressed: 0,
    });
  });

  test.each([
    ['by default, as the vendor documents no Idempotency-Key support', {}],
    ['with honourIdempotencyKey false', { honourIdempotencyKey: false }],
  ])('%s, the key is recorded but every send is processed', async (_name, options) => {
    const own = await ownSimulator({ honourIdempotencyKey: undefined, ...options });
    const ref = freshJob({}, own);
    await send(ref, 'Again.', { on: own, idempotencyKey: 'key-ignored' });
    await send(ref, 'Again.', { on: own, idempotencyKey: 'key-ignored' });
    expect(own.counts(ref.projectId, ref.jobId)).toMatchObject({
      posts: 2,
      messagesAccepted: 2,
      duplicatesSuppressed: 0,
      idempotencyKeys: ['key-ignored', 'key-ignored'],
    });
  });

  test('sends without a key are each processed and record no key', async () => {
    const ref = freshJob();
    await send(ref, 'A.');
    await send(ref, 'B.');
    expect(simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ messagesAccepted: 2, idempotencyKeys: [] });
  });
});

describe('echoing the Authorization header in errors', () => {
  test('with echoAuthorizationInErrors every error the simulator makes carries the received header', async () => {
    const own = await ownSimulator({ echoAuthorizationInErrors: true, sendsPerProjectPerHour: 1 });
    const ref = freshJob({}, own);
    const other = { projectId: ref.projectId, jobId: `${ref.jobId}-other` };
    own.addJob(other);
    const bearer = `Bearer ${API_KEY}`;
    const wrongKey = 'mint_test_sim_wrong_0002';
    const messageOf = async (response: Promise<Response>) => String((await json(await response)).error);

    expect(await messageOf(getJob(ref, own, { headers: { Authorization: `Bearer ${wrongKey}` } }))).toContain(wrongKey);
    expect(await messageOf(getJob({ projectId: 'nope', jobId: 'nope' }, own))).toContain(bearer);
    expect(await messageOf(fetch(`${own.baseUrl}/v2/agent/nowhere`, { headers: { Authorization: bearer } }))).toContain(
      bearer,
    );
    expect(await messageOf(send(ref, '', { on: own }))).toContain(bearer);
    expect(await messageOf(send(ref, 'x', { on: own, headers: { 'Content-Type': 'text/plain' } }))).toContain(bearer);
    expect((await send(ref, 'Uses the hour.', { on: own })).status).toBe(200);
    const limited = send(other, 'Over the limit.', { on: own });
    expect(await messageOf(limited)).toContain(bearer);
    own.setJobFaults(ref.projectId, ref.jobId, [{ operation: 'get', kind: 'status', status: 503, times: 1 }]);
    expect(await messageOf(getJob(ref, own))).toContain(bearer);
    own.injectFaults(ref.projectId, ref.jobId, [{ operation: 'get', status: 500 }]);
    expect(await messageOf(getJob(ref, own))).toContain(bearer);
  });

  test('without echoAuthorizationInErrors no error carries the header', async () => {
    const ref = freshJob({ faults: [{ operation: 'get', kind: 'status', status: 503 }] });
    expect(JSON.stringify(await json(await getJob(ref)))).not.toContain(API_KEY);
    expect(JSON.stringify(await json(await send(ref, '')))).not.toContain(API_KEY);
  });
});

describe('control routes', () => {
  test('GET /_simulator/stats lists every job with its status and counts', async () => {
    const own = await ownSimulator();
    const ref = freshJob({}, own);
    await send(ref, 'Counted.', { on: own, idempotencyKey: 'key-stats' });
    const response = await fetch(`${own.baseUrl}/_simulator/stats`);
    expect(response.status).toBe(200);
    const stats = (await response.json()) as unknown;
    expect(stats).toEqual(own.stats());
    expect(stats).toEqual({
      jobs: [
        {
          projectId: ref.projectId,
          jobId: ref.jobId,
          status: 'active',
          counts: {
            posts: 1,
            messagesAccepted: 1,
            messagesRejected: 0,
            rateLimited: 0,
            duplicatesSuppressed: 0,
            dropped: 0,
            gets: 0,
            changedReads: 0,
            prompts: ['Counted.'],
            statusesAtSend: ['completed'],
            acceptedAtMs: [expect.any(Number)],
            idempotencyKeys: ['key-stats'],
          },
        },
      ],
    });
  });

  test('POST /_simulator/faults sets the global rules', async () => {
    const own = await ownSimulator();
    const ref = freshJob({}, own);
    expect(
      (await postControl('faults', [{ operation: 'get', kind: 'status', status: 504, times: 1 }], own)).status,
    ).toBe(204);
    expect((await getJob(ref, own)).status).toBe(504);
    expect((await getJob(ref, own)).status).toBe(200);
  });

  test("POST /_simulator/jobs/{project}/{job}/fault-rules sets one job's rules, with percent-decoded ids", async () => {
    jobCounter += 1;
    const ref = { projectId: `proj-fault-ctl-${jobCounter}`, jobId: `ctl/${jobCounter}` };
    expect((await postControl('jobs', ref)).status).toBe(201);
    const path = `jobs/${encodeURIComponent(ref.projectId)}/${encodeURIComponent(ref.jobId)}/fault-rules`;
    expect((await postControl(path, [{ operation: 'get', kind: 'invalid-schema', times: 1 }])).status).toBe(204);
    expect(await json(await getJob(ref))).not.toHaveProperty('status');
    expect((await json(await getJob(ref))).status).toBe('completed');
  });

  test('POST /_simulator/jobs accepts fault rules in the job spec', async () => {
    jobCounter += 1;
    const ref = { projectId: `proj-fault-ctl-${jobCounter}`, jobId: `job-fault-ctl-${jobCounter}` };
    const created = await postControl('jobs', {
      ...ref,
      faults: [{ operation: 'get', kind: 'status', status: 429, retryAfter: '3' }],
    });
    expect(created.status).toBe(201);
    const response = await getJob(ref);
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
  });

  test.each([
    ['a body that is not JSON', 'faults', '[{', /not valid JSON/],
    ['a rule list that is not an array', 'faults', { operation: 'get' }, /\(root\)/],
    ['an unknown kind', 'faults', [{ operation: 'get', kind: 'explode' }], /\[0\]\.kind/],
    ['a status fault without its status', 'faults', [{ operation: 'get', kind: 'status' }], /\[0\]\.status/],
    ['a rate above 1', 'faults', [{ operation: 'get', kind: 'malformed-body', rate: 2 }], /\[0\]\.rate/],
    ['a misspelt field', 'faults', [{ operation: 'get', kind: 'latency', latency: 5 }], /Unrecognized key/],
    ['a job spec without a job id', 'jobs', { projectId: 'p' }, /jobId/],
    ['a scripted fault without a status', 'jobs/nope/nope/faults', [{ operation: 'get' }], /\[0\]\.status/],
  ])('%s is refused with 400 and a message that names the problem', async (_what, path, body, message) => {
    const own = await ownSimulator();
    const response = await postControl(path, body, own);
    expect(response.status).toBe(400);
    const answer = await json(response);
    expect(answer.error).toBe('invalid_request');
    expect(String(answer.message)).toMatch(message);
  });

  test('fault rules for a job the simulator does not know are refused with 400', async () => {
    const response = await postControl('jobs/nope/nope/fault-rules', []);
    expect(response.status).toBe(400);
    expect((await json(response)).message).toBe('no simulated job nope/nope');
  });
});
