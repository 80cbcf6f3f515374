import { checkBookLook, checkRegistration, checkReports, checkUnwatch } from '../../src/watch/watch-messages';
import { checkReadTrouble } from '../../src/workflows/follow-up/messages';
import { defaultSchedule, watchRegistration } from '../support/watch-fixtures';

const registration = watchRegistration(defaultSchedule(1_800_000_000_000));

describe('checkRegistration', () => {
  test('a registration as a follow-up sends it is kept as it is', () => {
    expect(checkRegistration(registration)).toEqual(registration);
    expect(checkRegistration({ ...registration, known: null, readBefore: { atMs: 1, status: 'active' } })).toEqual({
      ...registration,
      known: null,
      readBefore: { atMs: 1, status: 'active' },
    });
  });

  test('fields it does not document are dropped: nothing stray grows the book', () => {
    expect(checkRegistration({ ...registration, padding: 'x'.repeat(100_000) })).toEqual(registration);
  });

  const result = {
    baseline: { status: 'completed', prLink: 'pr/1', archivedAt: null },
    sentAtMs: 1_800_000_000_000,
    settleWindowMs: 30_000,
    sawActive: true,
    seen: [
      { status: 'completed', prLink: 'pr/1', archivedAt: null },
      { status: 'active', prLink: null, archivedAt: null },
    ],
  };

  test('a result rule is kept with its documented fields only', () => {
    const stray = { ...result, padding: 'x', seen: result.seen.map((state) => ({ ...state, extra: 1 })) };
    expect(checkRegistration({ ...registration, result: stray })).toEqual({ ...registration, result });
  });

  test.each([
    ['not an object', 'rule'],
    ['no baseline', { ...result, baseline: undefined }],
    ['a send time that is not a time', { ...result, sentAtMs: -1 }],
    ['sawActive not a boolean', { ...result, sawActive: 'yes' }],
    ['no states seen', { ...result, seen: [] }],
    ['more states seen than a follow-up keeps', { ...result, seen: Array(9).fill(result.baseline) }],
    ['a seen state without a status', { ...result, seen: [{ prLink: null, archivedAt: null }] }],
  ])('a result rule with %s: the registration is refused', (_, rule) => {
    expect(checkRegistration({ ...registration, result: rule })).toBeNull();
  });

  test.each([
    ['garbage', 'watch me'],
    ['nothing', null],
    ['no workflow id', { ...registration, workflowId: undefined }],
    ['an empty job id', { ...registration, jobId: '' }],
    ['no reply name', { ...registration, replyTo: undefined }],
    ['a known state without a status', { ...registration, known: { prLink: null, archivedAt: null } }],
    ['a negative round', { ...registration, round: -1 }],
    ['a round that is not a whole number', { ...registration, round: 1.5 }],
    ['no schedule', { ...registration, schedule: undefined }],
    ['a zero poll gap', { ...registration, schedule: { ...registration.schedule, initialIntervalMs: 0 } }],
    ['a backoff below 1', { ...registration, schedule: { ...registration.schedule, backoffCoefficient: 0.5 } }],
    ['a deadline that is not a time', { ...registration, schedule: { ...registration.schedule, deadlineMs: 'soon' } }],
    ['readAtOnce not a boolean', { ...registration, readAtOnce: 'yes' }],
  ])('%s: refused', (_, value) => {
    expect(checkRegistration(value)).toBeNull();
  });
});

test('checkUnwatch takes a follow-up and the name of its wait, with its run and answered round if given, and nothing malformed', () => {
  expect(checkUnwatch({ workflowId: 'f', replyTo: 'n' })).toEqual({ workflowId: 'f', replyTo: 'n' });
  expect(checkUnwatch({ workflowId: 'f', replyTo: 'n', runId: 'r', round: 2 })).toEqual({
    workflowId: 'f',
    replyTo: 'n',
    runId: 'r',
    round: 2,
  });
  const bad = [
    null,
    'f',
    {},
    { workflowId: 'f' },
    { workflowId: '', replyTo: 'n' },
    { workflowId: 'f', replyTo: 'n', runId: 3 },
    { workflowId: 'f', replyTo: 'n', round: 'two' },
  ];
  for (const value of bad) expect(checkUnwatch(value)).toBeNull();
});

test('checkReports keeps the well-formed reports and drops the rest', () => {
  const report = {
    workflowId: 'f',
    runId: 'r',
    round: 1,
    replyTo: 'w',
    reads: 2,
    lastRead: { atMs: 5, status: 'active' },
    failingSinceMs: null,
    failedReads: 0,
    lastError: null,
    nextReadAtMs: 9,
  };
  expect(
    checkReports([
      report,
      { ...report, reads: 'two' },
      null,
      { ...report, lastRead: { atMs: 5, status: 3 } },
      { ...report, replyTo: undefined },
    ]),
  ).toEqual([report]);
  expect(checkReports('not a list')).toEqual([]);
});

test('checkReadTrouble takes a trouble or null, and nothing malformed', () => {
  expect(checkReadTrouble(null)).toEqual({ trouble: null });
  expect(checkReadTrouble({ since: '2026-11-28T10:00:00Z', lastError: 'HTTP 500', failedReads: 4 })).toEqual({
    trouble: { since: '2026-11-28T10:00:00Z', lastError: 'HTTP 500', failedReads: 4 },
  });
  for (const bad of [
    undefined,
    'boom',
    {},
    { since: 1, lastError: 'x' },
    { since: 's', lastError: 'x', failedReads: -1 },
  ])
    expect(checkReadTrouble(bad)).toBeNull();
});

test("checkBookLook takes the reader's figures and its name, and nothing malformed", () => {
  expect(checkBookLook({ version: 3, asks: 0, attempt: 1, reader: 'name-1' })).toEqual({
    version: 3,
    asks: 0,
    attempt: 1,
    reader: 'name-1',
  });
  // A reader of an earlier build sends no name; the watcher then refuses the look (it is not its reader's).
  expect(checkBookLook({ version: 3, asks: 0, attempt: 1 })).toEqual({ version: 3, asks: 0, attempt: 1 });
  for (const look of [
    null,
    'look',
    { version: -1, asks: 0, attempt: 1 },
    { version: 3, asks: 0.5, attempt: 1 },
    { version: 3, asks: 0, attempt: 1, reader: '' },
    { version: 3, asks: 0, attempt: 1, reader: 7 },
  ])
    expect(checkBookLook(look)).toBeNull();
});
