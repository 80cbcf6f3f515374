/**
 * What waiting costs while nothing changes: N follow-ups on the defaults whose jobs never end, past the schedule's
 * ramp, and over a window what Temporal was asked (the dev server's `service_requests` by operation) and the CPU the
 * worker and the server used. N = 0 is the deployment with nothing waiting: its workers' own long polls.
 */
import type { Client } from '@temporalio/client';
import { addWaitingJobs, requestTimes, startBenchStack, startFollowUpsAndAwaitSends } from './bench-stack';
import { inBatches } from './stats';
import { cpuMs, peakRssMiB, requestsBetween, rssMiB } from './processes';

export interface IdleCostRow {
  waiting: number;
  label: string;
  windowS: number;
  /** Requests in the window, by operation, per hour (÷ N for N ≥ 1: per follow-up-hour). */
  requestsPerHour: Record<string, number>;
  /** The ones Temporal Cloud bills as Actions (not the workers' long polls or their answers). */
  billablePerHour: number;
  /** Worker + server CPU in the window, per hour (÷ N for N ≥ 1), s. */
  cpuSPerHour: number;
  /** The worker's resident memory at the window's end and its peak since it started (sending included), MiB. */
  workerRssMiB: number;
  workerPeakRssMiB: number;
  /** The vendor's 5 s loop at the same N in the same run: its CPU per follow-up-hour, s (absent: not measured). */
  vendorCpuSPerHour?: number;
}

/**
 * Operations that are Actions, or stand for one: queries, heartbeats, signals, starts, updates, and an activity's
 * completion or failure (one per attempt). Timers our workflows set are Actions too, but are commands, not requests:
 * they are counted from the histories (`TimerStarted` in the window) and added as `TimerStarted`.
 */
const BILLABLE =
  /^(TimerStarted|QueryWorkflow|RecordActivityTaskHeartbeat(ById)?|SignalWorkflowExecution|SignalWithStartWorkflowExecution|StartWorkflowExecution|UpdateWorkflowExecution|ExecuteMultiOperation|RespondActivityTask(Completed|Failed|Canceled)(ById)?)$/;

const POLLING_DEFAULTS = {} as const;

export async function runIdleCost(options: {
  waiting: number;
  label: string;
  settleMs: number;
  windowMs: number;
  workerEnv?: Record<string, string>;
  /** The jobs stay busy with earlier work: every follow-up waits for its job to be idle, before its send. */
  busy?: boolean;
  log: (line: string) => void;
}): Promise<IdleCostRow> {
  const stack = await startBenchStack({
    workMs: 24 * 3_600_000,
    ...(options.workerEnv ? { workerEnv: options.workerEnv } : {}),
  });
  try {
    await stack.worker.ready;
    const jobs = addWaitingJobs(stack, 'idle', options.waiting, options.busy ? { busyForMs: 24 * 3_600_000 } : {});
    if (options.busy) {
      // Nothing is sent: the settle counts from the last job's first read, the one that found it busy.
      await inBatches(jobs, 50, (job) =>
        stack.followUps.start({ ...job, prompt: 'Idle follow-up', polling: POLLING_DEFAULTS }),
      );
      while (jobs.some((job) => requestTimes(stack, job.jobId, 'get').length === 0)) await sleep(1_000);
    } else {
      // The settle counts from the last send: at 10,000 the sends alone take minutes, and they are not waiting.
      await startFollowUpsAndAwaitSends(
        stack,
        jobs,
        { prompt: 'Idle follow-up', polling: POLLING_DEFAULTS },
        options.log,
      );
    }
    options.log(`idle ${options.label}: ${options.waiting} waiting; settling ${options.settleMs / 1000}s`);
    await sleep(options.waiting === 0 ? 10_000 : options.settleMs);
    const pids = [stack.worker.child.pid as number, stack.server.pid];
    const cpuBefore = pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
    const before = await stack.server.serviceRequests();
    await sleep(options.windowMs);
    const windowEndMs = Date.now();
    const cpu = pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - cpuBefore;
    const workerPid = stack.worker.child.pid as number;
    const workerRss = rssMiB(workerPid);
    const requests = requestsBetween(before, await stack.server.serviceRequests());
    // After the CPU is read: fetching every history is the server's work for the bench, not for the waits.
    requests.TimerStarted = await timersStarted(stack.server.client, windowEndMs - options.windowMs, windowEndMs);
    const perHour = 3_600_000 / options.windowMs / Math.max(options.waiting, 1);
    const requestsPerHour = Object.fromEntries(
      Object.entries(requests).map(([operation, count]) => [operation, count * perHour]),
    );
    const billablePerHour = Object.entries(requestsPerHour).reduce(
      (sum, [operation, count]) => sum + (BILLABLE.test(operation) ? count : 0),
      0,
    );
    options.log(
      `idle ${options.label}: ${billablePerHour.toFixed(0)} billable requests per hour${options.waiting ? ' per follow-up' : ''}`,
    );
    return {
      waiting: options.waiting,
      label: options.label,
      windowS: options.windowMs / 1000,
      requestsPerHour,
      billablePerHour,
      cpuSPerHour: (cpu / 1000) * perHour,
      workerRssMiB: workerRss,
      workerPeakRssMiB: peakRssMiB(workerPid),
    };
  } finally {
    await stack.stop();
  }
}

/** Timers our workflows started between two times, from every history in the namespace (runs continued included). */
async function timersStarted(client: Client, fromMs: number, toMs: number): Promise<number> {
  let timers = 0;
  for await (const execution of client.workflow.list()) {
    const { events } = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    for (const event of events ?? []) {
      if (!event.timerStartedEventAttributes) continue;
      const atMs = Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
      if (atMs >= fromMs && atMs < toMs) timers += 1;
    }
  }
  return timers;
}

/**
 * The rows as a Markdown table, with every operation seen. CPU above the idle stack is the row's CPU less the N = 0
 * row's (the same run), per follow-up-hour: what the waits add, beside the vendor's loop at the same N.
 */
export function renderIdleCost(rows: IdleCostRow[]): string[] {
  const idle = rows.find((each) => each.waiting === 0);
  const row = (each: IdleCostRow) => {
    const operations = Object.entries(each.requestsPerHour)
      .filter(([, count]) => count >= 0.5)
      .sort(([, a], [, b]) => b - a)
      .map(([operation, count]) => `${operation} ${Math.round(count)}`)
      .join(', ');
    const above =
      idle && each.waiting > 0 ? (each.cpuSPerHour * each.waiting - idle.cpuSPerHour) / each.waiting : undefined;
    const vendor = each.vendorCpuSPerHour;
    const beside =
      above !== undefined && vendor !== undefined
        ? `${vendor.toFixed(2)} (ours ${(above / vendor).toFixed(2)}×)`
        : vendor !== undefined
          ? vendor.toFixed(2)
          : '—';
    const rss = `${Math.round(each.workerRssMiB)} / ${Math.round(each.workerPeakRssMiB)}`;
    return `| ${each.waiting} | ${each.label} | ${fmtCount(each.billablePerHour)} | ${each.cpuSPerHour.toFixed(1)} | ${above === undefined ? '—' : above.toFixed(2)} | ${beside} | ${rss} | ${operations} |`;
  };
  return [
    "| waiting | setup | billable requests per follow-up-hour (N = 0: per hour) | CPU per follow-up-hour, worker + server (s) | above the idle stack (s) | the vendor's 5 s loop, same N (s) | worker RSS at the window's end / peak (MiB) | every request per follow-up-hour, by operation |",
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(row),
  ];
}

function fmtCount(count: number): string {
  return count >= 10 ? String(Math.round(count)) : count.toFixed(1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
