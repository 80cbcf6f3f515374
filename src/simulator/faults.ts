/**
 * Fault rules for the agent API simulator: what can go wrong between our client and the API, described as data so
 * that tests, `POST /_simulator/faults` and the `--fault` flag share one vocabulary and one validation.
 */
import { z } from 'zod';

export const FAULT_KINDS = [
  'status',
  'latency',
  'drop-before-processing',
  'drop-after-processing',
  'malformed-body',
  'invalid-schema',
  'stale-terminal',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const FAULT_OPERATIONS = ['send', 'get', 'any'] as const;
export type FaultOperation = (typeof FAULT_OPERATIONS)[number];

/** One way for a request to go wrong. The simulator copies rules it is given, so `times` counts down on its copy. */
export interface FaultRule {
  operation: FaultOperation;
  kind: FaultKind;
  /** Probability (0..1) that a matching request triggers the rule; default 1. */
  rate?: number;
  /** The rule fires at most this often; default unlimited. */
  times?: number;
  /**
   * The rule is tried only on every Nth request it matches (the Nth, the 2Nth, ...), then by `rate`: a pattern, not a
   * draw, for faults whose order matters (`every: 2` on a stale read: a job flapping with every other read).
   */
  every?: number;
  /** For `status`: the status code to answer. */
  status?: number;
  /** For `status`: the `Retry-After` header to send with it. */
  retryAfter?: string;
  /** For `latency`: how long to hold the request before going on. */
  latencyMs?: number;
}

/** Ten minutes: longer than any client timeout we use, short enough that a typo cannot park a request for days. */
export const MAX_LATENCY_MS = 600_000;

// Node refuses header values with control characters; refusing them here gives a 400 instead of a crash later.
const HEADER_VALUE = /^[\x20-\x7e]+$/;

/** Validates one rule; kind-specific fields are required where they are needed and refused where they mean nothing. */
export const FaultRuleSchema: z.ZodType<FaultRule> = z
  .strictObject({
    operation: z.enum(FAULT_OPERATIONS),
    kind: z.enum(FAULT_KINDS),
    rate: z.number().min(0).max(1).optional(),
    times: z.number().int().min(0).optional(),
    every: z.number().int().min(1).optional(),
    // Only error statuses: a 'status' fault is an answer that did not process the request, which a 2xx would hide.
    status: z.number().int().min(400).max(599).optional(),
    retryAfter: z.string().regex(HEADER_VALUE, 'must be visible ASCII (seconds or an HTTP date)').optional(),
    latencyMs: z.number().int().min(0).max(MAX_LATENCY_MS).optional(),
  })
  .superRefine((rule, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (rule.kind === 'status' && rule.status === undefined)
      problem('status', "a 'status' fault needs the status code to answer (400-599)");
    if (rule.kind !== 'status' && rule.status !== undefined)
      problem('status', `only a 'status' fault takes a status (this one is '${rule.kind}')`);
    if (rule.kind !== 'status' && rule.retryAfter !== undefined)
      problem('retryAfter', `only a 'status' fault takes retryAfter (this one is '${rule.kind}')`);
    if (rule.kind === 'latency' && rule.latencyMs === undefined)
      problem('latencyMs', "a 'latency' fault needs latencyMs");
    if (rule.kind !== 'latency' && rule.latencyMs !== undefined)
      problem('latencyMs', `only a 'latency' fault takes latencyMs (this one is '${rule.kind}')`);
    if (rule.kind === 'stale-terminal' && rule.operation === 'send') {
      problem('operation', "'stale-terminal' only changes reads: use operation 'get' or 'any'");
    }
  });

export const FaultRulesSchema = z.array(FaultRuleSchema);

/** Lists every problem of a zod error as `path: message`, joined, so one 400 or one exception names them all. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`).join('; ');
}

/** Validates and copies rules; throws an Error naming every problem. */
export function parseFaultRules(input: unknown): FaultRule[] {
  const parsed = FaultRulesSchema.safeParse(input);
  if (!parsed.success) throw new Error(`invalid fault rules: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`))
    .join('');
}
