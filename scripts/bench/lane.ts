/** Many follow-ups to one job: how many its lane (held by the project's coordinator) serves per minute. */
import { requestTimes, startBenchStack } from './bench-stack';
import { inBatches, percentile } from './stats';

export interface LaneFigures {
  followUps: number;
  workMs: number;
  perMinute: number;
  /** From one follow-up's result to the next one's message reaching the API. */
  handoverP50S: number;
  handoverMaxS: number;
  sentOnceInOrder: boolean;
}

const POLLING = {
  initialInterval: 250,
  backoffCoefficient: 1,
  maxInterval: 250,
  settleWindow: '1s',
  timeout: '1h',
} as const;

export async function runLane(options: {
  followUps: number;
  workMs: number;
  log: (line: string) => void;
}): Promise<LaneFigures> {
  const stack = await startBenchStack({ workMs: options.workMs });
  try {
    const job = { projectId: 'lane-project', jobId: 'one-job' };
    stack.simulator.addJob(job);
    const began = Date.now();
    const started = await inBatches(
      Array.from({ length: options.followUps }, (_, index) => index),
      50,
      (index) => stack.followUps.start({ ...job, prompt: `Follow-up ${index}`, polling: POLLING }),
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
      sentOnceInOrder:
        counts.messagesAccepted === options.followUps && counts.statusesAtSend.every((status) => status !== 'active'),
    };
  } finally {
    await stack.stop();
  }
}
