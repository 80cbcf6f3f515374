/**
 * How many runs a schedule starts in its busiest hour, from the times the server says it fires next: what a
 * project's send budget (so many sends in any rolling hour) is weighed against when the schedule is created.
 */

const HOUR_MS = 3_600_000;

/**
 * The most runs in any hour, from the next run times (ISO 8601, ascending; the server gives ten). When they all fall
 * within an hour the ten say only "ten or more": the hour's count is then their rate (`every 1m` is 60, not 10).
 * Null with fewer than two times.
 */
export function peakRunsPerHour(nextRunTimes: readonly string[]): number | null {
  const times = nextRunTimes.map((time) => Date.parse(time)).filter((ms) => Number.isFinite(ms));
  if (times.length < 2) return null;
  const first = times[0] as number;
  const last = times[times.length - 1] as number;
  const span = last - first;
  if (span < HOUR_MS) return span === 0 ? times.length : Math.floor(((times.length - 1) * HOUR_MS) / span);
  let peak = 0;
  for (let start = 0, end = 0; start < times.length; start += 1) {
    while (end < times.length && (times[end] as number) < (times[start] as number) + HOUR_MS) end += 1;
    peak = Math.max(peak, end - start);
  }
  return peak;
}
