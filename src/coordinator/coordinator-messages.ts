/**
 * The checks a project coordinator and a follow-up run on every message they take from each other (docs/HOW-IT-WORKS.md,
 * "Messages"). Anyone who may signal a workflow in the namespace can send these by name, so a message is used only
 * after its shape is checked, and a grant or notice only when it carries the ticket of the follow-up's own check-in:
 * a malformed, stale or foreign one changes nothing. Pure and workflow-safe (no zod in the workflow bundle).
 */
import { isCoordinatorWorkflowId } from '../kernel/workflow-ids';
import { isId, isObject, isTime, isWholeNumber } from '../kernel/message-checks';
import { checkBudgetRequest } from '../kernel/send-budget-rule';
export type { BudgetRequest } from '../kernel/send-budget-rule';
import type { CheckInAnswer, EnterRequest, QueueNotice, Said, SlotOutcome, TurnGrant } from './project-coordination';

/** Between a ticket's chain (its first run id) and its seal (ticket-seal.activity.ts). */
export const TICKET_SEPARATOR = '.';

/** The chain a ticket names: its first run id (a ticket without a seal is that alone). */
export function chainOfTicket(ticket: string): string {
  const at = ticket.indexOf(TICKET_SEPARATOR);
  return at < 0 ? ticket : ticket.slice(0, at);
}

/** More earlier follow-ups than a check-in lists (visibility's first page). */
export const MAX_BEFORE = 100;

/** The check-in, or what is wrong with it. */
export function checkEnterRequest(value: unknown): EnterRequest | string {
  if (!isObject(value)) return 'a check-in must be an object';
  // Whatever else it carries (a `defaultLimit`, as check-ins once did) is dropped: no check-in sets the budget.
  const { workflowId, ticket, jobId, startedAtMs, before, deadlineMs, slotFor } = value;
  if (!isId(workflowId) || isCoordinatorWorkflowId(workflowId)) return 'workflowId must be a follow-up workflow id';
  if (!isId(ticket)) return 'ticket must be a non-empty string';
  if (!isId(jobId)) return 'jobId must be a non-empty string';
  if (!isTime(startedAtMs)) return 'startedAtMs must be a time in milliseconds';
  if (!Array.isArray(before) || before.length > MAX_BEFORE || !before.every(isId))
    return `before must list at most ${MAX_BEFORE} workflow ids`;
  if (!isTime(deadlineMs)) return 'deadlineMs must be a time in milliseconds';
  if (slotFor !== null && !isId(slotFor)) return 'slotFor must be an attempt key or null';
  return { workflowId, ticket, jobId, startedAtMs, before: before as string[], deadlineMs, slotFor };
}

/**
 * A `leave`: the follow-up and the ticket of its check-in, always. A leave without the ticket is refused: with the
 * holder's workflow id alone, anyone could hand its job on while its result is not yet read.
 */
export function checkLeave(value: unknown): { workflowId: string; ticket: string } | null {
  if (!isObject(value) || !isId(value.workflowId) || !isId(value.ticket)) return null;
  return { workflowId: value.workflowId, ticket: value.ticket };
}

/**
 * A `slotOutcome`: the follow-up and its sealed ticket, the slot it was granted, what became of it, and the API's
 * Retry-After (only with a 429). The coordinator believes it only under the ticket the slot was granted to.
 */
export function checkSlotOutcome(value: unknown): SlotOutcome | null {
  if (!isObject(value) || !isId(value.workflowId) || !isId(value.ticket) || !isId(value.slot)) return null;
  const { outcome, retryAfterMs } = value;
  if (outcome !== 'unsent' && outcome !== 'accepted' && outcome !== 'refused') return null;
  if (retryAfterMs !== null && !(isTime(retryAfterMs) && outcome === 'refused')) return null;
  return { workflowId: value.workflowId, ticket: value.ticket, slot: value.slot, outcome, retryAfterMs };
}

/** A `setBudget`, or what is wrong with it: the CLI's rule, checked again here (send-budget-rule.ts). */
export const checkSetBudget = checkBudgetRequest;

/**
 * A turn (in a `standing`, or a check-in's answer) for this follow-up's run: its ticket (unique to the follow-up's
 * chain, so it names the follow-up too), and a slot with its lease or none.
 */
export function checkTurn(value: unknown, workflowId: string, tickets: ReadonlySet<string>): TurnGrant | null {
  if (!isObject(value) || typeof value.ticket !== 'string' || !tickets.has(value.ticket)) return null;
  const { slot, sendByMs, tellAnswer } = value;
  if (slot === null && sendByMs === null) return { workflowId, ticket: value.ticket, slot, sendByMs };
  if (!isId(slot) || !isTime(sendByMs)) return null;
  if (tellAnswer !== undefined && typeof tellAnswer !== 'boolean') return null;
  return { workflowId, ticket: value.ticket, slot, sendByMs, ...(tellAnswer ? { tellAnswer } : {}) };
}

/**
 * How far past the follow-up's clock a notice may say it was said. A check-in's answer can be said after the workflow
 * task that reads it began (the check-in runs inside it); a notice said later than this is forged, and, taken, it
 * would hide every true notice until then.
 */
export const SAID_AHEAD_MS = 60_000;

/**
 * A notice (in a `standing`, or a check-in's answer) for this follow-up's run: what it waits for and when it was
 * said (no later than SAID_AHEAD_MS past `nowMs`, the follow-up's clock), carried with its ticket.
 */
export function checkNotice(
  value: unknown,
  ticket: unknown,
  tickets: ReadonlySet<string>,
  nowMs: number,
): QueueNotice | null {
  if (typeof ticket !== 'string' || !tickets.has(ticket) || !isObject(value)) return null;
  const said = checkSaid(value.said);
  if (!said || said.atMs > nowMs + SAID_AHEAD_MS) return null;
  if (!said) return null;
  if (value.reason === 'lane') {
    return isId(value.jobId) && isWholeNumber(value.ahead) && value.ahead >= 0
      ? { reason: 'lane', jobId: value.jobId, ahead: value.ahead, said }
      : null;
  }
  if (value.reason !== 'budget') return null;
  const { sentInWindow, limit, windowMs, nextSlotAtMs, ahead, refusedSinceMs } = value;
  if (![sentInWindow, limit, windowMs, ahead].every((figure) => isWholeNumber(figure) && figure >= 0)) return null;
  if (nextSlotAtMs !== null && !isTime(nextSlotAtMs)) return null;
  if (refusedSinceMs !== undefined && !isTime(refusedSinceMs)) return null;
  return {
    reason: 'budget',
    sentInWindow,
    limit,
    windowMs,
    nextSlotAtMs,
    ahead,
    ...(refusedSinceMs !== undefined ? { refusedSinceMs } : {}),
    said,
  } as QueueNotice;
}

/**
 * A `standing` for this follow-up's run: a ticket of its own check-in, and a turn or a notice (or both) said with it,
 * each as a check-in's answer carries it; null when malformed or not its own.
 */
export function checkStanding(
  value: unknown,
  workflowId: string,
  tickets: ReadonlySet<string>,
  nowMs: number,
): CheckInAnswer | null {
  if (!isObject(value) || typeof value.ticket !== 'string' || !tickets.has(value.ticket)) return null;
  const { ticket } = value;
  const standing = value.standing === null ? null : checkTurn(value.standing, workflowId, tickets);
  const notice = value.notice === null ? null : checkNotice(value.notice, ticket, tickets, nowMs);
  if (value.standing !== null && standing?.ticket !== ticket) return null;
  if (value.notice !== null && notice === null) return null;
  return standing || notice ? { standing, notice } : null;
}

function checkSaid(value: unknown): Said | null {
  if (!isObject(value) || !isTime(value.atMs) || !isWholeNumber(value.n) || value.n < 1) return null;
  return { atMs: value.atMs, n: value.n };
}
