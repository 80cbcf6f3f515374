/**
 * The send's decisions, as pure functions: how a failed send leaves the message and whether an ambiguous send arrived
 * (whether a read is the result is kernel/result-rule.ts, which the job's readers share). Kept apart from the workflow
 * so each reads as the tables in docs/RELIABILITY.md and is unit-tested on its own. Workflow-safe (no zod, no I/O).
 */
import { ActivityFailure, ApplicationFailure, CancelledFailure, TimeoutFailure } from '@temporalio/common';
import { isTerminal, sameJobState, type JobState } from '../../kernel/agent-job';
import type { SendFailureDetails } from '../../kernel/types';

/** How a failed single-attempt send leaves the message. */
export type SendFailureKind = 'final' | 'not-delivered' | 'ambiguous';

/**
 * - `final`: the API refused the request for good (bad key, no such job, invalid body), or the follow-up is being
 *   cancelled: nothing more to try;
 * - `not-delivered`: no request left (`requestLeft`), or the API certainly did not process it (429, 408, 503 with
 *   Retry-After, no connection: the HTTP client marks exactly these); sending again is safe;
 * - `ambiguous`: anything else (a timeout after the request left, a broken connection, a 5xx): the message may have
 *   arrived. Unknown failures land here on purpose: guessing "not delivered" sends twice.
 */
export function classifySendFailure(error: unknown): SendFailureKind {
  if (error instanceof CancelledFailure) return 'final';
  if (!(error instanceof ActivityFailure)) return 'ambiguous';
  const cause = error.cause;
  if (cause instanceof CancelledFailure) return 'final';
  if (!requestLeft(error)) return 'not-delivered';
  if (!(cause instanceof ApplicationFailure)) return 'ambiguous';
  const details = cause.details?.[0] as { delivery?: string } | undefined;
  if (details?.delivery === 'ambiguous') return 'ambiguous';
  if (details?.delivery === 'not-delivered') return cause.nonRetryable ? 'final' : 'not-delivered';
  return 'ambiguous';
}

/**
 * Whether the API refused a send with 429 (the HTTP client's `AgentApiRateLimited`; named here as a string so the
 * workflow bundle does not load the client): the project's coordinator pauses every send of the project on it.
 */
export function refusedByRateLimit(error: unknown): boolean {
  return (
    error instanceof ActivityFailure &&
    error.cause instanceof ApplicationFailure &&
    error.cause.type === 'AgentApiRateLimited'
  );
}

/**
 * Whether a failed send may have put a request on the wire. The send activity lets its request leave only after the
 * server acknowledged a heartbeat recording `requestStartedAtMs`, and every failure of its own after that carries
 * the time too. So a failure whose report (the activity's failure details, or a timeout's last heartbeat) has no
 * `requestStartedAtMs` certainly sent nothing: refused before it (`not-sent`), cancelled, never started, or started
 * so late that the server had given up on it first. Any other failure (not from the activity) may have.
 */
export function requestLeft(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return !(error instanceof CancelledFailure);
  const cause = error.cause;
  if (cause instanceof CancelledFailure) return false;
  if (!(cause instanceof ApplicationFailure) && !(cause instanceof TimeoutFailure)) return true;
  const report = sendReport(error);
  return report?.request !== 'not-sent' && typeof report?.requestStartedAtMs === 'number';
}

/** When the failed send's request left, when its report says. */
export function requestStartOf(error: unknown): number | undefined {
  const at = sendReport(error)?.requestStartedAtMs;
  return typeof at === 'number' ? at : undefined;
}

/** What a failed send's own report says about its request: its details, or the last heartbeat of a lost attempt. */
function sendReport(error: unknown): SendFailureDetails | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  const report: unknown =
    cause instanceof ApplicationFailure
      ? cause.details?.[0]
      : cause instanceof TimeoutFailure
        ? cause.lastHeartbeatDetails
        : undefined;
  return typeof report === 'object' && report !== null ? (report as SendFailureDetails) : undefined;
}

export type DeliveryDecision = 'delivered' | 'not-delivered' | 'unknown';

/**
 * How long after a send attempt started a read showing the job unchanged still proves the message was not taken.
 * It assumes an agent needs longer than this to finish a follow-up (real runs take minutes).
 */
export const RECONCILE_TRUST_MS = 30_000;

/** How long after a request left a message it took shows its effect (the job turns `active`) in a read. */
export const RECONCILE_DELAY_MS = 2_000;

/**
 * The pause before reconciliation read `read` (1, 2, …) of a request that left at `startedAtMs`, at `nowMs`. The first
 * read comes once the request is RECONCILE_DELAY_MS old, not that long after the failure was noticed: a send lost with
 * its worker is noticed only at its heartbeat timeout, and a fixed pause then would spend more of the trust window
 * (RECONCILE_TRUST_MS, counted from the request) waiting. Each later read comes RECONCILE_DELAY_MS after the one
 * before, so one lagging read cannot decide. All of them are made in one activity attempt (read-send-outcome.ts).
 */
export function reconcilePauseMs(read: number, startedAtMs: number, nowMs: number): number {
  return read === 1 ? Math.max(0, startedAtMs + RECONCILE_DELAY_MS - nowMs) : RECONCILE_DELAY_MS;
}

/**
 * After a send whose outcome is unknown: did the API take the message? `before` is the idle job read just before the
 * send, `after` a read some seconds after the failure, `readGapMs` the time from the attempt to that read.
 * - it turned `active` → delivered (the agent is working on it);
 * - it ended again with another result (new PR, other status) → delivered (the agent already finished);
 * - it was `archived` (stays archived), or either read shows a status we do not know → unknown;
 * - it stands exactly where it stood, read within RECONCILE_TRUST_MS → not delivered (an accepted message makes the
 *   job `active`, docs/VENDOR-CONTRACT.md "The send operation"); later, the agent could have taken it and finished the same way → unknown.
 */
export function decideDelivery(before: JobState, after: JobState, readGapMs = 0): DeliveryDecision {
  if (!isTerminal(before.status) || before.status === 'archived') return 'unknown';
  if (after.status === 'active') return 'delivered';
  if (!isTerminal(after.status)) return 'unknown';
  if (!sameJobState(before, after)) return 'delivered';
  return readGapMs <= RECONCILE_TRUST_MS ? 'not-delivered' : 'unknown';
}

/**
 * Why the reads after an open send could not decide, as the `FollowUpDeliveryUnknown` message says it: with no read
 * (the policy was not to resend), an unchanged job read past the trust window (in figures: the one case a kill leaves
 * behind when its request never left), or a job the rule cannot judge (archived, an unknown status).
 */
export function whatTheReadsShowed(before: JobState, after: JobState | null, readAfterMs: number | null): string {
  if (!after) return 'the policy is not to resend. ';
  if (readAfterMs !== null && readAfterMs > RECONCILE_TRUST_MS && sameJobState(before, after))
    return (
      `the job was read ${(readAfterMs / 1000).toFixed(1)} s after the request, ${after.status} as before it: past ` +
      `${RECONCILE_TRUST_MS / 1000} s an agent may have taken the message and ended the same way. `
    );
  return `the job (status ${after.status}, before the send ${before.status}) cannot show whether it was taken. `;
}
