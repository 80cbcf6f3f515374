/** `agent-followup status`: how a follow-up stands or how it ended, with the exit code of its outcome. */
import type { Command } from 'commander';
import { checkWorkflowIdArgument, ExitCode, type CliContext, type CliIo, examplesOf } from './io';
import { exitCodeFor } from './outcome-codes';
import { followUpReport } from './json-output';
import { describeStatus } from './render';

export function registerStatus(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .summary("show a follow-up's progress, or how it ended")
    .description(
      "While it runs: its phase, the job status it last read, polls and errors (with shared watching, its watcher's live " +
        'figures too: watched since, last read, next read). Once it ended: the final job, or the ' +
        "failure's type and message with what it last knew. The exit code is the outcome's, as for send --wait (0 while running).",
    )
    .argument('<workflowId>', 'the id send printed')
    .option('--json', 'print one JSON object instead of text')
    .addHelpText(
      'after',
      examplesOf([
        'agent-followup status <workflowId>',
        'agent-followup status <workflowId> --json | jq .result.prLink',
      ]),
    )
    .action(async (workflowId: string, options: { json?: boolean }) => {
      ctx.exitCode = await status(checkWorkflowIdArgument(workflowId), Boolean(options.json), ctx.io);
    });
}

async function status(workflowId: string, json: boolean, io: CliIo): Promise<number> {
  const followUps = await io.connect();
  try {
    const found = await followUps.status(workflowId);
    io.out(json ? `${JSON.stringify(followUpReport(found, null))}\n` : describeStatus(found));
    return found.outcome ? exitCodeFor(found.outcome) : ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}
