/**
 * The words our pages and the CLI share for a wait: why a follow-up is queued, a budget that cannot free in time, a
 * project the API refused, times of day and rough durations. Pure: the follow-up's and the coordinator's Web UI
 * details and the CLI's lines say the same thing in the same words.
 */
import { formatMs } from './duration';
import type { FollowUpProgress } from './types';

/** How old a budget count may be and still be said as "now". */
const FRESH_COUNT_MS = 5_000;

/**
 * Why a queued follow-up waits, in words: "waiting behind 2 follow-ups to job J", or "waiting for the project's send
 * budget: 80 of 80 sent in the last hour, next slot 14:05:07 UTC (in 3m12s)". `nowMs` makes the relative time; a
 * text that stays up while time passes (the Web UI's details) says when the count was made even while it is fresh.
 */
export function queuedLine(
  progress: Pick<FollowUpProgress, 'queue' | 'jobId' | 'projectId'>,
  nowMs: number,
  options: { stays?: boolean } = {},
): string {
  const queue = progress.queue;
  if (queue === null) return `Checking in with the coordinator of project ${progress.projectId}`;
  if (queue.reason === 'lane') return `Waiting behind ${plural(queue.ahead, 'follow-up')} to job ${queue.jobId}`;
  if (queue.refusedSince !== undefined) {
    const refusal = { since: queue.refusedSince, nextProbeAt: queue.nextSlotAt };
    const ahead = queue.ahead > 0 ? `; ${plural(queue.ahead, 'follow-up')} ahead` : '';
    return `${refusalLine(progress.projectId, refusal, nowMs)}${ahead}`;
  }
  const window = queue.windowMs === 3_600_000 ? 'hour' : formatMs(queue.windowMs);
  let line = `Waiting for the project's send budget: ${queue.sentInWindow} of ${queue.limit} sent in the last ${window}`;
  if (queue.nextSlotAt !== null) {
    const atMs = Date.parse(queue.nextSlotAt);
    line += `, next slot ${utcClock(queue.nextSlotAt)} UTC (in ${roughDuration(Math.max(atMs - nowMs, 0))})`;
  }
  if (queue.ahead > 0) line += `; ${plural(queue.ahead, 'follow-up')} ahead`;
  // Counts from a while ago say when they were true: sends go on while this one waits, and nobody is told of each.
  const { countedAt } = queue;
  if (countedAt !== undefined && (options.stays || nowMs - Date.parse(countedAt) >= FRESH_COUNT_MS))
    line += ` (counted ${utcClock(countedAt)} UTC)`;
  return line;
}

/**
 * A wait for the send budget that cannot end in time: the project's next free slot comes after this follow-up's
 * deadline, so it will time out without sending. Said with what would change that, since nothing the follow-up does
 * can. Only the certain case: with follow-ups ahead, a slot before the deadline may still go to them.
 */
export function budgetPastDeadline(
  progress: Pick<FollowUpProgress, 'queue' | 'deadline' | 'projectId'>,
): string | null {
  const { queue, deadline } = progress;
  if (queue?.reason !== 'budget' || queue.nextSlotAt === null || deadline === null) return null;
  // A probe after the deadline is no budget's doing, and a probe may be taken sooner than the API's window frees.
  if (queue.refusedSince !== undefined) return null;
  if (Date.parse(queue.nextSlotAt) <= Date.parse(deadline)) return null;
  return (
    `The project's next send slot comes after this follow-up's deadline (${deadline}): it will time out without ` +
    `sending. To send it, raise the project's budget (\`agent-followup budget set --project ${progress.projectId} ` +
    "--sends-per-hour N`, at most the vendor's 100 per hour) or start it again with a longer `--timeout`."
  );
}

/**
 * A project whose sends the API refused (429), as `budget show`, `status` and the Web UI say it: "The agent API
 * refused sends for project P since 14:02:11 UTC; next probe 14:03:11 UTC (in 45s)".
 */
export function refusalLine(
  projectId: string,
  refusal: { since: string; nextProbeAt: string | null },
  nowMs: number,
): string {
  const next =
    refusal.nextProbeAt === null
      ? 'a probe send awaits its answer'
      : `next probe ${utcClock(refusal.nextProbeAt)} UTC (in ${roughDuration(Math.max(Date.parse(refusal.nextProbeAt) - nowMs, 0))})`;
  return `The agent API refused sends for project ${projectId} since ${utcClock(refusal.since)} UTC; ${next}`;
}

/** The time of day of an ISO 8601 instant, as status lines show it ("12:01:05"; they add " UTC"). */
export function utcClock(iso: string): string {
  return iso.slice(11, 19);
}

/** "3m12s", "1h2m", "45s": to the second, for people. */
export function roughDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${seconds % 60 ? `${seconds % 60}s` : ''}`;
  return `${Math.floor(minutes / 60)}h${minutes % 60 ? `${minutes % 60}m` : ''}`;
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
