/** `agent-followup schedule pause | unpause`. */
import { Option, type Command } from 'commander';
import { examplesOf, ExitCode, UsageError, type CliContext } from '../io';
import { printAction, withSchedules } from './with-schedules';

export function registerPauseAndUnpause(schedule: Command, ctx: CliContext): void {
  for (const action of ['pause', 'unpause'] as const) {
    schedule
      .command(action)
      .summary(
        action === 'pause' ? 'stop starting runs (a running follow-up goes on)' : 'start runs again at the next time',
      )
      .argument('<scheduleId>', 'the schedule')
      .option(
        '--note <text>',
        action === 'pause' ? 'why it is paused (shown by describe as "Paused because")' : 'a note for the unpause',
      )
      // The word people reach for first: taken as --note, rather than a "did you mean --version?".
      .addOption(new Option('--reason <text>').hideHelp())
      .option('--json', 'print one JSON object instead of text')
      .addHelpText(
        'after',
        examplesOf([
          action === 'pause'
            ? 'agent-followup schedule pause nightly-review --note "release freeze"'
            : 'agent-followup schedule unpause nightly-review',
        ]),
      )
      .action(async (scheduleId: string, options: { note?: string; reason?: string; json?: boolean }) => {
        if (options.note !== undefined && options.reason !== undefined)
          throw new UsageError('give --note or --reason (the same), not both');
        const note = options.note ?? options.reason;
        ctx.exitCode = await withSchedules(ctx.io, async (schedules) => {
          if (action === 'pause') await schedules.pause(scheduleId, note);
          else await schedules.unpause(scheduleId, note);
          if (options.json) printAction(ctx.io, { scheduleId, action: action === 'pause' ? 'paused' : 'unpaused' });
          else ctx.io.out(`${action === 'pause' ? 'Paused' : 'Unpaused'} schedule ${scheduleId}\n`);
          return ExitCode.Ok;
        });
      });
  }
}
