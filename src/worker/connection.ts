/**
 * Connecting an embedded worker, quiet by default: a service that runs the follow-up worker in its own process does
 * not want the SDK's routine INFO lines (worker state changes, "No workflows registered" for the sends worker, …) in
 * its logs. The SDK logs through its process-wide Runtime, which is made with the first connection; so the Runtime
 * is installed here first, with a logger at WARN (or the one given) that sends routine lines to DEBUG.
 */
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  type LogLevel,
  type Logger,
  type NativeConnectionOptions,
} from '@temporalio/worker';
import { collapseRetryLines, demoteRoutineLines } from '../observability/logging';

export interface WorkerConnectionOptions extends NativeConnectionOptions {
  /** Where the SDK's log lines go (default: the SDK's console logger at `logLevel`). */
  logger?: Logger;
  /** The least severe line written when no `logger` is given (default WARN: quiet unless something is wrong). */
  logLevel?: LogLevel;
}

/**
 * Opens the worker's connection to Temporal. The first call in a process also installs the SDK's Runtime with the
 * quiet logger; a process that installed its own Runtime before keeps it (and its logger).
 */
export async function connectWorker(options: WorkerConnectionOptions = {}): Promise<NativeConnection> {
  const { logger, logLevel, ...connection } = options;
  installQuietRuntime(logger ?? new DefaultLogger(logLevel ?? 'WARN'));
  return NativeConnection.connect(connection);
}

/** Installs the Runtime with `logger` (routine SDK lines demoted to DEBUG) unless one exists; says whether it did. */
export function installQuietRuntime(logger: Logger): boolean {
  try {
    Runtime.install({
      logger: collapseRetryLines(demoteRoutineLines(logger)),
      telemetryOptions: { logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} } },
    });
    return true;
  } catch {
    // Installed already (by the service, or by an earlier connection): its logger stays.
    return false;
  }
}
