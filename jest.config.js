/** Unit tests are pure and fast; integration tests share one Temporal dev server and one workflow bundle per run. */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

/**
 * The heavy integration files: minutes each of CPU hogs, SIGKILLs, server restarts or hundreds of workflows, testing
 * Temporal's behaviour and ours rather than the Node version's. `npm test` runs everything; CI splits the integration
 * files between its two Node versions so each runs once: AGENT_FOLLOWUP_HEAVY=only (Node 20) runs these alone,
 * AGENT_FOLLOWUP_HEAVY=skip (Node 24, the image's) all the others. Unit tests run on both.
 */
const HEAVY = [
  'coordinator-overload',
  'coordinator-history-burst',
  'coordinator-durability',
  'coordinator-order',
  'shared-watch-durability',
  'send-budget',
  'chaos',
];
const heavy = process.env.AGENT_FOLLOWUP_HEAVY ?? 'include';
if (!['include', 'only', 'skip'].includes(heavy)) {
  throw new Error(`AGENT_FOLLOWUP_HEAVY must be include, only or skip (got '${heavy}')`);
}
const heavyPatterns = HEAVY.map((name) => `/test/integration/${name}\\.test\\.ts$`);

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
        heavy === 'only'
          ? HEAVY.map((name) => `<rootDir>/test/integration/${name}.test.ts`)
          : ['<rootDir>/test/integration/**/*.test.ts'],
      testPathIgnorePatterns: heavy === 'skip' ? heavyPatterns : [],
      transform: { '^.+\\.ts$': tsJest },
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
