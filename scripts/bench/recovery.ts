/**
 * Recovery after a worker SIGKILL: follow-ups whose polls loop inside an activity (every 10 s) and follow-ups whose
 * polls are carried by Temporal's retry timer (every 60 s) wait on one worker; it is killed and a new one started.
 * For each follow-up: its first poll after the kill, against when it was due and when the new worker was ready.
 */
import { PER_FOLLOW_UP_POLLING, requestTimes, startBenchStack } from './bench-stack';
import { sleep, stopChild } from './processes';
import { inBatches, percentile } from './stats';

export interface RecoveryRow {
  group: string;
  followUps: number;
  /** Seconds from the new worker being ready to each due poll actually made. */
  resumeAfterReadyP50S: number;
  resumeAfterReadyP99S: number;
  resumeAfterReadyMaxS: number;
  /** Follow-ups that polled again at all within the observation. */
  resumed: number;
}

const GROUPS = [
  { group: 'polls every 10s (looping in an activity)', intervalMs: 10_000 },
  { group: 'polls every 60s (Temporal retry timer)', intervalMs: 60_000 },
] as const;

export async function runRecovery(options: {
  perGroup: number;
  restartAfterMs: number;
  workerEnv?: Record<string, string>;
  log: (line: string) => void;
}): Promise<RecoveryRow[]> {
  const { perGroup, restartAfterMs, log } = options;
  const stack = await startBenchStack({
    workMs: 24 * 3_600_000,
    workerEnv: {
      WORKER_MAX_CONCURRENT_ACTIVITIES: String(2 * perGroup + 200),
      ...PER_FOLLOW_UP_POLLING,
      ...options.workerEnv,
    },
  });
  try {
    const jobs = GROUPS.flatMap((group) =>
      Array.from({ length: perGroup }, (_, index) => ({
        projectId: 'bench-recovery',
        jobId: `recovery-${group.intervalMs}-${index}`,
        intervalMs: group.intervalMs,
      })),
    );
    for (const job of jobs) stack.simulator.addJob(job);
    await inBatches(jobs, 50, (job) =>
      stack.followUps.start({
        projectId: job.projectId,
        jobId: job.jobId,
        prompt: 'Survive a crash',
        polling: { initialInterval: job.intervalMs, backoffCoefficient: 1, maxInterval: job.intervalMs, timeout: '2h' },
      }),
    );
    for (const giveUpAt = Date.now() + 10 * 60_000; Date.now() < giveUpAt; await sleep(1_000)) {
      if (jobs.every((job) => requestTimes(stack, job.jobId, 'get').length >= 3)) break;
    }
    log('recovery: every follow-up is polling; killing the worker');
    const killedAt = Date.now();
    await stopChild(stack.worker.child, 'SIGKILL');
    await sleep(restartAfterMs);
    stack.worker = stack.startWorker();
    const readyAt = await stack.worker.ready;
    log(`recovery: a new worker was ready ${((readyAt - killedAt) / 1000).toFixed(1)}s after the kill; observing`);
    await sleep(150_000);
    return GROUPS.map((group) => {
      const delays: number[] = [];
      let resumed = 0;
      for (const job of jobs.filter((each) => each.intervalMs === group.intervalMs)) {
        const gets = requestTimes(stack, job.jobId, 'get');
        const lastBefore = gets.filter((at) => at < killedAt).at(-1);
        const firstAfter = gets.find((at) => at >= killedAt);
        if (firstAfter === undefined || lastBefore === undefined) continue;
        resumed += 1;
        // When the poll was due anyway, or the new worker ready, whichever is later: the rest is the crash's cost.
        delays.push(Math.max(0, firstAfter - Math.max(lastBefore + group.intervalMs, readyAt)) / 1000);
      }
      return {
        group: group.group,
        followUps: perGroup,
        resumeAfterReadyP50S: percentile(delays, 50),
        resumeAfterReadyP99S: percentile(delays, 99),
        resumeAfterReadyMaxS: delays.length > 0 ? Math.max(...delays) : Number.NaN,
        resumed,
      };
    });
  } finally {
    await stack.stop();
  }
}
