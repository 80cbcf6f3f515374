/** `agent-followup list`: the follow-ups of a project, a job, a state, as Temporal's visibility lists them. */
import { InvalidArgumentError, type Command } from 'commander';
import { checkListFilter, LIST_LIMIT_MAX, LIST_STATES, type ListedFollowUp, type ListState } from '../index';
import { ExitCode, type CliContext, type CliIo, examplesOf } from './io';
import { definedOnly } from './follow-up-options';
import { alignedTable } from './render';

interface ListOptions {
  project?: string;
  job?: string;
  state?: ListState;
  limit?: number;
  json?: boolean;
}

export function registerList(program: Command, ctx: CliContext): void {
  program
    .command('list')
    .summary('list follow-ups: running first, then the latest ended (by project, job, state)')
    .description(
      'One line per follow-up from what Temporal keeps of it (no worker is asked): its id, how it stands or how it ' +
        "ended, its job's last read status and its PR. Follow one with agent-followup watch <id>, or look at it with " +
        'agent-followup status <id>.',
    )
    .option('--project <id>', 'only the follow-ups of this project')
    .option('--job <id>', 'only the follow-ups of this job')
    .option('--state <state>', `running, ended, or one way of ending: ${LIST_STATES.slice(2).join(', ')}`, stateArg)
    .option('--limit <n>', `at most this many (1 to ${LIST_LIMIT_MAX}; default 50)`, limitArg)
    .option('--json', 'print one JSON object instead of text')
    .addHelpText(
      'after',
      examplesOf([
        'agent-followup list',
        'agent-followup list --project proj-1 --state running',
        'agent-followup list --job job-7 --state failed --limit 10 --json',
      ]),
    )
    .action(async (options: ListOptions) => {
      ctx.exitCode = await list(options, ctx.io);
    });
}

function stateArg(value: string): ListState {
  if (!(LIST_STATES as readonly string[]).includes(value))
    throw new InvalidArgumentError(`use one of ${LIST_STATES.join(', ')}.`);
  return value as ListState;
}

function limitArg(value: string): number {
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1 || limit > LIST_LIMIT_MAX)
    throw new InvalidArgumentError(`give a whole number from 1 to ${LIST_LIMIT_MAX}.`);
  return limit;
}

async function list(options: ListOptions, io: CliIo): Promise<number> {
  const filter = definedOnly({
    projectId: options.project,
    jobId: options.job,
    state: options.state,
    limit: options.limit,
  });
  // Checked before connecting, as every command's input: a bad id never reaches Temporal.
  checkListFilter(filter);
  const followUps = await io.connect();
  try {
    const { followUps: listed, more } = await followUps.list(filter);
    if (options.json) {
      io.out(`${JSON.stringify({ followUps: listed, more })}\n`);
      return ExitCode.Ok;
    }
    if (listed.length === 0) {
      io.out('No follow-ups found (one started or ended a moment ago may take a few seconds to be listed).\n');
      return ExitCode.Ok;
    }
    io.out(
      alignedTable(
        ['WORKFLOW ID', 'STATE', 'PROJECT/JOB', 'JOB STATUS', 'PR', 'STARTED (UTC)', 'ENDED (UTC)'],
        listed.map(row),
      ),
    );
    if (more)
      io.out(
        `More follow-ups match than these ${listed.length}: pass --limit (up to ${LIST_LIMIT_MAX}), or narrow with --project, --job or --state.\n`,
      );
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}

function row(followUp: ListedFollowUp): string[] {
  const when = (iso: string | null) => (iso === null ? '-' : `${iso.slice(0, 10)} ${iso.slice(11, 19)}`);
  return [
    followUp.workflowId,
    // A follow-up terminated from outside could not say how it ended: Temporal's word stands for it.
    followUp.outcome ??
      (followUp.executionStatus === 'RUNNING' ? 'running' : followUp.executionStatus.toLowerCase().replace('_', '-')),
    `${followUp.projectId ?? '?'}/${followUp.jobId ?? '?'}`,
    followUp.jobStatus ?? '-',
    followUp.prLink ?? '-',
    when(followUp.startedAt),
    when(followUp.endedAt),
  ];
}
