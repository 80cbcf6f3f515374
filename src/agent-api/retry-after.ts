/** Longest wait we accept from a `Retry-After` header; a larger value is more likely a bug than a plan. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

/**
 * Reads `Retry-After` (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date. Returns milliseconds to wait, or
 * undefined when the header is absent or unreadable (the caller then falls back to its own backoff).
 */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  if (header == null) return undefined;
  const value = header.trim();
  if (value === '') return undefined;
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(at - nowMs, 0), MAX_RETRY_AFTER_MS);
}
