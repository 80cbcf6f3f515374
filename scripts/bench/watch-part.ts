/**
 * The `watch` part of `npm run bench`: every row issue 19 asks of shared watching, from one run, in one report
 * section: shared watching at each N, today's per-follow-up polling, the vendor's 5 s loop at the same N's, two worker
 * processes sharing the watchers, and recovery after a SIGKILL, each set against its target.
 */
import { runRecovery, type RecoveryRow } from './recovery';
import { measureVendor, type VendorFigures } from './sizes';
import { fmt } from './stats';
import { meets, targetTable, type TargetRow } from './targets';
import { cpuPerRead, perFollowUpHour, runWatchRow, type WatchRow } from './watch';

export interface WatchPartOptions {
  /** N of the shared rows, on one worker; the vendor's loop is measured at each. */
  sizes: number[];
  /** N of the rows where each follow-up polls itself (AGENT_WATCH_SHARDS=0). */
  pollingSizes: number[];
  /** N of the shared rows on two worker processes. */
  twoWorkerSizes: number[];
  shards: number;
  windowMs: number;
  settleMs?: number;
  sample: number;
  /** Follow-ups per group of the recovery row (0: none). */
  recoveryPerGroup: number;
  recoveryRestartMs: number;
  workerEnv: Record<string, string>;
  log: (line: string) => void;
}

export interface WatchFigures {
  shards: number;
  rows: WatchRow[];
  vendor: Array<VendorFigures & { n: number }>;
  recovery: RecoveryRow[];
  recoveryRestartMs: number;
}

export async function runWatchPart(options: WatchPartOptions): Promise<WatchFigures> {
  const { shards, workerEnv, log } = options;
  const common = {
    windowMs: options.windowMs,
    sample: options.sample,
    workerEnv,
    log,
    ...(options.settleMs !== undefined ? { settleMs: options.settleMs } : {}),
  };
  const figures: WatchFigures = {
    shards,
    rows: [],
    vendor: [],
    recovery: [],
    recoveryRestartMs: options.recoveryRestartMs,
  };
  // Each row's figures go to the log as soon as they are measured: a later row that fails loses no earlier one.
  const logged = <T>(what: string, value: T): T => {
    log(`${what}, figures: ${JSON.stringify(value)}`);
    return value;
  };
  for (const n of options.sizes) {
    figures.rows.push(logged(`shared, N=${n}`, await runWatchRow({ ...common, n, shards, workers: 1 })));
    figures.vendor.push(
      logged(`the vendor's loop, N=${n}`, { n, ...(await measureVendor({ n, windowMs: options.windowMs, log })) }),
    );
  }
  for (const n of options.pollingSizes)
    figures.rows.push(logged(`each polls itself, N=${n}`, await runWatchRow({ ...common, n, shards: 0, workers: 1 })));
  for (const n of options.twoWorkerSizes)
    figures.rows.push(logged(`shared on two workers, N=${n}`, await runWatchRow({ ...common, n, shards, workers: 2 })));
  if (options.recoveryPerGroup > 0) {
    figures.recovery = await runRecovery({
      perGroup: options.recoveryPerGroup,
      restartAfterMs: options.recoveryRestartMs,
      workerEnv: { AGENT_WATCH_SHARDS: String(shards), ...workerEnv },
      log,
    });
  }
  return figures;
}

/** The report section: the figures, then the targets against them. */
export function renderWatch(figures: WatchFigures): string[] {
  const windowS = Math.round((figures.rows[0]?.windowMs ?? 0) / 1000);
  const mode = (row: WatchRow) => (row.shards > 0 ? `shared, ${row.shards} shards` : 'each follow-up polls itself');
  const lines = [
    '## Shared watching, side by side (issue 19)',
    '',
    `N follow-ups on the default schedule (5 s ×2 to 60 s) wait for jobs that work until the bench ends them. Once every ` +
      `follow-up reads at the steady 60 s gap, a ${windowS} s window measures the CPU of the worker(s) and the dev server, the ` +
      "GETs and the resident memory of every worker while all wait (its peak over the whole row, sends and endings included, after the slash): shared watching (`AGENT_WATCH_SHARDS`), today's per-follow-up polling (`AGENT_WATCH_SHARDS=0`), " +
      "and the vendor's 5 s loop for the same N in one process. Then each job ends with a pull request link of its own: a " +
      'sample spread over one gap gives the detection delay (from the GET that first saw the job ended, simulator clock, ' +
      "to the follow-up's next WorkflowTaskStarted after the answer reached it, server clock, same machine) and the history " +
      "events per follow-up; the rest end at once, and every result must carry its own job's link. Wake-ups are the sampled " +
      "follow-ups' workflow tasks while they waited at the steady gap (a follow-up that hears nothing for 60 gaps registers " +
      'again, so a wait shorter than an hour shows none).',
    '',
    '| N | waiting | worker processes | CPU per read (ms): worker + server | CPU per follow-up-hour (s): worker + server | GETs per follow-up-hour | RSS waiting / peak (MiB) | started / all sent (s) | sent once | results right | detection delay p50 / p99 / max (s), sampled | history events p50 / max | wake-ups per follow-up-hour |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of figures.rows) {
    const read = cpuPerRead(row);
    const hour = perFollowUpHour(row);
    lines.push(
      `| ${row.n} | ${mode(row)} | ${row.workers.length} | ${fmt(read.worker + read.server, 2)} = ${fmt(read.worker, 2)} + ${fmt(read.server, 2)} | ` +
        `${fmt(hour.worker + hour.server, 3)} = ${fmt(hour.worker, 3)} + ${fmt(hour.server, 3)} | ${fmt(hour.gets, 0)} | ${row.workers.map((worker) => `${fmt(worker.waitingRssMiB, 0)} / ${fmt(worker.peakRssMiB, 0)}`).join(' + ')} | ` +
        `${fmt(row.startedInS, 0)} / ${fmt(row.allSentInS, 0)} | ${row.sentOnce} of ${row.n} | ${row.resultsRight} of ${row.n}${row.ended < row.n ? ` (${row.n - row.ended} never ended)` : ''} | ` +
        `${fmt(row.detectionP50Ms / 1000, 2)} / ${fmt(row.detectionP99Ms / 1000, 2)} / ${fmt(row.detectionMaxMs / 1000, 2)}, ${row.detectionSampled} | ${fmt(row.historyEventsP50, 0)} / ${fmt(row.historyEventsMax, 0)} | ${fmt(row.wakeUpsPerHour, 1)} |`,
    );
  }
  for (const vendor of figures.vendor) {
    lines.push(
      `| ${vendor.n} | the vendor's loop, every 5 s | 1 | ${fmt(vendor.cpuPerPollMs, 2)} | ${fmt(vendor.cpuPerWaiterHourS, 3)} | ${fmt(vendor.getsPerWaiterHour, 0)} | — / ${fmt(vendor.peakRssMiB, 0)} | — | — | — | — | none | — |`,
    );
  }
  lines.push('');
  for (const row of figures.rows.filter((each) => each.workers.length > 1)) {
    const total = row.workers.reduce((sum, worker) => sum + worker.cpuMs, 0);
    lines.push(
      `### ${row.n} waiting, ${row.shards} shards, on ${row.workers.length} worker processes`,
      '',
      "Which worker ran each watcher's reading activity (`watchJobs`, its pending activity's last worker identity at the end of the window), and the CPU each process used in the window.",
      '',
      "| worker | watchers it reads for | CPU in the window (ms) | share of the workers' CPU | RSS waiting / peak (MiB) |",
      '|---|---|---|---|---|',
      ...row.workers.map(
        (worker) =>
          `| ${worker.identity} | ${worker.watchers} of ${row.shards} | ${fmt(worker.cpuMs, 0)} | ${fmt((100 * worker.cpuMs) / total, 0)} % | ${fmt(worker.waitingRssMiB, 0)} / ${fmt(worker.peakRssMiB, 0)} |`,
      ),
      '',
    );
  }
  if (figures.recovery.length > 0) {
    lines.push(
      `### Recovery after a worker SIGKILL, ${figures.shards} shards`,
      '',
      `As in "Recovery after a worker SIGKILL" above, with \`AGENT_WATCH_SHARDS=${figures.shards}\`: the worker is killed while every follow-up waits, a new one starts ` +
        `${figures.recoveryRestartMs / 1000} s later; for each follow-up, its first read after the kill minus the later of "when it was due anyway" and "when the new worker was ready".`,
      '',
      '| follow-ups | N | read again | extra delay after the new worker was ready p50 / p99 / max (s) |',
      '|---|---|---|---|',
      ...figures.recovery.map(
        (row) =>
          `| ${row.group} | ${row.followUps} | ${row.resumed} | ${fmt(row.resumeAfterReadyP50S)} / ${fmt(row.resumeAfterReadyP99S)} / ${fmt(row.resumeAfterReadyMaxS)} |`,
      ),
      '',
    );
  }
  lines.push(...watchTargets(figures));
  return lines;
}

/** Issue 19's targets against this run. */
function watchTargets(figures: WatchFigures): string[] {
  const rows: TargetRow[] = [];
  const shared = figures.rows.filter((row) => row.shards > 0 && row.workers.length === 1);
  for (const row of shared) {
    const vendor = figures.vendor.find((each) => each.n === row.n);
    if (!vendor) continue;
    const hour = perFollowUpHour(row);
    const ours = hour.worker + hour.server;
    rows.push([
      `N = ${row.n}: CPU per follow-up-hour ≤ half the vendor's loop's (same run)`,
      `${fmt(ours, 3)} s vs ${fmt(vendor.cpuPerWaiterHourS, 3)} s (${fmt(ours / vendor.cpuPerWaiterHourS, 2)}×)`,
      meets(ours / vendor.cpuPerWaiterHourS, (ratio) => ratio <= 0.5),
    ]);
    const fewer = vendor.getsPerWaiterHour / hour.gets;
    rows.push([
      `N = ${row.n}: ≥ 10× fewer GETs than the vendor's loop`,
      `${fmt(fewer)}×`,
      meets(fewer, (ratio) => ratio >= 10),
    ]);
  }
  const largest = shared.reduce<WatchRow | undefined>((best, row) => (best && best.n >= row.n ? best : row), undefined);
  if (largest) {
    const rss = largest.workers[0]?.waitingRssMiB ?? Number.NaN;
    rows.push([
      `${largest.n} waiting on one worker: RSS ≤ 500 MiB while they wait, all sent once, all results right`,
      `${fmt(rss, 0)} MiB (peak ${fmt(largest.workers[0]?.peakRssMiB ?? Number.NaN, 0)} MiB while sending or ending), ${largest.sentOnce} sent once, ${largest.resultsRight} right`,
      Number.isFinite(rss)
        ? rss <= 500 && largest.sentOnce === largest.n && largest.resultsRight === largest.n
        : undefined,
    ]);
  }
  const sharedAll = figures.rows.filter((row) => row.shards > 0);
  if (sharedAll.length > 0) {
    const p99 = Math.max(...sharedAll.map((row) => row.detectionP99Ms)) / 1000;
    rows.push([
      'detection delay (read → follow-up woken) p99 ≤ 2 s, shared',
      `${fmt(p99, 2)} s at worst`,
      meets(p99, (value) => value <= 2),
    ]);
    const events = Math.max(...sharedAll.map((row) => row.historyEventsP50));
    rows.push([
      "history events per follow-up ≤ today's ~41 (median), shared",
      `${fmt(events, 0)} at worst`,
      meets(events, (value) => value <= 41),
    ]);
  }
  if (figures.recovery.length > 0) {
    const worst = Math.max(...figures.recovery.map((row) => row.resumeAfterReadyMaxS));
    rows.push([
      'every follow-up read again ≤ 10 s after a new worker is ready (max), shared',
      `${fmt(worst)} s`,
      meets(worst, (value) => value <= 10),
    ]);
  }
  return targetTable("### Against issue 19's targets", rows);
}
