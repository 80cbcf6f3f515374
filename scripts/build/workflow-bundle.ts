/**
 * Part of `npm run build`: bundles the workflow code once, as Temporal's production sample does, so a worker starts
 * without webpack and every worker of a release runs byte-identical workflow code (dist/workflow-bundle.js). Twice:
 * workers with a payload codec load the bundle whose failures carry their messages encoded (encryption/failure-converter.ts).
 */
import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../../src/encryption/payload-keys';
import { PREBUILT_BUNDLE_PATH, PREBUILT_ENCRYPTING_BUNDLE_PATH } from '../../src/worker/follow-up-worker';

async function main(): Promise<void> {
  const quiet = { info() {}, debug() {}, trace() {}, log() {}, warn: console.warn, error: console.error };
  const workflowsPath = require.resolve('../../src/workflows');
  for (const [path, failureConverterPath] of [
    [PREBUILT_BUNDLE_PATH, undefined],
    [PREBUILT_ENCRYPTING_BUNDLE_PATH, FAILURE_CONVERTER_PATH],
  ] as const) {
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      ...(failureConverterPath ? { failureConverterPath } : {}),
      logger: quiet,
    });
    writeFileSync(path, code);
    console.log(`workflow bundle: ${path} (${Math.round(code.length / 1024)} KiB)`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
