/**
 * Every fact the vendor publishes beyond the seed (../shared/VENDOR-FACTS.md), checked in one place against both
 * sides we own: our schema of the job and error bodies, and our simulator's answers over real HTTP. If the vendor's
 * document changes, this is the file to change first.
 */
import { apiKeyProblem } from '../../src/config';
import { AgentJobSchema, ErrorBodySchema, FollowUpMessageSchema, toAgentJob } from '../../src/agent-api/schemas';
import { KNOWN_JOB_STATUSES, TERMINAL_JOB_STATUSES } from '../../src/kernel/agent-job';
import { AgentApiSimulator } from '../../src/simulator/simulator';

const KEY = 'mint_contract-test-key';
let simulator: AgentApiSimulator;
beforeAll(async () => {
  simulator = await AgentApiSimulator.start({ apiKey: KEY, defaultWorkMs: 60_000, sendsPerProjectPerHour: 100 });
});
afterAll(async () => {
  await simulator.close();
});

const call = (path: string, init: RequestInit = {}) =>
  fetch(`${simulator.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...init.headers },
  });
const send = (projectId: string, jobId: string, prompt: unknown = 'Go on') =>
  call(`/v2/agent/${projectId}/job/${jobId}/message`, { method: 'POST', body: JSON.stringify({ prompt }) });

describe('operations (v2)', () => {
  test('get job: GET /v2/agent/{projectId}/job/{id} answers 200 with the job, 404 for an unknown one', async () => {
    simulator.addJob({ projectId: 'contract', jobId: 'get-1' });
    const found = await call('/v2/agent/contract/job/get-1');
    expect(found.status).toBe(200);
    expect(AgentJobSchema.safeParse(await found.json()).success).toBe(true);
    expect((await call('/v2/agent/contract/job/missing')).status).toBe(404);
  });

  test('send: POST .../message answers 200 with the job at once (the work goes on asynchronously)', async () => {
    simulator.addJob({ projectId: 'contract', jobId: 'send-1' });
    const answer = await send('contract', 'send-1');
    expect(answer.status).toBe(200);
    const job = toAgentJob(AgentJobSchema.parse(await answer.json()));
    expect(job.status).toBe('active');
    expect(job.prLink).toBeNull(); // null while active
  });

  test('the request body is { prompt } of at least 1 character, nothing else', () => {
    expect(FollowUpMessageSchema.safeParse({ prompt: 'x' }).success).toBe(true);
    expect(FollowUpMessageSchema.safeParse({ prompt: '' }).success).toBe(false);
    expect(FollowUpMessageSchema.safeParse({ prompt: 'x', extra: 1 }).success).toBe(false);
  });

  test('400, 404 and 429 bodies are { "error": string }, without codes', async () => {
    simulator.addJob({ projectId: 'limited', jobId: 'errors-1' });
    const answers = [await send('limited', 'errors-1', ''), await send('contract', 'no-such-job')];
    for (let sent = 0; sent < 100; sent += 1) await send('limited', 'errors-1');
    answers.push(await send('limited', 'errors-1'));
    expect(answers.map((answer) => answer.status)).toEqual([400, 404, 429]);
    for (const answer of answers) {
      const body = (await answer.json()) as Record<string, unknown>;
      expect(ErrorBodySchema.safeParse(body).success).toBe(true);
      expect(Object.keys(body)).toEqual(['error']);
    }
    // No Retry-After is documented; the simulator sends none unless a test asks for one.
    expect(answers[2]?.headers.get('retry-after')).toBeNull();
  });
});

describe('the job object: no required fields in the vendor schema; we require only what we decide on', () => {
  test('status is one of active, completed, archived, failed; the last three end polling', () => {
    expect(KNOWN_JOB_STATUSES).toEqual(['active', 'completed', 'archived', 'failed']);
    expect(TERMINAL_JOB_STATUSES).toEqual(['completed', 'archived', 'failed']);
  });

  test('source.repository is the full URL of the repository, and source.ref may be null', async () => {
    simulator.addJob({ projectId: 'contract', jobId: 'no-branch', ref: null });
    const job = toAgentJob(AgentJobSchema.parse(await (await call('/v2/agent/contract/job/no-branch')).json()));
    expect(job.source?.repository).toMatch(/^https:\/\/github\.com\/[^/]+\/[^/]+$/);
    expect(job.source?.ref).toBeNull();
  });

  test('every optional field may be missing, and unknown fields are accepted and not kept', () => {
    const job = toAgentJob(
      AgentJobSchema.parse({ id: 'j', status: 'completed', somethingNew: { big: 'x'.repeat(10_000) } }),
    );
    expect(job).toEqual({ id: 'j', status: 'completed', prLink: null });
  });

  test('prLink and archivedAt may be null', () => {
    expect(AgentJobSchema.safeParse({ id: 'j', status: 'archived', prLink: null, archivedAt: null }).success).toBe(
      true,
    );
  });
});

describe('API keys', () => {
  test('admin keys start mint_; the assistant (mint_dsc_) and search/index (mint_us_) kinds are refused', () => {
    expect(apiKeyProblem('mint_0123456789abcdef', 'mint')).toBeNull();
    expect(apiKeyProblem('mint_dsc_0123456789abcdef', 'mint')).toMatch(/assistant key/);
    expect(apiKeyProblem('mint_us_0123456789abcdef', 'mint')).toMatch(/search\/index key/);
  });
});
