import { DEFAULT_COORDINATION, watchesFor } from '../../src/activities/coordination';
import { type CheckInRequest } from '../../src/workflows/activity-contract';

const request = (initialIntervalMs?: number): CheckInRequest => ({
  projectId: 'p',
  jobId: 'j',
  workflowId: 'w',
  runId: 'r',
  ticket: 'r',
  startedAtMs: 0,
  deadlineMs: 0,
  slotFor: null,
  findEarlier: false,
  ...(initialIntervalMs !== undefined ? { initialIntervalMs } : {}),
});

describe('which follow-ups the watchers read for', () => {
  test('by default, those whose first read is at least 5 s after the send: the default schedule, not a faster one', () => {
    expect(watchesFor(DEFAULT_COORDINATION, request(5_000))).toBe(true);
    expect(watchesFor(DEFAULT_COORDINATION, request(60_000))).toBe(true);
    expect(watchesFor(DEFAULT_COORDINATION, request(4_999))).toBe(false);
    expect(watchesFor(DEFAULT_COORDINATION, request(200))).toBe(false);
  });

  test('none without shards; every one with a minimum of 0', () => {
    expect(watchesFor({ ...DEFAULT_COORDINATION, watchShards: 0 }, request(60_000))).toBe(false);
    expect(watchesFor({ ...DEFAULT_COORDINATION, watchMinIntervalMs: 0 }, request(100))).toBe(true);
  });

  test('a check-in that does not say its schedule (a run started before the rule) keeps the watchers', () => {
    expect(watchesFor(DEFAULT_COORDINATION, request())).toBe(true);
  });
});
