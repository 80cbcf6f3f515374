/**
 * Shared watching (AGENT_WATCH_SHARDS) with real worker processes: a watcher's worker SIGKILLed while its reading
 * activity is under way, and 1,000 follow-ups on two workers. Results stay right, each message is sent once, and no job
 * is read by two readers at once: every GET the simulator receives is logged, and a lone reader cannot start a read
 * of a job before its previous read of it was answered.
 */
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { findTemporalCli } from '../../scripts/stack/temporal-cli';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/kernel/search-attributes';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FollowUpOutcome } from '../../src/client';
import { watchShardOf } from '../../src/watch/watcher-book';
import type { SimulatedRequest } from '../../src/simulator/simulator';
import { createHarness, FAST_POLLING, TEST_API_KEY, waitFor, type Harness } from '../support/harness';
import { startBuiltScript, type StartedScript } from '../support/processes';
import { watcherWorkflowId } from '../../src/kernel/workflow-ids';

/** Arrival times of every GET of every job (simulator clock), in order. */
const gets = new Map<string, number[]>();
const jobKey = (job: { projectId: string; jobId: string }) => `${job.projectId}/${job.jobId}`;
const recordGet = (request: SimulatedRequest) => {
  if (request.operation !== 'get') return;
  const key = jobKey(request);
  const times = gets.get(key) ?? [];
  times.push(request.atMs);
  gets.set(key, times);
};

let h: Harness;
let server: TestWorkflowEnvironment;
beforeAll(async () => {
  // Its own dev server with the server's usual history limits: the run's shared one suggests continue-as-new after
  // 60 events, so at 1,000 follow-ups the coordinators and watchers spent their time starting over (measured: about
  // 5x the CPU per follow-up), which proves nothing these tests are about.
  const cli = findTemporalCli();
  server = await TestWorkflowEnvironment.createLocal({
    server: {
      ...(cli ? { executable: { type: 'existing-path', path: cli } } : {}),
      extraArgs: ['--log-level', 'error'],
      searchAttributes: [...FOLLOW_UP_SEARCH_ATTRIBUTES],
    },
  });
  h = await createHarness({ onRequest: recordGet }, { address: server.address });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await server?.teardown();
});

interface WorkerProcess extends StartedScript {
  identity: string;
}

/** A built worker process in shared mode on `taskQueue`, sharing this file's coordinators. */
function startWorker(taskQueue: string, identity: string, env: Record<string, string>): WorkerProcess {
  const started = startBuiltScript('worker.js', [], {
    ...h.workerEnv(),
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_WORKER_IDENTITY: identity,
    // At least the API's request timeout (15 s), as the worker requires.
    WORKER_SHUTDOWN_GRACE_TIME: '15s',
    ...env,
  });
  return { ...started, identity };
}

async function started(worker: WorkerProcess): Promise<void> {
  await waitFor(() => {
    if (worker.child.exitCode !== null)
      throw new Error(`worker ${worker.identity} exited (code ${worker.child.exitCode}):\n${worker.output()}`);
    return worker.output().includes('worker polling task queue');
  }, `${worker.identity} to start:\n${worker.output()}`);
}

async function stop(worker: WorkerProcess, signal: NodeJS.Signals): Promise<void> {
  if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill(signal);
  await worker.exited;
}

/** A watcher's reading activities: its long reader, or a turn of reads its timers woke. */
const READING_ACTIVITIES = new Set(['watchJobs', 'readWatchedJobs']);

/**
 * The identity of the worker running each running shard watcher's reading activity now (unset: not started yet; no
 * entry: none pending, as between two turns of a watcher reading by its timers).
 */
async function readers(taskQueue: string, shards: number): Promise<Map<number, string | undefined>> {
  const found = new Map<number, string | undefined>();
  for (let shard = 0; shard < shards; shard += 1) {
    try {
      const description = await h.client.workflow.getHandle(watcherWorkflowId(taskQueue, shard)).describe();
      if (description.status.name !== 'RUNNING') continue;
      const reading = (description.raw.pendingActivities ?? []).find((activity) =>
        READING_ACTIVITIES.has(activity.activityType?.name ?? ''),
      );
      if (reading) found.set(shard, reading.lastWorkerIdentity || undefined);
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }
  return found;
}

/** A completed follow-up's result, checked against the job as the simulator ended it, and its one message. */
function expectRightResult(outcome: FollowUpOutcome, job: { projectId: string; jobId: string }, prompt: string): void {
  const final = h.simulator.job(job.projectId, job.jobId);
  expect(final.prLink).toMatch(/\/pull\/\d+$/);
  expect({
    job: jobKey(job),
    kind: outcome.kind,
    prLink: outcome.kind === 'completed' ? outcome.result.prLink : null,
  }).toEqual({
    job: jobKey(job),
    kind: 'completed',
    prLink: final.prLink,
  });
  const counts = h.simulator.counts(job.projectId, job.jobId);
  expect({ job: jobKey(job), prompts: counts.prompts, posts: counts.idempotencyKeys.length }).toEqual({
    job: jobKey(job),
    prompts: [prompt],
    posts: 1,
  });
}

test('a watcher worker SIGKILLed while its watcher reads: a new worker reads again, each follow-up completes with its result, each message sent once', async () => {
  const shards = 2;
  const taskQueue = h.taskQueue();
  const run = randomUUID().slice(0, 8);
  const jobs = Array.from({ length: 6 }, (_, i) => ({ projectId: `kill-p${i % 2}-${run}`, jobId: `job-${i}` }));
  // Still working when the worker dies: each job ends only when the test finishes it.
  for (const job of jobs) h.simulator.addJob({ ...job, workMs: 10 * 60_000 });
  const env = { AGENT_WATCH_SHARDS: String(shards) };
  const first = startWorker(taskQueue, `watch-kill-a-${run}`, env);
  let second: WorkerProcess | undefined;
  try {
    await started(first);
    const followUps = h.followUps(taskQueue);
    const prompt = (job: { jobId: string }) => `Survive the watcher's worker, ${job.jobId}`;
    const ids = await Promise.all(
      jobs.map(
        async (job) =>
          (await followUps.start({ ...job, prompt: prompt(job), polling: { ...FAST_POLLING, timeout: '3m' } }))
            .workflowId,
      ),
    );
    // Sent, and read by a watcher since (the follow-up's own read comes before its send).
    for (const job of jobs) {
      await waitFor(() => {
        const sentAt = h.simulator.counts(job.projectId, job.jobId).acceptedAtMs[0];
        return sentAt !== undefined && (gets.get(jobKey(job)) ?? []).filter((at) => at >= sentAt).length >= 2;
      }, `the watcher to read ${job.jobId}`);
    }
    // Every job's next read hangs at the simulator, so the watchers' activities are mid-read when the worker dies.
    const readsAtHang = new Map(jobs.map((job) => [jobKey(job), h.simulator.counts(job.projectId, job.jobId).gets]));
    for (const job of jobs)
      h.simulator.setJobFaults(job.projectId, job.jobId, [
        { operation: 'get', kind: 'latency', latencyMs: 5 * 60_000, times: 1 },
      ]);
    await waitFor(
      () =>
        jobs.every((job) => h.simulator.counts(job.projectId, job.jobId).gets > (readsAtHang.get(jobKey(job)) ?? 0)),
      'a read of every job in flight',
    );
    // Every shard's reading is under way on the first worker, each stuck in its hung read.
    const shardsInUse = [...new Set(jobs.map((job) => watchShardOf(job.projectId, job.jobId, shards)))].sort();
    await waitFor(async () => (await readers(taskQueue, shards)).size === shardsInUse.length, 'every shard reading');
    const before = await readers(taskQueue, shards);
    expect([...before.keys()].sort()).toEqual(shardsInUse);
    expect([...before.values()].every((identity) => identity === first.identity)).toBe(true);
    const readsAtKill = new Map(jobs.map((job) => [jobKey(job), h.simulator.counts(job.projectId, job.jobId).gets]));
    await stop(first, 'SIGKILL');

    second = startWorker(taskQueue, `watch-kill-b-${run}`, env);
    await started(second);
    // The reading starts again, on the new worker: every job is read past the hung read.
    await waitFor(
      () =>
        jobs.every((job) => h.simulator.counts(job.projectId, job.jobId).gets > (readsAtKill.get(jobKey(job)) ?? 0)),
      'the reads to start again',
      90_000,
    );
    // Whatever reads now (a long reader, or a turn under way) reads on the new worker.
    const after = await readers(taskQueue, shards);
    expect([...after.values()].filter(Boolean).every((identity) => identity === second?.identity)).toBe(true);

    for (const job of jobs) h.simulator.finishJob(job.projectId, job.jobId);
    const outcomes = await Promise.all(ids.map((id) => followUps.outcome(id)));
    outcomes.forEach((outcome, i) => {
      const job = jobs[i] as (typeof jobs)[number];
      expectRightResult(outcome, job, prompt(job));
    });
  } finally {
    await stop(first, 'SIGKILL');
    if (second) await stop(second, 'SIGTERM');
  }
}, 240_000);

/** Runs `task` over `items`, `width` at a time: 1,000 long polls at once would crowd the frontend's per-API limit. */
async function inBatches<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width)
    results.push(...(await Promise.all(items.slice(i, i + width).map(task))));
  return results;
}

/** Who ran each reading activity of the task queue's watchers, over all their runs (continue-as-new included). */
async function readingIdentities(taskQueue: string, shards: number): Promise<string[]> {
  const identities: string[] = [];
  for (let shard = 0; shard < shards; shard += 1) {
    const workflowId = watcherWorkflowId(taskQueue, shard);
    for await (const execution of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      const events = (await h.client.workflow.getHandle(workflowId, execution.runId).fetchHistory()).events ?? [];
      const reading = new Set(
        events
          .filter((event) =>
            READING_ACTIVITIES.has(event.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
          )
          .map((event) => String(event.eventId)),
      );
      for (const event of events) {
        const attributes = event.activityTaskStartedEventAttributes;
        if (attributes && reading.has(String(attributes.scheduledEventId))) identities.push(attributes.identity ?? '');
      }
    }
  }
  // The attempts still running are in no history yet.
  for (const identity of (await readers(taskQueue, shards)).values()) if (identity) identities.push(identity);
  return identities;
}

test('1,000 follow-ups to 1,000 jobs of 10 projects on two worker processes: every result right, each message sent once, each job read by one reader, the reading on both workers', async () => {
  // Enough shards that the two workers both take watchers' reading: the server hands each attempt to whichever worker
  // polls for it (with eager dispatch, CI once saw all 8 of 8 watchers read on one worker).
  const shards = 16;
  // Every GET is answered after this long, so two reads of a job in flight at once arrive closer than this.
  const readLatencyMs = 200;
  const taskQueue = h.taskQueue();
  const run = randomUUID().slice(0, 8);
  const jobs = Array.from({ length: 1_000 }, (_, i) => ({ projectId: `many-p${i % 10}-${run}`, jobId: `job-${i}` }));
  for (const job of jobs)
    h.simulator.addJob({
      ...job,
      workMs: 3_000,
      faults: [{ operation: 'get', kind: 'latency', latencyMs: readLatencyMs }],
    });
  // 100 sends per project: the vendor's hourly limit, all at once, so no follow-up waits for the budget.
  const env = {
    AGENT_WATCH_SHARDS: String(shards),
    AGENT_SENDS_PER_PROJECT_PER_HOUR: '100',
  };
  const workers = [
    startWorker(taskQueue, `watch-many-a-${run}`, env),
    startWorker(taskQueue, `watch-many-b-${run}`, env),
  ];
  try {
    await Promise.all(workers.map(started));
    const followUps = h.followUps(taskQueue);
    const prompt = (job: { jobId: string }) => `Follow up on ${job.jobId}`;
    // One schedule for every read: a GET every 2 s.
    const polling = {
      initialInterval: '2s',
      backoffCoefficient: 1,
      maxInterval: '2s',
      timeout: '15m',
      settleWindow: '2s',
    };
    const ids = await inBatches(
      jobs,
      100,
      async (job) => (await followUps.start({ ...job, prompt: prompt(job), polling })).workflowId,
    );
    const outcomes = await inBatches(ids, 100, (id) => followUps.outcome(id));
    outcomes.forEach((outcome, i) => {
      const job = jobs[i] as (typeof jobs)[number];
      expectRightResult(outcome, job, prompt(job));
    });

    // After its send a job is read only by its shard's watcher, one read at a time, on its 2 s schedule. A read may be
    // late, so the gap checked is the schedule's minus a tolerance, down to the read latency: a lone reader starts a
    // read only after the one before was answered; a second reader reads at the same points (a timer may fire a
    // millisecond early, hence the 10 ms).
    const tooClose = jobs.flatMap((job) => {
      const sentAtMs = h.simulator.counts(job.projectId, job.jobId).acceptedAtMs[0] ?? 0;
      const reads = (gets.get(jobKey(job)) ?? []).filter((at) => at > sentAtMs);
      return reads
        .slice(1)
        .flatMap((at, i) =>
          at - (reads[i] as number) < readLatencyMs - 10
            ? [{ job: jobKey(job), reads: reads.map((read) => read - sentAtMs) }]
            : [],
        );
    });
    expect(tooClose).toEqual([]);

    const identities = await readingIdentities(taskQueue, shards);
    expect(new Set(identities)).toEqual(new Set(workers.map((worker) => worker.identity)));
  } finally {
    await Promise.all(workers.map((worker) => stop(worker, 'SIGTERM')));
  }
}, 900_000);
