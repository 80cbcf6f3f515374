/**
 * Issue 37, order: a job's follow-ups are served in the order Temporal recorded their starts (the server's start
 * time, as `describe()` shows it), not in the order their check-ins happened to reach the coordinator, even on a
 * worker slowed by two busy loops, and even when an operator terminates the coordinator while some of them wait.
 */
import { startCpuHogs, type CpuHogs } from '../support/cpu-hogs';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

jest.setTimeout(15 * 60_000);

/** Long enough that the later follow-ups really wait in the job's lane while the agent works on an earlier one. */
const AGENT_RUN_MS = 6_000;
const FOLLOW_UPS = 5;
/**
 * The short test window: waiting follow-ups check in again after a silence derived from it (seconds, not the
 * hour's minutes), which the terminated coordinator's case needs; the budget itself never holds anyone back.
 */
const coordination = { sendsPerHour: (100 * 3_600_000) / 10_000, windowMs: 10_000 };

let h: Harness;
let hogs: CpuHogs | undefined;
beforeAll(async () => {
  h = await createHarness({ honourIdempotencyKey: false });
  hogs = startCpuHogs(2);
});
afterAll(async () => {
  await hogs?.stop();
  await h?.close();
});

interface Started {
  prompt: string;
  workflowId: string;
  startedAt: Date;
}

/** Starts the job's follow-ups one second apart, each with Temporal's record of its start. */
async function startOneSecondApart(job: { projectId: string; jobId: string }, taskQueue: string): Promise<Started[]> {
  const followUps = h.followUps(taskQueue);
  const started: Started[] = [];
  for (let index = 0; index < FOLLOW_UPS; index += 1) {
    // The spacing is the scenario (starts a second apart), not a wait for something to happen.
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
    const prompt = `Step ${index + 1} for ${job.jobId}`;
    const { workflowId } = await followUps.start({ ...job, prompt, polling: { ...FAST_POLLING, timeout: '8m' } });
    const { startTime } = await h.client.workflow.getHandle(workflowId).describe();
    started.push({ prompt, workflowId, startedAt: startTime });
  }
  return started;
}

function inStartOrder(started: Started[]): string[] {
  return [...started].sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime()).map((entry) => entry.prompt);
}

test('five follow-ups to one job started a second apart on a slowed worker are received in start order, once each', async () => {
  const job = uniqueJob('order');
  h.simulator.addJob({ ...job, workMs: AGENT_RUN_MS });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, { coordination });
  const followUps = h.followUps(taskQueue);
  await worker.runUntil(async () => {
    const started = await startOneSecondApart(job, taskQueue);
    const outcomes = await Promise.all(started.map((entry) => followUps.outcome(entry.workflowId)));
    expect(outcomes.filter((outcome) => outcome.kind !== 'completed')).toEqual([]);
    const counts = h.simulator.counts(job.projectId, job.jobId);
    expect(counts.prompts).toEqual(inStartOrder(started));
    // One at a time: never sent while the agent still worked on the one before.
    expect(counts.statusesAtSend.filter((status) => status === 'active')).toEqual([]);
  });
});

test('the same with the coordinator terminated by an operator after the first is sent and the others wait: still in start order, each exactly once', async () => {
  const job = uniqueJob('order-terminated');
  h.simulator.addJob({ ...job, workMs: AGENT_RUN_MS });
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, { coordination });
  const followUps = h.followUps(taskQueue);
  const coordinator = h.client.workflow.getHandle(`agent-followup-project/${job.projectId}`);
  await worker.runUntil(async () => {
    const started = await startOneSecondApart(job, taskQueue);
    await waitFor(
      () => h.simulator.counts(job.projectId, job.jobId).messagesAccepted >= 1,
      'the first message to be received',
      5 * 60_000,
    );
    // The scenario needs some still waiting: the agent's runs are long enough for that (a setup check, not the claim).
    const sentBefore = h.simulator.counts(job.projectId, job.jobId).messagesAccepted;
    expect(sentBefore).toBeLessThan(FOLLOW_UPS);
    await coordinator.terminate('test: an operator terminates the coordinator in the middle of a burst');
    const outcomes = await Promise.all(started.map((entry) => followUps.outcome(entry.workflowId)));
    expect(outcomes.filter((outcome) => outcome.kind !== 'completed')).toEqual([]);
    const counts = h.simulator.counts(job.projectId, job.jobId);
    expect({ sentBeforeTermination: sentBefore, prompts: counts.prompts }).toEqual({
      sentBeforeTermination: sentBefore,
      prompts: inStartOrder(started),
    });
    expect(counts.messagesAccepted).toBe(FOLLOW_UPS);
    expect(counts.statusesAtSend.filter((status) => status === 'active')).toEqual([]);
  });
});
