/**
 * The protocol between a project's coordinator and its follow-ups, both ways (every message is checked on arrival by
 * coordinator-messages.ts), and how the coordinator is started: plain definitions the follow-ups, their activities
 * and the client share without loading the workflow SDK.
 */
import { queryNamed, signalNamed, updateNamed } from '../kernel/message-definitions';
import type { BudgetRequest } from '../kernel/send-budget-rule';
import type { CheckInAnswer, EnterRequest, ProjectView, SlotOutcome, StandingNews } from './project-coordination';

/**
 * To a project's coordinator, by update-with-start from the follow-up's check-in: take (or keep) the follow-up's place
 * in its job's lane and ask for a send slot. The answer is its standing. An update, not a signal: the coordinator's
 * validator refuses a malformed check-in, and one that would grow its run past what it keeps, before anything is
 * written to history; the sender tries again later (back-pressure a signal cannot give).
 */
export const enterUpdate = updateNamed<CheckInAnswer, [EnterRequest]>('enter');

/** To a coordinator: a follow-up is done with its job, or gives up waiting (with its check-in's ticket, always). */
export const leaveSignal = signalNamed<[{ workflowId: string; ticket: string }]>('leave');

/**
 * To a coordinator: what became of a slot it granted. Unsent, it does not count; a 429 takes it out of the window and
 * pauses every send of the project until a probe is accepted; an accepted probe ends the pause, and an accepted send
 * the grant asked to hear of (past the window's first sends) lets the next one go.
 */
export const slotOutcomeSignal = signalNamed<[SlotOutcome]>('slotOutcome');

/**
 * To a coordinator: the project's own budget (sends per hour, whole, at most the vendor's 100 unless the signal carries
 * `aboveVendorLimit: true`), or null to follow the workers' default again. To the budget defaults (budget-defaults.ts),
 * the same message sets every project's budget unless set for the project (null: the workers' setting again); what
 * they hold is read from their memo (DEFAULT_BUDGET_MEMO_KEY), not by query, so workers read it without a worker.
 */
export const setBudgetSignal = signalNamed<[BudgetRequest]>('setBudget');

// The messages a coordinator sends its follow-ups (checked by the follow-up with coordinator-messages.ts):

/**
 * To a follow-up: its standing, in the shape of a check-in's answer, with the ticket of its check-in: the job is its
 * turn (`standing`, maybe with a send slot), or what it waits for (`notice`: for whom, or for the budget).
 */
export const standingSignal = signalNamed<[StandingNews]>('standing');

/** The coordinator as it stands: budget, use of the window, lanes. */
export const projectQuery = queryNamed<ProjectView>('project');

export interface CoordinatorStart {
  projectId: string;
  /**
   * Sends per hour until the coordinator's first confirmed check-in reads the workers' default (no slot is granted
   * before), or `budget set` says otherwise: a starter's figure never governs a send.
   */
  sendsPerHour: number;
  /** The window's length: an hour, as the vendor counts; shorter only in tests. */
  windowMs?: number;
  /** Sends of a window that go at once before answers are awaited (SENDS_AT_ONCE); higher only in tests. */
  sendsAtOnce?: number;
}

/** The coordinator's workflow as its starters see it (the check-in starts it with its first `enter`). */
export type ProjectCoordinatorWorkflow = (start: CoordinatorStart, ...continued: unknown[]) => Promise<ProjectView>;
