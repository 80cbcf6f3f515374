/**
 * Issue 37, overload: one project's coordinator under everything at once. 150 jobs of one project get a follow-up
 * each, twenty of them a second or third about a second later, against a budget of 10 sends in any 10 s window;
 * two busy loops hog both cores the whole time; the real worker process is SIGKILLed four times and its dev server
 * (the test's own, on its own port and SQLite file) SIGKILLed and started again twice, all within the first 100 s.
 * Checked only from the outside: what the simulator received, how each follow-up ended, what Temporal recorded as
 * each follow-up's start, and what the coordinator's `project` view says at the end.
 */
import { ApplicationFailure, Client, Connection, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { FollowUpClient, type FollowUpOutcome } from '../../src/client';
import { AgentApiSimulator, type SimulatedRequest } from '../../src/simulator/simulator';
import { startCpuHogs, type CpuHogs } from '../support/cpu-hogs';
import { TEST_API_KEY } from '../support/harness';
import { startDevServer, type DevServer } from '../../scripts/stack/dev-server';
import { superviseWorker, type SupervisedWorker } from '../support/worker-supervisor';
import { budgetedWorkerEnv } from '../support/processes';
import { maxInAnyWindow } from '../support/windows';
import type { FollowUpDeliveryUnknownDetails, SendFailureDetails } from '../../src/kernel/types';
import { RECONCILE_TRUST_MS } from '../../src/workflows/follow-up/decisions';

// 180 sends at 10 per 10 s are three minutes at best; kills, restarts and two hogs on two cores stretch that a lot.
jest.setTimeout(40 * 60_000);

const WINDOW_MS = 10_000;
const SENDS_PER_WINDOW = 10;
const JOBS = 150;
/** Jobs 1–10 get three follow-ups, jobs 11–20 two, the rest one: 180 follow-ups, 180 sends. */
const followUpsTo = (jobNumber: number) => (jobNumber <= 10 ? 3 : jobNumber <= 20 ? 2 : 1);
/** When the chaos happens, in seconds after the first start: four worker kills, two server kills, all before 100 s. */
const CHAOS: Array<{ atS: number; event: 'kill-worker' | 'kill-server' }> = [
  { atS: 12, event: 'kill-worker' },
  { atS: 25, event: 'kill-server' },
  { atS: 38, event: 'kill-worker' },
  { atS: 52, event: 'kill-worker' },
  { atS: 66, event: 'kill-server' },
  { atS: 80, event: 'kill-worker' },
];
const projectId = `overload-${Date.now().toString(36)}`;
const taskQueue = `${projectId}-followups`;
const polling = {
  initialInterval: 500,
  backoffCoefficient: 1.5,
  maxInterval: 2_000,
  timeout: '20m',
  settleWindow: '2s',
} as const;

interface Planned {
  jobId: string;
  prompt: string;
  workflowId?: string;
  /** Temporal's record of when the follow-up started (the first run's start time). */
  startedAt?: Date;
  outcome?: FollowUpOutcome;
}

describe('a coordinator under overload', () => {
  let hogs: CpuHogs | undefined;
  let server: DevServer | undefined;
  let simulator: AgentApiSimulator | undefined;
  let worker: SupervisedWorker | undefined;
  let connection: Connection | undefined;

  afterAll(async () => {
    // Each on its own, so one failure leaves nothing else running (the hogs above all).
    await hogs?.stop().catch(() => undefined);
    await worker?.stop().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await simulator?.close().catch(() => undefined);
    await server?.close().catch(() => undefined);
  });

  test('180 follow-ups to one project through 4 worker SIGKILLs, 2 server SIGKILLs and two CPU hogs: each sent once, in start order per job, none timed out, "delivery unknown" only for a kill\'s record of a request that never left and said so in figures, never more than the budget in a window, and every POST counted', async () => {
    const began = Date.now();
    const log = (line: string) =>
      process.stderr.write(`[overload +${Math.round((Date.now() - began) / 1000)}s] ${line}\n`);
    hogs = startCpuHogs(2);
    server = await startDevServer({ persistent: true });
    // Every POST the simulator received, rejected or not: the budget is ours to keep, so the vendor's limit is off.
    const posts: SimulatedRequest[] = [];
    simulator = await AgentApiSimulator.start({
      apiKey: TEST_API_KEY,
      honourIdempotencyKey: false,
      defaultWorkMs: 2_000,
      sendsPerProjectPerHour: null,
      onRequest: (request) => {
        if (request.operation === 'send') posts.push(request);
      },
    });
    const jobIds = Array.from({ length: JOBS }, (_, index) => `job-${String(index + 1).padStart(3, '0')}`);
    for (const jobId of jobIds) simulator.addJob({ projectId, jobId });
    worker = superviseWorker(
      budgetedWorkerEnv({
        apiBaseUrl: simulator.baseUrl,
        apiKey: TEST_API_KEY,
        address: server.address,
        taskQueue,
        sendsPerWindow: SENDS_PER_WINDOW,
        windowMs: WINDOW_MS,
      }),
    );
    const address = server.address;
    connection = await Connection.connect({ address });
    let followUps = new FollowUpClient(new Client({ connection, namespace: 'default' }), {
      taskQueue,
      coordinatorTaskQueue: `${taskQueue}-coordinators`,
    });
    let generation = 0;
    /** Retries a client call through server kills; a follow-up's own failure is an answer, not a connection problem. */
    const retrying = async <T>(call: (client: FollowUpClient) => Promise<T>): Promise<T> => {
      let failures = 0;
      const giveUpAt = Date.now() + 30 * 60_000;
      for (;;) {
        const seen = generation;
        try {
          return await call(followUps);
        } catch (error) {
          if (error instanceof WorkflowFailedError || Date.now() > giveUpAt) throw error;
          failures += 1;
          // A connection that does not recover from a server restart is replaced, once per generation.
          if (failures % 10 === 0 && seen === generation) {
            generation += 1;
            const old = connection;
            connection = await Connection.connect({ address });
            followUps = new FollowUpClient(new Client({ connection, namespace: 'default' }), {
              taskQueue,
              coordinatorTaskQueue: `${taskQueue}-coordinators`,
            });
            await old?.close().catch(() => undefined);
          }
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
    };

    const plan: Planned[][] = [1, 2, 3].map((round) =>
      jobIds.flatMap((jobId, index) =>
        followUpsTo(index + 1) >= round ? [{ jobId, prompt: `Follow-up ${round} to ${jobId}` }] : [],
      ),
    );
    const all = plan.flat();
    await worker.ready();
    const startedAt = Date.now();
    const chaos = (async () => {
      for (const { atS, event } of CHAOS) {
        const wait = startedAt + atS * 1_000 - Date.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (event === 'kill-worker') {
          await worker?.ready();
          await worker?.killAndRestart();
          log(`SIGKILLed the worker; ${posts.length} POSTs so far`);
        } else {
          await server?.kill();
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          await server?.restart();
          log(`SIGKILLed the dev server and started it again; ${posts.length} POSTs so far`);
        }
      }
    })();
    // Round by round, about a second apart, so each job's later follow-ups start after its earlier ones.
    for (const [index, round] of plan.entries()) {
      if (index > 0) await new Promise((resolve) => setTimeout(resolve, 1_000));
      await Promise.all(
        round.map(async (planned) => {
          planned.workflowId = (
            await retrying((client) =>
              client.start({ projectId, jobId: planned.jobId, prompt: planned.prompt, polling }),
            )
          ).workflowId;
          const id = planned.workflowId;
          planned.startedAt = (await retrying((client) => client.client.workflow.getHandle(id).describe())).startTime;
        }),
      );
    }
    log(`started ${all.length} follow-ups`);
    const progress = setInterval(
      () => log(`${posts.length}/${all.length} POSTs, ${all.filter((p) => p.outcome).length} ended`),
      60_000,
    );
    try {
      await Promise.all(
        all.map(
          async (planned) =>
            (planned.outcome = await retrying((client) => client.outcome(planned.workflowId as string))),
        ),
      );
    } finally {
      clearInterval(progress);
    }
    await chaos;
    // The coordinator's account right after the last send (its follow-up has ended, so its slot was used). A minute
    // at most: a coordinator that cannot answer is a finding of its own, reported with the others.
    const view = await Promise.race([
      retrying((client) => client.projectBudget(projectId)),
      new Promise<'no answer within a minute'>((resolve) =>
        setTimeout(() => resolve('no answer within a minute'), 60_000).unref(),
      ),
    ]);
    const viewedAt = Date.now();
    log(
      `all ended after ${Math.round((Date.now() - startedAt) / 1000)} s; ${worker.unexpectedExits()} worker exits we did not cause`,
    );

    // A follow-up that could not tell whether its message went out: when its send, the loss and its reads came, for
    // the log (the assertion below names it). Reconciliation trusts an unchanged job only when read within 30 s of
    // the request, so this says which leg ran long: the worker's death after the record, or the reads after it.
    // Any other follow-up that did not end with its job: the same, and how it failed.
    for (const planned of all.filter((p) => !['completed', 'timed-out'].includes(p.outcome?.kind ?? 'none'))) {
      const history = await retrying((client) =>
        client.client.workflow.getHandle(planned.workflowId as string).fetchHistory(),
      ).catch(() => undefined);
      log(
        `${planned.prompt} ended ${JSON.stringify(planned.outcome)}; its history: ${sendTimeline(history?.events ?? [], startedAt)}`,
      );
    }

    // The one "delivery unknown" the design leaves open (docs/RELIABILITY.md, "Never sending twice"): a worker killed
    // between the server's record of its request and the request's first byte, and no read possible within the 30 s
    // trust window (the server was down, or the worker again). Taken as that only when all of it shows: nothing of it
    // reached the API (so nothing can be sent twice or lost silently), the send was lost with its worker, its failure
    // says in figures that the job was read unchanged past the window, and there are no more than worker kills.
    const unknownKept = async (planned: Planned) => {
      const failure = await retrying((client) =>
        client.client.workflow.getHandle(planned.workflowId as string).result(),
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      let cause = failure instanceof Error ? failure.cause : undefined;
      while (cause instanceof Error && !(cause instanceof ApplicationFailure)) cause = cause.cause;
      const details = (cause instanceof ApplicationFailure ? cause.details?.[0] : undefined) as
        FollowUpDeliveryUnknownDetails | undefined;
      const received = simulator?.counts(projectId, planned.jobId).prompts ?? [];
      return (
        !received.includes(planned.prompt) &&
        planned.outcome?.kind === 'delivery-unknown' &&
        planned.outcome.message.includes('Heartbeat timeout') &&
        planned.outcome.message.includes('as before it: past 30 s') &&
        details?.after?.status === details?.before.status &&
        (details?.readAfterMs ?? 0) > RECONCILE_TRUST_MS
      );
    };
    const unknowns = all.filter((p) => p.outcome?.kind === 'delivery-unknown');
    const kept = (await Promise.all(unknowns.map(unknownKept))).filter(Boolean).length;
    const leftOpen = kept === unknowns.length && kept <= CHAOS.filter((c) => c.event === 'kill-worker').length;
    const notSent = new Set(leftOpen ? unknowns.map((p) => p.prompt) : []);
    if (unknowns.length > 0)
      log(
        `${unknowns.length} delivery unknown, ${leftOpen ? 'each the case the design leaves open' : 'NOT all the case the design leaves open'}`,
      );

    // Every claim checked, then compared at once, so one run shows every way it fell short.
    const endedAs = (kinds: string[]) => {
      const matching = all.filter((p) => kinds.includes(p.outcome?.kind ?? 'none') && !notSent.has(p.prompt));
      return matching.length === 0
        ? []
        : {
            count: matching.length,
            examples: matching.slice(0, 3).map((p) => ({ prompt: p.prompt, outcome: p.outcome })),
          };
    };
    // Exactly once each: POSTs and accepted messages per job equal its follow-ups (less any left open above).
    const wrongCounts = jobIds.flatMap((jobId, index) => {
      const expected = followUpsTo(index + 1) - all.filter((p) => p.jobId === jobId && notSent.has(p.prompt)).length;
      const received = posts.filter((post) => post.jobId === jobId).length;
      const accepted = simulator?.counts(projectId, jobId).messagesAccepted;
      return received === expected && accepted === expected ? [] : [{ jobId, expected, received, accepted }];
    });
    const mostInAWindow = maxInAnyWindow(
      posts.map((post) => post.atMs),
      WINDOW_MS,
    );
    // Each job's messages in the order Temporal recorded its follow-ups' starts (a job sent fewer is in wrongCounts).
    const outOfOrder = jobIds.flatMap((jobId) => {
      const ofJob = all.filter((p) => p.jobId === jobId && !notSent.has(p.prompt));
      const received = simulator?.counts(projectId, jobId).prompts ?? [];
      if (ofJob.length < 2 || received.length !== ofJob.length) return [];
      const inStartOrder = [...ofJob]
        .sort((a, b) => (a.startedAt?.getTime() ?? 0) - (b.startedAt?.getTime() ?? 0))
        .map((p) => p.prompt);
      return JSON.stringify(received) === JSON.stringify(inStartOrder) ? [] : [{ jobId, inStartOrder, received }];
    });
    // The coordinator counted what went out: never fewer slots kept than POSTs received (that would let the vendor's
    // limit be passed), and more only by a send whose record was made when its worker was killed: it may have left,
    // so it stays counted (at most one per kill). Its window holds at least every POST received in the window before
    // it answered (it counts a slot from the end of its lease, never before the request left).
    const kills = CHAOS.length;
    const postsInLastWindow = posts.filter((post) => post.atMs > viewedAt - WINDOW_MS).length;
    const coordinator =
      typeof view === 'string' || view === null
        ? { view: view ?? 'no coordinator' }
        : {
            grantedNotReturned:
              view.totals.granted - view.totals.returned >= posts.length &&
              view.totals.granted - view.totals.returned <= posts.length + kills
                ? 'the POSTs received, and at most one more per kill'
                : { granted: view.totals.granted, returned: view.totals.returned, postsReceived: posts.length },
            sentInWindowCoversPostsInWindow:
              view.sentInWindow >= postsInLastWindow ? true : { sentInWindow: view.sentInWindow, postsInLastWindow },
          };
    log(
      `coordinator ${JSON.stringify(typeof view === 'string' ? view : { sentInWindow: view?.sentInWindow, totals: view?.totals })}; POSTs in the last window ${postsInLastWindow}, in all ${posts.length}`,
    );
    expect({
      timedOut: endedAs(['timed-out']),
      deliveryUnknown: endedAs(['delivery-unknown']),
      otherwiseUnfinished: endedAs(['rejected', 'invalid-input', 'cancelled', 'error', 'failed', 'archived', 'none']),
      postsReceived: posts.length,
      wrongCounts: wrongCounts.length === 0 ? [] : { count: wrongCounts.length, examples: wrongCounts.slice(0, 5) },
      outOfOrder,
      mostInAWindow:
        mostInAWindow <= SENDS_PER_WINDOW ? 'within the budget' : { mostInAWindow, budget: SENDS_PER_WINDOW },
      coordinator,
    }).toEqual({
      timedOut: [],
      deliveryUnknown: [],
      otherwiseUnfinished: [],
      postsReceived: all.length - notSent.size,
      wrongCounts: [],
      outOfOrder: [],
      mostInAWindow: 'within the budget',
      coordinator: {
        grantedNotReturned: 'the POSTs received, and at most one more per kill',
        sentInWindowCoversPostsInWindow: true,
      },
    });
  });
});

type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** The send attempts, their ends and the job reads of a follow-up's history, in seconds after `zeroMs`. */
function sendTimeline(events: HistoryEvent[], zeroMs: number): string {
  const at = (event: HistoryEvent) => {
    const seconds = Number(event.eventTime?.seconds ?? 0) + (event.eventTime?.nanos ?? 0) / 1e9;
    return `+${(seconds - zeroMs / 1000).toFixed(1)}s`;
  };
  const activityOf = new Map<string, string>();
  return events
    .flatMap((event) => {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled) {
        activityOf.set(String(event.eventId), String(scheduled.activityType?.name));
        return [`${at(event)} scheduled ${scheduled.activityType?.name}`];
      }
      const started = event.activityTaskStartedEventAttributes;
      if (started) return [`${at(event)} started ${activityOf.get(String(started.scheduledEventId))}`];
      const timedOut = event.activityTaskTimedOutEventAttributes;
      if (timedOut) {
        const details = timedOut.failure?.timeoutFailureInfo?.lastHeartbeatDetails?.payloads?.[0]?.data;
        const report = details ? (JSON.parse(Buffer.from(details).toString('utf8')) as SendFailureDetails) : undefined;
        const recorded =
          typeof report?.requestStartedAtMs === 'number'
            ? `its request recorded at +${((report.requestStartedAtMs - zeroMs) / 1000).toFixed(1)}s`
            : `last heartbeat ${JSON.stringify(report ?? null)}`;
        return [`${at(event)} ${activityOf.get(String(timedOut.scheduledEventId))} timed out (${recorded})`];
      }
      const failed = event.activityTaskFailedEventAttributes;
      if (failed)
        return [`${at(event)} ${activityOf.get(String(failed.scheduledEventId))} failed: ${failed.failure?.message}`];
      const ended = event.workflowExecutionFailedEventAttributes;
      if (ended) return [`${at(event)} the follow-up failed: ${JSON.stringify(ended.failure)}`];
      if (event.timerStartedEventAttributes) return [`${at(event)} pause`];
      return [];
    })
    .join('; ');
}
