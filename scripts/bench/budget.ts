/**
 * Many follow-ups, one project and one job: how the per-project send budget spaces one project's sends, what delay
 * another project sees meanwhile (none is the aim), and how many follow-ups a job's lane serves per minute.
 */
import { requestTimes, startBenchStack } from './bench-stack';
import { inBatches, percentile } from './stats';

export interface BudgetFigures {
  budgetPerSecond: number;
  busySends: number;
  busySpacingP50S: number;
  busySpacingMinS: number;
  busyRateLimited: number;
  otherSends: number;
  otherStartToSendP50S: number;
  otherStartToSendMaxS: number;
  busyStartToSendMaxS: number;
}

export interface LaneFigures {
  followUps: number;
  workMs: number;
  perMinute: number;
  /** From one follow-up's result to the next one's message reaching the API. */
  handoverP50S: number;
  handoverMaxS: number;
  sentOnceInOrder: boolean;
}

const POLLING = { initialInterval: 250, backoffCoefficient: 1, maxInterval: 250, settleWindow: '1s', timeout: '1h' } as const;

export async function runBudget(options: { perSecond: number; busy: number; other: number; log: (line: string) => void }): Promise<BudgetFigures> {
  const stack = await startBenchStack({ workMs: 500, sendsPerProjectPerHour: options.perSecond * 3600 });
  try {
    const busy = Array.from({ length: options.busy }, (_, index) => ({ projectId: 'busy-project', jobId: `busy-${index}` }));
    const other = Array.from({ length: options.other }, (_, index) => ({ projectId: 'other-project', jobId: `other-${index}` }));
    for (const job of [...busy, ...other]) stack.simulator.addJob(job);
    const startedAt = new Map<string, number>();
    const start = (job: { projectId: string; jobId: string }) => {
      startedAt.set(job.jobId, Date.now());
      return stack.followUps.start({ ...job, prompt: 'Within the budget', polling: POLLING });
    };
    const started = [...(await inBatches(busy, 50, start)), ...(await inBatches(other, 50, start))];
    options.log(`budget: ${options.busy} follow-ups to one project and ${options.other} to another started`);
    await Promise.all(started.map(({ workflowId }) => stack.followUps.result(workflowId)));
    const firstSend = (jobId: string) => requestTimes(stack, jobId, 'send')[0] ?? Number.NaN;
    const busySends = busy.map((job) => firstSend(job.jobId)).sort((a, b) => a - b);
    const gaps = busySends.slice(1).map((at, index) => (at - (busySends[index] as number)) / 1000);
    const toSend = (jobs: typeof busy) => jobs.map((job) => (firstSend(job.jobId) - (startedAt.get(job.jobId) as number)) / 1000);
    return {
      budgetPerSecond: options.perSecond,
      busySends: busySends.length,
      busySpacingP50S: percentile(gaps, 50),
      busySpacingMinS: Math.min(...gaps),
      busyRateLimited: busy.reduce((sum, job) => sum + stack.simulator.counts(job.projectId, job.jobId).rateLimited, 0),
      otherSends: other.length,
      otherStartToSendP50S: percentile(toSend(other), 50),
      otherStartToSendMaxS: Math.max(...toSend(other)),
      busyStartToSendMaxS: Math.max(...toSend(busy)),
    };
  } finally {
    await stack.stop();
  }
}

export async function runLane(options: { followUps: number; workMs: number; log: (line: string) => void }): Promise<LaneFigures> {
  const stack = await startBenchStack({ workMs: options.workMs });
  try {
    const job = { projectId: 'lane-project', jobId: 'one-job' };
    stack.simulator.addJob(job);
    const began = Date.now();
    const started = await inBatches(Array.from({ length: options.followUps }, (_, index) => index), 50, (index) =>
      stack.followUps.start({ ...job, prompt: `Follow-up ${index}`, polling: POLLING }),
    );
    const results = await Promise.all(started.map(({ workflowId }) => stack.followUps.result(workflowId)));
    const elapsedMin = (Date.now() - began) / 60_000;
    options.log(`lane: ${options.followUps} follow-ups to one job served in ${(elapsedMin * 60).toFixed(1)}s`);
    const sends = requestTimes(stack, job.jobId, 'send');
    const finished = results.map((result) => Date.parse(result.finishedAt)).sort((a, b) => a - b);
    const handovers = sends.slice(1).map((at, index) => (at - (finished[index] as number)) / 1000);
    const counts = stack.simulator.counts(job.projectId, job.jobId);
    return {
      followUps: options.followUps,
      workMs: options.workMs,
      perMinute: options.followUps / elapsedMin,
      handoverP50S: percentile(handovers, 50),
      handoverMaxS: Math.max(...handovers),
      sentOnceInOrder: counts.messagesAccepted === options.followUps && counts.statusesAtSend.every((status) => status !== 'active'),
    };
  } finally {
    await stack.stop();
  }
}
