import {
  FREQUENT_POLL_LIMIT_MS,
  lastPollAtOrBefore,
  nextPollAt,
  pollHeartbeatTimeoutMs,
  type PollSchedule,
} from '../../src/kernel/poll-schedule';

const schedule: PollSchedule = {
  startedAtMs: 1_000,
  initialIntervalMs: 5_000,
  backoffCoefficient: 2,
  maxIntervalMs: 60_000,
  deadlineMs: 1_000_000,
};

describe('nextPollAt: a ramp counted from the start of the wait, then the cap on the clock', () => {
  test.each([
    ['at the start, the first poll is one initial interval later', 1_000, 6_000],
    ['then the gaps grow by the coefficient: 5s, 10s, 20s, 40s', 6_000, 16_000],
    ['a caller between two points gets the next one', 20_000, 36_000],
    ['the fourth gap is 40s', 36_000, 76_000],
    ['once the cap is reached, the points are the multiples of the cap: the first one after the ramp', 76_000, 120_000],
    ['then every gap is the cap', 120_000, 180_000],
    ['a late caller gets the next point strictly after it, not one interval after it', 137_000, 180_000],
    ['far along, the capped points are found at once', 900_000, 960_000],
  ])('%s', (_title, after, expected) => {
    expect(nextPollAt(schedule, after)).toBe(expected);
  });

  test('the last poll lands on the deadline, and none is left after it', () => {
    const short = { ...schedule, deadlineMs: 30_000 };
    expect(nextPollAt(short, 16_000)).toBe(30_000);
    expect(nextPollAt(short, 29_999)).toBe(30_000);
    expect(nextPollAt(short, 30_000)).toBeNull();
    expect(nextPollAt(short, 31_000)).toBeNull();
  });

  test('a coefficient of 1 is a fixed interval', () => {
    const fixed = { ...schedule, backoffCoefficient: 1, maxIntervalMs: 5_000 };
    expect([1_000, 6_000, 11_000, 12_345].map((after) => nextPollAt(fixed, after))).toEqual([
      6_000, 10_000, 15_000, 15_000,
    ]);
  });

  test('the first interval is always kept, even when the cap starts at once', () => {
    const thirty = { ...schedule, initialIntervalMs: 30_000, backoffCoefficient: 1, maxIntervalMs: 30_000 };
    expect(nextPollAt({ ...thirty, startedAtMs: 59_000 }, 59_000)).toBe(89_000);
    expect(nextPollAt({ ...thirty, startedAtMs: 59_000 }, 89_000)).toBe(90_000);
  });

  test('an initial interval above the cap is cut to the cap', () => {
    expect(nextPollAt({ ...schedule, initialIntervalMs: 120_000 }, 1_000)).toBe(61_000);
    expect(nextPollAt({ ...schedule, initialIntervalMs: 120_000 }, 61_000)).toBe(120_000);
  });

  test('waits started at different moments share their capped points: one wake-up reads them all', () => {
    const capped = (startedAtMs: number) => {
      const wait = { ...schedule, startedAtMs, deadlineMs: 10_000_000 };
      return [nextPollAt(wait, 500_000), nextPollAt(wait, 560_000)];
    };
    expect(capped(1_000)).toEqual([540_000, 600_000]);
    expect(capped(23_456)).toEqual([540_000, 600_000]);
    expect(capped(59_999)).toEqual([540_000, 600_000]);
  });

  test('no gap is ever longer than the cap, from any start', () => {
    for (let startedAtMs = 0; startedAtMs < 120_000; startedAtMs += 3_331) {
      const wait = { ...schedule, startedAtMs, deadlineMs: startedAtMs + 900_000 };
      let at = startedAtMs;
      for (let next = nextPollAt(wait, at); next !== null; at = next, next = nextPollAt(wait, at)) {
        expect(next - at).toBeGreaterThan(0);
        expect(next - at).toBeLessThanOrEqual(wait.maxIntervalMs);
      }
      expect(at).toBe(wait.deadlineMs);
    }
  });

  test('a fractional coefficient keeps growing until the cap', () => {
    const gentle = { ...schedule, initialIntervalMs: 100, backoffCoefficient: 1.5, maxIntervalMs: 400 };
    const points: number[] = [];
    let at = gentle.startedAtMs;
    for (let i = 0; i < 6; i += 1) points.push((at = nextPollAt(gentle, at) as number));
    expect(points.map((point, i) => point - (points[i - 1] ?? gentle.startedAtMs))).toEqual([
      // 1,812.5 is the ramp's last point; the cap's points are the multiples of 400 from there.
      100, 150, 225, 337.5, 187.5, 400,
    ]);
  });
});

describe('pollHeartbeatTimeoutMs: how soon a dead polling loop is noticed', () => {
  test('six times the longest gap a loop waits, within 10s and 60s', () => {
    expect(pollHeartbeatTimeoutMs({ maxIntervalMs: 400 })).toBe(10_000);
    expect(pollHeartbeatTimeoutMs({ maxIntervalMs: 5_000 })).toBe(30_000);
    expect(pollHeartbeatTimeoutMs({ maxIntervalMs: 10_000 })).toBe(60_000);
    expect(pollHeartbeatTimeoutMs({ maxIntervalMs: 60_000 })).toBe(60_000);
  });

  test('a loop heartbeats at every poll and its polls are under the limit apart, so heartbeats always come in time', () => {
    for (const maxIntervalMs of [100, 1_000, 9_000, 20_000, FREQUENT_POLL_LIMIT_MS, 3_600_000]) {
      const longestLoopGap = Math.min(maxIntervalMs, FREQUENT_POLL_LIMIT_MS);
      // Core sends a heartbeat at most every 0.8 × the timeout; the next poll must come before that runs out.
      expect(longestLoopGap).toBeLessThan(0.8 * pollHeartbeatTimeoutMs({ maxIntervalMs }));
    }
  });
});

describe('lastPollAtOrBefore: the planned read a reader taking over may have missed', () => {
  test('none before the first point; then the latest point at or before the time, growing then capped', () => {
    // Points: 6 s, 16 s, 36 s, 76 s, then every minute on the minute: 120 s, 180 s, ...
    expect(lastPollAtOrBefore(schedule, 5_999)).toBeNull();
    expect(lastPollAtOrBefore(schedule, 6_000)).toBe(6_000);
    expect(lastPollAtOrBefore(schedule, 15_999)).toBe(6_000);
    expect(lastPollAtOrBefore(schedule, 100_000)).toBe(76_000);
    expect(lastPollAtOrBefore(schedule, 120_000)).toBe(120_000);
    expect(lastPollAtOrBefore(schedule, 136_000)).toBe(120_000);
    expect(lastPollAtOrBefore(schedule, 200_000)).toBe(180_000);
    expect(lastPollAtOrBefore(schedule, 2_000_000)).toBe(1_000_000);
  });

  test('it and nextPollAt never disagree: the point before a time is the one whose next is after it', () => {
    for (let atMs = 1_000; atMs < 400_000; atMs += 1_777) {
      const last = lastPollAtOrBefore(schedule, atMs);
      if (last !== null) expect(nextPollAt(schedule, last - 1)).toBe(last);
      expect(nextPollAt(schedule, atMs)).toBeGreaterThan(atMs);
    }
  });
});
