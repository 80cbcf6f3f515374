/** Unit tests are pure and fast; integration tests share one Temporal dev server and one workflow bundle per run. */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

/**
 * The integration files that need the machine to themselves: CPU hogs on both cores, a thousand workflows at once on
 * the shared dev server (beside another file, a job of shared-watch-durability's thousand once had no PR yet when
 * its follow-up had ended), or the shared watcher's live figures, whose first answer counts reads a loaded machine
 * delays. `npm test` runs jest's default number of files at once (one at a time on two cores). CI splits the
 * integration files between its two Node versions so each runs once: AGENT_FOLLOWUP_ALONE=only (Node 20) runs these,
 * one at a time; AGENT_FOLLOWUP_ALONE=skip (Node 24, the image's) runs all the others two at a time (they mostly wait
 * on real time: the load stayed near 1.3 on two cores). Unit tests run on both.
 */
const ALONE = [
  'coordinator-overload',
  'coordinator-order',
  'coordinator-history-burst',
  'shared-watch-durability',
  'shared-watch',
];
const alone = process.env.AGENT_FOLLOWUP_ALONE ?? 'include';
if (!['include', 'only', 'skip'].includes(alone)) {
  throw new Error(`AGENT_FOLLOWUP_ALONE must be include, only or skip (got '${alone}')`);
}
const alonePatterns = ALONE.map((name) => `/test/integration/${name}\\.test\\.ts$`);

/** @type {import('jest').Config} */
module.exports = {
  // Integration tests start workers and wait for real (short) agent runs; unit tests finish far below this.
  testTimeout: 120_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      testMatch:
        alone === 'only'
          ? ALONE.map((name) => `<rootDir>/test/integration/${name}.test.ts`)
          : ['<rootDir>/test/integration/**/*.test.ts'],
      testPathIgnorePatterns: alone === 'skip' ? alonePatterns : [],
      transform: { '^.+\\.ts$': tsJest },
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
