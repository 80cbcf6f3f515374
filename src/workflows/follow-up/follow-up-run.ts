/**
 * One run of a follow-up: what it knows and how that changes, step by step, as the story in follow-up.ts, delivery
 * and waiting tell it. What it shows of that is written out by run-view.ts; the failures it ends with are shaped by
 * run-failures.ts. Neither calls back here.
 */
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  log,
  setHandler,
  TemporalFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { isKnownStatus, jobState, type AgentJob, type TerminalJobStatus } from '../../kernel/agent-job';
import type { Delivered, FollowUpCheckpoint } from './checkpoint';
import type { QueueNotice } from '../../coordinator/project-coordination';
import type { FollowUpRequest, FollowUpInput } from '../../kernel/request';
import { formatMs } from '../../kernel/duration';
import type { PollSchedule } from '../../kernel/poll-schedule';
import {
  SEND_ANSWERED,
  type FollowUpNotification,
  type FollowUpPhase,
  type FollowUpProgress,
  type FollowUpResult,
  type QueuePlace,
} from '../../kernel/types';
import { sendAnswerOf } from './send-answer';
import { recordFinished, recordStarted, recordTimeToTerminal } from './metrics';
import { endingOf, gaveUpEarlyFailure, timedOutFailure, type FailureFacts } from './run-failures';
import { RunView } from './run-view';
import { checkJobReads, jobReadsSignal, sendAnswerUpdate } from './messages';
import { AnswerInbox } from '../../watch/answer-inbox';
import { type WatchRegistration } from '../../watch/messages';

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
  /** Wait through the workers' shared watchers, of this many shards (null: poll the job itself). */
  watchShards: number | null;
  /** The workers' callback URL (AGENT_NOTIFY_URL), once a check-in told it: used when the input has no `notify`. */
  defaultNotifyUrl: string | null;
  /** The sealed ticket its check-in gave (project-turn.ts), carried to the chain's next runs. */
  ticket: string | null;
  private registeredAtSend: WatchRegistration | null = null;
  /** When the next send attempt is due, while pausing after one the API did not take (null: not pausing). */
  private retryAtMs: number | null = null;
  /** How the follow-up ended without a result, once it has: what a waiting `sendAnswer` fails with. */
  private ending: TemporalFailure | null = null;
  private polls: number;
  private sendAttempts: number;
  private readonly runs: number;
  private readonly view: RunView;
  /** The watcher's answers, for the watch that waits (shared-watch.ts). */
  readonly answers = new AnswerInbox();

  constructor(
    readonly request: FollowUpRequest,
    /** The input as the caller gave it, carried unchanged into continued runs. */
    private readonly input: FollowUpInput,
    checkpoint: FollowUpCheckpoint | undefined,
  ) {
    this.ref = { projectId: request.projectId, jobId: request.jobId };
    // From the start the server recorded (its history's first event), not the workflow clock: the first check-in is a
    // local activity, and a run replayed after that check-in outlasted its workflow task starts on the clock of a later
    // task (`Date.now()` and `runStartTime` alike). The deadline would move, and with it every decision that compares it.
    this.deadlineMs = checkpoint?.deadlineMs ?? workflowInfo().startTime.getTime() + request.polling.timeoutMs;
    this.lastJob = checkpoint?.lastJob ?? null;
    this.polls = checkpoint?.polls ?? 0;
    this.sendAttempts = checkpoint?.sendAttempts ?? 0;
    this.runs = checkpoint?.runs ?? 1;
    this.holdsLane = checkpoint?.holdsLane === true;
    this.watchShards = checkpoint?.watchShards ?? null;
    this.defaultNotifyUrl = checkpoint?.notifyUrl ?? null;
    this.ticket = checkpoint?.ticket ?? null;
    const delivered = checkpoint?.delivered;
    // A run continued after the message carries reads made after it; one continued before carries none to show.
    this.shown = delivered ? this.lastJob : null;
    this.progress = initialProgress(this.ref, this.shown, delivered, {
      polls: this.polls,
      deadlineMs: this.deadlineMs,
      runs: this.runs,
      sendAttempts: this.sendAttempts,
    });
    this.view = new RunView(this.ref, this.progress);
    // A reader of the job (the watcher's, or the poll activity) answers a wait, or says when reads begin to fail and
    // when they succeed again; the failed reads themselves never reach the workflow (they stay on the pending
    // activity, where `status` reads the live count).
    setHandler(jobReadsSignal, (message) => this.onJobReads(message));
    setHandler(sendAnswerUpdate, () => this.awaitSendAnswer(), {
      validator: (...args: unknown[]) => this.checkSendAnswerAsk(args),
    });
    if (!checkpoint) recordStarted();
    this.view.showJob(this.shown);
    this.view.publish();
  }

  private onJobReads(message: unknown): void {
    const checked = checkJobReads(message);
    if (!checked) return void log.warn('Ignored a malformed jobReads signal', { ...this.ref });
    if ('answer' in checked) return this.answers.deliver(checked.answer);
    const { trouble } = checked;
    if (trouble === null) this.clearErrors();
    else {
      this.progress.lastError = trouble.lastError;
      this.progress.errorsSince ??= trouble.since;
      if (typeof trouble.failedReads === 'number') this.progress.failedReads = trouble.failedReads;
    }
    this.view.publish();
  }

  private async awaitSendAnswer() {
    await condition(() => this.ending !== null || this.sendAnswer() !== null);
    if (this.ending !== null) throw this.ending;
    return this.sendAnswer() as NonNullable<ReturnType<FollowUpRun['sendAnswer']>>;
  }

  private checkSendAnswerAsk(args: unknown[]): void {
    if (args.length > 0) throw new Error('sendAnswer takes no arguments');
    // Answerable now: refused with the answer, so only an ask that must wait is written to history.
    const answer = this.ending === null ? this.sendAnswer() : null;
    if (answer !== null) {
      throw ApplicationFailure.create({
        type: SEND_ANSWERED,
        message: `The send is ${answer.state} already: the answer is in this refusal's details`,
        details: [answer],
      });
    }
  }

  /** Enters a phase and shows it. */
  enter(phase: FollowUpPhase, waitingFor: FollowUpProgress['waitingFor'] = null): void {
    this.progress.phase = phase;
    this.progress.waitingFor = waitingFor;
    this.view.publish();
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

  /**
   * A read came back: keep it, count its polls, show it. A read that is the follow-up's result is shown by `finish`
   * (`show: false`), with the outcome, in one upsert.
   */
  leftUnanswered(): void {
    this.progress.leftWatchedWait = true;
  }

  observe(job: AgentJob, polls: number, show = true): void {
    this.lastJob = job;
    this.polls += polls;
    this.progress.polls = this.polls;
    if (polls > 0) this.progress.lastReadAt = new Date().toISOString();
    this.clearErrors();
    // Shown only once the message is out: before it, the job's status belongs to earlier work.
    if (this.progress.sentAt !== null) {
      this.shown = job;
      this.progress.lastStatus = job.status;
      this.progress.lastStatusUnknown = !isKnownStatus(job.status);
      this.progress.prLink = job.prLink;
      if (show) this.view.showJob(this.shown);
    }
    this.view.publish();
  }

  /** The first wait as the send registered it with the job's watcher (null: the follow-up registers its own). */
  firstWaitRegistered(registration: WatchRegistration | null): void {
    this.registeredAtSend = registration;
  }

  /** Taken once, by the wait that follows the send. */
  takeFirstWaitRegistered(): WatchRegistration | null {
    const registration = this.registeredAtSend;
    this.registeredAtSend = null;
    return registration;
  }

  /** The schedule of the wait under way, whoever reads for it (null: none): its next reads go in the details. */
  readsPlanned(schedule: PollSchedule | null): void {
    this.view.planReads(schedule);
    this.view.publish();
  }

  /** The shared job watcher now reading the job for this follow-up (null: none). */
  watchedBy(watcherId: string | null): void {
    this.progress.watcherId = watcherId;
    this.view.publish();
  }

  /** The callback's body for how this follow-up ended: its result, or (null) its failure. */
  notification(result: FollowUpResult | null, failure: unknown): FollowUpNotification {
    const type = failure instanceof ApplicationFailure ? (failure.type ?? null) : null;
    return {
      workflowId: workflowInfo().workflowId,
      ...this.ref,
      outcome: this.progress.outcome ?? 'error',
      prLink: result ? result.prLink : this.progress.prLink,
      job: result ? result.job : this.shown,
      sentAt: result ? result.sentAt : this.progress.sentAt,
      finishedAt: result ? result.finishedAt : new Date(Date.now()).toISOString(),
      failure: result ? null : { type, message: failure instanceof Error ? failure.message : String(failure) },
    };
  }

  /** The send's state as `sendAnswer` tells it; null while it cannot say yet. */
  private sendAnswer() {
    return sendAnswerOf(this.progress, this.lastJob, this.retryAtMs);
  }

  /** Pausing until `atMs` before sending again (null: the pause is over). */
  retryingAt(atMs: number | null): void {
    this.retryAtMs = atMs;
  }

  /** A send attempt is about to go out: recorded first, so a later run knows its outcome is open if this one dies. */
  sending(baseline: AgentJob): number {
    this.sendAttempts += 1;
    this.progress.sendAttempts = this.sendAttempts;
    this.view.record({
      state: 'sending',
      baseline: jobState(baseline),
      attemptStartedAtMs: Date.now(),
      sendAttempts: this.sendAttempts,
      sawActive: false,
    });
    this.enter('sending');
    return this.sendAttempts;
  }

  /** The last attempt certainly sent nothing: a later run of this follow-up has nothing open to settle. */
  notSent(): void {
    this.view.record({
      state: 'not-sent',
      baseline: this.lastJob ? jobState(this.lastJob) : { status: 'unknown', prLink: null, archivedAt: null },
      attemptStartedAtMs: Date.now(),
      sendAttempts: this.sendAttempts,
      sawActive: false,
    });
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
    this.view.record({
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
    this.view.publish();
  }

  private clearErrors(): void {
    this.progress.lastError = null;
    this.progress.errorsSince = null;
    this.progress.failedReads = null;
  }

  /** Reads failed in a row as the shared watcher last told (null: it did not say). */
  get failedReadsTold(): number | null {
    return this.progress.failedReads ?? null;
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
      ...(this.watchShards !== null ? { watchShards: this.watchShards } : {}),
      ...(this.defaultNotifyUrl !== null ? { notifyUrl: this.defaultNotifyUrl } : {}),
      ...(this.ticket !== null ? { ticket: this.ticket } : {}),
    };
    await continueAsNew<(input: FollowUpInput, checkpoint: FollowUpCheckpoint) => Promise<FollowUpResult>>(
      this.input,
      checkpoint,
    );
  }

  /** The result: the job as it ended after this follow-up's own message. */
  finish(job: AgentJob, delivered: Delivered): FollowUpResult {
    const outcome = job.status as TerminalJobStatus;
    log.info('Agent job reached a terminal status', {
      ...this.ref,
      status: job.status,
      prLink: job.prLink,
      polls: this.polls,
    });
    this.enter('finished');
    this.end(outcome);
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
    const ending = endingOf(error, this.failureFacts());
    if (ending.errors) {
      this.progress.errorsSince = ending.errors.since;
      this.progress.lastError = ending.errors.lastError;
    }
    log.warn('Follow-up ended without a result', { ...this.ref, phase: ending.phase, reason: ending.reason });
    this.enter(ending.phase);
    this.end(ending.kind);
    // A waiting sendAnswer fails the same way; an update may only fail with a Temporal failure.
    this.ending =
      ending.failure instanceof TemporalFailure
        ? ending.failure
        : ApplicationFailure.create({ message: String((ending.failure as Error)?.message ?? ending.failure) });
    return ending.failure;
  }

  /** The deadline passed while the follow-up waited for its job (to end, or before the send to be idle). */
  deadlinePassedWhileWaiting(failedReads: number | null): ApplicationFailure {
    const why =
      this.progress.sentAt === null
        ? `the message was not sent: the job was still ${this.lastJob?.status ?? 'unread'}`
        : `last status: ${this.shown?.status ?? 'not read since the message'}`;
    return timedOutFailure(this.failureFacts(), why, failedReads);
  }

  /** The deadline passed before the follow-up could go on (`why`: what it was doing). */
  timedOut(why: string): ApplicationFailure {
    return timedOutFailure(this.failureFacts(), why);
  }

  /** The API asked (Retry-After) to wait past the deadline before it would `action` again. */
  gaveUpEarly(retryAfterMs: number, action: string): ApplicationFailure {
    return gaveUpEarlyFailure(this.failureFacts(), retryAfterMs, action);
  }

  private failureFacts(): FailureFacts {
    const given = this.input.polling?.timeout;
    return {
      jobId: this.ref.jobId,
      shown: this.shown,
      polls: this.polls,
      timeoutMs: this.request.polling.timeoutMs,
      // The timeout as the caller wrote it ("10s" stays "10s"), or formatted when it was given in milliseconds.
      timeoutAsGiven: typeof given === 'string' ? given.trim() : formatMs(this.request.polling.timeoutMs),
      deadlineMs: this.deadlineMs,
      sent: this.progress.sentAt !== null,
      errorsSince: this.progress.errorsSince,
      lastError: this.progress.lastError,
    };
  }

  private end(outcome: Parameters<RunView['showEnd']>[0]): void {
    this.progress.outcome = outcome;
    this.view.showEnd(outcome, this.shown);
    recordFinished(outcome);
  }
}

function queuePlace(notice: QueueNotice): QueuePlace {
  if (notice.reason === 'lane') return { reason: 'lane', jobId: notice.jobId, ahead: notice.ahead };
  const { sentInWindow, limit, windowMs, ahead, nextSlotAtMs, refusedSinceMs } = notice;
  return {
    reason: 'budget',
    sentInWindow,
    limit,
    windowMs,
    ahead,
    countedAt: new Date(notice.said.atMs).toISOString(),
    nextSlotAt: nextSlotAtMs === null ? null : new Date(nextSlotAtMs).toISOString(),
    ...(refusedSinceMs !== undefined ? { refusedSince: new Date(refusedSinceMs).toISOString() } : {}),
  };
}

/** What `progress` says when a run begins: from the start, or where the run before it left off. */
function initialProgress(
  ref: { projectId: string; jobId: string },
  shown: AgentJob | null,
  delivered: FollowUpCheckpoint['delivered'],
  counts: { polls: number; deadlineMs: number; runs: number; sendAttempts: number },
): FollowUpProgress {
  return {
    phase: delivered ? 'waiting' : 'starting',
    ...ref,
    lastStatus: shown?.status ?? null,
    lastStatusUnknown: shown ? !isKnownStatus(shown.status) : false,
    waitingFor: null,
    queue: null,
    polls: counts.polls,
    lastReadAt: null,
    lastError: null,
    errorsSince: null,
    sentAt: delivered ? new Date(delivered.sentAtMs).toISOString() : null,
    deadline: new Date(counts.deadlineMs).toISOString(),
    runs: counts.runs,
    sendAttempts: counts.sendAttempts,
    delivery: delivered?.via ?? null,
    prLink: shown?.prLink ?? null,
    outcome: null,
    watcherId: null,
  };
}
