/**
 * The send activity with shared watching registers the follow-up's first wait with its watcher as soon as the message
 * is taken, and tells the project's coordinator an accepted send it awaits the answer to. Run in the SDK's MockActivityEnvironment against the simulator over real loopback HTTP; the Temporal
 * client is a recording stand-in (what it is asked to do is the subject here; the dev-server tests run the real one).
 */
import { ActivityNotFoundError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { quietActivityEnvironment } from '../support/quiet-activity-environment';
import { createActivities } from '../../src/activities';
import { SEND_NOT_RECORDED } from '../../src/kernel/types';
import { DEFAULT_COORDINATION } from '../../src/coordinator/coordination.activity';
import { loopbackApi } from '../support/loopback-api';
import { type WatchRegistration } from '../../src/watch/messages';
import { type SendRequest, type SentMessage } from '../../src/workflows/activity-contract';

const API_KEY = 'mint_test_send_key_0001';
const loopback = loopbackApi(API_KEY);

/**
 * A stand-in for the worker's client: records each signal-with-start, or fails it; acknowledges the send's record
 * that its request is about to leave, or refuses it as the server does an attempt it has timed out.
 */
function temporalThat(fails: boolean, refusesRecord = false) {
  const calls: Array<{ workflowId: string; registration: WatchRegistration }> = [];
  const signals: Array<{ workflowId: string; name: string; args: unknown[] }> = [];
  const records: Array<{ taskToken: Uint8Array; details: unknown; messagesAcceptedThen: number }> = [];
  let started: { type: string; taskQueue: string } | undefined;
  const client = {
    withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
    activity: {
      heartbeat: async (taskToken: Uint8Array, details: unknown) => {
        if (refusesRecord) throw new ActivityNotFoundError('Not found');
        records.push({ taskToken, details, messagesAcceptedThen: acceptedSoFar() });
      },
    },
    workflow: {
      signalWithStart: async (
        type: string,
        options: { workflowId: string; taskQueue: string; signal: { name: string }; signalArgs: [WatchRegistration[]] },
      ) => {
        if (fails) throw new Error('Temporal is unreachable');
        // Registrations go in batches (`watchJobBatch`): this test's one send makes a batch of one.
        expect(options.signal.name).toBe('watchJobBatch');
        for (const registration of options.signalArgs[0]) calls.push({ workflowId: options.workflowId, registration });
        started = { type, taskQueue: options.taskQueue };
        return { signaledRunId: 'watcher-run-1' };
      },
      // The registration makes sure the watcher that took it is ours: it is the one started.
      getHandle: (workflowId: string) => ({
        describe: async () => started,
        signal: async (definition: { name: string }, ...args: unknown[]) => {
          if (fails) throw new Error('Temporal is unreachable');
          signals.push({ workflowId, name: definition.name, args });
        },
      }),
    },
  };
  return { client: client as unknown as Client, calls, records, signals };
}

/** Messages the simulator accepted, over all jobs. */
function acceptedSoFar(): number {
  return loopback.simulator.stats().jobs.reduce((sum, job) => sum + job.counts.messagesAccepted, 0);
}

function send(request: SendRequest, temporal: Client): Promise<SentMessage> {
  const { sendFollowUpMessage } = createActivities({ api: loopback.api, temporal, coordination: DEFAULT_COORDINATION });
  const env = quietActivityEnvironment({
    heartbeatTimeoutMs: 10_000,
    workflowExecution: { workflowId: 'follow-up-1', runId: 'run-1' },
  });
  return env.run(sendFollowUpMessage, request);
}

const schedule = {
  initialIntervalMs: 5_000,
  backoffCoefficient: 2,
  maxIntervalMs: 60_000,
  deadlineMs: Date.now() + 3_600_000,
};

test("the first wait is registered with the job's answer, round 0, the settle window from the request's start", async () => {
  const ref = { projectId: 'proj-send-1', jobId: 'job-send-1' };
  loopback.simulator.addJob(ref);
  const { client, calls } = temporalThat(false);
  const baseline = { status: 'completed', prLink: null, archivedAt: null };
  const sent = await send(
    {
      ...ref,
      prompt: 'Go',
      sendByMs: Date.now() + 60_000,
      watch: { watcherId: 'watcher-3', baseline, settleWindowMs: 15_000, schedule, replyTo: 'wait-0' },
    },
    client,
  );
  expect(sent.job?.status).toBe('active');
  expect(calls).toHaveLength(1);
  expect(calls[0]?.workflowId).toBe('watcher-3');
  const registration = calls[0]?.registration;
  expect(sent.watching).toEqual(registration);
  expect(registration).toMatchObject({
    workflowId: 'follow-up-1',
    runId: 'run-1',
    ...ref,
    known: { status: 'active' },
    readAtOnce: false,
    round: 0,
  });
  expect(registration?.acceptUnchangedFromMs).toBe(sent.requestStartedAtMs + 15_000);
  expect(registration?.schedule).toMatchObject(schedule);
  expect(registration?.schedule.startedAtMs).toBeGreaterThanOrEqual(sent.requestStartedAtMs);
});

test('a registration that fails loses nothing: the send is still returned, and `watching: null` has the follow-up register itself', async () => {
  const ref = { projectId: 'proj-send-2', jobId: 'job-send-2' };
  loopback.simulator.addJob(ref);
  const { client } = temporalThat(true);
  const baseline = { status: 'completed', prLink: null, archivedAt: null };
  const sent = await send(
    {
      ...ref,
      prompt: 'Go',
      sendByMs: Date.now() + 60_000,
      watch: { watcherId: 'watcher-3', baseline, settleWindowMs: 15_000, schedule, replyTo: 'wait-0' },
    },
    client,
  );
  expect(sent.job?.status).toBe('active');
  expect(sent.watching).toBeNull();
  expect(loopback.simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(1);
});

test('without shared watching nothing is registered', async () => {
  const ref = { projectId: 'proj-send-3', jobId: 'job-send-3' };
  loopback.simulator.addJob(ref);
  const { client, calls } = temporalThat(false);
  const sent = await send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000 }, client);
  expect(sent.watching).toBeUndefined();
  expect(calls).toHaveLength(0);
});

describe('the request leaves only once the server has its record', () => {
  test('the record of when the request leaves is acknowledged before the request, with the time the send returns', async () => {
    const ref = { projectId: 'proj-send-4', jobId: 'job-send-4' };
    loopback.simulator.addJob(ref);
    const { client, records } = temporalThat(false);
    const sent = await send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000 }, client);
    expect(records).toHaveLength(1);
    expect(records[0]?.details).toEqual({ requestStartedAtMs: sent.requestStartedAtMs });
    expect(Buffer.from(records[0]?.taskToken ?? []).toString()).toBe('test');
    expect(records[0]?.messagesAcceptedThen).toBe(acceptedSoFar() - 1);
  });

  test('a record the server refuses (the attempt timed out already) sends nothing and says so', async () => {
    const ref = { projectId: 'proj-send-5', jobId: 'job-send-5' };
    loopback.simulator.addJob(ref);
    const { client } = temporalThat(false, true);
    const failure = await send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000 }, client).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: SEND_NOT_RECORDED, details: [{ request: 'not-sent' }] });
    expect(loopback.simulator.counts(ref.projectId, ref.jobId).idempotencyKeys).toHaveLength(0);
    expect(loopback.simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(0);
  });

  test('a failure after the request left carries its time, even one the API client did not make', async () => {
    const ref = { projectId: 'proj-send-6', jobId: 'job-send-6' };
    const { client, records } = temporalThat(false);
    const { sendFollowUpMessage } = createActivities({
      api: {
        sendFollowUpMessage: () => Promise.reject(new TypeError('a bug after the request left')),
        derivedKey: () => Buffer.alloc(32),
      } as unknown as typeof loopback.api,
      temporal: client,
      coordination: DEFAULT_COORDINATION,
    });
    const env = quietActivityEnvironment({
      heartbeatTimeoutMs: 10_000,
      workflowExecution: { workflowId: 'follow-up-1', runId: 'run-1' },
    });
    const failure = await env
      .run(sendFollowUpMessage, { ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000 })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({
      type: 'TypeError',
      details: [{ requestStartedAtMs: (records[0]?.details as { requestStartedAtMs: number }).requestStartedAtMs }],
    });
  });
});

describe("an accepted send the coordinator awaits the answer to is told from the send (issue 38's history)", () => {
  const tellAccepted = { coordinatorId: 'agent-followup-project/proj-tell', slot: 'run-1#1', ticket: 'run-1.seal' };

  test('the coordinator hears `accepted` for the slot, named by the follow-up under its ticket, and the answer says so', async () => {
    const ref = { projectId: 'proj-tell', jobId: 'job-tell-1' };
    loopback.simulator.addJob(ref);
    const { client, signals } = temporalThat(false);
    const sent = await send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000, tellAccepted }, client);
    expect(sent.acceptedTold).toBe(true);
    expect(signals).toEqual([
      {
        workflowId: tellAccepted.coordinatorId,
        name: 'slotOutcome',
        args: [
          { workflowId: 'follow-up-1', ticket: 'run-1.seal', slot: 'run-1#1', outcome: 'accepted', retryAfterMs: null },
        ],
      },
    ]);
  });

  test('telling that fails loses nothing: the send is returned, and `acceptedTold: false` has the follow-up tell it', async () => {
    const ref = { projectId: 'proj-tell', jobId: 'job-tell-2' };
    loopback.simulator.addJob(ref);
    const { client, signals } = temporalThat(true);
    const sent = await send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000, tellAccepted }, client);
    expect(sent.job?.status).toBe('active');
    expect(sent.acceptedTold).toBe(false);
    expect(signals).toHaveLength(0);
    expect(loopback.simulator.counts(ref.projectId, ref.jobId).messagesAccepted).toBe(1);
  });

  test('a send the API refuses tells nothing from here (the follow-up tells the coordinator itself)', async () => {
    const ref = { projectId: 'proj-tell', jobId: 'job-tell-3' };
    loopback.simulator.addJob(ref);
    loopback.simulator.injectFaults(ref.projectId, ref.jobId, [{ operation: 'send', status: 503 }]);
    const { client, signals } = temporalThat(false);
    await expect(
      send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000, tellAccepted }, client),
    ).rejects.toBeInstanceOf(ApplicationFailure);
    expect(signals).toHaveLength(0);
  });

  test('without a slot awaiting its answer nothing is told', async () => {
    const ref = { projectId: 'proj-tell', jobId: 'job-tell-4' };
    loopback.simulator.addJob(ref);
    const { client, signals } = temporalThat(false);
    const sent = await send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000 }, client);
    expect(sent.acceptedTold).toBeUndefined();
    expect(signals).toHaveLength(0);
  });
});
