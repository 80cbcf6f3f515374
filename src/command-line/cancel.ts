/** `agent-followup cancel`: stop a follow-up that is still running. */
import type { Command } from 'commander';
import { checkWorkflowIdArgument, CommandRefusal, examplesOf, ExitCode, type CliContext, type CliIo } from './io';
import type { CancelReportSchema } from './json-output';
import type { z } from 'zod';

export function registerCancel(program: Command, ctx: CliContext): void {
  program
    .command('cancel')
    .summary("stop a running follow-up (a message already sent stays sent, and the agent's work on it goes on)")
    .argument('<workflowId>', 'the id send printed')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText(
      'after',
      examplesOf(['agent-followup cancel <workflowId>', 'agent-followup cancel <workflowId> --json']),
    )
    .action(async (workflowId: string, options: { json?: boolean }) => {
      ctx.exitCode = await cancel(checkWorkflowIdArgument(workflowId), Boolean(options.json), ctx.io);
    });
}

async function cancel(workflowId: string, json: boolean, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const { requested, executionStatus } = await followUps.cancel(workflowId);
    if (!requested) {
      throw new CommandRefusal(
        'AlreadyEnded',
        `follow-up ${workflowId} already ended (${executionStatus}); there is nothing to cancel. See it with: agent-followup status ${workflowId}`,
        ExitCode.BadInput,
      );
    }
    if (json) {
      const report: z.infer<typeof CancelReportSchema> = { workflowId, cancelRequested: true, executionStatus };
      io.out(`${JSON.stringify(report)}\n`);
    } else {
      io.out(
        `Cancellation requested for follow-up ${workflowId}; it stops following the job and ends as cancelled. A message it ` +
          `already sent stays sent: the agent's work on it goes on, and the job shows its result. Check with: agent-followup status ${workflowId}\n`,
      );
    }
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}
