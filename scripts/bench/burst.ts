/**
 * Bursts: many follow-ups started together, to one project or to many, and how long each waits from its start to its
 * message reaching the API; what coordinating them costs (the project coordinators' workflows, workflow tasks and
 * history events per follow-up, and the worker's and server's CPU until the last send).
 */
import { followUpWorkflowId } from '../../src/client';
import { requestTimes, startBenchStack, type BenchStack } from './bench-stack';
import { cpuMs, peakRssMiB, requestsBetween } from './processes';
import { inBatches, mean, percentile } from './stats';
import { PROJECT_COORDINATOR_WORKFLOW_TYPE } from '../../src/kernel/workflow-ids';

export interface BurstRow {
  label: string;
  followUps: number;
  projects: number;
  /** Sends per project per window, and the window's length. */
  budget: number;
  windowS: number;
  startToSendP50S: number;
  startToSendP99S: number;
  /** From the first start to the last send. */
  lastSendS: number;
  sentOnce: number;
  rateLimited: number;
  /** Sends that went out before the first one had left the window: the burst the budget let through at once. */
  sentInFirstWindow: number;
  /** Worker + server CPU from the first start to the last send, per follow-up. */
  cpuPerFollowUpMs: number;
  /** The same, the worker's and the server's apart. */
  workerCpuPerFollowUpMs: number;
  serverCpuPerFollowUpMs: number;
  /** The worker's peak resident memory from its start to the last send. */
  workerPeakRssMiB: number;
  /** Coordinator runs (continue-as-new included), their workflow tasks and history events, per follow-up. */
  coordinatorRunsPerFollowUp: number;
  coordinatorTasksPerFollowUp: number;
  coordinatorEventsPerFollowUp: number;
  /** The follow-up workflow's own, until its send (a sample). */
  followUpTasksToSend: number;
  followUpEventsToSend: number;
  /** Requests to Temporal's frontend from the first start to the last send, per follow-up, by operation. */
  temporalRequestsPerFollowUp: Record<string, number>;
}

/** Long waits after the send: the burst is what is measured, so the follow-ups poll rarely meanwhile. */
const POLLING = { initialInterval: '60s', maxInterval: '60s', timeout: '2h' } as const;

export async function runBurst(options: {
  label: string;
  followUps: number;
  projects: number;
  sendsPerWindow: number;
  windowMs: number;
  /** Worker settings over the bench's (`--env`), to try one. */
  workerEnv?: Record<string, string>;
  log: (line: string) => void;
}): Promise<BurstRow> {
  const { followUps: n, projects, windowMs } = options;
  const stack = await startBenchStack({
    workMs: 3_600_000,
    sendsPerProjectPerHour: (options.sendsPerWindow * 3_600_000) / windowMs,
    workerEnv: { ...(windowMs === 3_600_000 ? {} : { AGENT_SEND_WINDOW_MS: String(windowMs) }), ...options.workerEnv },
  });
  try {
    const jobs = Array.from({ length: n }, (_, index) => ({
      projectId: `burst-p${index % projects}`,
      jobId: `burst-${index}`,
    }));
    for (const job of jobs) stack.simulator.addJob(job);
    const startedAt = new Map<string, number>();
    const workerCpuBefore = cpuMs(stack.worker.child.pid as number);
    const serverCpuBefore = cpuMs(stack.server.pid);
    const requestsBefore = await stack.server.serviceRequests();
    const began = Date.now();
    // Together, as a batch job or a schedule would: up to 200 start calls in flight.
    await inBatches(jobs, 200, async (job) => {
      startedAt.set(job.jobId, Date.now());
      return stack.followUps.start({ ...job, prompt: `Burst follow-up to ${job.jobId}`, polling: POLLING });
    });
    options.log(`burst ${options.label}: ${n} started in ${((Date.now() - began) / 1000).toFixed(1)}s`);
    const sendOf = (jobId: string) => requestTimes(stack, jobId, 'send')[0];
    const deadline = Date.now() + 30 * 60_000;
    while (jobs.some((job) => sendOf(job.jobId) === undefined) && Date.now() < deadline) await sleep(250);
    const workerCpuMs = cpuMs(stack.worker.child.pid as number) - workerCpuBefore;
    const serverCpuMs = cpuMs(stack.server.pid) - serverCpuBefore;
    const workerPeakRss = peakRssMiB(stack.worker.child.pid as number);
    const requests = requestsBetween(requestsBefore, await stack.server.serviceRequests());
    const sends = jobs.map((job) => sendOf(job.jobId) ?? Number.NaN);
    const waits = jobs.map((job, index) => ((sends[index] as number) - (startedAt.get(job.jobId) as number)) / 1000);
    const sorted = [...sends].sort((a, b) => a - b);
    options.log(
      `burst ${options.label}: last send ${((Math.max(...sends) - began) / 1000).toFixed(1)}s after the first start`,
    );
    const cost = await coordinationCost(stack, jobs);
    return {
      label: options.label,
      followUps: n,
      projects,
      budget: options.sendsPerWindow,
      windowS: windowMs / 1000,
      startToSendP50S: percentile(waits, 50),
      startToSendP99S: percentile(waits, 99),
      lastSendS: (Math.max(...sends) - began) / 1000,
      sentOnce: jobs.filter((job) => stack.simulator.counts(job.projectId, job.jobId).messagesAccepted === 1).length,
      rateLimited: jobs.reduce((sum, job) => sum + stack.simulator.counts(job.projectId, job.jobId).rateLimited, 0),
      sentInFirstWindow: sorted.filter((at) => at < (sorted[0] as number) + windowMs).length,
      cpuPerFollowUpMs: (workerCpuMs + serverCpuMs) / n,
      workerCpuPerFollowUpMs: workerCpuMs / n,
      serverCpuPerFollowUpMs: serverCpuMs / n,
      workerPeakRssMiB: workerPeakRss,
      temporalRequestsPerFollowUp: Object.fromEntries(
        Object.entries(requests).map(([operation, count]) => [operation, count / n]),
      ),
      ...cost,
    };
  } finally {
    await stack.stop();
  }
}

/** Counts from histories: every coordinator run (up to 300 sampled and scaled), and 30 follow-ups up to their send. */
async function coordinationCost(stack: BenchStack, jobs: Array<{ projectId: string; jobId: string }>) {
  const client = stack.server.client;
  const runs: Array<{ workflowId: string; runId: string }> = [];
  for await (const execution of client.workflow.list({
    query: `WorkflowType = '${PROJECT_COORDINATOR_WORKFLOW_TYPE}'`,
  })) {
    runs.push({ workflowId: execution.workflowId, runId: execution.runId });
  }
  const projects = new Set(jobs.map((job) => job.projectId));
  // Visibility lags a little behind starts; count each project's coordinator at least once.
  const runCount = Math.max(runs.length, projects.size);
  const sample = runs.slice(0, 300);
  const histories = await inBatches(sample, 20, (run) =>
    client.workflow.getHandle(run.workflowId, run.runId).fetchHistory(),
  );
  const tasks = histories.map(
    (history) => (history.events ?? []).filter((event) => event.workflowTaskCompletedEventAttributes).length,
  );
  const events = histories.map((history) => (history.events ?? []).length);
  const scale = runCount / Math.max(sample.length, 1);
  const followUps = await inBatches(jobs.slice(0, 30), 10, async (job) => {
    const workflowId = followUpWorkflowId({ ...job, prompt: `Burst follow-up to ${job.jobId}` });
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const all = history.events ?? [];
    const sent = all.findIndex(
      (event) =>
        event.activityTaskCompletedEventAttributes &&
        isSend(all, event.activityTaskCompletedEventAttributes.scheduledEventId),
    );
    const upToSend = sent < 0 ? all : all.slice(0, sent + 1);
    return {
      tasks: upToSend.filter((event) => event.workflowTaskCompletedEventAttributes).length,
      events: upToSend.length,
    };
  });
  return {
    coordinatorRunsPerFollowUp: runCount / jobs.length,
    coordinatorTasksPerFollowUp: (tasks.reduce((sum, value) => sum + value, 0) * scale) / jobs.length,
    coordinatorEventsPerFollowUp: (events.reduce((sum, value) => sum + value, 0) * scale) / jobs.length,
    followUpTasksToSend: mean(followUps.map((each) => each.tasks)),
    followUpEventsToSend: mean(followUps.map((each) => each.events)),
  };
}

function isSend(
  events: Array<{
    eventId?: unknown;
    activityTaskScheduledEventAttributes?: { activityType?: { name?: string | null } | null } | null;
  }>,
  scheduledEventId: unknown,
): boolean {
  const scheduled = events.find((event) => String(event.eventId) === String(scheduledEventId));
  return scheduled?.activityTaskScheduledEventAttributes?.activityType?.name === 'sendFollowUpMessage';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
