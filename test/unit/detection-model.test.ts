import {
  backoffSchedule,
  bestScheduleRatio,
  drawDurations,
  evaluate,
  fixedAtEqualGets,
  fixedInterval,
  REALISTIC_SPREAD,
  seededRandom,
} from '../../scripts/bench/detection-model';
import { DEFAULT_POLLING } from '../../src/kernel/request';

const durations = drawDurations(REALISTIC_SPREAD, 5_000, seededRandom(1));

describe('the detection model (npm run bench -- --only detection)', () => {
  test('durations are the spread: within 1 min and 1 h, median near 8 min', () => {
    const sorted = [...durations].sort((a, b) => a - b);
    expect(sorted[0]).toBeGreaterThanOrEqual(60_000);
    expect(sorted[sorted.length - 1]).toBeLessThanOrEqual(3_600_000);
    expect(sorted[Math.floor(sorted.length / 2)]! / 60_000).toBeCloseTo(8, 0);
  });

  test('a fixed-interval poller notices an end half an interval later on average, at one GET per interval', () => {
    const point = evaluate(fixedInterval('every 30 s', 30_000), durations);
    const meanMs = durations.reduce((sum, ms) => sum + ms, 0) / durations.length;
    expect(point.meanDelayMs / 15_000).toBeCloseTo(1, 1);
    expect(point.getsPerJob).toBeCloseTo(meanMs / 30_000 + 0.5, 0);
    expect(point.p99DelayMs).toBeLessThan(30_000);
  });

  test("ours is read through the workflow's schedule: no end waits longer than the cap", () => {
    const point = evaluate(backoffSchedule('default', DEFAULT_POLLING, seededRandom(2)), durations);
    expect(point.p99DelayMs).toBeLessThanOrEqual(DEFAULT_POLLING.maxIntervalMs);
    expect(point.meanDelayMs).toBeGreaterThan(0);
  });

  test('the fixed poller at equal GETs makes as many GETs', () => {
    const ours = evaluate(backoffSchedule('default', DEFAULT_POLLING, seededRandom(3)), durations);
    expect(fixedAtEqualGets(ours.getsPerJob, durations).getsPerJob).toBeCloseTo(ours.getsPerJob, 1);
  });

  test('the bound of any schedule of reads is below the fixed poller, and low when every job takes as long', () => {
    const ratio = bestScheduleRatio(durations);
    expect(ratio).toBeLessThan(1);
    expect(ratio).toBeGreaterThan(0.5);
    const alike = drawDurations({ ...REALISTIC_SPREAD, sigma: 0.01 }, 2_000, seededRandom(4));
    expect(bestScheduleRatio(alike)).toBeLessThan(0.2);
  });
});
