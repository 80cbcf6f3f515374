/**
 * A first test on a machine without the Temporal CLI: startTestStack either gets one (the SDK downloads it, online) or
 * fails with one message that says what to install or set, never the SDK's bare download error.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestStack } from '../../src/testing';

const saved = { ...process.env };
let emptyCache: string;
beforeAll(() => {
  emptyCache = mkdtempSync(join(tmpdir(), 'agent-followup-no-cli-'));
  // No CLI anywhere startTestStack looks: not set, not on PATH, not in the cache.
  delete process.env.TEMPORAL_CLI_PATH;
  process.env.PATH = '/usr/bin:/bin';
  process.env.AGENT_FOLLOWUP_CACHE_DIR = emptyCache;
});
afterAll(() => {
  process.env = saved;
  rmSync(emptyCache, { recursive: true, force: true });
});

test('no Temporal CLI and no download: one error that says what to install or set', async () => {
  const outcome = await startTestStack().then(
    async (stack) => {
      await stack.close();
      return null;
    },
    (error: unknown) => error as Error,
  );
  // Online the SDK downloads a CLI and the stack starts; these machines have no internet, so it is the message.
  if (outcome === null) return;
  expect(outcome.message).toMatch(/^startTestStack needs the Temporal CLI/);
  expect(outcome.message).toContain('TEMPORAL_CLI_PATH');
  expect(outcome.message).toContain('go install github.com/temporalio/cli/cmd/temporal@');
}, 120_000);
