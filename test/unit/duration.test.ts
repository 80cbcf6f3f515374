import { formatMs, parseDuration } from '../../src/kernel/duration';

describe('parseDuration: Temporal spellings or milliseconds', () => {
  test.each<[unknown, number | undefined]>([
    ['5s', 5_000],
    ['10m', 600_000],
    ['1.5h', 5_400_000],
    ['2d', 172_800_000],
    [' 30s ', 30_000],
    ['250', 250],
    [250, 250],
    [0, 0],
    ['-5s', -5_000],
    ['soon', undefined],
    ['', undefined],
    [true, undefined],
    [{ days: 1 }, undefined],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
  ])('%j is %j', (value, expected) => {
    expect(parseDuration(value)).toBe(expected);
  });
});

describe('formatMs: the shortest exact Temporal spelling', () => {
  test.each([
    [0, '0s'],
    [250, '250ms'],
    [5_000, '5s'],
    [90_000, '90s'],
    [600_000, '10m'],
    [3_600_000, '1h'],
    [5_400_000, '90m'],
    [86_400_000, '1d'],
  ])('%d ms is %s', (millis, text) => {
    expect(formatMs(millis)).toBe(text);
  });
});
