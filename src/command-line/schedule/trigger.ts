/** `agent-followup schedule trigger`: one run now, under the schedule's own overlap policy. */
import type { Command } from 'commander';
import { examplesOf, ExitCode, type CliContext } from '../io';
import { printAction, withSchedules } from './with-schedules';

export function registerTrigger(schedule: Command, ctx: CliContext): void {
  schedule
    .command('trigger')
    .summary("start a run now, even when paused, under the schedule's overlap policy")
    .argument('<scheduleId>', 'the schedule')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText('after', examplesOf(['agent-followup schedule trigger nightly-review']))
    .action(async (scheduleId: string, options: { json?: boolean }) => {
      ctx.exitCode = await withSchedules(ctx.io, async (schedules) => {
        const { overlap } = await schedules.trigger(scheduleId);
        if (options.json) {
          printAction(ctx.io, { scheduleId, action: 'triggered', overlap });
          return ExitCode.Ok;
        }
        const then =
          overlap === 'skip'
            ? 'this run is skipped'
            : overlap === 'buffer-one'
              ? 'this run starts after it'
              : 'the policy decides';
        ctx.io.out(
          `Triggered schedule ${scheduleId} (overlap ${overlap}: if one of its follow-ups is still running, ${then}).\n` +
            `See the run with: agent-followup schedule describe ${scheduleId}\n`,
        );
        return ExitCode.Ok;
      });
    });
}
