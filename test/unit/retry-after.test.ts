import { MAX_RETRY_AFTER_MS, parseRetryAfter } from '../../src/agent-api/retry-after';

const NOW = Date.parse('2025-03-01T12:00:00Z');

describe('parseRetryAfter', () => {
  test('delay-seconds become milliseconds', () => {
    expect(parseRetryAfter('7', NOW)).toBe(7_000);
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
  });

  test('zero seconds means retry at once', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
  });

  test('white space around delay-seconds is ignored', () => {
    expect(parseRetryAfter('  30 ', NOW)).toBe(30_000);
  });

  test('an HTTP-date in the future becomes the time left until then', () => {
    expect(parseRetryAfter('Sat, 01 Mar 2025 12:00:45 GMT', NOW)).toBe(45_000);
  });

  test('an HTTP-date in the past means retry at once', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', NOW)).toBe(0);
  });

  test('the result does not depend on the real clock, only on the given now', () => {
    const header = 'Sat, 01 Mar 2025 12:01:00 GMT';
    expect(parseRetryAfter(header, NOW)).toBe(60_000);
    expect(parseRetryAfter(header, NOW + 50_000)).toBe(10_000);
  });

  test('a huge delay-seconds value is capped at the maximum', () => {
    expect(parseRetryAfter('86400', NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('99999999999999999999', NOW)).toBe(MAX_RETRY_AFTER_MS);
  });

  test('an HTTP-date far in the future is capped at the maximum', () => {
    expect(parseRetryAfter('Fri, 01 Jan 2100 00:00:00 GMT', NOW)).toBe(MAX_RETRY_AFTER_MS);
  });

  test('the cap is one hour', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(3_600_000);
    expect(parseRetryAfter('3600', NOW)).toBe(3_600_000);
    expect(parseRetryAfter('3601', NOW)).toBe(3_600_000);
  });

  test.each(['soon', 'later please', '12abc', 'NaN', '-1', '1.5', '3.5', 'soon 12', '2026-11-23'])(
    'an unreadable header %j gives undefined',
    (header) => {
      expect(parseRetryAfter(header, NOW)).toBeUndefined();
    },
  );

  test.each(['Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994'])(
    'the obsolete HTTP-date form %j is read too',
    (header) => {
      expect(parseRetryAfter(header, Date.parse('1994-11-06T08:49:30Z'))).toBe(7_000);
    },
  );

  test.each([null, undefined, '', '   '])('an absent or empty header %j gives undefined', (header) => {
    expect(parseRetryAfter(header, NOW)).toBeUndefined();
  });
});
