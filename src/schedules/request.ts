/**
 * What a caller may ask for, and the checks a request passes before Temporal is called: the defaults (and why), the
 * zod request schema, the default schedule id and `checkScheduleRequest`.
 */
import { z } from 'zod';
import {
  createFollowUpInputSchema,
  DEFAULT_MAX_PROMPT_LENGTH,
  formatMs,
  type FollowUpInput,
  type FollowUpRequest,
} from '../client/input';
import { parseDuration } from '../kernel/duration';
import { cronPolicyProblems } from './cron';
import { followUpScheduleId } from '../client/ids';

// ---------------------------------------------------------------------------------------------------------------
// Defaults, and why
// ---------------------------------------------------------------------------------------------------------------

/**
 * Overlap policies a caller may choose. Both keep at most one follow-up of a schedule running at a time: `skip`
 * (default) drops a run that comes due while the previous one is still going, `buffer-one` starts it once the previous
 * one ends. The others are refused: ALLOW_ALL would send two follow-ups to one job at once, BUFFER_ALL can pile up a
 * backlog of stale prompts, and CANCEL_OTHER/TERMINATE_OTHER stop a follow-up that may be in the middle of a send.
 */
export const SCHEDULE_OVERLAP_CHOICES = ['skip', 'buffer-one'] as const;
export type ScheduleOverlapChoice = (typeof SCHEDULE_OVERLAP_CHOICES)[number];

/**
 * How late a run may still start after the Temporal cluster was unavailable at its time. Temporal's own default is a
 * year, which after an outage would deliver a prompt hours or days after it was meant; ten minutes covers a server
 * restart or a short outage, and anything later is counted as missed (visible in `describe`) instead of sent stale.
 * Workers being down does not need this: Temporal still starts the run, and it waits in the task queue.
 */
export const DEFAULT_CATCHUP_WINDOW_MS = 10 * 60 * 1000;
/** Temporal refuses a shorter catch-up window. */
const MIN_CATCHUP_WINDOW_MS = 10 * 1000;
const MAX_CATCHUP_WINDOW_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * A follow-up is a message to an agent that then works for minutes; more than one a minute is certainly a mistake
 * (and would run into the API's rate limit of 100 uses per project per hour).
 */
const MIN_EVERY_MS = 60 * 1000;
const MAX_EVERY_MS = 366 * 24 * 60 * 60 * 1000;
const MAX_NOTE_LENGTH = 1_000;
const MAX_SCHEDULE_ID_LENGTH = 400;
const SCHEDULE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;

// ---------------------------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------------------------

/** The schedule request broke a rule; `message` lists every problem with its field. Nothing was created. */
export class InvalidScheduleError extends Error {
  override readonly name = 'InvalidScheduleError';
}

/** What a caller asks for. Exactly one of `cron` and `every`. */
export interface FollowUpScheduleRequest {
  /** Defaults to `agent-followup-schedule/{projectId}/{jobId}/{hash of the three}`. */
  scheduleId?: string;
  /** The follow-up each run sends, exactly as `FollowUpClient.start` takes it. */
  input: FollowUpInput;
  /** A cron expression of 5, 6 or 7 fields, or @hourly, @daily, @weekly, @monthly, @yearly. */
  cron?: string;
  /** A fixed interval ("1h", "1d", or ms), counted from the Unix epoch; at least 1 minute. */
  every?: string | number;
  /** Shifts an interval, e.g. every 1d with offset 9h runs at 09:00 UTC. Below `every`. */
  offset?: string | number;
  /** IANA time zone the cron expression is read in (default UTC). Intervals do not have one. */
  timezone?: string;
  note?: string;
  /** Create it paused: nothing runs until it is unpaused (a trigger still runs). */
  paused?: boolean;
  /** Default `skip`. */
  overlap?: ScheduleOverlapChoice;
  /** Default 10m. */
  catchupWindow?: string | number;
  /** Default true: a follow-up that fails pauses its schedule. */
  pauseOnFailure?: boolean;
}

/** A request that passed every check, with durations in ms and the defaults applied. */
export interface CheckedScheduleRequest {
  scheduleId: string;
  /** As the caller gave it: this is what each run receives. */
  input: FollowUpInput;
  parsedInput: FollowUpRequest;
  spec: { cron: string; timezone: string } | { everyMs: number; offsetMs: number };
  note?: string;
  paused: boolean;
  overlap: ScheduleOverlapChoice;
  catchupWindowMs: number;
  pauseOnFailure: boolean;
}

export { followUpScheduleId } from '../client/ids';

/** True when `timezone` is an IANA zone this runtime knows (the server's tz database may lag behind Node's). */
export function isKnownTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** A duration as the follow-up input takes it ("10m", "1.5h" or ms), checked against a range, in whole seconds. */
function scheduleDuration(name: string, minMs: number, maxMs: number) {
  return z
    .union([z.number(), z.string()], { error: `${name} must be a duration such as "1h" or a number of ms` })
    .transform((value, ctx) => {
      const millis = parseDuration(value);
      if (millis === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} is not a duration: ${JSON.stringify(value)}; use a form such as "30m", "1h", "1d"`,
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
      // Temporal rounds schedule durations to the second; refusing fractions keeps what runs equal to what was asked.
      if (millis % 1000 !== 0) {
        ctx.addIssue({
          code: 'custom',
          message: `${name} must be a whole number of seconds (got ${JSON.stringify(value)})`,
        });
        return z.NEVER;
      }
      return millis;
    });
}

function createScheduleRequestSchema(maxPromptLength: number) {
  return z
    .strictObject(
      {
        scheduleId: z
          .string({ error: 'scheduleId must be a string' })
          .min(1, { error: 'scheduleId must not be empty (leave it out to use the default id)', abort: true })
          .max(MAX_SCHEDULE_ID_LENGTH, { error: `scheduleId must be at most ${MAX_SCHEDULE_ID_LENGTH} characters` })
          .regex(SCHEDULE_ID_PATTERN, {
            error:
              "scheduleId may contain only letters, digits, '.', '_', ':' and '-', and must start with a letter or digit",
          })
          .optional(),
        input: createFollowUpInputSchema(maxPromptLength),
        cron: z
          .string({ error: 'cron must be a string such as "0 9 * * MON-FRI"' })
          .superRefine((cron, ctx) => {
            for (const problem of cronPolicyProblems(cron))
              ctx.addIssue({ code: 'custom', message: `cron ${problem}` });
          })
          .optional(),
        every: scheduleDuration('every', MIN_EVERY_MS, MAX_EVERY_MS).optional(),
        offset: scheduleDuration('offset', 0, MAX_EVERY_MS).optional(),
        timezone: z
          .string({ error: 'timezone must be a string such as "Europe/Berlin"' })
          .refine(isKnownTimeZone, {
            error:
              'timezone is not a known IANA time zone; use a name such as "UTC", "Europe/Berlin" or "America/New_York"',
          })
          .optional(),
        note: z
          .string({ error: 'note must be a string' })
          .max(MAX_NOTE_LENGTH, { error: `note must be at most ${MAX_NOTE_LENGTH} characters` })
          .optional(),
        paused: z.boolean({ error: 'paused must be true or false' }).optional(),
        overlap: z
          .enum(SCHEDULE_OVERLAP_CHOICES, {
            error: `overlap must be one of ${SCHEDULE_OVERLAP_CHOICES.join(', ')} (policies that could run two follow-ups to one job at once, or stop one mid-send, are refused)`,
          })
          .optional(),
        catchupWindow: scheduleDuration('catchupWindow', MIN_CATCHUP_WINDOW_MS, MAX_CATCHUP_WINDOW_MS).optional(),
        pauseOnFailure: z.boolean({ error: 'pauseOnFailure must be true or false' }).optional(),
      },
      {
        error: (issue) =>
          issue.code === 'unrecognized_keys'
            ? `unknown field(s) ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}; allowed: scheduleId, input, cron, every, offset, timezone, note, paused, overlap, catchupWindow, pauseOnFailure`
            : 'the schedule request must be an object with input and either cron or every',
      },
    )
    .superRefine(checkTimingFields);
}

/** The timing fields together: cron or every (one of them), an offset below every, a time zone for cron only. */
function checkTimingFields(
  request: { cron?: string; every?: number; offset?: number; timezone?: string },
  ctx: z.RefinementCtx,
): void {
  const hasCron = request.cron !== undefined;
  const hasEvery = request.every !== undefined;
  if (hasCron === hasEvery) {
    ctx.addIssue({
      code: 'custom',
      path: [hasCron ? 'every' : 'cron'],
      message: hasCron
        ? 'give either cron or every, not both'
        : 'give either cron (e.g. "0 9 * * MON-FRI") or every (e.g. "1h")',
    });
  }
  if (request.offset !== undefined && !hasEvery) {
    ctx.addIssue({
      code: 'custom',
      path: ['offset'],
      message: 'offset applies to every only; a cron expression says its own times',
    });
  }
  if (request.offset !== undefined && request.every !== undefined && request.offset >= request.every) {
    ctx.addIssue({
      code: 'custom',
      path: ['offset'],
      message: `offset (${formatMs(request.offset)}) must be below every (${formatMs(request.every)})`,
    });
  }
  // An interval is counted from the Unix epoch in absolute time; a zone would silently change nothing.
  if (request.timezone !== undefined && hasEvery) {
    ctx.addIssue({
      code: 'custom',
      path: ['timezone'],
      message:
        'timezone applies to cron only (intervals count from the Unix epoch); for "daily at 09:00 Berlin time" use cron "0 9 * * *" with timezone "Europe/Berlin"',
    });
  }
}

/** Every problem in one message, each naming its field: "cron the hour field …; input.jobId may contain only …". */
function formatScheduleProblems(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'request';
      if (issue.path[0] === 'input' && issue.path.length > 1) {
        // The input schema names its fields without the "input." prefix.
        const inner = issue.path.slice(1).map(String).join('.');
        if (issue.message.startsWith(inner)) return `input.${issue.message}`;
      }
      return issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`;
    })
    .join('; ');
}

/** Checks a schedule request without calling Temporal; throws InvalidScheduleError naming every bad field. */
export function checkScheduleRequest(
  request: unknown,
  maxPromptLength: number = DEFAULT_MAX_PROMPT_LENGTH,
  /** The default ids' HMAC key of an encrypting client (client/ids.ts). */
  idKey?: Uint8Array,
): CheckedScheduleRequest {
  if (!Number.isInteger(maxPromptLength) || maxPromptLength < 1) {
    throw new InvalidScheduleError(`maxPromptLength must be a whole number of at least 1 (got ${maxPromptLength})`);
  }
  const result = createScheduleRequestSchema(Math.min(maxPromptLength, DEFAULT_MAX_PROMPT_LENGTH)).safeParse(request);
  if (!result.success) throw new InvalidScheduleError(`Invalid schedule: ${formatScheduleProblems(result.error)}`);
  const data = result.data;
  return {
    scheduleId: data.scheduleId ?? followUpScheduleId(data.input, idKey),
    input: (request as FollowUpScheduleRequest).input,
    parsedInput: data.input,
    spec:
      data.cron !== undefined
        ? { cron: data.cron.trim(), timezone: data.timezone ?? 'UTC' }
        : { everyMs: data.every as number, offsetMs: data.offset ?? 0 },
    ...(data.note !== undefined ? { note: data.note } : {}),
    paused: data.paused ?? false,
    overlap: data.overlap ?? 'skip',
    catchupWindowMs: data.catchupWindow ?? DEFAULT_CATCHUP_WINDOW_MS,
    pauseOnFailure: data.pauseOnFailure ?? true,
  };
}

/** Checks a note for pause/unpause the way create checks its own. */
export function checkNote(note: string | undefined): void {
  if (note !== undefined && note.length > MAX_NOTE_LENGTH) {
    throw new InvalidScheduleError(`Invalid schedule: note must be at most ${MAX_NOTE_LENGTH} characters`);
  }
}
