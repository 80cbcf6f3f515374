/** `agent-followup poll-now`: have a follow-up read its job now, for whoever knows the job just changed. */
import type { Command } from 'commander';
import { checkWorkflowIdArgument, ExitCode, type CliContext, type CliIo } from './io';

export function registerPollNow(program: Command, ctx: CliContext): void {
  program
    .command('poll-now')
    .summary('have a running follow-up read its job now instead of at its next poll (you know the job changed)')
    .argument('<workflowId>', 'the id send printed')
    .action(async (workflowId: string) => {
      ctx.exitCode = await pollNow(checkWorkflowIdArgument(workflowId), ctx.io);
    });
}

async function pollNow(workflowId: string, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const { requested, executionStatus } = await followUps.pollNow(workflowId);
    if (!requested) {
      io.err(`agent-followup: follow-up ${workflowId} already ended (${executionStatus}); it reads its job no more. See it with: agent-followup status ${workflowId}\n`);
      return ExitCode.BadInput;
    }
    io.out(`Asked follow-up ${workflowId} to read its job now; see what it found with: agent-followup status ${workflowId}\n`);
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}
