/**
 * The agent job as this project keeps it, and the facts about statuses the workflow decides on. Pure and free of zod:
 * workflow code imports it, and every cached workflow pays for what its modules import.
 *
 * The vendor lists no required fields (VENDOR-FACTS.md). We keep only its documented fields, so a large unknown field
 * never reaches workflow state, history or results; schemas.ts turns a response body into this shape.
 */

/** The four statuses the vendor documents (docs/VENDOR-CONTRACT.md, "The job and its statuses"). Anything else is tolerated but never treated as terminal. */
export const KNOWN_JOB_STATUSES = ['active', 'completed', 'archived', 'failed'] as const;
export type KnownJobStatus = (typeof KNOWN_JOB_STATUSES)[number];

/** Statuses after which polling stops (docs/VENDOR-CONTRACT.md, "The job and its statuses"). */
export const TERMINAL_JOB_STATUSES = ['completed', 'archived', 'failed'] as const;
export type TerminalJobStatus = (typeof TERMINAL_JOB_STATUSES)[number];

/** An agent job: the vendor's documented fields, each optional except the two the workflow cannot do without. */
export interface AgentJob {
  id: string;
  status: string;
  source?: { repository?: string; ref?: string | null };
  model?: string;
  /** The pull request; null while active and when no files changed. */
  prLink: string | null;
  createdAt?: string;
  archivedAt?: string | null;
}

/** What a reader can see of a job's progress: the fields a follow-up changes. */
export interface JobState {
  status: string;
  prLink: string | null;
  archivedAt: string | null;
}

/** True when polling may stop: the job is `completed`, `archived` or `failed`. */
export function isTerminal(status: string): status is TerminalJobStatus {
  return (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);
}

/** True for one of the four statuses the vendor documents. */
export function isKnownStatus(status: string): status is KnownJobStatus {
  return (KNOWN_JOB_STATUSES as readonly string[]).includes(status);
}

/** The observable state of a job. */
export function jobState(job: AgentJob | JobState): JobState {
  return { status: job.status, prLink: job.prLink ?? null, archivedAt: job.archivedAt ?? null };
}

/** True when the two show the job in the same observable state (status, pull request, archive time). */
export function sameJobState(a: AgentJob | JobState, b: AgentJob | JobState): boolean {
  return (
    a.status === b.status &&
    (a.prLink ?? null) === (b.prLink ?? null) &&
    (a.archivedAt ?? null) === (b.archivedAt ?? null)
  );
}

/** Whether `value` is a job's state as a message or a checkpoint carries it (what comes from outside is checked so). */
export function isJobState(value: unknown): value is JobState {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { status, prLink, archivedAt } = value as Record<string, unknown>;
  return (
    typeof status === 'string' &&
    (prLink === null || typeof prLink === 'string') &&
    (archivedAt === null || typeof archivedAt === 'string')
  );
}

/**
 * Whether `value` is a job as this project keeps it (the shape schemas.ts makes of a response body), and the job
 * `jobId`: for what reaches workflow code from outside the API client, which zod does not check there.
 */
export function isAgentJobOf(value: unknown, jobId: string): value is AgentJob {
  if (typeof value !== 'object' || value === null) return false;
  const job = value as Record<string, unknown>;
  const optionalString = (field: unknown, nullable: boolean) =>
    field === undefined || typeof field === 'string' || (nullable && field === null);
  return (
    job.id === jobId &&
    typeof job.status === 'string' &&
    job.status.length > 0 &&
    (typeof job.prLink === 'string' || job.prLink === null) &&
    optionalString(job.model, false) &&
    optionalString(job.createdAt, false) &&
    optionalString(job.archivedAt, true) &&
    (job.source === undefined || (typeof job.source === 'object' && job.source !== null))
  );
}

/** A job as the API addresses it: its project and its id. */
export interface JobRef {
  projectId: string;
  jobId: string;
}
