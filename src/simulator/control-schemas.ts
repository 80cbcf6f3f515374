/**
 * Bodies of the simulator's `/_simulator` control routes. Validated so that a chaos script with a typo gets a 400
 * naming the field, instead of a simulator that silently does something else.
 */
import { z } from 'zod';
import { KNOWN_JOB_STATUSES } from '../agent-api/schemas';
import { FaultRulesSchema } from './faults';
import type { SimulatedFault, SimulatedJobSpec, SimulatedOutcome } from './simulator';

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
