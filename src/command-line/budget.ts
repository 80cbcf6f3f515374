/** `agent-followup budget show | set`: the per-project send budget every worker of the task queue shares. */
import type { Command } from 'commander';
import type { SendBudget } from '../client';
import { ExitCode, UsageError, type CliContext, type CliIo } from './io';

export function registerBudget(program: Command, ctx: CliContext): void {
  const budget = program
    .command('budget')
    .summary('show or set the per-project send budget shared by every worker (README, "The send budget")')
    .helpCommand(false);
  budget
    .command('show')
    .summary('show the budget of TEMPORAL_TASK_QUEUE')
    .option('--json', 'print one JSON object instead of text')
    .action(async (options: { json?: boolean }) => {
      ctx.exitCode = await show(undefined, Boolean(options.json), ctx.io);
    });
  budget
    .command('set')
    .summary('set the budget (and per-project weights)')
    .option('--sends-per-hour <n>', 'follow-up messages each project may send per hour, across all workers (default 80)')
    .option('--weight <project=w>', 'give one project w times the budget (repeatable; w=1 returns it to the default)', collect, [])
    .option('--json', 'print one JSON object instead of text')
    .action(async (options: { sendsPerHour?: string; weight: string[]; json?: boolean }) => {
      ctx.exitCode = await show(budgetFrom(options.sendsPerHour, options.weight), Boolean(options.json), ctx.io);
    });
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function show(wanted: SendBudget | undefined, json: boolean, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    if (wanted) await followUps.setSendBudget(wanted);
    const now = await followUps.sendBudget();
    io.out(json ? `${JSON.stringify({ taskQueue: followUps.options.taskQueue, budget: now })}\n` : describeBudget(now));
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}

function budgetFrom(raw: string | undefined, weightPairs: string[]): SendBudget {
  if (raw === undefined) throw new UsageError('budget set needs --sends-per-hour N (e.g. 80; the vendor allows 100 per project per hour)');
  const sendsPerProjectPerHour = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(sendsPerProjectPerHour) || sendsPerProjectPerHour <= 0) {
    throw new UsageError(`--sends-per-hour must be a positive number (got '${raw}')`);
  }
  const weights: Record<string, number> = {};
  for (const pair of weightPairs) {
    const at = pair.lastIndexOf('=');
    const weight = Number(pair.slice(at + 1));
    if (at <= 0 || pair.slice(at + 1).trim() === '' || !Number.isFinite(weight) || weight <= 0) {
      throw new UsageError(`--weight must be PROJECT=W with W a positive number, e.g. --weight my-project=2 (got '${pair}')`);
    }
    weights[pair.slice(0, at)] = weight;
  }
  return { sendsPerProjectPerHour, weights };
}

function describeBudget(budget: SendBudget | null): string {
  if (budget === null) return 'No per-project send budget is set: sends are not paced (set one with: agent-followup budget set --sends-per-hour 80)\n';
  const lines = [`Each project may send ${budget.sendsPerProjectPerHour} follow-up message(s) per hour, shared by every worker.`];
  for (const [project, weight] of Object.entries(budget.weights)) lines.push(`  ${project}: weight ${weight} (${budget.sendsPerProjectPerHour * weight} per hour)`);
  return `${lines.join('\n')}\n`;
}
