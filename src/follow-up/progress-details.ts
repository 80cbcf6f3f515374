/**
 * The follow-up's live state as Markdown for the Web UI's "Current details" (set from workflow code with
 * `setCurrentDetails`, so it is served by the worker and adds nothing to history). Pure: workflow code imports it.
 */
import type { FollowUpProgress } from './types';

const PHASE_TITLES: Record<FollowUpProgress['phase'], string> = {
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
  settle: ' (waiting for the settle window: the job was not seen working on this message yet)',
  confirmation: ' (reading it once more: it looks exactly as before the send)',
};

export function renderProgressDetails(progress: FollowUpProgress): string {
  const status =
    progress.lastStatus === null ? 'not read yet' : `\`${progress.lastStatus}\`${progress.lastStatusUnknown ? ' (undocumented)' : ''}`;
  const lines = [
    `**${PHASE_TITLES[progress.phase]}**: job \`${progress.jobId}\` in project \`${progress.projectId}\` is ${status}` +
      `${progress.waitingFor ? WAITING_FOR[progress.waitingFor] : ''}.`,
    '',
    `- Reads reported: ${progress.polls}${progress.runs > 1 ? `, over ${progress.runs} runs (continued as new)` : ''}; ` +
      'polls that change nothing show on the pending poll activity',
  ];
  if (progress.sentAt) {
    lines.push(`- Sent: ${progress.sentAt}${DELIVERY_NOTE[progress.delivery ?? 'response']}, ${plural(progress.sendAttempts, 'attempt')}`);
  } else if (progress.sendAttempts > 0) {
    lines.push(`- Send attempts so far: ${progress.sendAttempts}`);
  }
  if (progress.prLink) lines.push(`- Pull request: ${progress.prLink}`);
  if (progress.deadline && !FINAL_PHASES.has(progress.phase)) lines.push(`- Gives up at: ${progress.deadline}`);
  if (progress.lastError) lines.push(`- Last error: ${progress.lastError}`);
  return lines.join('\n');
}

const FINAL_PHASES = new Set<FollowUpProgress['phase']>(['finished', 'timed-out', 'cancelled', 'failed']);

const DELIVERY_NOTE: Record<NonNullable<FollowUpProgress['delivery']>, string> = {
  response: '',
  reconciled: ' (confirmed by reading the job)',
  'earlier-run': ' (by an earlier run of this follow-up)',
};

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
