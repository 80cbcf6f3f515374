/**
 * The answer to "has it been sent?" (the `sendAnswer` update behind `start(..., { waitFor: 'sent' })`), from what the
 * follow-up shows. Pure and workflow-safe: null while it cannot say yet (checking in, reading the job, the send in
 * flight), so the update waits for the next change.
 */
import type { AgentJob } from '../../kernel/agent-job';
import type { FollowUpProgress, SendAnswer } from '../../kernel/types';

export function sendAnswerOf(
  progress: Pick<FollowUpProgress, 'phase' | 'queue' | 'sentAt'>,
  job: AgentJob | null,
  retryAtMs: number | null,
): SendAnswer | null {
  if (progress.sentAt !== null) return { state: 'sent', sentAt: progress.sentAt, job };
  if (retryAtMs !== null) {
    return { state: 'queued', reason: 'retry', position: null, nextSlotAt: new Date(retryAtMs).toISOString() };
  }
  switch (progress.phase) {
    case 'queued': {
      const place = progress.queue;
      if (place === null) return null;
      return place.reason === 'lane'
        ? { state: 'queued', reason: 'lane', position: place.ahead + 1, nextSlotAt: null }
        : { state: 'queued', reason: 'budget', position: place.ahead + 1, nextSlotAt: place.nextSlotAt };
    }
    case 'waiting-for-idle':
      return { state: 'queued', reason: 'job-busy', position: null, nextSlotAt: null };
    case 'reconciling':
      return { state: 'reconciling' };
    default:
      return null;
  }
}
