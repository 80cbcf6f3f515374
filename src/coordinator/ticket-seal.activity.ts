/**
 * Sealed tickets: the name a follow-up's messages to and from its coordinator carry. A ticket is the follow-up chain's
 * first run id (which anyone who can list workflows reads) and a seal: an HMAC of the workflow id and that run id under
 * a key only the workers hold, derived from their agent API key. So a `standing`, `leave` or `slotOutcome` forged
 * under a follow-up's name, or a check-in claiming a ticket our workers never issued, is told apart and changes
 * nothing (docs/HOW-IT-WORKS.md, "Messages"). Worker side only (node:crypto): the workflows compare tickets, never
 * make them.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { chainOfTicket, TICKET_SEPARATOR } from './coordinator-messages';

/** Which use of the API key the ticket key is: a key derived for this alone (AgentApiClient.derivedKey). */
export const TICKET_KEY_PURPOSE = 'agent-followup coordinator tickets v1';

export interface TicketSealer {
  /** The sealed ticket of the follow-up chain `workflowId` whose first run is `firstRunId`. */
  seal(workflowId: string, firstRunId: string): string;
  /** The chain's first run id a ticket names, if our workers sealed it for `workflowId`; else null. */
  open(workflowId: string, ticket: string): string | null;
}

export function createTicketSealer(key: Buffer): TicketSealer {
  const sealOf = (workflowId: string, firstRunId: string) =>
    createHmac('sha256', key).update(`${workflowId}\u0000${firstRunId}`).digest('base64url').slice(0, 32);
  return {
    seal: (workflowId, firstRunId) => `${firstRunId}${TICKET_SEPARATOR}${sealOf(workflowId, firstRunId)}`,
    open(workflowId, ticket) {
      const firstRunId = chainOfTicket(ticket);
      const given = Buffer.from(ticket.slice(firstRunId.length + TICKET_SEPARATOR.length));
      const expected = Buffer.from(sealOf(workflowId, firstRunId));
      return given.length === expected.length && timingSafeEqual(given, expected) ? firstRunId : null;
    },
  };
}
