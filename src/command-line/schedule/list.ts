/** `agent-followup schedule list`: the follow-up schedules, each with its last run. */
import type { Command } from 'commander';
import { ExitCode, type CliContext, type CliIo, examplesOf } from '../io';
import { definedOnly } from '../follow-up-options';
import { alignedTable, describeRun, describeSpec, timeIn } from '../render';
import { withSchedules } from './with-schedules';

interface ListOptions {
  project?: string;
  job?: string;
  json?: boolean;
}

export function registerList(schedule: Command, ctx: CliContext): void {
  schedule
    .command('list')
    .summary('list the follow-up schedules, each with its last run')
    .option('--project <id>', 'only the schedules of this project')
    .option('--job <id>', 'only the schedules of this job')
    .option('--json', 'print JSON instead of text')
    .addHelpText('after', examplesOf(['agent-followup schedule list --project proj-1']))
    .action(async (options: ListOptions) => {
      ctx.exitCode = await list(options, ctx.io);
    });
}

async function list(options: ListOptions, io: CliIo): Promise<number> {
  const filter = definedOnly({ projectId: options.project, jobId: options.job });
  return withSchedules(io, async (schedules) => {
    const entries = await schedules.list(filter);
    if (options.json) {
      io.out(`${JSON.stringify(entries)}\n`);
      return ExitCode.Ok;
    }
    if (entries.length === 0) {
      io.out('No follow-up schedules found (a schedule created a moment ago may take a few seconds to be listed).\n');
      return ExitCode.Ok;
    }
    const rows = entries.map((entry) => {
      const nextTime = entry.nextRunTimes[0];
      return [
        entry.scheduleId,
        entry.paused ? `paused: ${entry.pausedBecause ?? 'no reason given'}` : 'active',
        `${entry.projectId ?? '?'}/${entry.jobId ?? '?'}`,
        describeSpec(entry.spec),
        entry.paused ? '-' : nextTime ? timeIn(nextTime, entry.spec.timezone) : 'never',
        entry.lastRun ? describeRun(entry.lastRun) : 'no runs yet',
      ];
    });
    io.out(alignedTable(['SCHEDULE', 'STATE', 'PROJECT/JOB', 'WHEN', 'NEXT RUN', 'LAST RUN'], rows));
    return ExitCode.Ok;
  });
}
