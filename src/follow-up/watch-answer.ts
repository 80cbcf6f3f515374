/** What a job watcher tells a waiting follow-up (pure types and checks: workflow code imports them). */
import type { AgentJob } from '../agent-api/job';

export type WatchAnswer =
  | {
      round: number;
      kind: 'read';
      job: AgentJob;
      /** When the read was made (watcher's clock). */
      readAtMs: number;
      /** Reads this wait made. */
      polls: number;
      /** A read of this wait showed the job `active`. */
      sawActive: boolean;
    }
  | {
      round: number;
      /** The wait cannot go on: a definite failure (job not found, key refused, contract broken) or a Retry-After past the deadline. */
      kind: 'failure';
      type: string;
      message: string;
      details: unknown[];
      polls: number;
    }
  | {
      round: number;
      /** The watcher's book is full (WATCH_BOOK_LIMIT_BYTES): it keeps nothing of this wait, and the follow-up polls for itself. */
      kind: 'refused';
      polls: number;
    };

export function isWatchAnswer(value: unknown): value is WatchAnswer {
  if (typeof value !== 'object' || value === null) return false;
  const answer = value as Partial<WatchAnswer>;
  if (typeof answer.round !== 'number' || typeof answer.polls !== 'number') return false;
  if (answer.kind === 'read') return typeof answer.job === 'object' && answer.job !== null && typeof answer.readAtMs === 'number';
  if (answer.kind === 'refused') return true;
  return answer.kind === 'failure' && typeof answer.type === 'string' && typeof answer.message === 'string';
}
