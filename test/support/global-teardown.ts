import type { TestWorkflowEnvironment } from '@temporalio/testing';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __temporalTestEnv?: TestWorkflowEnvironment }).__temporalTestEnv?.teardown();
}
