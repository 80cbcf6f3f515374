/**
 * The checks a job watcher and a waiting follow-up run on the messages they take (pure and workflow-safe, like
 * coordinator-messages.ts): anyone who may signal a workflow in the namespace can send these by name, and a handler
 * that throws on a malformed one fails the workflow task again on every retry, which would stop the watcher and every
 * wait it holds. A malformed message changes nothing; a registration is kept only with the fields it documents, so
 * no stray field grows the book.
 */
import { isJobState, type JobState } from '../kernel/agent-job';
import { isFiniteNumber, isId, isObject, isTime, isWholeNumber } from '../kernel/message-checks';
import type { PollSchedule } from '../kernel/poll-schedule';
import { SEEN_STATES_KEPT, type ResultRule } from '../kernel/result-rule';
import { type BookLook, type Unwatch, type WatchRegistration, type WaitReadReport } from './messages';

/** An `awaitChanges` look at the book, or null. */
export function checkBookLook(value: unknown): BookLook | null {
  if (!isObject(value)) return null;
  const { version, asks, attempt, reader } = value;
  if (![version, asks, attempt].every((n) => isWholeNumber(n) && n >= 0)) return null;
  if (reader !== undefined && !isId(reader)) return null;
  return {
    version: version as number,
    asks: asks as number,
    attempt: attempt as number,
    ...(reader !== undefined ? { reader: reader as string } : {}),
  };
}

/** A registration (one of a `watchJobBatch`), as kept, or null. */
export function checkRegistration(value: unknown): WatchRegistration | null {
  if (!isObject(value)) return null;
  const { workflowId, runId, projectId, jobId, known, acceptUnchangedFromMs, readAtOnce, round, replyTo, readBefore } =
    value;
  const result = value.result === undefined ? undefined : checkResultRule(value.result);
  if (result === null) return null;
  if (![workflowId, runId, projectId, jobId, replyTo].every(isId)) return null;
  if (known !== null && !isJobState(known)) return null;
  if (acceptUnchangedFromMs !== null && !isTime(acceptUnchangedFromMs)) return null;
  if (typeof readAtOnce !== 'boolean' || !isWholeNumber(round) || round < 0) return null;
  const schedule = checkSchedule(value.schedule);
  if (!schedule) return null;
  if (
    readBefore !== undefined &&
    !(isObject(readBefore) && isTime(readBefore.atMs) && typeof readBefore.status === 'string')
  )
    return null;
  return {
    workflowId: workflowId as string,
    runId: runId as string,
    projectId: projectId as string,
    jobId: jobId as string,
    known: known === null ? null : jobStateOf(known),
    acceptUnchangedFromMs,
    schedule,
    readAtOnce,
    round,
    replyTo: replyTo as string,
    ...(result !== undefined ? { result } : {}),
    ...(readBefore !== undefined
      ? { readBefore: { atMs: readBefore.atMs as number, status: readBefore.status as string } }
      : {}),
  };
}

/** An `unwatchJob`: the follow-up and the name of its wait, and maybe its run and the round answered; or null. */
export function checkUnwatch(value: unknown): Unwatch | null {
  if (!isObject(value) || !isId(value.workflowId) || !isId(value.replyTo)) return null;
  const { workflowId, replyTo, runId, round } = value;
  if (runId !== undefined && !isId(runId)) return null;
  if (round !== undefined && !(isWholeNumber(round) && round >= 0)) return null;
  return { workflowId, replyTo, ...(runId !== undefined ? { runId } : {}), ...(round !== undefined ? { round } : {}) };
}

/** The well-formed reports among those a reader passes with its query; the rest are dropped. */
export function checkReports(value: unknown): WaitReadReport[] {
  if (!Array.isArray(value)) return [];
  return value.filter((report: unknown): report is WaitReadReport => {
    if (
      !isObject(report) ||
      !isId(report.workflowId) ||
      !isId(report.runId) ||
      !isWholeNumber(report.round) ||
      !isId(report.replyTo)
    )
      return false;
    const { reads, lastRead, failingSinceMs, failedReads, lastError, nextReadAtMs } = report;
    if (!isWholeNumber(reads) || !isWholeNumber(failedReads)) return false;
    if (
      lastRead !== null &&
      !(
        isObject(lastRead) &&
        isTime(lastRead.atMs) &&
        (lastRead.status === null || typeof lastRead.status === 'string')
      )
    )
      return false;
    return (
      (failingSinceMs === null || isTime(failingSinceMs)) &&
      (lastError === null || typeof lastError === 'string') &&
      (nextReadAtMs === null || isTime(nextReadAtMs))
    );
  });
}

function checkSchedule(value: unknown): PollSchedule | null {
  if (!isObject(value)) return null;
  const { startedAtMs, initialIntervalMs, backoffCoefficient, maxIntervalMs, deadlineMs } = value;
  if (!isTime(startedAtMs) || !isTime(deadlineMs)) return null;
  if (
    !isFiniteNumber(initialIntervalMs) ||
    initialIntervalMs <= 0 ||
    !isFiniteNumber(maxIntervalMs) ||
    maxIntervalMs <= 0
  )
    return null;
  if (!isFiniteNumber(backoffCoefficient) || backoffCoefficient < 1) return null;
  return { startedAtMs, initialIntervalMs, backoffCoefficient, maxIntervalMs, deadlineMs };
}

/** A registration's result rule, kept with only its documented fields, or null. */
function checkResultRule(value: unknown): ResultRule | null {
  if (!isObject(value)) return null;
  const { baseline, sentAtMs, settleWindowMs, sawActive, seen } = value;
  if (!isJobState(baseline) || !isTime(sentAtMs) || !isTime(settleWindowMs)) return null;
  if (typeof sawActive !== 'boolean') return null;
  if (!Array.isArray(seen) || seen.length === 0 || seen.length > SEEN_STATES_KEPT || !seen.every(isJobState))
    return null;
  return {
    baseline: jobStateOf(baseline),
    sentAtMs,
    settleWindowMs,
    sawActive,
    seen: (seen as JobState[]).map(jobStateOf),
  };
}

function jobStateOf({ status, prLink, archivedAt }: JobState): JobState {
  return { status, prLink, archivedAt };
}
