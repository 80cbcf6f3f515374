/**
 * `agent-followup watch`: follow a follow-up that is already under way (started by a service, a schedule, another
 * terminal) to its end: the same progress, final lines and exit codes as `send --wait`, without sending anything.
 */
import type { Command } from 'commander';
import { FOLLOW_UP_WORKFLOW_TYPE } from '../index';
import { checkWorkflowIdArgument, UsageError, type CliContext, type CliIo, examplesOf } from './io';
import { waitForEnd } from './follow-to-end';
import { noWorkerWarning } from './workers';

export function registerWatch(program: Command, ctx: CliContext): void {
  program
    .command('watch')
    .summary('follow a follow-up already under way to its end, as send --wait does (nothing is sent)')
    .description(
      'Shows its progress while it runs and prints the final job once the job ends; the exit code says how it ended, ' +
        'as for send --wait. A follow-up that already ended is printed at once. Ctrl-C stops watching, not the follow-up.',
    )
    .argument('<workflowId>', 'the id send printed, or one from agent-followup list')
    .option('--json', 'print one JSON object at the end instead of text (the shape of status --json)')
    .addHelpText(
      'after',
      examplesOf([
        'agent-followup watch <workflowId>',
        'agent-followup watch "$(agent-followup list --job job-7 --state running --json | jq -r \'.followUps[0].workflowId\')"',
      ]),
    )
    .action(async (workflowId: string, options: { json?: boolean }) => {
      ctx.exitCode = await watch(checkWorkflowIdArgument(workflowId), Boolean(options.json), ctx.io);
    });
}

async function watch(workflowId: string, json: boolean, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const description = await followUps.client.workflow.getHandle(workflowId).describe();
    // Another kind of workflow under the id (a coordinator, a watcher): its result is no job.
    if (description.type !== FOLLOW_UP_WORKFLOW_TYPE)
      throw new UsageError(
        `${workflowId} is a ${description.type} workflow, not a follow-up; list the follow-ups with: agent-followup list`,
      );
    // An ended one needs no worker to be printed.
    const idle = description.status.name === 'RUNNING' ? await noWorkerWarning(followUps) : null;
    if (idle) io.err(`${idle}\n`);
    if (!json)
      io.err(`Watching follow-up ${workflowId} until its job ends (Ctrl-C stops watching, not the follow-up)\n`);
    io.waitingOn?.(workflowId);
    try {
      return await waitForEnd(followUps, workflowId, null, json, io, idle !== null);
    } finally {
      io.waitingOn?.(null);
    }
  } finally {
    await followUps.close();
  }
}
