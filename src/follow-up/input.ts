/**
 * The follow-up's input: what a caller asks for, validated the same way by the client (before anything starts) and by
 * the workflow (so a start from another SDK or the Web UI cannot slip past). Pure: workflow code imports it.
 */
import { msToNumber } from '@temporalio/common/lib/time';
import { z } from 'zod';

/** Defaults suit a real agent run, which takes minutes. */
export const DEFAULT_POLLING = {
  initialIntervalMs: 5_000,
  backoffCoefficient: 2,
  maxIntervalMs: 60_000,
  timeoutMs: 24 * 60 * 60 * 1000,
  maxPollsPerRun: 500,
  settleWindowMs: 30_000,
} as const;

/**
 * What to do when a send failed in a way that leaves open whether the API took the message (README, "Never sending
 * twice"): read the job and decide (`reconcile`), send again and rely on the Idempotency-Key (`retry`), or stop with
 * `FollowUpDeliveryUnknown` (`fail`).
 */
export const AMBIGUOUS_SEND_POLICIES = ['reconcile', 'retry', 'fail'] as const;
export type AmbiguousSendPolicy = (typeof AMBIGUOUS_SEND_POLICIES)[number];

/** The seed gives no maximum (§8); this keeps a prompt far below Temporal's 2 MiB payload limit. */
export const DEFAULT_MAX_PROMPT_LENGTH = 100_000;

const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 24 * 60 * 60 * 1000;
const MIN_TIMEOUT_MS = 1_000;
const MAX_TIMEOUT_MS = 30 * 24 * 60 * 60 * 1000;
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const MAX_ID_LENGTH = 200;

function identifier(name: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .min(1, { error: `${name} must not be empty`, abort: true })
    .max(MAX_ID_LENGTH, { error: `${name} must be at most ${MAX_ID_LENGTH} characters` })
    .regex(ID_PATTERN, {
      error:
        `${name} may contain only letters, digits, '.', '_', ':' and '-', and must start with a letter or digit ` +
        '(no slashes, spaces, unicode or control characters)',
    });
}

/**
 * A duration as Temporal spells it ("5s", "10m", "1.5h") or a number of milliseconds, turned into milliseconds and
 * checked against a range so a typo like "5" (5 ms) or "-5s" is caught before it hammers the API.
 */
function duration(name: string, minMs: number, maxMs: number) {
  return z.union([z.number(), z.string()], { error: `${name} must be a duration such as "5s" or a number of ms` })
    .transform((value, ctx) => {
      let millis: number;
      try {
        millis = msToNumber(value as number);
      } catch {
        ctx.addIssue({
          code: 'custom',
          message: `${name} is not a duration: ${JSON.stringify(value)}; use a form such as "5s", "10m", "2h" or milliseconds`,
        });
        return z.NEVER;
      }
      if (!Number.isFinite(millis) || millis < minMs || millis > maxMs) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be between ${formatMs(minMs)} and ${formatMs(maxMs)} (got ${JSON.stringify(value)})`,
        });
        return z.NEVER;
      }
      return Math.round(millis);
    });
}

export const PollingOptionsSchema = z
  .strictObject(
    {
    initialInterval: duration('polling.initialInterval', MIN_INTERVAL_MS, MAX_INTERVAL_MS).optional(),
    backoffCoefficient: z
      .number({ error: 'polling.backoffCoefficient must be a number' })
      .min(1, { error: 'polling.backoffCoefficient must be at least 1 (1 means a fixed interval)' })
      .max(10, { error: 'polling.backoffCoefficient must be at most 10' })
      .optional(),
    maxInterval: duration('polling.maxInterval', MIN_INTERVAL_MS, MAX_INTERVAL_MS).optional(),
    timeout: duration('polling.timeout', MIN_TIMEOUT_MS, MAX_TIMEOUT_MS).optional(),
    maxPollsPerRun: z
      .number({ error: 'polling.maxPollsPerRun must be a number' })
      .int({ error: 'polling.maxPollsPerRun must be a whole number' })
      .min(1, { error: 'polling.maxPollsPerRun must be at least 1' })
      .max(5_000, { error: 'polling.maxPollsPerRun must be at most 5000 (history stays bounded)' })
      .optional(),
    settleWindow: duration('polling.settleWindow', 0, 60 * 60 * 1000).optional(),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field(s) ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}; allowed: initialInterval, backoffCoefficient, maxInterval, timeout, maxPollsPerRun, settleWindow`
          : 'polling must be an object',
    },
  )
  .superRefine((polling, ctx) => {
    const initial = polling.initialInterval ?? DEFAULT_POLLING.initialIntervalMs;
    const max = polling.maxInterval ?? DEFAULT_POLLING.maxIntervalMs;
    if (max < initial) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxInterval'],
        message: `polling.maxInterval (${formatMs(max)}) must not be below polling.initialInterval (${formatMs(initial)})`,
      });
    }
  });

/** Polling options with every default applied, in milliseconds. */
export interface ResolvedPolling {
  initialIntervalMs: number;
  backoffCoefficient: number;
  maxIntervalMs: number;
  timeoutMs: number;
  maxPollsPerRun: number;
  /** How long an unchanged terminal status must stand after the send before it is taken as this follow-up's end. */
  settleWindowMs: number;
}

/** Builds the input schema; `maxPromptLength` lets a deployment lower the prompt limit. */
export function createFollowUpInputSchema(maxPromptLength: number = DEFAULT_MAX_PROMPT_LENGTH) {
  return z.strictObject(
    {
      projectId: identifier('projectId'),
      jobId: identifier('jobId'),
      prompt: z
        .string({ error: (issue) => (issue.input === undefined ? 'prompt is required' : 'prompt must be a string') })
        .min(1, { error: 'prompt must not be empty (the API needs at least 1 character)', abort: true })
        .max(maxPromptLength, { error: `prompt must be at most ${maxPromptLength} characters` })
        .refine((prompt) => prompt.trim().length > 0, { error: 'prompt must contain more than white space' }),
      polling: PollingOptionsSchema.optional(),
      onAmbiguousSend: z
        .enum(AMBIGUOUS_SEND_POLICIES, { error: `onAmbiguousSend must be one of ${AMBIGUOUS_SEND_POLICIES.join(', ')}` })
        .optional(),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `unknown field(s) ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}; allowed: projectId, jobId, prompt, polling, onAmbiguousSend`
          : 'input must be a JSON object with projectId, jobId and prompt',
    },
  );
}

export const FollowUpInputSchema = createFollowUpInputSchema();

/** What a caller passes (durations as strings or ms). */
export type FollowUpInput = z.input<typeof FollowUpInputSchema>;
/** The same after validation (durations in ms). */
export type ParsedFollowUpInput = z.output<typeof FollowUpInputSchema>;

/** Applies the defaults to validated polling options. */
export function resolvePolling(polling: ParsedFollowUpInput['polling']): ResolvedPolling {
  return {
    initialIntervalMs: polling?.initialInterval ?? DEFAULT_POLLING.initialIntervalMs,
    backoffCoefficient: polling?.backoffCoefficient ?? DEFAULT_POLLING.backoffCoefficient,
    maxIntervalMs: polling?.maxInterval ?? DEFAULT_POLLING.maxIntervalMs,
    timeoutMs: polling?.timeout ?? DEFAULT_POLLING.timeoutMs,
    maxPollsPerRun: polling?.maxPollsPerRun ?? DEFAULT_POLLING.maxPollsPerRun,
    settleWindowMs: polling?.settleWindow ?? DEFAULT_POLLING.settleWindowMs,
  };
}

/** Every problem in one message, each naming its field: "projectId: ...; polling.timeout: ...". */
export function formatInputProblems(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
      return issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
    })
    .join('; ');
}

/** Validates input or returns every problem at once. */
export function validateFollowUpInput(
  input: unknown,
  schema: ReturnType<typeof createFollowUpInputSchema> = FollowUpInputSchema,
): { ok: true; value: ParsedFollowUpInput } | { ok: false; problems: string } {
  const result = schema.safeParse(input);
  return result.success ? { ok: true, value: result.data } : { ok: false, problems: formatInputProblems(result.error) };
}

/** A duration in Temporal's spelling, e.g. 90000 -> "90s", 3600000 -> "1h". */
export function formatMs(millis: number): string {
  if (millis === 0) return '0s';
  if (millis % 86_400_000 === 0) return `${millis / 86_400_000}d`;
  if (millis % 3_600_000 === 0) return `${millis / 3_600_000}h`;
  if (millis % 60_000 === 0) return `${millis / 60_000}m`;
  if (millis % 1_000 === 0) return `${millis / 1_000}s`;
  return `${millis}ms`;
}
