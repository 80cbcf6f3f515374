/**
 * Bad input, refused on every surface that accepts it: the CLI (exit 2, no connection), the library client (nothing
 * started), the workflow itself when a start bypasses the client (non-retryable InvalidFollowUpInput, nothing sent)
 * and the worker's environment (exit 2, the key never printed). Every message names the field and says the fix.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { ExitCode, runCli, type CliIo } from '../../src/cli';
import { FollowUpClient, InvalidFollowUpInputError, type FollowUpInput } from '../../src/client';
import { FollowUpErrorType } from '../../src/kernel/types';
import { startBuiltScript } from '../support/processes';
import { createHarness, uniqueJob, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

type Row =
  | { surface: 'cli'; name: string; args: string[]; env?: Record<string, string>; fragment: string; exitCode: number }
  | {
      surface: 'client';
      name: string;
      input: unknown;
      maxPromptLength?: number;
      fragment: string;
      exitCode?: undefined;
    }
  | { surface: 'workflow'; name: string; input: unknown; fragment: string; exitCode?: undefined }
  | { surface: 'worker'; name: string; env: Record<string, string>; key: string; fragment: string; exitCode: number };

const valid = { projectId: 'proj-valid', jobId: 'job-valid', prompt: 'Add tests' };
const sendArgs = (overrides: { project?: string; job?: string; prompt?: string } = {}, ...extra: string[]) => [
  'send',
  '--project',
  overrides.project ?? valid.projectId,
  '--job',
  overrides.job ?? valid.jobId,
  '--prompt',
  overrides.prompt ?? valid.prompt,
  ...extra,
];

const ID_FIX = "may contain only letters, digits, '.', '_', ':' and '-', and must start with a letter or digit";
const MISSING_KEY_MARKER = 'no-key-was-given-at-all';
/** A well-formed key for worker rows whose problem lies elsewhere; it must not be printed either. */
const WELL_FORMED_KEY = 'mint_bad_input_worker_secret_77';

const rows: Row[] = [
  // The CLI: flags become input, checked before any connection.
  {
    surface: 'cli',
    name: 'empty prompt',
    args: sendArgs({ prompt: '' }),
    fragment: 'prompt must not be empty (the API needs at least 1 character)',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'white-space prompt',
    args: sendArgs({ prompt: ' \n\t ' }),
    fragment: 'prompt must contain more than white space',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'prompt over AGENT_FOLLOWUP_MAX_PROMPT_LENGTH',
    args: sendArgs({ prompt: 'x'.repeat(11) }),
    env: { AGENT_FOLLOWUP_MAX_PROMPT_LENGTH: '10' },
    fragment: 'prompt must be at most 10 characters',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'AGENT_FOLLOWUP_MAX_PROMPT_LENGTH that is not a number',
    args: sendArgs({}),
    env: { AGENT_FOLLOWUP_MAX_PROMPT_LENGTH: 'ten' },
    fragment: 'AGENT_FOLLOWUP_MAX_PROMPT_LENGTH must be a whole number of at least 1',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'missing --project',
    args: ['send', '--job', 'j', '--prompt', 'x'],
    fragment: 'missing --project (see --help)',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'empty --project',
    args: sendArgs({ project: '' }),
    fragment: 'projectId must not be empty',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: "job id with '/'",
    args: sendArgs({ job: 'a/b' }),
    fragment: `jobId ${ID_FIX}`,
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: "job id '..'",
    args: sendArgs({ job: '..' }),
    fragment: `jobId ${ID_FIX}`,
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'project id with spaces',
    args: sendArgs({ project: 'my project' }),
    fragment: `projectId ${ID_FIX}`,
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'unicode job id',
    args: sendArgs({ job: 'jöb-1' }),
    fragment: `jobId ${ID_FIX}`,
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'job id with a control character',
    args: sendArgs({ job: 'job\u0007' }),
    fragment: `jobId ${ID_FIX}`,
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'negative initial interval',
    args: sendArgs({}, '--initial-interval=-5s'),
    fragment: 'polling.initialInterval must be between 100ms and 1d (got "-5s")',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'zero initial interval',
    args: sendArgs({}, '--initial-interval', '0'),
    fragment: 'polling.initialInterval must be between 100ms and 1d (got 0)',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'a bare number meant as seconds',
    args: sendArgs({}, '--initial-interval', '5'),
    fragment:
      'polling.initialInterval must be between 100ms and 1d (got 5, a number of milliseconds: write "5s" for seconds)',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'unparsable timeout',
    args: sendArgs({}, '--timeout', 'forever'),
    fragment: 'polling.timeout is not a duration: "forever"; use a form such as "5s"',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'absurd timeout of 400d',
    args: sendArgs({}, '--timeout', '400d'),
    fragment: 'polling.timeout must be between 1s and 30d (got "400d")',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'max interval below initial interval',
    args: sendArgs({}, '--initial-interval', '5s', '--max-interval', '1s'),
    fragment: 'polling.maxInterval (1s) must not be below polling.initialInterval (5s)',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'backoff coefficient below 1',
    args: sendArgs({}, '--backoff-coefficient', '0.5'),
    fragment: 'polling.backoffCoefficient must be at least 1 (1 means a fixed interval)',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'backoff coefficient that is not a number',
    args: sendArgs({}, '--backoff-coefficient', 'fast'),
    fragment: "--backoff-coefficient must be a number (got 'fast')",
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'settle window over 1h',
    args: sendArgs({}, '--settle-window', '2h'),
    fragment: 'polling.settleWindow must be between 0s and 1h',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'unknown --on-ambiguous-send policy',
    args: sendArgs({}, '--on-ambiguous-send', 'maybe'),
    fragment: 'onAmbiguousSend must be one of reconcile, retry, fail',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'empty --workflow-id',
    args: sendArgs({}, '--workflow-id', ' '),
    fragment: '--workflow-id must not be empty',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: '--workflow-id over 1,000 characters',
    args: sendArgs({}, '--workflow-id', 'w'.repeat(2_000)),
    fragment: '--workflow-id is 2000 characters long; Temporal allows at most 1000',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: "cancel ''",
    args: ['cancel', ''],
    fragment: 'the workflow id must not be empty',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: "status ''",
    args: ['status', ' '],
    fragment: 'the workflow id must not be empty',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: "poll-now ''",
    args: ['poll-now', ''],
    fragment: 'the workflow id must not be empty',
    exitCode: ExitCode.BadInput,
  },
  {
    surface: 'cli',
    name: 'status of a 2,000-character id',
    args: ['status', 'x'.repeat(2_000)],
    fragment: 'the workflow id is 2000 characters long; Temporal allows at most 1000',
    exitCode: ExitCode.BadInput,
  },

  // The library client: nothing reaches Temporal.
  {
    surface: 'client',
    name: 'empty prompt',
    input: { ...valid, prompt: '' },
    fragment: 'prompt must not be empty (the API needs at least 1 character)',
  },
  {
    surface: 'client',
    name: 'white-space prompt',
    input: { ...valid, prompt: '\n \t' },
    fragment: 'prompt must contain more than white space',
  },
  {
    surface: 'client',
    name: 'prompt over maxPromptLength',
    input: { ...valid, prompt: 'y'.repeat(21) },
    maxPromptLength: 20,
    fragment: 'prompt must be at most 20 characters',
  },
  {
    surface: 'client',
    name: 'prompt that is a number',
    input: { ...valid, prompt: 7 },
    fragment: 'prompt must be a string',
  },
  {
    surface: 'client',
    name: 'missing projectId',
    input: { jobId: valid.jobId, prompt: valid.prompt },
    fragment: 'projectId is required',
  },
  {
    surface: 'client',
    name: 'missing jobId',
    input: { projectId: valid.projectId, prompt: valid.prompt },
    fragment: 'jobId is required',
  },
  { surface: 'client', name: 'empty jobId', input: { ...valid, jobId: '' }, fragment: 'jobId must not be empty' },
  {
    surface: 'client',
    name: 'number as projectId',
    input: { ...valid, projectId: 42 },
    fragment: 'projectId must be a string',
  },
  {
    surface: 'client',
    name: "job id with '/..' in it",
    input: { ...valid, jobId: 'a/../b' },
    fragment: `jobId ${ID_FIX}`,
  },
  {
    surface: 'client',
    name: 'project id with a newline',
    input: { ...valid, projectId: 'proj\nx' },
    fragment: `projectId ${ID_FIX}`,
  },
  {
    surface: 'client',
    name: 'string as backoffCoefficient',
    input: { ...valid, polling: { backoffCoefficient: '2' } },
    fragment: 'polling.backoffCoefficient must be a number',
  },
  {
    surface: 'client',
    name: 'negative timeout in ms',
    input: { ...valid, polling: { timeout: -5 } },
    fragment: 'polling.timeout must be between 1s and 30d (got -5)',
  },
  {
    surface: 'client',
    name: 'absurd timeout of 400d',
    input: { ...valid, polling: { timeout: '400d' } },
    fragment: 'polling.timeout must be between 1s and 30d (got "400d")',
  },
  {
    surface: 'client',
    name: 'unknown top-level field',
    input: { ...valid, apiKey: 'mint_should_not_be_here' },
    fragment: 'unknown field(s) "apiKey"; allowed: projectId, jobId, prompt, polling, onAmbiguousSend',
  },
  {
    surface: 'client',
    name: 'unknown polling field',
    input: { ...valid, polling: { interval: '5s' } },
    fragment:
      'polling: unknown field(s) "interval"; allowed: initialInterval, backoffCoefficient, maxInterval, timeout, settleWindow',
  },
  {
    surface: 'client',
    name: 'onAmbiguousSend in the wrong case',
    input: { ...valid, onAmbiguousSend: 'RETRY' },
    fragment: 'onAmbiguousSend must be one of reconcile, retry, fail',
  },
  {
    surface: 'client',
    name: 'input that is not an object',
    input: null,
    fragment: 'input must be a JSON object with projectId, jobId and prompt',
  },

  // The workflow, started directly so the client's check is bypassed.
  {
    surface: 'workflow',
    name: 'white-space prompt',
    input: { prompt: '   ' },
    fragment: 'prompt must contain more than white space',
  },
  { surface: 'workflow', name: "job id '..'", input: { jobId: '..' }, fragment: `jobId ${ID_FIX}` },
  { surface: 'workflow', name: 'unicode project id', input: { projectId: 'prój' }, fragment: `projectId ${ID_FIX}` },
  {
    surface: 'workflow',
    name: 'max interval below initial interval',
    input: { polling: { initialInterval: '10s', maxInterval: '1s' } },
    fragment: 'polling.maxInterval (1s) must not be below polling.initialInterval (10s)',
  },
  {
    surface: 'workflow',
    name: 'settle window over 1h',
    input: { polling: { settleWindow: '2h' } },
    fragment: 'polling.settleWindow must be between 0s and 1h',
  },
  {
    surface: 'workflow',
    name: 'unknown top-level field',
    input: { extra: true },
    fragment: 'unknown field(s) "extra"; allowed: projectId, jobId, prompt, polling, onAmbiguousSend',
  },

  // The worker's environment: refused at start-up, before it connects or prints the key.
  {
    surface: 'worker',
    name: 'API key with the wrong prefix',
    env: { AGENT_API_KEY: 'sk_live_bad_input_secret_value' },
    key: 'sk_live_bad_input_secret_value',
    fragment: 'AGENT_API_KEY does not start with "mint_": set it to the admin key',
    exitCode: 2,
  },
  {
    surface: 'worker',
    name: 'API key with a too short secret',
    env: { AGENT_API_KEY: 'mint_q7x2z' },
    key: 'mint_q7x2z',
    fragment: 'AGENT_API_KEY\'s secret part after "mint_" is too short (under 8 characters): set it to the admin key',
    exitCode: 2,
  },
  {
    surface: 'worker',
    name: 'missing API key',
    env: {},
    key: MISSING_KEY_MARKER,
    fragment: 'AGENT_API_KEY is not set: set it to the admin key',
    exitCode: 2,
  },
  {
    surface: 'worker',
    name: 'base URL that is not a URL',
    env: { AGENT_API_KEY: WELL_FORMED_KEY, AGENT_API_BASE_URL: 'api.mintlify.com without a scheme' },
    key: WELL_FORMED_KEY,
    fragment: 'AGENT_API_BASE_URL is not a URL: use a form such as https://',
    exitCode: 2,
  },
  {
    surface: 'worker',
    name: 'plain http to another host',
    env: { AGENT_API_KEY: WELL_FORMED_KEY, AGENT_API_BASE_URL: 'http://agent-api.example.com' },
    key: WELL_FORMED_KEY,
    fragment: 'use https://, or set AGENT_API_ALLOW_INSECURE_HTTP=true',
    exitCode: 2,
  },
  {
    surface: 'worker',
    name: 'unparsable request timeout',
    env: { AGENT_API_KEY: WELL_FORMED_KEY, AGENT_API_REQUEST_TIMEOUT: 'soon' },
    key: WELL_FORMED_KEY,
    fragment: 'AGENT_API_REQUEST_TIMEOUT must be a positive duration such as "15s"',
    exitCode: 2,
  },
  {
    surface: 'worker',
    name: 'request timeout above the activity timeout',
    env: { AGENT_API_KEY: WELL_FORMED_KEY, AGENT_API_REQUEST_TIMEOUT: '60s' },
    key: WELL_FORMED_KEY,
    fragment: 'AGENT_API_REQUEST_TIMEOUT must be at most 25s',
    exitCode: 2,
  },
];

test.each(rows)('$surface refuses $name with a message that names the field and the fix', async (row) => {
  switch (row.surface) {
    case 'cli':
      return expectCliRefuses(row);
    case 'client':
      return expectClientRefuses(row);
    case 'workflow':
      return expectWorkflowRefuses(row);
    case 'worker':
      return expectWorkerRefuses(row);
  }
});

async function expectCliRefuses(row: Extract<Row, { surface: 'cli' }>): Promise<void> {
  let out = '';
  let err = '';
  let connected = false;
  const io: CliIo = {
    env: row.env ?? {},
    out: (text) => (out += text),
    err: (text) => (err += text),
    connect: () => {
      connected = true;
      return Promise.reject(new Error('bad input must never reach Temporal'));
    },
  };
  const code = await runCli(row.args, io);
  expect({ code, connected }).toEqual({ code: row.exitCode, connected: false });
  expect(err).toContain(row.fragment);
  expect(out).toBe('');
}

async function expectClientRefuses(row: Extract<Row, { surface: 'client' }>): Promise<void> {
  const taskQueue = h.taskQueue();
  const followUps = new FollowUpClient(h.client, {
    taskQueue,
    ...(row.maxPromptLength !== undefined ? { maxPromptLength: row.maxPromptLength } : {}),
  });
  const error = await followUps.start(row.input as FollowUpInput).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidFollowUpInputError);
  expect((error as InvalidFollowUpInputError).message).toContain(row.fragment);
  const started: string[] = [];
  for await (const execution of h.client.workflow.list({ query: `TaskQueue = '${taskQueue}'` }))
    started.push(execution.workflowId);
  expect(started).toEqual([]);
}

async function expectWorkflowRefuses(row: Extract<Row, { surface: 'workflow' }>): Promise<void> {
  const ref = uniqueJob();
  const input = { ...ref, prompt: 'A valid prompt', ...(row.input as Record<string, unknown>) };
  const idsAreTheRowsOwn = input.projectId === ref.projectId && input.jobId === ref.jobId;
  if (idsAreTheRowsOwn) h.simulator.addJob(ref);
  const taskQueue = h.taskQueue();
  const workflowId = `bad-input-${randomUUID()}`;
  const worker = await h.worker(taskQueue);
  const error = await worker.runUntil(
    h.client.workflow.execute('followUpWorkflow', { taskQueue, workflowId, args: [input] }).then(
      () => undefined,
      (e: unknown) => e,
    ),
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  const failure = cause as ApplicationFailure;
  expect(failure.type).toBe(FollowUpErrorType.InvalidInput);
  expect(failure.nonRetryable).toBe(true);
  expect(failure.message).toContain(row.fragment);
  // No activity was ever scheduled, so no request of any kind reached the API.
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  expect((history.events ?? []).filter((event) => event.activityTaskScheduledEventAttributes)).toEqual([]);
  if (idsAreTheRowsOwn) {
    const counts = h.simulator.counts(ref.projectId, ref.jobId);
    expect({ accepted: counts.messagesAccepted, gets: counts.gets }).toEqual({ accepted: 0, gets: 0 });
  }
}

async function expectWorkerRefuses(row: Extract<Row, { surface: 'worker' }>): Promise<void> {
  const { child, exited } = startBuiltScript('worker.js', [], {
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: h.taskQueue(),
    ...row.env,
  });
  // A guard only: a worker that wrongly accepted its environment would otherwise run until jest gives up.
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const { code, stderr, output } = await exited;
  clearTimeout(guard);
  expect(code).toBe(row.exitCode);
  expect(stderr).toContain(row.fragment);
  expect(output).not.toContain(row.key);
}
