/**
 * The agent service's contract (seed §2, §4), as zod schemas. This module is the single source of truth for the job
 * shape: the HTTP client, the workflow, the CLI and the simulator all import it. It is pure (no I/O, no Node
 * built-ins) so workflow code may import it too.
 */
import { z } from 'zod';

/** The four statuses the seed names (§3). Anything else is tolerated but never treated as terminal. */
export const KNOWN_JOB_STATUSES = ['active', 'completed', 'archived', 'failed'] as const;
export type KnownJobStatus = (typeof KNOWN_JOB_STATUSES)[number];

/** Statuses after which polling stops (seed §3 rule 1). */
export const TERMINAL_JOB_STATUSES = ['completed', 'archived', 'failed'] as const;
export type TerminalJobStatus = (typeof TERMINAL_JOB_STATUSES)[number];

/** True when polling may stop: the job is `completed`, `archived` or `failed`. */
export function isTerminal(status: string): status is TerminalJobStatus {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

/** True for one of the four statuses the seed documents. */
export function isKnownStatus(status: string): status is KnownJobStatus {
  return (KNOWN_JOB_STATUSES as readonly string[]).includes(status);
}

export const AgentJobSourceSchema = z.looseObject({
  repository: z.string(),
  ref: z.string(),
});

/**
 * An agent job as the API returns it (seed §2.1). Where the seed says "not shown" we are lenient on purpose:
 * `archivedAt` and `prLink` may be absent or null, `status` may be a value the seed does not list (a newer API
 * version could add one; we keep polling rather than fail), and unknown fields are kept so the caller receives the
 * job exactly as the API gave it. `source`, `model` and `createdAt` are required because the seed's response
 * description lists them with no "may be absent".
 */
export const AgentJobSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string().min(1),
  source: AgentJobSourceSchema,
  model: z.string(),
  prLink: z.string().nullable().optional(),
  createdAt: z.string(),
  archivedAt: z.string().nullable().optional(),
});
export type AgentJob = z.infer<typeof AgentJobSchema>;

/** Request body of the send operation (seed §2.3). */
export const FollowUpMessageSchema = z.strictObject({
  prompt: z.string().min(1),
});
export type FollowUpMessage = z.infer<typeof FollowUpMessageSchema>;

/** Names the first thing that broke the contract, without echoing the body (it may be large or sensitive). */
export function describeSchemaProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'the response did not match the job shape';
  const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  return `field '${path}': ${issue.message}`;
}
