/**
 * Scaling out: two built worker processes on one task queue share the follow-ups (the histories name both), and a
 * SIGTERM to one of them while it holds a slow send lets that send finish and be reported before the process exits.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { FollowUpClient } from '../../src/client';
import { startBuiltScript, type StartedScript } from '../support/processes';
import { createHarness, FAST_POLLING, TEST_API_KEY, uniqueJob, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

interface WorkerProcess extends StartedScript {
  identity: string;
}

function startWorker(taskQueue: string, identity: string, budget: Record<string, string>): WorkerProcess {
  const started = startBuiltScript('worker.js', [], {
    ...budget,
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
    TEMPORAL_WORKER_IDENTITY: identity,
    // Far longer than the slow send below: the drain must never be cut short by the grace time.
    WORKER_SHUTDOWN_GRACE_TIME: '30s',
    LOG_FORMAT: 'json',
  });
  return { ...started, identity };
}

/** Who took each task of a follow-up, from its history: WorkflowTaskStarted and ActivityTaskStarted identities. */
async function takers(
  workflowId: string,
): Promise<{ workflowTasks: string[]; activities: Array<{ type: string; identity: string; completedBy?: string }> }> {
  const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const workflowTasks = events.flatMap((event) => event.workflowTaskStartedEventAttributes?.identity ?? []);
  const scheduled = new Map<string, string>();
  const started = new Map<string, string>();
  const activities: Array<{ type: string; identity: string; completedBy?: string }> = [];
  for (const event of events) {
    const id = String(event.eventId);
    const scheduledAttrs = event.activityTaskScheduledEventAttributes;
    if (scheduledAttrs) scheduled.set(id, scheduledAttrs.activityType?.name ?? '');
    const startedAttrs = event.activityTaskStartedEventAttributes;
    if (startedAttrs) started.set(id, startedAttrs.identity ?? '');
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      activities.push({
        type: scheduled.get(String(completed.scheduledEventId)) ?? '',
        identity: started.get(String(completed.startedEventId)) ?? '',
        completedBy: completed.identity ?? '',
      });
    }
  }
  return { workflowTasks, activities };
}

/** The identity of the worker running this follow-up's send right now, if one does. */
function sendRunner(description: WorkflowExecutionDescription): string | undefined {
  const pending = (description.raw.pendingActivities ?? []).find(
    (activity) => activity.activityType?.name === 'sendFollowUpMessage',
  );
  return pending?.lastWorkerIdentity || undefined;
}

test('two worker processes on one task queue both take tasks, and SIGTERM drains an in-flight send before exit', async () => {
  const taskQueue = h.taskQueue();
  const run = randomUUID().slice(0, 8);
  const budget = h.workerEnv();
  const workers = [startWorker(taskQueue, `scale-a-${run}`, budget), startWorker(taskQueue, `scale-b-${run}`, budget)];
  const anyDied = Promise.race(
    workers.map((worker) =>
      worker.exited.then((exit) => {
        throw new Error(`worker ${worker.identity} exited early (code ${exit.code}):\n${exit.output}`);
      }),
    ),
  );
  anyDied.catch(() => undefined);
  const followUps = new FollowUpClient(h.client, { taskQueue });
  const identities = workers.map((worker) => worker.identity);
  try {
    await Promise.race([
      Promise.all(
        workers.map((worker) =>
          waitFor(() => worker.output().includes('worker polling task queue'), `${worker.identity} to start`),
        ),
      ),
      anyDied,
    ]);

    // 1. Sharing. Follow-ups in batches until the histories show both identities: the server hands tasks to whichever
    //    poller asks, so each batch gives both a chance; a few batches make a false failure vanishingly unlikely.
    const seen = new Set<string>();
    for (let batch = 0; batch < 5 && seen.size < 2; batch += 1) {
      const refs = Array.from({ length: 6 }, () => uniqueJob('share'));
      for (const ref of refs) h.simulator.addJob(ref);
      const done = await Promise.race([
        Promise.all(
          refs.map((ref) =>
            followUps.startAndWait({ ...ref, prompt: `Scale-out batch ${batch}`, polling: FAST_POLLING }),
          ),
        ),
        anyDied,
      ]);
      for (const { workflowId, result } of done) {
        expect(result.outcome).toBe('completed');
        const { workflowTasks, activities } = await takers(workflowId);
        for (const identity of [...workflowTasks, ...activities.map((activity) => activity.identity)])
          seen.add(identity);
      }
    }
    expect([...seen].sort()).toEqual([...identities].sort());

    // 2. Drain. Sends that take 3 s at the API; once one is in flight at the simulator, SIGTERM the worker running it.
    const slow = Array.from({ length: 4 }, () => uniqueJob('drain'));
    for (const ref of slow)
      h.simulator.addJob({ ...ref, faults: [{ operation: 'send', kind: 'latency', latencyMs: 3_000 }] });
    const started = await Promise.all(
      slow.map((ref) => followUps.start({ ...ref, prompt: 'Scale-out drain', polling: FAST_POLLING })),
    );
    const [first] = slow;
    const firstId = started[0]?.workflowId;
    if (!first || !firstId) throw new Error('no follow-up started');
    let runner: string | undefined;
    await waitFor(async () => {
      const counts = h.simulator.counts(first.projectId, first.jobId);
      runner = sendRunner(await h.client.workflow.getHandle(firstId).describe());
      // At the simulator and not answered yet: the request is in flight on `runner`.
      return runner !== undefined && counts.idempotencyKeys.length === 1 && counts.messagesAccepted === 0;
    }, 'the first slow send to be in flight');
    const drained = workers.find((worker) => worker.identity === runner);
    if (!drained) throw new Error(`the send runs on an unknown worker: ${String(runner)}`);
    drained.child.kill('SIGTERM');
    const drainedExit = await drained.exited;
    const survivor = workers.find((worker) => worker !== drained);
    if (!survivor) throw new Error('no second worker');
    const survivorDied = survivor.exited.then((exit) => {
      throw new Error(`the remaining worker exited (code ${exit.code}):\n${exit.output}`);
    });
    survivorDied.catch(() => undefined);

    // The drained process finished the send it held and reported it before exiting cleanly.
    expect(drainedExit.code).toBe(0);
    expect(drainedExit.output).toContain('agent-followup worker stopped after draining');
    const results = await Promise.race([
      Promise.all(started.map(({ workflowId }) => followUps.result(workflowId))),
      survivorDied,
    ]);
    const firstSend = (await takers(firstId)).activities.filter((activity) => activity.type === 'sendFollowUpMessage');
    expect(firstSend).toEqual([
      { type: 'sendFollowUpMessage', identity: drained.identity, completedBy: drained.identity },
    ]);
    // Every follow-up completed, each with exactly one message delivered and no duplicate. A send the stopping worker
    // picked up but refused before its request (it was draining) is sent again, so a follow-up may count a second
    // attempt; the simulator's count of requests below proves that attempt sent nothing.
    expect(results.map((result) => result.outcome)).toEqual(slow.map(() => 'completed'));
    expect(results.every((result) => result.sendAttempts >= 1 && result.sendAttempts <= 2)).toBe(true);
    for (const ref of slow) {
      const counts = h.simulator.counts(ref.projectId, ref.jobId);
      expect({
        accepted: counts.messagesAccepted,
        duplicates: counts.duplicatesSuppressed,
        sends: counts.idempotencyKeys.length,
      }).toEqual({
        accepted: 1,
        duplicates: 0,
        sends: 1,
      });
    }
  } finally {
    for (const worker of workers)
      if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
  }
  for (const worker of workers) {
    const exit = await worker.exited;
    expect({ identity: worker.identity, code: exit.code }).toEqual({ identity: worker.identity, code: 0 });
    expect(exit.output).not.toContain(TEST_API_KEY);
  }
}, 240_000);
