/** Runs the `agent-followup` CLI in-process against the run's dev server, each run with its own connection. */
import { Client, Connection } from '@temporalio/client';
import { runCli, type CliIo } from '../../src/cli';
import { FollowUpClient } from '../../src/client';

export interface CliRun {
  code: number;
  out: string;
  err: string;
  /** Whether the command reached for Temporal: bad input must not. */
  connected: boolean;
}

export async function runCliOn(
  args: string[],
  taskQueue: string,
  progressIntervalMs = 100,
  coordinatorTaskQueue?: string,
): Promise<CliRun> {
  return startCliOn(args, taskQueue, progressIntervalMs, coordinatorTaskQueue).done;
}

/** Starts the CLI and returns at once: `run` fills as the command writes (for tests that watch a long `--wait`). */
export function startCliOn(
  args: string[],
  taskQueue: string,
  progressIntervalMs = 100,
  coordinatorTaskQueue?: string,
  terminal: Pick<CliIo, 'tty' | 'colour' | 'columns'> & {
    /**
     * Another server than the run's dev server (a test's own, which it stops and starts), connected to as the real
     * command connects: FollowUpClient.fromEnvironment with TEMPORAL_ADDRESS, so its failures are the command's own.
     */
    address?: string;
  } = {},
): { run: CliRun; done: Promise<CliRun> } {
  const { address, ...screen } = terminal;
  const run: CliRun = { code: -1, out: '', err: '', connected: false };
  const io: CliIo = {
    env: {},
    out: (text) => (run.out += text),
    err: (text) => (run.err += text),
    connect: async () => {
      run.connected = true;
      if (address !== undefined) {
        return FollowUpClient.fromEnvironment({
          TEMPORAL_ADDRESS: address,
          TEMPORAL_TASK_QUEUE: taskQueue,
          ...(coordinatorTaskQueue ? { AGENT_COORDINATOR_TASK_QUEUE: coordinatorTaskQueue } : {}),
        });
      }
      const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS });
      return new FollowUpClient(new Client({ connection }), {
        taskQueue,
        ...(coordinatorTaskQueue ? { coordinatorTaskQueue } : {}),
      });
    },
    progressIntervalMs,
    workerCheckIntervalMs: 200,
    ...screen,
  };
  const done = runCli(args, io).then((code) => {
    run.code = code;
    return run;
  });
  return { run, done };
}
