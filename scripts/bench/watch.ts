/**
 * Shared watching (issue 19) measured beside today's per-follow-up polling, in one run: N follow-ups on the default
 * schedule wait for jobs that work until the bench ends them. Once every follow-up reads at the schedule's steady
 * 60 s gap, a window measures CPU (worker + server), GETs and memory. Then every job ends with a pull request link of
 * its own: a sample spread over one gap, to time how soon the read that saw the end wakes its follow-up without a
 * crowd of endings queued ahead of it; then the rest at once. Every follow-up's result must carry its own job's link.
 */
import { setMaxListeners } from 'node:events';
import { DEFAULT_POLLING } from '../../src/kernel/request';
import { nextPollAt } from '../../src/kernel/poll-schedule';
import { requestTimes, startBenchStack, startFollowUpsAndAwaitSends, type BenchStack } from './bench-stack';
import { eventMs, fetchHistories, type HistoryEvent } from './history';
import { cpuOverWindow, peakRssMiB, rssMiB, sleep } from './processes';
import { HOUR_MS, inBatches, percentile } from './stats';
import { jobReadsSignal } from '../../src/workflows/follow-up/messages';
import { watcherWorkflowId } from '../../src/kernel/workflow-ids';

export interface WatchRowOptions {
  n: number;
  /** AGENT_WATCH_SHARDS: 0 is today's per-follow-up polling. */
  shards: number;
  /** Worker processes on the task queue, each with an identity of its own (bench-worker-1, -2, ...). */
  workers: number;
  windowMs: number;
  /** From the last send to the window; default: until every follow-up reads at the schedule's cap, plus one gap. */
  settleMs?: number;
  /** Jobs ended one by one over one gap, whose follow-ups give the detection delay and history figures. */
  sample: number;
  workerEnv?: Record<string, string>;
  log: (line: string) => void;
}

export interface WorkerFigures {
  identity: string;
  /** CPU the process used in the window (ms). */
  cpuMs: number;
  /** Resident memory at the end of the window: every follow-up waiting. */
  waitingRssMiB: number;
  /** The high-water mark over the whole row: sends, waiting and the endings. */
  peakRssMiB: number;
  /** Watchers whose watchJobs activity this worker was running at the end of the window. */
  watchers: number;
}

export interface WatchRow {
  n: number;
  shards: number;
  workers: WorkerFigures[];
  serverCpuMs: number;
  windowMs: number;
  /** GETs the simulator received in the window. */
  gets: number;
  startedInS: number;
  allSentInS: number;
  sentOnce: number;
  /** Follow-ups that ended with their own job's pull request link. */
  resultsRight: number;
  /** Follow-ups that ended at all before the bench gave up on them. */
  ended: number;
  /** From the GET that first saw the job ended to the follow-up's next workflow task starting (ms), sampled. */
  detectionP50Ms: number;
  detectionP99Ms: number;
  detectionMaxMs: number;
  detectionSampled: number;
  historyEventsP50: number;
  historyEventsMax: number;
  /** Workflow tasks of the sampled follow-ups while they waited at the steady gap, per follow-up-hour. */
  wakeUpsPerHour: number;
}

/** Like a real deployment (the vendor counts 100 sends per project per hour), no project coordinator holds everyone. */
const JOBS_PER_PROJECT = 100;
/** How long the bench waits for every follow-up to end once the jobs have, before counting what did not. */
const endingGiveUpMs = (n: number) => Math.max(15 * 60_000, n * 150);

/** When, after a wait begins, the default schedule's gaps reach its cap (and stay there). */
export function defaultScheduleSteadyAfterMs(): number {
  const schedule = { startedAtMs: 0, ...DEFAULT_POLLING, deadlineMs: Number.MAX_SAFE_INTEGER };
  for (let at = 0; ;) {
    const next = nextPollAt(schedule, at) as number;
    if (at > 0 && next - at >= DEFAULT_POLLING.maxIntervalMs) return at;
    at = next;
  }
}

/** The default settle: every follow-up past its schedule's ramp, with one steady gap behind it. */
export const DEFAULT_WATCH_SETTLE_MS = defaultScheduleSteadyAfterMs() + DEFAULT_POLLING.maxIntervalMs + 5_000;

export async function runWatchRow(options: WatchRowOptions): Promise<WatchRow> {
  const { n, shards, windowMs, log } = options;
  const label = `watch: N=${n}, ${shards > 0 ? `${shards} shards` : 'each polls itself'}, ${options.workers} worker(s)`;
  const identities = Array.from({ length: options.workers }, (_, index) => `bench-worker-${index + 1}`);
  const stack = await startBenchStack({
    workMs: 24 * HOUR_MS,
    workerEnv: {
      // Per-follow-up polling holds a slot while its first minute's reads loop; shared watching needs only a few.
      WORKER_MAX_CONCURRENT_ACTIVITIES: String(n + 200),
      AGENT_WATCH_SHARDS: String(shards),
      ...options.workerEnv,
      TEMPORAL_WORKER_IDENTITY: identities[0] as string,
    },
  });
  try {
    const workers = [
      stack.worker,
      ...identities.slice(1).map((identity) => stack.startWorker({ TEMPORAL_WORKER_IDENTITY: identity })),
    ];
    await Promise.all(workers.map((worker) => worker.ready));
    const jobs = Array.from({ length: n }, (_, index) => ({
      projectId: `bench-watch-${Math.floor(index / JOBS_PER_PROJECT)}`,
      jobId: `watch-${n}-${index}`,
    }));
    for (const job of jobs) stack.simulator.addJob(job);
    // The default schedule: its steady gap is what a long wait costs.
    const started = await startFollowUpsAndAwaitSends(stack, jobs, { prompt: 'A long-waiting follow-up' }, (line) =>
      log(`${label}: ${line}`),
    );
    await sleep(options.settleMs ?? DEFAULT_WATCH_SETTLE_MS);

    log(`${label}: measuring a ${windowMs / 1000}s window`);
    const pids = Object.fromEntries([
      ['server', stack.server.pid],
      ...workers.map((worker, index) => [identities[index], worker.pid]),
    ]) as Record<string, number>;
    const window = await cpuOverWindow(pids, windowMs);
    const waitingRss = Object.fromEntries(identities.map((identity) => [identity, rssMiB(pids[identity] as number)]));
    const watchersBy = await watcherIdentities(stack, shards);
    const gets = jobs.reduce(
      (sum, job) =>
        sum + requestTimes(stack, job.jobId, 'get').filter((at) => at >= window.fromMs && at <= window.toMs).length,
      0,
    );

    const links = new Map(
      jobs.map((job, index) => [job.jobId, `https://github.com/acme/${job.projectId}/pull/${1_000 + index}`]),
    );
    const finishedAt = new Map<string, number>();
    const finish = (job: { projectId: string; jobId: string }) => {
      finishedAt.set(job.jobId, Date.now());
      stack.simulator.finishJob(job.projectId, job.jobId, { prLink: links.get(job.jobId) as string });
    };
    const sampleSize = Math.min(options.sample, n);
    const sampleIndexes = Array.from({ length: sampleSize }, (_, index) => Math.floor((index * n) / sampleSize));
    log(`${label}: ending ${sampleSize} sampled jobs over one gap`);
    for (const index of sampleIndexes) {
      finish(jobs[index] as (typeof jobs)[number]);
      await sleep(DEFAULT_POLLING.maxIntervalMs / sampleSize);
    }
    const sampleIds = sampleIndexes.map((index) => started.workflowIds[index] as string);
    await resultsWithin(stack, sampleIds, endingGiveUpMs(sampleSize));
    log(`${label}: ending the other ${n - sampleSize} jobs at once`);
    for (const job of jobs) if (!finishedAt.has(job.jobId)) finish(job);
    const results = await resultsWithin(stack, started.workflowIds, endingGiveUpMs(n));

    const histories = await fetchHistories(stack.server.client, sampleIds);
    const detections = histories
      .map((events, index) =>
        detectionMs(
          events,
          firstGetAtOrAfter(stack, jobs[sampleIndexes[index] as number]?.jobId as string, finishedAt),
        ),
      )
      .filter(Number.isFinite);
    const steady = histories.map((events, index) => {
      const jobId = jobs[sampleIndexes[index] as number]?.jobId as string;
      const from = (requestTimes(stack, jobId, 'send')[0] ?? Number.NaN) + defaultScheduleSteadyAfterMs();
      return {
        tasks: events.filter(
          (event) =>
            event.workflowTaskStartedEventAttributes &&
            eventMs(event) > from &&
            eventMs(event) < (finishedAt.get(jobId) as number),
        ).length,
        ms: (finishedAt.get(jobId) as number) - from,
      };
    });
    const eventCounts = histories.map((events) => events.length);
    return {
      n,
      shards,
      workers: identities.map((identity) => ({
        identity,
        cpuMs: window.usedMs[identity] as number,
        waitingRssMiB: waitingRss[identity] as number,
        peakRssMiB: peakRssMiB(pids[identity] as number),
        watchers: watchersBy.filter((each) => each === identity).length,
      })),
      serverCpuMs: window.usedMs.server as number,
      windowMs: window.toMs - window.fromMs,
      gets,
      startedInS: started.startedInMs / 1000,
      allSentInS: started.allSentInMs / 1000,
      sentOnce: jobs.filter((job) => stack.simulator.counts(job.projectId, job.jobId).messagesAccepted === 1).length,
      resultsRight: jobs.filter((job, index) => results[index]?.prLink === links.get(job.jobId)).length,
      ended: results.filter((result) => result !== null).length,
      detectionP50Ms: percentile(detections, 50),
      detectionP99Ms: percentile(detections, 99),
      detectionMaxMs: detections.length > 0 ? Math.max(...detections) : Number.NaN,
      detectionSampled: detections.length,
      historyEventsP50: percentile(eventCounts, 50),
      historyEventsMax: eventCounts.length > 0 ? Math.max(...eventCounts) : Number.NaN,
      wakeUpsPerHour:
        (steady.reduce((sum, each) => sum + each.tasks, 0) /
          Math.max(
            1,
            steady.reduce((sum, each) => sum + Math.max(0, each.ms), 0),
          )) *
        HOUR_MS,
    };
  } finally {
    await stack.stop();
  }
}

/** Worker CPU and server CPU per GET in the window (ms). */
export function cpuPerRead(row: WatchRow): { worker: number; server: number } {
  return {
    worker: row.workers.reduce((sum, worker) => sum + worker.cpuMs, 0) / row.gets,
    server: row.serverCpuMs / row.gets,
  };
}

/** Worker CPU and server CPU per follow-up-hour of waiting (s), and GETs per follow-up-hour. */
export function perFollowUpHour(row: WatchRow): { worker: number; server: number; gets: number } {
  const followUpHours = (row.n * row.windowMs) / HOUR_MS;
  return {
    worker: row.workers.reduce((sum, worker) => sum + worker.cpuMs, 0) / 1000 / followUpHours,
    server: row.serverCpuMs / 1000 / followUpHours,
    gets: row.gets / followUpHours,
  };
}

/** The identity of the worker running each watcher's reading activity (none where no watcher runs). */
async function watcherIdentities(stack: BenchStack, shards: number): Promise<string[]> {
  const identities = await inBatches(
    Array.from({ length: shards }, (_, shard) => shard),
    8,
    async (shard) => {
      try {
        const description = await stack.server.client.workflow
          .getHandle(watcherWorkflowId(stack.taskQueue, shard))
          .describe();
        return description.raw.pendingActivities?.[0]?.lastWorkerIdentity ?? null;
      } catch {
        return null; // no job of the bench fell in this shard
      }
    },
  );
  return identities.filter((identity): identity is string => identity !== null);
}

const RESULTS_IN_FLIGHT = 100;

/** Each follow-up's result, or null if it failed or had not ended within `giveUpMs`. */
export async function resultsWithin(
  stack: BenchStack,
  workflowIds: readonly string[],
  giveUpMs: number,
): Promise<Array<{ prLink: string | null } | null>> {
  // Giving up aborts the waits still under way: left running, their long polls outlived the stack's connection and
  // crashed the bench after it stopped.
  const giveUp = new AbortController();
  // Every wait in flight listens on it, a batch at a time, and it lives only for this call: Node's warning past 10
  // listeners would be noise here, not a leak.
  setMaxListeners(0, giveUp.signal);
  const timer = setTimeout(() => giveUp.abort(), giveUpMs);
  try {
    return await inBatches(workflowIds, RESULTS_IN_FLIGHT, (workflowId) =>
      giveUp.signal.aborted
        ? Promise.resolve(null)
        : stack.server.client
            .withAbortSignal(giveUp.signal, () => stack.followUps.result(workflowId))
            .catch(() => null),
    );
  } finally {
    clearTimeout(timer);
  }
}

/** When the simulator first answered a GET for the job after it ended (epoch ms). */
function firstGetAtOrAfter(stack: BenchStack, jobId: string, finishedAt: ReadonlyMap<string, number>): number {
  const endedAt = finishedAt.get(jobId) ?? Number.NaN;
  return requestTimes(stack, jobId, 'get').find((at) => at >= endedAt) ?? Number.NaN;
}

/**
 * From that GET to the workflow task that handles it: the first answer to arrive after it (the watcher's `jobReads`
 * signal, or the poll activity's completion) and the next WorkflowTaskStarted after that answer.
 */
function detectionMs(events: HistoryEvent[], readAtMs: number): number {
  const answerAt = events.findIndex(
    (event) =>
      eventMs(event) >= readAtMs &&
      (event.workflowExecutionSignaledEventAttributes?.signalName === jobReadsSignal.name ||
        event.activityTaskCompletedEventAttributes),
  );
  const woken = events.slice(Math.max(0, answerAt)).find((event) => event.workflowTaskStartedEventAttributes);
  return answerAt >= 0 && woken ? eventMs(woken) - readAtMs : Number.NaN;
}
