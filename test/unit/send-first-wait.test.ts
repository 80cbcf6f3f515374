/**
 * The send activity with shared watching registers the follow-up's first wait with its watcher as soon as the message
 * is taken. Run in the SDK's MockActivityEnvironment against the simulator over real loopback HTTP; the Temporal
 * client is a recording stand-in (what it is asked to do is the subject here; the dev-server tests run the real one).
 */
import type { Client } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createActivities, type SendRequest, type SentMessage } from '../../src/activities';
import { DEFAULT_COORDINATION } from '../../src/activities/coordination';
import type { WatchRegistration } from '../../src/follow-up/watch-registry';
import { loopbackApi } from '../support/loopback-api';

const API_KEY = 'mint_test_send_key_0001';
const loopback = loopbackApi(API_KEY);

/** A stand-in for the worker's client: records each signal-with-start, or fails it. */
function temporalThat(fails: boolean) {
  const calls: Array<{ workflowId: string; registration: WatchRegistration }> = [];
  const client = {
    withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
    workflow: {
      signalWithStart: async (_type: string, options: { workflowId: string; signalArgs: [WatchRegistration] }) => {
        if (fails) throw new Error('Temporal is unreachable');
        calls.push({ workflowId: options.workflowId, registration: options.signalArgs[0] });
        return {};
      },
    },
  };
  return { client: client as unknown as Client, calls };
}

function send(request: SendRequest, temporal: Client): Promise<SentMessage> {
  const { sendFollowUpMessage } = createActivities({ api: loopback.api, temporal, coordination: DEFAULT_COORDINATION });
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 10_000, workflowExecution: { workflowId: 'follow-up-1', runId: 'run-1' } });
  return env.run(sendFollowUpMessage, request);
}

const schedule = { initialIntervalMs: 5_000, backoffCoefficient: 2, maxIntervalMs: 60_000, deadlineMs: Date.now() + 3_600_000 };

test("the first wait is registered with the job's answer, round 0, the settle window from the request's start", async () => {
  const ref = { projectId: 'proj-send-1', jobId: 'job-send-1' };
  loopback.simulator.addJob(ref);
  const { client, calls } = temporalThat(false);
  const baseline = { status: 'completed', prLink: null, archivedAt: null };
  const sent = await send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000, watch: { watcherId: 'watcher-3', baseline, settleWindowMs: 15_000, schedule } }, client);
  expect(sent.job?.status).toBe('active');
  expect(calls).toHaveLength(1);
  expect(calls[0]?.workflowId).toBe('watcher-3');
  const registration = calls[0]?.registration;
  expect(sent.watching).toEqual(registration);
  expect(registration).toMatchObject({ workflowId: 'follow-up-1', runId: 'run-1', ...ref, known: { status: 'active' }, readAtOnce: false, round: 0 });
  expect(registration?.acceptUnchangedFromMs).toBe(sent.requestStartedAtMs + 15_000);
  expect(registration?.schedule).toMatchObject(schedule);
  expect(registration?.schedule.startedAtMs).toBeGreaterThanOrEqual(sent.requestStartedAtMs);
});

test('a registration that fails loses nothing: the send is still returned, and `watching: null` has the follow-up register itself', async () => {
  const ref = { projectId: 'proj-send-2', jobId: 'job-send-2' };
  loopback.simulator.addJob(ref);
  const { client } = temporalThat(true);
  const baseline = { status: 'completed', prLink: null, archivedAt: null };
  const sent = await send({ ...ref, prompt: 'Go', sendByMs: Date.now() + 60_000, watch: { watcherId: 'watcher-3', baseline, settleWindowMs: 15_000, schedule } }, client);
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
