/**
 * How soon a fast schedule's first read comes on the long reader, with two workers: from the POST reaching the API to
 * the first GET after it. Background waits put both shards past the long reader's switch; then follow-ups with
 * `initialInterval: 200` are sent one at a time. Each registration is made by the worker that ran its send, so about
 * half are made on another worker than their shard's long reader: those hear of it only through the watcher.
 */
import { addWaitingJobs, requestTimes, startBenchStack, startFollowUpsAndAwaitSends } from './bench-stack';
import { sleep } from './processes';
import { percentile } from './stats';

export interface FirstReadRow {
  waiting: number;
  followUps: number;
  /** POST to first GET, each follow-up in order (s). */
  latenciesS: number[];
  p50S: number;
  maxS: number;
}

const BACKGROUND_POLLING = { initialInterval: '1h', maxInterval: '1h', settleWindow: '1s', timeout: '2h' } as const;
const FAST_POLLING = { initialInterval: '200ms', maxInterval: '1s', settleWindow: '2s', timeout: '10m' } as const;

export async function runFirstRead(options: {
  waiting: number;
  followUps: number;
  log: (line: string) => void;
}): Promise<FirstReadRow> {
  const stack = await startBenchStack({ workMs: 3 * 3_600_000 });
  try {
    const background = addWaitingJobs(stack, 'first-read-bg', options.waiting);
    await startFollowUpsAndAwaitSends(stack, background, { prompt: 'Wait', polling: BACKGROUND_POLLING }, options.log);
    const second = stack.startWorker();
    await second.ready;
    // Both workers poll, and each watcher's long reader has taken its book in.
    await sleep(10_000);
    const latencies: number[] = [];
    for (let index = 0; index < options.followUps; index += 1) {
      const job = { projectId: `first-read-p${index % 4}`, jobId: `first-read-${index}` };
      stack.simulator.addJob(job);
      await stack.followUps.start({ ...job, prompt: 'Read me soon', polling: FAST_POLLING });
      let sends = requestTimes(stack, job.jobId, 'send');
      let gets = requestTimes(stack, job.jobId, 'get');
      while (sends.length === 0 || !gets.some((atMs) => atMs > (sends[0] as number))) {
        await sleep(5);
        sends = requestTimes(stack, job.jobId, 'send');
        gets = requestTimes(stack, job.jobId, 'get');
      }
      const sentAtMs = sends[0] as number;
      latencies.push(((gets.find((atMs) => atMs > sentAtMs) as number) - sentAtMs) / 1000);
      await sleep(500);
    }
    const row: FirstReadRow = {
      waiting: options.waiting,
      followUps: options.followUps,
      latenciesS: latencies,
      p50S: percentile(latencies, 50),
      maxS: Math.max(...latencies),
    };
    options.log(
      `first read on the long reader, two workers: ${latencies.map((s) => s.toFixed(3)).join(', ')} s (p50 ${row.p50S.toFixed(3)}, max ${row.maxS.toFixed(3)})`,
    );
    return row;
  } finally {
    await stack.stop();
  }
}

export function renderFirstRead(row: FirstReadRow): string[] {
  return [
    '## The first read on the long reader, two workers',
    '',
    `${row.waiting} follow-ups wait on an hour's schedule (both shards read by their long readers); a second worker ` +
      `joins; then ${row.followUps} follow-ups with \`initialInterval: 200\` are sent one at a time. From the POST ` +
      'reaching the API to the first GET after it, in order (about half registered on the worker without their ' +
      "shard's reader):",
    '',
    '| follow-ups | p50 (s) | max (s) | each (s) |',
    '|---|---|---|---|',
    `| ${row.followUps} | ${row.p50S.toFixed(3)} | ${row.maxS.toFixed(3)} | ${row.latenciesS.map((s) => s.toFixed(2)).join(', ')} |`,
    '',
  ];
}
