/**
 * Starts one Temporal dev server (the official CLI's `temporal server start-dev`) and bundles the workflow code once
 * for the whole run. Test files reach both through environment variables.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ensureTemporalCli } from '../../scripts/stack/temporal-cli';
import { FOLLOW_UP_SEARCH_ATTRIBUTES } from '../../src/kernel/search-attributes';
import { TEST_SERVER_CONTINUE_AS_NEW_AFTER, TEST_SERVER_HISTORY_LIMIT } from './server-limits';

export default async function globalSetup(): Promise<void> {
  const cli = ensureTemporalCli((line) => console.log(`\n${line}`));
  if (!cli) {
    console.warn("\nNo Temporal CLI could be found or installed; falling back to the SDK's download of it.\n");
  }
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ...(cli ? { executable: { type: 'existing-path', path: cli } } : {}),
      extraArgs: [
        '--log-level',
        'error',
        // Low history limits, so every test also proves a follow-up's history stays bounded (harness.ts).
        '--dynamic-config-value',
        `limit.historyCount.error=${TEST_SERVER_HISTORY_LIMIT}`,
        '--dynamic-config-value',
        `limit.historyCount.warn=${TEST_SERVER_HISTORY_LIMIT - 100}`,
        '--dynamic-config-value',
        `limit.historyCount.suggestContinueAsNew=${TEST_SERVER_CONTINUE_AS_NEW_AFTER}`,
      ],
      searchAttributes: [...FOLLOW_UP_SEARCH_ATTRIBUTES],
    },
  });
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../src/workflows'),
    logger: { info() {}, warn: console.warn, error: console.error, debug() {}, trace() {}, log() {} },
  });
  const dir = mkdtempSync(join(tmpdir(), 'agent-followup-test-'));
  const bundlePath = join(dir, 'workflow-bundle.js');
  writeFileSync(bundlePath, code);

  process.env.TEST_TEMPORAL_ADDRESS = env.address;
  process.env.TEST_WORKFLOW_BUNDLE = bundlePath;
  (globalThis as { __temporalTestEnv?: TestWorkflowEnvironment }).__temporalTestEnv = env;
}
