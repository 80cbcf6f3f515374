/** The worker's start-up check against the real dev server: the test namespace has the attributes, a new one not. */
import { randomUUID } from 'node:crypto';
import { msToTs } from '@temporalio/common/lib/time';
import { checkSearchAttributes } from '../../src/search-attribute-check';
import { startBuiltScript } from '../support/processes';
import { createHarness, TEST_API_KEY, type Harness } from '../support/harness';

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

test('the built worker refuses such a namespace with exit code 2 and the fix, before polling anything', async () => {
  const namespace = `bare-${randomUUID().slice(0, 8)}`;
  await h.client.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
  const exit = await startBuiltScript('worker.js', [], {
    AGENT_API_KEY: TEST_API_KEY,
    AGENT_API_BASE_URL: h.simulator.baseUrl,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS ?? '',
    TEMPORAL_NAMESPACE: namespace,
  }).exited;
  expect(exit.code).toBe(2);
  expect(exit.stderr).toContain(`Namespace '${namespace}' lacks agent-followup's search attributes`);
  expect(exit.stderr).toContain('AgentJobStatus is not registered');
  expect(exit.stderr).toContain('scripts/register-search-attributes.sh');
  expect(exit.stderr).not.toContain('polling task queue');
});
