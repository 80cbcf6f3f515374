import { attemptClock } from '../../src/activities/attempt-clock';

afterEach(() => jest.useRealTimers());

test('with the server ahead (a time-skipping test server), the attempt runs from the time the server scheduled it', () => {
  jest.useFakeTimers({ now: 1_000_000 });
  const now = attemptClock({ currentAttemptScheduledTimestampMs: 1_000_000 + 3_600_000 });
  expect(now()).toBe(4_600_000);
  jest.advanceTimersByTime(2_500);
  expect(now()).toBe(4_602_500);
});

test('with the server behind or the task queued a while (production), it is the worker clock', () => {
  jest.useFakeTimers({ now: 5_000_000 });
  const now = attemptClock({ currentAttemptScheduledTimestampMs: 5_000_000 - 40_000 });
  expect(now()).toBe(5_000_000);
  jest.advanceTimersByTime(1_000);
  expect(now()).toBe(5_001_000);
});
