import { ActivityFailure, ApplicationFailure, RetryState } from '@temporalio/common';
import { confirmsFailure, confirmsTold, definiteFailureOf, isRetryAfterWithin } from '../../src/watch/watch-answer';

const told = { id: 'job-1', status: 'completed', prLink: 'https://github.com/acme/app/pull/7' };

test('confirmsTold: the own read confirms only the same job id, status and prLink', () => {
  expect(confirmsTold(told, { ...told, model: 'm', archivedAt: null })).toBe(true);
  expect(confirmsTold(told, { ...told, status: 'active', prLink: null })).toBe(false);
  expect(confirmsTold(told, { ...told, prLink: 'https://evil.example/pull/667' })).toBe(false);
  expect(confirmsTold(told, { ...told, id: 'job-2' })).toBe(false);
  expect(
    confirmsTold({ ...told, status: 'failed', prLink: null }, { id: 'job-1', status: 'failed', prLink: null }),
  ).toBe(true);
});

test('definiteFailureOf: only a non-retryable failure of the own read ends a wait', () => {
  const activityFailure = (cause: Error) =>
    new ActivityFailure('activity failed', 'pollAgentJob', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, 'w', cause);
  const notFound = ApplicationFailure.create({ type: 'AgentJobNotFound', message: 'no job', nonRetryable: true });
  expect(definiteFailureOf(activityFailure(notFound))).toBe(notFound);
  expect(definiteFailureOf(activityFailure(ApplicationFailure.retryable('503', 'AgentApiUnavailable')))).toBeNull();
  expect(definiteFailureOf(activityFailure(new Error('timeout')))).toBeNull();
  expect(definiteFailureOf(notFound)).toBeNull();
  expect(definiteFailureOf('garbage')).toBeNull();
});

test('confirmsFailure: the own read fails the way the watcher told, or breaks the contract once more', () => {
  const failed = (type: string, nonRetryable = false) =>
    new ActivityFailure(
      'activity failed',
      'pollAgentJob',
      '1',
      RetryState.MAXIMUM_ATTEMPTS_REACHED,
      'w',
      ApplicationFailure.create({ type, message: type, nonRetryable }),
    );
  expect(confirmsFailure('AgentJobNotFound', failed('AgentJobNotFound', true))).toBe(true);
  expect(confirmsFailure('AgentApiContractViolation', failed('AgentApiInvalidResponse'))).toBe(true);
  expect(confirmsFailure('AgentJobNotFound', failed('AgentApiUnavailable'))).toBe(false);
  expect(confirmsFailure('AgentJobNotFound', failed('AgentApiInvalidResponse'))).toBe(false);
  expect(confirmsFailure('AgentJobNotFound', new Error('AgentJobNotFound'))).toBe(false);
});

test('isRetryAfterWithin: an own read asked to wait less than the follow-up has left failed only for now', () => {
  const asked = (retryAfterMs: number) =>
    new ActivityFailure(
      'activity failed',
      'pollAgentJob',
      '1',
      RetryState.NON_RETRYABLE_FAILURE,
      'w',
      ApplicationFailure.create({
        type: 'RetryAfterPastDeadline',
        message: 'asked to wait',
        details: [{ retryAfterMs }],
        nonRetryable: true,
      }),
    );
  const nowMs = 1_000_000;
  expect(isRetryAfterWithin(asked(1_000), nowMs + 600_000, nowMs)).toBe(true);
  expect(isRetryAfterWithin(asked(3_600_000), nowMs + 600_000, nowMs)).toBe(false);
  const notFound = ApplicationFailure.create({ type: 'AgentJobNotFound', message: 'no job', nonRetryable: true });
  expect(
    isRetryAfterWithin(
      new ActivityFailure('activity failed', 'pollAgentJob', '1', RetryState.NON_RETRYABLE_FAILURE, 'w', notFound),
      nowMs + 600_000,
      nowMs,
    ),
  ).toBe(false);
});
