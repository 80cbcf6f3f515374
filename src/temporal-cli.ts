/**
 * Finds the Temporal CLI that runs a local dev server (this project's tests, demo and stack, and a user's tests through
 * `agent-followup/testing`). Temporal's download site is not reachable everywhere, so a binary already here comes
 * first: TEMPORAL_CLI_PATH, then `temporal` on PATH, then the cache scripts/install/install-temporal-cli.sh fills.
 */
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';

/** Where scripts/install/install-temporal-cli.sh puts the binary: outside the repo, reused across clones. */
export function cachedCliPath(env: Record<string, string | undefined> = process.env): string {
  return join(cacheRoot(env), `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/** The install scripts' cache, outside any clone: AGENT_FOLLOWUP_CACHE_DIR, else ~/.cache/agent-followup. */
function cacheRoot(env: Record<string, string | undefined>): string {
  return env.AGENT_FOLLOWUP_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agent-followup');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The path of a usable `temporal` binary, or undefined when there is none. */
export function findTemporalCli(env: Record<string, string | undefined> = process.env): string | undefined {
  if (env.TEMPORAL_CLI_PATH) {
    if (isExecutable(env.TEMPORAL_CLI_PATH)) return env.TEMPORAL_CLI_PATH;
    throw new Error(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not an executable file`);
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, 'temporal'))) return join(dir, 'temporal');
  }
  const cached = cachedCliPath(env);
  return isExecutable(cached) ? cached : undefined;
}

export const TEMPORAL_TEST_SERVER_VERSION = '1.38.0';

/** Where scripts/install/install-temporal-test-server.sh puts the time-skipping test server's launcher. */
export function cachedTestServerPath(env: Record<string, string | undefined> = process.env): string {
  return join(cacheRoot(env), `temporal-test-server-${TEMPORAL_TEST_SERVER_VERSION}`, 'temporal-test-server');
}

/**
 * The time-skipping test server to run: TEMPORAL_TEST_SERVER_PATH, else the cache the install script fills; undefined
 * leaves it to the SDK, which downloads its native build (that needs temporal.download).
 */
export function findTemporalTestServer(env: Record<string, string | undefined> = process.env): string | undefined {
  if (env.TEMPORAL_TEST_SERVER_PATH) {
    if (isExecutable(env.TEMPORAL_TEST_SERVER_PATH)) return env.TEMPORAL_TEST_SERVER_PATH;
    throw new Error(`TEMPORAL_TEST_SERVER_PATH=${env.TEMPORAL_TEST_SERVER_PATH} is not an executable file`);
  }
  const cached = cachedTestServerPath(env);
  return isExecutable(cached) ? cached : undefined;
}

/**
 * The SDK's download from temporal.download failed (a machine without that access): the error says how to get the
 * server otherwise, with the SDK's reason.
 */
export function testServerMissing(error: unknown): Error {
  return new Error(
    `Temporal's time-skipping test server is not installed here, and the SDK could not download it ` +
      `(${error instanceof Error ? error.message : String(error)}). Install the Java build from Maven Central ` +
      '(needs java 17+ and mvn) where startTestStack finds it: bash node_modules/agent-followup/scripts/install/' +
      'install-temporal-test-server.sh (or set TEMPORAL_TEST_SERVER_PATH to a test server launcher), or leave ' +
      'timeSkipping off to run on the dev server.',
    { cause: error },
  );
}
