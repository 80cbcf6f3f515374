/**
 * GETs and POSTs per follow-up, detection delay and history size for agent jobs of 1 min to 6 h, ours beside the
 * vendor's 5 s loop. Scaled down by a time factor (job length, our polling and the vendor's interval alike), then
 * reported in real seconds: counts do not change with the scale, delays scale back exactly.
 */
import { DEFAULT_POLLING } from '../../src/kernel/request';
import { startBenchStack, BENCH_API_KEY, requestTimes } from './bench-stack';
import { mean } from './stats';
import { vendorFollowUp } from './vendor-loop';

export interface ScaleRow {
  job: string;
  runs: number;
  ours: { gets: number; posts: number; meanDelayS: number; worstDelayS: number; events: number; outcome: string };
  vendor: { gets: number; posts: number; meanDelayS: number; worstDelayS: number; outcome: string };
}

const SIZES = [
  { job: '1 min', ms: 60_000, outcome: 'completed' },
  { job: '10 min', ms: 600_000, outcome: 'completed' },
  { job: '1 h', ms: 3_600_000, outcome: 'completed' },
  { job: '6 h', ms: 21_600_000, outcome: 'completed' },
  { job: '10 min, ends archived', ms: 600_000, outcome: 'archived' },
] as const;

export async function runScale(options: {
  factor: number;
  runs: number;
  log: (line: string) => void;
}): Promise<ScaleRow[]> {
  const { factor, runs, log } = options;
  const stack = await startBenchStack({ workMs: 60_000 });
  try {
    const polling = {
      initialInterval: DEFAULT_POLLING.initialIntervalMs / factor,
      backoffCoefficient: DEFAULT_POLLING.backoffCoefficient,
      maxInterval: DEFAULT_POLLING.maxIntervalMs / factor,
      settleWindow: DEFAULT_POLLING.settleWindowMs / factor,
      timeout: '1d',
    };
    const vendorIntervalMs = 5_000 / factor;
    log(
      `scale: ÷${factor}: our polling ${polling.initialInterval}ms ×2 ≤${polling.maxInterval}ms, the vendor's ${vendorIntervalMs}ms`,
    );
    const rows = await Promise.all(
      SIZES.map(async (size) => {
        const workMs = size.ms / factor;
        const pairs = await Promise.all(
          Array.from({ length: runs }, async (_, run) => {
            const ours = { projectId: 'bench-scale', jobId: `ours-${size.ms}-${size.outcome}-${run}` };
            const theirs = { projectId: 'bench-scale', jobId: `vendor-${size.ms}-${size.outcome}-${run}` };
            stack.simulator.addJob({ ...ours, workMs, outcome: size.outcome });
            stack.simulator.addJob({ ...theirs, workMs, outcome: size.outcome });
            const stop = new AbortController();
            // The vendor's loop never ends on `archived`: it is stopped once it has run twice the job's length.
            const bound = setTimeout(() => stop.abort(), 2 * workMs + 5_000);
            const [result, vendor] = await Promise.all([
              stack.followUps.startAndWait({ ...ours, prompt: `Scale run ${run}`, polling }),
              vendorFollowUp({
                baseUrl: stack.simulator.baseUrl,
                apiKey: BENCH_API_KEY,
                ...theirs,
                prompt: `Scale run ${run}`,
                intervalMs: vendorIntervalMs,
                signal: stop.signal,
              }),
            ]);
            clearTimeout(bound);
            const endedAt = (jobId: string) => (requestTimes(stack, jobId, 'send')[0] ?? Number.NaN) + workMs;
            const history = await stack.server.client.workflow.getHandle(result.workflowId).fetchHistory();
            return {
              ours: {
                gets: stack.simulator.counts(ours.projectId, ours.jobId).gets,
                posts: requestTimes(stack, ours.jobId, 'send').length,
                delayS: ((Date.parse(result.result.finishedAt) - endedAt(ours.jobId)) * factor) / 1000,
                events: history.events?.length ?? 0,
                outcome: result.result.outcome,
              },
              vendor: {
                gets: vendor.gets,
                posts: vendor.posts,
                delayS:
                  vendor.noticedAtMs === null
                    ? Number.NaN
                    : ((vendor.noticedAtMs - endedAt(theirs.jobId)) * factor) / 1000,
                outcome:
                  vendor.noticedAtMs === null
                    ? `never ended (stopped after ${(2 * size.ms) / 60_000} min)`
                    : String(vendor.status),
              },
            };
          }),
        );
        const ours = pairs.map((pair) => pair.ours);
        const vendor = pairs.map((pair) => pair.vendor);
        const row: ScaleRow = {
          job: size.job,
          runs,
          ours: {
            gets: mean(ours.map((each) => each.gets)),
            posts: mean(ours.map((each) => each.posts)),
            meanDelayS: mean(ours.map((each) => each.delayS)),
            worstDelayS: Math.max(...ours.map((each) => each.delayS)),
            events: mean(ours.map((each) => each.events)),
            outcome: [...new Set(ours.map((each) => each.outcome))].join(', '),
          },
          vendor: {
            gets: mean(vendor.map((each) => each.gets)),
            posts: mean(vendor.map((each) => each.posts)),
            meanDelayS: mean(vendor.map((each) => each.delayS).filter(Number.isFinite)),
            worstDelayS: Math.max(...vendor.map((each) => each.delayS).filter(Number.isFinite)),
            outcome: [...new Set(vendor.map((each) => each.outcome))].join(', '),
          },
        };
        log(`scale: ${size.job}: ours ${row.ours.gets} GETs, vendor ${row.vendor.gets} GETs`);
        return row;
      }),
    );
    return rows;
  } finally {
    await stack.stop();
  }
}
