/**
 * Finds the Temporal CLI used to run a local dev server (tests, demo). Temporal's download site is not reachable
 * everywhere, so we prefer a binary we already have: TEMPORAL_CLI_PATH, then `temporal` on PATH, then the cache that
 * scripts/install/install-temporal-cli.sh fills (built from the Go module proxy).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findTemporalCli, findTemporalTestServer } from '../../src/temporal-cli';

export { cachedCliPath, findTemporalCli, TEMPORAL_CLI_VERSION } from '../../src/temporal-cli';

/**
 * A usable `temporal` binary: one we already have, else one built by scripts/install/install-temporal-cli.sh (minutes,
 * once; then cached). Returns undefined only when that fails too, leaving the SDK's own download as the last resort.
 */
export function ensureTemporalCli(log: (line: string) => void = console.log): string | undefined {
  const found = findTemporalCli();
  if (found) return found;
  log(
    'No Temporal CLI found: installing it once with scripts/install/install-temporal-cli.sh (a few minutes, then cached)…',
  );
  return runInstaller('install-temporal-cli.sh');
}

/**
 * Temporal's time-skipping test server: one we already have, else the Java build that
 * scripts/install/install-temporal-test-server.sh fetches from Maven Central (once; then cached).
 */
export function ensureTemporalTestServer(log: (line: string) => void = console.log): string | undefined {
  const found = findTemporalTestServer();
  if (found) return found;
  log('No time-skipping test server found: installing it once with scripts/install/install-temporal-test-server.sh…');
  return runInstaller('install-temporal-test-server.sh');
}

/** Runs one of the repo's installers; the path it installed is the last line of its stdout. */
function runInstaller(script: string): string | undefined {
  const installer = spawnSync('bash', [installScriptPath(script)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const path = installer.stdout?.trim().split('\n').pop();
  return installer.status === 0 && path ? path : undefined;
}

/** One of the repo's install scripts, from scripts/stack (ts-jest) or dist/scripts/stack (compiled). */
function installScriptPath(script: string): string {
  const candidates = [resolve(__dirname, '../install'), resolve(__dirname, '../../../scripts/install')];
  const dir = candidates.find((candidate) => existsSync(join(candidate, script)));
  return join(dir ?? (candidates[0] as string), script);
}
