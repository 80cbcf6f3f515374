/**
 * A small HTTP client for the two agent API operations this project uses. It validates every response with zod and
 * turns every failure into an `ApplicationFailure` with a stable type (see errors.ts), so activities can let it
 * propagate unchanged. The key is held here and never appears in a message.
 */
import { createHmac } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { fetch, type Agent } from 'undici';
import {
  guardedAgent,
  guardedLookup,
  refusedTarget,
  urlTargetRefusal,
  type AddressPolicy,
  type Resolver,
} from '../address-guard';
import {
  AgentApiErrorType,
  bodyExcerpt,
  failureForStatus,
  isCertainlyNotDelivered,
  sendAmbiguous,
  type ApiFailureDetails,
  type RequestContext,
} from './errors';
import { boundedSignal } from './abort-signals';
import { apiKeySecrets, REDACTED, scrubSecrets, secretDetector } from '../secrets';
import { parseRetryAfter } from './retry-after';
import { formatMs } from '../kernel/duration';
import { KeepAliveGet, type GetAnswer } from './keep-alive-get';
import type { AgentJob, JobRef } from '../kernel/agent-job';
import { AgentJobSchema, describeSchemaProblem, ErrorBodySchema, toAgentJob } from './schemas';

export type { JobRef } from '../kernel/agent-job';
export const DEFAULT_SEND_PATH = '/v2/agent/{projectId}/job/{id}/message';
/** The vendor's description of the send does not show get-job (docs/VENDOR-CONTRACT.md); this is the vendor's public path, configurable in case it differs. */
export const DEFAULT_GET_JOB_PATH = '/v2/agent/{projectId}/job/{id}';

export interface AgentApiClientConfig {
  /** e.g. https://api.mintlify.com; a path prefix is kept. */
  baseUrl: string;
  apiKey: string;
  /** Each HTTP request is aborted after this long. */
  requestTimeoutMs: number;
  sendPath?: string;
  getJobPath?: string;
  /**
   * Which internal addresses the base URL may reach (AGENT_API_ALLOW_LOOPBACK, _PRIVATE_NETWORKS), checked at every
   * connection of both transports; without it (a client built in-process, the tests' simulator) nothing is checked.
   */
  addressGuard?: { policy: AddressPolicy; resolve?: Resolver } | null;
}

export interface MessageRequest extends JobRef {
  prompt: string;
  /** Sent as `Idempotency-Key`: the same for every attempt of one follow-up, so an API that honours it dedupes. */
  idempotencyKey?: string;
}

/**
 * The send succeeded (2xx). `job` is the job from the response; it is null when the body broke the contract, in
 * which case `responseProblem` says how. The message was accepted either way, so it must not be sent again.
 */
export interface SendResult {
  job: AgentJob | null;
  responseProblem?: string;
}

/** Encodes one path segment. `.` and `..` are refused because URL parsers fold them even when percent-encoded. */
export function encodePathSegment(name: string, value: string): string {
  if (value === '' || value === '.' || value === '..') {
    throw ApplicationFailure.create({
      type: AgentApiErrorType.BadRequest,
      message: `${name} ${JSON.stringify(value)} cannot be used in a URL path; pass the job's real id`,
      nonRetryable: true,
    });
  }
  return encodeURIComponent(value);
}

/** Fills `{projectId}` and `{id}` in a path template, each as one encoded segment. */
export function buildUrl(baseUrl: string, template: string, ref: JobRef): string {
  const path = template
    .replace('{projectId}', encodePathSegment('projectId', ref.projectId))
    .replace('{id}', encodePathSegment('jobId', ref.jobId));
  return `${baseUrl.replace(/\/+$/, '')}${path.startsWith('/') ? '' : '/'}${path}`;
}

export class AgentApiClient {
  private readonly secrets: string[];
  /** Whether a text holds the key in any form: job fields that do are not passed on (secrets.ts). */
  private readonly holdsSecret: (text: string) => boolean;
  /** The reads' transport; sends go through `fetch` (keep-alive-get.ts says why). */
  private readonly reads: KeepAliveGet;
  /** The sends' connections, through the address guard when there is one. */
  private readonly sendDispatcher: Agent | undefined;

  constructor(private readonly config: AgentApiClientConfig) {
    // The secret part too, in case an API echoes it without its prefix.
    this.secrets = apiKeySecrets(config.apiKey);
    this.holdsSecret = secretDetector(this.secrets);
    const guard = config.addressGuard;
    if (guard) {
      // An address literal never goes through a lookup: it is checked here, once.
      const refusal = urlTargetRefusal(new URL(config.baseUrl), guard.policy);
      if (refusal) throw new Error(`AGENT_API_BASE_URL: ${refusal}`);
    }
    this.reads = new KeepAliveGet(guard ? guardedLookup(guard.policy, guard.resolve) : undefined);
    this.sendDispatcher = guard ? guardedAgent(guard.policy, guard.resolve) : undefined;
  }

  /**
   * A key for `purpose` alone, derived from the API key (HMAC-SHA256): every worker with the same API key derives the
   * same one, and it reveals nothing of the API key.
   */
  derivedKey(purpose: string): Buffer {
    return createHmac('sha256', this.config.apiKey).update(purpose).digest();
  }

  /**
   * POSTs the follow-up message (docs/VENDOR-CONTRACT.md, "The send operation"). Not idempotent: a failure that may have come after the API took the
   * message is `AgentApiSendAmbiguous` (non-retryable), so only the workflow decides whether to send again.
   */
  async sendFollowUpMessage(request: MessageRequest, signal?: AbortSignal): Promise<SendResult> {
    const context: RequestContext = {
      operation: 'send follow-up message',
      projectId: request.projectId,
      jobId: request.jobId,
    };
    const url = buildUrl(this.config.baseUrl, this.config.sendPath ?? DEFAULT_SEND_PATH, request);
    const headers = request.idempotencyKey ? { 'Idempotency-Key': request.idempotencyKey } : undefined;
    const body = await this.request(
      url,
      { method: 'POST', body: JSON.stringify({ prompt: request.prompt }), headers },
      context,
      signal,
      request.prompt,
    );
    const parsed = parseJob(body, request.jobId, this.holdsSecret);
    return parsed.ok ? { job: parsed.job } : { job: null, responseProblem: parsed.problem };
  }

  /** GETs the job. A body that breaks the contract is a retryable `AgentApiInvalidResponse`. */
  async getAgentJob(ref: JobRef, signal?: AbortSignal): Promise<AgentJob> {
    const context: RequestContext = { operation: 'get job', ...ref };
    const url = buildUrl(this.config.baseUrl, this.config.getJobPath ?? DEFAULT_GET_JOB_PATH, ref);
    const body = await this.request(url, { method: 'GET' }, context, signal);
    const parsed = parseJob(body, ref.jobId, this.holdsSecret);
    if (!parsed.ok) {
      throw ApplicationFailure.create({
        type: AgentApiErrorType.InvalidResponse,
        message: `The agent API returned a job that breaks the contract for project '${ref.projectId}', job '${ref.jobId}': ${parsed.problem}`,
      });
    }
    return parsed.job;
  }

  private async request(
    url: string,
    init: { method: 'GET' | 'POST'; body?: string; headers?: Record<string, string> },
    context: RequestContext,
    cancel?: AbortSignal,
    /** The prompt a send carries, cut out of any error answer that quotes it. */
    prompt?: string,
  ): Promise<string> {
    // Cancelled before anything went out: nothing can have arrived.
    if (cancel?.aborted) throw cancel.reason;
    const bounded = boundedSignal(cancel, this.config.requestTimeoutMs);
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.config.apiKey}`,
      Accept: 'application/json',
      ...(init.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...init.headers,
    };
    let answer: GetAnswer;
    try {
      answer =
        init.method === 'GET'
          ? await this.reads.get(url, headers, bounded.signal)
          : await this.viaFetch(url, { method: init.method, body: init.body }, headers, bounded.signal);
    } catch (error) {
      const refused = refusedTarget(error);
      if (refused) {
        // Refused before any connection: nothing went out, so a send is certainly not delivered.
        throw ApplicationFailure.create({
          type: AgentApiErrorType.TargetRefused,
          message: `The agent API at AGENT_API_BASE_URL was not contacted: ${refused.message}`,
          nonRetryable: true,
          details: [{ operation: context.operation, delivery: 'not-delivered' } satisfies ApiFailureDetails],
        });
      }
      if (cancel?.aborted) {
        // A send cut off by cancellation or a stopping worker may already have reached the API: never "not delivered".
        if (context.operation === 'send follow-up message') {
          throw sendAmbiguous(
            `The send for project '${context.projectId}', job '${context.jobId}' was interrupted (${describeAbort(cancel.reason)}); the message may or may not have been taken.`,
            { operation: context.operation },
          );
        }
        throw cancel.reason;
      }
      throw this.transportFailure(error, bounded.timedOut(), context);
    } finally {
      bounded.release();
    }
    if (answer.status < 200 || answer.status > 299) {
      const retryAfterMs = parseRetryAfter(answer.retryAfter, Date.now());
      throw failureForStatus(answer.status, context, errorMessageOf(answer.text, this.secrets, prompt), retryAfterMs);
    }
    return answer.text;
  }

  private async viaFetch(
    url: string,
    init: { method: 'POST'; body?: string },
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<GetAnswer> {
    // Never follow a redirect: it would carry the key to another address. A 3xx becomes a rejection in `request`.
    const response = await fetch(url, {
      method: init.method,
      body: init.body,
      signal,
      redirect: 'manual',
      headers,
      ...(this.sendDispatcher ? { dispatcher: this.sendDispatcher } : {}),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text: await response.text() };
  }

  private transportFailure(error: unknown, timedOut: boolean, context: RequestContext): ApplicationFailure {
    const where = `${context.operation} for project '${context.projectId}', job '${context.jobId}'`;
    const isSend = context.operation === 'send follow-up message';
    if (timedOut) {
      const message = `The agent API did not answer ${where} within ${formatMs(this.config.requestTimeoutMs)}`;
      // The request may have been written and processed before we gave up.
      if (isSend) {
        return sendAmbiguous(`${message}; the message may or may not have been taken.`, {
          operation: context.operation,
          underlyingType: AgentApiErrorType.RequestTimeout,
        });
      }
      return ApplicationFailure.create({ type: AgentApiErrorType.RequestTimeout, message: `${message}; retrying.` });
    }
    const { code, description } = describeNetworkError(error);
    const reason = scrubSecrets(this.secrets)(description);
    if (isSend && !isCertainlyNotDelivered(code)) {
      // A reset or closed connection can come after the server processed the request.
      return sendAmbiguous(
        `The connection to the agent API broke during ${where} (${reason}); the message may or may not have been taken.`,
        {
          operation: context.operation,
          underlyingType: AgentApiErrorType.NetworkError,
        },
      );
    }
    const details: ApiFailureDetails = {
      operation: context.operation,
      ...(isSend ? { delivery: 'not-delivered' as const } : {}),
    };
    return ApplicationFailure.create({
      type: AgentApiErrorType.NetworkError,
      message: `Could not reach the agent API for ${where}: ${reason}. Retrying; check AGENT_API_BASE_URL if it persists.`,
      details: [details],
    });
  }
}

function parseJob(
  text: string,
  expectedId: string,
  holdsSecret: (text: string) => boolean,
): { ok: true; job: AgentJob } | { ok: false; problem: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'the body is not valid JSON' };
  }
  const result = AgentJobSchema.safeParse(json);
  if (!result.success) return { ok: false, problem: describeSchemaProblem(result.error) };
  if (result.data.id !== expectedId)
    return { ok: false, problem: `field 'id': another job's id (expected the job asked for)` };
  return { ok: true, job: withoutSecrets(toAgentJob(result.data), holdsSecret) };
}

/**
 * The job with every field that holds the key (in any form: a model name, a branch, a link's query) replaced by
 * [REDACTED]: the job is the activity's result, so it would otherwise be stored in history as the API sent it.
 */
function withoutSecrets(job: AgentJob, holdsSecret: (text: string) => boolean): AgentJob {
  const clean = <T extends string | null | undefined>(value: T): T =>
    typeof value === 'string' && holdsSecret(value) ? (REDACTED as T) : value;
  return {
    ...job,
    status: clean(job.status),
    prLink: clean(job.prLink),
    ...(job.model !== undefined ? { model: clean(job.model) } : {}),
    ...(job.createdAt !== undefined ? { createdAt: clean(job.createdAt) } : {}),
    ...(job.archivedAt !== undefined ? { archivedAt: clean(job.archivedAt) } : {}),
    ...(job.source !== undefined
      ? {
          source: {
            ...job.source,
            ...(job.source.repository !== undefined ? { repository: clean(job.source.repository) } : {}),
            ...(job.source.ref !== undefined ? { ref: clean(job.source.ref) } : {}),
          },
        }
      : {}),
  };
}

/**
 * The API's reason from a vendor error body (`{ "error": "..." }`), else a short excerpt of whatever came; redacted,
 * and without the prompt the request carried.
 */
function errorMessageOf(text: string, secrets: readonly string[], prompt: string | undefined): string {
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(text));
    if (parsed.success) return bodyExcerpt(parsed.data.error, secrets, undefined, prompt);
  } catch {
    // not JSON: fall through to the raw excerpt
  }
  return bodyExcerpt(text, secrets, undefined, prompt);
}

/** Why a request was aborted, in words: the SDK aborts with a CancelledFailure whose message is the reason. */
function describeAbort(reason: unknown): string {
  const message = reason instanceof Error ? reason.message : String(reason);
  return message === 'WORKER_SHUTDOWN' ? 'the worker is shutting down' : message || 'cancelled';
}

/**
 * The error's code and a description with it. `node:http` puts the code on the error; undici (fetch, the sends) hides
 * it in `cause`. Duck-typed: fetch's errors may come from another realm, where `instanceof Error` is false.
 */
function describeNetworkError(error: unknown): { code?: string; description: string } {
  const { message, code, cause } = (error ?? {}) as {
    message?: unknown;
    code?: unknown;
    cause?: { message?: unknown; code?: unknown };
  };
  if (typeof code === 'string') return { code, description: `${code} (${typeof message === 'string' ? message : ''})` };
  if (cause && typeof cause === 'object') {
    const causeMessage = typeof cause.message === 'string' ? cause.message : '';
    if (typeof cause.code === 'string') return { code: cause.code, description: `${cause.code} (${causeMessage})` };
    return { description: causeMessage || String(message) };
  }
  return { description: typeof message === 'string' ? message : String(error) };
}
