/**
 * Part of `npm run build`: bundles the workflow code once, as Temporal's production sample does, so a worker starts
 * without webpack and every worker of a release runs byte-identical workflow code (dist/workflow-bundle.js).
 */
import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PREBUILT_BUNDLE_PATH } from '../../src/worker/follow-up-worker';

async function main(): Promise<void> {
  const quiet = { info() {}, debug() {}, trace() {}, log() {}, warn: console.warn, error: console.error };
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../../src/workflows'), logger: quiet });
  writeFileSync(PREBUILT_BUNDLE_PATH, code);
  console.log(`workflow bundle: ${PREBUILT_BUNDLE_PATH} (${Math.round(code.length / 1024)} KiB)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
