/** `agent-followup cancel`: stop a follow-up that is still running. */
import type { Command } from 'commander';
import { checkWorkflowIdArgument, ExitCode, type CliContext, type CliIo } from './io';

export function registerCancel(program: Command, ctx: CliContext): void {
  program
    .command('cancel')
    .summary("stop a running follow-up (a message already sent stays sent, and the agent's work on it goes on)")
    .argument('<workflowId>', 'the id send printed')
    .action(async (workflowId: string) => {
      ctx.exitCode = await cancel(checkWorkflowIdArgument(workflowId), ctx.io);
    });
}

async function cancel(workflowId: string, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const { requested, executionStatus } = await followUps.cancel(workflowId);
    if (!requested) {
      io.err(
        `agent-followup: follow-up ${workflowId} already ended (${executionStatus}); there is nothing to cancel. See it with: agent-followup status ${workflowId}\n`,
      );
      return ExitCode.BadInput;
    }
    io.out(
      `Cancellation requested for follow-up ${workflowId}; it stops following the job and ends as cancelled. A message it ` +
        `already sent stays sent: the agent's work on it goes on, and the job shows its result. Check with: agent-followup status ${workflowId}\n`,
    );
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}
