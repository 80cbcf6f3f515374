/**
 * The agent service's published contract (docs/VENDOR-CONTRACT.md) as zod schemas: the single source of truth
 * for reading a job body and writing a message body, used by the HTTP client and the simulator. Never imported by
 * workflow code (zod would be evaluated in every cached workflow); the workflow gets the trimmed `AgentJob` of kernel/agent-job.ts.
 */
import { z } from 'zod';
import type { AgentJob } from '../kernel/agent-job';

export { isKnownStatus, isTerminal, KNOWN_JOB_STATUSES, TERMINAL_JOB_STATUSES } from '../kernel/agent-job';
export type { AgentJob, KnownJobStatus, TerminalJobStatus } from '../kernel/agent-job';

/** Longer decision values are not ids, statuses or links: they break the contract. */
const MAX_DECISION_LENGTH = 2_048;
/** Longer informational values are dropped from what we keep (the job is still accepted). */
const MAX_INFO_LENGTH = 2_048;

/** An informational string: kept when it is a reasonable string, dropped otherwise, never a reason to fail. */
const info = z.string().max(MAX_INFO_LENGTH).optional().catch(undefined);

/**
 * A job body. The vendor requires nothing; we require what the workflow decides on: `id` (the right job), `status`,
 * and, when present, a `prLink` and `archivedAt` of the documented types. `source`, `model` and `createdAt` are kept
 * when well-formed and dropped when not; unknown fields are dropped, so a large one never enters workflow state.
 */
export const AgentJobSchema = z.object({
  id: z.string().min(1).max(MAX_DECISION_LENGTH),
  status: z.string().min(1).max(MAX_DECISION_LENGTH),
  source: z
    .object({ repository: info, ref: z.string().max(MAX_INFO_LENGTH).nullable().optional().catch(undefined) })
    .optional()
    .catch(undefined),
  model: info,
  prLink: z.string().min(1).max(MAX_DECISION_LENGTH).nullable().optional(),
  createdAt: info,
  archivedAt: z.string().max(MAX_DECISION_LENGTH).nullable().optional(),
});

/** Parses a job body into the fields we keep, without `undefined` members (they would not survive a payload). */
export function toAgentJob(parsed: z.infer<typeof AgentJobSchema>): AgentJob {
  const job: AgentJob = { id: parsed.id, status: parsed.status, prLink: parsed.prLink ?? null };
  if (parsed.source) {
    const source: NonNullable<AgentJob['source']> = {};
    if (parsed.source.repository !== undefined) source.repository = parsed.source.repository;
    if (parsed.source.ref !== undefined) source.ref = parsed.source.ref;
    job.source = source;
  }
  if (parsed.model !== undefined) job.model = parsed.model;
  if (parsed.createdAt !== undefined) job.createdAt = parsed.createdAt;
  if (parsed.archivedAt !== undefined) job.archivedAt = parsed.archivedAt;
  return job;
}

/** Request body of the send operation (docs/VENDOR-CONTRACT.md, "The send operation"). */
export const FollowUpMessageSchema = z.strictObject({
  prompt: z.string().min(1),
});
export type FollowUpMessage = z.infer<typeof FollowUpMessageSchema>;

/** The vendor's error body for 400, 404 and 429: `{ "error": "a human-readable message" }`. */
export const ErrorBodySchema = z.object({ error: z.string() });

/** Names the first thing that broke the contract, without echoing the body (it may be large or sensitive). */
export function describeSchemaProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'the response did not match the job shape';
  const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
  return `field '${path}': ${issue.message}`;
}
