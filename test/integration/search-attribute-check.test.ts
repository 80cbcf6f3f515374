/** The worker's start-up check against the real dev server: the test namespace has the attributes, a new one not. */
import { randomUUID } from 'node:crypto';
import { msToTs } from '@temporalio/common/lib/time';
import { Client, Connection } from '@temporalio/client';
import { ExitCode, runCli } from '../../src/cli';
import { CliErrorSchema, SetupReportSchema } from '../../src/command-line/json-output';
import { FollowUpClient } from '../../src/client';
import { AgentApiClient } from '../../src/agent-api/http-client';
import { createFollowUpWorker } from '../../src/worker/follow-up-worker';
import { NamespaceNotReadyError } from '../../src/client/namespace-errors';
import { checkSearchAttributes } from '../../src/client/namespace-setup';
import { startBuiltScript } from '../support/processes';
import { createHarness, TEST_API_KEY, waitFor, type Harness } from '../support/harness';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

test('the namespace the dev server registered them on passes', async () => {
  await expect(checkSearchAttributes(h.nativeConnection.operatorService, 'default')).resolves.toEqual({ ok: true });
});

test('a namespace without them fails, naming every missing attribute', async () => {
  const namespace = `bare-${randomUUID().slice(0, 8)}`;
  await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  await expect(checkSearchAttributes(h.nativeConnection.operatorService, namespace)).resolves.toEqual({
    ok: false,
    problems: [
      'AgentProjectId is not registered',
      'AgentJobId is not registered',
      'AgentJobStatus is not registered',
      'AgentPrLink is not registered',
      'AgentFollowUpOutcome is not registered',
    ],
  });
});

test('an embedded worker makes the same check: createFollowUpWorker refuses such a namespace with NamespaceNotReadyError and the fix', async () => {
  const namespace = `bare-${randomUUID().slice(0, 8)}`;
  await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const creating = createFollowUpWorker({
    connection: h.nativeConnection,
    namespace,
    taskQueue: `embedded-${namespace}`,
    api: new AgentApiClient({ baseUrl: h.simulator.baseUrl, apiKey: TEST_API_KEY, requestTimeoutMs: 5_000 }),
  });
  await expect(creating).rejects.toBeInstanceOf(NamespaceNotReadyError);
  await expect(creating).rejects.toThrow('npx agent-followup setup');
});

test('starting a follow-up on such a namespace throws NamespaceNotReadyError naming the fix; nothing is started', async () => {
  const namespace = `bare-${randomUUID().slice(0, 8)}`;
  await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const followUps = new FollowUpClient(new Client({ connection: h.client.connection, namespace }), {
    taskQueue: 'unused',
  });
  const starting = followUps.start({ projectId: 'p', jobId: 'j', prompt: 'x' });
  await expect(starting).rejects.toBeInstanceOf(NamespaceNotReadyError);
  await expect(starting).rejects.toThrow(`Namespace '${namespace}' lacks agent-followup's search attributes`);
});

test('the built worker refuses such a namespace with exit code 2 and the fix, before polling anything', async () => {
  const namespace = `bare-${randomUUID().slice(0, 8)}`;
  await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const exit = await startBuiltScript('worker.js', [], {
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    AGENT_API_ALLOW_LOOPBACK: 'true',
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_NAMESPACE: namespace,
  }).exited;
  expect(exit.code).toBe(2);
  expect(exit.stderr).toContain(`Namespace '${namespace}' lacks agent-followup's search attributes`);
  expect(exit.stderr).toContain('AgentJobStatus is not registered');
  expect(exit.stderr).toContain('npx agent-followup setup');
  expect(exit.stderr).not.toContain('polling task queue');
});

/** `agent-followup setup` run as the CLI runs it, against one namespace of the test server. */
async function setup(namespace: string, ...flags: string[]): Promise<{ code: number; out: string; err: string }> {
  const run = { out: '', err: '' };
  const code = await runCli(['setup', ...flags], {
    env: {},
    out: (text) => (run.out += text),
    err: (text) => (run.err += text),
    connect: async () =>
      new FollowUpClient(
        new Client({ connection: await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS }), namespace }),
        { taskQueue: 'unused' },
      ),
  });
  return { code, ...run };
}

test('`agent-followup setup` registers all five on a bare namespace; run again, it changes nothing', async () => {
  const namespace = `bare-${randomUUID().slice(0, 8)}`;
  await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const first = await setup(namespace);
  expect(first).toMatchObject({ code: ExitCode.Ok, err: '' });
  expect(first.out).toContain(
    `Namespace '${namespace}' is ready for agent-followup (registered AgentProjectId, AgentJobId, AgentJobStatus, AgentPrLink, AgentFollowUpOutcome)`,
  );
  await waitFor(
    async () => (await checkSearchAttributes(h.nativeConnection.operatorService, namespace)).ok === true,
    'the attributes to be listed',
  );
  const again = await setup(namespace);
  expect(again.code).toBe(ExitCode.Ok);
  expect(again.out).toContain(
    'already there: AgentProjectId, AgentJobId, AgentJobStatus, AgentPrLink, AgentFollowUpOutcome',
  );
  expect(again.out).not.toContain('registered');
  const json = await setup(namespace, '--json');
  expect(SetupReportSchema.parse(JSON.parse(json.out))).toEqual({
    namespace,
    added: [],
    present: ['AgentProjectId', 'AgentJobId', 'AgentJobStatus', 'AgentPrLink', 'AgentFollowUpOutcome'],
  });
});

test('`agent-followup setup` refuses an attribute registered with another type: exit 2, and how to fix it', async () => {
  const namespace = `mistyped-${randomUUID().slice(0, 8)}`;
  await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  // INDEXED_VALUE_TYPE_TEXT
  await h.nativeConnection.operatorService.addSearchAttributes({ namespace, searchAttributes: { AgentJobId: 1 } });
  await waitFor(async () => {
    const check = await checkSearchAttributes(h.nativeConnection.operatorService, namespace);
    return check.ok === false && check.problems.includes('AgentJobId is registered with another type than Keyword');
  }, 'the mistyped attribute to be listed');
  const run = await setup(namespace);
  expect(run.code).toBe(ExitCode.BadInput);
  expect(run.err).toContain(`namespace '${namespace}' has AgentJobId registered with another type than Keyword`);
  expect(run.err).toContain('temporal operator search-attribute remove');
  expect(CliErrorSchema.parse(JSON.parse((await setup(namespace, '--json')).out)).error).toMatchObject({
    type: 'NamespaceNotReady',
    exitCode: ExitCode.BadInput,
  });
});
