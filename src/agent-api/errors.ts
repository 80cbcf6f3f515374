/**
 * How the agent API's answers become Temporal failures. The vendor's description shows no errors (docs/VENDOR-CONTRACT.md, "Errors and limits"), so this is our decision,
 * written in docs/RELIABILITY.md ("Failure types"): definite rejections are non-retryable with a message that says what to fix; rate limits,
 * server errors and network trouble are retried.
 */
import { ApplicationFailure } from '@temporalio/common';
import { scrubSecrets, secretForms } from '../secrets';

/** Stable failure `type` names: callers and tests match on these, so never rename one. */
export const AgentApiErrorType = {
  BadRequest: 'AgentApiBadRequest',
  Unauthorized: 'AgentApiUnauthorized',
  Forbidden: 'AgentApiForbidden',
  JobNotFound: 'AgentJobNotFound',
  Rejected: 'AgentApiRejected',
  RateLimited: 'AgentApiRateLimited',
  ServerError: 'AgentApiServerError',
  NetworkError: 'AgentApiNetworkError',
  RequestTimeout: 'AgentApiRequestTimeout',
  InvalidResponse: 'AgentApiInvalidResponse',
  /** A send failed in a way that leaves open whether the API took the message; only the workflow may decide. */
  SendAmbiguous: 'AgentApiSendAmbiguous',
  /** The base URL reached an address the workers refuse (address-guard.ts); nothing was sent. */
  TargetRefused: 'AgentApiTargetRefused',
} as const;
export type AgentApiErrorType = (typeof AgentApiErrorType)[keyof typeof AgentApiErrorType];

/** The failure types after which retrying can never help. */
export const NON_RETRYABLE_API_ERRORS: readonly AgentApiErrorType[] = [
  AgentApiErrorType.BadRequest,
  AgentApiErrorType.Unauthorized,
  AgentApiErrorType.Forbidden,
  AgentApiErrorType.JobNotFound,
  AgentApiErrorType.Rejected,
];

/** What every API failure carries in `details[0]`, so the workflow can decide without parsing messages. */
export interface ApiFailureDetails {
  operation: RequestContext['operation'];
  status?: number;
  retryAfterMs?: number;
  /** For sends: whether the message certainly did not reach the API, or may have. */
  delivery?: 'not-delivered' | 'ambiguous';
  /** For `AgentApiSendAmbiguous`: the failure type it would otherwise have had. */
  underlyingType?: AgentApiErrorType;
}

export interface RequestContext {
  operation: 'send follow-up message' | 'get job';
  projectId: string;
  jobId: string;
}

/** What replaces the prompt when an API error quotes it. */
export const PROMPT_ECHO = '[the prompt]';

/**
 * A short, redacted excerpt of an error body: enough to see the API's reason, never a dump, never the key in any form,
 * and never the prompt it may quote (`400 {"error":"invalid prompt: ..."}`): failure messages are in clear in the
 * history unless payload encryption encodes them too (docs/ENCRYPTION.md).
 */
export function bodyExcerpt(body: string, secrets: readonly string[], max = 300, prompt?: string): string {
  const flat = withoutPrompt(scrubSecrets(secrets)(body), prompt).replace(/\s+/g, ' ').trim();
  if (flat === '') return '';
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** The text with every common form of the prompt (as written, JSON-escaped, URL-encoded, base64) cut out. */
function withoutPrompt(text: string, prompt: string | undefined): string {
  if (prompt === undefined) return text;
  // Whitespace-flattened too: the excerpt folds runs of whitespace, and an API may have done so before quoting.
  const flatPrompt = prompt.replace(/\s+/g, ' ').trim();
  // Cutting out a prompt of a few letters would shred ordinary words (as for secrets, secrets.ts).
  if (flatPrompt.length < 4) return text;
  const forms = secretForms(flatPrompt === prompt ? [prompt] : [prompt, flatPrompt]);
  let out = text;
  for (const form of forms) if (out.includes(form)) out = out.split(form).join(PROMPT_ECHO);
  const flatOut = out.replace(/\s+/g, ' ');
  return flatOut.includes(flatPrompt) ? flatOut.split(flatPrompt).join(PROMPT_ECHO) : out;
}

/** Maps a non-2xx answer to a failure whose message says what is wrong and how to fix it. */
export function failureForStatus(
  status: number,
  context: RequestContext,
  excerpt: string,
  retryAfterMs: number | undefined,
): ApplicationFailure {
  const where = `project '${context.projectId}', job '${context.jobId}'`;
  const reason = excerpt ? ` The API said: ${excerpt}` : '';
  // Every answer handled here except the ambiguous 5xx below came from an API that did not process the send.
  const details: ApiFailureDetails[] = [
    {
      status,
      operation: context.operation,
      retryAfterMs,
      ...(context.operation === 'send follow-up message' ? { delivery: 'not-delivered' as const } : {}),
    },
  ];
  const permanent = (type: AgentApiErrorType, message: string) =>
    ApplicationFailure.create({ type, message: `${message}${reason}`, nonRetryable: true, details });

  const refused = refusalFor(status, context.operation, where);
  if (refused) return permanent(refused.type, refused.message);
  if (status === 429) {
    return ApplicationFailure.create({
      type: AgentApiErrorType.RateLimited,
      message:
        `The agent API is rate limiting ${context.operation} on ${where} (HTTP 429; the vendor documents 100 uses ` +
        `per project per hour). Retrying ${retryAfterMs !== undefined ? `after ${Math.ceil(retryAfterMs / 1000)}s as asked` : 'with backoff'}.${reason}`,
      nextRetryDelay: retryAfterMs,
      details,
    });
  }
  if (status === 408) {
    // The server gave up waiting for our request: nothing was processed, so trying again is safe.
    return ApplicationFailure.create({
      type: AgentApiErrorType.RequestTimeout,
      message: `The agent API timed out reading ${context.operation} for ${where} (HTTP 408); retrying.${reason}`,
      nextRetryDelay: retryAfterMs,
      details,
    });
  }
  if (status >= 500) return serverFailure(status, context, { where, reason, retryAfterMs, details });
  return permanent(
    AgentApiErrorType.Rejected,
    `The agent API refused ${context.operation} on ${where} with HTTP ${status}. ` +
      'This status is not one the client retries; check the request and the job state.',
  );
}

/**
 * A 5xx answer. A 503 with Retry-After is the server asking us to come back: it did not process the request. Any other
 * 5xx may have come after the work was done, so for a send it is ambiguous (see docs/RELIABILITY.md, "Never sending
 * twice").
 */
function serverFailure(
  status: number,
  context: RequestContext,
  {
    where,
    reason,
    retryAfterMs,
    details,
  }: { where: string; reason: string; retryAfterMs: number | undefined; details: ApiFailureDetails[] },
): ApplicationFailure {
  if (context.operation === 'send follow-up message' && !(status === 503 && retryAfterMs !== undefined)) {
    return sendAmbiguous(
      `The agent API failed with HTTP ${status} on send follow-up message for ${where}; the message may or may not have been taken.${reason}`,
      { status, operation: context.operation, retryAfterMs, underlyingType: AgentApiErrorType.ServerError },
    );
  }
  return ApplicationFailure.create({
    type: AgentApiErrorType.ServerError,
    message: `The agent API failed with HTTP ${status} on ${context.operation} for ${where}; retrying with backoff.${reason}`,
    nextRetryDelay: retryAfterMs,
    details,
  });
}

/** What the API refused for good (the request itself is wrong, or the key, or the job), in words that say the fix. */
function refusalFor(
  status: number,
  operation: string,
  where: string,
): { type: AgentApiErrorType; message: string } | null {
  if (status >= 300 && status < 400) {
    return {
      type: AgentApiErrorType.Rejected,
      message:
        `The agent API answered ${operation} for ${where} with a redirect (HTTP ${status}), which is never ` +
        'followed because it would carry the API key elsewhere. Set AGENT_API_BASE_URL to the final address.',
    };
  }
  if (status === 400 || status === 422) {
    return {
      type: AgentApiErrorType.BadRequest,
      message:
        `The agent API rejected the ${operation} request for ${where} as invalid (HTTP ${status}). ` +
        'Check the prompt (at least 1 character) and the ids; resending the same request will not help.',
    };
  }
  if (status === 401) {
    return {
      type: AgentApiErrorType.Unauthorized,
      message:
        `The agent API did not accept the API key (HTTP 401) for ${operation} on ${where}. ` +
        "Set AGENT_API_KEY in the worker's environment to a valid admin key from the dashboard's API keys page, " +
        'then restart the worker.',
    };
  }
  if (status === 403) {
    return {
      type: AgentApiErrorType.Forbidden,
      message: `The API key may not ${operation} on ${where} (HTTP 403). Use an admin key that belongs to this project.`,
    };
  }
  if (status === 404) {
    return {
      type: AgentApiErrorType.JobNotFound,
      message:
        `Agent job not found: ${where} (HTTP 404). Check the project and job ids; ` +
        'a follow-up can only be sent to a job that already exists.',
    };
  }
  return null;
}

/** The non-retryable failure for a send whose outcome is unknown: Temporal must never resend it blindly. */
export function sendAmbiguous(message: string, details: Omit<ApiFailureDetails, 'delivery'>): ApplicationFailure {
  return ApplicationFailure.create({
    type: AgentApiErrorType.SendAmbiguous,
    message,
    nonRetryable: true,
    details: [{ ...details, delivery: 'ambiguous' } satisfies ApiFailureDetails],
  });
}

/** Connection errors that happen before a request can reach the server: the message was certainly not delivered. */
export function isCertainlyNotDelivered(code: string | undefined): boolean {
  if (!code) return false;
  return (
    [
      'ECONNREFUSED',
      'ENOTFOUND',
      'EAI_AGAIN',
      'EHOSTUNREACH',
      'ENETUNREACH',
      'UND_ERR_CONNECT_TIMEOUT',
      'EPROTO',
    ].includes(code) ||
    /^(CERT_|ERR_TLS_|ERR_SSL_)/.test(code) ||
    [
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    ].includes(code)
  );
}
