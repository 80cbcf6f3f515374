/** How the commands print follow-ups, their progress and schedules as text. */
import type {
  FollowUpStatus,
  FollowUpProgress,
  FollowUpResult,
  SharedWatchFigures,
  SharedWatchStatus,
  FollowUpOutcome,
  FollowUpScheduleSpecView,
  ScheduledFollowUpRun,
} from '../index';
import { isTerminal, budgetPastDeadline, queuedLine, roughDuration, utcClock } from '../index';

export function describeResult(result: FollowUpResult): string {
  const lines = [
    `Job ${result.job.id} ended ${result.outcome} after ${result.polls} poll(s).`,
    result.prLink
      ? `Pull request: ${result.prLink}`
      : result.outcome === 'completed'
        ? 'No pull request (no files changed).'
        : '',
    JSON.stringify(result.job, null, 2),
  ];
  return `${lines.filter(Boolean).join('\n')}\n`;
}

/** One line of progress (and one of errors); `watch`: its shared watcher's live figures, when `status` asked for them. */
export function describeProgress(
  progress: FollowUpProgress,
  nowMs: number = Date.now(),
  watch?: SharedWatchStatus,
): string {
  if (progress.phase === 'queued') {
    const tooLate = budgetPastDeadline(progress);
    return `  … ${queuedLine(progress, nowMs)}${tooLate ? `\n  ! ${tooLate}` : ''}`;
  }
  const figures = watch?.available ? watch : undefined;
  const polls = progress.polls + (progress.poll?.polls ?? 0) + (figures?.reads ?? 0);
  const status =
    progress.sentAt === null ? null : (progress.poll?.lastStatus ?? figures?.lastRead?.status ?? progress.lastStatus);
  // Before the message the job's status is that of earlier work: it is not this follow-up's to show.
  const shown =
    status !== null
      ? `status ${status}`
      : progress.sentAt === null
        ? 'message not sent yet'
        : 'not read since the message';
  const parts = [`${progress.phase}`, shown, `${polls} poll(s)`];
  // Times for people: how long ago, how soon, how much is left; the ISO times stay in --json.
  if (progress.sentAt) parts.push(`sent ${roughDuration(Math.max(0, nowMs - Date.parse(progress.sentAt)))} ago`);
  // Only an ended job is a result to confirm; while it is active there is nothing to confirm yet.
  if (status !== null && isTerminal(status)) {
    if (progress.waitingFor === 'settle') parts.push("waiting to confirm the result is this follow-up's");
    if (progress.waitingFor === 'confirmation') parts.push('reading the result once more to confirm it');
  }
  const nextPollAt = progress.poll?.nextPollAt ?? figures?.nextReadAt;
  if (nextPollAt) {
    // A time already past is a loop's last heartbeat, not yet refreshed: the poll is under way, so nothing is said.
    const inMs = Date.parse(nextPollAt) - nowMs;
    if (inMs >= 1_000) parts.push(`next poll in ${roughDuration(inMs)}`);
  }
  if (progress.deadline) {
    const leftMs = Date.parse(progress.deadline) - nowMs;
    if (leftMs > 0) parts.push(`${roughDuration(leftMs)} left before the deadline`);
  }
  const failing = failingLine(progress, nowMs, figures);
  return `  … ${parts.join(', ')}${failing ? `\n  ! ${failing}` : ''}`;
}

/**
 * What the progress line says but its moving times: the line told at one fixed clock, so two reads of a follow-up
 * whose state did not change give the same text (piped output prints a line per change of it).
 */
export function progressState(progress: FollowUpProgress, watch?: SharedWatchStatus): string {
  return describeProgress(progress, 0, watch);
}

/**
 * Errors as errors: "reads failing for 3m12s (since 12:01:05 UTC, 14 in a row): HttpError: … HTTP 500". The live
 * figures come from the pending poll activity or the shared watcher; the workflow's own (sends, or reads it was told
 * of) otherwise.
 */
export function failingLine(
  progress: FollowUpProgress,
  nowMs: number = Date.now(),
  watch?: Pick<SharedWatchFigures, 'failing'>,
): string | null {
  const poll = progress.poll;
  const live = poll?.lastError
    ? // The live count is as fresh as the wait's last heartbeat (a loop sends one per 0.8 × its heartbeat timeout).
      {
        since: poll.failingSince ?? progress.errorsSince,
        count: poll.failedReads > 0 ? `, at least ${poll.failedReads} in a row` : '',
        lastError: poll.lastError,
      }
    : watch?.failing
      ? {
          since: watch.failing.since,
          count: `, ${watch.failing.failedReads} in a row`,
          lastError: watch.failing.lastError,
        }
      : null;
  const lastError = live?.lastError ?? progress.lastError;
  if (!lastError) return null;
  const since = live ? live.since : progress.errorsSince;
  const what = live ? 'reads' : 'calls to the API';
  if (since === null) return `last error: ${lastError}`;
  return `${what} failing for ${roughDuration(Math.max(0, nowMs - Date.parse(since)))} (since ${utcClock(since)} UTC${live?.count ?? ''}): ${lastError}`;
}

/** The shared watcher's line of `status`: since when it watches, its last and next read; or why it could not say. */
export function describeWatchLine(watch: SharedWatchStatus, nowMs: number = Date.now()): string {
  if (!watch.available) return `  Watcher ${watch.watcherId}: live figures not available (${watch.reason})`;
  const last = watch.lastRead
    ? `last read ${utcClock(watch.lastRead.at)} UTC (${watch.lastRead.status ?? 'failed'})`
    : 'no read reported yet';
  const next =
    watch.nextReadAt === null
      ? 'no read left before the deadline'
      : `next read ${utcClock(watch.nextReadAt)} UTC${inFrom(watch.nextReadAt, nowMs)}`;
  return `  Watched by ${watch.watcherId} since ${utcClock(watch.watchedSince)} UTC: ${last}, ${next}`;
}

/** " (in 12s)", or nothing when the time has come. */
function inFrom(iso: string, nowMs: number): string {
  const inMs = Date.parse(iso) - nowMs;
  return inMs >= 1_000 ? ` (in ${roughDuration(inMs)})` : ' (due now)';
}

/** `status` as text: Temporal's status, how it ended (type and message when it failed), and what it last knew. */
export function describeStatus(status: FollowUpStatus): string {
  const lines = [`Follow-up ${status.workflowId}: ${status.executionStatus}`];
  const outcome = status.outcome;
  if (outcome && 'result' in outcome) lines.push(describeResult(outcome.result).trimEnd());
  else if (outcome) lines.push(`Outcome: ${outcome.kind} (${outcome.type}): ${outcome.message}`);
  const progress = status.progress;
  if (progress && !(outcome && 'result' in outcome)) {
    const last =
      progress.lastStatus ?? (progress.sentAt === null ? 'not sent the message' : 'not read since the message');
    if (outcome)
      lines.push(
        `Last known: job ${progress.jobId} ${last}, ${polledLine(progress)}${progress.prLink ? `, ${progress.prLink}` : ''}`,
      );
    else lines.push(describeProgress(progress, Date.now(), status.watch));
  }
  if (status.watch) lines.push(describeWatchLine(status.watch));
  if (status.callback) lines.push(describeCallback(status.callback));
  if (status.progressUnavailable) lines.push(`Progress: not available (${status.progressUnavailable})`);
  if (status.lastKnown) {
    const { jobStatus, prLink, poll } = status.lastKnown;
    lines.push(
      `Last known (kept by the server): job status ${jobStatus ?? 'not read yet'}${prLink ? `, ${prLink}` : ''}`,
    );
    // The pending wait, as the server describes it: how many reads, the next one, and what fails.
    if (poll) {
      const next = poll.nextPollAt ? `, next read ${utcClock(poll.nextPollAt)} UTC` : '';
      lines.push(
        `Running wait (kept by the server): ${poll.polls} read(s)${poll.lastStatus ? `, last read ${poll.lastStatus}` : ''}${next}`,
      );
      if (poll.lastError) {
        lines.push(
          `  ! ${poll.failingSince ? `reads failing since ${utcClock(poll.failingSince)} UTC` : 'last read failed'}: ${poll.lastError}`,
        );
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The polls an ended follow-up counted: a watcher tells its reads of a wait only with the wait's answer, so a follow-up
 * that left a watched wait unanswered says its count lacks them (while it ran, `status` added them live).
 */
function polledLine(progress: FollowUpProgress): string {
  return progress.leftWatchedWait
    ? `${progress.polls} poll(s) told to it (its watcher's reads of the wait it left are not counted)`
    : `${progress.polls} poll(s)`;
}

/** One line for the callback of an ended follow-up. */
function describeCallback(callback: NonNullable<FollowUpStatus['callback']>): string {
  switch (callback.state) {
    case 'delivered':
      return `Callback: delivered ${utcClock(callback.deliveredAt)} UTC (HTTP ${callback.status}, attempt ${callback.attempts})`;
    case 'delivering':
      return (
        `Callback: delivering, ${callback.attempts} attempt(s) failed so far` +
        `${callback.nextAttemptAt ? `, next ${utcClock(callback.nextAttemptAt)} UTC` : ''}` +
        `${callback.lastError ? `; last: ${callback.lastError}` : ''}`
      );
    case 'failed':
      return `Callback: not delivered (${callback.reason})`;
  }
}

/** One line for a follow-up that did not end with a job. */
export function describeFailedOutcome(outcome: Exclude<FollowUpOutcome, { result: unknown }>): string {
  return `${outcome.type}: ${outcome.message}`;
}

export function describeSpec(spec: FollowUpScheduleSpecView): string {
  if (spec.every !== undefined)
    return `every ${spec.every}${spec.offset && spec.offset !== '0s' ? ` (offset ${spec.offset})` : ''}`;
  if (spec.cron !== undefined) return `cron "${spec.cron}" in ${spec.timezone}`;
  return `a calendar spec in ${spec.timezone} (not created by agent-followup; see it in the Web UI)`;
}

export function describePolicies(policies: {
  overlap: string;
  catchupWindow: string;
  pauseOnFailure: boolean;
}): string {
  return (
    `overlap ${policies.overlap}, catch-up window ${policies.catchupWindow}, ` +
    (policies.pauseOnFailure ? 'pauses itself when a follow-up fails' : 'keeps running when a follow-up fails')
  );
}

export function describeRun(run: ScheduledFollowUpRun): string {
  const parts = [run.workflowId, run.status];
  if (run.outcome) parts.push(`job ${run.outcome}`);
  if (run.prLink) parts.push(run.prLink);
  if (run.failure) parts.push(`${run.failure.type}: ${run.failure.message}`);
  return parts.join('  ');
}

/**
 * A time in the schedule's own zone, with UTC beside it: "2027-01-04 09:00 Europe/Berlin (08:00Z)". UTC times are
 * printed once, as ISO.
 */
export function timeIn(iso: string, timezone: string): string {
  if (timezone === 'UTC') return iso;
  const date = new Date(iso);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: timezone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(date)
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${timezone} (${iso.slice(11, 16)}Z)`;
}

/** Rows under a header, each column as wide as its widest cell, two spaces apart; the last column is not padded. */
export function alignedTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[header, ...rows].map(line).join('\n')}\n`;
}
