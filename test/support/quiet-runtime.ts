import { DefaultLogger, Runtime } from '@temporalio/worker';

let installed = false;

/**
 * Installs a Temporal runtime that logs at ERROR only (the SDK's and Core's lines alike), so test output stays readable. Call it in every test file
 * that runs a worker or replays in-process, before the first connection: the runtime is per process, and a file
 * that forgets it gets the SDK's default INFO logger.
 */
export function installQuietRuntime(): void {
  if (installed) return;
  installed = true;
  try {
    // Core's own lines (a replay's expected nondeterminism, a stopped server's reconnects) go to the same logger.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // Already installed in this process by an earlier test file.
  }
}
