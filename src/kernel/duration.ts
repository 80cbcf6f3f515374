/**
 * Durations as Temporal spells them ("5s", "10m", "1.5h") or as a number of milliseconds. The one place that parses
 * and prints them, on `ms` (the library Temporal's own SDK uses). Pure: workflow code imports it.
 */
import ms, { type StringValue } from 'ms';

/** Milliseconds for "5s"/"2m"/"1.5h" or a number of ms; undefined when the value is not a duration. */
export function parseDuration(value: unknown): number | undefined {
  let millis: number;
  if (typeof value === 'number') millis = value;
  else if (typeof value === 'string' && value.trim() !== '') {
    try {
      millis = ms(value.trim() as StringValue);
    } catch {
      return undefined;
    }
  } else return undefined;
  return Number.isFinite(millis) ? millis : undefined;
}

/** A duration in Temporal's spelling, e.g. 90000 -> "90s", 3600000 -> "1h". */
export function formatMs(millis: number): string {
  if (millis === 0) return '0s';
  if (millis % 86_400_000 === 0) return `${millis / 86_400_000}d`;
  if (millis % 3_600_000 === 0) return `${millis / 3_600_000}h`;
  if (millis % 60_000 === 0) return `${millis / 60_000}m`;
  if (millis % 1_000 === 0) return `${millis / 1_000}s`;
  return `${millis}ms`;
}
