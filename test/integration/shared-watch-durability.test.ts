/**
 * Shared watching (AGENT_WATCH_SHARDS) with real worker processes: a watcher's worker SIGKILLed while its watchJobs
 * activity is reading, and 1,000 follow-ups on two workers. Results stay right, each message is sent once, and no job
 * is read by two readers at once: every GET the simulator receives is logged, and a lone reader cannot start a read
 * of a job before its previous read of it was answered.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FollowUpOutcome } from '../../src/client';
import { watcherWorkflowId, watchShardOf } from '../../src/follow-up/watch-registry';
import type { SimulatedRequest } from '../../src/simulator/simulator';
import { createHarness, FAST_POLLING, TEST_API_KEY, waitFor, type Harness } from '../support/harness';
import { startBuiltScript, type StartedScript } from '../support/processes';

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
beforeAll(async () => {
  h = await createHarness({ onRequest: recordGet });
});
afterAll(async () => {
  await h.close();
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
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
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
    if (worker.child.exitCode !== null) throw new Error(`worker ${worker.identity} exited (code ${worker.child.exitCode}):\n${worker.output()}`);
    return worker.output().includes('worker polling task queue');
  }, `${worker.identity} to start:\n${worker.output()}`);
}

async function stop(worker: WorkerProcess, signal: NodeJS.Signals): Promise<void> {
  if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill(signal);
  await worker.exited;
}

/** The identity of the worker running each running shard watcher's watchJobs attempt now (unset: not started yet). */
async function readers(taskQueue: string, shards: number): Promise<Map<number, string | undefined>> {
  const found = new Map<number, string | undefined>();
  for (let shard = 0; shard < shards; shard += 1) {
    try {
      const description = await h.client.workflow.getHandle(watcherWorkflowId(taskQueue, shard)).describe();
      if (description.status.name !== 'RUNNING') continue;
      const reading = (description.raw.pendingActivities ?? []).find((activity) => activity.activityType?.name === 'watchJobs');
      found.set(shard, reading?.lastWorkerIdentity || undefined);
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
  expect({ job: jobKey(job), kind: outcome.kind, prLink: outcome.kind === 'completed' ? outcome.result.prLink : null }).toEqual({
    job: jobKey(job),
    kind: 'completed',
    prLink: final.prLink,
  });
  const counts = h.simulator.counts(job.projectId, job.jobId);
  expect({ job: jobKey(job), prompts: counts.prompts, posts: counts.idempotencyKeys.length }).toEqual({ job: jobKey(job), prompts: [prompt], posts: 1 });
}

test('a watcher worker SIGKILLed while its watchJobs reads: a new worker reads again, each follow-up completes with its result, each message sent once', async () => {
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
    const ids = await Promise.all(jobs.map(async (job) => (await followUps.start({ ...job, prompt: prompt(job), polling: { ...FAST_POLLING, timeout: '3m' } })).workflowId));
    // Sent, and read by a watcher since (the follow-up's own read comes before its send).
    for (const job of jobs) {
      await waitFor(() => {
        const sentAt = h.simulator.counts(job.projectId, job.jobId).acceptedAtMs[0];
        return sentAt !== undefined && (gets.get(jobKey(job)) ?? []).filter((at) => at >= sentAt).length >= 2;
      }, `the watcher to read ${job.jobId}`);
    }
    const before = await readers(taskQueue, shards);
    const shardsInUse = [...new Set(jobs.map((job) => watchShardOf(job.projectId, job.jobId, shards)))].sort();
    expect([...before.keys()].sort()).toEqual(shardsInUse);
    expect([...before.values()].every((identity) => identity === first.identity)).toBe(true);

    // Every job's next read hangs at the simulator, so the watchers' activities are mid-read when the worker dies.
    const readsAtHang = new Map(jobs.map((job) => [jobKey(job), h.simulator.counts(job.projectId, job.jobId).gets]));
    for (const job of jobs) h.simulator.setJobFaults(job.projectId, job.jobId, [{ operation: 'get', kind: 'latency', latencyMs: 5 * 60_000, times: 1 }]);
    await waitFor(() => jobs.every((job) => h.simulator.counts(job.projectId, job.jobId).gets > (readsAtHang.get(jobKey(job)) ?? 0)), 'a read of every job in flight');
    const readsAtKill = new Map(jobs.map((job) => [jobKey(job), h.simulator.counts(job.projectId, job.jobId).gets]));
    await stop(first, 'SIGKILL');

    second = startWorker(taskQueue, `watch-kill-b-${run}`, env);
    await started(second);
    // The reading starts again, on the new worker: every job is read past the hung read.
    await waitFor(() => jobs.every((job) => h.simulator.counts(job.projectId, job.jobId).gets > (readsAtKill.get(jobKey(job)) ?? 0)), 'the reads to start again', 90_000);
    const after = await readers(taskQueue, shards);
    expect([...after.keys()].sort()).toEqual(shardsInUse);
    expect([...after.values()].every((identity) => identity === second?.identity)).toBe(true);

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

