/**
 * Detection on the defaults, live (issue 76 item 2): N follow-ups on the default schedule and N of the vendor's 5 s
 * loops, each to its own job, on a machine kept at a load of about 8 by busy loops. The jobs' durations come from
 * the realistic spread (detection-model.ts), shortened by a time factor so that a row takes minutes: the schedules
 * are not shortened, so every read is where the default puts it. What this measures is what the running system
 * adds to its schedule: from the read's due time (the schedule's first point at or after the job's end, counted from
 * the send) to the follow-up's close. A share of the follow-ups is also told by a caller's hint (`pollNow` at the
 * job's end, as a pull request's webhook would): from the end to the close. The trade curve (GETs against delay, over
 * the unshortened spread) is the model's.
 */
import { loadavg } from 'node:os';
import { spawn } from 'node:child_process';
import { DEFAULT_POLLING } from '../../src/kernel/request';
import { nextPollAt } from '../../src/kernel/poll-schedule';
import { BENCH_API_KEY, requestTimes, startBenchStack, type BenchStack } from './bench-stack';
import { drawDurations, REALISTIC_SPREAD, seededRandom, type CurvePoint, type TradeCurve } from './detection-model';
import { eventMs, fetchHistories, type HistoryEvent } from './history';
import { sleep } from './processes';
import { inBatches, mean, percentile } from './stats';
import { vendorFollowUp } from './vendor-loop';
import { resultsWithin } from './watch';

/** How many of the jobs the vendor's loop also follows (their own copies): see runDetection. */
const VENDOR_SAMPLE = 200;

export interface DetectionOptions {
  n: number;
  /** Job durations are the spread's divided by this. */
  timeFactor: number;
  /** Busy loops beside the stack (7 on two cores: a load of about 8 with the stack's own work). */
  hogs: number;
  /** Every this-many-th follow-up also gets a `pollNow` at its job's end. */
  hintEvery: number;
  log: (line: string) => void;
}

interface Spread {
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export interface DetectionRow {
  n: number;
  timeFactor: number;
  hogs: number;
  /** The 1-minute load average, sampled every 10 s while the jobs ran: mean and max. */
  load: { mean: number; max: number };
  ours: {
    ended: number;
    resultsRight: number;
    sentOnce: number;
    getsPerJob: number;
    /** The job's end to the read's due time: the schedule's own delay, in seconds. */
    scheduleS: Spread;
    /** The read's due time to the follow-up's close (s): what the system adds. */
    addedS: Spread;
    /**
     * The first GET at or after the job's end (the read that saw it ended) to the close (s): what the follow-up adds
     * once a read has seen the end, the rest of `addedS` being when that read came.
     */
    afterReadS: Spread;
    /** The job's end to the close (s). */
    totalS: Spread;
  };
  hinted: { count: number; getsPerJob: number; totalS: Spread };
  vendor: { ended: number; of: number; getsPerJob: number; totalS: Spread };
}

function spread(values: readonly number[]): Spread {
  return {
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    max: values.length > 0 ? Math.max(...values) : Number.NaN,
    mean: mean(values),
  };
}

/** Busy loops in child processes, so the worker and the server share the cores as on a loaded host. */
function startHogs(count: number): { stop(): void } {
  const hogs = Array.from({ length: count }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
  const stop = () => hogs.forEach((hog) => hog.kill('SIGKILL'));
  // Children outlive a parent that dies: a bench that crashes must not leave the machine loaded for the next.
  process.once('exit', stop);
  return { stop };
}

export async function runDetection(options: DetectionOptions): Promise<DetectionRow> {
  const { n, log } = options;
  const label = `detection ${n}`;
  const durations = drawDurations(REALISTIC_SPREAD, n, seededRandom(n)).map((ms) => ms / options.timeFactor);
  // Within the vendor's 100 sends an hour per project: no send waits for the budget.
  const projectOf = (index: number) => `detect-p${Math.floor(index / 80)}`;
  const ours = durations.map((workMs, index) => ({ projectId: projectOf(index), jobId: `detect-${index}`, workMs }));
  // The vendor's loops for a sample of the jobs: each loop is on its own, so its delay does not depend on how many
  // run, and thousands of them in this process (where the simulator runs) would slow the follow-ups' reads too.
  const theirs = durations.slice(0, VENDOR_SAMPLE).map((workMs, index) => ({
    projectId: projectOf(index),
    jobId: `detect-vendor-${index}`,
    workMs,
  }));
  const stack = await startBenchStack({ workMs: 60_000 });
  const hogs = startHogs(options.hogs);
  const loads: number[] = [];
  const sampler = setInterval(() => loads.push(loadavg()[0] as number), 10_000);
  try {
    for (const job of [...ours, ...theirs]) stack.simulator.addJob(job);
    log(`${label}: ${options.hogs} busy loops; starting ${n} follow-ups and ${theirs.length} vendor loops`);
    const hints: Array<Promise<unknown>> = [];
    // Every loop at once, as N services each running the vendor's loop would; their sends 5 ms apart, so that
    // thousands of connections at once do not overflow the simulator's accept queue.
    const vendorDone = Promise.all(
      theirs.map(async (job, index) => {
        await sleep(index * 5);
        return vendorFollowUp({
          baseUrl: stack.simulator.baseUrl,
          apiKey: BENCH_API_KEY,
          ...job,
          prompt: 'A vendor loop follow-up',
          intervalMs: 5_000,
        });
      }),
    );
    const workflowIds = await inBatches(ours, 50, async (job, index) => {
      const { workflowId } = await stack.followUps.start({
        projectId: job.projectId,
        jobId: job.jobId,
        prompt: 'A follow-up measured for detection',
      });
      if (index % options.hintEvery === 0) hints.push(hintAtEnd(stack, workflowId, job, log));
      return workflowId;
    });
    log(`${label}: all started; waiting for every job to end and every follow-up to close`);
    const giveUpMs = (REALISTIC_SPREAD.maxMs / options.timeFactor) * 2 + 15 * 60_000;
    const [results, vendor] = await Promise.all([resultsWithin(stack, workflowIds, giveUpMs), vendorDone]);
    await Promise.all(hints);

    // The send's time as the simulator saw it; the follow-up's schedule starts at the send's answer, a few ms later,
    // so a due time counted from here is a little early and the added delay a little high, never low.
    const sentAt = (jobId: string) => requestTimes(stack, jobId, 'send')[0] ?? Number.NaN;
    const histories = await fetchHistories(stack.server.client, workflowIds);
    const closedAt = histories.map((events) => (events.length > 0 ? eventMs(events[events.length - 1]!) : Number.NaN));
    const schedule = (startedAtMs: number) => ({
      ...DEFAULT_POLLING,
      startedAtMs,
      deadlineMs: Number.MAX_SAFE_INTEGER,
    });
    const plain = ours.flatMap((job, index) => {
      if (index % options.hintEvery === 0 || results[index] === null) return [];
      const endAt = sentAt(job.jobId) + job.workMs;
      const dueAt = nextPollAt(schedule(sentAt(job.jobId)), endAt - 1) as number;
      const sawEndAt = requestTimes(stack, job.jobId, 'get').find((atMs) => atMs >= endAt) ?? Number.NaN;
      return [{ job, endAt, dueAt, sawEndAt, closedAt: closedAt[index] as number, events: histories[index] ?? [] }];
    });
    const worst = plain.reduce<(typeof plain)[number] | undefined>(
      (slowest, each) => (slowest && slowest.closedAt - slowest.dueAt >= each.closedAt - each.dueAt ? slowest : each),
      undefined,
    );
    if (worst) {
      const from = sentAt(worst.job.jobId);
      const at = (ms: number) => ((ms - from) / 1000).toFixed(2);
      log(
        `${label}: the slowest, ${worst.job.jobId}: sent at 0, ended at ${at(worst.endAt)}, due ${at(worst.dueAt)}, ` +
          `closed ${at(worst.closedAt)} s; its GETs at ${requestTimes(stack, worst.job.jobId, 'get').map(at).join(', ')}; ` +
          `its events from the due time: ${worst.events
            .filter((event) => eventMs(event) >= worst.dueAt - 1_000)
            .map((event) => `${eventName(event)} ${at(eventMs(event))}`)
            .join(', ')}`,
      );
    }
    const hinted = ours.flatMap((job, index) =>
      index % options.hintEvery === 0 && results[index] !== null
        ? [((closedAt[index] as number) - (sentAt(job.jobId) + job.workMs)) / 1000]
        : [],
    );
    const getsOf = (jobs: ReadonlyArray<{ projectId: string; jobId: string }>) =>
      jobs.reduce((sum, job) => sum + stack.simulator.counts(job.projectId, job.jobId).gets, 0) /
      Math.max(jobs.length, 1);
    const row: DetectionRow = {
      n,
      timeFactor: options.timeFactor,
      hogs: options.hogs,
      load: { mean: mean(loads), max: loads.length > 0 ? Math.max(...loads) : Number.NaN },
      ours: {
        ended: results.filter((result) => result !== null).length,
        resultsRight: ours.filter(
          (job, index) =>
            results[index] !== null && results[index]?.prLink === stack.simulator.job(job.projectId, job.jobId).prLink,
        ).length,
        sentOnce: ours.filter((job) => stack.simulator.counts(job.projectId, job.jobId).messagesAccepted === 1).length,
        getsPerJob: getsOf(ours.filter((_, index) => index % options.hintEvery !== 0)),
        scheduleS: spread(plain.map((each) => (each.dueAt - each.endAt) / 1000)),
        addedS: spread(plain.map((each) => (each.closedAt - each.dueAt) / 1000)),
        afterReadS: spread(plain.map((each) => (each.closedAt - each.sawEndAt) / 1000).filter(Number.isFinite)),
        totalS: spread(plain.map((each) => (each.closedAt - each.endAt) / 1000)),
      },
      hinted: {
        count: hinted.length,
        getsPerJob: getsOf(ours.filter((_, index) => index % options.hintEvery === 0)),
        totalS: spread(hinted),
      },
      vendor: {
        ended: vendor.filter((outcome) => outcome.noticedAtMs !== null).length,
        of: theirs.length,
        getsPerJob: getsOf(theirs),
        totalS: spread(
          vendor.flatMap((outcome, index) => {
            const job = theirs[index]!;
            return outcome.noticedAtMs === null
              ? []
              : [(outcome.noticedAtMs - (sentAt(job.jobId) + job.workMs)) / 1000];
          }),
        ),
      },
    };
    log(
      `${label}: added p50 ${row.ours.addedS.p50.toFixed(2)} / p99 ${row.ours.addedS.p99.toFixed(2)} s (after the read that saw the end: p99 ${row.ours.afterReadS.p99.toFixed(2)} s); end → close mean ${row.ours.totalS.mean.toFixed(1)} s (vendor ${row.vendor.totalS.mean.toFixed(1)} s, hinted ${row.hinted.totalS.mean.toFixed(2)} s); load ${row.load.mean.toFixed(1)}`,
    );
    return row;
  } finally {
    clearInterval(sampler);
    hogs.stop();
    await stack.stop();
  }
}

/** An event's type, short: `WorkflowTaskStarted`, `ActivityTaskCompleted`, `WorkflowExecutionSignaled`, ... */
function eventName(event: HistoryEvent): string {
  const attributes = Object.keys(event).find(
    (key) => key.endsWith('EventAttributes') && event[key as keyof HistoryEvent],
  );
  return attributes ? attributes.replace(/EventAttributes$/, '') : String(event.eventType);
}

/** As a pull request's webhook would: once the job has ended, ask the follow-up to read now. */
async function hintAtEnd(
  stack: BenchStack,
  workflowId: string,
  job: { jobId: string; workMs: number },
  log: (line: string) => void,
): Promise<void> {
  while (requestTimes(stack, job.jobId, 'send').length === 0) await sleep(200);
  const endAt = (requestTimes(stack, job.jobId, 'send')[0] as number) + job.workMs;
  await sleep(Math.max(0, endAt - Date.now()));
  await stack.followUps.pollNow(workflowId).catch((error: unknown) => log(`pollNow failed: ${String(error)}`));
}

export function renderDetection(rows: readonly DetectionRow[]): string[] {
  const s = (value: Spread) => `${value.p50.toFixed(2)} / ${value.p99.toFixed(2)} / ${value.max.toFixed(2)}`;
  return [
    '| waiting | load mean / max | ours: ended, right, sent once | ours: GETs per job | schedule: end → due, mean / p99 (s) | **added: due → close p50 / p99 / max (s)** | of which after the read that saw the end: p50 / p99 / max (s) | ours: end → close mean (s) | hinted (`pollNow` at the end): n, GETs per job, end → close p50 / p99 / max (s) | vendor loop (a sample of the jobs): ended, GETs per job, end → noticed mean / p99 (s) |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.n} | ${row.load.mean.toFixed(1)} / ${row.load.max.toFixed(1)} | ${row.ours.ended}, ${row.ours.resultsRight}, ${row.ours.sentOnce} of ${row.n} | ${row.ours.getsPerJob.toFixed(1)} | ${row.ours.scheduleS.mean.toFixed(1)} / ${row.ours.scheduleS.p99.toFixed(1)} | **${s(row.ours.addedS)}** | ${s(row.ours.afterReadS)} | ${row.ours.totalS.mean.toFixed(1)} | ${row.hinted.count}, ${row.hinted.getsPerJob.toFixed(1)}, ${s(row.hinted.totalS)} | ${row.vendor.ended} of ${row.vendor.of}, ${row.vendor.getsPerJob.toFixed(1)}, ${row.vendor.totalS.mean.toFixed(1)} / ${row.vendor.totalS.p99.toFixed(1)} |`,
    ),
  ];
}

/** The trade curve: every schedule's GETs per job against its mean and p99 delay, over the unshortened spread. */
export function renderTradeCurve(curve: TradeCurve): string[] {
  const row = (kind: string, point: CurvePoint) =>
    `| ${kind} | ${point.label} | ${point.getsPerJob.toFixed(1)} | ${(point.meanDelayMs / 1000).toFixed(1)} | ${(point.p99DelayMs / 1000).toFixed(1)} |`;
  const defaults = curve.defaults;
  return [
    `${curve.jobs.toLocaleString('en')} durations drawn from the spread (mean ${(curve.meanDurationMs / 60_000).toFixed(1)} min); ` +
      'delay: from the job’s end to the first read at or after it.',
    '',
    '| schedule | | GETs per job | mean delay (s) | p99 delay (s) |',
    '|---|---|---|---|---|',
    row('vendor', curve.vendor),
    ...curve.fixed.map((point) => row('fixed interval', point)),
    ...curve.ours.map((point) => row('ours (backoff)', point)),
    ...curve.learned.map((point) => row('learned from 200 past jobs', point)),
    '',
    `At equal GETs: the default (${defaults.ours.getsPerJob.toFixed(1)} GETs, ${(defaults.ours.meanDelayMs / 1000).toFixed(1)} s) ` +
      `against the fixed poller making as many (${defaults.fixed.label}, ${(defaults.fixed.meanDelayMs / 1000).toFixed(1)} s): ` +
      `**${(defaults.ours.meanDelayMs / defaults.fixed.meanDelayMs).toFixed(2)}×**; the best learned schedule ` +
      `**${curve.learnedRatio.toFixed(2)}×**; the least any schedule of reads can reach on this spread ` +
      `**${curve.boundRatio.toFixed(2)}×** ((∫√(f·S) dt)² / E[D]).`,
  ];
}
