/**
 * A read asked for (`pollNow`): from the call to the GET reaching the API, with each follow-up polling its job itself
 * and with shared watching. Each follow-up waits on a one-hour schedule, so no GET but the one asked for falls in a
 * measurement; the reads are asked for one at a time, so each measures an idle worker's answer, not a queue.
 */
import { requestTimes, startBenchStack, startFollowUpsAndAwaitSends } from './bench-stack';
import { sleep } from './processes';
import { percentile } from './stats';

export interface ReadNowRow {
  mode: 'own polling' | 'shared watching';
  followUps: number;
  p50S: number;
  p99S: number;
  maxS: number;
  /** Every follow-up still waiting afterwards (its job works on), each read asked for made exactly once. */
  right: boolean;
}

const POLLING = { initialInterval: '1h', maxInterval: '1h', settleWindow: '1s', timeout: '2h' } as const;

export async function runReadNow(options: {
  followUps: number;
  shards: number;
  log: (line: string) => void;
}): Promise<ReadNowRow[]> {
  const rows: ReadNowRow[] = [];
  for (const mode of ['own polling', 'shared watching'] as const) {
    const shards = mode === 'own polling' ? 0 : options.shards;
    const stack = await startBenchStack({ workMs: 3 * 3_600_000, workerEnv: { AGENT_WATCH_SHARDS: String(shards) } });
    try {
      const jobs = Array.from({ length: options.followUps }, (_, index) => ({
        projectId: `read-now-${index % 4}`,
        jobId: `read-now-${index}`,
      }));
      for (const job of jobs) stack.simulator.addJob(job);
      const { workflowIds } = await startFollowUpsAndAwaitSends(
        stack,
        jobs,
        { prompt: 'Read me when asked', polling: POLLING },
        options.log,
      );
      // Past the settle window and registered (or polling): every follow-up is in its hour-long wait.
      await sleep(5_000);
      const latencies: number[] = [];
      let right = true;
      for (const [index, job] of jobs.entries()) {
        const before = requestTimes(stack, job.jobId, 'get').length;
        const askedAtMs = Date.now();
        await stack.followUps.pollNow(workflowIds[index] as string);
        let gets = requestTimes(stack, job.jobId, 'get');
        while (gets.length === before) {
          await sleep(5);
          gets = requestTimes(stack, job.jobId, 'get');
        }
        latencies.push(((gets[before] as number) - askedAtMs) / 1000);
        // Settled: no second GET follows the one asked for.
        await sleep(300);
        if (requestTimes(stack, job.jobId, 'get').length !== before + 1) right = false;
      }
      for (const workflowId of workflowIds) {
        if ((await stack.followUps.progress(workflowId)).phase !== 'waiting') right = false;
      }
      const row: ReadNowRow = {
        mode,
        followUps: options.followUps,
        p50S: percentile(latencies, 50),
        p99S: percentile(latencies, 99),
        maxS: Math.max(...latencies),
        right,
      };
      options.log(
        `read-now, ${mode}: p50 ${row.p50S.toFixed(3)} s, p99 ${row.p99S.toFixed(3)} s, max ${row.maxS.toFixed(3)} s, right: ${right}`,
      );
      rows.push(row);
    } finally {
      await stack.stop();
    }
  }
  return rows;
}

export function renderReadNow(rows: readonly ReadNowRow[]): string[] {
  return [
    '## A read asked for (`pollNow`)',
    '',
    `From \`followUps.pollNow(workflowId)\` to its GET reaching the API, one follow-up at a time (${rows[0]?.followUps ?? 0} follow-ups, each waiting ` +
      'on a one-hour schedule while its job works on). With shared watching the follow-up makes the read itself (one activity), rather than ' +
      "leaving it to its watcher's next look at its book (every 2 s).",
    '',
    '| mode | p50 (s) | p99 (s) | max (s) | each read made once, every follow-up still waiting |',
    '|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.mode} | ${row.p50S.toFixed(3)} | ${row.p99S.toFixed(3)} | ${row.maxS.toFixed(3)} | ${row.right ? 'yes' : 'NO'} |`,
    ),
    '',
  ];
}
