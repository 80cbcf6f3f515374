/** Unit tests are pure and fast; integration tests share one Temporal dev server and one workflow bundle per run. */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];

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
      transform: { '^.+\\.ts$': tsJest },
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
