/**
 * How soon a reading schedule notices a job's end, and at what cost in GETs, over a realistic spread of job durations:
 * the trade curve of issue 76 item 2, computed (not timed) from the schedules themselves. A schedule is its read
 * times after the send; a job ending at `d` is noticed at the first read at or after `d`. Ours is evaluated through
 * the same `nextPollAt` the workflow and its watcher use, so the curve moves when the code does. The live part
 * (detection.ts) measures what the running system adds on top of these delays.
 */
import { nextPollAt, type PollSchedule } from '../../src/kernel/poll-schedule';
import { DEFAULT_POLLING } from '../../src/kernel/request';
import { mulberry32 } from '../../src/simulator/prng';

/** Job durations as the issue gives them: log-normal, median 8 minutes, from 1 minute to 1 hour. */
export interface DurationSpread {
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** The log-normal's σ; the default puts 1 min and 1 h near the 0.5th and 99.5th percentiles. */
  sigma: number;
}

export const REALISTIC_SPREAD: DurationSpread = {
  medianMs: 8 * 60_000,
  minMs: 60_000,
  maxMs: 3_600_000,
  // ln(60 min / 8 min) ≈ ln(8 min / 1 min) ≈ 2; 2.576 σ is the 99.5th percentile.
  sigma: Math.log(7.5) / 2.576,
};

/** A seeded generator (the simulator's), so that a run's durations and the model's figures are the same every run. */
export const seededRandom = mulberry32;

/** `count` durations (ms) from the spread, redrawn outside [min, max] (a truncated log-normal). */
export function drawDurations(spread: DurationSpread, count: number, random: () => number): number[] {
  const durations: number[] = [];
  while (durations.length < count) {
    // Box–Muller; 1 - random() keeps the logarithm's argument above zero.
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    const ms = spread.medianMs * Math.exp(spread.sigma * normal);
    if (ms >= spread.minMs && ms <= spread.maxMs) durations.push(ms);
  }
  return durations;
}

/** A schedule as the model reads it: the first read at or after `endMs` (from the send), and the reads up to it. */
export interface ReadingSchedule {
  label: string;
  /** The first read at or after `endMs`, and how many reads were made up to and including it. */
  noticeAt(endMs: number): { atMs: number; reads: number };
}

export function fixedInterval(label: string, intervalMs: number): ReadingSchedule {
  return {
    label,
    noticeAt(endMs) {
      const reads = Math.max(1, Math.ceil(endMs / intervalMs));
      return { atMs: reads * intervalMs, reads };
    },
  };
}

/**
 * Ours: the follow-up's schedule (interval, ×coefficient, capped), walked with the workflow's own `nextPollAt`. Each
 * job's send falls at a random moment of the clock (`random`), so that a schedule whose points depend on the clock
 * as well as on the send is judged fairly.
 */
export function backoffSchedule(
  label: string,
  shape: { initialIntervalMs: number; backoffCoefficient: number; maxIntervalMs: number },
  random: () => number,
): ReadingSchedule {
  return {
    label,
    noticeAt(endMs) {
      const startedAtMs = Math.floor(random() * shape.maxIntervalMs);
      const schedule: PollSchedule = { startedAtMs, deadlineMs: Number.MAX_SAFE_INTEGER, ...shape };
      const walked = fromPoints(
        label,
        (afterMs) => (nextPollAt(schedule, afterMs + startedAtMs) as number) - startedAtMs,
      );
      return walked.noticeAt(endMs);
    },
  };
}

/**
 * A schedule learned from a project's past job durations: reads packed where its jobs are likely to end. For mean
 * delay at a given number of reads, the best spacing is gap(t) ∝ 1/√h(t), h the hazard rate (the chance a job still
 * running at t ends now; Cauchy–Schwarz on Σ gap²/2 against Σ reads), so reads come at rate √h(t)/c (h per second). Bounded by
 * `minGapMs` and `maxGapMs`, so a job longer than any seen is still read at the cap. `c` trades reads for delay.
 */
export function learnedSchedule(
  label: string,
  pastMs: readonly number[],
  options: { c: number; minGapMs: number; maxGapMs: number },
): ReadingSchedule {
  const sorted = [...pastMs].sort((a, b) => a - b);
  const stillRunning = (atMs: number) => 1 - lowerBound(sorted, atMs) / sorted.length;
  const stepMs = 500;
  const points: number[] = [];
  let credit = 0;
  let last = 0;
  for (let at = stepMs; at <= sorted[sorted.length - 1]! * 1.5 + options.maxGapMs; at += stepMs) {
    // A window that widens with t: durations are spread on a log scale.
    const halfWindowMs = Math.max(10_000, at * 0.1);
    const ending = stillRunning(at - halfWindowMs) - stillRunning(at + halfWindowMs);
    // Per second, so that c reads as seconds^½: a gap of c·√(1/h) s.
    const hazardPerS = (1_000 * ending) / (2 * halfWindowMs) / Math.max(stillRunning(at), 1 / sorted.length);
    credit += (Math.sqrt(hazardPerS) / options.c) * (stepMs / 1_000);
    if ((credit >= 1 && at - last >= options.minGapMs) || at - last >= options.maxGapMs) {
      points.push(at);
      last = at;
      credit = 0;
    }
  }
  const lastPoint = points[points.length - 1] ?? 0;
  return fromPoints(label, (afterMs) => {
    const index = lowerBound(points, afterMs + 1);
    if (index < points.length) return points[index] as number;
    return lastPoint + Math.ceil((afterMs + 1 - lastPoint) / options.maxGapMs) * options.maxGapMs;
  });
}

function fromPoints(label: string, nextAfter: (afterMs: number) => number): ReadingSchedule {
  return {
    label,
    noticeAt(endMs) {
      let reads = 0;
      let at = 0;
      do {
        at = nextAfter(at);
        reads += 1;
      } while (at < endMs);
      return { atMs: at, reads };
    },
  };
}

/** The index of the first value ≥ `target` in ascending `values`. */
function lowerBound(values: readonly number[], target: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if ((values[middle] as number) < target) low = middle + 1;
    else high = middle;
  }
  return low;
}

export interface CurvePoint {
  label: string;
  getsPerJob: number;
  meanDelayMs: number;
  p99DelayMs: number;
}

export function evaluate(schedule: ReadingSchedule, durationsMs: readonly number[]): CurvePoint {
  const delays: number[] = [];
  let reads = 0;
  for (const endMs of durationsMs) {
    const noticed = schedule.noticeAt(endMs);
    reads += noticed.reads;
    delays.push(noticed.atMs - endMs);
  }
  delays.sort((a, b) => a - b);
  return {
    label: schedule.label,
    getsPerJob: reads / durationsMs.length,
    meanDelayMs: delays.reduce((sum, delay) => sum + delay, 0) / delays.length,
    p99DelayMs: delays[Math.min(delays.length - 1, Math.floor(delays.length * 0.99))] as number,
  };
}

/** The fixed-interval poller making as many GETs per job as `gets` (its interval found by bisection). */
export function fixedAtEqualGets(gets: number, durationsMs: readonly number[]): CurvePoint {
  let low = 100;
  let high = 3_600_000;
  for (let step = 0; step < 60; step += 1) {
    const middle = (low + high) / 2;
    if (evaluate(fixedInterval('', middle), durationsMs).getsPerJob > gets) low = middle;
    else high = middle;
  }
  const intervalMs = (low + high) / 2;
  return {
    ...evaluate(fixedInterval('', intervalMs), durationsMs),
    label: `fixed every ${(intervalMs / 1000).toFixed(1)} s`,
  };
}

/**
 * The least mean delay any schedule of reads alone can reach at a given number of reads, as a fraction of the
 * fixed-interval poller's: (∫√(f·S) dt)² / E[D] (f the durations' density, S the share still running). Estimated
 * from the sample on a grid; at most 1, by Cauchy–Schwarz.
 */
export function bestScheduleRatio(durationsMs: readonly number[]): number {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const stillRunning = (atMs: number) => 1 - lowerBound(sorted, atMs) / sorted.length;
  const meanMs = sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length;
  const stepMs = 1_000;
  let integral = 0;
  for (let at = 0; at <= (sorted[sorted.length - 1] as number); at += stepMs) {
    const halfWindowMs = Math.max(10_000, at * 0.1);
    const density = (stillRunning(at - halfWindowMs) - stillRunning(at + halfWindowMs)) / (2 * halfWindowMs);
    integral += Math.sqrt(density * stillRunning(at)) * stepMs;
  }
  return (integral * integral) / meanMs;
}

export interface TradeCurve {
  jobs: number;
  meanDurationMs: number;
  vendor: CurvePoint;
  fixed: CurvePoint[];
  ours: CurvePoint[];
  learned: CurvePoint[];
  /** Ours on the defaults, and the fixed poller at its GETs. */
  defaults: { ours: CurvePoint; fixed: CurvePoint };
  /** The best learned point's ratio to the fixed poller at equal GETs, and the bound of any schedule. */
  learnedRatio: number;
  boundRatio: number;
}

/** The curve for the three (and the vendor's 5 s loop), over `jobs` durations drawn with `seed`. */
export function tradeCurve(spread: DurationSpread = REALISTIC_SPREAD, jobs = 20_000, seed = 76): TradeCurve {
  const random = seededRandom(seed);
  const durations = drawDurations(spread, jobs, random);
  // What a project's history would hold: its last 200 jobs, drawn apart from the ones the schedule is judged on.
  const past = drawDurations(spread, 200, random);
  const meanDurationMs = durations.reduce((sum, ms) => sum + ms, 0) / durations.length;
  const ours = [15_000, 30_000, 60_000, 120_000, 300_000].map((maxIntervalMs) =>
    evaluate(
      backoffSchedule(
        `5 s ×2 ≤ ${maxIntervalMs / 1000} s${maxIntervalMs === DEFAULT_POLLING.maxIntervalMs ? ' (the default)' : ''}`,
        { ...DEFAULT_POLLING, maxIntervalMs },
        seededRandom(seed + maxIntervalMs),
      ),
      durations,
    ),
  );
  const defaults = evaluate(backoffSchedule('the default', DEFAULT_POLLING, seededRandom(seed + 1)), durations);
  const learned = [1, 1.5, 2, 3, 4, 6].map((c) =>
    evaluate(
      learnedSchedule(`learned, c = ${c}`, past, { c, minGapMs: 5_000, maxGapMs: DEFAULT_POLLING.maxIntervalMs }),
      durations,
    ),
  );
  const ratio = (point: CurvePoint) => point.meanDelayMs / fixedAtEqualGets(point.getsPerJob, durations).meanDelayMs;
  return {
    jobs,
    meanDurationMs,
    vendor: evaluate(fixedInterval("the vendor's loop, every 5 s", 5_000), durations),
    fixed: [5, 10, 15, 20, 30, 45, 60, 90, 120].map((s) =>
      evaluate(fixedInterval(`every ${s} s`, s * 1_000), durations),
    ),
    ours,
    learned,
    defaults: { ours: defaults, fixed: fixedAtEqualGets(defaults.getsPerJob, durations) },
    learnedRatio: Math.min(...learned.map(ratio)),
    boundRatio: bestScheduleRatio(durations),
  };
}
