/**
 * A simulator of the agent API, for tests, the demo and benchmarks. It speaks real HTTP on loopback and implements
 * the two operations with a job state machine: a follow-up makes the job `active`; after `workMs` it ends as its
 * scenario says. It validates requests the way the seed describes (bearer key form, prompt of at least 1 character)
 * and counts what it receives, so tests can prove a message was delivered exactly once.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FollowUpMessageSchema, describeSchemaProblem, type AgentJob, type KnownJobStatus } from '../agent-api/schemas';

/** What the agent's work on a follow-up ends in. `no-changes` is `completed` with a null `prLink`. */
export type SimulatedOutcome = 'completed' | 'no-changes' | 'failed' | 'archived';

export interface SimulatedJobSpec {
  projectId: string;
  jobId: string;
  /** Status before any follow-up (default `completed`: a job that finished its first run). */
  status?: KnownJobStatus;
  prLink?: string | null;
  /** Where the next follow-ups lead (default `completed`, with a pull request). */
  outcome?: SimulatedOutcome;
  /** How long the agent works on each follow-up (default: the simulator's `defaultWorkMs`). */
  workMs?: number;
  /** Extra fields to add to every response, e.g. to test tolerance of unknown fields or statuses. */
  extraFields?: Record<string, unknown>;
}

/** A scripted answer that replaces the next matching request(s). The request is not processed. */
export interface SimulatedFault {
  operation: 'send' | 'get';
  status: number;
  retryAfter?: string;
  body?: string;
  /** How many requests it answers (default 1). */
  times?: number;
}

export interface JobCounts {
  /** Follow-up messages accepted (2xx) for this job. */
  messagesAccepted: number;
  /** Send requests answered with an error (validation, faults, rate limit). */
  messagesRejected: number;
  gets: number;
  /** The prompts accepted, in order. */
  prompts: string[];
}

export interface SimulatorOptions {
  host?: string;
  port?: number;
  /** When set, only this exact key is accepted; otherwise any key of the documented form. */
  apiKey?: string;
  keyPrefix?: string;
  /** Default time the agent works on a follow-up (2 s). */
  defaultWorkMs?: number;
  /** Documented vendor limit: 100 uses per project per hour. Off unless set. */
  sendsPerProjectPerHour?: number;
  /** Clock, for deterministic unit tests. */
  now?: () => number;
}

interface JobRecord {
  spec: Required<Pick<SimulatedJobSpec, 'outcome' | 'workMs'>> & SimulatedJobSpec;
  job: AgentJob;
  finishAt: number | null;
  pullRequests: number;
  counts: JobCounts;
  faults: SimulatedFault[];
}

const API_PREFIX = ['v2', 'agent'];

export class AgentApiSimulator {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly sendTimes = new Map<string, number[]>();
  private server: Server | undefined;
  private readonly now: () => number;
  readonly keyPrefix: string;

  constructor(private readonly options: SimulatorOptions = {}) {
    this.now = options.now ?? Date.now;
    this.keyPrefix = options.keyPrefix ?? 'mint';
  }

  /** Starts a simulator listening on loopback (a free port unless one is given). */
  static async start(options: SimulatorOptions = {}): Promise<AgentApiSimulator> {
    const simulator = new AgentApiSimulator(options);
    await simulator.listen();
    return simulator;
  }

  get baseUrl(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the simulator is not listening');
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        sendJson(res, 500, { error: 'internal', message: error instanceof Error ? error.message : String(error) });
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Adds (or replaces) a job and returns it as the API would show it. */
  addJob(spec: SimulatedJobSpec): AgentJob {
    const createdAt = new Date(this.now()).toISOString();
    const status = spec.status ?? 'completed';
    const job: AgentJob = {
      id: spec.jobId,
      status,
      source: { repository: `acme/${spec.projectId}`, ref: 'main' },
      model: 'simulated-agent-1',
      prLink: spec.prLink ?? null,
      createdAt,
      archivedAt: status === 'archived' ? createdAt : null,
      ...spec.extraFields,
    };
    this.jobs.set(key(spec.projectId, spec.jobId), {
      spec: { outcome: 'completed', workMs: this.options.defaultWorkMs ?? 2_000, ...spec },
      job,
      finishAt: null,
      pullRequests: 0,
      counts: { messagesAccepted: 0, messagesRejected: 0, gets: 0, prompts: [] },
      faults: [],
    });
    return { ...job };
  }

  /** Queues scripted answers for a job's next requests. */
  injectFaults(projectId: string, jobId: string, faults: SimulatedFault[]): void {
    this.record(projectId, jobId).faults.push(...faults.map((fault) => ({ ...fault })));
  }

  /** The job as a GET would show it now. */
  job(projectId: string, jobId: string): AgentJob {
    return { ...this.advance(this.record(projectId, jobId)) };
  }

  /** What the simulator received for a job. */
  counts(projectId: string, jobId: string): JobCounts {
    const counts = this.record(projectId, jobId).counts;
    return { ...counts, prompts: [...counts.prompts] };
  }

  private record(projectId: string, jobId: string): JobRecord {
    const record = this.jobs.get(key(projectId, jobId));
    if (!record) throw new Error(`no simulated job ${projectId}/${jobId}`);
    return record;
  }

  /** Applies the scenario once the agent's work time has passed. */
  private advance(record: JobRecord): AgentJob {
    if (record.job.status === 'active' && record.finishAt !== null && this.now() >= record.finishAt) {
      record.finishAt = null;
      const outcome = record.spec.outcome;
      if (outcome === 'completed') {
        record.pullRequests += 1;
        record.job.status = 'completed';
        record.job.prLink = `https://github.com/acme/${record.spec.projectId}/pull/${100 + record.pullRequests}`;
      } else if (outcome === 'no-changes') {
        record.job.status = 'completed';
        record.job.prLink = null;
      } else if (outcome === 'failed') {
        record.job.status = 'failed';
        record.job.prLink = null;
      } else {
        record.job.status = 'archived';
        record.job.archivedAt = new Date(this.now()).toISOString();
      }
    }
    return record.job;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://simulator');
    const segments = url.pathname.split('/').slice(1);
    if (segments[0] === '_simulator') return this.handleControl(req, res, segments.slice(1));

    // /v2/agent/{projectId}/job/{id}[/message]; segments are decoded one by one, so an encoded '/' stays in the id.
    const route =
      segments.length >= 5 && segments[0] === API_PREFIX[0] && segments[1] === API_PREFIX[1] && segments[3] === 'job'
        ? { projectId: decode(segments[2]), jobId: decode(segments[4]), rest: segments.slice(5) }
        : undefined;
    const operation =
      route && route.rest.length === 0 && req.method === 'GET'
        ? 'get'
        : route && route.rest.length === 1 && route.rest[0] === 'message' && req.method === 'POST'
          ? 'send'
          : undefined;
    if (!route || !operation || route.projectId === undefined || route.jobId === undefined) {
      return sendJson(res, 404, { error: 'not_found', message: `no route for ${req.method} ${url.pathname}` });
    }
    const body = await readBody(req);

    const authProblem = this.authProblem(req.headers.authorization);
    if (authProblem) return sendJson(res, 401, { error: 'unauthorized', message: authProblem });

    const record = this.jobs.get(key(route.projectId, route.jobId));
    if (!record) return sendJson(res, 404, { error: 'not_found', message: `agent job ${route.jobId} not found` });

    if (operation === 'get') record.counts.gets += 1;
    const fault = record.faults.find((candidate) => candidate.operation === operation);
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.times <= 0) record.faults.splice(record.faults.indexOf(fault), 1);
      if (operation === 'send') record.counts.messagesRejected += 1;
      const headers: Record<string, string> = fault.retryAfter ? { 'Retry-After': fault.retryAfter } : {};
      return sendRaw(res, fault.status, fault.body ?? JSON.stringify({ error: 'injected', message: `injected ${fault.status}` }), headers);
    }

    if (operation === 'get') return sendJson(res, 200, this.advance(record));
    return this.acceptFollowUp(req, res, record, route.projectId, body);
  }

  private acceptFollowUp(req: IncomingMessage, res: ServerResponse, record: JobRecord, projectId: string, body: string): void {
    const reject = (status: number, payload: object, headers: Record<string, string> = {}) => {
      record.counts.messagesRejected += 1;
      sendJson(res, status, payload, headers);
    };
    if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      return reject(415, { error: 'unsupported_media_type', message: 'Content-Type must be application/json' });
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return reject(400, { error: 'invalid_request', message: 'body is not valid JSON' });
    }
    const message = FollowUpMessageSchema.safeParse(json);
    if (!message.success) return reject(400, { error: 'invalid_request', message: describeSchemaProblem(message.error) });

    const limit = this.options.sendsPerProjectPerHour;
    if (limit !== undefined) {
      const hourAgo = this.now() - 3_600_000;
      const times = (this.sendTimes.get(projectId) ?? []).filter((time) => time > hourAgo);
      this.sendTimes.set(projectId, times);
      if (times.length >= limit) {
        const retryAfter = Math.max(1, Math.ceil(((times[0] ?? this.now()) + 3_600_000 - this.now()) / 1000));
        return reject(429, { error: 'rate_limited', message: `limit of ${limit} per project per hour` }, { 'Retry-After': String(retryAfter) });
      }
      times.push(this.now());
    }

    record.counts.messagesAccepted += 1;
    record.counts.prompts.push(message.data.prompt);
    const job = this.advance(record);
    // Archived jobs stay archived: the message is recorded, but no work starts.
    if (job.status !== 'archived') {
      job.status = 'active';
      job.prLink = null;
      record.finishAt = this.now() + record.spec.workMs;
    }
    sendJson(res, 200, job);
  }

  private authProblem(header: string | undefined): string | null {
    if (!header) return 'missing Authorization header';
    const match = /^Bearer (\S+)$/.exec(header);
    if (!match?.[1]) return 'Authorization must be "Bearer <API key>"';
    const token = match[1];
    if (!token.startsWith(`${this.keyPrefix}_`) || token.length < this.keyPrefix.length + 9) {
      return `the API key must have the form ${this.keyPrefix}_<secret>`;
    }
    if (this.options.apiKey !== undefined && token !== this.options.apiKey) return 'invalid API key';
    return null;
  }

  private async handleControl(req: IncomingMessage, res: ServerResponse, segments: string[]): Promise<void> {
    const body = await readBody(req);
    const [resource, projectSegment, jobSegment, sub] = segments;
    if (resource === 'health') return sendJson(res, 200, { ok: true });
    if (resource !== 'jobs') return sendJson(res, 404, { error: 'not_found' });
    try {
      if (req.method === 'POST' && projectSegment === undefined) {
        return sendJson(res, 201, this.addJob(JSON.parse(body) as SimulatedJobSpec));
      }
      const projectId = decode(projectSegment);
      const jobId = decode(jobSegment);
      if (projectId === undefined || jobId === undefined) return sendJson(res, 404, { error: 'not_found' });
      if (req.method === 'POST' && sub === 'faults') {
        this.injectFaults(projectId, jobId, JSON.parse(body) as SimulatedFault[]);
        return sendJson(res, 204, null);
      }
      if (req.method === 'GET' && sub === undefined) {
        return sendJson(res, 200, { job: this.job(projectId, jobId), counts: this.counts(projectId, jobId) });
      }
      return sendJson(res, 404, { error: 'not_found' });
    } catch (error) {
      return sendJson(res, 400, { error: 'invalid_request', message: error instanceof Error ? error.message : String(error) });
    }
  }
}

function key(projectId: string, jobId: string): string {
  return `${projectId}\u0000${jobId}`;
}

function decode(segment: string | undefined): string | undefined {
  if (segment === undefined || segment === '') return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  sendRaw(res, status, payload === null ? '' : JSON.stringify(payload), headers);
}

function sendRaw(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
