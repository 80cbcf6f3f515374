/**
 * The built worker process with WORKER_METRICS_ADDRESS and LOG_FORMAT=json: its /metrics endpoint serves Temporal's
 * runtime metrics and ours with the right labels and values, and every log line it writes is one JSON object that
 * carries the workflow, project and job, and never the key.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FollowUpClient, type FollowUpInput } from '../../src/client';
import { watcherTaskQueue } from '../../src/kernel/workflow-ids';
import { freePort, startBuiltScript } from '../support/processes';
import { createHarness, FAST_POLLING, TEST_API_KEY, uniqueJob, waitFor, type Harness } from '../support/harness';

const SECRET = TEST_API_KEY.slice('mint_'.length);

let h: Harness;
beforeAll(async () => {
  // Error bodies echo the Authorization header, so the JSON logs are tested against a key that really reaches them.
  h = await createHarness({ echoAuthorizationInErrors: true });
});
afterAll(async () => {
  await h.close();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus' text format (only what Core writes: no escaped quotes in our label values). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g))
      labels[pair[1] as string] = pair[2] as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with this name whose labels include `labels`; 0 when absent (a counter not yet hit). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const matching = samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return matching.reduce((sum, sample) => sum + sample.value, 0);
}

/** The failure type at the end of a follow-up's failure chain. */
function failureTypeOf(error: unknown): string | undefined {
  if (!(error instanceof WorkflowFailedError)) return undefined;
  let current: unknown = error.cause;
  while (current instanceof Error) {
    if (current instanceof ApplicationFailure && current.type) return current.type;
    current = (current as Error & { cause?: unknown }).cause;
  }
  return undefined;
}

test('the worker serves Temporal and follow-up metrics on its metrics address and logs one redacted JSON object a line', async () => {
  const taskQueue = h.taskQueue();
  const port = await freePort();
  const worker = startBuiltScript('worker.js', [], {
    ...h.workerEnv(),
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
    WORKER_SHUTDOWN_GRACE_TIME: '2s',
    AGENT_API_REQUEST_TIMEOUT: '2s',
    WORKER_METRICS_ADDRESS: `127.0.0.1:${port}`,
    LOG_FORMAT: 'json',
  });
  const workerDied = worker.exited.then((exit) => {
    throw new Error(`the worker exited early (code ${exit.code}):\n${exit.output}`);
  });
  workerDied.catch(() => undefined);
  const scrape = async () => parseMetrics(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());

  const followUps = new FollowUpClient(h.client, { taskQueue });
  const scenario = (name: string) => {
    const ref = uniqueJob(name);
    return { ref, input: { ...ref, prompt: `Metrics test: ${name}`, polling: FAST_POLLING } satisfies FollowUpInput };
  };
  const completed = scenario('completed');
  h.simulator.addJob(completed.ref);
  const failed = scenario('failed');
  h.simulator.addJob({ ...failed.ref, outcome: 'failed' });
  // Two 503s on the read before the send; its third attempt succeeds.
  const recovered = scenario('recovered');
  h.simulator.addJob({ ...recovered.ref, faults: [{ operation: 'get', kind: 'status', status: 503, times: 2 }] });
  const badRequest = scenario('bad-request');
  h.simulator.addJob({ ...badRequest.ref, faults: [{ operation: 'send', kind: 'status', status: 400 }] });
  const notFound = scenario('not-found'); // never added: the read before the send gets a 404
  const scenarios = [completed, failed, recovered, badRequest, notFound];

  let endings: Array<{ workflowId: string; ending: string }>;
  let samples: Sample[];
  try {
    endings = await Promise.race([
      Promise.all(
        scenarios.map(async ({ input }) => {
          const { workflowId } = await followUps.start(input);
          const ending = await followUps.result(workflowId).then(
            (result) => result.outcome as string,
            (error: unknown) => failureTypeOf(error) ?? `unexpected: ${String(error)}`,
          );
          return { workflowId, ending };
        }),
      ),
      workerDied,
    ]);
    // Workflow metrics are recorded as the final workflow task runs; the client may see the result a moment earlier.
    await waitFor(
      async () => valueOf(await scrape(), 'agent_followup_finished_total') === scenarios.length,
      'all five finished follow-ups on /metrics',
    );
    samples = await scrape();
  } finally {
    worker.child.kill('SIGTERM');
  }
  const exit = await worker.exited;

  expect(endings.map((each) => each.ending)).toEqual([
    'completed',
    'failed',
    'completed',
    'AgentApiBadRequest',
    'AgentJobNotFound',
  ]);
  const ours = { taskQueue, namespace: 'default' };

  // Temporal's runtime metrics, with Core's names and labels.
  expect(valueOf(samples, 'temporal_worker_start', { task_queue: taskQueue })).toBe(1);
  expect(
    valueOf(samples, 'temporal_workflow_completed', { task_queue: taskQueue, workflow_type: 'followUpWorkflow' }),
  ).toBe(3);
  expect(
    valueOf(samples, 'temporal_workflow_failed', { task_queue: taskQueue, workflow_type: 'followUpWorkflow' }),
  ).toBe(2);
  expect(
    // Sends run on the deployment's own task queue, under slots of the project's coordinator.
    valueOf(samples, 'temporal_activity_execution_latency_count', {
      task_queue: taskQueue,
      activity_type: 'sendFollowUpMessage',
    }),
  ).toBeGreaterThan(0);

  // The follow-ups' own metrics, from workflow code.
  expect(valueOf(samples, 'agent_followup_started_total', { ...ours, workflowType: 'followUpWorkflow' })).toBe(5);
  expect(
    Object.fromEntries(
      ['completed', 'failed', 'archived', 'rejected', 'timed-out', 'cancelled', 'error'].map((outcome) => [
        outcome,
        valueOf(samples, 'agent_followup_finished_total', { ...ours, outcome }),
      ]),
    ),
    // The same words as the AgentFollowUpOutcome search attribute and the CLI: a 400 and a 404 are `rejected`.
  ).toEqual({ completed: 2, failed: 1, archived: 0, rejected: 2, 'timed-out': 0, cancelled: 0, error: 0 });
  // Every read that returned a job is counted once, by the status it saw: as many as the successful get-job requests,
  // on each queue (the reads before the send on the follow-ups', a watcher's on the watchers').
  const polls = (status: string) =>
    [taskQueue, watcherTaskQueue(taskQueue)].reduce(
      (sum, queue) => sum + valueOf(samples, 'agent_followup_polls_total', { ...ours, taskQueue: queue, status }),
      0,
    );
  for (const queue of [taskQueue, watcherTaskQueue(taskQueue)]) {
    const pollsByStatus = ['active', 'completed', 'failed', 'archived', 'other'].map((status) =>
      valueOf(samples, 'agent_followup_polls_total', { ...ours, taskQueue: queue, status }),
    );
    expect(pollsByStatus.reduce((sum, value) => sum + value, 0)).toBe(
      valueOf(samples, 'agent_followup_api_requests_total', {
        ...ours,
        taskQueue: queue,
        operation: 'get_job',
        outcome: 'ok',
      }),
    );
  }
  expect(polls('completed')).toBeGreaterThanOrEqual(2);
  expect(polls('failed')).toBeGreaterThanOrEqual(1);
  expect(valueOf(samples, 'agent_followup_time_to_terminal_seconds_count', { ...ours, outcome: 'completed' })).toBe(2);
  expect(valueOf(samples, 'agent_followup_time_to_terminal_seconds_count', { ...ours, outcome: 'failed' })).toBe(1);
  expect(
    valueOf(samples, 'agent_followup_time_to_terminal_seconds_sum', { ...ours, outcome: 'completed' }),
  ).toBeGreaterThan(0);
  // Our bucket override (seconds, from 5s to a day) is in place, not Core's millisecond defaults.
  const buckets = samples.filter(
    (s) => s.name === 'agent_followup_time_to_terminal_seconds_bucket' && s.labels.outcome === 'completed',
  );
  expect(buckets.map((s) => s.labels.le)).toEqual([
    '5',
    '15',
    '30',
    '60',
    '120',
    '300',
    '600',
    '1200',
    '1800',
    '3600',
    '7200',
    '14400',
    '43200',
    '86400',
    '+Inf',
  ]);

  // The agent API calls, from the activities: every attempt is one request.
  const gets = [completed, failed, recovered, badRequest].reduce(
    (sum, each) => sum + h.simulator.counts(each.ref.projectId, each.ref.jobId).gets,
    0,
  );
  const api = (name: string, labels: Record<string, string>) => valueOf(samples, name, { ...ours, ...labels });
  expect({
    sendOk: api('agent_followup_api_requests_total', {
      operation: 'send',
      outcome: 'ok',
      activityType: 'sendFollowUpMessage',
    }),
    sendError: api('agent_followup_api_requests_total', { operation: 'send', outcome: 'error' }),
    getError: api('agent_followup_api_requests_total', { operation: 'get_job', outcome: 'error' }),
    // The simulator counts every read of a known job, the two 503s included; the 404 was for an unknown job. The reads
    // before the send are on the follow-ups' queue, a watcher's on the watchers'.
    getOk: [taskQueue, watcherTaskQueue(taskQueue)].reduce(
      (sum, queue) =>
        sum +
        valueOf(samples, 'agent_followup_api_requests_total', {
          ...ours,
          taskQueue: queue,
          operation: 'get_job',
          outcome: 'ok',
        }),
      0,
    ),
    badRequest: api('agent_followup_api_errors_total', { operation: 'send', type: 'AgentApiBadRequest' }),
    serverError: api('agent_followup_api_errors_total', { operation: 'get_job', type: 'AgentApiServerError' }),
    notFound: api('agent_followup_api_errors_total', { operation: 'get_job', type: 'AgentJobNotFound' }),
    otherErrors: valueOf(samples, 'agent_followup_api_errors_total') - 5,
  }).toEqual({
    sendOk: 3,
    sendError: 1,
    // The unknown job is read twice: with the check-in that gave it (a failure there decides nothing) and before the
    // send, where the 404 ends the follow-up.
    getError: 4,
    getOk: gets - 2,
    badRequest: 1,
    serverError: 2,
    notFound: 2,
    otherErrors: 0,
  });

  // Logs: every line is one JSON object, and none holds the key.
  expect(exit.code).toBe(0);
  const lines = exit.output.split('\n').filter((line) => line !== '');
  const records = lines.map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new Error(`not a JSON line: ${line}`);
    }
  });
  for (const record of records) {
    expect(
      typeof record.time === 'string' && typeof record.level === 'string' && typeof record.message === 'string',
    ).toBe(true);
  }
  expect(exit.output).not.toContain(TEST_API_KEY);
  expect(exit.output).not.toContain(SECRET);
  // The simulator did echo the key into error messages that reached the log: they are there, redacted (by the API
  // client first; the logger's own redaction, tested in test/unit/logging.test.ts, is the second line of defence).
  expect(records.some((record) => JSON.stringify(record).includes('Bearer [REDACTED]'))).toBe(true);

  const idOf = (each: (typeof scenarios)[number]) => endings[scenarios.indexOf(each)]?.workflowId;
  // A workflow line: the follow-up's own log, with the SDK's workflow metadata.
  expect(
    records.find(
      (record) => record.message === 'Agent job reached a terminal status' && record.workflowId === idOf(completed),
    ),
  ).toMatchObject({
    level: 'INFO',
    sdkComponent: 'workflow',
    workflowType: 'followUpWorkflow',
    taskQueue,
    projectId: completed.ref.projectId,
    jobId: completed.ref.jobId,
    status: 'completed',
  });
  // An activity line: a read the poll activity rides out, with the project and job our interceptor adds.
  expect(
    records.find(
      (record) =>
        String(record.message).startsWith('Reading the agent job failed') && record.workflowId === idOf(recovered),
    ),
  ).toMatchObject({
    level: 'WARN',
    activityType: 'pollAgentJob',
    taskQueue,
    projectId: recovered.ref.projectId,
    jobId: recovered.ref.jobId,
  });
  expect(
    records.find((record) => record.message === 'Activity failed' && record.workflowId === idOf(badRequest)),
  ).toMatchObject({
    activityType: 'sendFollowUpMessage',
    projectId: badRequest.ref.projectId,
    jobId: badRequest.ref.jobId,
  });
  // The start-up line says where metrics are served.
  expect(records.find((record) => String(record.message).includes('worker polling task queue'))).toMatchObject({
    level: 'INFO',
    taskQueue,
    metricsAddress: `127.0.0.1:${port}`,
  });
}, 180_000);

test('a metrics address already in use stops the worker with exit code 1 and a message naming the variable', async () => {
  const port = await freePort();
  const taskQueue = h.taskQueue();
  const first = startBuiltScript('worker.js', [], {
    ...h.workerEnv(),
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
    WORKER_METRICS_ADDRESS: `127.0.0.1:${port}`,
  });
  try {
    await waitFor(() => first.output().includes('worker polling task queue'), 'the first worker to start');
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
    const second = startBuiltScript('worker.js', [], {
      AGENT_API_KEY: TEST_API_KEY,
      AGENT_API_BASE_URL: h.simulator.baseUrl,
      AGENT_API_ALLOW_LOOPBACK: 'true',
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
      TEMPORAL_TASK_QUEUE: h.taskQueue(),
      WORKER_METRICS_ADDRESS: `127.0.0.1:${port}`,
      LOG_FORMAT: 'json',
    });
    const exit = await second.exited;
    expect(exit.code).toBe(1);
    const record = JSON.parse(exit.stderr.trim().split('\n').at(-1) ?? '') as Record<string, unknown>;
    expect(record).toMatchObject({ level: 'ERROR' });
    expect(record.message).toContain(`WORKER_METRICS_ADDRESS=127.0.0.1:${port}`);
    expect(exit.output).not.toContain(TEST_API_KEY);
  } finally {
    first.child.kill('SIGTERM');
  }
  expect((await first.exited).code).toBe(0);
});
