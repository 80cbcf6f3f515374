import { pollLoopLimit } from '../../src/config/worker-defaults';

test('polling loops may take every activity slot but a reserve of a tenth, at least 10 and at most 200', () => {
  expect(pollLoopLimit(2_000)).toBe(1_800);
  expect(pollLoopLimit(5_200)).toBe(5_000);
  expect(pollLoopLimit(100)).toBe(90);
  expect(pollLoopLimit(5)).toBe(0);
});
