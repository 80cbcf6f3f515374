/**
 * What callers get back: the result and view types, and the functions that build them from Temporal's schedule
 * descriptions, summaries and failures.
 */
import {
  ScheduleOverlapPolicy,
  WorkflowFailedError,
  type ScheduleDescription,
  type ScheduleSummary,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TerminalJobStatus } from '../agent-api/schemas';
import { FollowUpInputSchema, formatMs, type FollowUpInput } from '../client/input';
import { NOTE_MEMO_KEY, SPEC_MEMO_KEY, type SpecMemo } from './options';

/** What `create` returns. */
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

/** When a schedule runs, as written: cron text (from the memo) or an interval with its offset. */
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
  /** The note it was created with, kept as written (pausing and unpausing do not replace it). */
  note: string | null;
  /**
   * Why it is paused, null when it is not: the pause's own note, or, when a failed run paused it, that run and its
   * failure's type and message (not Temporal's "paused due to workflow failure: …: Activity task failed").
   */
  pausedBecause: string | null;
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
  pausedBecause: string | null;
  nextRunTimes: string[];
  /** The newest run, with how it ended. */
  lastRun: ScheduledFollowUpRun | null;
}

/** The innermost ApplicationFailure: its type (AgentJobNotFound, …) says more than "Activity task failed". */
export function failureOf(error: unknown): { type: string; message: string } {
  if (!(error instanceof WorkflowFailedError))
    return { type: 'Error', message: error instanceof Error ? error.message : String(error) };
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

/** The follow-up input a schedule's action carries, or null when the action is not a follow-up. */
export function followUpInputOf(args: readonly unknown[] | undefined): FollowUpInput | null {
  const first = args?.[0];
  return FollowUpInputSchema.safeParse(first).success ? (first as FollowUpInput) : null;
}

/** The spec as the caller wrote it, from the server's spec and our memo. */
export function specView(
  spec: ScheduleDescription['spec'],
  memo: Record<string, unknown> | undefined,
): FollowUpScheduleSpecView {
  const written = (memo?.[SPEC_MEMO_KEY] ?? {}) as SpecMemo;
  const timezone = spec.timezone || 'UTC';
  // Intervals come back from the server as they are; cron text only from our memo (the server keeps calendars).
  const interval = spec.intervals?.[0];
  if (interval) return { every: formatMs(interval.every), offset: formatMs(interval.offset ?? 0), timezone };
  return { ...(typeof written.cron === 'string' ? { cron: written.cron } : {}), timezone };
}

/** Temporal's overlap policy as the CLI and the views name it: SKIP → skip, BUFFER_ONE → buffer-one. */
export function overlapName(policy: ScheduleOverlapPolicy): string {
  return (policy ?? ScheduleOverlapPolicy.SKIP).toLowerCase().replace('_', '-');
}

/** A keyword search attribute of a listed schedule, or null when it does not carry it. */
export function keywordOf(summary: ScheduleSummary, name: string): string | null {
  const pair = summary.typedSearchAttributes?.getAll().find((entry) => entry.key.name === name);
  return typeof pair?.value === 'string' ? pair.value : null;
}

/** The note the schedule was created with (from our memo), or null. */
export function noteOf(memo: Record<string, unknown> | undefined): string | null {
  const note = memo?.[NOTE_MEMO_KEY];
  return typeof note === 'string' && note !== '' ? note : null;
}

/** Temporal's note when pause-on-failure strikes: "paused due to workflow failure: <id>: <message>" (or "timeout: <id>"). */
// Run ids hold colons (the scheduled time) but never ": ", which separates the id from the message.
const FAILURE_PAUSE = /^paused due to workflow (failure|timeout): (.+?)(?:: |$)/;

/**
 * Why a schedule is paused: the note of a pause by hand, or the failed run that paused it with its own failure, which
 * `failedRun` looks up (the run's failure says more than the message Temporal copied into its note).
 */
export async function pauseReason(
  state: { paused: boolean; note?: string },
  failedRun: (workflowId: string) => Promise<{ type: string; message: string } | undefined>,
): Promise<string | null> {
  if (!state.paused) return null;
  const note = state.note ?? '';
  const match = FAILURE_PAUSE.exec(note);
  if (!match) return note || 'paused (no note given)';
  const workflowId = match[2] as string;
  const failure = match[1] === 'failure' ? await failedRun(workflowId) : undefined;
  const why = failure ? `${failure.type}: ${failure.message}` : match[1] === 'timeout' ? 'the run timed out' : note;
  return `run ${workflowId} failed and pause-on-failure paused the schedule: ${why}`;
}
