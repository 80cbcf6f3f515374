import { isCheckpoint, type FollowUpCheckpoint } from '../../src/workflows/follow-up/checkpoint';

const idle = { status: 'completed', prLink: null, archivedAt: null };
const minimal: FollowUpCheckpoint = { deadlineMs: 1_000, runs: 1, polls: 0, sendAttempts: 0, lastJob: null };
const full: FollowUpCheckpoint = {
  deadlineMs: 86_400_000,
  runs: 3,
  polls: 41,
  sendAttempts: 2,
  lastJob: { id: 'job-1', status: 'active', prLink: null },
  delivered: {
    baseline: idle,
    sentAtMs: 5_000,
    via: 'reconciled',
    sawActive: true,
    known: { ...idle, status: 'active' },
    previous: idle,
  },
};

describe('isCheckpoint: a continued run trusts only state of the shape its own continue-as-new writes', () => {
  test('a checkpoint before the send and one after it are accepted', () => {
    expect(isCheckpoint(minimal)).toBe(true);
    expect(isCheckpoint(full)).toBe(true);
    expect(isCheckpoint({ ...full, watchShards: 2, notifyUrl: 'https://hooks.example.com/agent' })).toBe(true);
  });

  test.each<[string, unknown]>([
    ['null', null],
    ['an array', [minimal]],
    ['a string', 'continue'],
    ['runs of 0', { ...minimal, runs: 0 }],
    ['negative polls', { ...minimal, polls: -1 }],
    ['fractional send attempts', { ...minimal, sendAttempts: 1.5 }],
    ['a deadline that is not a number', { ...minimal, deadlineMs: '2026-11-24' }],
    ['an infinite deadline', { ...minimal, deadlineMs: Number.POSITIVE_INFINITY }],
    ['a last job without an id', { ...minimal, lastJob: { status: 'active', prLink: null } }],
    ['a last job with a numeric prLink', { ...minimal, lastJob: { id: 'j', status: 'active', prLink: 7 } }],
    ['a callback URL that is not a string', { ...minimal, notifyUrl: { url: 'https://example.com' } }],
    ['a delivery of an unknown kind', { ...full, delivered: { ...full.delivered, via: 'telepathy' } }],
    ['a delivery without a baseline', { ...full, delivered: { ...full.delivered, baseline: undefined } }],
    [
      'a delivery whose previous read is malformed',
      { ...full, delivered: { ...full.delivered, previous: { status: 1 } } },
    ],
    ['a delivery whose sawActive is a string', { ...full, delivered: { ...full.delivered, sawActive: 'yes' } }],
  ])('%s is refused', (_title, value) => {
    expect(isCheckpoint(value)).toBe(false);
  });
});
