/**
 * Issue 37, history-limit burst: 1,000 follow-ups to one project started together, on the run's dev server, which
 * terminates any run past 400 history events (server-limits.ts). The budget lets all of them go within a window and
 * each agent run is short, so the coordinator hears from a thousand follow-ups in seconds; none of our runs (the
 * coordinator's chain above all) may be terminated for it, and each message goes out exactly once.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { FollowUpOutcome } from '../../src/client';
import { createHarness, FAST_POLLING, TEST_SERVER_HISTORY_LIMIT, type Harness } from '../support/harness';

jest.setTimeout(30 * 60_000);

const FOLLOW_UPS = 1_000;
const WINDOW_MS = 10_000;

let h: Harness;
beforeAll(async () => {
  // Duplicates counted, not hidden behind the Idempotency-Key.
  h = await createHarness({ honourIdempotencyKey: false });
});
afterAll(async () => {
  await h?.close();
});

async function runsWhere(query: string): Promise<WorkflowExecutionInfo[]> {
  const runs: WorkflowExecutionInfo[] = [];
  for await (const run of h.client.workflow.list({ query })) runs.push(run);
  return runs;
}

describe('a burst past the history limit', () => {
  test(`${FOLLOW_UPS} follow-ups to one project started together on a server that terminates runs past ${TEST_SERVER_HISTORY_LIMIT} events: no run of ours terminated, each sent once`, async () => {
    const projectId = `burst-${Date.now().toString(36)}`;
    const coordinatorId = `agent-followup-project/${projectId}`;
    const jobs = Array.from({ length: FOLLOW_UPS }, (_, index) => ({
      projectId,
      jobId: `job-${String(index + 1).padStart(4, '0')}`,
    }));
    // The vendor's hourly limit is not under test here.
    h.simulator.setSendLimit(projectId, null);
    for (const job of jobs) h.simulator.addJob({ ...job, workMs: 300 });
    const taskQueue = h.taskQueue();
    // All of them inside one window, none awaiting the API's answer (it has no limit here): the coordinator's
    // messages, not the budget, are what is stressed.
    const worker = await h.worker(taskQueue, undefined, {
      coordination: {
        sendsPerHour: (FOLLOW_UPS * 3_600_000) / WINDOW_MS,
        windowMs: WINDOW_MS,
        sendsAtOnce: FOLLOW_UPS,
      },
    });
    const followUps = h.followUps(taskQueue);
    const began = Date.now();
    const log = (line: string) =>
      process.stderr.write(`[burst +${Math.round((Date.now() - began) / 1000)}s] ${line}\n`);
    let outcomes: FollowUpOutcome[] = [];
    await worker.runUntil(async () => {
      const ids = await Promise.all(
        jobs.map(
          async (job) =>
            (
              await followUps.start({
                ...job,
                prompt: `Burst follow-up to ${job.jobId}`,
                polling: { ...FAST_POLLING, timeout: '15m' },
              })
            ).workflowId,
        ),
      );
      log(`started ${ids.length}`);
      outcomes = await Promise.all(ids.map((id) => followUps.outcome(id)));
      log('all ended');
    });

    // Nothing of ours terminated: the follow-ups (their task queue), their shared job watchers (`<queue>/watchers`), the
    // coordinators of this file (their queue), and this project's coordinator chain run by run, as visibility lists it
    // and as each run describes itself (visibility may lag).
    const terminated = await runsWhere(
      `(TaskQueue = '${taskQueue}' OR TaskQueue = '${taskQueue}/watchers' OR TaskQueue = '${h.coordinatorTaskQueue}' OR WorkflowId = '${coordinatorId}') AND ExecutionStatus = 'Terminated'`,
    );
    const chain = await runsWhere(`WorkflowId = '${coordinatorId}'`);
    const described = await Promise.all(
      chain.map(async (run) => ({
        runId: run.runId,
        status: (await h.client.workflow.getHandle(coordinatorId, run.runId).describe()).status.name,
      })),
    );
    log(
      `coordinator chain: ${chain.length} runs, ${described.filter((run) => run.status === 'TERMINATED').length} terminated`,
    );
    const notOnce = jobs
      .map((job) => ({ jobId: job.jobId, accepted: h.simulator.counts(job.projectId, job.jobId).messagesAccepted }))
      .filter((count) => count.accepted !== 1);
    const unfinished = outcomes.filter((outcome) => outcome.kind !== 'completed');

    // Every claim at once, so one run shows each way it fell short.
    const few = <T>(items: T[]) => (items.length === 0 ? [] : { count: items.length, examples: items.slice(0, 5) });
    expect({
      unfinished: few(unfinished),
      terminatedRuns: few(terminated.map((run) => `${run.workflowId} ${run.runId}`)),
      coordinatorRunsDescribedTerminated: few(
        described.filter((run) => run.status === 'TERMINATED').map((run) => run.runId),
      ),
      coordinatorRuns: chain.length > 0,
      notSentExactlyOnce: few(notOnce),
    }).toEqual({
      unfinished: [],
      terminatedRuns: [],
      coordinatorRunsDescribedTerminated: [],
      coordinatorRuns: true,
      notSentExactlyOnce: [],
    });
  });
});
