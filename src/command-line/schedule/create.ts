/** `agent-followup schedule create`: a recurring follow-up on a Temporal Schedule. */
import type { Command } from 'commander';
import {
  DEFAULT_SENDS_PER_PROJECT_PER_HOUR,
  maxPromptLengthFromEnv,
  peakRunsPerHour,
  type AgentJobCheckResult,
  type FollowUpClient,
  checkScheduleRequest,
  type FollowUpScheduleRequest,
  type ScheduleOverlapChoice,
} from '../../index';
import {
  addFollowUpInputOptions,
  buildInput,
  definedOnly,
  strayArgumentError,
  type FollowUpInputOptions,
} from '../follow-up-options';
import { ExitCode, type CliContext, type CliIo, examplesOf } from '../io';
import { describePolicies, describeSpec, timeIn } from '../render';
import { paint } from '../terminal';
import { withSchedules } from './with-schedules';

interface CreateOptions extends FollowUpInputOptions {
  cron?: string;
  every?: string;
  offset?: string;
  timezone?: string;
  note?: string;
  scheduleId?: string;
  paused?: boolean;
  overlap?: string;
  catchupWindow?: string;
  pauseOnFailure: boolean;
  jobCheck: boolean;
  json?: boolean;
}

export function registerCreate(schedule: Command, ctx: CliContext): void {
  addFollowUpInputOptions(schedule.command('create'))
    .summary('send the same follow-up on a cron expression or at a fixed interval')
    .description(
      "Each run is an ordinary follow-up with its own workflow id; the polling options set each run's polling. " +
        'Schedules, their defaults and how to read their results: docs/SCHEDULES.md.',
    )
    .usage('--project ID --job ID (--prompt TEXT | --prompt-file PATH) (--cron EXPR | --every D) [options]')
    .option('--cron <expr>', 'when to run: 5-7 cron fields ("0 9 * * MON-FRI") or @hourly, @daily, @weekly, @monthly')
    .option('--every <duration>', 'or run every D (at least 1m), counted from the Unix epoch')
    .option('--offset <duration>', 'shift an --every schedule by this much')
    .option('--timezone <zone>', 'IANA zone the cron is read in (default UTC), e.g. Europe/Berlin')
    .option(
      '--note <text>',
      'a note shown by describe and in the Web UI; kept when the schedule is paused and unpaused',
    )
    .option('--schedule-id <id>', 'use this id instead of agent-followup-schedule/{project}/{job}/{hash}')
    .option('--paused', 'create it paused (trigger still runs it)')
    .option('--overlap <policy>', 'skip (default) | buffer-one: when a run comes due while one is still going')
    .option(
      '--catchup-window <duration>',
      'how late a run may still start after a Temporal outage (default 10m; 10s-365d)',
    )
    .option(
      '--no-pause-on-failure',
      'keep running after a follow-up fails (default: a failed follow-up pauses the schedule)',
    )
    .option(
      '--no-job-check',
      'do not read the job first (by default a worker reads it once, and a job that does not exist is warned about)',
    )
    .option('--json', 'print one JSON object instead of text')
    .allowExcessArguments()
    .addHelpText(
      'after',
      examplesOf([
        'agent-followup schedule create --project proj-1 --job job-7 --prompt "Rebase on main" --cron "0 9 * * 1-5" --timezone Europe/Paris --schedule-id weekday-rebase',
        'agent-followup schedule create --project proj-1 --job job-7 --prompt-file review.md --every 6h',
      ]),
    )
    .action(async (options: CreateOptions, command: Command) => {
      ctx.exitCode = await create(options, command.args, ctx.io);
    });
}

/** What to say about the job before the schedule is created, if anything. */
function jobWarning(check: AgentJobCheckResult): string | null {
  if (check.found === true) return null;
  if (check.found === false) {
    return (
      `warning: the job does not exist (${check.type}: ${check.message}). The schedule is created anyway; each run ` +
      'will fail the same way until the job exists (and the first failure pauses the schedule unless --no-pause-on-failure).'
    );
  }
  return `note: the job could not be checked (${check.reason}); the schedule is created without the check.`;
}

/**
 * A warning when the schedule starts more follow-ups in its busiest hour than the project may send in one (its own
 * budget, else the namespace's default, else the workers' default): the runs beyond it wait for the budget.
 */
async function beyondBudget(
  followUps: FollowUpClient,
  projectId: string,
  nextRunTimes: readonly string[],
): Promise<string | null> {
  const perHour = peakRunsPerHour(nextRunTimes);
  if (perHour === null) return null;
  // A coordinator no worker answers leaves the defaults to say it.
  const own = await followUps.projectBudget(projectId).catch(() => null);
  const namespaceDefault = own ? null : await followUps.defaultBudget();
  const budget = own?.limit ?? namespaceDefault ?? DEFAULT_SENDS_PER_PROJECT_PER_HOUR;
  if (perHour <= budget) return null;
  const whose = own
    ? `project ${projectId}'s budget`
    : namespaceDefault !== null
      ? "the namespace's default budget"
      : `the workers' default budget (${DEFAULT_SENDS_PER_PROJECT_PER_HOUR} unless AGENT_SENDS_PER_PROJECT_PER_HOUR says otherwise)`;
  return (
    `warning: this schedule starts up to ${perHour} follow-ups an hour for project ${projectId}, and ${whose} is ${budget} ` +
    "sends an hour, shared with the project's other follow-ups: runs beyond it wait in line for the budget. Slow the " +
    `cadence, or raise the budget with: agent-followup budget set --project ${projectId} --sends-per-hour N`
  );
}

/** Milliseconds when all digits, as for the polling options; otherwise the duration as typed. */
function duration(value: string | undefined): string | number | undefined {
  return value === undefined ? undefined : /^\d+$/.test(value) ? Number(value) : value;
}

async function create(options: CreateOptions, extra: string[], io: CliIo): Promise<number> {
  if (extra.length > 0) throw strayArgumentError(extra, options, ' and the cron expression');
  const request: FollowUpScheduleRequest = {
    input: buildInput(options),
    ...definedOnly({
      scheduleId: options.scheduleId,
      cron: options.cron,
      every: duration(options.every),
      offset: duration(options.offset),
      timezone: options.timezone,
      note: options.note,
      overlap: options.overlap as ScheduleOverlapChoice | undefined,
      catchupWindow: duration(options.catchupWindow),
      paused: options.paused === true ? true : undefined,
      pauseOnFailure: options.pauseOnFailure === false ? false : undefined,
    }),
  };
  // Validate before connecting: bad input never reaches Temporal, and nothing is created.
  checkScheduleRequest(request, maxPromptLengthFromEnv(io.env));
  return withSchedules(io, async (schedules, followUps) => {
    // The CLI has no API key: a worker reads the job once. A missing job is a warning, not a refusal: it may be
    // created later, and the schedule's runs would then find it.
    const warning = options.jobCheck ? jobWarning(await followUps.checkJob(request.input)) : null;
    const created = await schedules.create(request);
    // Said once the schedule exists: a create refused (a cron that never fires, no search attributes) creates nothing.
    if (warning) io.err(`${paint(io, 'yellow', warning)}\n`);
    const view = await schedules.describe(created.scheduleId);
    const beyond = await beyondBudget(followUps, request.input.projectId, view.nextRunTimes);
    if (beyond) io.err(`${paint(io, 'yellow', beyond)}\n`);
    if (options.json) {
      io.out(`${JSON.stringify({ ...created, paused: view.paused, nextRunTimes: view.nextRunTimes })}\n`);
      return ExitCode.Ok;
    }
    io.out(
      [
        `Created schedule ${created.scheduleId}${view.paused ? ' (paused)' : ''}: ${describeSpec(view.spec)}`,
        `Policies: ${describePolicies(view.policies)}`,
        view.nextRunTimes.length > 0
          ? `Next runs: ${view.nextRunTimes
              .slice(0, 3)
              .map((time) => timeIn(time, view.spec.timezone))
              .join(', ')}`
          : 'No upcoming runs: the spec matches no future time (check the cron expression).',
        `Each run is a follow-up whose workflow id starts with ${created.workflowIdPrefix}-`,
        `Look at it with: agent-followup schedule describe ${created.scheduleId}`,
      ].join('\n') + '\n',
    );
    return ExitCode.Ok;
  });
}
