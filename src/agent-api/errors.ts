/**
 * How the agent API's answers become Temporal failures. The seed shows no errors (§7), so this is our decision,
 * written in the README: definite rejections are non-retryable with a message that says what to fix; rate limits,
 * server errors and network trouble are retried.
 */
import { ApplicationFailure } from '@temporalio/common';

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

export interface RequestContext {
  operation: 'send follow-up message' | 'get job';
  projectId: string;
  jobId: string;
}

/** Replaces every occurrence of each secret, so an API that echoes the key cannot leak it into history or logs. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[REDACTED]');
  }
  return out;
}

/** A short, redacted excerpt of an error body: enough to see the API's reason, never a dump. */
export function bodyExcerpt(body: string, secrets: readonly string[], max = 300): string {
  const flat = redact(body, secrets).replace(/\s+/g, ' ').trim();
  if (flat === '') return '';
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
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
  const details = [{ status, operation: context.operation }];
  const permanent = (type: AgentApiErrorType, message: string) =>
    ApplicationFailure.create({ type, message: `${message}${reason}`, nonRetryable: true, details });

  if (status === 400 || status === 422) {
    return permanent(
      AgentApiErrorType.BadRequest,
      `The agent API rejected the ${context.operation} request for ${where} as invalid (HTTP ${status}). ` +
        'Check the prompt (at least 1 character) and the ids; resending the same request will not help.',
    );
  }
  if (status === 401) {
    return permanent(
      AgentApiErrorType.Unauthorized,
      `The agent API did not accept the API key (HTTP 401) for ${context.operation} on ${where}. ` +
        "Set AGENT_API_KEY in the worker's environment to a valid admin key from the dashboard's API keys page, " +
        'then restart the worker.',
    );
  }
  if (status === 403) {
    return permanent(
      AgentApiErrorType.Forbidden,
      `The API key may not ${context.operation} on ${where} (HTTP 403). ` +
        'Use an admin key that belongs to this project.',
    );
  }
  if (status === 404) {
    return permanent(
      AgentApiErrorType.JobNotFound,
      `Agent job not found: ${where} (HTTP 404). Check the project and job ids; ` +
        'a follow-up can only be sent to a job that already exists.',
    );
  }
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
  if (status >= 500) {
    return ApplicationFailure.create({
      type: AgentApiErrorType.ServerError,
      message: `The agent API failed with HTTP ${status} on ${context.operation} for ${where}; retrying with backoff.${reason}`,
      nextRetryDelay: retryAfterMs,
      details,
    });
  }
  return permanent(
    AgentApiErrorType.Rejected,
    `The agent API refused ${context.operation} on ${where} with HTTP ${status}. ` +
      'This status is not one the client retries; check the request and the job state.',
  );
}
