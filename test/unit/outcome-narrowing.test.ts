/**
 * The outcome narrows by `kind` in an if-chain as it does in a switch: this file does not compile (npm run typecheck)
 * if a kind that did not end could still be one that ended, or the other way round.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure } from '@temporalio/common';
import { endedOutcome, failedOutcome, type FollowUpFailureType, type FollowUpOutcome } from '../../src/client/outcome';
import type { FollowUpResult } from '../../src/kernel/types';

function say(outcome: FollowUpOutcome): string {
  if (outcome.kind === 'completed') return `completed: ${outcome.result.prLink ?? 'no pull request'}`;
  if (outcome.kind === 'failed' || outcome.kind === 'archived') return `the job ended ${outcome.result.outcome}`;
  // Every kind that ended is excluded above: what is left has a failure type and a message.
  const type: FollowUpFailureType = outcome.type;
  return `${outcome.kind} (${type}): ${outcome.message}`;
}

const result: FollowUpResult = {
  job: {
    id: 'job-1',
    status: 'completed',
    source: { repository: 'https://github.com/acme/p', ref: 'main' },
    prLink: 'https://github.com/acme/p/pull/7',
    createdAt: '2026-11-25T00:00:00.000Z',
    archivedAt: null,
  },
  outcome: 'completed',
  prLink: 'https://github.com/acme/p/pull/7',
  polls: 3,
  runs: 1,
  sentAt: '2026-11-25T00:00:01.000Z',
  finishedAt: '2026-11-25T00:01:00.000Z',
  sendAttempts: 1,
  delivery: 'response',
};

test('an if-chain on kind narrows to the result or to the failure', () => {
  expect(say(endedOutcome(result))).toBe('completed: https://github.com/acme/p/pull/7');
  expect(say(endedOutcome({ ...result, outcome: 'failed', prLink: null }))).toBe('the job ended failed');
  const timedOut = new WorkflowFailedError(
    'failed',
    ApplicationFailure.create({ type: 'FollowUpTimedOut', message: 'did not end within 10m', nonRetryable: true }),
    RetryState.NON_RETRYABLE_FAILURE,
  );
  expect(say(failedOutcome(timedOut))).toBe('timed-out (FollowUpTimedOut): did not end within 10m');
});

test('a failure with no reason of its own is told by its whole chain, not as "Workflow execution failed"', () => {
  const lost = new WorkflowFailedError(
    'Workflow execution failed',
    new ActivityFailure(
      'Activity task timed out',
      'sendFollowUpMessage',
      '7',
      RetryState.MAXIMUM_ATTEMPTS_REACHED,
      'worker',
      new TimeoutFailure(undefined, undefined, 'HEARTBEAT'),
    ),
    RetryState.NON_RETRYABLE_FAILURE,
  );
  expect(say(failedOutcome(lost))).toBe(
    'error (WorkflowFailed): Workflow execution failed: activity sendFollowUpMessage failed: timed out (HEARTBEAT)',
  );
});
