/** `agent-followup schedule pause | unpause`. */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../io';
import { withSchedules } from './with-schedules';

export function registerPauseAndUnpause(schedule: Command, ctx: CliContext): void {
  for (const action of ['pause', 'unpause'] as const) {
    schedule
      .command(action)
      .summary(action === 'pause' ? 'stop starting runs (a running follow-up goes on)' : 'start runs again at the next time')
      .argument('<scheduleId>', 'the schedule')
      .option('--note <text>', action === 'pause' ? 'why it is paused (shown by describe as "Paused because")' : 'a note for the unpause')
      .action(async (scheduleId: string, options: { note?: string }) => {
        ctx.exitCode = await withSchedules(ctx.io, async (schedules) => {
          if (action === 'pause') await schedules.pause(scheduleId, options.note);
          else await schedules.unpause(scheduleId, options.note);
          ctx.io.out(`${action === 'pause' ? 'Paused' : 'Unpaused'} schedule ${scheduleId}\n`);
          return ExitCode.Ok;
        });
      });
  }
}
