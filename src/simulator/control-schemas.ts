/**
 * Bodies of the simulator's `/_simulator` control routes. Validated so that a chaos script with a typo gets a 400
 * naming the field, instead of a simulator that silently does something else.
 */
import { z } from 'zod';
import { KNOWN_JOB_STATUSES, type KnownJobStatus } from '../agent-api/schemas';
import { FaultRulesSchema, type FaultRule } from './faults';

/** Every outcome a simulated job's follow-ups can end in. */
export const SIMULATED_OUTCOMES = [
  'completed',
  'no-changes',
  'failed',
  'archived',
] as const satisfies readonly SimulatedOutcome[];

/** Body of `POST /_simulator/jobs`. */
export const SimulatedJobSpecSchema: z.ZodType<SimulatedJobSpec> = z.strictObject({
  projectId: z.string().min(1),
  jobId: z.string().min(1),
  status: z.enum(KNOWN_JOB_STATUSES).optional(),
  prLink: z.string().nullable().optional(),
  outcome: z.enum(SIMULATED_OUTCOMES).optional(),
  workMs: z.number().min(0).optional(),
  busyForMs: z.number().min(0).optional(),
  ref: z.string().nullable().optional(),
  extraFields: z.record(z.string(), z.unknown()).optional(),
  faults: FaultRulesSchema.optional(),
});

/** Body of `POST /_simulator/projects/{project}/outside-uses`: uses of the project made elsewhere, counted now. */
export const OutsideUsesSchema = z.strictObject({ count: z.number().int().min(1).max(1_000_000) });

/** Body of `POST /_simulator/jobs/{project}/{job}/faults` (the scripted answers that predate fault rules). */
export const SimulatedFaultsSchema: z.ZodType<SimulatedFault[]> = z.array(
  z.strictObject({
    operation: z.enum(['send', 'get']),
    // Any status, 2xx included: scripted answers are used to return odd but successful bodies.
    status: z.number().int().min(200).max(599),
    retryAfter: z.string().optional(),
    body: z.string().optional(),
    times: z.number().int().min(1).optional(),
  }),
);

/** What the agent's work on a follow-up ends in. `no-changes` is `completed` with a null `prLink`. */
export type SimulatedOutcome = 'completed' | 'no-changes' | 'failed' | 'archived';

export interface SimulatedJobSpec {
  projectId: string;
  jobId: string;
  /** Status before any follow-up (default `completed`: a job that finished its first run). */
  status?: KnownJobStatus;
  prLink?: string | null;
  /** Where the next follow-ups lead (default `completed`, with a pull request). */
  outcome?: SimulatedOutcome;
  /** How long the agent works on each follow-up (default: the simulator's `defaultWorkMs`). */
  workMs?: number;
  /** The job is busy with earlier work for this long when added (`active`), then ends as `outcome` says. */
  busyForMs?: number;
  /** The branch in `source.ref`; the vendor documents it as nullable (default `main`). */
  ref?: string | null;
  /** Extra fields to add to every response, e.g. to test tolerance of unknown fields or statuses. */
  extraFields?: Record<string, unknown>;
  /** Fault rules for this job's requests, tried before the global ones. */
  faults?: FaultRule[];
}

/** A scripted answer that replaces the next matching request(s). The request is not processed. */
export interface SimulatedFault {
  operation: 'send' | 'get';
  status: number;
  retryAfter?: string;
  body?: string;
  /** How many requests it answers (default 1). */
  times?: number;
}
