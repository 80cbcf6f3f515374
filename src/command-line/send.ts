/** `agent-followup send`: start a follow-up (or attach to the same one), and with --wait follow it to its end. */
import type { Command } from 'commander';
import {
  checkFollowUpInput,
  checkFollowUpWorkflowId,
  FollowUpNotSentError,
  type FollowUpClient,
  type SendAnswer,
  maxPromptLengthFromEnv,
  type StartedFollowUp,
  roughDuration,
  inspectFollowUpInput,
  optionDifferences,
} from '../index';
import type { FollowUpRequest } from '../index';
import {
  addFollowUpInputOptions,
  buildInput,
  strayArgumentError,
  type FollowUpInputOptions,
} from './follow-up-options';
import { checkWorkflowIdArgument, ExitCode, type CliContext, type CliIo, examplesOf } from './io';
import { exitCodeFor } from './outcome-codes';
import { followUpReport } from './json-output';
import { endReport, waitForEnd } from './follow-to-end';
import { paint } from './terminal';
import { noWorkerWarning } from './workers';

interface SendOptions extends FollowUpInputOptions {
  wait?: boolean;
  waitSent?: boolean;
  json?: boolean;
  workflowId?: string;
}

export function registerSend(program: Command, ctx: CliContext): void {
  addFollowUpInputOptions(program.command('send'))
    .summary('send a follow-up message to an agent job, and with --wait follow the job to its end')
    .description(
      'Sends the instruction to the job once and follows the job until it is completed, archived or failed. The same ' +
        'project, job and prompt always map to the same workflow id, so running it again attaches instead of sending twice.',
    )
    .usage('--project ID --job ID (--prompt TEXT | --prompt-file PATH) [options]')
    .option('--wait', 'wait for the job to end and print the final job (the exit code says how it ended)')
    .option(
      '--wait-sent',
      'wait until the message is sent, or say why not yet (queued for the budget or behind another follow-up, ' +
        'reconciling); a follow-up that ends before sending exits with its code',
    )
    .option('--json', 'print one JSON object instead of text')
    .option(
      '--workflow-id <id>',
      'use this id instead of the deterministic one (to send the same prompt again on purpose); a taken id attaches only ' +
        "to a follow-up with the same project, job and prompt; ids starting with 'agent-followup-project/' are reserved",
    )
    .allowExcessArguments()
    .addHelpText(
      'after',
      examplesOf([
        'agent-followup send --project proj-1 --job job-7 --prompt "Also add tests" --wait',
        'agent-followup send --project proj-1 --job job-7 --prompt-file review.md --json',
        'agent-followup send --project proj-1 --job job-7 --prompt "Rebase on main" --wait-sent --timeout 2h',
      ]),
    )
    .action(async (options: SendOptions, command: Command) => {
      ctx.exitCode = await send(options, command.args, ctx.io);
    });
}

async function send(options: SendOptions, extra: string[], io: CliIo): Promise<number> {
  if (extra.length > 0) throw strayArgumentError(extra, options);
  const input = buildInput(options);
  if (options.workflowId !== undefined) checkWorkflowIdArgument(options.workflowId, '--workflow-id');
  // Validate before connecting: bad input never reaches Temporal.
  const given = checkFollowUpInput(input, maxPromptLengthFromEnv(io.env));
  if (options.workflowId !== undefined) checkFollowUpWorkflowId(options.workflowId);
  const followUps = await io.connect();
  try {
    let started: StartedFollowUp;
    try {
      started = await followUps.start(input, {
        workflowId: options.workflowId,
        ...(options.waitSent ? { waitFor: 'sent' as const } : {}),
      });
    } catch (error) {
      if (!(error instanceof FollowUpNotSentError)) throw error;
      // Ended before sending (job not found, key refused, timed out): said as `status` would, with its exit code.
      const outcome = await followUps.outcome(error.workflowId);
      const { workflowId } = error;
      if (options.json)
        io.out(`${JSON.stringify(await endReport(followUps, workflowId, { workflowId, attached: false }))}\n`);
      else io.err(`${paint(io, 'red', `agent-followup: ${error.message}`)}\n`);
      return exitCodeFor(outcome);
    }
    if (started.send && !options.json) io.err(`${describeSend(started.workflowId, started.send)}\n`);
    if (started.attached) {
      io.err(`${reuseNotice(started)}\n`);
      for (const line of await attachedWarnings(followUps, started.workflowId, given)) io.err(`${line}\n`);
    }
    const idle = await noWorkerWarning(followUps);
    if (idle) io.err(`${idle}\n`);
    if (!options.wait) return await printStarted(followUps, started, Boolean(options.json), io);
    if (!options.json) {
      io.err(
        `${started.attached ? 'Attached to' : 'Started'} follow-up ${started.workflowId}; waiting for the job to end (Ctrl-C stops waiting, not the follow-up)\n`,
      );
    }
    io.waitingOn?.(started.workflowId);
    try {
      return await waitForEnd(followUps, started.workflowId, started, Boolean(options.json), io, idle !== null);
    } finally {
      io.waitingOn?.(null);
    }
  } finally {
    await followUps.close();
  }
}

/** Without --wait: the id, to follow it with (--json: the report of the start). */
async function printStarted(
  followUps: FollowUpClient,
  started: StartedFollowUp,
  json: boolean,
  io: CliIo,
): Promise<number> {
  if (json) {
    const report = followUpReport(await followUps.status(started.workflowId, { progress: false }), started);
    io.out(
      `${JSON.stringify({ ...report, progressUnavailable: report.outcome ? null : 'send without --wait reports the start only; ask agent-followup status' })}\n`,
    );
  } else {
    io.out(
      `${started.attached ? 'Attached to the existing' : 'Started'} follow-up ${started.workflowId}\n` +
        `Follow it with: agent-followup status ${started.workflowId}\n`,
    );
  }
  return ExitCode.Ok;
}

/** One line for `--wait-sent`: how the send stands. */
function describeSend(workflowId: string, send: SendAnswer): string {
  switch (send.state) {
    case 'sent':
      return `Sent at ${send.sentAt}${send.job ? ` (the job is ${send.job.status})` : ''}: follow-up ${workflowId}`;
    case 'queued': {
      const why = {
        budget: "behind the project's send budget",
        lane: 'behind another follow-up to the same job',
        'job-busy': 'until the job finishes its earlier work',
        retry: 'before another attempt (the API did not take the last one)',
      }[send.reason];
      const place = send.position !== null ? `, ${ordinal(send.position)} in line` : '';
      const next = send.nextSlotAt !== null ? `; it can go at ${send.nextSlotAt}` : '';
      return `Queued ${why}${place}${next}: follow-up ${workflowId} sends it then`;
    }
    case 'reconciling':
      return `Sent, but the answer was lost: follow-up ${workflowId} is reading the job to see whether it arrived`;
    case 'unanswered':
      return `Started follow-up ${workflowId}, but no worker said within ${send.timeoutMs / 1000}s whether it was sent`;
  }
}

function ordinal(position: number): string {
  const suffix =
    position % 100 >= 11 && position % 100 <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][position % 10] ?? 'th');
  return `${position}${suffix}`;
}

/** When `send` attached to a follow-up already under way: which of its options differ from the ones given now. */
async function attachedWarnings(
  followUps: FollowUpClient,
  workflowId: string,
  given: FollowUpRequest,
): Promise<string[]> {
  const checked = inspectFollowUpInput(await followUps.inputOf(workflowId));
  if (!checked.ok) return [];
  const differences = optionDifferences(given, checked.request);
  if (differences.length === 0) return [];
  return [
    `warning: attached to follow-up ${workflowId}, already under way with the same project, job and prompt; it keeps ` +
      `its own options, and these differ: ${differences.join('; ')}. To send with these options, wait for it to end ` +
      'or pass --workflow-id to send the prompt again.',
  ];
}

/** Said on stderr whenever `send` attached instead of starting: nothing was sent this time, and what it is waiting on. */
function reuseNotice(started: StartedFollowUp): string {
  const since = started.startedAt
    ? ` was started ${roughDuration(Math.max(0, Date.now() - Date.parse(started.startedAt)))} ago (${started.startedAt})`
    : ' was started earlier';
  const state =
    started.executionStatus === 'RUNNING'
      ? 'and is still running'
      : started.executionStatus
        ? `and has ended (${started.executionStatus})`
        : '';
  return (
    `No new message was sent: follow-up ${started.workflowId}, with the same project, job and prompt,${since} ${state}. ` +
    'This command follows that one; to send the same prompt again on purpose, pass a new --workflow-id.'
  );
}
