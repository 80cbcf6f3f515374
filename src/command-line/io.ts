/** What every command shares: the exit codes, the process it talks to (CliIo), and the error for bad usage. */
import type { FollowUpClient } from '../index';

/** Process exit codes; documented in the README and stable. */
export const ExitCode = {
  Ok: 0,
  Error: 1,
  BadInput: 2,
  JobFailed: 3,
  JobArchived: 4,
  TimedOut: 5,
  Rejected: 6,
  Cancelled: 7,
  DeliveryUnknown: 8,
  /** Ctrl-C while waiting: the follow-up goes on; only this command stopped. */
  Interrupted: 130,
} as const;

export interface CliIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
  /** How the CLI reaches Temporal; tests pass a client of their own. */
  connect: () => Promise<FollowUpClient>;
  /** How often --wait asks for progress. */
  progressIntervalMs?: number;
  /** How often --wait checks that a worker still polls the task queue. */
  workerCheckIntervalMs?: number;
  /** stderr is a terminal: --wait shows its progress as one line updated in place (terminal.ts). */
  tty?: boolean;
  /** stderr gets colour (a terminal with colours, and no NO_COLOR). */
  colour?: boolean;
  /** The terminal's width, to keep the progress line on one line. */
  columns?: number;
  /** Told which follow-up `send --wait` is waiting on (null once it stops), so Ctrl-C can say how to find it. */
  waitingOn?: (workflowId: string | null) => void;
}

/** The command line itself is wrong: exit 2, with the message. */
export class UsageError extends Error {}

/** Temporal's longest workflow id (the server's default `limit.maxIDLength`). */
const MAX_WORKFLOW_ID_LENGTH = 1_000;

/** A workflow id given on the command line, checked before connecting: an empty or over-long one is exit 2, said plainly. */
export function checkWorkflowIdArgument(workflowId: string, name = 'the workflow id'): string {
  if (workflowId.trim() === '')
    throw new UsageError(`${name} must not be empty: give the id \`send\` printed (agent-followup send ... prints it)`);
  if (workflowId.length > MAX_WORKFLOW_ID_LENGTH) {
    throw new UsageError(
      `${name} is ${workflowId.length} characters long; Temporal allows at most ${MAX_WORKFLOW_ID_LENGTH}`,
    );
  }
  return workflowId;
}

/** A command's context: the io, and where its action leaves the exit code. */
export interface CliContext {
  io: CliIo;
  exitCode: number;
}
