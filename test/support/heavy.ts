/**
 * Heavy integration tests (minutes of wall time, CPU hogs, hundreds of workflows): CI runs them on one Node version
 * only, and sets AGENT_FOLLOWUP_SKIP_HEAVY=1 on the others.
 */

/** Whether this run skips the heavy tests. */
export const skipHeavy = process.env.AGENT_FOLLOWUP_SKIP_HEAVY === '1';

/** `describe` for heavy tests: skipped when AGENT_FOLLOWUP_SKIP_HEAVY=1. */
export const describeHeavy: jest.Describe = skipHeavy ? describe.skip : describe;
