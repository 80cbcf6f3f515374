import type { ApplicationFailure } from '@temporalio/common';
import {
  AgentApiErrorType,
  NON_RETRYABLE_API_ERRORS,
  bodyExcerpt,
  failureForStatus,
  type RequestContext,
} from '../../src/agent-api/errors';

const send: RequestContext = { operation: 'send follow-up message', projectId: 'proj-errors', jobId: 'job-errors' };
const get: RequestContext = { operation: 'get job', projectId: 'proj-errors', jobId: 'job-errors' };

describe('bodyExcerpt', () => {
  test('runs of white space, including new lines, fold into single spaces and the ends are trimmed', () => {
    expect(bodyExcerpt('  {\n  "error":\t"bad"\r\n}  ', [])).toBe('{ "error": "bad" }');
  });

  test('an empty or blank body gives an empty excerpt', () => {
    expect(bodyExcerpt('', [])).toBe('');
    expect(bodyExcerpt(' \n\t ', [])).toBe('');
  });

  test('a long body is cut at the maximum and marked with an ellipsis', () => {
    const excerpt = bodyExcerpt('a'.repeat(500), []);
    expect(excerpt).toBe(`${'a'.repeat(300)}…`);
  });

  test('a body exactly at the maximum is not marked as cut', () => {
    expect(bodyExcerpt('b'.repeat(20), [], 20)).toBe('b'.repeat(20));
    expect(bodyExcerpt('b'.repeat(21), [], 20)).toBe(`${'b'.repeat(20)}…`);
  });

  test('secrets are redacted before the body is cut, so no fragment of a key survives at the edge', () => {
    const key = 'mint_test_unit_key_0001';
    const excerpt = bodyExcerpt(`${'x'.repeat(290)}${key}`, [key], 300);
    expect(excerpt).toBe(`${'x'.repeat(290)}[REDACTED]`);
    expect(excerpt).not.toContain('mint_test');
  });
});

/** Checks the failure's stable type and retryability in one place. */
function expectFailure(failure: ApplicationFailure, type: string, nonRetryable: boolean): void {
  expect(failure.type).toBe(type);
  expect(failure.nonRetryable).toBe(nonRetryable);
}

describe('failureForStatus', () => {
  test.each([400, 422])('HTTP %i is a non-retryable bad request that says to check the prompt and ids', (status) => {
    const failure = failureForStatus(status, send, '', undefined);
    expectFailure(failure, 'AgentApiBadRequest', true);
    expect(failure.message).toContain(`HTTP ${status}`);
    expect(failure.message).toContain('Check the prompt');
    expect(failure.message).toContain("project 'proj-errors', job 'job-errors'");
  });

  test('HTTP 401 is a non-retryable unauthorized failure that says to set AGENT_API_KEY', () => {
    const failure = failureForStatus(401, get, '', undefined);
    expectFailure(failure, 'AgentApiUnauthorized', true);
    expect(failure.message).toContain('Set AGENT_API_KEY');
    expect(failure.message).toContain('restart the worker');
  });

  test('HTTP 403 is a non-retryable forbidden failure that says to use a key of this project', () => {
    const failure = failureForStatus(403, send, '', undefined);
    expectFailure(failure, 'AgentApiForbidden', true);
    expect(failure.message).toContain('Use an admin key that belongs to this project');
  });

  test('HTTP 404 is a non-retryable job-not-found failure that says to check the ids', () => {
    const failure = failureForStatus(404, get, '', undefined);
    expectFailure(failure, 'AgentJobNotFound', true);
    expect(failure.message).toContain('Check the project and job ids');
    expect(failure.message).toContain("project 'proj-errors', job 'job-errors'");
  });

  test('HTTP 408 means the server gave up reading the request, so it is retried', () => {
    const failure = failureForStatus(408, send, '', 2_000);
    expectFailure(failure, 'AgentApiRequestTimeout', false);
    expect(failure.nextRetryDelay).toBe(2_000);
  });

  test('HTTP 409 is a non-retryable rejection that says to check the job state', () => {
    const failure = failureForStatus(409, send, '', undefined);
    expectFailure(failure, 'AgentApiRejected', true);
    expect(failure.message).toContain('HTTP 409');
    expect(failure.message).toContain('check the request and the job state');
  });

  test('HTTP 429 with a Retry-After is retryable after exactly that delay', () => {
    const failure = failureForStatus(429, get, '', 7_000);
    expectFailure(failure, 'AgentApiRateLimited', false);
    expect(failure.nextRetryDelay).toBe(7_000);
    expect(failure.message).toContain('Retrying after 7s as asked');
  });

  test('HTTP 429 without a Retry-After is retryable with the normal backoff', () => {
    const failure = failureForStatus(429, get, '', undefined);
    expectFailure(failure, 'AgentApiRateLimited', false);
    expect(failure.nextRetryDelay).toBeUndefined();
    expect(failure.message).toContain('Retrying with backoff');
  });

  test('a Retry-After of a fraction of a second is shown rounded up to whole seconds', () => {
    expect(failureForStatus(429, get, '', 1_500).message).toContain('after 2s');
  });

  test.each([500, 503])('HTTP %i is a retryable server error', (status) => {
    const failure = failureForStatus(status, get, '', undefined);
    expectFailure(failure, 'AgentApiServerError', false);
    expect(failure.message).toContain(`HTTP ${status}`);
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  test('a server error with a Retry-After honours it', () => {
    expect(failureForStatus(503, get, '', 30_000).nextRetryDelay).toBe(30_000);
  });

  test('the excerpt of the API body is appended to the message', () => {
    const failure = failureForStatus(400, send, '{"error":"prompt too long"}', undefined);
    expect(failure.message).toMatch(/The API said: \{"error":"prompt too long"\}$/);
  });

  test('without an excerpt the message does not mention what the API said', () => {
    expect(failureForStatus(404, get, '', undefined).message).not.toContain('The API said');
  });

  test('the details carry the status, the operation and the Retry-After delay', () => {
    expect(failureForStatus(503, get, '', 4_000).details).toEqual([
      { status: 503, operation: 'get job', retryAfterMs: 4_000 },
    ]);
  });

  test.each([500, 502, 504])(
    'HTTP %i on a send is ambiguous: non-retryable, for the workflow to reconcile',
    (status) => {
      const failure = failureForStatus(status, send, '', undefined);
      expectFailure(failure, 'AgentApiSendAmbiguous', true);
      expect(failure.details).toEqual([
        {
          status,
          operation: 'send follow-up message',
          retryAfterMs: undefined,
          delivery: 'ambiguous',
          underlyingType: 'AgentApiServerError',
        },
      ]);
      expect(failure.message).toContain('may or may not have been taken');
    },
  );

  test('HTTP 503 without Retry-After on a send is ambiguous, with Retry-After it is a plain retryable server error', () => {
    expectFailure(failureForStatus(503, send, '', undefined), 'AgentApiSendAmbiguous', true);
    expectFailure(failureForStatus(503, send, '', 1_000), 'AgentApiServerError', false);
  });

  test('a redirect is a non-retryable rejection that never carries the key elsewhere', () => {
    const failure = failureForStatus(302, get, '', undefined);
    expectFailure(failure, 'AgentApiRejected', true);
    expect(failure.message).toContain('Set AGENT_API_BASE_URL to the final address');
  });

  test('the message names the operation that failed', () => {
    expect(failureForStatus(401, send, '', undefined).message).toContain('send follow-up message');
    expect(failureForStatus(401, get, '', undefined).message).toContain('get job');
  });

  test('the non-retryable list matches the types the mapping marks non-retryable', () => {
    const statuses = [400, 401, 403, 404, 409, 422, 429, 500, 503];
    const nonRetryableTypes = new Set(
      statuses
        .map((status) => failureForStatus(status, get, '', undefined))
        .filter((f) => f.nonRetryable)
        .map((f) => f.type),
    );
    expect([...nonRetryableTypes].sort()).toEqual([...NON_RETRYABLE_API_ERRORS].sort());
  });

  test('the stable type names do not change', () => {
    expect(AgentApiErrorType).toEqual({
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
      SendAmbiguous: 'AgentApiSendAmbiguous',
      TargetRefused: 'AgentApiTargetRefused',
    });
  });
});
