import type { ResolvedPolling } from '../../src/follow-up/input';
import { nextInterval, sleepBeforePoll } from '../../src/workflows/backoff';

function polling(overrides: Partial<ResolvedPolling> = {}): ResolvedPolling {
  return {
    initialIntervalMs: 5_000,
    backoffCoefficient: 2,
    maxIntervalMs: 60_000,
    timeoutMs: 86_400_000,
    maxPollsPerRun: 500,
    settleWindowMs: 30_000,
    ...overrides,
  };
}

describe('nextInterval', () => {
  test('the interval grows by the backoff coefficient', () => {
    expect(nextInterval(5_000, polling())).toBe(10_000);
    expect(nextInterval(10_000, polling({ backoffCoefficient: 1.5 }))).toBe(15_000);
  });

  test('the interval never grows above the max interval', () => {
    expect(nextInterval(40_000, polling())).toBe(60_000);
    expect(nextInterval(60_000, polling())).toBe(60_000);
  });

  test('a coefficient of 1 keeps the interval fixed', () => {
    expect(nextInterval(5_000, polling({ backoffCoefficient: 1 }))).toBe(5_000);
  });

  test('the grown interval is rounded to whole milliseconds', () => {
    expect(nextInterval(333, polling({ backoffCoefficient: 1.5 }))).toBe(500);
    expect(nextInterval(101, polling({ backoffCoefficient: 1.1 }))).toBe(111);
  });

  test('repeated growth from the defaults follows 5s, 10s, 20s, 40s, 60s, 60s', () => {
    const seen: number[] = [];
    let interval = 5_000;
    for (let i = 0; i < 6; i += 1) {
      seen.push(interval);
      interval = nextInterval(interval, polling());
    }
    expect(seen).toEqual([5_000, 10_000, 20_000, 40_000, 60_000, 60_000]);
  });
});

describe('sleepBeforePoll', () => {
  const now = 1_000_000;

  test('with time to spare the whole interval is slept', () => {
    expect(sleepBeforePoll(5_000, now, now + 60_000)).toBe(5_000);
  });

  test('near the deadline the sleep is cut short so the last poll lands on the deadline', () => {
    expect(sleepBeforePoll(5_000, now, now + 3_000)).toBe(3_000);
  });

  test('an interval that ends exactly on the deadline is slept in full', () => {
    expect(sleepBeforePoll(5_000, now, now + 5_000)).toBe(5_000);
  });

  test('at or past the deadline the sleep is zero, never negative', () => {
    expect(sleepBeforePoll(5_000, now, now)).toBe(0);
    expect(sleepBeforePoll(5_000, now, now - 10_000)).toBe(0);
  });
});
