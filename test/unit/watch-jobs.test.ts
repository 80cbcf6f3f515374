/**
 * The watcher's reading activity on a worker too busy to answer its book query at once: it stays alive (heartbeats
 * from a timer, not from behind the query) and a failed query is tried again rather than ending the attempt. Run in
 * the SDK's MockActivityEnvironment, reading the simulator over real loopback HTTP; the Temporal client is a stand-in
 * whose query is slow or fails on purpose (the dev-server tests run the real one).
 */
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { type MockActivityEnvironment } from '@temporalio/testing';
import { quietActivityEnvironment } from '../support/quiet-activity-environment';
import type { StartWatching, WatcherAddress } from '../../src/watch/start-watching.activity';
import { createWatchJobs } from '../../src/watch/watch-jobs.activity';
import { jobState } from '../../src/kernel/agent-job';
import type { WatchAnswer } from '../../src/watch/watch-answer';
import { loopbackApi } from '../support/loopback-api';
import {
  type WatchChanges,
  type WatchRefusal,
  type WatchRegistration,
  type WaitReadReport,
} from '../../src/watch/messages';
const API_KEY = 'mint_test_watch_key_0001';
const loopback = loopbackApi(API_KEY);

/**
 * A stand-in client: the watcher answers each book query with `answer(n)` (n from 1) and keeps the reports its reader
 * sends (`reportReads`, for waits the changes say are `watched`); follow-ups' signals are kept, and a signal `fails`
 * says no to (n from 1 per follow-up) throws as an unreachable server would.
 */
function temporalWhose(
  answer: (query: number, reports: readonly WaitReadReport[]) => Promise<WatchChanges>,
  fails: (workflowId: string, n: number) => boolean = () => false,
) {
  const signals: Array<{ workflowId: string; name: string; args: unknown[] }> = [];
  const reports: WaitReadReport[] = [];
  const tries = new Map<string, number>();
  let queries = 0;
  const client = {
    workflow: {
      getHandle: (workflowId: string) => ({
        query: () => answer((queries += 1), reports),
        executeUpdate: async (_update: unknown, { args }: { args: [WaitReadReport[]] }) => {
          reports.push(...args[0]);
        },
        signal: async (definition: { name: string } | string, ...args: unknown[]) => {
          const n = (tries.get(workflowId) ?? 0) + 1;
          tries.set(workflowId, n);
          if (fails(workflowId, n)) throw new Error('14 UNAVAILABLE: the server did not answer');
          signals.push({ workflowId, name: typeof definition === 'string' ? definition : definition.name, args });
        },
      }),
    },
  };
  return { client: client as unknown as Client, signals, queries: () => queries };
}

/** For the tests whose watcher never closes under its reader: nothing is registered again. */
const notExpected: StartWatching = () => Promise.reject(new Error('no wait should be registered again'));

const noChanges = (version: number): WatchChanges => ({ version, full: false, upserts: [], removed: [], refused: [] });

type SentSignal = { workflowId: string; name: string; args: unknown[] };

/** A `jobReads` that answers a wait (not one that tells of failing reads). */
function isAnswer(signal: SentSignal): boolean {
  const [reads] = signal.args;
  return signal.name === 'jobReads' && typeof reads === 'object' && reads !== null && 'answer' in reads;
}

function answerIn(signal: SentSignal | undefined): WatchAnswer {
  return (signal?.args[0] as { answer: WatchAnswer }).answer;
}

function waitUntil(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (check()) {
        clearInterval(timer);
        resolve();
      }
    }, 20);
  });
}

test('a book query that takes seconds does not stop the heartbeats', async () => {
  const { client, queries } = temporalWhose(() => new Promise(() => undefined));
  const env = quietActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
  const beats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => beats.push(details));
  const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal, notExpected), {
    watcherId: 'watcher-slow',
  });
  await waitUntil(() => beats.length >= 3);
  // Still the first query, never answered: the heartbeats came from the timer.
  expect(queries()).toBe(1);
  env.cancel();
  await expect(running).rejects.toThrow();
});

test('a failed book query is tried again, and the book it then gets is read', async () => {
  const ref = { projectId: 'proj-watch-1', jobId: 'job-watch-1' };
  const job = loopback.simulator.addJob(ref);
  // Known as something else: the first read is an answer.
  const registration = registrationOf(ref, {
    workflowId: 'follow-up-1',
    known: { ...jobState(job), status: 'active' },
    gapMs: 100,
  });
  const { client, signals, queries } = temporalWhose(async (query) => {
    if (query <= 2) throw new Error('query timed out: the watcher did not answer in time');
    return { version: 1, full: true, upserts: query === 3 ? [registration] : [], removed: [], refused: [] };
  });
  const env = quietActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
  const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal, notExpected), {
    watcherId: 'watcher-flaky',
  });
  await waitUntil(() => signals.some(isAnswer));
  expect(queries()).toBeGreaterThanOrEqual(3);
  const answer = answerIn(signals.find(isAnswer));
  expect(answer).toMatchObject({
    round: 1,
    replyTo: `${registration.workflowId}/1`,
    kind: 'read',
    job: { status: loopback.simulator.job(ref.projectId, ref.jobId).status },
  });
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(1);
  env.cancel();
  await expect(running).rejects.toThrow();
});

test("the heartbeat details carry the reader's figures (the Web UI shows them): reads, the last one, the next due", async () => {
  const ref = { projectId: 'proj-watch-figures', jobId: 'job-watch-figures' };
  const job = loopback.simulator.addJob({ ...ref, busyForMs: 600_000 });
  // Known as it is: no read answers, so the reader goes on reading every 100 ms.
  const registration = registrationOf(ref, { workflowId: 'follow-up-figures', known: jobState(job), gapMs: 100 });
  const { client } = temporalWhose(async (query) =>
    query === 1 ? { version: 1, full: true, upserts: [registration], removed: [], refused: [] } : noChanges(1),
  );
  const env = quietActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
  const beats: Array<{ reads: number; failedReads: number; lastReadAt: string | null; nextReadAt: string | null }> = [];
  env.on('heartbeat', (details: (typeof beats)[number]) => beats.push(details));
  const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal, notExpected), {
    watcherId: 'watcher-figures',
  });
  await whileRunning(env, running, async () => {
    // A heartbeat made while the one wait is being read has no next read yet.
    await waitUntil(() => (beats.at(-1)?.reads ?? 0) >= 3 && beats.at(-1)?.nextReadAt != null);
    const last = beats.at(-1)!;
    expect(last.reads).toBeLessThanOrEqual(loopback.simulator.counts(ref.projectId, ref.jobId).gets);
    expect(last.failedReads).toBe(0);
    expect(Date.parse(last.lastReadAt ?? '')).toBeGreaterThan(registration.schedule.startedAtMs);
    expect(Date.parse(last.nextReadAt ?? '')).toBeGreaterThan(Date.parse(last.lastReadAt ?? ''));
  });
  expect(beats[0]).toMatchObject({ reads: 0, lastReadAt: null });
});

/** A first wait (round 1, read at once) of run 'run-1' on a fixed gap; its deadline a minute or ten gaps away, whichever is later. */
function registrationOf(
  ref: { projectId: string; jobId: string },
  wait: { workflowId: string; known: WatchRegistration['known']; gapMs: number },
): WatchRegistration {
  const now = Date.now();
  return {
    workflowId: wait.workflowId,
    runId: 'run-1',
    ...ref,
    known: wait.known,
    acceptUnchangedFromMs: null,
    schedule: {
      startedAtMs: now,
      initialIntervalMs: wait.gapMs,
      backoffCoefficient: 1,
      maxIntervalMs: wait.gapMs,
      deadlineMs: now + Math.max(60_000, 10 * wait.gapMs),
    },
    readAtOnce: true,
    round: 1,
    replyTo: `${wait.workflowId}/1`,
  };
}

/** Runs `check` against a running reading activity, then cancels the activity whatever `check` found. */
async function whileRunning(
  env: MockActivityEnvironment,
  running: Promise<unknown>,
  check: () => Promise<void>,
): Promise<void> {
  try {
    await check();
  } finally {
    env.cancel();
    await running.catch(() => undefined);
  }
}

describe('refusals (a full book)', () => {
  const refusal = (workflowId: string, atMs: number, round = 1): WatchRefusal => ({
    workflowId,
    runId: `${workflowId}-run`,
    round,
    replyTo: `${workflowId}/${round}`,
    atMs,
  });
  const refusedTo = (signals: ReturnType<typeof temporalWhose>['signals'], workflowId: string) =>
    signals.filter((signal) => signal.workflowId === workflowId && isAnswer(signal)).map(answerIn);

  test('a refusal whose signal failed is told after the next refresh', async () => {
    const { client, signals, queries } = temporalWhose(
      async (query) =>
        query === 1
          ? { version: 1, full: true, upserts: [], removed: [], refused: [refusal('refused-1', Date.now())] }
          : noChanges(1),
      (workflowId, n) => workflowId === 'refused-1' && n === 1,
    );
    const env = quietActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
    const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal, notExpected), {
      watcherId: 'watcher-retry',
    });
    await whileRunning(env, running, async () => {
      await waitUntil(() => refusedTo(signals, 'refused-1').length > 0);
      expect(queries()).toBeGreaterThanOrEqual(2);
      expect(refusedTo(signals, 'refused-1')).toEqual([
        { round: 1, replyTo: 'refused-1/1', kind: 'refused', polls: 0 },
      ]);
    });
  });

  test('a new attempt tells only the refusals the attempt before may not have told', async () => {
    const toldBeforeMs = Date.now() - 60 * 60_000;
    const refused = [
      refusal('told-long-ago', toldBeforeMs - 10 * 60_000),
      refusal('told-just-before', toldBeforeMs - 30_000),
      refusal('made-after', toldBeforeMs + 1_000),
    ];
    const { client, signals } = temporalWhose(async (query) =>
      query === 1 ? { version: 3, full: true, upserts: [], removed: [], refused } : noChanges(3),
    );
    const env = quietActivityEnvironment({
      heartbeatTimeoutMs: 5_000,
      attempt: 2,
      heartbeatDetails: { watching: 0, inFlight: 0, refusalsToldBeforeMs: toldBeforeMs },
    });
    const beats: Array<{ refusalsToldBeforeMs: number | null }> = [];
    env.on('heartbeat', (details: { refusalsToldBeforeMs: number | null }) => beats.push(details));
    const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal, notExpected), {
      watcherId: 'watcher-again',
    });
    await whileRunning(env, running, async () => {
      // The next attempt's starting point moves past this attempt's first book once its refusals are told.
      await waitUntil(() =>
        beats.some((beat) => beat.refusalsToldBeforeMs !== null && beat.refusalsToldBeforeMs > toldBeforeMs),
      );
      // Within the clocks' margin of the last telling, a refusal is told again, to be sure; one long before is not.
      expect(signals.map((signal) => signal.workflowId).sort()).toEqual(['made-after', 'told-just-before']);
    });
  });

  test('a refused wait carries the reads of the wait it replaced, which no answer counted', async () => {
    const ref = { projectId: 'proj-watch-2', jobId: 'job-watch-2' };
    const job = loopback.simulator.addJob(ref);
    // Known as it is: no read answers. Read at once, then not for a minute: the one read is over before the refusal comes.
    const registration = registrationOf(ref, { workflowId: 'follow-up-refused', known: jobState(job), gapMs: 60_000 });
    let refused = false;
    const { client, signals } = temporalWhose(async (query, reports) => {
      if (query === 1) return { version: 1, full: true, upserts: [registration], removed: [], refused: [] };
      // Asked about, the reader reports the read once it has come back.
      if (refused || !reports.some((report) => report.workflowId === registration.workflowId && report.reads === 1))
        return { ...noChanges(refused ? 3 : 1), watched: [registration.workflowId] };
      refused = true;
      // Its next round (a read asked for) found the book full: the watcher forgot round 1 and refused round 2.
      return {
        version: 3,
        full: false,
        upserts: [],
        removed: [registration.workflowId],
        refused: [
          { workflowId: registration.workflowId, runId: 'run-1', round: 2, replyTo: 'round-2', atMs: Date.now() },
        ],
      };
    });
    const env = quietActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
    const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal, notExpected), {
      watcherId: 'watcher-replaced',
    });
    await whileRunning(env, running, async () => {
      await waitUntil(() => refusedTo(signals, registration.workflowId).length > 0);
      const [told] = refusedTo(signals, registration.workflowId);
      // The read of round 1, which no answer counted.
      expect(told).toEqual({ round: 2, replyTo: 'round-2', kind: 'refused', polls: 1 });
      expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(1);
    });
  });
});

describe('a watcher that closes under its reader', () => {
  /** A reader holding two unanswered waits (their jobs unchanged, read again only in a minute), then cancelled for `reason`. */
  async function closeUnder(
    reason: 'NOT_FOUND' | 'CANCELLED',
  ): Promise<Array<{ address: WatcherAddress; registration: WatchRegistration }>> {
    const waits = [1, 2].map((n) => {
      const ref = { projectId: 'proj-closed', jobId: `job-closed-${reason}-${n}` };
      return registrationOf(ref, {
        workflowId: `follow-up-closed-${reason}-${n}`,
        known: jobState(loopback.simulator.addJob(ref)),
        gapMs: 60_000,
      });
    });
    const { client } = temporalWhose(async (query) =>
      query === 1 ? { version: 1, full: true, upserts: waits, removed: [], refused: [] } : noChanges(1),
    );
    const registeredAgain: Array<{ address: WatcherAddress; registration: WatchRegistration }> = [];
    const startWatching: StartWatching = async (address, registration) =>
      void registeredAgain.push({ address, registration });
    const env = quietActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
    const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal, startWatching), {
      watcherId: `watcher-closed-${reason}`,
    });
    await waitUntil(() => waits.every((wait) => loopback.simulator.counts(wait.projectId, wait.jobId).gets === 1));
    env.cancel(reason);
    await expect(running).rejects.toThrow();
    return registeredAgain;
  }

  test('terminated or reset (its run closed, the attempt not stopped first): every unanswered wait is registered with a new watcher at once', async () => {
    const again = await closeUnder('NOT_FOUND');
    expect(again.map(({ registration }) => registration.workflowId).sort()).toEqual([
      'follow-up-closed-NOT_FOUND-1',
      'follow-up-closed-NOT_FOUND-2',
    ]);
    expect(new Set(again.map(({ address }) => address.watcherId))).toEqual(new Set(['watcher-closed-NOT_FOUND']));
  });

  test('stopped by its watcher (continue-as-new, or the end of an empty book): the book went with the watcher, nothing is registered again', async () => {
    expect(await closeUnder('CANCELLED')).toEqual([]);
  });
});

describe('awaiting changes (the awaitChanges Update)', () => {
  type Look = { version: number; asks: number; attempt: number };
  type News = { version: number; asks: number; stop: boolean };
  /**
   * A stand-in watcher that takes the reader's looks: each is held until the test answers it (`answer`) or refuses it
   * as a watcher's validator would (`refuse`); the book query answers `book()`.
   */
  function awaitingWatcher(book: () => WatchChanges) {
    const looks: Array<{ look: Look; answer(news: News): void; refuse(type: string): void }> = [];
    let queries = 0;
    const signals: Array<{ workflowId: string; name: string; args: unknown[] }> = [];
    const client = {
      withAbortSignal: <R>(_signal: AbortSignal, fn: () => Promise<R>) => fn(),
      workflow: {
        getHandle: (workflowId: string) => ({
          query: async () => ((queries += 1), book()),
          executeUpdate: async () => undefined,
          startUpdate: async (_update: unknown, { args }: { args: [Look] }) => {
            const result = new Promise<News>((resolve, reject) =>
              looks.push({
                look: args[0],
                answer: resolve,
                refuse: (type) =>
                  reject(new WorkflowUpdateFailedError('refused', ApplicationFailure.create({ type, message: type }))),
              }),
            );
            return { result: () => result };
          },
          signal: async (definition: { name: string }, ...args: unknown[]) =>
            void signals.push({ workflowId, name: definition.name, args }),
        }),
      },
    };
    return { client: client as unknown as Client, looks, signals, queries: () => queries };
  }
  const bookAt = (version: number, asks: number, upserts: WatchRegistration[] = []): WatchChanges => ({
    version,
    full: false,
    upserts,
    removed: [],
    refused: [],
    watched: [],
    asks,
  });

  test('while the watcher holds its look, the reader asks nothing by the clock; news of a change brings one refresh and a new look', async () => {
    let book = bookAt(3, 1);
    const watcher = awaitingWatcher(() => book);
    const env = quietActivityEnvironment({ heartbeatTimeoutMs: 15_000 });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => beats.push(details));
    const running = env.run(createWatchJobs(loopback.api, watcher.client, new AbortController().signal, notExpected), {
      watcherId: 'watcher-awaiting',
    });
    await whileRunning(env, running, async () => {
      await waitUntil(() => watcher.looks.length === 1);
      expect(watcher.looks[0]?.look).toEqual({ version: 3, asks: 1, attempt: 1 });
      // Heartbeats come every second: past two refresh periods (2 s each), still the first query alone.
      const beatsThen = beats.length;
      await waitUntil(() => beats.length >= beatsThen + 5);
      expect(watcher.queries()).toBe(1);

      const ref = { projectId: 'proj-await-1', jobId: 'job-await-1' };
      const job = loopback.simulator.addJob(ref);
      const registration = registrationOf(ref, {
        workflowId: 'follow-up-await-1',
        known: { ...jobState(job), status: 'active' },
        gapMs: 100,
      });
      book = bookAt(4, 1, [registration]);
      watcher.looks[0]?.answer({ version: 4, asks: 1, stop: false });
      await waitUntil(() => watcher.signals.some(isAnswer));
      await waitUntil(() => watcher.looks.length === 2);
      expect(watcher.queries()).toBe(2);
      expect(watcher.looks[1]?.look).toEqual({ version: 4, asks: 1, attempt: 1 });
    });
  });

  test('a look refused because the book moved on brings a refresh; one refused for another reason leaves the clock refreshing', async () => {
    let version = 1;
    const watcher = awaitingWatcher(() => bookAt(version, 0));
    const env = quietActivityEnvironment({ heartbeatTimeoutMs: 15_000 });
    const running = env.run(createWatchJobs(loopback.api, watcher.client, new AbortController().signal, notExpected), {
      watcherId: 'watcher-refused-look',
    });
    await whileRunning(env, running, async () => {
      await waitUntil(() => watcher.looks.length === 1);
      version = 2;
      watcher.looks[0]?.refuse('BookChanged');
      await waitUntil(() => watcher.looks.length === 2);
      expect(watcher.queries()).toBe(2);
      expect(watcher.looks[1]?.look.version).toBe(2);
      watcher.looks[1]?.refuse('AlreadyAwaited');
      // No look for a while: the book is refreshed by the clock meanwhile.
      await waitUntil(() => watcher.queries() >= 4);
      expect(watcher.looks).toHaveLength(2);
    });
  });

  test('told to stop, the attempt finishes its reads and ends without waiting for a cancellation', async () => {
    const ref = { projectId: 'proj-await-2', jobId: 'job-await-2' };
    const job = loopback.simulator.addJob(ref);
    // Known as it is: each read is not an answer, so the wait stays in the book.
    const registration = registrationOf(ref, { workflowId: 'follow-up-await-2', known: jobState(job), gapMs: 100 });
    const watcher = awaitingWatcher(() => bookAt(1, 0, [registration]));
    const env = quietActivityEnvironment({ heartbeatTimeoutMs: 15_000 });
    const running = env.run(createWatchJobs(loopback.api, watcher.client, new AbortController().signal, notExpected), {
      watcherId: 'watcher-stopped',
    });
    await waitUntil(() => watcher.looks.length === 1 && loopback.simulator.counts(ref.projectId, ref.jobId).gets >= 2);
    watcher.looks[0]?.answer({ version: 1, asks: 0, stop: true });
    await expect(running).resolves.toBeUndefined();
    const gets = loopback.simulator.counts(ref.projectId, ref.jobId).gets;
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(gets);
  });
});
