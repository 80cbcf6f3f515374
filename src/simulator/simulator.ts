/**
 * A simulator of the agent API, for tests, the demo and benchmarks. It speaks real HTTP on loopback and implements
 * the two operations with a job state machine: a follow-up makes the job `active`; after `workMs` it ends as its
 * scenario says. It validates requests the way docs/VENDOR-CONTRACT.md describes (bearer key form, prompt of at least 1 character)
 * and counts what it receives, so tests can prove a message was delivered exactly once.
 *
 * Fault rules (faults.ts) make it misbehave the ways a real API and network do: error statuses, latency, connections
 * dropped before or after the request was processed, bodies that are not JSON or not a job, and stale reads from a
 * lagging replica. It honours an `Idempotency-Key` header on sends, so a client that sends one can retry safely.
 */
import { VENDOR_SENDS_PER_PROJECT_PER_HOUR } from '../kernel/send-budget-rule';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { nonAdminKeyKind } from '../agent-api/key-kinds';
import { FollowUpMessageSchema, describeSchemaProblem, type AgentJob } from '../agent-api/schemas';
import {
  OutsideUsesSchema,
  SimulatedFaultsSchema,
  SimulatedJobSpecSchema,
  type SimulatedFault,
  type SimulatedJobSpec,
} from './control-schemas';
import { DEFAULT_SEED, mulberry32 } from './prng';
import { FaultRulesSchema, describeIssues, parseFaultRules, type FaultRule } from './faults';

export type { SimulatedFault, SimulatedJobSpec, SimulatedOutcome } from './control-schemas';
export type { FaultKind, FaultOperation, FaultRule } from './faults';

export interface JobCounts {
  /**
   * Send requests (POSTs) that reached this job, whatever their answer: accepted, refused, dropped or suppressed.
   * "Sent once" means one POST, which `messagesAccepted` alone cannot tell (a second POST refused or dropped).
   */
  posts: number;
  /** Follow-up messages accepted (2xx) for this job. */
  messagesAccepted: number;
  /** Send requests answered with an error (validation, faults, rate limit). */
  messagesRejected: number;
  /** Sends refused with 429 by the project's rate limit (`sendsPerProjectPerHour` or `sendLimit`). */
  rateLimited: number;
  /** Sends answered from the Idempotency-Key record instead of being processed a second time. */
  duplicatesSuppressed: number;
  /** Requests whose connection was destroyed instead of answered, by either drop fault. */
  dropped: number;
  gets: number;
  /**
   * Successful GET answers that showed the job otherwise (status, prLink) than the successful GET answer before: what a
   * job that flaps (a lagging replica between fresh reads) costs its readers.
   */
  changedReads: number;
  /** The prompts accepted, in order. */
  prompts: string[];
  /** The job's status when each accepted message arrived, in order (`active`: sent to a busy job). */
  statusesAtSend: string[];
  /** When each accepted message arrived (Unix milliseconds), in order: how a project's sends were spaced. */
  acceptedAtMs: number[];
  /** Every Idempotency-Key received on a send that reached this job, in order, duplicates included. */
  idempotencyKeys: string[];
}

/** What `stats()` and `GET /_simulator/stats` report. */
export interface SimulatorStats {
  jobs: Array<{ projectId: string; jobId: string; status: string; counts: JobCounts }>;
}

/** "100 uses per project per hour" (VENDOR-FACTS.md): what the simulator enforces unless told otherwise. */
export { VENDOR_SENDS_PER_PROJECT_PER_HOUR };

export interface SimulatorOptions {
  host?: string;
  port?: number;
  /** When set, only this exact key is accepted; otherwise any key of the documented form. */
  apiKey?: string;
  keyPrefix?: string;
  /** Default time the agent works on a follow-up (2 s). */
  defaultWorkMs?: number;
  /** The vendor's documented limit: 100 uses per project per rolling hour, the default; null turns it off. */
  sendsPerProjectPerHour?: number | null;
  /** The same limit on another time scale, for tests: at most `sends` per project in any `windowMs`. */
  sendLimit?: { sends: number; windowMs: number };
  /** Clock, for deterministic unit tests (and the time-skipping test stack, which follows the server's clock). */
  now?: () => number;
  /** Awaited before each request is handled: the time-skipping test stack reads the server's clock here. */
  beforeRequest?: () => Promise<void>;
  /** Seed of the generator behind fault rates, so a run can be repeated request for request (default: fixed). */
  seed?: number;
  /**
   * Whether a repeated `Idempotency-Key` on a send suppresses the duplicate. Default false, as the vendor documents no
   * such support: a client that resends blindly sends twice here as it would there.
   */
  honourIdempotencyKey?: boolean;
  /**
   * Accept the vendor's non-admin key kinds (`mint_dsc_...`, `mint_us_...`), which its agent endpoints refuse
   * (default false: refused with 401, as the vendor does).
   */
  acceptNonAdminKeys?: boolean;
  /** Echo the received Authorization header in error messages, like a careless API, to test redaction. */
  echoAuthorizationInErrors?: boolean;
  /** Called for every request that reaches a known job, before any fault applies (benchmarks time polls with it). */
  onRequest?: (request: SimulatedRequest) => void;
}

/** A request the simulator received for a known job. */
export interface SimulatedRequest {
  operation: 'send' | 'get';
  projectId: string;
  jobId: string;
  /** The simulator's clock when the request arrived. */
  atMs: number;
}

interface ActiveRule {
  rule: FaultRule;
  remaining: number;
  /** Requests the rule has matched so far (for `every`). */
  matched: number;
}

interface JobRecord {
  spec: Required<Pick<SimulatedJobSpec, 'outcome' | 'workMs'>> & SimulatedJobSpec;
  job: AgentJob;
  finishAt: number | null;
  pullRequests: number;
  counts: JobCounts;
  faults: SimulatedFault[];
  rules: ActiveRule[];
  /** Idempotency keys of accepted sends. */
  acceptedKeys: Set<string>;
  /** The job as it was just before the last accepted follow-up: what a lagging replica still serves. */
  beforeLastFollowUp: AgentJob | null;
  /** The job as the last successful GET showed it (for `changedReads`). */
  lastServed: AgentJob | null;
}

interface PendingDelay {
  timer: NodeJS.Timeout;
  resolve: (elapsed: boolean) => void;
}

/** The vendor's error body for 400, 404 and 429 (VENDOR-FACTS.md): a human-readable message, no error codes. */
interface ErrorBody {
  error: string;
}

type Reply =
  { ok: true; job: AgentJob } | { ok: false; status: number; body: ErrorBody; headers: Record<string, string> };

type Operation = 'send' | 'get';

const API_PREFIX = ['v2', 'agent'];

/** Cut off where a value starts, so no JSON parser can read it, the way a truncated response looks. */
export const MALFORMED_JOB_BODY = '{"id": "x", "status": ';

const CLOSED: unique symbol = Symbol('simulator closed');

export class AgentApiSimulator {
  private readonly jobs = new Map<string, JobRecord>();
  private readonly sendTimes = new Map<string, number[]>();
  private readonly projectLimits = new Map<string, { sends: number; windowMs: number } | null>();
  private readonly pendingDelays = new Set<PendingDelay>();
  private globalRules: ActiveRule[] = [];
  private server: Server | undefined;
  private readonly now: () => number;
  private readonly random: () => number;
  readonly keyPrefix: string;

  constructor(private readonly options: SimulatorOptions = {}) {
    this.now = options.now ?? Date.now;
    this.random = mulberry32(options.seed ?? DEFAULT_SEED);
    this.keyPrefix = options.keyPrefix ?? 'mint';
  }

  /** Starts a simulator listening on loopback (a free port unless one is given). */
  static async start(options: SimulatorOptions = {}): Promise<AgentApiSimulator> {
    const simulator = new AgentApiSimulator(options);
    await simulator.listen();
    return simulator;
  }

  /** `http://host:port` of the listening simulator. */
  get baseUrl(): string {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (!address) throw new Error('the simulator is not listening');
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** Starts listening on the configured host and port. */
  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        // A failure after the answer started (or after a drop) has nowhere to go; writing again would throw.
        if (res.headersSent || res.destroyed) return;
        sendJson(res, 500, { error: `simulator error: ${error instanceof Error ? error.message : String(error)}` });
      });
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
  }

  /** Stops listening, drops open connections and abandons requests held by latency faults. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const pending of this.pendingDelays) {
      clearTimeout(pending.timer);
      pending.resolve(false);
    }
    this.pendingDelays.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Adds (or replaces) a job and returns it as the API would show it. */
  addJob(spec: SimulatedJobSpec): AgentJob {
    const rules = activate(parseFaultRules(spec.faults ?? []));
    const createdAt = new Date(this.now()).toISOString();
    const status = spec.busyForMs !== undefined ? 'active' : (spec.status ?? 'completed');
    const job: AgentJob = {
      id: spec.jobId,
      status,
      // The vendor's `repository` is the full URL of the GitHub repository.
      source: {
        repository: `https://github.com/acme/${spec.projectId}`,
        ref: spec.ref === undefined ? 'main' : spec.ref,
      },
      model: 'simulated-agent-1',
      prLink: spec.prLink ?? null,
      createdAt,
      archivedAt: status === 'archived' ? createdAt : null,
      ...spec.extraFields,
    };
    this.jobs.set(key(spec.projectId, spec.jobId), {
      spec: { outcome: 'completed', workMs: this.options.defaultWorkMs ?? 2_000, ...spec },
      job,
      finishAt: spec.busyForMs !== undefined ? this.now() + spec.busyForMs : null,
      pullRequests: 0,
      counts: {
        posts: 0,
        messagesAccepted: 0,
        messagesRejected: 0,
        rateLimited: 0,
        duplicatesSuppressed: 0,
        dropped: 0,
        gets: 0,
        changedReads: 0,
        prompts: [],
        statusesAtSend: [],
        acceptedAtMs: [],
        idempotencyKeys: [],
      },
      faults: [],
      rules,
      acceptedKeys: new Set(),
      beforeLastFollowUp: null,
      lastServed: null,
    });
    return { ...job };
  }

  /** One project's own send limit (null: none), in place of the simulator's; for tests on a shortened window. */
  setSendLimit(projectId: string, limit: { sends: number; windowMs: number } | null): void {
    this.projectLimits.set(projectId, limit);
  }

  /**
   * Uses of the project made elsewhere (its dashboard, another service), now: they count in its rate limit like sends,
   * and nothing our side can see them. Fills the window the way the vendor's count does.
   */
  useOutside(projectId: string, count: number): void {
    const times = this.sendTimes.get(projectId) ?? [];
    for (let use = 0; use < count; use += 1) times.push(this.now());
    this.sendTimes.set(projectId, times);
  }

  /** The project's rolling window: the limit a send is over (refused), or null (the send is counted in it). */
  private takeSendSlot(projectId: string): { sends: number; windowMs: number } | null {
    const limit = this.sendLimitOf(projectId);
    if (limit === null) return null;
    const windowStart = this.now() - limit.windowMs;
    const times = (this.sendTimes.get(projectId) ?? []).filter((time) => time > windowStart);
    this.sendTimes.set(projectId, times);
    if (times.length >= limit.sends) return limit;
    times.push(this.now());
    return null;
  }

  private sendLimitOf(projectId: string): { sends: number; windowMs: number } | null {
    const own = this.projectLimits.get(projectId);
    if (own !== undefined) return own;
    if (this.options.sendLimit) return this.options.sendLimit;
    const perHour =
      this.options.sendsPerProjectPerHour === undefined
        ? VENDOR_SENDS_PER_PROJECT_PER_HOUR
        : this.options.sendsPerProjectPerHour;
    return perHour === null ? null : { sends: perHour, windowMs: 3_600_000 };
  }

  /** Queues scripted answers for a job's next requests. */
  injectFaults(projectId: string, jobId: string, faults: SimulatedFault[]): void {
    this.record(projectId, jobId).faults.push(...faults.map((fault) => ({ ...fault })));
  }

  /** Replaces the fault rules that apply to every job, tried after each job's own rules. */
  setGlobalFaults(rules: FaultRule[]): void {
    this.globalRules = activate(parseFaultRules(rules));
  }

  /** Replaces one job's fault rules (its counts of `times` start afresh). */
  setJobFaults(projectId: string, jobId: string, rules: FaultRule[]): void {
    const record = this.record(projectId, jobId);
    record.rules = activate(parseFaultRules(rules));
  }

  /**
   * Ends an active job's work now (as its scenario says), however long it was set to take; tests use it. `prLink`
   * replaces the link a completed job would get, so that many jobs of one project each end with a link of their own
   * (the default numbers pull requests per job, so every job's first is `pull/101`).
   */
  finishJob(projectId: string, jobId: string, options: { prLink?: string } = {}): AgentJob {
    const record = this.record(projectId, jobId);
    if (record.job.status !== 'active' || record.finishAt === null) {
      throw new Error(
        `simulated job ${projectId}/${jobId} is not working on a follow-up (status ${record.job.status})`,
      );
    }
    record.finishAt = this.now();
    const job = this.advance(record);
    if (options.prLink !== undefined && job.status === 'completed' && job.prLink !== null) job.prLink = options.prLink;
    return { ...job };
  }

  /** The job as a GET would show it now. */
  job(projectId: string, jobId: string): AgentJob {
    return { ...this.advance(this.record(projectId, jobId)) };
  }

  /** What the simulator received for a job. */
  counts(projectId: string, jobId: string): JobCounts {
    return copyCounts(this.record(projectId, jobId).counts);
  }

  /** Every job with its current status and counts. */
  stats(): SimulatorStats {
    return {
      jobs: [...this.jobs.values()].map((record) => ({
        projectId: record.spec.projectId,
        jobId: record.spec.jobId,
        status: this.advance(record).status,
        counts: copyCounts(record.counts),
      })),
    };
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

    const route = routeOf(req.method, segments);
    if (!route) return this.sendError(req, res, 404, `no route for ${req.method} ${url.pathname}`);
    const { operation } = route;
    // The whole request is read before any fault applies: a latency fault then models a timeout after the request
    // was written, and a drop never races the upload.
    const body = await readBody(req);
    await this.options.beforeRequest?.();

    const authProblem = this.authProblem(req.headers.authorization);
    if (authProblem) return this.sendError(req, res, 401, authProblem);

    const record = this.jobs.get(key(route.projectId, route.jobId));
    if (!record) return this.sendError(req, res, 404, `agent job ${route.jobId} not found`);

    const idempotencyKey = this.countRequest(req, record, route);

    const scripted = record.faults.find((candidate) => candidate.operation === operation);
    if (scripted) return this.answerScripted(req, res, record, scripted);

    const picked = await this.pickFault(record, operation);
    if (picked === CLOSED) return;
    const kind = picked?.kind;
    if (picked?.kind === 'status') {
      if (operation === 'send') record.counts.messagesRejected += 1;
      const status = picked.status ?? 503;
      const headers: Record<string, string> = picked.retryAfter ? { 'Retry-After': picked.retryAfter } : {};
      return this.sendError(req, res, status, `injected ${status}`, headers);
    }
    if (kind === 'drop-before-processing') {
      record.counts.dropped += 1;
      return void req.socket.destroy();
    }
    if (kind === 'stale-terminal' && record.beforeLastFollowUp)
      return sendJson(res, 200, served(record, record.beforeLastFollowUp));

    const reply: Reply =
      operation === 'get'
        ? { ok: true, job: this.advance(record) }
        : this.processSend(req, record, route.projectId, body, idempotencyKey);
    if (kind === 'drop-after-processing') {
      record.counts.dropped += 1;
      return void req.socket.destroy();
    }
    // Body faults corrupt successful answers only: an error stays an error, so a rejected send never looks accepted.
    if (!reply.ok) return sendJson(res, reply.status, reply.body, reply.headers);
    if (kind === 'malformed-body') return sendRaw(res, 200, MALFORMED_JOB_BODY);
    if (kind === 'invalid-schema') {
      const broken: Record<string, unknown> = { ...reply.job };
      delete broken.status;
      return sendJson(res, 200, broken);
    }
    return sendJson(res, 200, operation === 'get' ? served(record, reply.job) : reply.job);
  }

  /** Counts a request that reached a job; the send's Idempotency-Key, if it has one. */
  private countRequest(
    req: IncomingMessage,
    record: JobRecord,
    { operation, projectId, jobId }: { operation: Operation; projectId: string; jobId: string },
  ): string | undefined {
    if (operation === 'get') record.counts.gets += 1;
    else record.counts.posts += 1;
    this.options.onRequest?.({ operation, projectId, jobId, atMs: this.now() });
    const idempotencyKey = operation === 'send' ? headerValue(req.headers['idempotency-key']) : undefined;
    if (idempotencyKey !== undefined) record.counts.idempotencyKeys.push(idempotencyKey);
    return idempotencyKey;
  }

  /** A scripted fault of the job answers the request, and is used up after its `times`. */
  private answerScripted(req: IncomingMessage, res: ServerResponse, record: JobRecord, scripted: SimulatedFault): void {
    scripted.times = (scripted.times ?? 1) - 1;
    if (scripted.times <= 0) record.faults.splice(record.faults.indexOf(scripted), 1);
    if (scripted.operation === 'send') record.counts.messagesRejected += 1;
    const headers: Record<string, string> = scripted.retryAfter ? { 'Retry-After': scripted.retryAfter } : {};
    if (scripted.body !== undefined) return sendRaw(res, scripted.status, scripted.body, headers);
    return this.sendError(req, res, scripted.status, `injected ${scripted.status}`, headers);
  }

  /**
   * Tries the job's rules, then the global ones, in order. A latency rule that fires waits and lets the request go
   * on; the first other rule that fires is the request's one fault, and later rules are not consulted (nor rolled).
   */
  private async pickFault(record: JobRecord, operation: Operation): Promise<FaultRule | undefined | typeof CLOSED> {
    for (const active of [...record.rules, ...this.globalRules]) {
      const { rule } = active;
      if (active.remaining <= 0 || (rule.operation !== 'any' && rule.operation !== operation)) continue;
      // A stale read needs an earlier state to serve; until then the rule waits, without using its `times`.
      if (rule.kind === 'stale-terminal' && (operation !== 'get' || record.beforeLastFollowUp === null)) continue;
      active.matched += 1;
      if (rule.every !== undefined && active.matched % rule.every !== 0) continue;
      if (!this.fires(rule.rate ?? 1)) continue;
      active.remaining -= 1;
      if (rule.kind !== 'latency') return rule;
      if (!(await this.delay(rule.latencyMs ?? 0))) return CLOSED;
    }
    return undefined;
  }

  /** Rates of 0 and 1 draw nothing, so adding a certain rule does not shift the random sequence of the others. */
  private fires(rate: number): boolean {
    if (rate >= 1) return true;
    if (rate <= 0) return false;
    return this.random() < rate;
  }

  /** Resolves true after `ms`, or false at once if the simulator closes first (so close never waits for it). */
  private delay(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const pending: PendingDelay = {
        timer: setTimeout(() => {
          this.pendingDelays.delete(pending);
          resolve(true);
        }, ms),
        resolve,
      };
      this.pendingDelays.add(pending);
    });
  }

  private processSend(
    req: IncomingMessage,
    record: JobRecord,
    projectId: string,
    body: string,
    idempotencyKey: string | undefined,
  ): Reply {
    const reject = (status: number, message: string, headers: Record<string, string> = {}): Reply => {
      record.counts.messagesRejected += 1;
      return { ok: false, status, body: this.errorBody(req, message), headers };
    };
    if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) {
      return reject(415, 'Content-Type must be application/json');
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return reject(400, 'body is not valid JSON');
    }
    const message = FollowUpMessageSchema.safeParse(json);
    if (!message.success) return reject(400, describeSchemaProblem(message.error));

    const dedupeKey = this.options.honourIdempotencyKey !== true || !idempotencyKey ? undefined : idempotencyKey;
    // Checked before the rate limit: replaying a request that already succeeded must not use up a slot or fail.
    if (dedupeKey !== undefined && record.acceptedKeys.has(dedupeKey)) {
      record.counts.duplicatesSuppressed += 1;
      return { ok: true, job: this.advance(record) };
    }

    const over = this.takeSendSlot(projectId);
    if (over !== null) {
      record.counts.rateLimited += 1;
      // No Retry-After: the vendor documents none (VENDOR-FACTS.md), so clients must not count on one.
      return reject(
        429,
        `rate limit exceeded: ${over.sends} uses per project per ${over.windowMs === 3_600_000 ? 'hour' : `${over.windowMs} ms`}`,
      );
    }

    record.counts.messagesAccepted += 1;
    record.counts.prompts.push(message.data.prompt);
    if (dedupeKey !== undefined) record.acceptedKeys.add(dedupeKey);
    const job = this.advance(record);
    record.counts.statusesAtSend.push(job.status);
    record.counts.acceptedAtMs.push(Date.now());
    record.beforeLastFollowUp = structuredClone(job);
    // Archived jobs stay archived: the message is recorded, but no work starts.
    if (job.status !== 'archived') {
      job.status = 'active';
      job.prLink = null;
      record.finishAt = this.now() + record.spec.workMs;
    }
    return { ok: true, job };
  }

  private authProblem(header: string | undefined): string | null {
    if (!header) return 'missing Authorization header';
    const match = /^Bearer (\S+)$/.exec(header);
    if (!match?.[1]) return 'Authorization must be "Bearer <API key>"';
    const token = match[1];
    if (!token.startsWith(`${this.keyPrefix}_`) || token.length < this.keyPrefix.length + 9) {
      return `the API key must have the form ${this.keyPrefix}_<secret>`;
    }
    const kind = this.options.acceptNonAdminKeys ? undefined : nonAdminKeyKind(token, this.keyPrefix);
    if (kind)
      return `this is ${kind.name} key (${this.keyPrefix}_${kind.infix}_...); the agent endpoints take an admin key (${this.keyPrefix}_...)`;
    if (this.options.apiKey !== undefined && token !== this.options.apiKey) return 'invalid API key';
    return null;
  }

  private errorBody(req: IncomingMessage, message: string): ErrorBody {
    const authorization = req.headers.authorization;
    if (!this.options.echoAuthorizationInErrors || !authorization) return { error: message };
    return { error: `${message} (received Authorization: ${authorization})` };
  }

  private sendError(
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    sendJson(res, status, this.errorBody(req, message), headers);
  }

  private async handleControl(req: IncomingMessage, res: ServerResponse, segments: string[]): Promise<void> {
    const body = await readBody(req);
    const [resource, projectSegment, jobSegment, sub] = segments;
    try {
      if (resource === 'health') return sendJson(res, 200, { ok: true });
      if (resource === 'stats' && req.method === 'GET' && segments.length === 1)
        return sendJson(res, 200, this.stats());
      if (resource === 'faults' && req.method === 'POST' && segments.length === 1) {
        this.setGlobalFaults(parseControlBody(FaultRulesSchema, body, 'fault rules'));
        return sendJson(res, 204, null);
      }
      if (resource === 'projects' && req.method === 'POST' && jobSegment === 'outside-uses' && sub === undefined) {
        const projectId = decode(projectSegment);
        if (projectId === undefined) return sendJson(res, 404, { error: 'not_found' });
        this.useOutside(projectId, parseControlBody(OutsideUsesSchema, body, 'outside uses').count);
        return sendJson(res, 204, null);
      }
      if (resource !== 'jobs') return sendJson(res, 404, { error: 'not_found' });
      if (req.method === 'POST' && projectSegment === undefined) {
        return sendJson(res, 201, this.addJob(parseControlBody(SimulatedJobSpecSchema, body, 'job spec')));
      }
      const projectId = decode(projectSegment);
      const jobId = decode(jobSegment);
      if (projectId === undefined || jobId === undefined) return sendJson(res, 404, { error: 'not_found' });
      if (req.method === 'POST' && sub === 'faults') {
        this.injectFaults(projectId, jobId, parseControlBody(SimulatedFaultsSchema, body, 'scripted faults'));
        return sendJson(res, 204, null);
      }
      if (req.method === 'POST' && sub === 'fault-rules') {
        this.setJobFaults(projectId, jobId, parseControlBody(FaultRulesSchema, body, 'fault rules'));
        return sendJson(res, 204, null);
      }
      if (req.method === 'GET' && sub === undefined) {
        return sendJson(res, 200, { job: this.job(projectId, jobId), counts: this.counts(projectId, jobId) });
      }
      return sendJson(res, 404, { error: 'not_found' });
    } catch (error) {
      return sendJson(res, 400, {
        error: 'invalid_request',
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
}

function activate(rules: FaultRule[]): ActiveRule[] {
  return rules.map((rule) => ({ rule, remaining: rule.times ?? Number.POSITIVE_INFINITY, matched: 0 }));
}

function copyCounts(counts: JobCounts): JobCounts {
  return {
    ...counts,
    prompts: [...counts.prompts],
    statusesAtSend: [...counts.statusesAtSend],
    acceptedAtMs: [...counts.acceptedAtMs],
    idempotencyKeys: [...counts.idempotencyKeys],
  };
}

/** Parses a control route's JSON body; throws an Error that names every problem, answered as a 400. */
function parseControlBody<T>(schema: z.ZodType<T>, body: string, what: string): T {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new Error(`the ${what} body is not valid JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new Error(`invalid ${what}: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
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
  // A client that gave up during a latency fault has closed the socket; the request was processed all the same.
  if (res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** A job a GET answers with, counted in `changedReads` when it shows the job otherwise than the GET before. */
function served(record: JobRecord, job: AgentJob): AgentJob {
  const last = record.lastServed;
  if (last !== null && (last.status !== job.status || (last.prLink ?? null) !== (job.prLink ?? null)))
    record.counts.changedReads += 1;
  record.lastServed = { ...job };
  return job;
}

/** /v2/agent/{projectId}/job/{id}[/message]; segments are decoded one by one, so an encoded '/' stays in the id. */
function routeOf(
  method: string | undefined,
  segments: string[],
): { projectId: string; jobId: string; operation: Operation } | undefined {
  if (segments.length < 5 || segments[0] !== API_PREFIX[0] || segments[1] !== API_PREFIX[1] || segments[3] !== 'job')
    return undefined;
  const projectId = decode(segments[2]);
  const jobId = decode(segments[4]);
  const rest = segments.slice(5);
  const operation: Operation | undefined =
    rest.length === 0 && method === 'GET'
      ? 'get'
      : rest.length === 1 && rest[0] === 'message' && method === 'POST'
        ? 'send'
        : undefined;
  return operation && projectId !== undefined && jobId !== undefined ? { projectId, jobId, operation } : undefined;
}
