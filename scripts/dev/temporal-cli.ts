/**
 * Finds the Temporal CLI used to run a local dev server (tests, demo). Temporal's download site is not reachable
 * everywhere, so we prefer a binary we already have: TEMPORAL_CLI_PATH, then `temporal` on PATH, then the cache that
 * scripts/install-temporal-cli.sh fills (built from the Go module proxy).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';

export const TEMPORAL_CLI_VERSION = 'v1.5.1';

/** Where scripts/install-temporal-cli.sh puts the binary: outside the repo, reused across clones. */
export function cachedCliPath(env: Record<string, string | undefined> = process.env): string {
  const cacheRoot = env.AGENT_FOLLOWUP_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'agent-followup');
  return join(cacheRoot, `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
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

/**
 * A usable `temporal` binary: one we already have, else one built by scripts/install-temporal-cli.sh (minutes, once;
 * then cached). Returns undefined only when that fails too, leaving the SDK's own download as the last resort.
 */
export function ensureTemporalCli(log: (line: string) => void = console.log): string | undefined {
  const found = findTemporalCli();
  if (found) return found;
  log('No Temporal CLI found: installing it once with scripts/install-temporal-cli.sh (a few minutes, then cached)…');
  const installer = spawnSync('bash', [installScriptPath()], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const path = installer.stdout?.trim().split('\n').pop();
  return installer.status === 0 && path ? path : undefined;
}

/** The repo's install script, from src/dev (ts-jest) or dist/src/dev (compiled). */
function installScriptPath(): string {
  const candidates = [resolve(__dirname, '../../scripts'), resolve(__dirname, '../../../scripts')];
  const dir = candidates.find((candidate) => existsSync(join(candidate, 'install-temporal-cli.sh')));
  return join(dir ?? (candidates[0] as string), 'install-temporal-cli.sh');
}
