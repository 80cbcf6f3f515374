/**
 * The watcher's reading activity on a worker too busy to answer its book query at once: it stays alive (heartbeats
 * from a timer, not from behind the query) and a failed query is tried again rather than ending the attempt. Run in
 * the SDK's MockActivityEnvironment, reading the simulator over real loopback HTTP; the Temporal client is a stand-in
 * whose query is slow or fails on purpose (the dev-server tests run the real one).
 */
import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createWatchJobs } from '../../src/activities/watch-jobs';
import { jobState } from '../../src/agent-api/job';
import type { WatchAnswer } from '../../src/follow-up/watch-answer';
import type { WatchChanges, WatchRegistration } from '../../src/follow-up/watch-registry';
import { loopbackApi } from '../support/loopback-api';

const API_KEY = 'mint_test_watch_key_0001';
const loopback = loopbackApi(API_KEY);

/** A stand-in client: the watcher answers each book query with `answer(n)` (n from 1); follow-ups' signals are kept. */
function temporalWhose(answer: (query: number) => Promise<WatchChanges>) {
  const signals: Array<{ workflowId: string; name: string; args: unknown[] }> = [];
  let queries = 0;
  const client = {
    workflow: {
      getHandle: (workflowId: string) => ({
        query: () => answer((queries += 1)),
        signal: async (definition: { name: string } | string, ...args: unknown[]) => {
          signals.push({ workflowId, name: typeof definition === 'string' ? definition : definition.name, args });
        },
      }),
    },
  };
  return { client: client as unknown as Client, signals, queries: () => queries };
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
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
  const beats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => beats.push(details));
  const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal), { watcherId: 'watcher-slow' });
  await waitUntil(() => beats.length >= 3);
  // Still the first query, never answered: the heartbeats came from the timer.
  expect(queries()).toBe(1);
  env.cancel();
  await expect(running).rejects.toThrow();
});

test('a failed book query is tried again, and the book it then gets is read', async () => {
  const ref = { projectId: 'proj-watch-1', jobId: 'job-watch-1' };
  const job = loopback.simulator.addJob(ref);
  const now = Date.now();
  const registration: WatchRegistration = {
    workflowId: 'follow-up-1',
    runId: 'run-1',
    ...ref,
    // Known as something else: the first read is an answer.
    known: { ...jobState(job), status: 'active' },
    acceptUnchangedFromMs: null,
    schedule: { startedAtMs: now, initialIntervalMs: 100, backoffCoefficient: 1, maxIntervalMs: 100, deadlineMs: now + 60_000 },
    readAtOnce: true,
    round: 1,
  };
  const { client, signals, queries } = temporalWhose(async (query) => {
    if (query <= 2) throw new Error('query timed out: the watcher did not answer in time');
    return { version: 1, full: true, upserts: query === 3 ? [registration] : [], removed: [], refused: [] };
  });
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 5_000 });
  const running = env.run(createWatchJobs(loopback.api, client, new AbortController().signal), { watcherId: 'watcher-flaky' });
  await waitUntil(() => signals.some((signal) => signal.name === 'jobAnswer'));
  expect(queries()).toBeGreaterThanOrEqual(3);
  const answer = signals.find((signal) => signal.name === 'jobAnswer')?.args[0] as WatchAnswer;
  expect(answer).toMatchObject({ round: 1, kind: 'read', job: { status: loopback.simulator.job(ref.projectId, ref.jobId).status } });
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).gets).toBe(1);
  env.cancel();
  await expect(running).rejects.toThrow();
});
