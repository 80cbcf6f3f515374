/** `agent-followup send`: start a follow-up (or attach to the same one), and with --wait follow it to its end. */
import type { Command } from 'commander';
import {
  checkFollowUpInput,
  checkFollowUpWorkflowId,
  FollowUpNotSentError,
  type FollowUpClient,
  type SendAnswer,
  maxPromptLengthFromEnv,
  NoWorkerAnsweredError,
  PROGRESS_QUERY_DEADLINE_MS,
  type StartedFollowUp,
  TemporalUnreachableError,
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
import { checkWorkflowIdArgument, ExitCode, type CliContext, type CliIo } from './io';
import { classifyFailure, exitCodeFor, exitCodeForOutcome } from './outcome-codes';
import { describeProgress, describeResult } from './render';
import { followUpReport } from './json-output';
import { paint, ProgressLine } from './terminal';
import { noWorkerWarning, unansweredWarning } from './workers';

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
      if (options.json)
        io.out(`${JSON.stringify(await endReport(followUps, { workflowId: error.workflowId, attached: false }))}\n`);
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
    if (!options.wait) {
      if (options.json) {
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
    if (!options.json) {
      io.err(
        `${started.attached ? 'Attached to' : 'Started'} follow-up ${started.workflowId}; waiting for the job to end (Ctrl-C stops waiting, not the follow-up)\n`,
      );
    }
    io.waitingOn?.(started.workflowId);
    try {
      return await waitForEnd(followUps, started, Boolean(options.json), io, idle !== null);
    } finally {
      io.waitingOn?.(null);
    }
  } finally {
    await followUps.close();
  }
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

/** The report of an ended follow-up: the same shape `status --json` prints, with how `send` started it. */
async function endReport(followUps: FollowUpClient, started: StartedFollowUp) {
  return followUpReport(await followUps.status(started.workflowId), started);
}

async function waitForEnd(
  followUps: FollowUpClient,
  started: StartedFollowUp,
  json: boolean,
  io: CliIo,
  warnedIdle: boolean,
): Promise<number> {
  const { workflowId } = started;
  let done = false;
  const progressLine = new ProgressLine(io);
  const outage = new OutageNotice(io, progressLine);
  const reporter = reportProgress(followUps, workflowId, io, progressLine, () => done, json, warnedIdle, outage);
  try {
    const result = await resultThroughOutages(followUps, workflowId, outage, io.progressIntervalMs ?? 2_000);
    done = true;
    await reporter;
    progressLine.end();
    if (json) io.out(`${JSON.stringify(await endReport(followUps, started))}\n`);
    else io.out(describeResult(result));
    return exitCodeForOutcome(result);
  } catch (error) {
    done = true;
    await reporter;
    progressLine.end();
    const { code, type, message } = classifyFailure(error);
    // Not the follow-up's own ending (Temporal unreachable, the workflow gone): the CLI's error, as for any command.
    if (code === ExitCode.Error && type === 'Error') throw error;
    if (json) io.out(`${JSON.stringify(await endReport(followUps, started))}\n`);
    else io.err(`${paint(io, 'red', `agent-followup: ${type}: ${message}`)}\n`);
    return code;
  }
}

/**
 * What `--wait` says of Temporal out of reach: once when it goes (the error names address, namespace and what to
 * check), once when it answers again. Waiting goes on meanwhile: the follow-up itself is safe in Temporal.
 */
class OutageNotice {
  private down = false;
  private backAtMs = Number.NEGATIVE_INFINITY;
  constructor(
    private readonly io: CliIo,
    private readonly progressLine: ProgressLine,
  ) {}

  get isDown(): boolean {
    return this.down;
  }

  /**
   * Down, or back for less than a grace period: a restarted server lists no worker until the workers poll it again,
   * and a query finds none to answer meanwhile. Warnings about workers wait until it has passed.
   */
  get isRecovering(): boolean {
    return this.down || Date.now() - this.backAtMs < WORKERS_BACK_GRACE_MS;
  }

  gone(error: TemporalUnreachableError): void {
    if (this.down) return;
    this.down = true;
    this.progressLine.say(
      paint(
        this.io,
        'yellow',
        `${error.message} Waiting for it to come back (Ctrl-C stops waiting; the follow-up is not affected).`,
      ),
    );
  }

  back(): void {
    if (!this.down) return;
    this.down = false;
    this.backAtMs = Date.now();
    this.progressLine.say('Temporal answers again; following the follow-up on.');
  }
}

/**
 * How long after Temporal answers again the workers get to poll it before `--wait` warns about them: their polls back
 * off while the server is away, and on a loaded machine a worker came back later than 20 s (CI, Node 24).
 */
const WORKERS_BACK_GRACE_MS = 60_000;

/** The follow-up's result, waited for across Temporal outages of any length (Ctrl-C is the way out). */
async function resultThroughOutages(
  followUps: FollowUpClient,
  workflowId: string,
  outage: OutageNotice,
  pauseMs: number,
): Promise<Awaited<ReturnType<FollowUpClient['result']>>> {
  for (;;) {
    try {
      const result = await followUps.result(workflowId);
      outage.back();
      return result;
    } catch (error) {
      if (!(error instanceof TemporalUnreachableError)) throw error;
      outage.gone(error);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

/** Progress lines while waiting (text mode), and a warning whenever no worker polls the task queue any more. */
async function reportProgress(
  followUps: FollowUpClient,
  workflowId: string,
  io: CliIo,
  progressLine: ProgressLine,
  isDone: () => boolean,
  json: boolean,
  warnedIdle: boolean,
  outage: OutageNotice,
): Promise<void> {
  const warn = (text: string) => progressLine.say(paint(io, 'yellow', text));
  let last = '';
  let idle = warnedIdle;
  // Listed workers that do not answer: a worker that died is listed for minutes, so only a query tells.
  let unanswered = false;
  let nextWorkerCheck = Date.now() + (io.workerCheckIntervalMs ?? 15_000);
  while (!isDone()) {
    if (Date.now() >= nextWorkerCheck) {
      nextWorkerCheck = Date.now() + (io.workerCheckIntervalMs ?? 15_000);
      // Undefined when the server could not say (an outage): the workers' state is unknown, not changed. Weighed again
      // once answered: a check that was under way as the server went away is answered by the restarted server, which
      // lists no worker yet.
      const answer = outage.isRecovering ? undefined : await noWorkerWarning(followUps).catch(() => undefined);
      const warning = outage.isRecovering ? undefined : answer;
      if (warning !== undefined) {
        if (warning && !idle && !unanswered) warn(warning);
        if (!warning && idle) progressLine.say('A worker polls the task queue again; the follow-up goes on.');
        idle = warning !== null;
      }
    }
    if (!idle || outage.isDown) {
      // Asked in --json mode too (nothing is printed of it there): the query is how a dead worker shows within 15s.
      const timeoutMs = PROGRESS_QUERY_DEADLINE_MS;
      try {
        const progress = await followUps.progress(workflowId, { timeoutMs });
        outage.back();
        if (unanswered) progressLine.say('A worker answers the follow-up again; it goes on.');
        unanswered = false;
        // A watched wait's reads are the watcher's to tell: the follow-up hears of them only when its job answers.
        const watch =
          progress.watcherId && (progress.phase === 'waiting' || progress.phase === 'waiting-for-idle') && !json
            ? await followUps.watchFigures(workflowId, progress.watcherId)
            : undefined;
        const line = describeProgress(progress, Date.now(), watch);
        // The failing line ("  ! reads failing for …") in red; on a terminal first, since a narrow one cuts the end off.
        const parts = line
          .split('\n')
          .map((text) => (text.startsWith('  !') ? { text, style: 'red' as const } : { text }));
        const ordered = io.tty
          ? [...parts.filter((part) => part.style), ...parts.filter((part) => !part.style)]
          : parts;
        if (!json && line !== last) progressLine.update(ordered);
        last = line;
      } catch (error) {
        if (error instanceof TemporalUnreachableError && !isDone()) outage.gone(error);
        // The server answers (else this would be TemporalUnreachableError); its workers may not have polled it yet.
        if (error instanceof NoWorkerAnsweredError) outage.back();
        if (error instanceof NoWorkerAnsweredError && !outage.isRecovering && !isDone()) {
          if (!unanswered) warn(unansweredWarning(followUps, workflowId, timeoutMs));
          unanswered = true;
        }
        // Otherwise the workflow may be between runs or just finished; the result tells the rest.
      }
    }
    await new Promise((resolve) => setTimeout(resolve, io.progressIntervalMs ?? 2_000));
  }
}
