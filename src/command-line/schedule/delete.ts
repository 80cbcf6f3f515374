/** `agent-followup schedule delete`: the schedule goes; follow-ups it started keep running. */
import type { Command } from 'commander';
import { examplesOf, ExitCode, type CliContext } from '../io';
import { printAction, withSchedules } from './with-schedules';

export function registerDelete(schedule: Command, ctx: CliContext): void {
  schedule
    .command('delete')
    .summary('delete a schedule (its running follow-ups go on; the command says how to cancel them)')
    .argument('<scheduleId>', 'the schedule')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText('after', examplesOf(['agent-followup schedule delete nightly-review']))
    .action(async (scheduleId: string, options: { json?: boolean }) => {
      ctx.exitCode = await withSchedules(ctx.io, async (schedules) => {
        const { runningWorkflowIds } = await schedules.delete(scheduleId);
        if (options.json) {
          printAction(ctx.io, { scheduleId, action: 'deleted', runningWorkflowIds });
          return ExitCode.Ok;
        }
        ctx.io.out(`Deleted schedule ${scheduleId}\n`);
        for (const workflowId of runningWorkflowIds) {
          ctx.io.out(
            `Its follow-up ${workflowId} is still running; stop it with: agent-followup cancel ${workflowId}\n`,
          );
        }
        return ExitCode.Ok;
      });
    });
}
