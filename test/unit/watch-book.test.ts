import type { AgentJob } from '../../src/kernel/agent-job';
import { isAnswerTo, isEarlierAnswer } from '../../src/watch/watch-answer';
import { readFailed, readSucceeded, ReaderBook } from '../../src/watch/reader-book';
import { firstReadAt, nextReadAfter } from '../../src/kernel/poll-schedule';
import { watchShardOf, WatcherBook } from '../../src/watch/watcher-book';
import { reservedWorkflowIdProblem } from '../../src/workflows/follow-up/workflow-id-owner';
import { defaultSchedule, watchRegistration } from '../support/watch-fixtures';
import { type WatchRegistration } from '../../src/watch/messages';

const T0 = 1_800_000_000_000;
const schedule = defaultSchedule(T0);
const registration = (overrides: Partial<WatchRegistration> = {}) => watchRegistration(schedule, overrides);

const job = (status: string, prLink: string | null = null): AgentJob => ({ id: 'j', status, prLink });

describe('WatcherBook', () => {
  test('gives the changes since a version: new and replaced waits, and who left', () => {
    const registry = new WatcherBook();
    registry.upsert(registration());
    registry.upsert(registration({ workflowId: 'b' }));
    const first = registry.changesSince(0, 0);
    expect(first.full).toBe(true);
    expect(first.upserts.map((each) => each.workflowId)).toEqual(['followup/p/j/1', 'b']);
    registry.upsert(registration({ round: 2 }));
    registry.remove('b');
    const next = registry.changesSince(first.version, 0);
    expect(next).toEqual({
      version: first.version + 2,
      full: false,
      upserts: [registration({ round: 2 })],
      removed: ['b'],
      refused: [],
      watched: [],
    });
  });

  test('an earlier round of the same run never replaces a later one; another run of the workflow id does', () => {
    const registry = new WatcherBook({ registrations: [registration({ round: 3 })] });
    registry.upsert(registration({ round: 2 }));
    expect(registry.all()[0]?.round).toBe(3);
    registry.upsert(registration({ runId: 'run-2', round: 1 }));
    expect(registry.all()[0]).toMatchObject({ runId: 'run-2', round: 1 });
  });

  test('an answer forgets only the round it answered, and only for its run', () => {
    const registry = new WatcherBook({ registrations: [registration({ round: 2 })] });
    registry.remove('followup/p/j/1', 'run-1', 1);
    registry.remove('followup/p/j/1', 'run-0');
    expect(registry.size).toBe(1);
    registry.remove('followup/p/j/1', 'run-1', 2);
    expect(registry.size).toBe(0);
  });

  test('a version this run never gave out gets the whole book', () => {
    const registry = new WatcherBook({ registrations: [registration()] });
    expect(registry.changesSince(99, 0).full).toBe(true);
  });

  describe('the reads figure status shows never goes back, though each reader counts from zero', () => {
    const reportOf = (reads: number, round = 1) => ({
      workflowId: 'followup/p/j/1',
      runId: 'run-1',
      round,
      replyTo: 'reply-1',
      reads,
      lastRead: { atMs: T0 + reads, status: 'active' },
      failingSinceMs: null,
      failedReads: 0,
      lastError: null,
      nextReadAtMs: null,
    });
    const shown = (book: WatcherBook) => book.view('followup/p/j/1', T0)?.report?.reads;

    test('a reader that starts again (a new attempt, a switch of reading) is counted on from the last figure', () => {
      const book = new WatcherBook({ registrations: [registration()] });
      book.noteReports([reportOf(6)]);
      book.noteReports([reportOf(7)]);
      expect(shown(book)).toBe(7);
      book.noteReports([reportOf(1)]);
      expect(shown(book)).toBe(8);
      book.noteReports([reportOf(3)]);
      expect(shown(book)).toBe(10);
      // And again: the figure before adds up.
      book.noteReports([reportOf(1)]);
      expect(shown(book)).toBe(11);
      // Everything else in the report is the reader's own.
      expect(book.view('followup/p/j/1', T0)?.report?.lastRead).toEqual({ atMs: T0 + 1, status: 'active' });
    });

    test("a reader that has not read yet (the next run's, reporting the ask it took over) leaves the last read shown", () => {
      const book = new WatcherBook({ registrations: [registration()] });
      book.askFigures('followup/p/j/1', T0, T0 + 30_000);
      book.noteReports([reportOf(3)]);
      const next = new WatcherBook(JSON.parse(JSON.stringify(book.carried(T0 + 10_000))), T0 + 10_000);
      next.noteReports([{ ...reportOf(0), lastRead: null }]);
      expect(next.view('followup/p/j/1', T0)?.report).toMatchObject({ reads: 3, lastRead: reportOf(3).lastRead });
      // Its first read is the last one from then on, and a failed one (status null) shows as such.
      next.noteReports([{ ...reportOf(1), lastRead: { atMs: T0 + 50, status: null } }]);
      expect(next.view('followup/p/j/1', T0)?.report).toMatchObject({
        reads: 4,
        lastRead: { atMs: T0 + 50, status: null },
      });
    });

    test('the next run (continue-as-new) takes over the asks that last, shows their last report, and counts on from it', () => {
      const book = new WatcherBook({
        registrations: [registration(), registration({ workflowId: 'b' }), registration({ workflowId: 'c' })],
      });
      book.askFigures('followup/p/j/1', T0, T0 + 30_000);
      book.askFigures('c', T0, T0 + 10_000);
      book.noteReports([reportOf(6)]);
      book.noteReports([reportOf(1), { ...reportOf(4), workflowId: 'b' }, { ...reportOf(5), workflowId: 'c' }]);
      const carried = book.carried(T0 + 20_000);
      // Only the asks that last go along: the one for 'c' ran out before the stop, and nobody asked about 'b'.
      expect(carried.figuresAsked).toEqual({
        'followup/p/j/1': { untilMs: T0 + 30_000, report: { ...reportOf(1), reads: 7 } },
      });
      const next = new WatcherBook(JSON.parse(JSON.stringify(carried)), T0 + 20_000);
      // Asked about still, so the next reader reports it at once; the figure shown meanwhile is the last one.
      expect(next.figuresAskedUntil('followup/p/j/1', T0 + 20_000)).toBe(T0 + 30_000);
      expect(next.changesSince(0, T0 + 20_000).watched).toEqual(['followup/p/j/1']);
      expect(shown(next)).toBe(7);
      expect(next.view('b', T0 + 20_000)?.report).toBeNull();
      next.noteReports([reportOf(1)]);
      expect(shown(next)).toBe(8);
      // An ask renewed in the new run is its latest.
      next.askFigures('b', T0 + 21_000, T0 + 51_000);
      expect(next.figuresAskedNow(T0 + 21_000).map((ask) => ask.workflowId)).toEqual(['b', 'followup/p/j/1']);
    });

    test('at most 200 asks go to the next run, the latest ones, in the order they were made', () => {
      const waits = Array.from({ length: 250 }, (_, i) => registration({ workflowId: `w-${i}` }));
      const book = new WatcherBook({ registrations: waits });
      for (const [i, wait] of waits.entries()) book.askFigures(wait.workflowId, T0 + i, T0 + 30_000);
      const asked = Object.keys(book.carried(T0 + 1_000).figuresAsked ?? {});
      expect(asked).toEqual(waits.slice(50).map((wait) => wait.workflowId));
      const next = new WatcherBook(book.carried(T0 + 1_000), T0 + 1_000);
      expect(next.figuresAskedNow(T0 + 1_000)[0]?.workflowId).toBe('w-249');
    });

    test('a new round is a new wait, counted afresh; another run forgets the figure; malformed carried asks change nothing', () => {
      const book = new WatcherBook({ registrations: [registration()] });
      book.noteReports([reportOf(7)]);
      book.noteReports([reportOf(1)]);
      expect(shown(book)).toBe(8);
      book.upsert(registration({ round: 2 }));
      book.noteReports([reportOf(2, 2)]);
      expect(shown(book)).toBe(2);
      book.upsert(registration({ runId: 'run-2', round: 1 }));
      expect(shown(book)).toBeUndefined();
      const malformed: unknown[] = [
        null,
        'soon',
        { untilMs: 'later', report: reportOf(5) },
        { untilMs: T0 + 30_000, report: { ...reportOf(5), reads: -1 } },
        { untilMs: T0 + 30_000, report: { ...reportOf(5), replyTo: 'forged' } },
        { untilMs: T0 + 30_000, report: { ...reportOf(5), round: 2 } },
        { untilMs: T0 + 30_000, report: { ...reportOf(5), workflowId: 'b' } },
      ];
      for (const ask of malformed) {
        const next = new WatcherBook(
          { registrations: [registration()], figuresAsked: { 'followup/p/j/1': ask as never, unknown: ask as never } },
          T0,
        );
        expect(next.figuresAskedNow(T0).map((each) => each.workflowId)).not.toContain('unknown');
        next.noteReports([reportOf(1)]);
        expect(shown(next)).toBe(1);
      }
      const carriedOn = new WatcherBook(
        {
          registrations: [registration()],
          figuresAsked: { 'followup/p/j/1': { untilMs: T0 + 30_000, report: reportOf(5) } },
        },
        T0,
      );
      carriedOn.noteReports([reportOf(1)]);
      expect(shown(carriedOn)).toBe(6);
    });
  });

  describe('its size, in bytes of the continue-as-new input (the server refuses more than 2 MB)', () => {
    /** The next run's input, as the payload converter stores it. */
    const carriedBytes = (registry: WatcherBook, nowMs = T0) =>
      Buffer.byteLength(JSON.stringify({ ...registry.carried(nowMs), bookLimitBytes: registry.limitBytes }));
    const nth = (i: number, overrides: Partial<WatchRegistration> = {}) =>
      registration({ workflowId: `followup/projé/job-${i}/🦜`, runId: `run-${i}`, jobId: `job-${i}`, ...overrides });
    const refusalOf = (refused: WatchRegistration, atMs = T0) => ({
      workflowId: refused.workflowId,
      runId: refused.runId,
      round: refused.round,
      replyTo: refused.replyTo,
      atMs,
    });

    test('takes waits in until the next would pass the limit; what it counts is what the input takes, UTF-8 counted', () => {
      const registry = new WatcherBook({}, T0, 5_000);
      let admitted = 0;
      while (registry.admit(nth(admitted), T0)) admitted += 1;
      expect(admitted).toBeGreaterThan(5);
      expect(registry.size).toBe(admitted);
      expect(registry.admit(nth(admitted + 1), T0)).toBe(false);
      expect(registry.size).toBe(admitted);
      // Never less than the input takes but for its frame, and at most a byte or two a wait more (two refusals kept).
      const frame = carriedBytes(new WatcherBook({}, T0, 5_000));
      const taken = carriedBytes(registry) - frame;
      expect(registry.carriedBytes).toBeGreaterThanOrEqual(taken);
      expect(registry.carriedBytes - taken).toBeLessThanOrEqual(2 * (admitted + 2));
      expect(registry.bookBytes).toBeLessThanOrEqual(5_000);
    });

    test('a full book still takes a new round of a wait it keeps (it replaces it), and a late repeat of an older round changes nothing', () => {
      const registry = new WatcherBook({}, T0, 5_000);
      let admitted = 0;
      while (registry.admit(nth(admitted, { round: 5 }), T0)) admitted += 1;
      expect(registry.admit(nth(0, { round: 6 }), T0)).toBe(true);
      expect(registry.admit(nth(1, { round: 4 }), T0)).toBe(true);
      expect(registry.view(nth(1).workflowId, 0)?.registration.round).toBe(5);
      expect(registry.size).toBe(admitted);
    });

    test('a wait refused goes to the reader as a refusal, and the follow-up’s earlier wait is forgotten; the room a wait left takes the next', () => {
      const registry = new WatcherBook({}, T0, 5_000);
      let admitted = 0;
      while (registry.admit(nth(admitted), T0)) admitted += 1;
      const version = registry.changesSince(0, 0).version;
      // A new round that grew past the room left: refused, and the round before it forgotten.
      const grown = nth(0, { round: 2, readBefore: { atMs: T0, status: 'x'.repeat(2_000) } });
      expect(registry.admit(grown, T0 + 1)).toBe(false);
      expect(registry.view(grown.workflowId, 0)).toBeNull();
      expect(registry.changesSince(version, 0)).toMatchObject({
        removed: [grown.workflowId],
        refused: [refusalOf(grown, T0 + 1)],
      });
      expect(registry.changesSince(0, 0).refused).toEqual([refusalOf(nth(admitted), T0), refusalOf(grown, T0 + 1)]);
      expect(registry.admit(nth(admitted + 1), T0)).toBe(true);
      registry.remove(nth(1).workflowId);
      expect(registry.admit(nth(admitted + 2), T0)).toBe(true);
    });

    test('a refusal is kept until its follow-up registers again or leaves, or for two minutes, and carried over a continue-as-new', () => {
      const registry = new WatcherBook({ registrations: [nth(0)] }, T0, 100);
      for (const i of [1, 2, 3]) expect(registry.admit(nth(i), T0)).toBe(false);
      registry.remove(nth(1).workflowId, nth(1).runId);
      registry.remove(nth(0).workflowId, nth(0).runId, 1);
      const next = new WatcherBook(registry.carried(T0 + 60_000), T0 + 60_000, 100);
      expect(next.changesSince(0, 0).refused).toEqual([refusalOf(nth(2)), refusalOf(nth(3))]);
      // The limit raised since: the follow-up registers again and is taken in.
      const raised = new WatcherBook(registry.carried(T0 + 60_000), T0 + 60_000, 5_000);
      expect(raised.admit(nth(2, { round: 2 }), T0 + 60_000)).toBe(true);
      expect(raised.changesSince(0, 0).refused).toEqual([refusalOf(nth(3))]);
      expect(registry.carried(T0 + 2 * 60_000 + 1).refusals).toEqual([]);
    });

    test('a refusal made after the reader stopped is carried however long the run takes to wind down', () => {
      const registry = new WatcherBook({ registrations: [nth(0)] }, T0, 100);
      const readerStoppedAtMs = T0;
      expect(registry.admit(nth(1), T0 + 1_000)).toBe(false);
      expect(registry.admit(nth(2), T0 + 6 * 60_000)).toBe(false);
      expect(registry.carried(readerStoppedAtMs).refusals).toEqual([
        refusalOf(nth(1), T0 + 1_000),
        refusalOf(nth(2), T0 + 6 * 60_000),
      ]);
    });

    test('refusals keep to their own share of the input: the oldest go first', () => {
      const registry = new WatcherBook({}, T0, 0);
      for (let i = 0; i < 3_000; i += 1) registry.admit(nth(i), T0);
      const { refused } = registry.changesSince(0, 0);
      expect(refused.length).toBeGreaterThan(1_000);
      expect(refused.length).toBeLessThan(3_000);
      expect(refused.at(-1)).toEqual(refusalOf(nth(2_999)));
      expect(carriedBytes(registry)).toBeLessThanOrEqual(200_000 + 100);
    });

    test('waits carried from the run before are all kept, even past a limit lowered since', () => {
      const registry = new WatcherBook({ registrations: [nth(0), nth(1), nth(2)] }, T0, 100);
      expect(registry.size).toBe(3);
      expect(registry.admit(nth(3), T0)).toBe(false);
    });
  });

  test('one job, one shard; shards spread jobs', () => {
    expect(watchShardOf('p', 'j', 8)).toBe(watchShardOf('p', 'j', 8));
    const shards = new Set(Array.from({ length: 200 }, (_, i) => watchShardOf('p', `job-${i}`, 8)));
    expect(shards.size).toBe(8);
  });

  test('shards spread evenly, also ids that repeat their digits (a project per job: `p-17`, `job-17`)', () => {
    const spread = (shards: number, ids: (i: number) => [string, string]) => {
      const counts = new Array<number>(shards).fill(0);
      for (let i = 0; i < 5_000; i += 1) {
        const shard = watchShardOf(...ids(i), shards);
        counts[shard] = (counts[shard] ?? 0) + 1;
      }
      return counts;
    };
    for (const shards of [2, 3, 8]) {
      for (const ids of [
        (i: number): [string, string] => [`burst-p${i}`, `burst-${i}`],
        (i: number): [string, string] => [`project-${i % 63}`, `job-${i}`],
        (i: number): [string, string] => ['one-project', `${i}`],
      ]) {
        // Within a tenth of an even share: 5,000 ids hashed at random stray about 2 % from it.
        for (const count of spread(shards, ids)) expect(Math.abs(count - 5_000 / shards)).toBeLessThan(500 / shards);
      }
    }
  });
});

describe('ReaderBook', () => {
  test('a reader taking over after a crash reads at once the waits whose read fell due while no one read, the most overdue first', () => {
    const waits = [
      registration({ workflowId: 'a' }), // reads at T0 + 5, 15, 35, 75 s
      registration({ workflowId: 'b', schedule: defaultSchedule(T0 + 28_000) }), // 33, 43
      registration({ workflowId: 'c', schedule: defaultSchedule(T0 + 32_000) }), // 37, 47
      registration({ workflowId: 'e', schedule: defaultSchedule(T0 + 10_000) }), // 15, 25, 45: its last read came before the crash
    ];
    const book = new ReaderBook();
    book.apply({ version: 1, full: true, upserts: waits, removed: [], refused: [] }, T0 + 40_000, T0 + 30_000);
    expect(book.due(T0 + 40_000, 10).map((wait) => wait.registration.workflowId)).toEqual(['b', 'a', 'c']);
    expect(book.get('e')?.dueAtMs).toBe(T0 + 45_000);
    // A first reader (nothing missed) keeps to the schedule's next points.
    const fresh = new ReaderBook();
    fresh.apply({ version: 1, full: true, upserts: waits, removed: [], refused: [] }, T0 + 40_000);
    expect(fresh.due(T0 + 40_000, 10)).toEqual([]);
    expect(fresh.get('a')?.dueAtMs).toBe(T0 + 75_000);
  });

  test('a wait is due at its schedule’s next point, or at once when a read is asked for', () => {
    const book = new ReaderBook();
    book.apply(
      {
        version: 1,
        full: true,
        upserts: [registration(), registration({ workflowId: 'now', readAtOnce: true })],
        removed: [],
        refused: [],
      },
      T0 + 1_000,
    );
    expect(book.due(T0 + 1_000, 10).map((wait) => wait.registration.workflowId)).toEqual(['now']);
    expect(book.get('followup/p/j/1')?.dueAtMs).toBe(T0 + 5_000);
    expect(book.due(T0 + 5_000, 10).map((wait) => wait.registration.workflowId)).toEqual(['now', 'followup/p/j/1']);
    expect(book.due(T0 + 5_000, 1)).toHaveLength(1);
  });

  test('the next first read is known apart from the rest: the long reader reads a new wait at its point, not a turn later', () => {
    const book = new ReaderBook();
    const read = registration({ workflowId: 'read' });
    const fresh = registration({ workflowId: 'fresh', schedule: defaultSchedule(T0 + 2_000) });
    book.apply({ version: 1, full: true, upserts: [read], removed: [], refused: [] }, T0);
    readSucceeded(book.get('read')!, job('active'), T0 + 5_000, T0 + 5_000);
    expect(book.nextDueAtMs()).toBe(T0 + 15_000);
    expect(book.nextDueAtMs(true)).toBeNull();
    book.apply({ version: 2, full: false, upserts: [fresh], removed: [], refused: [] }, T0 + 5_000);
    expect(book.nextDueAtMs(true)).toBe(T0 + 7_000);
    readSucceeded(book.get('fresh')!, job('active'), T0 + 7_000, T0 + 7_000);
    expect(book.nextDueAtMs(true)).toBeNull();
  });

  test('no wait is read before its point; waits of different starts fall due together once capped', () => {
    const book = new ReaderBook();
    const later = registration({ workflowId: 'later', schedule: defaultSchedule(T0 + 20_000) });
    book.apply({ version: 1, full: true, upserts: [registration(), later], removed: [], refused: [] }, T0 + 70_000);
    // Planned: the first at T0+75 s, the other at T0+95 s (its ramp's 40 s gap from T0+55 s).
    expect(book.due(T0 + 75_000, 10).map((wait) => wait.registration.workflowId)).toEqual(['followup/p/j/1']);
    const first = book.get('followup/p/j/1')!;
    const second = book.get('later')!;
    readSucceeded(first, job('active'), T0 + 75_000, T0 + 75_000);
    expect(book.due(T0 + 94_999, 10)).toEqual([]);
    readSucceeded(second, job('active'), T0 + 95_000, T0 + 95_000);
    // Both capped: the next minute on the clock, one wake-up for the two.
    expect([first.dueAtMs, second.dueAtMs]).toEqual([T0 + 120_000, T0 + 120_000]);
    expect(book.due(T0 + 120_000, 10).map((wait) => wait.registration.workflowId)).toEqual(['followup/p/j/1', 'later']);
    // A late read stands for its point: the next is the point after it, not one a gap after the read.
    readFailed(second, 'timeout', T0 + 121_000, T0 + 121_000, 0);
    expect(second.dueAtMs).toBe(T0 + 180_000);
  });

  test('an unchanged read plans the next; a change answers and stops the reads until the next round', () => {
    const book = new ReaderBook();
    book.apply({ version: 1, full: true, upserts: [registration()], removed: [], refused: [] }, T0);
    const wait = book.get('followup/p/j/1')!;
    expect(readSucceeded(wait, job('active'), T0 + 5_000, T0 + 5_000)).toMatchObject({
      answer: false,
      recovered: false,
    });
    expect(wait.dueAtMs).toBe(T0 + 15_000);
    expect(
      readSucceeded(wait, job('completed', 'https://github.com/a/b/pull/1'), T0 + 15_000, T0 + 15_000).answer,
    ).toBe(true);
    expect(book.due(T0 + 60_000, 10)).toEqual([]);
    book.apply(
      {
        version: 2,
        full: false,
        upserts: [
          registration({
            round: 2,
            known: { status: 'completed', prLink: 'https://github.com/a/b/pull/1', archivedAt: null },
          }),
        ],
        removed: [],
        refused: [],
      },
      T0 + 16_000,
    );
    expect(book.get('followup/p/j/1')?.answered).toBe(false);
    expect(book.get('followup/p/j/1')?.polls).toBe(0);
  });

  test('a round replaced before it was answered (a read asked for) keeps its reads: the follow-up never heard of them', () => {
    const book = new ReaderBook();
    book.apply({ version: 1, full: true, upserts: [registration()], removed: [], refused: [] }, T0);
    readSucceeded(book.get('followup/p/j/1')!, job('active'), T0 + 5_000, T0 + 5_000);
    readSucceeded(book.get('followup/p/j/1')!, job('active'), T0 + 15_000, T0 + 15_000);
    book.apply(
      { version: 2, full: false, upserts: [registration({ round: 2, readAtOnce: true })], removed: [], refused: [] },
      T0 + 16_000,
    );
    expect(book.get('followup/p/j/1')?.polls).toBe(2);
    // Another run of the workflow id starts from nothing.
    book.apply(
      { version: 3, full: false, upserts: [registration({ runId: 'run-2', round: 1 })], removed: [], refused: [] },
      T0 + 17_000,
    );
    expect(book.get('followup/p/j/1')?.polls).toBe(0);
  });

  test('an unchanged terminal read answers once the settle window has passed', () => {
    const book = new ReaderBook();
    const known = { status: 'completed', prLink: null, archivedAt: null };
    book.apply(
      {
        version: 1,
        full: true,
        upserts: [registration({ known, acceptUnchangedFromMs: T0 + 30_000 })],
        removed: [],
        refused: [],
      },
      T0,
    );
    const wait = book.get('followup/p/j/1')!;
    expect(readSucceeded(wait, job('completed'), T0 + 20_000, T0 + 20_000).answer).toBe(false);
    expect(readSucceeded(wait, job('completed'), T0 + 40_000, T0 + 40_000).answer).toBe(true);
  });

  test("a job found ended, unchanged, inside the settle window is read again when the window ends, if that comes before the schedule's next point, and not early", () => {
    const book = new ReaderBook();
    const known = { status: 'completed', prLink: null, archivedAt: null };
    const settling = registration({ known, acceptUnchangedFromMs: T0 + 20_000 });
    const pastDeadline = registration({
      workflowId: 'past-deadline',
      known,
      acceptUnchangedFromMs: schedule.deadlineMs + 1,
    });
    book.apply({ version: 1, full: true, upserts: [settling, pastDeadline], removed: [], refused: [] }, T0);
    const wait = book.get('followup/p/j/1')!;
    // Points at T0+5 s, 15 s, 35 s: the window's end (20 s) comes before the third.
    readSucceeded(wait, job('completed'), T0 + 5_000, T0 + 5_000);
    expect(wait.dueAtMs).toBe(T0 + 15_000);
    readSucceeded(wait, job('completed'), T0 + 15_000, T0 + 15_000);
    expect(wait.dueAtMs).toBe(T0 + 20_000);
    expect(book.due(T0 + 19_000, 10).map((due) => due.registration.workflowId)).not.toContain('followup/p/j/1');
    expect(readSucceeded(wait, job('completed'), T0 + 20_000, T0 + 20_000).answer).toBe(true);
    // A window that ends past the deadline changes nothing; nor does a read that is not the known end.
    const late = book.get('past-deadline')!;
    readSucceeded(late, job('completed'), T0 + 15_000, T0 + 15_000);
    expect(late.dueAtMs).toBe(T0 + 35_000);
    expect(nextReadAfter(settling, job('failed'), T0 + 35_000)).toBe(T0 + 35_000);
  });

  test("a wait registered knowing the job ended inside the settle window (after a read asked for) is first read when the window ends, if that comes before the schedule's first point", () => {
    const known = { status: 'completed', prLink: null, archivedAt: null };
    // The schedule's first point is at T0+5 s; a window that ends at 3 s comes first, one at 8 s does not.
    expect(firstReadAt(registration({ known, acceptUnchangedFromMs: T0 + 3_000 }), T0)).toBe(T0 + 3_000);
    expect(firstReadAt(registration({ known, acceptUnchangedFromMs: T0 + 8_000 }), T0)).toBe(T0 + 5_000);
    // A window already over: at once. A known job still working, or no window: the schedule's point.
    expect(firstReadAt(registration({ known, acceptUnchangedFromMs: T0 - 1_000 }), T0)).toBe(T0);
    const working = { ...known, status: 'active' };
    expect(firstReadAt(registration({ known: working, acceptUnchangedFromMs: T0 + 3_000 }), T0)).toBe(T0 + 5_000);
    expect(firstReadAt(registration({ known, acceptUnchangedFromMs: null }), T0)).toBe(T0 + 5_000);
    // The reader's book plans the first read the same way.
    const book = new ReaderBook();
    const settling = registration({ known, acceptUnchangedFromMs: T0 + 3_000, readAtOnce: false });
    book.apply({ version: 1, full: true, upserts: [settling], removed: [], refused: [] }, T0);
    expect(book.get(settling.workflowId)!.dueAtMs).toBe(T0 + 3_000);
  });

  test('failed reads are counted from the first; Retry-After moves the next read, or past the deadline says so', () => {
    const book = new ReaderBook();
    book.apply({ version: 1, full: true, upserts: [registration()], removed: [], refused: [] }, T0);
    const wait = book.get('followup/p/j/1')!;
    expect(readFailed(wait, 'AgentApiServerError: HTTP 500', T0 + 5_000, T0 + 5_000, 0)).toEqual({
      pastDeadline: false,
    });
    expect(readFailed(wait, 'AgentApiRateLimited: HTTP 429', T0 + 15_000, T0 + 15_000, 120_000)).toEqual({
      pastDeadline: false,
    });
    expect(wait).toMatchObject({
      failedReads: 2,
      failingSinceMs: T0 + 5_000,
      lastError: 'AgentApiRateLimited: HTTP 429',
      dueAtMs: T0 + 135_000,
    });
    expect(readFailed(wait, 'AgentApiRateLimited: HTTP 429', T0 + 135_000, T0 + 135_000, 2 * 3_600_000)).toEqual({
      pastDeadline: true,
    });
    expect(readSucceeded(wait, job('active'), T0 + 200_000, T0 + 200_000).answer).toBe(false);
    expect(wait).toMatchObject({ failedReads: 0, failingSinceMs: null, lastError: null });
  });

  test('a later run of the workflow id is not dropped for an earlier run that ended', () => {
    const book = new ReaderBook();
    book.apply({ version: 1, full: true, upserts: [registration({ runId: 'run-2' })], removed: [], refused: [] }, T0);
    book.drop('followup/p/j/1', 'run-1');
    expect(book.size).toBe(1);
    book.drop('followup/p/j/1', 'run-2');
    expect(book.size).toBe(0);
  });
});

test("a follow-up may not take a job watcher's workflow id", () => {
  expect(reservedWorkflowIdProblem('agent-followup-watch/agent-followup/3')).toMatch(/belong to the job watchers/);
  expect(reservedWorkflowIdProblem('followup/p/j/1')).toBeUndefined();
});

describe('answers a follow-up takes (isAnswerTo)', () => {
  const to = { round: 3, replyTo: 'b9c1' };
  const job = { id: 'j', status: 'completed', prLink: 'https://github.com/acme/app/pull/1' };
  const read = { ...to, kind: 'read', job, readAtMs: 1, polls: 2, sawActive: true };

  test('the watcher’s answer to the current wait is taken', () => {
    expect(isAnswerTo(read, to, 'j')).toBe(true);
    expect(isAnswerTo({ ...to, kind: 'refused', polls: 0 }, to, 'j')).toBe(true);
    expect(
      isAnswerTo({ ...to, kind: 'failure', type: 'JobNotFound', message: 'gone', details: [], polls: 1 }, to, 'j'),
    ).toBe(true);
  });

  test.each([
    ['another round', { ...read, round: 2 }],
    ['round 0', { ...read, round: 0 }],
    ['no name (a signal from anyone but the watcher)', { ...read, replyTo: undefined }],
    ['another name', { ...read, replyTo: 'guess' }],
    ['another job’s body', { ...read, job: { ...job, id: 'other-job', prLink: 'https://evil.example/pull/666' } }],
    ['a job without a status', { ...read, job: { id: 'j', prLink: null } }],
    ['a pull request that is not a string', { ...read, job: { ...job, prLink: 666 } }],
    ['no time of read', { ...read, readAtMs: undefined }],
    ['an unknown kind', { ...read, kind: 'done' }],
    ['garbage', 'completed'],
    ['nothing', null],
  ])('%s is not an answer', (_, value) => {
    expect(isAnswerTo(value, to, 'j')).toBe(false);
  });
});

test('an answer to an earlier wait is told from one nobody should have sent, so only the second is a warning', () => {
  const to = { round: 3, replyTo: 'b9c1' };
  const earlier = { round: 2, replyTo: 'a7f0', kind: 'refused', polls: 0 };
  expect([
    isEarlierAnswer(earlier, to),
    isEarlierAnswer({ ...earlier, round: 3 }, to),
    isEarlierAnswer({ ...earlier, round: 4 }, to),
    isEarlierAnswer({ round: 1 }, to),
  ]).toEqual([true, false, false, false]);
});

test('an unwatch names its wait: one for another wait (an earlier one, or a guess) forgets nothing', () => {
  const registry = new WatcherBook({}, T0, 1_000_000);
  registry.admit(registration({ round: 2, replyTo: 'second' }), T0);
  registry.remove('followup/p/j/1', 'run-1', undefined, 'first');
  registry.remove('followup/p/j/1', undefined, undefined, 'guess');
  expect(registry.view('followup/p/j/1', 0)?.registration.replyTo).toBe('second');
  registry.remove('followup/p/j/1', 'run-1', undefined, 'second');
  expect(registry.view('followup/p/j/1', 0)).toBeNull();
});
