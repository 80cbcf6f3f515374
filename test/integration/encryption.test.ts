/**
 * Encrypted prompts end to end: a real worker process and the real CLI, both with AGENT_PAYLOAD_KEYS, send follow-ups
 * whose prompt is customer text; the server holds none of it in clear (histories, memo, search attributes, the Web
 * UI's summary and details), nor do the worker's logs at TRACE. The codec server, started by the CLI, gives it back
 * to those with its token: over HTTP as the Web UI asks, and to the Temporal CLI's `workflow show --codec-endpoint`.
 * A vendor error that quotes the prompt is encrypted with the payloads; the codec server bounds what one request may
 * carry and, without a token, answers only requests addressed to this machine by a loopback name.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { temporal } from '@temporalio/proto';
import { FollowUpClient } from '../../src/client';
import { AesGcmPayloadCodec, parsePayloadKeys } from '../../src/encryption';
import { findTemporalCli } from '../../src/temporal-cli';
import { withPayloadsDecoded } from '../support/payload-text';
import { startBuiltScript, type StartedScript } from '../support/processes';
import { createHarness, FAST_POLLING, uniqueJob, waitFor, type Harness } from '../support/harness';

const MARKER = 'Zebra7731 customer Jane Roe';
const KEYS = `k2:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('base64')}`;
const TOKEN = `codec-token-${randomBytes(8).toString('hex')}`;
const WEB_ORIGIN = 'http://localhost:8233';
/** A follow-up whose send the API rejects: started, checked in, one send failed, the workflow failed (19 measured). */
const EVENTS_OF_A_REJECTED_SEND = 24;

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ defaultWorkMs: 300 });
});
afterAll(async () => {
  await h.close();
});

async function rawDescription(workflowId: string): Promise<string> {
  const response = await h.client.workflowService.describeWorkflowExecution({
    namespace: 'default',
    execution: { workflowId },
  });
  const message = temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse.toObject(
    temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse.create(response),
    { bytes: String, longs: String, enums: String },
  );
  return withPayloadsDecoded(JSON.stringify(message));
}

async function waitForLine(process: StartedScript, pattern: RegExp): Promise<RegExpMatchArray> {
  let match: RegExpMatchArray | null = null;
  await waitFor(() => (match = pattern.exec(process.output())) !== null, `${pattern} in:\n${process.output()}`);
  return match as unknown as RegExpMatchArray;
}

test('with AGENT_PAYLOAD_KEYS the prompt is in no history, description or log, and the codec server shows it', async () => {
  const taskQueue = h.taskQueue();
  const temporalEnv = { TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '', TEMPORAL_TASK_QUEUE: taskQueue };
  const worker = startBuiltScript('worker.js', [], {
    ...h.workerEnv(),
    ...temporalEnv,
    AGENT_API_KEY: 'mint_test_not_a_real_key_0001',
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    AGENT_PAYLOAD_KEYS: KEYS,
    WORKER_SHUTDOWN_GRACE_TIME: '2s',
    AGENT_API_REQUEST_TIMEOUT: '2s',
    LOG_LEVEL: 'TRACE',
  });
  let codecServer: StartedScript | undefined;
  try {
    await waitForLine(worker, /agent-followup worker polling task queue/);
    // The CLI as a person runs it: keys and server from the environment.
    const viaCli = uniqueJob('cli');
    h.simulator.addJob(viaCli);
    const send = startBuiltScript(
      'cli.js',
      [
        'send',
        '--project',
        viaCli.projectId,
        '--job',
        viaCli.jobId,
        '--prompt',
        `${MARKER} (cli)`,
        '--initial-interval',
        '100ms',
        '--max-interval',
        '400ms',
        '--settle-window',
        '2s',
        '--wait',
        '--json',
      ],
      { ...temporalEnv, ...h.workerEnv(), AGENT_PAYLOAD_KEYS: KEYS },
    );
    // The library: a client given the same codec.
    const codec = new AesGcmPayloadCodec(parsePayloadKeys(KEYS));
    const followUps = new FollowUpClient(
      new Client({ connection: h.client.connection, dataConverter: { payloadCodecs: [codec] } }),
      { taskQueue, coordinatorTaskQueue: h.coordinatorTaskQueue },
    );
    const viaLibrary = uniqueJob('library');
    h.simulator.addJob(viaLibrary);
    const { workflowId } = await followUps.start({
      ...viaLibrary,
      prompt: `${MARKER} (library)`,
      polling: FAST_POLLING,
    });
    const result = await followUps.result(workflowId);
    expect(result.prLink).toMatch(/^https:\/\/github.com\/.*\/pull\//);
    const sent = await send.exited;
    expect({ code: sent.code, stderr: sent.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    const cliWorkflowId = (JSON.parse(sent.stdout.trim().split('\n').pop() ?? '{}') as { workflowId?: string })
      .workflowId;
    expect(cliWorkflowId).toEqual(expect.any(String));
    // The CLI without the keys: told what it cannot read and how to, not the SDK's "Unknown encoding".
    const keyless = await startBuiltScript('cli.js', ['status', cliWorkflowId as string], {
      ...temporalEnv,
      ...h.workerEnv(),
      AGENT_PAYLOAD_KEYS: '',
    }).exited;
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain("this follow-up's payloads are encrypted with key 'k2'");
    expect(keyless.stderr).not.toContain('Unknown encoding');
    // The agent got the prompts in clear: encryption is between us and Temporal only.
    expect(h.simulator.counts(viaCli.projectId, viaCli.jobId).prompts).toEqual([`${MARKER} (cli)`]);

    for (const id of [workflowId, cliWorkflowId as string]) {
      const history = withPayloadsDecoded(historyToJSON(await h.client.workflow.getHandle(id).fetchHistory()));
      const description = await rawDescription(id);
      // Positive control: the history is read whole (the input is there, encrypted under the first key).
      const metadata = (text: string) => Buffer.from(text).toString('base64');
      expect(history).toContain(metadata('binary/encrypted'));
      expect(history).toContain(metadata('k2'));
      expect({ id, history: history.includes('Zebra7731'), description: description.includes('Zebra7731') }).toEqual({
        id,
        history: false,
        description: false,
      });
      // What the Web UI and status read stays readable through the codec.
      expect((await followUps.progress(id)).lastStatus).toBe('completed');
    }
    const coordinators: string[] = [];
    for await (const each of h.client.workflow.list({ query: `TaskQueue = '${h.coordinatorTaskQueue}'` })) {
      coordinators.push(each.workflowId);
    }
    expect(coordinators.length).toBeGreaterThan(0);
    for (const coordinator of coordinators) {
      const history = withPayloadsDecoded(historyToJSON(await h.client.workflow.getHandle(coordinator).fetchHistory()));
      expect(history.includes('Zebra7731')).toBe(false);
    }

    // The codec server, as `agent-followup codec-server` runs it.
    codecServer = startBuiltScript('cli.js', ['codec-server', '--port', '0', '--web-origin', WEB_ORIGIN], {
      AGENT_PAYLOAD_KEYS: KEYS,
      AGENT_CODEC_SERVER_TOKEN: TOKEN,
    });
    const [, url] = await waitForLine(codecServer, /Codec server on (http:\/\/[^ ]+) /);
    const rawHistory = await h.client.workflow.getHandle(workflowId).fetchHistory();
    const input = rawHistory.events?.[0]?.workflowExecutionStartedEventAttributes?.input;
    const body = JSON.stringify(
      temporal.api.common.v1.Payloads.toObject(temporal.api.common.v1.Payloads.create(input ?? {}), { bytes: String }),
    );
    const decode = (headers: Record<string, string>) =>
      fetch(`${url}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', Origin: WEB_ORIGIN, ...headers },
        body,
      });
    const refused = await decode({});
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain('Zebra7731');
    const answered = await decode({ Authorization: `Bearer ${TOKEN}` });
    expect(answered.status).toBe(200);
    expect(answered.headers.get('access-control-allow-origin')).toBe(WEB_ORIGIN);
    expect(withPayloadsDecoded(await answered.text())).toContain(`${MARKER} (library)`);
    const preflight = await fetch(`${url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: WEB_ORIGIN,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace,authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const foreign = await fetch(`${url}/decode`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);

    // The Temporal CLI through the codec server shows the prompt; without it, only ciphertext.
    const cli = findTemporalCli();
    if (!cli) throw new Error('this test needs the Temporal CLI (TEMPORAL_CLI_PATH)');
    const show = (extra: string[]) =>
      promisify(execFile)(cli, [
        'workflow',
        'show',
        '--address',
        process.env.TEST_TEMPORAL_ADDRESS ?? '',
        '--workflow-id',
        workflowId,
        '--output',
        'json',
        ...extra,
      ]);
    expect((await show([])).stdout).not.toContain('Zebra7731');
    const shown = await show(['--codec-endpoint', url as string, '--codec-auth', `Bearer ${TOKEN}`]);
    expect(withPayloadsDecoded(shown.stdout)).toContain(`${MARKER} (library)`);
  } finally {
    codecServer?.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
  }
  const [workerExit, codecExit] = await Promise.all([worker.exited, codecServer?.exited]);
  expect(workerExit.code).toBe(0);
  expect(workerExit.output).toContain('"payloadKeyId":"k2"');
  expect(workerExit.output).not.toContain('Zebra7731');
  for (const secret of KEYS.split(',').map((entry) => entry.slice(3))) {
    expect(workerExit.output).not.toContain(secret);
    expect(codecExit?.output ?? '').not.toContain(secret);
  }
  expect(codecExit?.code).toBe(0);
}, 180_000);

/** A POST over loopback with headers fetch would not let a test set (Host), as a rebinding page's browser sends them. */
function rawPost(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const sent = httpRequest(
      { hostname, port, path, method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

/** The peak resident memory of a process so far, in MB (Linux's VmHWM). */
function peakRssMb(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmHWM for process ${pid}`);
  return Number(match[1]) / 1024;
}

test('a vendor error that quotes the prompt leaves no byte of it readable in the history without the key', async () => {
  const taskQueue = h.taskQueue();
  const worker = startBuiltScript('worker.js', [], {
    ...h.workerEnv(),
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_TASK_QUEUE: taskQueue,
    AGENT_API_KEY: 'mint_test_not_a_real_key_0001',
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    AGENT_PAYLOAD_KEYS: KEYS,
    WORKER_SHUTDOWN_GRACE_TIME: '2s',
    AGENT_API_REQUEST_TIMEOUT: '2s',
    LOG_LEVEL: 'INFO',
  });
  let codecServer: StartedScript | undefined;
  try {
    await waitForLine(worker, /agent-followup worker polling task queue/).catch((e) => {
      throw new Error(`${String(e)}\n${worker.output()}`);
    });
    const job = uniqueJob('echo');
    h.simulator.addJob(job);
    const prompt = `${MARKER} (echo)`;
    // The API quotes the start of the prompt: no exact echo to cut out, so only encoding the message keeps it secret.
    h.simulator.injectFaults(job.projectId, job.jobId, [
      { operation: 'send', status: 400, body: JSON.stringify({ error: `invalid prompt: '${prompt.slice(0, 22)}…'` }) },
    ]);
    const followUps = new FollowUpClient(
      new Client({
        connection: h.client.connection,
        dataConverter: { payloadCodecs: [new AesGcmPayloadCodec(parsePayloadKeys(KEYS))] },
      }),
      { taskQueue, coordinatorTaskQueue: h.coordinatorTaskQueue },
    );
    const { workflowId } = await followUps.start({ ...job, prompt, polling: FAST_POLLING });
    // With the key the reason reads in full.
    const outcome = await followUps.outcome(workflowId);
    expect(outcome).toMatchObject({ kind: 'rejected', type: 'AgentApiBadRequest' });
    expect('message' in outcome ? outcome.message : '').toContain(`invalid prompt: '${prompt.slice(0, 22)}`);
    // Without it, nothing: the raw history, every payload's bytes decoded too, and the description.
    const raw = await h.client.workflow.getHandle(workflowId).fetchHistory();
    const history = withPayloadsDecoded(historyToJSON(raw));
    expect(history).toContain(Buffer.from('binary/encrypted').toString('base64'));
    expect({
      history: history.includes('Zebra7731'),
      description: (await rawDescription(workflowId)).includes('Zebra7731'),
    }).toEqual({
      history: false,
      description: false,
    });
    // The id says nothing of the prompt either (keyed digest), and the run stays small.
    expect(workflowId).toBe(followUps.defaultWorkflowId({ ...job, prompt }));
    console.log(`a rejected send's history: ${raw.events?.length} events`);
    expect(raw.events?.length).toBeLessThanOrEqual(EVENTS_OF_A_REJECTED_SEND);
    // The Temporal CLI through the codec server reads the failure's message back.
    codecServer = startBuiltScript('cli.js', ['codec-server', '--port', '0'], { AGENT_PAYLOAD_KEYS: KEYS });
    const [, url] = await waitForLine(codecServer, /Codec server on (http:\/\/[^ ]+) /);
    const cli = findTemporalCli();
    if (!cli) throw new Error('this test needs the Temporal CLI (TEMPORAL_CLI_PATH)');
    const shown = await promisify(execFile)(cli, [
      'workflow',
      'show',
      '--address',
      process.env.TEST_TEMPORAL_ADDRESS ?? '',
      '--workflow-id',
      workflowId,
      '--output',
      'json',
      '--codec-endpoint',
      url as string,
    ]);
    expect(withPayloadsDecoded(shown.stdout)).toContain(`invalid prompt: '${prompt.slice(0, 22)}`);
  } finally {
    codecServer?.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
  }
  // The worker's own log still shows the API's reason in full (docs/ENCRYPTION.md says so): it is the operator's.
  const [workerExit, codecExit] = await Promise.all([worker.exited, codecServer?.exited]);
  expect({ worker: workerExit.code, codec: codecExit?.code }).toEqual({ worker: 0, codec: 0 });
}, 120_000);

test('the codec server refuses 3,000,000 payloads in one request with 413 and stays small, and other hosts and origins', async () => {
  const server = startBuiltScript('cli.js', ['codec-server', '--port', '0', '--web-origin', WEB_ORIGIN], {
    AGENT_PAYLOAD_KEYS: KEYS,
  });
  try {
    const [, url] = (await waitForLine(server, /Codec server on (http:\/\/[^ ]+) /)) as unknown as [string, string];
    const { port } = new URL(url);
    const pid = server.child.pid as number;
    const before = peakRssMb(pid);
    const flood = `{"payloads":[${Array.from({ length: 3_000_000 }, () => '{}').join(',')}]}`;
    const refused = await rawPost(url, '/decode', { Host: `127.0.0.1:${port}` }, flood);
    const after = peakRssMb(pid);
    console.log(
      `codec server: ${(flood.length / 1e6).toFixed(1)} MB of 3,000,000 payloads refused (${refused.status}); ` +
        `peak RSS ${before.toFixed(0)} MB before, ${after.toFixed(0)} MB after`,
    );
    expect({ status: refused.status, text: refused.text }).toEqual({
      status: 413,
      text: 'a request may carry at most 10000 payloads: send them in several requests',
    });
    // Main parsed them all: 1.5 GB.
    expect(after).toBeLessThan(before + 100);

    // What the Web UI sends still works: addressed to 127.0.0.1 or localhost, from the named origin.
    const payload = JSON.stringify(
      temporal.api.common.v1.Payloads.toObject(
        temporal.api.common.v1.Payloads.create({
          payloads: await new AesGcmPayloadCodec(parsePayloadKeys(KEYS)).encode([
            { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(`"${MARKER}"`) },
          ]),
        }),
        { bytes: String },
      ),
    );
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const answered = await rawPost(url, '/decode', { Host: host, Origin: WEB_ORIGIN }, payload);
      expect({ host, status: answered.status }).toEqual({ host, status: 200 });
      expect(withPayloadsDecoded(answered.text)).toContain(MARKER);
    }
    // A page whose name was rebound to 127.0.0.1 sends its own name as Host, and its own origin: both refused.
    const rebound = await rawPost(
      url,
      '/decode',
      { Host: `evil.example:${port}`, Origin: 'http://evil.example' },
      payload,
    );
    expect(rebound.status).toBe(421);
    expect(rebound.text).toContain(`127.0.0.1:${port}`);
    expect(rebound.text).not.toContain('Zebra7731');
    const foreignOrigin = await rawPost(
      url,
      '/encode',
      { Host: `127.0.0.1:${port}`, Origin: 'http://evil.example' },
      payload,
    );
    expect(foreignOrigin.status).toBe(403);
    const otherPort = await rawPost(url, '/decode', { Host: `127.0.0.1:${Number(port) + 1}` }, payload);
    expect(otherPort.status).toBe(421);
  } finally {
    server.child.kill('SIGTERM');
  }
  expect((await server.exited).code).toBe(0);
}, 120_000);

test('without a key, an API error that echoes the whole prompt still leaves it out of the history', async () => {
  const job = uniqueJob('echo-clear');
  h.simulator.addJob(job);
  const prompt = `${MARKER} (clear echo)`;
  h.simulator.injectFaults(job.projectId, job.jobId, [
    { operation: 'send', status: 400, body: JSON.stringify({ error: `invalid prompt: ${JSON.stringify(prompt)}` }) },
  ]);
  const taskQueue = h.taskQueue();
  const worker = await h.worker(taskQueue);
  const followUps = h.followUps(taskQueue);
  const { workflowId } = await followUps.start({ ...job, prompt, polling: FAST_POLLING });
  const outcome = await worker.runUntil(followUps.outcome(workflowId));
  expect(outcome).toMatchObject({ kind: 'rejected', type: 'AgentApiBadRequest' });
  expect('message' in outcome ? outcome.message : '').toContain('The API said: invalid prompt: "[the prompt]"');
  const raw = await h.client.workflow.getHandle(workflowId).fetchHistory();
  // Without a key the prompt is in the input and summaries, in clear as ever; what matters is every failure message.
  const messages = [...historyToJSON(raw).matchAll(/"message":\s*("(?:[^"\\]|\\.)*")/g)].map(
    (match) => JSON.parse(match[1]!) as string,
  );
  expect(messages.filter((message) => message.includes('The API said'))).toHaveLength(2);
  expect(messages.filter((message) => message.includes('Zebra7731'))).toEqual([]);
  expect(raw.events?.length).toBeLessThanOrEqual(EVENTS_OF_A_REJECTED_SEND);
});
