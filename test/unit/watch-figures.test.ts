import { describeWatchLine, failingLine } from '../../src/command-line/render';
import { followUpReport, FollowUpReportSchema } from '../../src/command-line/json-output';
import type { FollowUpProgress } from '../../src/kernel/types';
import { readFailed, readSucceeded, reportOf, ReaderBook } from '../../src/watch/reader-book';
import { nextReadAtMs, watchFiguresOf, type WatchedWaitFacts } from '../../src/watch/watch-figures';
import { WatcherBook } from '../../src/watch/watcher-book';
import { defaultSchedule, watchRegistration } from '../support/watch-fixtures';
import { type WatchRegistration } from '../../src/watch/messages';

const T0 = Date.parse('2026-11-25T12:00:00.000Z');
// Points at T0 + 5 s, 15 s, 35 s, 75 s, then every minute on the minute: T0 + 120 s, 180 s, ... (T0 is on one).
const schedule = defaultSchedule(T0);
const registration = (overrides: Partial<WatchRegistration> = {}) => watchRegistration(schedule, overrides);

const report = (
  overrides: Partial<NonNullable<WatchedWaitFacts['report']>> = {},
): NonNullable<WatchedWaitFacts['report']> => ({
  round: 1,
  reads: 3,
  lastRead: { atMs: T0 + 35_000, status: 'active' },
  failingSinceMs: null,
  failedReads: 0,
  lastError: null,
  nextReadAtMs: T0 + 75_000,
  ...overrides,
});

describe('the next read of a watched wait', () => {
  test("is the schedule's next point while the reader has reported nothing", () => {
    expect(nextReadAtMs({ registration: registration(), watchedSinceMs: T0, report: null }, T0 + 20_000)).toBe(
      T0 + 35_000,
    );
    expect(nextReadAtMs({ registration: registration(), watchedSinceMs: T0, report: null }, T0 + 80_000)).toBe(
      T0 + 120_000,
    );
  });

  test("is the settle window's end, not the schedule's next point, for a job known ended before the wait", () => {
    const ended = registration({
      known: { status: 'completed', prLink: 'https://github.com/o/r/pull/9', archivedAt: null },
      acceptUnchangedFromMs: T0 + 20_000,
    });
    expect(nextReadAtMs({ registration: ended, watchedSinceMs: T0, report: null }, T0 + 16_000)).toBe(T0 + 20_000);
    // A window that ends after the schedule's next point changes nothing.
    const later = { ...ended, acceptUnchangedFromMs: T0 + 50_000 };
    expect(nextReadAtMs({ registration: later, watchedSinceMs: T0, report: null }, T0 + 16_000)).toBe(T0 + 35_000);
  });

  test("is the reader's plan while it lies ahead (a Retry-After moves it past the schedule)", () => {
    const facts = { registration: registration(), watchedSinceMs: T0, report: report({ nextReadAtMs: T0 + 200_000 }) };
    expect(nextReadAtMs(facts, T0 + 80_000)).toBe(T0 + 200_000);
    // Once past, the read is under way or the reader is behind: the schedule's next point.
    expect(nextReadAtMs(facts, T0 + 201_000)).toBe(T0 + 240_000);
  });

  test("ignores the plan of an earlier round: the new round's reads start over", () => {
    const facts = {
      registration: registration({ round: 2 }),
      watchedSinceMs: T0,
      report: report({ round: 1, nextReadAtMs: T0 + 500_000 }),
    };
    expect(nextReadAtMs(facts, T0 + 80_000)).toBe(T0 + 120_000);
  });

  test('is now when a read was asked for and not yet made', () => {
    expect(
      nextReadAtMs(
        { registration: registration({ readAtOnce: true, round: 2 }), watchedSinceMs: T0, report: report() },
        T0 + 80_000,
      ),
    ).toBe(T0 + 80_000);
    expect(
      nextReadAtMs(
        { registration: registration({ readAtOnce: true }), watchedSinceMs: T0, report: report({ reads: 1 }) },
        T0 + 40_000,
      ),
    ).toBe(T0 + 75_000);
  });

  test('is none past the deadline', () => {
    expect(
      nextReadAtMs({ registration: registration(), watchedSinceMs: T0, report: null }, schedule.deadlineMs),
    ).toBeNull();
  });
});

describe('watchFiguresOf', () => {
  test('gives since when, the last read with its status, the reads of this wait, and the next read', () => {
    expect(
      watchFiguresOf({ registration: registration(), watchedSinceMs: T0 + 1_000, report: report() }, T0 + 40_000),
    ).toEqual({
      watchedSince: '2026-11-25T12:00:01.000Z',
      lastRead: { at: '2026-11-25T12:00:35.000Z', status: 'active' },
      reads: 3,
      failing: null,
      nextReadAt: '2026-11-25T12:01:15.000Z',
    });
  });

  test('says reads fail: since when, how many, the last error; the failed last read has no status', () => {
    const failing = report({
      lastRead: { atMs: T0 + 35_000, status: null },
      failingSinceMs: T0 + 5_000,
      failedReads: 3,
      lastError: 'AgentApiServerError: HTTP 500',
    });
    const figures = watchFiguresOf({ registration: registration(), watchedSinceMs: T0, report: failing }, T0 + 40_000);
    expect(figures.lastRead).toEqual({ at: '2026-11-25T12:00:35.000Z', status: null });
    expect(figures.failing).toEqual({
      since: '2026-11-25T12:00:05.000Z',
      failedReads: 3,
      lastError: 'AgentApiServerError: HTTP 500',
    });
  });

  test('knows no last read and no count when the reader has reported nothing', () => {
    const figures = watchFiguresOf({ registration: registration(), watchedSinceMs: T0, report: null }, T0 + 1_000);
    expect(figures).toMatchObject({
      lastRead: null,
      reads: null,
      failing: null,
      nextReadAt: '2026-11-25T12:00:05.000Z',
    });
  });

  test("shows the follow-up's own read asked for as the last read until the watcher makes a later one", () => {
    const asked = registration({ round: 2, readBefore: { atMs: T0 + 50_000, status: 'active' } });
    expect(watchFiguresOf({ registration: asked, watchedSinceMs: T0, report: null }, T0 + 51_000).lastRead).toEqual({
      at: '2026-11-25T12:00:50.000Z',
      status: 'active',
    });
    expect(watchFiguresOf({ registration: asked, watchedSinceMs: T0, report: report() }, T0 + 51_000).lastRead).toEqual(
      { at: '2026-11-25T12:00:50.000Z', status: 'active' },
    );
    const later = report({ round: 2, reads: 1, lastRead: { atMs: T0 + 75_000, status: null } });
    expect(watchFiguresOf({ registration: asked, watchedSinceMs: T0, report: later }, T0 + 76_000).lastRead).toEqual({
      at: '2026-11-25T12:01:15.000Z',
      status: null,
    });
  });
});

describe('WatcherBook keeps what status asks for', () => {
  test('a run is watched since its first registration, across its rounds; another run starts over', () => {
    const registry = new WatcherBook();
    registry.upsert(registration(), T0);
    registry.upsert(registration({ round: 2 }), T0 + 60_000);
    expect(registry.view('followup/p/j/1', 0)).toMatchObject({ watchedSinceMs: T0, registration: { round: 2 } });
    registry.upsert(registration({ runId: 'run-2' }), T0 + 90_000);
    expect(registry.view('followup/p/j/1', 0)?.watchedSinceMs).toBe(T0 + 90_000);
    expect(registry.view('someone-else', 0)).toBeNull();
  });

  test('carries since when over a continue-as-new', () => {
    const registry = new WatcherBook(
      { registrations: [registration()], watchedSince: { 'followup/p/j/1': T0 - 5_000 } },
      T0,
    );
    expect(registry.carried(T0).watchedSince).toEqual({ 'followup/p/j/1': T0 - 5_000 });
    expect(
      new WatcherBook({ registrations: [registration({ workflowId: 'new' })] }, T0).view('new', 0)?.watchedSinceMs,
    ).toBe(T0);
  });

  test("keeps the reader's report of a registered run, and forgets it when the wait leaves", () => {
    const registry = new WatcherBook({ registrations: [registration()] }, T0);
    const kept = { workflowId: 'followup/p/j/1', runId: 'run-1', replyTo: 'reply-1', ...report() };
    registry.noteReports([
      kept,
      { ...kept, workflowId: 'unknown' },
      { ...kept, runId: 'run-0', reads: 99 },
      // Another wait's name: not from the reader of this wait.
      { ...kept, replyTo: 'forged', reads: 98 },
    ]);
    expect(registry.view('followup/p/j/1', 0)?.report).toEqual(kept);
    registry.remove('followup/p/j/1');
    registry.upsert(registration(), T0 + 10_000);
    expect(registry.view('followup/p/j/1', 0)?.report).toBeNull();
  });

  test('an ask for live figures: only of a wait held, until it runs out, told to the reader with the changes', () => {
    const registry = new WatcherBook({ registrations: [registration(), registration({ workflowId: 'other' })] }, T0);
    expect(registry.askFigures('someone-else', T0, T0 + 30_000)).toBe(false);
    expect(registry.askFigures('followup/p/j/1', T0, T0 + 30_000)).toBe(true);
    expect(registry.view('followup/p/j/1', T0 + 29_999)?.figuresAskedUntilMs).toBe(T0 + 30_000);
    expect(registry.view('other', T0)?.figuresAskedUntilMs).toBeNull();
    const { version } = registry.changesSince(0, T0);
    expect(registry.changesSince(0, T0).watched).toEqual(['followup/p/j/1']);
    // Asking is not a change to the book: a reader up to date gets no upserts, only who is asked about.
    expect(registry.changesSince(version, T0 + 1_000)).toMatchObject({ upserts: [], watched: ['followup/p/j/1'] });
    expect(registry.changesSince(version, T0 + 30_000).watched).toEqual([]);
    expect(registry.view('followup/p/j/1', T0 + 30_000)?.figuresAskedUntilMs).toBeNull();
    // The asks now, the latest first (a renewed ask moves up), for the watcher's details.
    registry.askFigures('followup/p/j/1', T0, T0 + 30_000);
    registry.askFigures('other', T0 + 1_000, T0 + 31_000);
    expect(registry.figuresAskedNow(T0 + 2_000)).toEqual([
      { workflowId: 'other', untilMs: T0 + 31_000 },
      { workflowId: 'followup/p/j/1', untilMs: T0 + 30_000 },
    ]);
    registry.askFigures('followup/p/j/1', T0 + 2_000, T0 + 32_000);
    expect(registry.figuresAskedNow(T0 + 2_000).map((ask) => ask.workflowId)).toEqual(['followup/p/j/1', 'other']);
    expect(registry.figuresAskedNow(T0 + 31_000)).toEqual([{ workflowId: 'followup/p/j/1', untilMs: T0 + 32_000 }]);
    // A wait that leaves takes its ask with it.
    registry.askFigures('other', T0, T0 + 30_000);
    registry.remove('other');
    registry.upsert(registration({ workflowId: 'other' }), T0 + 1_000);
    expect(registry.view('other', T0 + 1_000)?.figuresAskedUntilMs).toBeNull();
  });
});

test('the book reports a wait as it stands: its reads, the last one, failures and the next read', () => {
  const book = new ReaderBook();
  book.apply({ version: 1, full: true, upserts: [registration()], removed: [], refused: [] }, T0);
  const wait = book.get('followup/p/j/1')!;
  expect(reportOf(wait)).toMatchObject({ reads: 0, lastRead: null, nextReadAtMs: T0 + 5_000 });
  readSucceeded(wait, { id: 'j', status: 'active', prLink: null }, T0 + 5_000, T0 + 5_000);
  readFailed(wait, 'AgentApiServerError: HTTP 500', T0 + 15_000, T0 + 15_000, 0);
  expect(reportOf(wait)).toEqual({
    workflowId: 'followup/p/j/1',
    runId: 'run-1',
    round: 1,
    replyTo: 'reply-1',
    reads: 2,
    lastRead: { atMs: T0 + 15_000, status: null },
    failingSinceMs: T0 + 15_000,
    failedReads: 1,
    lastError: 'AgentApiServerError: HTTP 500',
    nextReadAtMs: T0 + 35_000,
  });
  // The last read outlives the round: the next wait of the same run starts with it, and with the unanswered round's
  // reads (the follow-up never heard of them, so `status` would otherwise count fewer reads than before).
  book.apply({ version: 2, full: false, upserts: [registration({ round: 2 })], removed: [], refused: [] }, T0 + 16_000);
  expect(reportOf(book.get('followup/p/j/1')!)).toMatchObject({
    round: 2,
    reads: 2,
    lastRead: { atMs: T0 + 15_000, status: null },
    failedReads: 1,
  });
});

describe("status's watcher line", () => {
  const now = T0 + 40_000;
  const figures = {
    watcherId: 'agent-followup-watch/q/1',
    available: true as const,
    ...watchFiguresOf({ registration: registration(), watchedSinceMs: T0, report: report() }, now),
  };

  test('says since when, the last read with its status, and the next read with how soon', () => {
    expect(describeWatchLine(figures, now)).toBe(
      '  Watched by agent-followup-watch/q/1 since 12:00:00 UTC: last read 12:00:35 UTC (active), next read 12:01:15 UTC (in 35s)',
    );
    expect(describeWatchLine({ ...figures, lastRead: null, nextReadAt: null }, now)).toBe(
      '  Watched by agent-followup-watch/q/1 since 12:00:00 UTC: no read reported yet, no read left before the deadline',
    );
  });

  test('says the figures are unavailable, and why', () => {
    expect(
      describeWatchLine({
        watcherId: 'agent-followup-watch/q/1',
        available: false,
        reason: 'no such watcher (it ended)',
      }),
    ).toBe('  Watcher agent-followup-watch/q/1: live figures not available (no such watcher (it ended))');
  });

  test("errors from the watcher's live count, not only the follow-up's first word of them", () => {
    const progress = {
      lastError: 'AgentApiServerError: HTTP 500',
      errorsSince: '2026-11-25T12:00:05.000Z',
    } as FollowUpProgress;
    const failing = {
      failing: { since: '2026-11-25T12:00:05.000Z', failedReads: 4, lastError: 'AgentApiServerError: HTTP 500' },
    };
    expect(failingLine(progress, now, failing)).toBe(
      'reads failing for 35s (since 12:00:05 UTC, 4 in a row): AgentApiServerError: HTTP 500',
    );
    expect(failingLine(progress, now)).toBe(
      'calls to the API failing for 35s (since 12:00:05 UTC): AgentApiServerError: HTTP 500',
    );
  });

  test('--json carries the figures in the documented shape, and counts their reads once', () => {
    const progress = {
      phase: 'waiting',
      projectId: 'p',
      jobId: 'j',
      lastStatus: 'active',
      lastError: null,
      errorsSince: null,
      polls: 2,
      sentAt: null,
      deadline: null,
    } as FollowUpProgress;
    const report = followUpReport(
      { workflowId: 'followup/p/j/1', executionStatus: 'RUNNING', progress, watch: figures },
      null,
    );
    expect(FollowUpReportSchema.parse(JSON.parse(JSON.stringify(report))).watch).toEqual(figures);
    expect(report.polls).toBe(5);
    const unavailable = followUpReport(
      {
        workflowId: 'followup/p/j/1',
        executionStatus: 'RUNNING',
        progress,
        watch: { watcherId: 'w', available: false, reason: 'gone' },
      },
      null,
    );
    expect(FollowUpReportSchema.parse(JSON.parse(JSON.stringify(unavailable))).watch).toEqual({
      watcherId: 'w',
      available: false,
      reason: 'gone',
    });
    expect(unavailable.polls).toBe(2);
  });
});
