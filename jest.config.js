/** Unit tests are pure and fast; integration tests share one Temporal dev server and one workflow bundle per run. */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

/**
 * The heavy integration files: minutes each of CPU hogs, SIGKILLs, server restarts or hundreds of workflows, testing
 * Temporal's behaviour and ours rather than the Node version's. CI runs them once, on Node 20;
 * AGENT_FOLLOWUP_SKIP_HEAVY=1 leaves them out (the Node 24 run).
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
const skipHeavy = process.env.AGENT_FOLLOWUP_SKIP_HEAVY === '1';

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
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      testPathIgnorePatterns: skipHeavy ? HEAVY.map((name) => `/test/integration/${name}\\.test\\.ts$`) : [],
      transform: { '^.+\\.ts$': tsJest },
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
