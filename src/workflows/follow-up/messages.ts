/**
 * The messages a follow-up takes, as plain definitions its callers share without loading the workflow SDK (the
 * checks of its watcher's answer: watch/watch-answer.ts; of its coordinator's: coordinator/coordinator-messages.ts).
 */
import { queryNamed, signalNamed, updateNamed } from '../../kernel/message-definitions';
import type { AskedRead, FollowUpProgress, ReadTrouble, SendAnswer } from '../../kernel/types';
import type { WatchAnswer } from '../../watch/watch-answer';
import { isObject, isWholeNumber } from '../../kernel/message-checks';

/** Where the follow-up stands: phase, last status, place in a queue, reads, last error. */
export const progressQuery = queryNamed<FollowUpProgress>('progress');

/**
 * To a follow-up: read the job now (the caller knows it changed), instead of at the next point of the schedule. The
 * answer says when the read is due. An update, not a signal: while a read asked for is still due, another ask is the
 * same one, and the validator refuses it (POLL_NOW_COVERED, with that time) before anything is written to history.
 */
export const pollNowUpdate = updateNamed<AskedRead, []>('pollNow');

/**
 * To a follow-up: answer once the send is done or cannot be done now (sent, queued, reconciling), or fail with the
 * follow-up's own failure when it ends before sending. `start(..., { waitFor: 'sent' })` sends it with the start
 * (update-with-start). Takes no arguments; the validator refuses any. When it can answer at once, the validator refuses
 * it with SEND_ANSWERED and the answer in the details: nothing is written, however often it is asked.
 */
export const sendAnswerUpdate = updateNamed<SendAnswer, []>('sendAnswer');

/**
 * To a follow-up, from a reader of its job (its watcher's reader, or its own poll activity): the read that answers its
 * wait (`answer`, from the watcher's reader only; the wait checks it, watch-answer.ts), or that reading the job began
 * to fail (`trouble`), or succeeds again (`trouble: null`).
 */
export const jobReadsSignal = signalNamed<[JobReads]>('jobReads');

export type JobReads = { answer: WatchAnswer } | { trouble: ReadTrouble | null };

/** A `jobReads`: its answer as sent (the wait it names checks it), or its trouble checked; null when malformed. */
export function checkJobReads(value: unknown): { answer: unknown } | { trouble: ReadTrouble | null } | null {
  if (!isObject(value) || 'answer' in value === 'trouble' in value) return null;
  return 'answer' in value ? { answer: value.answer } : checkReadTrouble(value.trouble);
}

/** A trouble: `{ trouble }` (null: reads succeed again), or null when malformed. */
export function checkReadTrouble(value: unknown): { trouble: ReadTrouble | null } | null {
  if (value === null) return { trouble: null };
  if (!isObject(value) || typeof value.since !== 'string' || typeof value.lastError !== 'string') return null;
  const { since, lastError, failedReads } = value;
  if (failedReads !== undefined && !(isWholeNumber(failedReads) && failedReads >= 0)) return null;
  return { trouble: { since, lastError, ...(failedReads !== undefined ? { failedReads } : {}) } };
}
