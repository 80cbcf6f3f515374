/**
 * A saturated worker: the server starts the send, but its code runs only after the heartbeat timeout, so the server
 * times it out with no heartbeat on record (issue 37). Nothing left then, and the follow-up must know it: it sends
 * again, once, ends with its job's result (never "delivery unknown"), and its project counts only the send that left.
 * The worker is held back by an activity interceptor that blocks the event loop, as a busy CPU would.
 */
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { coordinatorWorkflowId } from '../../src/kernel/workflow-ids';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';
import { projectQuery } from '../../src/coordinator/messages';

let h: Harness;
/** POSTs the simulator received, per job. */
const posts = new Map<string, number>();
beforeAll(async () => {
  h = await createHarness({
    honourIdempotencyKey: false,
    onRequest: ({ operation, jobId }) => {
      if (operation === 'send') posts.set(jobId, (posts.get(jobId) ?? 0) + 1);
    },
  });
});
afterAll(async () => {
  await h.close();
});

/** Whether the follow-up run's history shows a send that the server timed out. */
async function sendTimedOut({ workflowId, runId }: { workflowId: string; runId: string }): Promise<boolean> {
  const history = await h.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).some((event) => event.activityTaskTimedOutEventAttributes);
}

interface HeldSend {
  interceptor: ActivityInterceptorsFactory;
  /** Settles once the held attempt's own code has run (whatever it did), with the run that scheduled it. */
  ran: Promise<{ workflowId: string; runId: string }>;
}

/**
 * Holds back the first send: the event loop is blocked for the heartbeat timeout (a saturated worker runs nothing),
 * then the attempt waits until the server has timed it out (and, with `pastLease`, until its slot's lease is over),
 * so its code always runs after that verdict.
 */
function saturatedFirstSend(pastLease = false): HeldSend {
  let held = false;
  let ran: (run: { workflowId: string; runId: string }) => void = () => undefined;
  const done = new Promise<{ workflowId: string; runId: string }>((resolve) => (ran = resolve));
  const interceptor: ActivityInterceptorsFactory = (context) => ({
    inbound: {
      async execute(input, next) {
        const { activityType, heartbeatTimeoutMs, workflowExecution } = context.info;
        if (activityType !== 'sendFollowUpMessage' || held || !workflowExecution) return next(input);
        held = true;
        const until = Date.now() + (heartbeatTimeoutMs ?? 10_000);
        while (Date.now() < until) {
          // Busy: nothing else in this process runs, heartbeats included.
        }
        await waitFor(() => sendTimedOut(workflowExecution), 'the server to time the send out', 120_000);
        const { sendByMs } = input.args[0] as { sendByMs: number };
        if (pastLease) await waitFor(() => Date.now() > sendByMs, "the send slot's lease to run out", 120_000);
        try {
          return await next(input);
        } finally {
          ran(workflowExecution);
        }
      },
    },
  });
  return { interceptor, ran: done };
}

/** Runs one follow-up on a worker whose first send is held back; returns its result, history and project. */
async function followUpWithHeldSend(held: HeldSend, coordination: { windowMs?: number } = {}) {
  const ref = uniqueJob('overloaded');
  h.simulator.addJob(ref);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue, undefined, { interceptors: { activity: [held.interceptor] }, coordination });
  const followUps = h.followUps(taskQueue);
  const { result, history, project } = await worker.runUntil(async () => {
    const { workflowId } = await followUps.start({ ...ref, prompt: 'Go on', polling: FAST_POLLING });
    const finished = await followUps.result(workflowId);
    // The held attempt's code runs after the verdict, maybe after the result: whatever it does must count too.
    const heldRun = await held.ran;
    return {
      result: finished,
      // The run that held the send (the follow-up may have continued as new since).
      history: await h.client.workflow.getHandle(heldRun.workflowId, heldRun.runId).fetchHistory(),
      // Asked while this worker runs the coordinator.
      project: await h.client.workflow.getHandle(coordinatorWorkflowId(ref.projectId)).query(projectQuery),
    };
  });
  const timedOut = (history.events ?? []).flatMap((event) =>
    event.activityTaskTimedOutEventAttributes ? [event.activityTaskTimedOutEventAttributes] : [],
  );
  return { ref, result, project, timedOut, posts: posts.get(ref.jobId) ?? 0 };
}

describe('a send whose code ran only after the server timed it out on its heartbeat', () => {
  test('sent nothing: the follow-up sends again, once, ends with its result, and its project counts one send', async () => {
    const { ref, result, project, timedOut, posts: received } = await followUpWithHeldSend(saturatedFirstSend());
    // The case itself: the first send timed out on its heartbeat, with nothing on record.
    expect(timedOut).toHaveLength(1);
    expect(timedOut[0]?.failure?.timeoutFailureInfo?.timeoutType).toBe(
      temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT,
    );
    expect(timedOut[0]?.failure?.timeoutFailureInfo?.lastHeartbeatDetails?.payloads ?? []).toHaveLength(0);

    expect(result).toMatchObject({ outcome: 'completed', delivery: 'response', sendAttempts: 2 });
    expect(result.job.status).toBe('completed');
    expect(received).toBe(1);
    expect(h.simulator.counts(ref.projectId, ref.jobId)).toMatchObject({ posts: 1, messagesAccepted: 1 });
    // The slot of the send that never left was given back: the window counts what the API received.
    expect(project.sentInWindow).toBe(received);
    expect(project.totals).toMatchObject({ granted: 2, returned: 1 });
  });

  test("held past its slot's lease too: its slot is given back, never counted", async () => {
    // A short window, so the lease the held send outlives is short too.
    const {
      result,
      project,
      timedOut,
      posts: received,
    } = await followUpWithHeldSend(saturatedFirstSend(true), { windowMs: 120_000 });
    expect(timedOut).toHaveLength(1);
    expect(result).toMatchObject({ outcome: 'completed', delivery: 'response', sendAttempts: 2 });
    expect(received).toBe(1);
    expect(project.sentInWindow).toBe(received);
    expect(project.totals).toMatchObject({ granted: 2, returned: 1 });
  });
});
