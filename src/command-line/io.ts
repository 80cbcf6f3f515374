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
  /**
   * How the CLI reaches Temporal; tests pass a client of their own. `env`: the environment with the command line's
   * --address, --namespace and --profile put in (absent: `env` above, as given).
   */
  connect: (env?: Record<string, string | undefined>) => Promise<FollowUpClient>;
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

/**
 * A command that could not do what it was asked, for a reason of its own (a follow-up already ended, no worker took
 * the ask): said as any failure is, on stderr and, under --json, as the error object with this type and exit code.
 */
export class CommandRefusal extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

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

/** The connection flags every command takes, as the standard variables they stand for: a flag beats the variable. */
export interface ConnectionFlags {
  address?: string;
  namespace?: string;
  profile?: string;
}

/** The io whose connection uses the flags given (the same io when none was). */
export function withConnectionFlags(io: CliIo, flags: ConnectionFlags): CliIo {
  const variables = {
    TEMPORAL_ADDRESS: flags.address,
    TEMPORAL_NAMESPACE: flags.namespace,
    TEMPORAL_PROFILE: flags.profile,
  };
  const given = Object.entries(variables).filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (given.length === 0) return io;
  for (const [variable, value] of given) {
    if (value.trim() === '') {
      const flag = `--${variable.slice('TEMPORAL_'.length).toLowerCase()}`;
      throw new UsageError(`${flag} must not be empty: give a value, or leave the flag out to use ${variable}`);
    }
  }
  const env = { ...io.env, ...Object.fromEntries(given) };
  return { ...io, env, connect: () => io.connect(env) };
}

/** An Examples section at the end of a command's help. */
export function examplesOf(lines: readonly string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`;
}
