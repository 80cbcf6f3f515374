#!/usr/bin/env node
/**
 * The `agent-followup` command (src/command-line/, one file per command). This entry connects with the standard
 * Temporal environment variables and, on Ctrl-C while `send --wait` waits, says that the follow-up goes on and how to
 * look at it or cancel it.
 */
import { FollowUpClient } from './index';
import { ExitCode } from './command-line/io';
import { runCli } from './command-line/program';
import { colourFor } from './command-line/terminal';

export { ExitCode, type CliIo } from './command-line/io';
export { classifyFailure, exitCodeForOutcome } from './command-line/outcome-codes';
export { runCli } from './command-line/program';

function main(): void {
  // `agent-followup --help | head`: the reader closed the pipe and has what it wanted; stop quietly, as other
  // command-line tools do, instead of a stack trace for the unwritten rest.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? ExitCode.Ok);
  });
  let waitingOn: string | null = null;
  process.once('SIGINT', () => {
    if (waitingOn !== null) {
      process.stderr.write(
        `\nStopped waiting. Follow-up ${waitingOn} goes on in Temporal.\n` +
          `  Look at it:          agent-followup status ${waitingOn}\n` +
          `  Stop following it:   agent-followup cancel ${waitingOn}   (the agent's work on the job goes on)\n`,
      );
    }
    process.exit(ExitCode.Interrupted);
  });
  runCli(process.argv.slice(2), {
    env: process.env,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    connect: (env = process.env) => FollowUpClient.fromEnvironment(env),
    tty: process.stderr.isTTY === true,
    colour: colourFor(process.stderr, process.env),
    columns: process.stderr.columns,
    waitingOn: (workflowId) => {
      waitingOn = workflowId;
    },
  })
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error: unknown) => {
      console.error('agent-followup:', error instanceof Error ? error.message : error);
      process.exitCode = ExitCode.Error;
    });
}

if (require.main === module) main();
