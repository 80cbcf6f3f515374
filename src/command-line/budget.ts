/** `agent-followup budget show | set`: a project's send budget (sends in any rolling hour), kept by its coordinator. */
import type { Command } from 'commander';
import type { FollowUpClient, ProjectView } from '../index';
import {
  refusalLine,
  roughDuration,
  utcClock,
  plainWholeNumber,
  sendBudgetProblem,
  VENDOR_SENDS_PER_PROJECT_PER_HOUR,
  NoWorkerAnsweredError,
} from '../index';
import { CommandRefusal, ExitCode, UsageError, type CliContext, type CliIo, examplesOf } from './io';

export function registerBudget(program: Command, ctx: CliContext): void {
  const budget = program
    .command('budget')
    .summary('show or set a project\'s send budget, shared by every worker and service (README, "The send budget")')
    .helpCommand(false);
  registerShow(budget, ctx);
  registerSet(budget, ctx);
}

function registerShow(budget: Command, ctx: CliContext): void {
  budget
    .command('show')
    .summary("show each project's use of its budget in the current window (or one project's with --project)")
    .option('--project <id>', 'only this project')
    .option('--json', 'print JSON instead of text')
    .addHelpText(
      'after',
      examplesOf(['agent-followup budget show', 'agent-followup budget show --project proj-1 --json']),
    )
    .action(async (options: { project?: string; json?: boolean }) => {
      ctx.exitCode = await show(options.project, Boolean(options.json), ctx.io);
    });
}

function registerSet(budget: Command, ctx: CliContext): void {
  budget
    .command('set')
    .summary("set every project's budget, or with --project one project's own")
    .option(
      '--project <id>',
      'only this project (without it: the default of every project without a budget of its own)',
    )
    .option(
      '--sends-per-hour <n>',
      "sends a project may make in any rolling hour, across every worker (the vendor allows 100); 'default' returns to the default (for all: the workers' AGENT_SENDS_PER_PROJECT_PER_HOUR)",
    )
    .option(
      '--above-vendor-limit',
      `your plan allows more than the vendor's documented ${VENDOR_SENDS_PER_PROJECT_PER_HOUR} per project per hour: a budget above it is meant`,
    )
    .option('--json', 'print JSON instead of text')
    .addHelpText(
      'after',
      examplesOf([
        'agent-followup budget set --project proj-1 --sends-per-hour 40',
        'agent-followup budget set --project proj-1 --sends-per-hour default',
        'agent-followup budget set --sends-per-hour 80',
      ]),
    )
    .action(
      async (options: { project?: string; sendsPerHour?: string; aboveVendorLimit?: boolean; json?: boolean }) => {
        const project = options.project;
        if (project !== undefined && project.trim() === '') throw new UsageError('--project must not be empty');
        const aboveVendorLimit = Boolean(options.aboveVendorLimit);
        const sendsPerHour = sendsPerHourFrom(options.sendsPerHour, aboveVendorLimit);
        const followUps = await ctx.io.connect();
        try {
          if (project === undefined) await followUps.setDefaultBudget(sendsPerHour, { aboveVendorLimit });
          else await followUps.setProjectBudget(project, sendsPerHour, { aboveVendorLimit });
        } finally {
          await followUps.close();
        }
        try {
          ctx.exitCode = await show(project, Boolean(options.json), ctx.io);
        } catch (error) {
          if (!(error instanceof CommandRefusal)) throw error;
          // The budget is set (a signal Temporal keeps): only showing it failed, and the message says both.
          throw new CommandRefusal(error.type, `the budget is set; ${lowerFirst(error.message)}`, error.exitCode);
        }
      },
    );
}

function sendsPerHourFrom(raw: string | undefined, aboveVendorLimit: boolean): number | null {
  if (raw === undefined)
    throw new UsageError(
      `budget set needs --sends-per-hour N (e.g. 80; the vendor allows ${VENDOR_SENDS_PER_PROJECT_PER_HOUR} per project per hour), or default`,
    );
  if (raw.trim().toLowerCase() === 'default') return null;
  const value = plainWholeNumber(raw);
  if (value === undefined)
    throw new UsageError(
      `--sends-per-hour must be a whole number in plain digits (e.g. 80), or default (got '${raw}')`,
    );
  const problem = sendBudgetProblem(value, aboveVendorLimit, '--above-vendor-limit');
  if (problem) throw new UsageError(`--sends-per-hour ${value} ${problem}`);
  return value;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

async function show(projectId: string | undefined, json: boolean, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    return await showWith(followUps, projectId, json, io);
  } catch (error) {
    if (!(error instanceof NoWorkerAnsweredError)) throw error;
    throw new CommandRefusal('NoWorkerAnswered', error.message, ExitCode.Error);
  } finally {
    await followUps.close();
  }
}

async function showWith(
  followUps: FollowUpClient,
  projectId: string | undefined,
  json: boolean,
  io: CliIo,
): Promise<number> {
  if (projectId !== undefined) {
    const [defaultSendsPerHour, view] = await Promise.all([
      followUps.defaultBudget(),
      followUps.projectBudget(projectId),
    ]);
    // One JSON shape with or without --project (json-output.ts): the list, here of this project alone.
    io.out(
      json
        ? `${JSON.stringify({ defaultSendsPerHour, projects: view ? [view] : [] })}\n`
        : describeProject(projectId, view),
    );
    return ExitCode.Ok;
  }
  const [defaultSendsPerHour, views] = await Promise.all([followUps.defaultBudget(), followUps.projectBudgets()]);
  const header =
    defaultSendsPerHour === null
      ? "Default for every project: the workers' AGENT_SENDS_PER_PROJECT_PER_HOUR (80 unless set).\n"
      : `Default for every project: ${defaultSendsPerHour} sends per hour (set with budget set).\n`;
  const body =
    views.length === 0
      ? 'No project has sent in the last hour or has a budget of its own.\n'
      : views.map((view) => describeProject(view.projectId, view)).join('');
  io.out(json ? `${JSON.stringify({ defaultSendsPerHour, projects: views })}\n` : header + body);
  return ExitCode.Ok;
}

function describeProject(projectId: string, view: ProjectView | null): string {
  if (view === null) return `${projectId}: nothing sent in the last hour; the workers' default budget applies.\n`;
  const window = view.windowMs === 3_600_000 ? 'hour' : roughDuration(view.windowMs);
  const lines = [
    `${projectId}: ${view.sentInWindow} of ${view.limit} sends used in the last ${window} (${view.limitSetForProject ? 'set for this project' : "the workers' default"})`,
  ];
  if (view.refusal) lines.push(`  ${refusalLine(projectId, view.refusal, Date.now())}`);
  if (view.nextSlotAt)
    lines.push(
      `  next slot ${utcClock(view.nextSlotAt)} UTC (in ${roughDuration(Math.max(Date.parse(view.nextSlotAt) - Date.now(), 0))})`,
    );
  if (view.waitingForBudget.length > 0) lines.push(`  waiting for a slot: ${view.waitingForBudget.length}`);
  for (const lane of view.lanes) {
    if (lane.waiting.length > 0)
      lines.push(`  job ${lane.jobId}: ${lane.holder ?? 'nobody'} holds it; ${lane.waiting.length} waiting behind`);
  }
  return `${lines.join('\n')}\n`;
}
