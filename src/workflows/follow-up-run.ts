/**
 * One run of a follow-up: what it knows, and everything it shows of that — the `progress` query, the Web UI's
 * current details, the search attributes, its delivery record (memo), its metrics — and how it ends. The story in
 * follow-up.ts, delivery and waiting call it; none of them reports anything themselves.
 */
import { RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  continueAsNew,
  isCancellation,
  log,
  setCurrentDetails,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { isKnownStatus, jobState, type AgentJob, type TerminalJobStatus } from '../agent-api/job';
import type { Delivered, FollowUpCheckpoint } from '../follow-up/checkpoint';
import { checkpointOfFailure, readCheckpoint } from '../follow-up/poll-checkpoint';
import type { QueueNotice } from '../follow-up/project-coordination';
import { renderProgressDetails, roughDuration } from '../follow-up/progress-details';
import type { FollowUpRequest } from '../follow-up/request';
import { formatMs } from '../follow-up/duration';
import { failureKind, type FollowUpOutcomeKind } from '../follow-up/outcome-kind';
import {
  AgentJobId,
  AgentJobStatus,
  AgentPrLink,
  AgentProjectId,
  endingAttributeUpdates,
  jobAttributeUpdates,
} from '../follow-up/search-attributes';
import type { FollowUpInput } from '../follow-up/input';
import {
  DELIVERY_MEMO_KEY,
  FollowUpErrorType,
  RETRY_AFTER_PAST_DEADLINE,
  type RetryAfterPastDeadlineDetails,
  type DeliveryRecord,
  type FollowUpPhase,
  type FollowUpProgress,
  type FollowUpResult,
  type FollowUpTimeoutDetails,
  type QueuePlace,
} from '../follow-up/types';
import { progressQuery, readTroubleSignal } from './definitions';
import { recordFinished, recordStarted, recordTimeToTerminal } from './metrics';

export class FollowUpRun {
  readonly ref: { projectId: string; jobId: string };
  readonly deadlineMs: number;
  readonly progress: FollowUpProgress;
  /** The job as last read, before the message too: what a send is compared with. */
  lastJob: AgentJob | null;
  /**
   * The job as last read after this follow-up's message: all it shows (progress, search attributes, failure details).
   * A read before the message is the job's earlier state, often an earlier result, and would look like this one's.
   */
  private shown: AgentJob | null;
  /** This run holds its job's lane (a continued run keeps the turn of the run before it). */
  holdsLane: boolean;
  private polls: number;
  private sendAttempts: number;
  private readonly runs: number;

  constructor(
    readonly request: FollowUpRequest,
    /** The input as the caller gave it, carried unchanged into continued runs. */
    private readonly input: FollowUpInput,
    checkpoint: FollowUpCheckpoint | undefined,
  ) {
    this.ref = { projectId: request.projectId, jobId: request.jobId };
    this.deadlineMs = checkpoint?.deadlineMs ?? Date.now() + request.polling.timeoutMs;
    this.lastJob = checkpoint?.lastJob ?? null;
    this.polls = checkpoint?.polls ?? 0;
    this.sendAttempts = checkpoint?.sendAttempts ?? 0;
    this.runs = checkpoint?.runs ?? 1;
    this.holdsLane = checkpoint?.holdsLane === true;
    const delivered = checkpoint?.delivered;
    // A run continued after the message carries reads made after it; one continued before carries none to show.
    this.shown = delivered ? this.lastJob : null;
    this.progress = {
      phase: delivered ? 'waiting' : 'starting',
      ...this.ref,
      lastStatus: this.shown?.status ?? null,
      lastStatusUnknown: this.shown ? !isKnownStatus(this.shown.status) : false,
      waitingFor: null,
      queue: null,
      polls: this.polls,
      lastError: null,
      errorsSince: null,
      sentAt: delivered ? new Date(delivered.sentAtMs).toISOString() : null,
      deadline: new Date(this.deadlineMs).toISOString(),
      runs: this.runs,
      sendAttempts: this.sendAttempts,
      delivery: delivered?.via ?? null,
      prLink: this.shown?.prLink ?? null,
      outcome: null,
    };
    setHandler(progressQuery, () => this.progress);
    // The poll activity says when reads begin to fail and when they succeed again; the failed reads themselves never
    // reach the workflow (they stay on the pending activity, where `status` reads the live count).
    setHandler(readTroubleSignal, (trouble) => {
      if (trouble === null) this.clearErrors();
      else {
        this.progress.lastError = trouble.lastError;
        this.progress.errorsSince ??= trouble.since;
      }
      this.publish();
    });
    if (!checkpoint) recordStarted();
    this.updateSearchAttributes();
    this.publish();
  }

  /** Enters a phase and shows it. */
  enter(phase: FollowUpPhase, waitingFor: FollowUpProgress['waitingFor'] = null): void {
    this.progress.phase = phase;
    this.progress.waitingFor = waitingFor;
    this.publish();
  }

  /** Waiting behind other follow-ups to the job, or for a send slot, as the coordinator said (null: checking in). */
  queued(notice: QueueNotice | null): void {
    this.progress.queue = notice === null ? null : queuePlace(notice);
    this.enter('queued');
  }

  /** The coordinator gave this follow-up the job. */
  tookLane(): void {
    this.holdsLane = true;
    this.progress.queue = null;
  }

  /** A send slot came: no longer queued. */
  gotSlot(): void {
    this.progress.queue = null;
    if (this.progress.phase === 'queued') this.enter('starting');
  }

  /** A read came back: keep it, count its polls, show it. */
  observe(job: AgentJob, polls: number): void {
    this.lastJob = job;
    this.polls += polls;
    this.progress.polls = this.polls;
    this.clearErrors();
    // Shown only once the message is out: before it, the job's status belongs to earlier work.
    if (this.progress.sentAt !== null) {
      this.shown = job;
      this.progress.lastStatus = job.status;
      this.progress.lastStatusUnknown = !isKnownStatus(job.status);
      this.progress.prLink = job.prLink;
      this.updateSearchAttributes();
    }
    this.publish();
  }

  /** A send attempt is about to go out: recorded first, so a later run knows its outcome is open if this one dies. */
  sending(baseline: AgentJob): number {
    this.sendAttempts += 1;
    this.progress.sendAttempts = this.sendAttempts;
    this.record({ state: 'sending', baseline: jobState(baseline), attemptStartedAtMs: Date.now(), sendAttempts: this.sendAttempts, sawActive: false });
    this.enter('sending');
    return this.sendAttempts;
  }

  /** The last attempt certainly sent nothing: a later run of this follow-up has nothing open to settle. */
  notSent(): void {
    this.record({ state: 'not-sent', baseline: this.lastJob ? jobState(this.lastJob) : { status: 'unknown', prLink: null, archivedAt: null }, attemptStartedAtMs: Date.now(), sendAttempts: this.sendAttempts, sawActive: false });
  }

  /** The message is known to have arrived. */
  delivered(delivered: Delivered): Delivered {
    log.info('Follow-up message accepted', { ...this.ref, delivery: delivered.via, status: delivered.known.status });
    this.progress.sentAt = new Date(delivered.sentAtMs).toISOString();
    this.progress.delivery = delivered.via;
    this.clearErrors();
    this.recordDelivered(delivered);
    return delivered;
  }

  /** Keeps the delivery record current (`sawActive` changes what a later run may accept). */
  recordDelivered(delivered: Delivered): void {
    this.record({
      state: 'delivered',
      baseline: delivered.baseline,
      attemptStartedAtMs: delivered.sentAtMs,
      sentAtMs: delivered.sentAtMs,
      via: delivered.via,
      sendAttempts: this.sendAttempts,
      sawActive: delivered.sawActive,
    });
  }

  /** Counts send attempts an earlier run already made. */
  resumeSendAttempts(count: number): void {
    this.sendAttempts = Math.max(this.sendAttempts, count);
    this.progress.sendAttempts = this.sendAttempts;
  }

  /** A call to the API failed (and will be tried again): shown with when the failing began. */
  noteError(message: string): void {
    this.progress.lastError = message;
    this.progress.errorsSince ??= new Date(Date.now()).toISOString();
    this.publish();
  }

  private clearErrors(): void {
    this.progress.lastError = null;
    this.progress.errorsSince = null;
  }

  /** Continues as new when Temporal suggests it, so history stays bounded whatever the API does. */
  async continueAsNewIfSuggested(delivered: Delivered | undefined): Promise<void> {
    if (!workflowInfo().continueAsNewSuggested) return;
    log.info('Continuing as new to keep history bounded', { ...this.ref, historyLength: workflowInfo().historyLength });
    const checkpoint: FollowUpCheckpoint = {
      deadlineMs: this.deadlineMs,
      runs: this.runs + 1,
      polls: this.polls,
      sendAttempts: this.sendAttempts,
      lastJob: this.lastJob,
      holdsLane: this.holdsLane,
      ...(delivered ? { delivered } : {}),
    };
    await continueAsNew<(input: FollowUpInput, checkpoint: FollowUpCheckpoint) => Promise<FollowUpResult>>(this.input, checkpoint);
  }

  /** The result: the job as it ended after this follow-up's own message. */
  finish(job: AgentJob, delivered: Delivered): FollowUpResult {
    const outcome = job.status as TerminalJobStatus;
    log.info('Agent job reached a terminal status', { ...this.ref, status: job.status, prLink: job.prLink, polls: this.polls });
    this.enter('finished');
    this.end(outcome);
    recordFinished(outcome);
    recordTimeToTerminal((Date.now() - delivered.sentAtMs) / 1000, outcome);
    return {
      job,
      outcome,
      prLink: job.prLink,
      polls: this.polls,
      runs: this.runs,
      sentAt: new Date(delivered.sentAtMs).toISOString(),
      finishedAt: new Date(Date.now()).toISOString(),
      sendAttempts: this.sendAttempts,
      delivery: delivered.via,
    };
  }

  /** How the follow-up ends when something was thrown: shown, counted, and turned into its own failure type. */
  failed(error: unknown): unknown {
    if (isDeadline(error)) error = this.timedOut(this.progress.sentAt ? `last status: ${this.shown?.status ?? 'not read since the message'}` : 'the message was not sent', failedReadsOf(error));
    else if (causeType(error) === RETRY_AFTER_PAST_DEADLINE) {
      const details = (error as ActivityFailure & { cause: ApplicationFailure }).cause.details?.[0] as RetryAfterPastDeadlineDetails;
      if (details.failingSinceMs !== null) this.progress.errorsSince ??= new Date(details.failingSinceMs).toISOString();
      this.progress.lastError = details.lastError;
      error = this.gaveUpEarly(details.retryAfterMs, `read job '${this.ref.jobId}'`, details.failedReads);
    }
    const phase = isCancellation(error) ? 'cancelled' : isType(error, FollowUpErrorType.TimedOut) ? 'timed-out' : 'failed';
    if (phase === 'failed') this.progress.lastError = describeFailure(error);
    log.warn('Follow-up ended without a result', { ...this.ref, phase, reason: describeFailure(error) });
    const final = withoutStack(phase === 'failed' ? ownFailure(error) : error);
    this.enter(phase);
    const kind = phase === 'cancelled' ? 'cancelled' : final instanceof ApplicationFailure ? failureKind(final.type, final.nonRetryable === true) : 'error';
    this.end(kind);
    recordFinished(kind);
    return final;
  }

  /** The deadline passed. `failedReads`: reads failed in a row at the end, when the poll activity said. */
  timedOut(why: string, failedReads: number | null = null): ApplicationFailure {
    const errors = this.errorsAtEnd(failedReads);
    const details: FollowUpTimeoutDetails = { lastJob: this.shown, polls: this.polls, timeoutMs: this.request.polling.timeoutMs, ...(errors ? { errors } : {}) };
    return ApplicationFailure.create({
      type: FollowUpErrorType.TimedOut,
      message: `The agent job did not reach completed, archived or failed within ${this.timeoutAsGiven()} (${why}).${errors ? ` ${errorsSentence(errors)}` : ''}`,
      nonRetryable: true,
      details: [details],
    });
  }

  /**
   * The API asked (Retry-After) to wait past the deadline before it would `action` again: no call can come in time,
   * so the follow-up ends now as timed out, saying when it gave up and why rather than "within" its timeout.
   */
  gaveUpEarly(retryAfterMs: number, action: string, failedReads: number | null = null): ApplicationFailure {
    const errors = this.errorsAtEnd(failedReads);
    const startedAtMs = this.deadlineMs - this.request.polling.timeoutMs;
    const details: FollowUpTimeoutDetails = {
      lastJob: this.shown,
      polls: this.polls,
      timeoutMs: this.request.polling.timeoutMs,
      retryAfterMs,
      ...(errors ? { errors } : {}),
    };
    return ApplicationFailure.create({
      type: FollowUpErrorType.TimedOut,
      message:
        `The follow-up gave up after ${roughDuration(Math.max(Date.now() - startedAtMs, 0))} of its ${this.timeoutAsGiven()}: the agent API asked ` +
        `(Retry-After) to wait ${roughDuration(retryAfterMs)} before it would ${action} again, past the deadline ` +
        `(${new Date(this.deadlineMs).toISOString()})${this.progress.sentAt ? '' : '; the message was not sent'}.${errors ? ` ${errorsSentence(errors)}` : ''}`,
      nonRetryable: true,
      details: [details],
    });
  }

  /** The errors still failing calls when the follow-up ends, if any. */
  private errorsAtEnd(failedReads: number | null): FollowUpTimeoutDetails['errors'] {
    const { errorsSince, lastError } = this.progress;
    if (errorsSince === null || lastError === null) return undefined;
    return { since: errorsSince, failedReads, lastError };
  }

  /** Marks how the follow-up ended where the Web UI's list and visibility queries see it. */
  private end(outcome: FollowUpOutcomeKind): void {
    this.progress.outcome = outcome;
    this.publish();
    upsertSearchAttributes(endingAttributeUpdates(outcome, workflowInfo().typedSearchAttributes.get(AgentJobStatus)));
  }

  /** The timeout as the caller wrote it ("10s" stays "10s"), or formatted when it was given in milliseconds. */
  private timeoutAsGiven(): string {
    const given = this.input.polling?.timeout;
    return typeof given === 'string' ? given.trim() : formatMs(this.request.polling.timeoutMs);
  }

  private record(record: DeliveryRecord): void {
    upsertMemo({ [DELIVERY_MEMO_KEY]: record });
  }

  /** Keeps AgentJobStatus and AgentPrLink current, so a visibility query by status finds the follow-up. */
  private updateSearchAttributes(): void {
    const attributes = workflowInfo().typedSearchAttributes;
    const updates = jobAttributeUpdates(this.ref, this.shown, {
      projectId: attributes.get(AgentProjectId),
      jobId: attributes.get(AgentJobId),
      status: attributes.get(AgentJobStatus),
      prLink: attributes.get(AgentPrLink),
    });
    if (updates.length > 0) upsertSearchAttributes(updates);
  }

  /** The Web UI's "Current details": no history events, so it can change as often as the progress does. */
  private publish(): void {
    setCurrentDetails(renderProgressDetails(this.progress));
  }
}

/** The follow-up's deadline passed while an activity waited: its schedule-to-close ran out. */
export function isDeadline(error: unknown): boolean {
  if (!(error instanceof ActivityFailure)) return false;
  const cause = error.cause;
  if (error.retryState === RetryState.TIMEOUT) return true;
  // None of our activities sets a schedule-to-start timeout of its own, so the server's SCHEDULE_TO_START is the
  // schedule-to-close deadline reached while the task was still queued (a send held back by the project's budget).
  return cause instanceof TimeoutFailure && (cause.timeoutType === TimeoutType.SCHEDULE_TO_CLOSE || cause.timeoutType === TimeoutType.SCHEDULE_TO_START);
}

/** "Calls to the agent API had failed since 12:01:05 UTC (14 reads in a row); last: HttpError: …". */
function errorsSentence(errors: NonNullable<FollowUpTimeoutDetails['errors']>): string {
  const count = errors.failedReads ? ` (${errors.failedReads} read${errors.failedReads === 1 ? '' : 's'} in a row)` : '';
  return `Calls to the agent API had failed since ${errors.since.slice(11, 19)} UTC${count}; last: ${errors.lastError}`;
}

/** Reads failed in a row when the wait ran out, from its last failure or heartbeat (null: not known). */
function failedReadsOf(error: unknown): number | null {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  const checkpoint =
    cause instanceof ApplicationFailure ? checkpointOfFailure(cause.details) : cause instanceof TimeoutFailure ? readCheckpoint(cause.lastHeartbeatDetails) : undefined;
  return checkpoint?.failedReads ? checkpoint.failedReads : null;
}

/** The type of an activity's own failure under Temporal's wrapper, if it has one. */
function causeType(error: unknown): string | undefined {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? (error.cause.type ?? undefined) : undefined;
}

function isType(error: unknown, type: string): boolean {
  return error instanceof ApplicationFailure && error.type === type;
}

/**
 * The failure that ends the follow-up, with the real reason on top: an activity's own failure (AgentJobNotFound,
 * AgentApiUnauthorized, ...) rather than Temporal's "Activity task failed" wrapped around it.
 */
function ownFailure(error: unknown): unknown {
  if (!(error instanceof ActivityFailure) || !(error.cause instanceof ApplicationFailure)) return error;
  const cause = error.cause;
  return ApplicationFailure.create({ type: cause.type ?? undefined, message: cause.message, details: cause.details ? [...cause.details] : undefined, nonRetryable: true });
}

/** "Type: message" of the failure that ended the follow-up, from the activity's cause when there is one. */
export function describeFailure(error: unknown): string {
  const failure = error instanceof ActivityFailure && error.cause ? error.cause : error;
  if (failure instanceof ApplicationFailure) return `${failure.type ?? 'Error'}: ${failure.message}`;
  return failure instanceof Error ? failure.message : String(failure);
}

/**
 * The Web UI shows a failure's stack trace under its message; for a failure this workflow decided on, that would only
 * show the worker's file paths. Type and message say what happened.
 */
export function withoutStack(error: unknown): unknown {
  if (error instanceof ApplicationFailure) error.stack = '';
  return error;
}

function queuePlace(notice: QueueNotice): QueuePlace {
  if (notice.reason === 'lane') return notice;
  const { nextSlotAtMs, ...rest } = notice;
  return { ...rest, nextSlotAt: nextSlotAtMs === null ? null : new Date(nextSlotAtMs).toISOString() };
}
