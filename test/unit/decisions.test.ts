import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  RetryState,
  TerminatedFailure,
  TimeoutFailure,
  TimeoutType,
} from '@temporalio/common';
import type { JobState } from '../../src/kernel/agent-job';
import {
  classifySendFailure,
  decideDelivery,
  RECONCILE_DELAY_MS,
  reconcilePauseMs,
  requestLeft,
  requestStartOf,
  whatTheReadsShowed,
} from '../../src/workflows/follow-up/decisions';
import { judgeRead, watchAfter, type ResultWatch } from '../../src/kernel/result-rule';

/** A failed send as the workflow sees it: Temporal's ActivityFailure around the activity's own failure. */
function sendFailed(cause: Error): ActivityFailure {
  return new ActivityFailure(
    'Activity task failed',
    'sendFollowUpMessage',
    '7',
    RetryState.MAXIMUM_ATTEMPTS_REACHED,
    'worker-1',
    cause,
  );
}

/** When the request of these sends left: the activity adds it to every failure after it. */
const LEFT_AT = 1_700_000_000_000;

function apiFailure(
  type: string,
  options: { nonRetryable?: boolean; delivery?: 'not-delivered' | 'ambiguous'; left?: boolean } = {},
): ApplicationFailure {
  const details = {
    ...(options.delivery ? { operation: 'send follow-up message', delivery: options.delivery } : {}),
    ...(options.left === false ? {} : { requestStartedAtMs: LEFT_AT }),
  };
  return ApplicationFailure.create({
    type,
    message: type,
    nonRetryable: options.nonRetryable ?? false,
    details: [details],
  });
}

function timedOut(type: TimeoutType, lastHeartbeat?: unknown): TimeoutFailure {
  return new TimeoutFailure(`activity ${type} timeout`, lastHeartbeat, type);
}

describe('classifySendFailure: how a failed single-attempt send leaves the message', () => {
  test.each<[string, unknown, ReturnType<typeof classifySendFailure>]>([
    [
      'a 429, marked not delivered by the HTTP client',
      sendFailed(apiFailure('AgentApiRateLimited', { delivery: 'not-delivered' })),
      'not-delivered',
    ],
    [
      'a refused connection, marked not delivered',
      sendFailed(apiFailure('AgentApiNetworkError', { delivery: 'not-delivered' })),
      'not-delivered',
    ],
    [
      'a 404, not delivered and not retryable',
      sendFailed(apiFailure('AgentJobNotFound', { nonRetryable: true, delivery: 'not-delivered' })),
      'final',
    ],
    [
      'a reset connection, marked ambiguous',
      sendFailed(apiFailure('AgentApiSendAmbiguous', { nonRetryable: true, delivery: 'ambiguous' })),
      'ambiguous',
    ],
    [
      "the SDK's retryable WorkerShutdown after the request left",
      sendFailed(apiFailure('WorkerShutdown')),
      'ambiguous',
    ],
    ['any other failure after the request left, without a delivery mark', sendFailed(apiFailure('Error')), 'ambiguous'],
    [
      'a failure without the time its request left (refused before it)',
      sendFailed(apiFailure('SendNotRecorded', { nonRetryable: true, left: false })),
      'not-delivered',
    ],
    [
      'a worker lost mid-send (start-to-close timeout after the record)',
      sendFailed(timedOut(TimeoutType.START_TO_CLOSE, { requestStartedAtMs: LEFT_AT })),
      'ambiguous',
    ],
    [
      'a worker lost mid-send (heartbeat timeout after the record)',
      sendFailed(timedOut(TimeoutType.HEARTBEAT, { requestStartedAtMs: LEFT_AT })),
      'ambiguous',
    ],
    [
      'a send timed out on its heartbeat before any record (a saturated worker)',
      sendFailed(timedOut(TimeoutType.HEARTBEAT)),
      'not-delivered',
    ],
    [
      'a send that timed out start-to-close before any record',
      sendFailed(timedOut(TimeoutType.START_TO_CLOSE)),
      'not-delivered',
    ],
    [
      'a send still queued when it timed out (the server reports schedule-to-start)',
      sendFailed(timedOut(TimeoutType.SCHEDULE_TO_START)),
      'not-delivered',
    ],
    [
      'a send whose whole schedule-to-close ran out after its record',
      sendFailed(timedOut(TimeoutType.SCHEDULE_TO_CLOSE, { requestStartedAtMs: LEFT_AT })),
      'ambiguous',
    ],
    ['a failure that is not an ActivityFailure at all', new Error('something else'), 'ambiguous'],
    ['the follow-up being cancelled', new CancelledFailure('cancelled'), 'final'],
    ['the send activity cancelled with it', sendFailed(new CancelledFailure('cancelled')), 'final'],
  ])('%s is %s', (_title, error, kind) => {
    expect(classifySendFailure(error)).toBe(kind);
  });
});

describe('requestLeft: no record of the request means nothing was sent', () => {
  test.each<[string, unknown, boolean]>([
    ['a heartbeat timeout with no heartbeat on record', sendFailed(timedOut(TimeoutType.HEARTBEAT)), false],
    [
      'a heartbeat timeout whose last heartbeat recorded the request',
      sendFailed(timedOut(TimeoutType.HEARTBEAT, { requestStartedAtMs: LEFT_AT })),
      true,
    ],
    ['a start-to-close timeout with no record', sendFailed(timedOut(TimeoutType.START_TO_CLOSE)), false],
    [
      'a start-to-close timeout with the record',
      sendFailed(timedOut(TimeoutType.START_TO_CLOSE, { requestStartedAtMs: LEFT_AT })),
      true,
    ],
    ['a schedule-to-start timeout', sendFailed(timedOut(TimeoutType.SCHEDULE_TO_START)), false],
    [
      'a last heartbeat that says nothing left (cancelled before the request)',
      sendFailed(timedOut(TimeoutType.HEARTBEAT, { request: 'not-sent' })),
      false,
    ],
    ['a last heartbeat that is not an object', sendFailed(timedOut(TimeoutType.HEARTBEAT, 'started')), false],
    [
      'an expired lease (not-sent, no time)',
      sendFailed(apiFailure('SendSlotExpired', { nonRetryable: true, left: false })),
      false,
    ],
    [
      'a failure whose details say not-sent even with a time (the record made, the lease gone)',
      sendFailed(
        ApplicationFailure.create({
          type: 'SendSlotExpired',
          details: [{ request: 'not-sent', requestStartedAtMs: LEFT_AT }],
        }),
      ),
      false,
    ],
    [
      'an API failure after the request left',
      sendFailed(apiFailure('AgentApiServerError', { delivery: 'ambiguous' })),
      true,
    ],
    [
      'a failure without details (not one the send makes after its request)',
      sendFailed(ApplicationFailure.create({ type: 'ActivityPause', message: 'Activity paused' })),
      false,
    ],
    ['the send cancelled (only ever before its request)', sendFailed(new CancelledFailure('cancelled')), false],
    ['the follow-up cancelled before the send was scheduled', new CancelledFailure('cancelled'), false],
    ['a failure that is not an ActivityFailure: it may have', new Error('something else'), true],
    [
      'an ActivityFailure of another cause (terminated): it may have',
      sendFailed(new TerminatedFailure('terminated')),
      true,
    ],
  ])('%s: %s', (_title, error, left) => {
    expect(requestLeft(error)).toBe(left);
  });

  test('the time a request left comes from its report: the failure details, or the last heartbeat', () => {
    expect(requestStartOf(sendFailed(apiFailure('AgentApiServerError')))).toBe(LEFT_AT);
    expect(requestStartOf(sendFailed(timedOut(TimeoutType.HEARTBEAT, { requestStartedAtMs: LEFT_AT })))).toBe(LEFT_AT);
    expect(requestStartOf(sendFailed(timedOut(TimeoutType.HEARTBEAT)))).toBeUndefined();
  });
});

const state = (status: string, prLink: string | null = null, archivedAt: string | null = null): JobState => ({
  status,
  prLink,
  archivedAt,
});

describe('decideDelivery after an ambiguous send', () => {
  test.each([
    ['a finished job that turned active took the message', state('completed', 'pr/1'), state('active'), 'delivered'],
    ['a failed job that turned active took the message', state('failed'), state('active'), 'delivered'],
    [
      'a job that ended again with a new pull request took it',
      state('completed', 'pr/1'),
      state('completed', 'pr/2'),
      'delivered',
    ],
    ['a job that went from failed to completed took it', state('failed'), state('completed'), 'delivered'],
    [
      'a finished job exactly as before did not take it',
      state('completed', 'pr/1'),
      state('completed', 'pr/1'),
      'not-delivered',
    ],
    ['a failed job exactly as before did not take it', state('failed'), state('failed'), 'not-delivered'],
    ['a job busy before cannot tell', state('active'), state('active'), 'unknown'],
    ['a busy job that finished cannot tell either', state('active'), state('completed', 'pr/3'), 'unknown'],
    [
      'an archived job stays archived either way',
      state('archived', null, 't'),
      state('archived', null, 't'),
      'unknown',
    ],
    ['an undocumented status before cannot tell', state('queued'), state('active'), 'unknown'],
    ['an undocumented status after cannot tell', state('completed'), state('queued'), 'unknown'],
  ] as const)('%s', (_name, before, after, decision) => {
    expect(decideDelivery(before, after)).toBe(decision);
  });

  test('an unchanged job read long after the attempt proves nothing: the agent may have finished the same way', () => {
    expect(decideDelivery(state('failed'), state('failed'), 5_000)).toBe('not-delivered');
    expect(decideDelivery(state('failed'), state('failed'), 31_000)).toBe('unknown');
  });
});

describe('whatTheReadsShowed: the words of a "delivery unknown"', () => {
  test('an unchanged job read past the trust window says when it was read and why that cannot decide', () => {
    expect(whatTheReadsShowed(state('completed', 'pr/1'), state('completed', 'pr/1'), 36_240)).toBe(
      'the job was read 36.2 s after the request, completed as before it: past 30 s an agent may have taken the ' +
        'message and ended the same way. ',
    );
  });

  test('a job the rule cannot judge names its status before and after; no read names the policy', () => {
    expect(whatTheReadsShowed(state('archived', null, 't'), state('archived', null, 't'), 4_000)).toBe(
      'the job (status archived, before the send archived) cannot show whether it was taken. ',
    );
    expect(whatTheReadsShowed(state('completed'), state('queued'), 40_000)).toContain('status queued');
    expect(whatTheReadsShowed(state('completed'), null, null)).toBe('the policy is not to resend. ');
  });
});

describe('reconcilePauseMs: when the reads of an interrupted send come', () => {
  test('a send that broke at once is read once its request is RECONCILE_DELAY_MS old', () => {
    expect(reconcilePauseMs(1, 100_000, 100_300)).toBe(RECONCILE_DELAY_MS - 300);
  });

  test('a send lost with its worker, noticed at the heartbeat timeout, is read at once: the trust window is running', () => {
    expect(reconcilePauseMs(1, 100_000, 110_000)).toBe(0);
    expect(reconcilePauseMs(1, 100_000, 100_000 + RECONCILE_DELAY_MS)).toBe(0);
  });

  test('every later read comes RECONCILE_DELAY_MS after the one before, however late the first was', () => {
    expect(reconcilePauseMs(2, 100_000, 140_000)).toBe(RECONCILE_DELAY_MS);
    expect(reconcilePauseMs(3, 100_000, 100_100)).toBe(RECONCILE_DELAY_MS);
  });
});

describe("judgeRead: is this read the follow-up's own result?", () => {
  const before = state('completed', 'pr/1');
  const watch: ResultWatch = {
    baseline: before,
    sentAtMs: 1_000,
    sawActive: false,
    previous: null,
    settleWindowMs: 30_000,
  };

  test('a read that is not terminal: wait for a change, whatever the time', () => {
    expect(judgeRead(watch, state('active'), 2_000)).toEqual({
      kind: 'wait',
      known: state('active'),
      acceptUnchangedFromMs: null,
      why: 'working',
    });
    expect(judgeRead(watch, state('queued'), 99_000)).toMatchObject({ kind: 'wait', why: 'working' });
  });

  test('a new pull request never seen worked on, before the settle window, is the result at once: no stale read shows a link the job did not have', () => {
    expect(judgeRead(watch, state('completed', 'pr/2'), 2_000)).toEqual({ kind: 'result' });
    expect(judgeRead({ ...watch, baseline: state('completed') }, state('failed', 'pr/1'), 2_000)).toEqual({
      kind: 'result',
    });
  });

  test('a new ending without a new pull request, before the settle window: wait until the window has passed, then it is the result', () => {
    for (const read of [state('completed'), state('failed', 'pr/1'), state('archived', 'pr/1')]) {
      expect(judgeRead(watch, read, 2_000)).toEqual({
        kind: 'wait',
        known: read,
        acceptUnchangedFromMs: 31_000,
        why: 'settling',
      });
      expect(judgeRead(watch, read, 31_000)).toEqual({ kind: 'result' });
    }
  });

  test('after an active read, a new result is the result at once', () => {
    expect(judgeRead({ ...watch, sawActive: true }, state('completed', 'pr/2'), 2_000)).toEqual({ kind: 'result' });
  });

  test('a read identical to the job before the send must be read twice, even after an active read', () => {
    const seen = { ...watch, sawActive: true, previous: state('active') };
    expect(judgeRead(seen, before, 5_000)).toEqual({
      kind: 'wait',
      known: before,
      acceptUnchangedFromMs: 5_000,
      why: 'confirming',
    });
    expect(judgeRead({ ...seen, previous: before }, before, 6_000)).toEqual({ kind: 'result' });
  });

  test('without an active read, the same result read twice counts only once the settle window had passed when read', () => {
    const twice = { ...watch, previous: before };
    expect(judgeRead(twice, before, 5_000)).toMatchObject({ kind: 'wait', why: 'settling' });
    expect(judgeRead(twice, before, 31_000)).toEqual({ kind: 'result' });
  });

  test('with a settle window of 0 a changed terminal read counts at once', () => {
    expect(judgeRead({ ...watch, settleWindowMs: 0 }, state('failed'), 1_000)).toEqual({ kind: 'result' });
  });

  test('watchAfter remembers an active read and the read itself for the next judgement', () => {
    expect(watchAfter(watch, state('active'))).toEqual({ ...watch, sawActive: true, previous: state('active') });
    expect(watchAfter({ ...watch, sawActive: true }, before)).toEqual({ ...watch, sawActive: true, previous: before });
  });
});
