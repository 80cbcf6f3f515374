/**
 * The follow-up's live state as Markdown for the Web UI's "Current details" (set from workflow code with
 * `setCurrentDetails`, so it is served by the worker and adds nothing to history). Pure: workflow code imports it.
 */
import type { FollowUpProgress } from './types';

const PHASE_TITLES: Record<FollowUpProgress['phase'], string> = {
  reading: 'Reading the job before sending',
  sending: 'Sending the follow-up',
  reconciling: 'Checking whether an interrupted send arrived',
  polling: 'Following the job',
  finished: 'Finished',
  'timed-out': 'Timed out',
  cancelled: 'Cancelled',
  failed: 'Failed',
};

export function renderProgressDetails(progress: FollowUpProgress): string {
  const status = progress.lastStatus === null ? 'not read yet' : `\`${progress.lastStatus}\`${progress.lastStatusUnknown ? ' (undocumented)' : ''}`;
  const lines = [
    `**${PHASE_TITLES[progress.phase]}**: job \`${progress.jobId}\` in project \`${progress.projectId}\` is ${status}.`,
    '',
    `- Polls: ${progress.polls}${progress.pollErrors > 0 ? ` (${progress.pollErrors} failed)` : ''}` +
      (progress.runs > 1 ? `, over ${progress.runs} runs (continued as new)` : ''),
  ];
  if (progress.sentAt) {
    lines.push(`- Sent: ${progress.sentAt}${progress.delivery === 'reconciled' ? ' (confirmed by reading the job)' : ''}, ${plural(progress.sendAttempts, 'attempt')}`);
  } else if (progress.sendAttempts > 0) {
    lines.push(`- Send attempts so far: ${progress.sendAttempts}`);
  }
  if (progress.prLink) lines.push(`- Pull request: ${progress.prLink}`);
  if (progress.nextPollAt) lines.push(`- Next poll: ${progress.nextPollAt}`);
  if (progress.rateLimitedUntil) lines.push(`- Rate limited until: ${progress.rateLimitedUntil}`);
  if (progress.deadline) lines.push(`- Gives up at: ${progress.deadline}`);
  if (progress.lastError) lines.push(`- Last error: ${progress.lastError}`);
  return lines.join('\n');
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
