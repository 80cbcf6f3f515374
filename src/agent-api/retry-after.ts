/** Longest wait we accept from a `Retry-After` header; a larger value is more likely a bug than a plan. */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

const HTTP_DATE_FORMS = [
  /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/, // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/, // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
  /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/, // asctime: Sun Nov  6 08:49:37 1994
];

/**
 * Reads `Retry-After` (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date. Returns milliseconds to wait, or
 * undefined when the header is absent or unreadable (the caller then falls back to its own backoff).
 */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  if (header == null) return undefined;
  const value = header.trim();
  if (value === '') return undefined;
  if (/^\d+$/.test(value)) return Math.min(Number(value) * 1000, MAX_RETRY_AFTER_MS);
  // Date.parse accepts almost anything ("1.5", "-1"); only the three HTTP-date forms count.
  if (!HTTP_DATE_FORMS.some((form) => form.test(value))) return undefined;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(at - nowMs, 0), MAX_RETRY_AFTER_MS);
}
