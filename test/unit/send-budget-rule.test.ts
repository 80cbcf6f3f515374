import {
  plainWholeNumber,
  sendBudgetProblem,
  VENDOR_SENDS_PER_PROJECT_PER_HOUR,
} from '../../src/kernel/send-budget-rule';

test.each(['80', '1', '100', '007'])('%j is a whole number in plain digits', (raw) => {
  expect(plainWholeNumber(raw)).toBe(Number(raw));
});

test.each(['1e9', '0x10', ' 5', '5 ', '+5', '-5', '5.0', '', 'lots'])('%j is not', (raw) => {
  expect(plainWholeNumber(raw)).toBeUndefined();
});

test("a budget is at least 1, and above the vendor's 100 only when the caller says its plan allows more", () => {
  expect(VENDOR_SENDS_PER_PROJECT_PER_HOUR).toBe(100);
  expect([
    sendBudgetProblem(1, false, '--flag'),
    sendBudgetProblem(100, false, '--flag'),
    sendBudgetProblem(150, true, '--flag'),
  ]).toEqual([undefined, undefined, undefined]);
  expect(sendBudgetProblem(0, true, '--flag')).toBe('must be a whole number of at least 1');
  expect(sendBudgetProblem(2.5, true, '--flag')).toBe('must be a whole number of at least 1');
  expect(sendBudgetProblem(101, false, '--flag')).toMatch(
    /above the vendor's documented limit of 100 .* say so with --flag$/,
  );
});
