/** Runs the built entry points (dist/, which `npm test` builds first) as real child processes. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const DIST = join(__dirname, '..', '..', 'dist', 'src');

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr interleaved as they came. */
  output: string;
}

export interface StartedScript {
  child: ChildProcess;
  exited: Promise<Exit>;
  /** stdout and stderr so far, interleaved, while the process still runs. */
  output(): string;
}

/**
 * Starts `dist/src/<script>` with only the given environment (plus PATH and HOME), so nothing from the test process
 * leaks in. `exited` settles once the process is gone and its output is read.
 */
export function startBuiltScript(script: string, args: string[], env: Record<string, string>): StartedScript {
  const child = spawn(process.execPath, [join(DIST, script), ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    output += chunk.toString();
  });
  const exited = new Promise<Exit>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, output })),
  );
  return { child, exited, output: () => output };
}

export { freePort } from '../../scripts/stack/dev-server';

/**
 * The environment of a worker process on `taskQueue` (coordinators on a queue of its own) that calls the simulator and
 * holds each project to `sendsPerWindow` sends per `windowMs` (the worker's budget is per hour, scaled to the window).
 */
export function budgetedWorkerEnv(options: {
  apiBaseUrl: string;
  apiKey: string;
  address: string;
  taskQueue: string;
  sendsPerWindow: number;
  windowMs: number;
}): Record<string, string> {
  return {
    AGENT_API_KEY: options.apiKey,
    AGENT_API_BASE_URL: options.apiBaseUrl,
    AGENT_API_ALLOW_LOOPBACK: 'true',
    TEMPORAL_ADDRESS: options.address,
    TEMPORAL_TASK_QUEUE: options.taskQueue,
    AGENT_COORDINATOR_TASK_QUEUE: `${options.taskQueue}-coordinators`,
    AGENT_SENDS_PER_PROJECT_PER_HOUR: String((options.sendsPerWindow * 3_600_000) / options.windowMs),
    // A test's short window scales its budget far past the vendor's 100 an hour.
    AGENT_SENDS_ABOVE_VENDOR_LIMIT: 'true',
    AGENT_SEND_WINDOW_MS: String(options.windowMs),
    WORKER_SHUTDOWN_GRACE_TIME: '5s',
    AGENT_API_REQUEST_TIMEOUT: '5s',
  };
}
