#!/usr/bin/env node
/**
 * The `agent-followup` command: send a follow-up, look at one, cancel one, and manage recurring follow-ups
 * (`schedule …`). Input is validated before any connection is made, and exit codes say how the follow-up ended
 * (README, "Exit codes").
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, WorkflowNotFoundError } from '@temporalio/client';
import { checkFollowUpInput, FollowUpClient, InvalidFollowUpInputError, maxPromptLengthFromEnv, type SendBudget } from './client';
import type { FollowUpInput } from './follow-up/input';
import { queuedLine } from './follow-up/progress-details';
import { excerpt } from './follow-up/start-metadata';
import type { FollowUpProgress, FollowUpResult } from './follow-up/types';
import { endedOutcome, failedOutcome, type FollowUpOutcome } from './outcome';
import {
  checkScheduleRequest,
  FollowUpSchedules,
  InvalidScheduleError,
  type FollowUpScheduleRequest,
  type FollowUpScheduleSpecView,
  type ScheduleOverlapChoice,
  type ScheduledFollowUpRun,
} from './schedules';

/** Process exit codes; documented in the README and stable. */
export const ExitCode = {
  Ok: 0,
  Error: 1,
  BadInput: 2,
  JobFailed: 3,
  JobArchived: 4,
  TimedOut: 5,
  Rejected: 6,
  Cancelled: 7,
  DeliveryUnknown: 8,
} as const;

export interface CliIo {
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
  /** How the CLI reaches Temporal; tests pass a client of their own. */
  connect: () => Promise<FollowUpClient>;
  /** How often --wait asks for progress. */
  progressIntervalMs?: number;
}

const HELP = `agent-followup: send a follow-up instruction to an AI agent job and follow it to its end, on Temporal.

Usage:
  agent-followup send --project ID --job ID (--prompt TEXT | --prompt-file PATH) [options]
  agent-followup status <workflowId> [--json]
  agent-followup cancel <workflowId>
  agent-followup schedule create --project ID --job ID (--prompt TEXT | --prompt-file PATH) (--cron EXPR | --every D) [options]
  agent-followup schedule list [--project ID] [--job ID] [--json]
  agent-followup schedule describe <scheduleId> [--json]
  agent-followup schedule pause <scheduleId> [--note TEXT]
  agent-followup schedule unpause <scheduleId> [--note TEXT]
  agent-followup schedule trigger <scheduleId>
  agent-followup schedule delete <scheduleId>
  agent-followup budget show [--json]
  agent-followup budget set --sends-per-hour N [--weight PROJECT=W ...]
  agent-followup --help

send options:
  --wait                 wait for the job to end and print the final job (otherwise print the workflow id and exit)
  --json                 print one JSON object instead of text
  --workflow-id ID       use this id instead of the deterministic one (same project, job and prompt = same id)
  --initial-interval D   first wait between polls (default 5s); D is "5s", "2m", ... or milliseconds
  --backoff-coefficient N  growth of the wait after each poll (default 2)
  --max-interval D       longest wait between polls (default 60s)
  --timeout D            give up after this long (default 24h)
  --settle-window D      how long an unchanged terminal status must stand after the send to count (default 30s)
  --on-ambiguous-send P  reconcile (default) | retry | fail: what to do when a send may or may not have arrived

schedule create options (the send options above set each run's polling, except --wait and --workflow-id):
  --cron EXPR            when to run: 5-7 cron fields ("0 9 * * MON-FRI") or @hourly, @daily, @weekly, @monthly
  --every D              or run every D (at least 1m), counted from the Unix epoch; --offset D shifts it
  --timezone TZ          IANA zone the cron is read in (default UTC), e.g. Europe/Berlin
  --note TEXT            a note shown by describe and in the Web UI
  --schedule-id ID       use this id instead of followup-schedule/{project}/{job}/{hash}
  --paused               create it paused (trigger still runs it)
  --overlap P            skip (default) | buffer-one: what happens when a run comes due while one is still going
  --catchup-window D     how late a run may still start after a Temporal outage (default 10m; 10s-365d)
  --no-pause-on-failure  keep running after a follow-up fails (default: a failed follow-up pauses the schedule)
  --json                 print one JSON object instead of text
Schedules, their defaults and how to read their results: docs/SCHEDULES.md.

budget: the per-project send budget every worker of TEMPORAL_TASK_QUEUE shares (README, "The send budget")
  --sends-per-hour N     follow-up messages each project may send per hour, across all workers (default 80)
  --weight PROJECT=W     give one project W times the budget (repeat the flag; W=1 returns it to the default)

Environment: TEMPORAL_ADDRESS (localhost:7233), TEMPORAL_NAMESPACE (default), TEMPORAL_TASK_QUEUE (agent-followup),
TEMPORAL_API_KEY / TEMPORAL_TLS_* / TEMPORAL_PROFILE for Temporal Cloud. The agent API key is the worker's, not this
command's.

Exit codes: 0 completed (or started, without --wait); 1 unexpected error; 2 bad input; 3 job ended failed;
4 job ended archived; 5 timed out; 6 the agent API rejected the follow-up (not found, bad key, bad request);
7 cancelled or terminated; 8 delivery unknown (a send failed ambiguously and was not repeated: check the job).
`;

class UsageError extends Error {}

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'send':
        return await send(rest, io);
      case 'status':
        return await status(rest, io);
      case 'cancel':
        return await cancel(rest, io);
      case 'schedule':
        return await schedule(rest, io);
      case 'budget':
        return await budget(rest, io);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        io.out(HELP);
        return command === undefined ? ExitCode.BadInput : ExitCode.Ok;
      default:
        throw new UsageError(`unknown command '${command}'; use send, status, cancel, schedule or budget (see --help)`);
    }
  } catch (error) {
    if (error instanceof UsageError || error instanceof InvalidFollowUpInputError || error instanceof InvalidScheduleError) {
      io.err(`agent-followup: ${error.message}\n`);
      return ExitCode.BadInput;
    }
    if (error instanceof WorkflowNotFoundError) {
      io.err(`agent-followup: no follow-up with workflow id '${error.workflowId}' in this namespace\n`);
      return ExitCode.BadInput;
    }
    if (error instanceof ScheduleNotFoundError) {
      io.err(`agent-followup: no schedule with id '${error.scheduleId}' in this namespace (see: agent-followup schedule list)\n`);
      return ExitCode.BadInput;
    }
    if (error instanceof ScheduleAlreadyRunning) {
      io.err(
        `agent-followup: a schedule with id '${error.scheduleId}' already exists; see it with ` +
          `agent-followup schedule describe ${error.scheduleId}, or pass another --schedule-id\n`,
      );
      return ExitCode.BadInput;
    }
    io.err(`agent-followup: ${error instanceof Error ? error.message : String(error)}\n`);
    return ExitCode.Error;
  }
}

type FlagSpec = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;
type Flags = Record<string, string | boolean | string[] | undefined>;

function parse(args: string[], options: FlagSpec): { values: Flags; positionals: string[] } {
  try {
    const parsed = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as Flags, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The flags that make a follow-up's input (read by `buildInput`), shared by `send` and `schedule create`. */
const FOLLOW_UP_INPUT_FLAGS = {
  project: { type: 'string' },
  job: { type: 'string' },
  prompt: { type: 'string' },
  'prompt-file': { type: 'string' },
  'initial-interval': { type: 'string' },
  'backoff-coefficient': { type: 'string' },
  'max-interval': { type: 'string' },
  timeout: { type: 'string' },
  'settle-window': { type: 'string' },
  'on-ambiguous-send': { type: 'string' },
} as const;

async function send(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    ...FOLLOW_UP_INPUT_FLAGS,
    'workflow-id': { type: 'string' },
    wait: { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.out(HELP);
    return ExitCode.Ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${String(positionals[0])}' (quote the prompt: --prompt "...")`);
  const input = buildInput(values);
  const workflowId = values['workflow-id'] as string | undefined;
  if (workflowId !== undefined && workflowId.trim() === '') throw new UsageError('--workflow-id must not be empty');

  // Validate before connecting: bad input never reaches Temporal.
  checkFollowUpInput(input, maxPromptLengthFromEnv(io.env));
  const followUps = await io.connect();
  try {
    const started = await followUps.start(input, { workflowId });
    if (!values.wait) {
      if (values.json) io.out(`${JSON.stringify(started)}\n`);
      else {
        io.out(
          `${started.attached ? 'Attached to the existing' : 'Started'} follow-up ${started.workflowId}\n` +
            `Follow it with: agent-followup status ${started.workflowId}\n`,
        );
      }
      return ExitCode.Ok;
    }
    if (!values.json) {
      io.err(`${started.attached ? 'Attached to' : 'Started'} follow-up ${started.workflowId}; waiting for the job to end\n`);
    }
    return await waitForEnd(followUps, started.workflowId, Boolean(values.json), io);
  } finally {
    await followUps.close();
  }
}

function buildInput(values: Flags): FollowUpInput {
  const str = (name: string) => values[name] as string | undefined;
  if (str('prompt') !== undefined && str('prompt-file') !== undefined) throw new UsageError('give --prompt or --prompt-file, not both');
  let prompt = str('prompt');
  const promptFile = str('prompt-file');
  if (promptFile !== undefined) {
    try {
      prompt = readFileSync(promptFile, 'utf8');
    } catch (error) {
      throw new UsageError(`cannot read --prompt-file ${promptFile}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
  }
  const polling: Record<string, string | number> = {};
  const durationFlag = (flag: string, field: string) => {
    const value = str(flag);
    if (value !== undefined) polling[field] = /^\d+$/.test(value) ? Number(value) : value;
  };
  durationFlag('initial-interval', 'initialInterval');
  durationFlag('max-interval', 'maxInterval');
  durationFlag('timeout', 'timeout');
  durationFlag('settle-window', 'settleWindow');
  const coefficient = str('backoff-coefficient');
  if (coefficient !== undefined) {
    const number = Number(coefficient);
    if (coefficient.trim() === '' || Number.isNaN(number)) throw new UsageError(`--backoff-coefficient must be a number (got '${coefficient}')`);
    polling.backoffCoefficient = number;
  }
  const missing = ['project', 'job'].filter((name) => str(name) === undefined);
  if (prompt === undefined) missing.push('prompt (or --prompt-file)');
  if (missing.length > 0) throw new UsageError(`missing --${missing.join(', --')} (see --help)`);
  return {
    projectId: str('project') as string,
    jobId: str('job') as string,
    prompt: prompt as string,
    ...(Object.keys(polling).length > 0 ? { polling: polling as FollowUpInput['polling'] } : {}),
    ...(str('on-ambiguous-send') !== undefined ? { onAmbiguousSend: str('on-ambiguous-send') as FollowUpInput['onAmbiguousSend'] } : {}),
  };
}

async function waitForEnd(followUps: FollowUpClient, workflowId: string, json: boolean, io: CliIo): Promise<number> {
  let done = false;
  const reporter = json ? Promise.resolve() : reportProgress(followUps, workflowId, io, () => done);
  try {
    const result = await followUps.result(workflowId);
    done = true;
    await reporter;
    if (json) io.out(`${JSON.stringify({ workflowId, result })}\n`);
    else io.out(describeResult(result));
    return exitCodeForOutcome(result);
  } catch (error) {
    done = true;
    await reporter;
    const { code, type, message } = classifyFailure(error);
    if (json) io.out(`${JSON.stringify({ workflowId, error: { type, message, exitCode: code } })}\n`);
    else io.err(`agent-followup: ${message}\n`);
    return code;
  }
}

async function reportProgress(followUps: FollowUpClient, workflowId: string, io: CliIo, isDone: () => boolean): Promise<void> {
  let last = '';
  while (!isDone()) {
    try {
      const progress = await followUps.progress(workflowId);
      const line = describeProgress(progress);
      if (line !== last) io.err(`${line}\n`);
      last = line;
    } catch {
      // The workflow may be between runs or just finished; the result tells the rest.
    }
    await new Promise((resolve) => setTimeout(resolve, io.progressIntervalMs ?? 2_000));
  }
}

/** The exit code for each way a follow-up can end (README, "Exit codes"). */
const EXIT_CODES: Record<FollowUpOutcome['kind'], number> = {
  completed: ExitCode.Ok,
  failed: ExitCode.JobFailed,
  archived: ExitCode.JobArchived,
  'timed-out': ExitCode.TimedOut,
  rejected: ExitCode.Rejected,
  'invalid-input': ExitCode.BadInput,
  'delivery-unknown': ExitCode.DeliveryUnknown,
  cancelled: ExitCode.Cancelled,
  error: ExitCode.Error,
};

/** The exit code for a follow-up that ended with a terminal job. */
export function exitCodeForOutcome(result: FollowUpResult): number {
  return EXIT_CODES[endedOutcome(result).kind];
}

/** Maps a failed follow-up to an exit code and a one-line reason. */
export function classifyFailure(error: unknown): { code: number; type: string; message: string } {
  try {
    const { kind, type, message } = failedOutcome(error);
    return { code: EXIT_CODES[kind], type, message };
  } catch {
    return { code: ExitCode.Error, type: 'Error', message: error instanceof Error ? error.message : String(error) };
  }
}

function describeResult(result: FollowUpResult): string {
  const lines = [
    `Job ${result.job.id} ended ${result.outcome} after ${result.polls} poll(s).`,
    result.prLink ? `Pull request: ${result.prLink}` : result.outcome === 'completed' ? 'No pull request (no files changed).' : '',
    JSON.stringify(result.job, null, 2),
  ];
  return `${lines.filter(Boolean).join('\n')}\n`;
}

function describeProgress(progress: FollowUpProgress): string {
  if (progress.phase === 'queued') return `  … ${queuedLine(progress)} (one follow-up at a time per job; nothing is sent until its turn)`;
  const polls = progress.polls + (progress.poll?.polls ?? 0);
  const parts = [`${progress.phase}`, `status ${progress.poll?.lastStatus ?? progress.lastStatus ?? 'unknown'}`, `${polls} poll(s)`];
  if (progress.waitingFor === 'settle') parts.push('waiting to confirm the result is this follow-up\'s');
  if (progress.waitingFor === 'confirmation') parts.push('reading the result once more to confirm it');
  if (progress.poll?.nextPollAt) parts.push(`next poll ${progress.poll.nextPollAt}`);
  const lastError = progress.poll?.lastError ?? progress.lastError;
  if (lastError) parts.push(`last error: ${lastError}`);
  return `  … ${parts.join(', ')}`;
}

async function status(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  if (values.help) {
    io.out(HELP);
    return ExitCode.Ok;
  }
  const workflowId = positionals[0];
  if (workflowId === undefined || positionals.length > 1) throw new UsageError('status takes exactly one workflow id');
  const followUps = await io.connect();
  try {
    const found = await followUps.status(workflowId);
    if (values.json) io.out(`${JSON.stringify(found)}\n`);
    else if (found.result) io.out(`Follow-up ${workflowId}: ${found.executionStatus}\n${describeResult(found.result)}`);
    else if (found.progress) io.out(`Follow-up ${workflowId}: ${found.executionStatus}\n${describeProgress(found.progress)}\n`);
    else io.out(`Follow-up ${workflowId}: ${found.executionStatus}\n`);
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}

async function cancel(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {});
  if (values.help) {
    io.out(HELP);
    return ExitCode.Ok;
  }
  const workflowId = positionals[0];
  if (workflowId === undefined || positionals.length > 1) throw new UsageError('cancel takes exactly one workflow id');
  const followUps = await io.connect();
  try {
    await followUps.cancel(workflowId);
    io.out(`Cancellation requested for follow-up ${workflowId}\n`);
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// schedule create | list | describe | pause | unpause | trigger | delete
// ---------------------------------------------------------------------------------------------------------------

const SCHEDULE_COMMANDS = 'create, list, describe, pause, unpause, trigger or delete';

async function budget(args: string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'show' && action !== 'set') throw new UsageError("budget needs 'show' or 'set' (see --help)");
  const { values, positionals } = parse(rest, {
    json: { type: 'boolean' },
    ...(action === 'set' ? { 'sends-per-hour': { type: 'string' }, weight: { type: 'string', multiple: true } } : {}),
  });
  if (values.help) {
    io.out(HELP);
    return ExitCode.Ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${String(positionals[0])}'`);
  const wanted = action === 'set' ? budgetFromFlags(values) : undefined;
  const followUps = await io.connect();
  try {
    if (wanted) await followUps.setSendBudget(wanted);
    const now = await followUps.sendBudget();
    if (values.json) io.out(`${JSON.stringify({ taskQueue: followUps.options.taskQueue, budget: now })}\n`);
    else io.out(describeBudget(now));
    return ExitCode.Ok;
  } finally {
    await followUps.close();
  }
}

function budgetFromFlags(values: Flags): SendBudget {
  const raw = values['sends-per-hour'] as string | undefined;
  if (raw === undefined) throw new UsageError('budget set needs --sends-per-hour N (e.g. 80; the vendor allows 100 per project per hour)');
  const sendsPerProjectPerHour = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(sendsPerProjectPerHour) || sendsPerProjectPerHour <= 0) {
    throw new UsageError(`--sends-per-hour must be a positive number (got '${raw}')`);
  }
  const weights: Record<string, number> = {};
  for (const pair of (values.weight as string[] | undefined) ?? []) {
    const at = pair.lastIndexOf('=');
    const weight = Number(pair.slice(at + 1));
    if (at <= 0 || pair.slice(at + 1).trim() === '' || !Number.isFinite(weight) || weight <= 0) {
      throw new UsageError(`--weight must be PROJECT=W with W a positive number, e.g. --weight my-project=2 (got '${pair}')`);
    }
    weights[pair.slice(0, at)] = weight;
  }
  return { sendsPerProjectPerHour, weights };
}

function describeBudget(budget: SendBudget | null): string {
  if (budget === null) return 'No per-project send budget is set: sends are not paced (set one with: agent-followup budget set --sends-per-hour 80)\n';
  const lines = [`Each project may send ${budget.sendsPerProjectPerHour} follow-up message(s) per hour, shared by every worker.`];
  for (const [project, weight] of Object.entries(budget.weights)) lines.push(`  ${project}: weight ${weight} (${budget.sendsPerProjectPerHour * weight} per hour)`);
  return `${lines.join('\n')}\n`;
}

async function schedule(args: string[], io: CliIo): Promise<number> {
  const [subcommand, ...rest] = args;
  switch (subcommand) {
    case 'create':
      return createSchedule(rest, io);
    case 'list':
      return listSchedules(rest, io);
    case 'describe':
      return describeSchedule(rest, io);
    case 'pause':
    case 'unpause':
      return pauseOrUnpauseSchedule(subcommand, rest, io);
    case 'trigger':
      return triggerSchedule(rest, io);
    case 'delete':
      return deleteSchedule(rest, io);
    case '-h':
    case '--help':
    case 'help':
      io.out(HELP);
      return ExitCode.Ok;
    case undefined:
      throw new UsageError(`schedule needs a command: ${SCHEDULE_COMMANDS} (see --help)`);
    default:
      throw new UsageError(`unknown schedule command '${subcommand}'; use ${SCHEDULE_COMMANDS} (see --help)`);
  }
}

/** Runs `work` with a schedules client on the connection `io.connect()` makes, and always closes that connection. */
async function withSchedules<T>(io: CliIo, work: (schedules: FollowUpSchedules) => Promise<T>): Promise<T> {
  const followUps = await io.connect();
  try {
    return await work(new FollowUpSchedules(followUps.client, followUps.options));
  } finally {
    await followUps.close();
  }
}

/** The one schedule id a command takes. */
function scheduleIdArgument(positionals: string[], command: string): string {
  const scheduleId = positionals[0];
  if (scheduleId === undefined || positionals.length > 1) throw new UsageError(`schedule ${command} takes exactly one schedule id`);
  return scheduleId;
}

/** The shape of every command on one schedule: its flags, --help, exactly one id, then the work on a connection. */
async function onOneSchedule(
  command: string,
  args: string[],
  flags: FlagSpec,
  io: CliIo,
  work: (schedules: FollowUpSchedules, scheduleId: string, values: Flags) => Promise<number>,
): Promise<number> {
  const { values, positionals } = parse(args, flags);
  if (values.help) {
    io.out(HELP);
    return ExitCode.Ok;
  }
  const scheduleId = scheduleIdArgument(positionals, command);
  return withSchedules(io, (schedules) => work(schedules, scheduleId, values));
}

async function createSchedule(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, {
    ...FOLLOW_UP_INPUT_FLAGS,
    cron: { type: 'string' },
    every: { type: 'string' },
    offset: { type: 'string' },
    timezone: { type: 'string' },
    note: { type: 'string' },
    'schedule-id': { type: 'string' },
    paused: { type: 'boolean' },
    overlap: { type: 'string' },
    'catchup-window': { type: 'string' },
    // Node 20's parseArgs has no negated booleans; this is a flag of its own.
    'no-pause-on-failure': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    io.out(HELP);
    return ExitCode.Ok;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument '${String(positionals[0])}' (quote the prompt and the cron expression)`);
  const str = (name: string) => values[name] as string | undefined;
  // Milliseconds when all digits, as for the polling flags; otherwise Temporal's duration strings.
  const duration = (name: string) => {
    const value = str(name);
    return value === undefined ? undefined : /^\d+$/.test(value) ? Number(value) : value;
  };
  const request: FollowUpScheduleRequest = {
    input: buildInput(values),
    ...definedOnly({
      scheduleId: str('schedule-id'),
      cron: str('cron'),
      every: duration('every'),
      offset: duration('offset'),
      timezone: str('timezone'),
      note: str('note'),
      overlap: str('overlap') as ScheduleOverlapChoice | undefined,
      catchupWindow: duration('catchup-window'),
      paused: values.paused === true ? true : undefined,
      pauseOnFailure: values['no-pause-on-failure'] === true ? false : undefined,
    }),
  };

  // Validate before connecting: bad input never reaches Temporal, and nothing is created.
  checkScheduleRequest(request, maxPromptLengthFromEnv(io.env));
  return withSchedules(io, async (schedules) => {
    const created = await schedules.create(request);
    const view = await schedules.describe(created.scheduleId);
    if (values.json) {
      io.out(`${JSON.stringify({ ...created, paused: view.paused, nextRunTimes: view.nextRunTimes })}\n`);
      return ExitCode.Ok;
    }
    io.out(
      [
        `Created schedule ${created.scheduleId}${view.paused ? ' (paused)' : ''}: ${describeSpec(view.spec)}`,
        `Policies: ${describePolicies(view.policies)}`,
        view.nextRunTimes.length > 0
          ? `Next runs: ${view.nextRunTimes.slice(0, 3).join(', ')}`
          : 'No upcoming runs: the spec matches no future time (check the cron expression).',
        `Each run is a follow-up whose workflow id starts with ${created.workflowIdPrefix}-`,
        `Look at it with: agent-followup schedule describe ${created.scheduleId}`,
      ].join('\n') + '\n',
    );
    return ExitCode.Ok;
  });
}

/** Leaves out the fields a flag did not set, so the request only holds what was asked for. */
function definedOnly<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter((entry) => entry[1] !== undefined)) as Partial<T>;
}

async function listSchedules(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(args, { project: { type: 'string' }, job: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) {
    io.out(HELP);
    return ExitCode.Ok;
  }
  if (positionals.length > 0) throw new UsageError(`schedule list takes no arguments (got '${String(positionals[0])}'); filter with --project and --job`);
  const filter = definedOnly({ projectId: values.project as string | undefined, jobId: values.job as string | undefined });
  return withSchedules(io, async (schedules) => {
    const entries = await schedules.list(filter);
    if (values.json) {
      io.out(`${JSON.stringify(entries)}\n`);
      return ExitCode.Ok;
    }
    if (entries.length === 0) {
      io.out('No follow-up schedules found (a schedule created a moment ago may take a few seconds to be listed).\n');
      return ExitCode.Ok;
    }
    for (const entry of entries) {
      const state = entry.paused ? 'PAUSED' : 'active';
      const next = entry.paused ? '' : `, next ${entry.nextRunTimes[0] ?? 'never'}`;
      const last = entry.lastRun ? `; last run: ${describeRun(entry.lastRun)}` : '; no runs yet';
      io.out(`${entry.scheduleId}  ${state}  ${entry.projectId ?? '?'}/${entry.jobId ?? '?'}  ${describeSpec(entry.spec)}${next}${last}\n`);
    }
    return ExitCode.Ok;
  });
}

async function describeSchedule(args: string[], io: CliIo): Promise<number> {
  return onOneSchedule('describe', args, { json: { type: 'boolean' } }, io, async (schedules, scheduleId, values) => {
    const view = await schedules.describe(scheduleId);
    if (values.json) {
      io.out(`${JSON.stringify(view)}\n`);
      return ExitCode.Ok;
    }
    const lines = [
      `Schedule ${view.scheduleId}: ${view.paused ? 'PAUSED' : 'active'}`,
      view.pausedBecause ? `Paused because: ${view.pausedBecause}` : '',
      view.note ? `Note: ${view.note}` : '',
      view.input
        ? `Follow-up: project ${view.input.projectId}, job ${view.input.jobId}: "${excerpt(view.input.prompt, 120)}"`
        : 'Follow-up: (the action is not a follow-up input)',
      `When: ${describeSpec(view.spec)}`,
      `Policies: ${describePolicies(view.policies)}`,
      `Next runs: ${view.paused ? '(paused)' : view.nextRunTimes.slice(0, 3).join(', ') || 'none'}`,
      `Runs: ${view.counts.runsStarted} started, ${view.counts.skippedOverlap} skipped (a run was still going), ` +
        `${view.counts.missedCatchupWindow} missed (outside the catch-up window)`,
      view.recentRuns.length > 0 ? 'Recent runs (newest first):' : 'No runs yet.',
      ...view.recentRuns.map((run) => `  ${describeRun(run)}`),
    ];
    io.out(`${lines.filter(Boolean).join('\n')}\n`);
    return ExitCode.Ok;
  });
}

async function pauseOrUnpauseSchedule(command: 'pause' | 'unpause', args: string[], io: CliIo): Promise<number> {
  return onOneSchedule(command, args, { note: { type: 'string' } }, io, async (schedules, scheduleId, values) => {
    const note = values.note as string | undefined;
    if (command === 'pause') await schedules.pause(scheduleId, note);
    else await schedules.unpause(scheduleId, note);
    io.out(`${command === 'pause' ? 'Paused' : 'Unpaused'} schedule ${scheduleId}\n`);
    return ExitCode.Ok;
  });
}

async function triggerSchedule(args: string[], io: CliIo): Promise<number> {
  return onOneSchedule('trigger', args, {}, io, async (schedules, scheduleId) => {
    const { overlap } = await schedules.trigger(scheduleId);
    io.out(
      `Triggered schedule ${scheduleId} (overlap ${overlap}: if one of its follow-ups is still running, ` +
        `${overlap === 'skip' ? 'this run is skipped' : overlap === 'buffer-one' ? 'this run starts after it' : 'the policy decides'}).\n` +
        `See the run with: agent-followup schedule describe ${scheduleId}\n`,
    );
    return ExitCode.Ok;
  });
}

async function deleteSchedule(args: string[], io: CliIo): Promise<number> {
  return onOneSchedule('delete', args, {}, io, async (schedules, scheduleId) => {
    const { runningWorkflowIds } = await schedules.delete(scheduleId);
    io.out(`Deleted schedule ${scheduleId}\n`);
    for (const workflowId of runningWorkflowIds) {
      io.out(`Its follow-up ${workflowId} is still running; stop it with: agent-followup cancel ${workflowId}\n`);
    }
    return ExitCode.Ok;
  });
}

function describeSpec(spec: FollowUpScheduleSpecView): string {
  if (spec.every !== undefined) return `every ${spec.every}${spec.offset && spec.offset !== '0s' ? ` (offset ${spec.offset})` : ''}`;
  if (spec.cron !== undefined) return `cron "${spec.cron}" in ${spec.timezone}`;
  return `a calendar spec in ${spec.timezone} (not created by agent-followup; see it in the Web UI)`;
}

function describePolicies(policies: { overlap: string; catchupWindow: string; pauseOnFailure: boolean }): string {
  return (
    `overlap ${policies.overlap}, catch-up window ${policies.catchupWindow}, ` +
    (policies.pauseOnFailure ? 'pauses itself when a follow-up fails' : 'keeps running when a follow-up fails')
  );
}

function describeRun(run: ScheduledFollowUpRun): string {
  const parts = [run.workflowId, run.status];
  if (run.outcome) parts.push(`job ${run.outcome}`);
  if (run.prLink) parts.push(run.prLink);
  if (run.failure) parts.push(`${run.failure.type}: ${run.failure.message}`);
  return parts.join('  ');
}

if (require.main === module) {
  runCli(process.argv.slice(2), {
    env: process.env,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    connect: () => FollowUpClient.fromEnvironment(process.env),
  })
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error: unknown) => {
      console.error('agent-followup:', error instanceof Error ? error.message : error);
      process.exitCode = ExitCode.Error;
    });
}
