/**
 * The `agent-followup` program on commander: one file per command, help per command, --version, "did you mean" for
 * mistyped commands and options. Input is checked before any connection is made; exit codes say how a follow-up
 * ended (README, "Exit codes").
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import {
  InvalidFollowUpInputError,
  ReservedWorkflowIdError,
  WorkflowIdInUseError,
  PayloadDecryptionError,
  PayloadKeysError,
  InvalidScheduleError,
} from '../index';
import { registerBudget } from './budget';
import { registerCancel } from './cancel';
import { registerCodecServer } from './codec-server';
import { registerPollNow } from './poll-now';
import { registerSetup } from './setup';
import type { CliError } from './json-output';
import {
  CommandRefusal,
  ExitCode,
  examplesOf,
  UsageError,
  withConnectionFlags,
  type CliContext,
  type CliIo,
  type ConnectionFlags,
} from './io';
import { registerList } from './list';
import { registerWatch } from './watch-follow-up';
import { registerSchedule } from './schedule';
import { registerSend } from './send';
import { registerStatus } from './status';
import { paint } from './terminal';

const AFTER_HELP = `
Environment: TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_TASK_QUEUE (agent-followup),
TEMPORAL_API_KEY / TEMPORAL_TLS_* / TEMPORAL_PROFILE for Temporal Cloud; --address, --namespace and --profile beat
them. The agent API key is the worker's, not this command's.

Exit codes: 0 completed (or started, without --wait); 1 unexpected error; 2 bad input; 3 job ended failed;
4 job ended archived; 5 timed out; 6 the agent API rejected the follow-up (not found, bad key, bad request);
7 cancelled or terminated; 8 delivery unknown (a send failed ambiguously and was not repeated: check the job);
130 Ctrl-C while waiting (the follow-up goes on).

Each command has its own help, with examples: agent-followup help send, agent-followup schedule create --help, ...
${examplesOf([
  'agent-followup send --project proj-1 --job job-7 --prompt "Also add tests" --wait',
  'agent-followup list --state running',
  'agent-followup watch <workflowId>',
  'agent-followup --address temporal.internal:7233 --namespace prod status <workflowId>',
])}`;

/** The version in this package's package.json, found from the compiled or the source location alike. */
export function packageVersion(): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (manifest.name === 'agent-followup') return manifest.version ?? '0.0.0';
  }
  return '0.0.0';
}

function buildProgram(ctx: CliContext): Command {
  const program = new Command('agent-followup')
    .description('Send a follow-up instruction to an AI agent job and follow the job to its end, on Temporal.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for the command')
    // Each command's help lists --address, --namespace and --profile too.
    .configureHelp({ showGlobalOptions: true })
    .helpCommand('help [command]', 'show help for a command (agent-followup help schedule create)')
    .option('--address <host:port>', 'the Temporal frontend (else TEMPORAL_ADDRESS, a profile, or localhost:7233)')
    .option('--namespace <name>', 'the Temporal namespace (else TEMPORAL_NAMESPACE, a profile, or default)')
    .option('--profile <name>', 'a profile of the Temporal config file, temporal.toml (else TEMPORAL_PROFILE)')
    // Set before the commands are added: every command inherits them.
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({
      writeOut: (text) => ctx.io.out(text),
      writeErr: (text) => ctx.io.err(text),
      outputError: (text, write) => write(text.replace(/^error: /, 'agent-followup: ')),
    })
    .addHelpText('after', AFTER_HELP)
    // Before any command's action: its connection goes where the flags say (given before or after the command).
    .hook('preAction', () => {
      ctx.io = withConnectionFlags(ctx.io, program.opts<ConnectionFlags>());
    });
  registerSend(program, ctx);
  registerStatus(program, ctx);
  registerWatch(program, ctx);
  registerList(program, ctx);
  registerCancel(program, ctx);
  registerPollNow(program, ctx);
  registerSetup(program, ctx);
  registerSchedule(program, ctx);
  registerBudget(program, ctx);
  registerCodecServer(program, ctx);
  return program;
}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const ctx: CliContext = { io, exitCode: ExitCode.Ok };
  const program = buildProgram(ctx);
  if (argv.length === 0) {
    program.outputHelp();
    return ExitCode.Ok;
  }
  // `help schedule create` is `schedule create --help`: commander's own help command stops at the first word, and shows
  // the whole program's help for a command that does not exist instead of saying so.
  const args = argv[0] === 'help' && argv.length > 1 ? [...argv.slice(1), '--help'] : argv;
  try {
    const names = program.commands.map((command) => command.name());
    if (args !== argv && !names.includes(args[0] as string))
      throw new UsageError(`there is no command '${args[0]}'; the commands: ${names.join(', ')}`);
    await program.parseAsync(args, { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    const failure = describeCliError(error);
    if (failure === null) return ExitCode.Ok;
    // Commander has printed its own message ("unknown option '--wiat' (Did you mean --wait?)"); ours go to stderr here.
    if (!(error instanceof CommanderError)) io.err(`${paint(io, 'red', `agent-followup: ${failure.message}`)}\n`);
    // Under --json a script reads stdout: the error is there too, in one shape for every command (json-output.ts).
    if (argv.includes('--json')) io.out(`${JSON.stringify({ error: failure } satisfies CliError)}\n`);
    return failure.exitCode;
  }
}

/** What went wrong, what to do, and the exit code, for what a command threw; null for help and version. */
function describeCliError(error: unknown): CliError['error'] | null {
  const badInput = (type: string, message: string) => ({ type, message, exitCode: ExitCode.BadInput });
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return null;
    // Help asked for; without `exitCode` 0 it is the help a group (`schedule`) shows when no command was given.
    if (error.code === 'commander.help' && error.exitCode === 0) return null;
    return badInput('BadInput', error.message.replace(/^error: /, ''));
  }
  if (
    error instanceof UsageError ||
    error instanceof InvalidFollowUpInputError ||
    error instanceof InvalidScheduleError ||
    // A start refused for its workflow id: bad input too, and nothing was sent.
    error instanceof WorkflowIdInUseError ||
    error instanceof ReservedWorkflowIdError ||
    error instanceof PayloadKeysError ||
    // Encrypted payloads this command has no key for: its environment, not the follow-up, is what to fix.
    error instanceof PayloadDecryptionError
  ) {
    return badInput('BadInput', error.message);
  }
  if (error instanceof CommandRefusal) return { type: error.type, message: error.message, exitCode: error.exitCode };
  if (error instanceof WorkflowNotFoundError) {
    return badInput('FollowUpNotFound', `no follow-up with workflow id '${error.workflowId}' in this namespace`);
  }
  if (error instanceof ScheduleNotFoundError) {
    return badInput(
      'ScheduleNotFound',
      `no schedule with id '${error.scheduleId}' in this namespace (see: agent-followup schedule list)`,
    );
  }
  if (error instanceof ScheduleAlreadyRunning) {
    return badInput(
      'ScheduleExists',
      `a schedule with id '${error.scheduleId}' already exists; see it with agent-followup schedule describe ${error.scheduleId}, or pass another --schedule-id`,
    );
  }
  const name = error instanceof Error && error.name !== 'Error' ? error.name : 'Error';
  return { type: name, message: error instanceof Error ? error.message : String(error), exitCode: ExitCode.Error };
}
