/**
 * The follow-up's live state as Markdown for the Web UI's "Current details" (set from workflow code with
 * `setCurrentDetails`, so it is served by the worker and adds nothing to history). Pure: workflow code imports it.
 */
import { isTerminal } from '../../kernel/agent-job';
import { formatMs } from '../../kernel/duration';
import { nextPollAt, type PollSchedule } from '../../kernel/poll-schedule';
import type { FollowUpProgress } from '../../kernel/types';
import { budgetPastDeadline, plural, queuedLine, utcClock } from '../../kernel/words';

const PHASE_TITLES: Record<FollowUpProgress['phase'], string> = {
  queued: 'Queued',
  starting: 'Starting',
  'waiting-for-idle': 'Waiting for the job to finish its earlier work before sending',
  sending: 'Sending the follow-up',
  reconciling: 'Checking whether an interrupted send arrived',
  waiting: 'Waiting for the job to end',
  finished: 'Finished',
  'timed-out': 'Timed out',
  cancelled: 'Cancelled',
  failed: 'Failed',
};

const WAITING_FOR: Record<NonNullable<FollowUpProgress['waitingFor']>, string> = {
  work: '',
  settle: ' (not yet seen working on this message: waiting out the settle window)',
  confirmation: ' (reading it once more: it looks exactly as before the send)',
};

/** The schedule of the wait under way (whoever reads for it), and the workflow's time when the details are written. */
export interface ReadPlan {
  schedule: PollSchedule;
  nowMs: number;
}

export function renderProgressDetails(progress: FollowUpProgress, plan: ReadPlan | null = null): string {
  if (progress.phase === 'queued') return renderQueued(progress);
  const unconfirmed = endedUnconfirmed(progress);
  const failedWithReason = progress.phase === 'failed' && progress.lastError !== null;
  const watchedAndFailing = isWatchedAndFailing(progress);
  // The UI shows this in a short fixed-height panel: what an operator acts on comes first, the read count last.
  const lines = [headline(progress, unconfirmed), ''];
  // Last and next read right under the headline: the panel is short, and they are what a waiting follow-up is about.
  const reads = plan && WAITING_PHASES.has(progress.phase) ? readsLine(progress, plan) : null;
  if (reads) lines.push(reads);
  if (progress.watcherId) {
    lines.push(
      `- Read by the job watcher \`${progress.watcherId}\` (no activity of its own); live figures, failed reads and the reads that change nothing: \`agent-followup status\`, or the watcher's Update \`watchFigures\` with this id`,
    );
  }
  if (progress.lastError && !failedWithReason && !watchedAndFailing) {
    // Errors as errors: an operator must tell "the API is failing" from "the agent is working" at a glance. The first
    // bullet, in bold: the panel is short, and a paragraph of its own pushed the deadline and reads out of view.
    lines.push(
      `- **Calls to the agent API ${FINAL_PHASES.has(progress.phase) ? 'were' : 'are'} failing${progress.errorsSince ? ` since ${utcClock(progress.errorsSince)} UTC` : ''}**: ${progress.lastError}`,
    );
  }
  if (progress.prLink) {
    lines.push(
      `- Pull request${unconfirmed ? " on the job (not confirmed as this follow-up's)" : ''}: ${progress.prLink}`,
    );
  }
  if (progress.outcome) lines.push(`- Outcome: \`${progress.outcome}\` (search attribute AgentFollowUpOutcome)`);
  if (progress.sentAt) {
    lines.push(
      `- Sent: ${progress.sentAt}${DELIVERY_NOTE[progress.delivery ?? 'response']}, ${plural(progress.sendAttempts, 'attempt')}`,
    );
  } else if (progress.sendAttempts > 0) {
    lines.push(`- Send attempts so far: ${progress.sendAttempts}`);
  }
  if (progress.deadline && !FINAL_PHASES.has(progress.phase)) lines.push(`- Gives up at: ${progress.deadline}`);
  // Where the reads that change nothing are counted: the pending poll activity, or the watcher (see `status`).
  const where = progress.watcherId
    ? 'reads that change nothing: `agent-followup status`'
    : progress.leftWatchedWait && FINAL_PHASES.has(progress.phase)
      ? "its watcher's reads of the wait it left unanswered are not counted"
      : 'polls that change nothing: see Pending Activities';
  lines.push(
    `- Reads reported: ${progress.polls}${progress.runs > 1 ? `, over ${progress.runs} runs (continued as new)` : ''} (${where})`,
  );
  return lines.join('\n');
}

/**
 * Stopped (cancelled, timed out) on an ended job it had not yet confirmed as its own, inside the settle window: the
 * job's ending and its pull request may be earlier work's, so they are not shown as this follow-up's result.
 */
function endedUnconfirmed(progress: FollowUpProgress): boolean {
  return (
    (progress.phase === 'cancelled' || progress.phase === 'timed-out') &&
    progress.lastStatus !== null &&
    isTerminal(progress.lastStatus)
  );
}

/**
 * Watched by a shared watcher, the follow-up has no pending activity to show failed attempts: failing reads are the
 * headline, or a healthy wait would look the same as one the API fails.
 */
function isWatchedAndFailing(progress: FollowUpProgress): boolean {
  return Boolean(progress.watcherId) && progress.phase === 'waiting' && progress.lastError !== null;
}

/** The first line: a failure's own reason, failing reads, or the phase and the job as last read. */
function headline(progress: FollowUpProgress, unconfirmed: boolean): string {
  const status = `\`${progress.lastStatus}\`${progress.lastStatusUnknown ? ' (undocumented)' : ''}`;
  const job = `job \`${progress.jobId}\` in project \`${progress.projectId}\``;
  if (progress.phase === 'failed' && progress.lastError !== null) {
    const read =
      progress.lastStatus !== null
        ? `was last read as ${status}`
        : progress.sentAt === null
          ? 'was not sent the message'
          : 'was not read after the message';
    return `**Failed**: ${progress.lastError}\n\nThe ${job} ${read}.`;
  }
  if (isWatchedAndFailing(progress)) {
    const since = progress.errorsSince ? ` since ${utcClock(progress.errorsSince)} UTC` : '';
    const count = typeof progress.failedReads === 'number' ? `, ${progress.failedReads}+ reads failed` : '';
    return `**Reading the job fails${since}${count}**: ${progress.lastError}\n\nStill waiting for the ${job} to end; last read as ${status}.`;
  }
  // Only reads after this follow-up's message are shown: before it, the job's status is that of earlier work.
  const state =
    progress.lastStatus !== null
      ? unconfirmed
        ? ` was last read as ${status}, not confirmed as this follow-up's result`
        : ` is ${status}${awaitedConfirmation(progress)}`
      : progress.sentAt === null
        ? ", before this follow-up's message"
        : ', not read since the message';
  return `**${PHASE_TITLES[progress.phase]}**: ${job}${state}.`;
}

/**
 * The last read told to the follow-up and the next ones its wait's schedule plans: three points, then the cadence to
 * the deadline. Written when the follow-up last changed, so the cadence stays true however long nothing changes. No
 * reader reads before a planned point (capped points fall on the clock, so waits share a watcher's turn without it);
 * only an overloaded one reads later.
 */
export function readsLine(
  progress: Pick<FollowUpProgress, 'lastReadAt' | 'lastStatus'>,
  plan: ReadPlan,
): string | null {
  const { schedule, nowMs } = plan;
  const next: number[] = [];
  for (let at = nowMs; next.length < 3;) {
    const point = nextPollAt(schedule, at);
    if (point === null) break;
    next.push(point);
    at = point;
  }
  const last = progress.lastReadAt
    ? `Last read told ${utcClock(progress.lastReadAt)} UTC${progress.lastStatus ? ` (\`${progress.lastStatus}\`)` : ''}`
    : 'No read told yet';
  if (next.length === 0) return `- ${last}; no read planned before the deadline`;
  const clock = (ms: number) => utcClock(new Date(ms).toISOString());
  const lastPlanned = next[next.length - 1] as number;
  const after = nextPollAt(schedule, lastPlanned);
  const deadline = `${clock(schedule.deadlineMs)} UTC`;
  // No gap is longer than the cap (the ramp's grow up to it), whatever the schedule's shape: that much always holds.
  const cadence =
    after === null
      ? ''
      : after >= schedule.deadlineMs
        ? `, then ${deadline} (the deadline)`
        : `, then at most ${formatMs(schedule.maxIntervalMs)} apart until ${deadline}`;
  return `- ${last}; next planned as of ${clock(nowMs)}: ${next.map(clock).join(', ')} UTC${cadence}`;
}

/** What an ended job still needs before it is this follow-up's result; nothing while the job is active. */
function awaitedConfirmation(progress: FollowUpProgress): string {
  return progress.waitingFor && progress.lastStatus !== null && isTerminal(progress.lastStatus)
    ? WAITING_FOR[progress.waitingFor]
    : '';
}

function renderQueued(progress: FollowUpProgress): string {
  const why =
    progress.queue?.reason === 'budget' && progress.queue.refusedSince !== undefined
      ? "others' uses count in the vendor's 100 per project per hour too; after a 429 no send of the project goes until one probe is accepted, so the follow-ups waiting meet no 429 of their own."
      : progress.queue?.reason === 'budget'
        ? `at most ${progress.queue.limit} sends per project in any ${progress.queue.windowMs === 3_600_000 ? 'hour' : formatMs(progress.queue.windowMs)}; nothing is sent until a slot is free.`
        : "one follow-up at a time per job, in the order they were started; nothing is sent until it is this one's turn.";
  const tooLate = budgetPastDeadline(progress);
  return [
    `**${queuedLine(progress, Date.now(), { stays: true })}** in project \`${progress.projectId}\`: ${why}`,
    '',
    ...(tooLate ? [`**Will time out first.** ${tooLate}`, ''] : []),
    ...(progress.sendAttempts > 0 ? [`- Send attempts so far: ${progress.sendAttempts}`] : []),
    ...(progress.deadline ? [`- Gives up at: ${progress.deadline}`] : []),
  ].join('\n');
}

const FINAL_PHASES = new Set<FollowUpProgress['phase']>(['finished', 'timed-out', 'cancelled', 'failed']);
const WAITING_PHASES = new Set<FollowUpProgress['phase']>(['waiting', 'waiting-for-idle']);

const DELIVERY_NOTE: Record<NonNullable<FollowUpProgress['delivery']>, string> = {
  response: '',
  reconciled: ' (confirmed by reading the job)',
  'earlier-run': ' (by an earlier run of this follow-up)',
};
