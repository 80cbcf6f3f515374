/** `agent-followup schedule delete`: the schedule goes; follow-ups it started keep running. */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../io';
import { withSchedules } from './with-schedules';

export function registerDelete(schedule: Command, ctx: CliContext): void {
  schedule
    .command('delete')
    .summary('delete a schedule (its running follow-ups go on; the command says how to cancel them)')
    .argument('<scheduleId>', 'the schedule')
    .action(async (scheduleId: string) => {
      ctx.exitCode = await withSchedules(ctx.io, async (schedules) => {
        const { runningWorkflowIds } = await schedules.delete(scheduleId);
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
