/** `agent-followup schedule describe`: a schedule's spec as written, state, policies, next times and recent runs. */
import type { Command } from 'commander';
import { excerpt } from '../../index';
import { ExitCode, type CliContext, type CliIo, examplesOf } from '../io';
import { describePolicies, describeRun, describeSpec, timeIn } from '../render';
import { withSchedules } from './with-schedules';

export function registerDescribe(schedule: Command, ctx: CliContext): void {
  schedule
    .command('describe')
    .summary('show a schedule: when it runs, its state and why, its policies, next times and recent runs')
    .argument('<scheduleId>', 'the id create printed (see: schedule list)')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText('after', examplesOf(['agent-followup schedule describe nightly-review']))
    .action(async (scheduleId: string, options: { json?: boolean }) => {
      ctx.exitCode = await describe(scheduleId, Boolean(options.json), ctx.io);
    });
}

async function describe(scheduleId: string, json: boolean, io: CliIo): Promise<number> {
  return withSchedules(io, async (schedules) => {
    const view = await schedules.describe(scheduleId);
    if (json) {
      io.out(`${JSON.stringify(view)}\n`);
      return ExitCode.Ok;
    }
    const lines = [
      `Schedule ${view.scheduleId}: ${view.paused ? 'PAUSED' : 'active'}`,
      view.pausedBecause ? `Paused because: ${view.pausedBecause}` : '',
      view.note ? `Note: ${view.note}` : '',
      view.input
        ? `Follow-up: project ${view.input.projectId}, job ${view.input.jobId}: "${excerpt(view.input.prompt, 120)}"`
        : 'Follow-up: (the action is not a follow-up input)',
      `When: ${describeSpec(view.spec)}`,
      `Policies: ${describePolicies(view.policies)}`,
      `Next runs: ${
        view.paused
          ? '(paused)'
          : view.nextRunTimes
              .slice(0, 3)
              .map((time) => timeIn(time, view.spec.timezone))
              .join(', ') || 'none'
      }`,
      `Runs: ${view.counts.runsStarted} started, ${view.counts.skippedOverlap} skipped (a run was still going), ` +
        `${view.counts.missedCatchupWindow} missed (outside the catch-up window)`,
      view.recentRuns.length > 0 ? 'Recent runs (newest first):' : 'No runs yet.',
      ...view.recentRuns.map((run) => `  ${describeRun(run)}`),
    ];
    io.out(`${lines.filter(Boolean).join('\n')}\n`);
    return ExitCode.Ok;
  });
}
