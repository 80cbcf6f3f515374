/**
 * Encrypted prompts end to end: a real worker process and the real CLI, both with AGENT_PAYLOAD_KEYS, send follow-ups
 * whose prompt is customer text; the server holds none of it in clear (histories, memo, search attributes, the Web
 * UI's summary and details), nor do the worker's logs at TRACE. The codec server, started by the CLI, gives it back
 * to those with its token: over HTTP as the Web UI asks, and to the Temporal CLI's `workflow show --codec-endpoint`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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
