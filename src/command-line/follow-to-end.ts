/**
 * Following a follow-up to its end, for `send --wait` and `watch`: its progress as it changes, Temporal outages of any
 * length waited out (said once when it goes, once when it is back), and a warning when no worker polls or answers.
 */
import {
  type FollowUpClient,
  NoWorkerAnsweredError,
  PROGRESS_QUERY_DEADLINE_MS,
  type StartedFollowUp,
  TemporalUnreachableError,
} from '../index';
import { ExitCode, type CliIo } from './io';
import { classifyFailure, exitCodeForOutcome } from './outcome-codes';
import { describeProgress, describeResult, progressState } from './render';
import { followUpReport } from './json-output';
import { paint, ProgressLine } from './terminal';
import { noWorkerWarning, unansweredWarning } from './workers';

/** The report of an ended follow-up: the same shape `status --json` prints, with how `send` started it (if it did). */
export async function endReport(followUps: FollowUpClient, workflowId: string, started: StartedFollowUp | null) {
  return followUpReport(await followUps.status(workflowId), started);
}

/**
 * Follows a follow-up to its end (`send --wait`, `watch`): progress on stderr as it changes, the final job (or the
 * report, with --json) on stdout, and the exit code of how it ended. `started`: how `send` started it (null: `watch`).
 */
export async function waitForEnd(
  followUps: FollowUpClient,
  workflowId: string,
  started: StartedFollowUp | null,
  json: boolean,
  io: CliIo,
  warnedIdle: boolean,
): Promise<number> {
  let done = false;
  const progressLine = new ProgressLine(io);
  const outage = new OutageNotice(io, progressLine);
  const reporter = reportProgress(followUps, workflowId, io, progressLine, () => done, json, warnedIdle, outage);
  try {
    const result = await resultThroughOutages(followUps, workflowId, outage, io.progressIntervalMs ?? 2_000);
    done = true;
    await reporter;
    progressLine.end();
    if (json) io.out(`${JSON.stringify(await endReport(followUps, workflowId, started))}\n`);
    else io.out(describeResult(result));
    return exitCodeForOutcome(result);
  } catch (error) {
    done = true;
    await reporter;
    progressLine.end();
    const { code, type, message } = classifyFailure(error);
    // Not the follow-up's own ending (Temporal unreachable, the workflow gone): the CLI's error, as for any command.
    if (code === ExitCode.Error && type === 'Error') throw error;
    if (json) io.out(`${JSON.stringify(await endReport(followUps, workflowId, started))}\n`);
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
        // On a terminal the line is redrawn as its times move; piped (a log, CI), a line is printed only when the
        // follow-up's state changes: a new read, status, phase or error, not "sent 4s ago" becoming "sent 6s ago".
        const key = io.tty ? line : progressState(progress, watch);
        if (!json && key !== last) progressLine.update(ordered);
        last = key;
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
