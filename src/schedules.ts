/**
 * Recurring follow-ups on Temporal Schedules: the same follow-up (project, job, prompt, polling) sent on a cron
 * expression or a fixed interval. Everything is validated before Temporal is called, each run is an ordinary
 * follow-up workflow with a unique id, and `describe` shows how the recent runs ended (docs/SCHEDULES.md).
 */
import { createHash } from 'node:crypto';
import {
  Client,
  Connection,
  ScheduleAlreadyRunning,
  ScheduleOverlapPolicy,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type ScheduleDescription,
  type ScheduleExecutionResult,
  type ScheduleOptions,
  type ScheduleOptionsStartWorkflowAction,
  type ScheduleSummary,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { msToNumber } from '@temporalio/common/lib/time';
import { z } from 'zod';
import type { TerminalJobStatus } from './agent-api/schemas';
import { followUpWorkflowId, maxPromptLengthFromEnv, type FollowUpClientOptions } from './client';
import { loadTemporalSettings } from './config';
import {
  createFollowUpInputSchema,
  DEFAULT_MAX_PROMPT_LENGTH,
  FollowUpInputSchema,
  formatMs,
  type FollowUpInput,
  type ParsedFollowUpInput,
} from './follow-up/input';
import { AgentJobId, AgentProjectId } from './follow-up/search-attributes';
import { followUpStartMetadata } from './follow-up/start-metadata';
import type { FollowUpResult } from './follow-up/types';
import { FOLLOW_UP_WORKFLOW_TYPE } from './workflows/definitions';
import type { followUpWorkflow } from './workflows/follow-up';

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

const OVERLAP_POLICIES: Record<ScheduleOverlapChoice, ScheduleOverlapPolicy> = {
  skip: ScheduleOverlapPolicy.SKIP,
  'buffer-one': ScheduleOverlapPolicy.BUFFER_ONE,
};

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

/** Where a schedule keeps its spec as written: Temporal compiles cron text into calendars and does not return it. */
const SPEC_MEMO_KEY = 'agentFollowUpSpec';

// ---------------------------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------------------------

/** The schedule request broke a rule; `message` lists every problem with its field. Nothing was created. */
export class InvalidScheduleError extends Error {
  override readonly name = 'InvalidScheduleError';
}

/** What a caller asks for. Exactly one of `cron` and `every`. */
export interface FollowUpScheduleRequest {
  /** Defaults to `followup-schedule-{projectId}-{jobId}-{sha256(prompt)[0:16]}`. */
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
  parsedInput: ParsedFollowUpInput;
  spec: { cron: string; timezone: string } | { everyMs: number; offsetMs: number };
  note?: string;
  paused: boolean;
  overlap: ScheduleOverlapChoice;
  catchupWindowMs: number;
  pauseOnFailure: boolean;
}

/** The default schedule id: one schedule per (project, job, prompt), like the follow-up's own id. */
export function followUpScheduleId(input: Pick<ParsedFollowUpInput, 'projectId' | 'jobId' | 'prompt'>): string {
  const digest = createHash('sha256').update(input.prompt, 'utf8').digest('hex').slice(0, 16);
  return `followup-schedule-${input.projectId}-${input.jobId}-${digest}`;
}

/** True when `timezone` is an IANA zone this runtime knows (the server's tz database may lag behind Node's). */
export function isKnownTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

interface CronFieldRule {
  name: string;
  min: number;
  max: number;
  /** Names accepted by prefix, with the value of the first one and the shortest prefix Temporal accepts. */
  names?: { list: readonly string[]; first: number; minPrefix: number };
}

const MONTH_NAMES = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAY_NAMES = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

const SECOND: CronFieldRule = { name: 'second', min: 0, max: 59 };
const MINUTE: CronFieldRule = { name: 'minute', min: 0, max: 59 };
const HOUR: CronFieldRule = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: CronFieldRule = { name: 'day-of-month', min: 1, max: 31 };
const MONTH: CronFieldRule = { name: 'month', min: 1, max: 12, names: { list: MONTH_NAMES, first: 1, minPrefix: 3 } };
// 7 is Sunday as well as 0, as in most crons.
const DAY_OF_WEEK: CronFieldRule = { name: 'day-of-week', min: 0, max: 7, names: { list: DAY_NAMES, first: 0, minPrefix: 2 } };
// Temporal's calendar only knows these years.
const YEAR: CronFieldRule = { name: 'year', min: 2000, max: 2100 };

const CRON_LAYOUTS: Record<number, CronFieldRule[]> = {
  5: [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK],
  6: [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK, YEAR],
  7: [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK, YEAR],
};

const CRON_SHORTHANDS = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly'];

/**
 * Checks a cron expression against the syntax Temporal's scheduler accepts (`*`, values, names, `a-b`, `/step`,
 * lists), so a typo is reported field by field before anything is created. Returns the problems; empty when valid.
 */
export function cronExpressionProblems(expression: string): string[] {
  const text = expression.split('#')[0]?.trim() ?? '';
  if (text === '') return ['is empty; use a form such as "0 9 * * MON-FRI" or @daily'];
  if (/^(CRON_)?TZ=/.test(text)) return ['must not carry its own time zone (TZ=/CRON_TZ=); give timezone instead'];
  if (text.startsWith('@every')) return ['@every is not accepted here; give every (and offset) instead'];
  if (text.startsWith('@')) {
    return CRON_SHORTHANDS.includes(text) ? [] : [`unknown shorthand '${text}'; use one of ${CRON_SHORTHANDS.join(', ')}`];
  }
  const fields = text.split(/\s+/);
  const layout = CRON_LAYOUTS[fields.length];
  if (!layout) {
    return [
      `has ${fields.length} field(s); use 5 (minute hour day-of-month month day-of-week), 6 (… year) or 7 (second … year)`,
    ];
  }
  const problems = layout.flatMap((rule, index) => cronFieldProblems(fields[index] as string, rule));
  if (layout[0] === SECOND && !/^\d+$/.test(fields[0] as string)) {
    problems.push('the second field must be one value such as 0: follow-ups more often than once a minute are refused');
  }
  return problems;
}

function cronFieldProblems(field: string, rule: CronFieldRule): string[] {
  const problems: string[] = [];
  for (const part of field.split(',')) {
    const problem = cronPartProblem(part, rule);
    if (problem) problems.push(`the ${rule.name} field '${field}' ${problem}`);
  }
  return problems;
}

function cronPartProblem(part: string, rule: CronFieldRule): string | undefined {
  if (part === '') return 'has an empty list item';
  // Quartz-style extensions: '?', last day (L, 5L), nearest weekday (15W, LW).
  if (part.includes('?') || /^(\d*L|\d+W|LW)$/i.test(part)) {
    return `uses '${part}' (L, W and ? are Quartz extensions Temporal does not support); use '*', values, ranges and steps`;
  }
  const pieces = part.split('/');
  if (pieces.length > 2) return `has more than one '/' in '${part}'`;
  const [range, step] = pieces as [string, string | undefined];
  if (step !== undefined && !(/^\d+$/.test(step) && Number(step) >= 1)) return `has a step '${step}' that is not a whole number of at least 1`;
  if (range === '*') return undefined;
  const bounds = range.split('-');
  if (bounds.length > 2) return `has a malformed range '${range}'`;
  const values: number[] = [];
  for (const bound of bounds) {
    const value = cronValue(bound, rule);
    if (value === undefined) {
      const names = rule.names ? ` or a ${rule.name === 'month' ? 'month' : 'day'} name such as ${rule.names.list[1]?.slice(0, 3).toUpperCase()}` : '';
      return `has '${bound}', which is not a number${names}`;
    }
    if (value < rule.min || value > rule.max) return `has ${bound}, outside ${rule.min}–${rule.max}`;
    values.push(value);
  }
  if (values.length === 2 && (values[1] as number) < (values[0] as number)) return `has a range '${range}' that ends before it starts`;
  return undefined;
}

function cronValue(text: string, rule: CronFieldRule): number | undefined {
  if (/^\d+$/.test(text)) return Number(text);
  const names = rule.names;
  if (!names || text.length < names.minPrefix || !/^[A-Za-z]+$/.test(text)) return undefined;
  const index = names.list.findIndex((name) => name.startsWith(text.toLowerCase()));
  return index < 0 ? undefined : index + names.first;
}

/** A duration as the follow-up input takes it ("10m", "1.5h" or ms), checked against a range, in whole seconds. */
function scheduleDuration(name: string, minMs: number, maxMs: number) {
  return z.union([z.number(), z.string()], { error: `${name} must be a duration such as "1h" or a number of ms` }).transform((value, ctx) => {
    let millis: number;
    try {
      millis = msToNumber(value as number);
    } catch {
      ctx.addIssue({ code: 'custom', message: `${name} is not a duration: ${JSON.stringify(value)}; use a form such as "30m", "1h", "1d"` });
      return z.NEVER;
    }
    if (!Number.isFinite(millis) || millis < minMs || millis > maxMs) {
      ctx.addIssue({ code: 'custom', message: `${name} must be between ${formatMs(minMs)} and ${formatMs(maxMs)} (got ${JSON.stringify(value)})` });
      return z.NEVER;
    }
    // Temporal rounds schedule durations to the second; refusing fractions keeps what runs equal to what was asked.
    if (millis % 1000 !== 0) {
      ctx.addIssue({ code: 'custom', message: `${name} must be a whole number of seconds (got ${JSON.stringify(value)})` });
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
            error: "scheduleId may contain only letters, digits, '.', '_', ':' and '-', and must start with a letter or digit",
          })
          .optional(),
        input: createFollowUpInputSchema(maxPromptLength),
        cron: z
          .string({ error: 'cron must be a string such as "0 9 * * MON-FRI"' })
          .superRefine((cron, ctx) => {
            for (const problem of cronExpressionProblems(cron)) ctx.addIssue({ code: 'custom', message: `cron ${problem}` });
          })
          .optional(),
        every: scheduleDuration('every', MIN_EVERY_MS, MAX_EVERY_MS).optional(),
        offset: scheduleDuration('offset', 0, MAX_EVERY_MS).optional(),
        timezone: z
          .string({ error: 'timezone must be a string such as "Europe/Berlin"' })
          .refine(isKnownTimeZone, { error: 'timezone is not a known IANA time zone; use a name such as "UTC", "Europe/Berlin" or "America/New_York"' })
          .optional(),
        note: z.string({ error: 'note must be a string' }).max(MAX_NOTE_LENGTH, { error: `note must be at most ${MAX_NOTE_LENGTH} characters` }).optional(),
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
    .superRefine((request, ctx) => {
      const hasCron = request.cron !== undefined;
      const hasEvery = request.every !== undefined;
      if (hasCron === hasEvery) {
        ctx.addIssue({
          code: 'custom',
          path: [hasCron ? 'every' : 'cron'],
          message: hasCron ? 'give either cron or every, not both' : 'give either cron (e.g. "0 9 * * MON-FRI") or every (e.g. "1h")',
        });
      }
      if (request.offset !== undefined && !hasEvery) {
        ctx.addIssue({ code: 'custom', path: ['offset'], message: 'offset applies to every only; a cron expression says its own times' });
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
          message: 'timezone applies to cron only (intervals count from the Unix epoch); for "daily at 09:00 Berlin time" use cron "0 9 * * *" with timezone "Europe/Berlin"',
        });
      }
    });
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
export function checkScheduleRequest(request: unknown, maxPromptLength: number = DEFAULT_MAX_PROMPT_LENGTH): CheckedScheduleRequest {
  if (!Number.isInteger(maxPromptLength) || maxPromptLength < 1) {
    throw new InvalidScheduleError(`maxPromptLength must be a whole number of at least 1 (got ${maxPromptLength})`);
  }
  const result = createScheduleRequestSchema(Math.min(maxPromptLength, DEFAULT_MAX_PROMPT_LENGTH)).safeParse(request);
  if (!result.success) throw new InvalidScheduleError(`Invalid schedule: ${formatScheduleProblems(result.error)}`);
  const data = result.data;
  return {
    scheduleId: data.scheduleId ?? followUpScheduleId(data.input),
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
function checkNote(note: string | undefined): void {
  if (note !== undefined && note.length > MAX_NOTE_LENGTH) {
    throw new InvalidScheduleError(`Invalid schedule: note must be at most ${MAX_NOTE_LENGTH} characters`);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// What is sent to Temporal
// ---------------------------------------------------------------------------------------------------------------

export type FollowUpScheduleOptions = ScheduleOptions<ScheduleOptionsStartWorkflowAction<typeof followUpWorkflow>>;

/** The spec as written, kept in the schedule's memo. */
interface SpecMemo {
  cron?: string;
  timezone?: string;
  every?: string;
  offset?: string;
}

/** The Temporal schedule for a checked request. Pure: what `create` sends, and what unit tests look at. */
export function buildScheduleOptions(request: CheckedScheduleRequest, taskQueue: string): FollowUpScheduleOptions {
  const { parsedInput, spec } = request;
  const specMemo: SpecMemo =
    'cron' in spec ? { cron: spec.cron, timezone: spec.timezone } : { every: formatMs(spec.everyMs), offset: formatMs(spec.offsetMs) };
  return {
    scheduleId: request.scheduleId,
    spec:
      'cron' in spec
        ? { cronExpressions: [spec.cron], timezone: spec.timezone }
        : { intervals: [{ every: spec.everyMs, offset: spec.offsetMs }] },
    action: {
      type: 'startWorkflow',
      workflowType: FOLLOW_UP_WORKFLOW_TYPE,
      taskQueue,
      // A prefix: Temporal appends each run's scheduled time ("-2025-01-31T09:00:00Z"), so every run has its own id,
      // and `WorkflowId STARTS_WITH "followup-{project}-{job}-"` finds scheduled runs beside the ones sent by hand.
      // Two schedules of the same follow-up due at the same second share an id, so only one of them sends.
      workflowId: followUpWorkflowId(parsedInput),
      // The caller's input as given, like FollowUpClient.start, so the Web UI shows what was asked for.
      args: [request.input],
      // The same summary, details and search attributes as a follow-up started by hand.
      ...followUpStartMetadata(parsedInput),
    },
    policies: {
      overlap: OVERLAP_POLICIES[request.overlap],
      catchupWindow: request.catchupWindowMs,
      // Only a workflow failure (rejected by the API, timed out, delivery unknown) pauses: each of those needs a
      // person before the next send. A job that ends failed or archived is a result and does not pause it.
      pauseOnFailure: request.pauseOnFailure,
    },
    state: {
      paused: request.paused,
      ...(request.note !== undefined ? { note: request.note } : {}),
    },
    memo: { [SPEC_MEMO_KEY]: specMemo },
    // The schedule itself carries the job's attributes, so `temporal schedule list --query 'AgentJobId="…"'` finds it.
    typedSearchAttributes: [
      { key: AgentProjectId, value: parsedInput.projectId },
      { key: AgentJobId, value: parsedInput.jobId },
    ],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// What callers get back
// ---------------------------------------------------------------------------------------------------------------

export interface CreatedFollowUpSchedule {
  scheduleId: string;
  /** Each run's workflow id is this plus "-" and its scheduled time. */
  workflowIdPrefix: string;
}

/** One run a schedule started, and how it ended when it has. */
export interface ScheduledFollowUpRun {
  workflowId: string;
  scheduledAt: string;
  startedAt: string;
  /**
   * Temporal's execution status (RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT), or NOT_FOUND once the
   * namespace's retention has removed the run.
   */
  status: string;
  /** For a COMPLETED run: how the job ended (`completed`, `archived` or `failed` are all results). */
  outcome?: TerminalJobStatus;
  prLink?: string | null;
  finishedAt?: string;
  /** For a FAILED run: the failure's type (e.g. AgentJobNotFound, FollowUpTimedOut) and message. */
  failure?: { type: string; message: string };
}

export interface FollowUpScheduleSpecView {
  cron?: string;
  every?: string;
  offset?: string;
  timezone: string;
}

/** What `describe` returns. */
export interface FollowUpScheduleView {
  scheduleId: string;
  /** The follow-up each run sends, or null when the schedule's action is not a follow-up. */
  input: FollowUpInput | null;
  taskQueue: string;
  workflowIdPrefix: string;
  spec: FollowUpScheduleSpecView;
  paused: boolean;
  /** Why it is paused (Temporal writes one when pause-on-failure strikes), or the note it was created with. */
  note: string | null;
  policies: { overlap: string; catchupWindow: string; pauseOnFailure: boolean };
  nextRunTimes: string[];
  /** The last runs (Temporal keeps ten), newest first. */
  recentRuns: ScheduledFollowUpRun[];
  runningWorkflowIds: string[];
  counts: { runsStarted: number; skippedOverlap: number; missedCatchupWindow: number };
  createdAt: string;
  updatedAt: string | null;
}

/** One line of `list`. */
export interface FollowUpScheduleListEntry {
  scheduleId: string;
  projectId: string | null;
  jobId: string | null;
  spec: FollowUpScheduleSpecView;
  paused: boolean;
  note: string | null;
  nextRunTimes: string[];
  /** The newest run, with how it ended. */
  lastRun: ScheduledFollowUpRun | null;
}

export interface ListSchedulesFilter {
  projectId?: string;
  jobId?: string;
  /** At most this many schedules (default 100). */
  limit?: number;
}

// ---------------------------------------------------------------------------------------------------------------
// The client
// ---------------------------------------------------------------------------------------------------------------

/** Creates and manages recurring follow-ups; every method validates before it calls Temporal. */
export class FollowUpSchedules {
  private readonly maxPromptLength: number;

  constructor(
    readonly client: Client,
    private readonly options: FollowUpClientOptions,
  ) {
    this.maxPromptLength = options.maxPromptLength ?? DEFAULT_MAX_PROMPT_LENGTH;
  }

  /** Connects with the standard Temporal environment variables (see the README). */
  static async fromEnvironment(env: Record<string, string | undefined> = process.env): Promise<FollowUpSchedules> {
    const settings = loadTemporalSettings(env);
    const maxPromptLength = maxPromptLengthFromEnv(env);
    const connection = await Connection.connect(settings.connectionOptions);
    return new FollowUpSchedules(new Client({ connection, namespace: settings.namespace }), {
      taskQueue: settings.taskQueue,
      maxPromptLength,
    });
  }

  /** Checks a request without creating anything; throws InvalidScheduleError naming every bad field. */
  check(request: unknown): CheckedScheduleRequest {
    return checkScheduleRequest(request, this.maxPromptLength);
  }

  /** Creates the schedule. Throws ScheduleAlreadyRunning when one with this id exists. */
  async create(request: FollowUpScheduleRequest): Promise<CreatedFollowUpSchedule> {
    const checked = this.check(request);
    const options = buildScheduleOptions(checked, this.options.taskQueue);
    try {
      await this.client.schedule.create(options);
    } catch (error) {
      if (error instanceof ScheduleAlreadyRunning) {
        throw new ScheduleAlreadyRunning(
          `a schedule with id '${checked.scheduleId}' already exists; describe or delete it, or give another scheduleId`,
          checked.scheduleId,
        );
      }
      // The SDK turns the server's "Invalid schedule spec" into a TypeError; it is still the caller's input.
      if (error instanceof TypeError) throw new InvalidScheduleError(`Invalid schedule: Temporal refused the spec: ${error.message}`);
      throw error;
    }
    return { scheduleId: checked.scheduleId, workflowIdPrefix: options.action.workflowId as string };
  }

  /** The schedule with its spec, state, policies, next times and how its recent runs ended. */
  async describe(scheduleId: string): Promise<FollowUpScheduleView> {
    const description = await this.client.schedule.getHandle(scheduleId).describe();
    const recent = [...description.info.recentActions].reverse();
    return {
      scheduleId,
      input: followUpInputOf(description.action.args),
      taskQueue: description.action.taskQueue,
      workflowIdPrefix: description.action.workflowId,
      spec: specView(description.spec, description.memo),
      paused: description.state.paused,
      note: description.state.note || null,
      policies: {
        overlap: overlapName(description.policies.overlap),
        catchupWindow: formatMs(description.policies.catchupWindow),
        pauseOnFailure: description.policies.pauseOnFailure,
      },
      nextRunTimes: description.info.nextActionTimes.map((time) => time.toISOString()),
      recentRuns: await Promise.all(recent.map((action) => this.runOf(action))),
      runningWorkflowIds: description.info.runningActions.map((action) => action.workflow.workflowId),
      counts: {
        runsStarted: description.info.numActionsTaken,
        skippedOverlap: description.info.numActionsSkippedOverlap,
        missedCatchupWindow: description.info.numActionsMissedCatchupWindow,
      },
      createdAt: description.info.createdAt.toISOString(),
      updatedAt: description.info.lastUpdatedAt?.toISOString() ?? null,
    };
  }

  /**
   * The follow-up schedules in the namespace (other schedules are left out), newest run of each with its outcome.
   * Temporal's schedule list is eventually consistent: a schedule just created may take a moment to appear.
   */
  async list(filter: ListSchedulesFilter = {}): Promise<FollowUpScheduleListEntry[]> {
    const query = listQuery(filter);
    const limit = filter.limit ?? 100;
    if (!Number.isInteger(limit) || limit < 1) throw new InvalidScheduleError(`Invalid filter: limit must be a whole number of at least 1 (got ${limit})`);
    const summaries: ScheduleSummary[] = [];
    for await (const summary of this.client.schedule.list(query ? { query } : {})) {
      if (summary.action?.workflowType !== FOLLOW_UP_WORKFLOW_TYPE) continue;
      summaries.push(summary);
      if (summaries.length >= limit) break;
    }
    return Promise.all(
      summaries.map(async (summary): Promise<FollowUpScheduleListEntry> => {
        const last = summary.info.recentActions[summary.info.recentActions.length - 1];
        return {
          scheduleId: summary.scheduleId,
          projectId: keywordOf(summary, AgentProjectId.name),
          jobId: keywordOf(summary, AgentJobId.name),
          spec: specView(summary.spec ?? {}, summary.memo),
          paused: summary.state.paused,
          note: summary.state.note || null,
          nextRunTimes: summary.info.nextActionTimes.map((time) => time.toISOString()),
          lastRun: last ? await this.runOf(last) : null,
        };
      }),
    );
  }

  /** Stops the schedule from starting runs until it is unpaused; a running follow-up goes on. */
  async pause(scheduleId: string, note = 'Paused with agent-followup'): Promise<void> {
    checkNote(note);
    await this.client.schedule.getHandle(scheduleId).pause(note);
  }

  /** Lets the schedule start runs again (at its next time; missed times within the catch-up window run). */
  async unpause(scheduleId: string, note = 'Unpaused with agent-followup'): Promise<void> {
    checkNote(note);
    await this.client.schedule.getHandle(scheduleId).unpause(note);
  }

  /**
   * Starts a run now, even when the schedule is paused, under the schedule's own overlap policy: the SDK's default
   * for a trigger is ALLOW_ALL, which would start a second follow-up to the job while one is still running.
   */
  async trigger(scheduleId: string): Promise<{ overlap: string }> {
    const handle = this.client.schedule.getHandle(scheduleId);
    const { policies } = await handle.describe();
    await handle.trigger(policies.overlap);
    return { overlap: overlapName(policies.overlap) };
  }

  /** Deletes the schedule. Follow-ups it started keep running; their ids are returned so they can be cancelled. */
  async delete(scheduleId: string): Promise<{ runningWorkflowIds: string[] }> {
    const handle = this.client.schedule.getHandle(scheduleId);
    const description: ScheduleDescription = await handle.describe();
    await handle.delete();
    return { runningWorkflowIds: description.info.runningActions.map((action) => action.workflow.workflowId) };
  }

  /** Closes the connection this client was built on. */
  async close(): Promise<void> {
    await this.client.connection.close();
  }

  /** How a run ended: for a completed one the job's outcome, for a failed one the failure's type and message. */
  private async runOf(action: ScheduleExecutionResult): Promise<ScheduledFollowUpRun> {
    const { workflowId } = action.action.workflow;
    const run: ScheduledFollowUpRun = {
      workflowId,
      scheduledAt: action.scheduledAt.toISOString(),
      startedAt: action.takenAt.toISOString(),
      status: 'UNKNOWN',
    };
    // Without a run id the handle follows continue-as-new to the run that is current now.
    const handle = this.client.workflow.getHandle<typeof followUpWorkflow>(workflowId);
    try {
      run.status = (await handle.describe()).status.name;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return { ...run, status: 'NOT_FOUND' };
      throw error;
    }
    if (run.status === 'COMPLETED') {
      const result: FollowUpResult = await handle.result();
      return { ...run, outcome: result.outcome, prLink: result.prLink, finishedAt: result.finishedAt };
    }
    if (run.status === 'FAILED') {
      const failure = await handle.result().then(
        () => undefined,
        (error: unknown) => failureOf(error),
      );
      return failure ? { ...run, failure } : run;
    }
    return run;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

/** The innermost ApplicationFailure: its type (AgentJobNotFound, …) says more than "Activity task failed". */
function failureOf(error: unknown): { type: string; message: string } {
  if (!(error instanceof WorkflowFailedError)) return { type: 'Error', message: error instanceof Error ? error.message : String(error) };
  let application: ApplicationFailure | undefined;
  let cause: unknown = error.cause;
  while (cause instanceof Error) {
    if (cause instanceof ApplicationFailure) application = cause;
    cause = (cause as Error & { cause?: unknown }).cause;
  }
  if (application) return { type: application.type ?? 'Error', message: application.message };
  const first = error.cause;
  return { type: first?.name ?? 'WorkflowFailed', message: first?.message ?? error.message };
}

function followUpInputOf(args: readonly unknown[] | undefined): FollowUpInput | null {
  const first = args?.[0];
  return FollowUpInputSchema.safeParse(first).success ? (first as FollowUpInput) : null;
}

function specView(spec: ScheduleDescription['spec'], memo: Record<string, unknown> | undefined): FollowUpScheduleSpecView {
  const written = (memo?.[SPEC_MEMO_KEY] ?? {}) as SpecMemo;
  const timezone = spec.timezone || 'UTC';
  // Intervals come back from the server as they are; cron text only from our memo (the server keeps calendars).
  const interval = spec.intervals?.[0];
  if (interval) return { every: formatMs(interval.every), offset: formatMs(interval.offset ?? 0), timezone };
  return { ...(typeof written.cron === 'string' ? { cron: written.cron } : {}), timezone };
}

function overlapName(policy: ScheduleOverlapPolicy): string {
  return (policy ?? ScheduleOverlapPolicy.SKIP).toLowerCase().replace('_', '-');
}

function keywordOf(summary: ScheduleSummary, name: string): string | null {
  const pair = summary.typedSearchAttributes?.getAll().find((entry) => entry.key.name === name);
  return typeof pair?.value === 'string' ? pair.value : null;
}

/** A visibility query on the schedule's search attributes; the ids are checked first, so nothing can be injected. */
function listQuery(filter: ListSchedulesFilter): string | undefined {
  const clauses: string[] = [];
  const problems: string[] = [];
  for (const [field, key] of [
    ['projectId', AgentProjectId.name],
    ['jobId', AgentJobId.name],
  ] as const) {
    const value = filter[field];
    if (value === undefined) continue;
    const checked = FollowUpInputSchema.shape[field].safeParse(value);
    if (!checked.success) problems.push(checked.error.issues.map((issue) => issue.message).join('; '));
    else clauses.push(`${key} = "${value}"`);
  }
  if (problems.length > 0) throw new InvalidScheduleError(`Invalid filter: ${problems.join('; ')}`);
  return clauses.length > 0 ? clauses.join(' AND ') : undefined;
}
