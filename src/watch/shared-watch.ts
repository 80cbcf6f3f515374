/**
 * A follow-up's side of shared watching: it registers each wait with its shard's watcher (job-watcher.ts) and waits
 * on a durable condition for the answer, with no activity of its own pending. The first wait after a send is
 * registered by the send activity itself (FirstWait), which saves the follow-up a signal and a workflow task; the
 * follow-up adopts it. It does not depend on the watcher alone: after a silence of sixty poll gaps it registers again
 * (which starts the watcher if it is gone), its own deadline ends the wait whatever the watcher does, and a wait the
 * watcher refused (its book full, or its id held by another workflow) moves on to the next watcher of the shard's
 * chain (`…/<shard>/1`, `/2`, ...); only past the last is it the follow-up's own to poll.
 */
import {
  ActivityFailure,
  proxyActivities,
  ApplicationFailure,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  log,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import { sameJobState, type AgentJob } from '../kernel/agent-job';
import { formatMs } from '../kernel/duration';
import { isAnswer, type PollSchedule, type WaitRequest } from '../kernel/poll-schedule';
import {
  confirmsFailure,
  confirmsTold,
  definiteFailureOf,
  isAnswerTo,
  isEarlierAnswer,
  isRetryAfterWithin,
  type WatchAnswer,
} from './watch-answer';
import { watchShardOf } from './watcher-book';
import { Alarm } from './alarm';
import { unwatchJobSignal, type WatchRegistration } from './messages';
import type { AnswerInbox } from './answer-inbox';
import { MAX_OVERFLOW, WATCHER_ID_TAKEN, watcherWorkflowId } from '../kernel/workflow-ids';
import { type FollowUpActivities, type PollResult } from '../workflows/activity-contract';
import type { JobRef } from '../kernel/agent-job';

/**
 * Silence, in poll gaps at the schedule's cap, after which a follow-up registers its wait again: an hour at the default
 * schedule. It only covers a watcher lost while no worker ran (a reader puts back the waits of a watcher terminated
 * under it, a worker's guard restarts one terminated between its timed turns; `pollNow` registers again at once), and
 * each time costs every waiting follow-up two workflow tasks and a read: a shorter silence saturated a worker with
 * 10,000 waiting (docs/BENCHMARKS.md).
 */
const SILENT_GAPS_BEFORE_REREGISTERING = 60;

/** Room after the deadline for the watcher's last read, planned on the deadline itself, to arrive. */
const LAST_READ_GRACE_MS = 5_000;

/** Registers a wait with its shard's watcher, starting the watcher if need be: every registration but the send's own. */
export function registerWatch(
  request: { watcherId: string; registration: WatchRegistration },
  deadlineMs: number,
): Promise<void> {
  const { registerWatch: register } = proxyActivities<FollowUpActivities>({
    scheduleToCloseTimeout: Math.max(deadlineMs - Date.now(), 1_000),
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', maximumInterval: '30s' },
    summary: `register with the job watcher ${request.watcherId} (starting it)`,
  });
  return register(request);
}

/**
 * One read of the job, made by the follow-up itself: a read asked for (pollNow) while a shared watcher follows the job,
 * which would come to it only at its next look at its book (a workflow task and a query later, or 2 s for a watcher
 * that reads by its timers); or the read that confirms what a watcher told before it ends a wait. Exactly one GET: the schedule given to the poll
 * ends now, so no second read is planned, and a failed read is not retried (the wait goes back to the watcher, which
 * reads again at once and tells of the failure as it tells of any other). `known: null` returns the read as it is.
 */
export function readAgentJobOnce(
  ref: JobRef,
  schedule: PollSchedule,
  summary = `read job ${ref.jobId} now (asked for)`,
): Promise<PollResult> {
  const { pollAgentJob: read } = proxyActivities<FollowUpActivities>({
    // AGENT_API_REQUEST_TIMEOUT is at most 25 s; the heartbeats during the read notice a lost worker sooner.
    startToCloseTimeout: '30s',
    heartbeatTimeout: '10s',
    retry: { maximumAttempts: 1 },
    summary,
  });
  return read({
    ...ref,
    known: null,
    acceptUnchangedFromMs: null,
    readAtOnce: true,
    schedule: { ...schedule, deadlineMs: Date.now() },
  });
}

/**
 * What a shared watch needs of the follow-up it waits for: plain values and two calls back, so the watch holds none of
 * the follow-up's own state (the follow-up's run, follow-up-run.ts, is one).
 */
export interface WatchingRun {
  readonly ref: JobRef;
  readonly deadlineMs: number;
  /** Reads failed in a row as the watcher last told (null: it did not say). */
  readonly failedReadsTold: number | null;
  /** Where the follow-up's `jobReads` handler puts its watcher's answers: the watch that waits takes them. */
  readonly answers: AnswerInbox;
  /** Counts and shows a read the follow-up made itself while its watcher holds the wait (a read asked for). */
  observe(job: AgentJob, polls: number): void;
  /** The failure a follow-up ends with when its deadline passes while it waits. */
  deadlinePassedWhileWaiting(failedReads: number | null): Error;
  /** It leaves a wait its watcher holds unanswered: the watcher's reads of it will never be told (see `leave`). */
  leftUnanswered(): void;
}

/** The watcher's book was full: the follow-up polls for this wait itself, at once if the watcher was to read at once. */
export interface RefusedWait {
  refused: true;
  readAtOnce: boolean;
  /** Reads the watcher made for the wait this one replaced, which no answer counted. */
  polls: number;
  /** A read asked for in this wait found the job working (see `askedSawActive`). */
  sawActive: boolean;
}

export type WatchedRequest = WaitRequest;

/**
 * A read that ends a wait. `told`: the watcher's read, told by a signal anyone in the namespace can forge: before it
 * decides a result the follow-up reads the job itself (`ownReadOf`).
 */
export type WatchedRead = PollResult & { told?: true };

/**
 * The follow-up's own read (one GET) of a job a watcher told it: a read that fails as the watcher told (`toldFailure`),
 * or for good, ends the wait; null when the read failed only for now, and the told news is not believed.
 */
async function ownReadOf(
  run: WatchingRun,
  schedule: PollSchedule,
  summary: string,
  toldFailure?: { type: string; message: string; details: unknown[] },
): Promise<PollResult | null> {
  try {
    return await readAgentJobOnce(run.ref, schedule, summary);
  } catch (error) {
    if (CancellationScope.current().consideredCancelled) throw error;
    if (isRetryAfterWithin(error, run.deadlineMs, Date.now())) {
      log.info('The API asked to wait before reading the job its watcher told of; waiting on', { ...run.ref });
      return null;
    }
    if (toldFailure && confirmsFailure(toldFailure.type, error))
      throw ApplicationFailure.create({ ...toldFailure, nonRetryable: true });
    const definite = definiteFailureOf(error);
    if (definite)
      throw ApplicationFailure.create({
        type: definite.type ?? 'Error',
        message: definite.message,
        details: definite.details ?? [],
        nonRetryable: true,
      });
    log.warn('The follow-up’s own read of a job its watcher told of failed for now; waiting on', {
      ...run.ref,
      error: String(error),
    });
    return null;
  }
}

/**
 * The follow-up's own read of a job its watcher told it ended, made before that ends anything: the told read counts
 * only if this read shows the same id, status and prLink; otherwise this read stands in its place (it is the job as it
 * is, read by the follow-up). Null when the read failed for now: the told read is not believed, and the wait goes on.
 */
export async function confirmTold(
  run: WatchingRun,
  schedule: PollSchedule,
  told: PollResult,
): Promise<PollResult | null> {
  const own = await ownReadOf(run, schedule, `read job ${run.ref.jobId} to confirm what its watcher told`);
  if (own === null) return null;
  const polls = told.polls + own.polls;
  // Confirmed, it stands where the told read stood: after the read the watcher made before it.
  if (confirmsTold(told.job, own.job))
    return {
      ...own,
      polls,
      sawActive: told.sawActive || own.sawActive,
      ...(told.previous !== undefined ? { previous: told.previous } : {}),
    };
  log.warn('The follow-up’s own read does not show what its watcher told; it goes by its own read', {
    ...run.ref,
    told: { status: told.job.status, prLink: told.job.prLink ?? null },
    read: { status: own.job.status, prLink: own.job.prLink ?? null },
  });
  return { ...own, polls };
}

/** The watcher of a follow-up's shard. */
export function sharedWatcherId(ref: { projectId: string; jobId: string }, shards: number, overflow = 0): string {
  return watcherWorkflowId(workflowInfo().taskQueue, watchShardOf(ref.projectId, ref.jobId, shards), overflow);
}

export class SharedWatch {
  private round = 0;
  /** The current wait's name: only an answer that carries it is taken. */
  private replyTo = '';
  /** The name of the wait the watcher was last given: what leaving takes back (a read asked for may answer a newer one). */
  private heldName = '';
  /** Bounds every wait (the silence, the deadline); never cancelled, so an answered wait costs no timer event. */
  private readonly alarm = new Alarm();
  private answer: WatchAnswer | null = null;
  private registered = false;
  /** Another workflow holds the watcher's id: the wait moves on to the next watcher. */
  private watcherTaken = false;
  /** Which watcher of the shard's chain holds this run's waits (0: the shard's own). */
  private overflow = 0;
  /** The first wait, registered by the send activity: taken as this follow-up's own if its first wait is the same. */
  private registeredAtSend: WatchRegistration | null;
  /**
   * Whether a read asked for that was not an answer found the job working: that proves the agent took the message, and
   * the follow-up learns it with the next answer (the read itself is counted and shown at once).
   */
  private askedSawActive = false;

  constructor(
    private readonly run: WatchingRun,
    private readonly shards: number,
    registeredAtSend: WatchRegistration | null,
  ) {
    this.registeredAtSend = registeredAtSend;
    // Before the watch opens: an answer to that wait that came first (held by the inbox) is this wait's.
    if (registeredAtSend) {
      this.round = registeredAtSend.round;
      this.replyTo = registeredAtSend.replyTo;
      this.heldName = registeredAtSend.replyTo;
      this.registered = true;
    }
    run.answers.open((answer) => {
      // An answer to an earlier wait (a read asked for replaced it), or from anyone but the watcher, is not this wait's.
      const to = { round: this.round, replyTo: this.replyTo };
      if (!this.registered || !isAnswerTo(answer, to, this.run.ref.jobId)) {
        if (isEarlierAnswer(answer, to) || (!this.registered && isAnswerTo(answer, to, this.run.ref.jobId))) {
          log.info('Ignored a job answer to an earlier wait', { ...this.run.ref, round: this.round });
        } else {
          log.warn('Ignored a job answer not meant for this follow-up', { ...this.run.ref, round: this.round });
        }
        return;
      }
      this.answer = answer;
      // The watcher forgets a wait it answered: nothing to take back when the follow-up ends.
      this.registered = false;
    });
  }

  /** The watcher that holds this follow-up's waits: its shard's, or the one past it a refusal moved it on to. */
  get watcherId(): string {
    return sharedWatcherId(this.run.ref, this.shards, this.overflow);
  }

  /**
   * After a refusal, the next watcher of the shard's chain holds this run's waits (it starts with the first wait
   * registered with it); false once the chain is used up, and the follow-up polls for itself.
   */
  moveOn(): boolean {
    if (this.overflow >= MAX_OVERFLOW) return false;
    this.overflow += 1;
    this.watcherTaken = false;
    log.info('Moving this follow-up’s waits on to the next job watcher', { watcherId: this.watcherId });
    return true;
  }

  /**
   * One wait: registered with the watcher, answered by it (or ended by the deadline). A read asked for is made here at
   * once; only if it is not an answer (by the watcher's own rule) does the wait go to the watcher, from the schedule's
   * next point.
   */
  /**
   * The schedule the send registered the first wait with (null: none pending). It started at the send's answer, on
   * the activity's clock: the wait keeps it, so a registration again (after a read asked for) keeps its points.
   */
  scheduleAtSend(): PollSchedule | null {
    return this.registeredAtSend?.schedule ?? null;
  }

  async wait(request: WatchedRequest): Promise<WatchedRead | RefusedWait> {
    const atSend = this.registeredAtSend;
    this.registeredAtSend = null;
    const round =
      atSend && isSameWait(atSend, request) ? { registered: atSend, held: true } : await this.newRound(request);
    if ('answered' in round) return round.answered;
    let registration = round.registered;
    if (!round.held) return this.readsItself(registration);
    const silenceMs = SILENT_GAPS_BEFORE_REREGISTERING * request.schedule.maxIntervalMs;
    let silentSinceMs = Date.now();
    const endsAtMs = this.run.deadlineMs + LAST_READ_GRACE_MS;
    while (this.answer === null) {
      if (Date.now() >= endsAtMs) throw this.run.deadlinePassedWhileWaiting(this.run.failedReadsTold);
      // Within a tenth of the silence counts as the silence: an alarm set by the wait before rings a little early.
      if (Date.now() >= silentSinceMs + silenceMs * 0.9 && Date.now() < this.run.deadlineMs) {
        log.info('No word from the job watcher; registering the wait again', {
          watcherId: this.watcherId,
          round: this.round,
        });
        registration = { ...registration, readAtOnce: true };
        if (!(await this.register(registration))) return this.readsItself(registration);
        silentSinceMs = Date.now();
      }
      const wakeAtMs = Math.min(endsAtMs, silentSinceMs + silenceMs);
      this.alarm.setBy(
        wakeAtMs,
        wakeAtMs === endsAtMs
          ? `wait for job ${this.run.ref.jobId}'s watcher until the follow-up's deadline`
          : `wait for job ${this.run.ref.jobId}'s watcher; register again after ${formatMs(silenceMs)} of silence`,
      );
      await condition(() => this.answer !== null || this.alarm.rang);
    }
    const answer = this.answer as unknown as WatchAnswer;
    if (answer.kind === 'refused') {
      log.info('The job watcher’s book is full; polling this wait itself', {
        watcherId: this.watcherId,
        round: this.round,
      });
      return {
        refused: true,
        readAtOnce: registration.readAtOnce,
        polls: answer.polls,
        sawActive: this.takeAskedSawActive(),
      };
    }
    // A failure told is believed only when the follow-up's own read fails so too, or for good (ownReadOf throws then).
    if (answer.kind === 'failure') {
      const own = await ownReadOf(
        this.run,
        request.schedule,
        `read job ${this.run.ref.jobId}: its watcher told a failure`,
        { type: answer.type, message: answer.message, details: answer.details },
      );
      if (own === null) return this.wait({ ...request, readAtOnce: false });
      log.warn('The follow-up’s own read found the job its watcher told had failed; waiting on', {
        ...this.run.ref,
        told: answer.type,
        status: own.job.status,
      });
      return this.withAskedSawActive({ ...own, polls: own.polls + answer.polls });
    }
    return this.withAskedSawActive({
      job: answer.job,
      readAtMs: answer.readAtMs,
      polls: answer.polls,
      sawActive: answer.sawActive,
      ...(request.result ? { previous: answer.previous ?? null } : {}),
      told: true,
    });
  }

  /** No watcher of ours can hold the wait (another workflow holds its id): the follow-up reads for it itself. */
  private readsItself(registration: WatchRegistration): RefusedWait {
    return { refused: true, readAtOnce: registration.readAtOnce, polls: 0, sawActive: this.takeAskedSawActive() };
  }

  /** A read asked for may have been the one that saw the job working. */
  private withAskedSawActive(result: WatchedRead): WatchedRead {
    // The read itself was counted when it was made.
    return withEarlierReads(result, { polls: 0, sawActive: this.takeAskedSawActive() });
  }

  private takeAskedSawActive(): boolean {
    const sawActive = this.askedSawActive;
    this.askedSawActive = false;
    return sawActive;
  }

  /**
   * Registers a new round of the wait, after making the read asked for, if any: a read that answers (by the watcher's
   * own rule) is returned instead.
   */
  private async newRound(
    request: WatchedRequest,
  ): Promise<{ registered: WatchRegistration; held: boolean } | { answered: PollResult }> {
    this.round += 1;
    this.replyTo = uuid4();
    this.answer = null;
    const asked = request.readAtOnce ? await this.readAsked(request) : null;
    // The follow-up's own read, made with no read of this round before it.
    const memory = { previous: null, sawActive: asked?.sawActive ?? false };
    if (asked && isAnswer(request, asked.job, asked.readAtMs, memory))
      return { answered: this.withAskedSawActive(request.result ? { ...asked, previous: null } : asked) };
    if (asked) {
      // Counted and shown now, like any other read: `status` should not wait for the next answer to show it.
      this.run.observe(asked.job, asked.polls);
      this.askedSawActive ||= asked.sawActive;
    }
    const { workflowId, runId } = workflowInfo();
    const registration: WatchRegistration = {
      workflowId,
      runId,
      ...this.run.ref,
      ...request,
      readAtOnce: request.readAtOnce && asked === null,
      round: this.round,
      replyTo: this.replyTo,
      ...(asked ? { readBefore: { atMs: asked.readAtMs, status: asked.job.status } } : {}),
    };
    return { registered: registration, held: await this.register(registration) };
  }

  /**
   * The read asked for, by the follow-up itself: the watcher would make it only at its next look at its book. A failed
   * read (null) goes to the watcher, which reads again at once and tells of the failure as it tells of any other.
   */
  private async readAsked(request: WatchedRequest): Promise<PollResult | null> {
    try {
      return await readAgentJobOnce(this.run.ref, request.schedule);
    } catch (error) {
      if (CancellationScope.current().consideredCancelled) throw error;
      log.info('The read asked for failed; the job watcher reads the job at once instead', { error: String(error) });
      return null;
    }
  }

  /**
   * The follow-up is done with this watch (its wait answered, or left unanswered: cancelled, deadline): its watcher
   * forgets an unanswered wait, even while cancelling. Answers that come later wait, unread, for the next watch of this
   * run (the wait after the send, after one for a busy job), which takes only its own.
   */
  async leave(): Promise<void> {
    this.run.answers.close();
    if (!this.registered) return;
    // Its reads come only with an answer: the count the follow-up ends with says it lacks them, rather than be wrong.
    this.run.leftUnanswered();
    await CancellationScope.nonCancellable(async () => {
      try {
        await getExternalWorkflowHandle(this.watcherId).signal(unwatchJobSignal, {
          workflowId: workflowInfo().workflowId,
          runId: workflowInfo().runId,
          replyTo: this.heldName,
        });
      } catch {
        // The watcher has ended: nothing to forget.
      }
    });
  }

  /**
   * Registers the wait through an activity, never by signalling the watcher's id from here: a workflow of another kind
   * under that id would take the signal without a word. The activity starts a watcher if none runs and checks that the
   * one that took the wait is ours; false if it is not (the wait then moves on to the next watcher of the chain).
   */
  private async register(registration: WatchRegistration): Promise<boolean> {
    if (this.watcherTaken) return false;
    this.registered = true;
    this.heldName = registration.replyTo;
    try {
      await registerWatch({ watcherId: this.watcherId, registration }, this.run.deadlineMs);
      return true;
    } catch (error) {
      if (!(
        error instanceof ActivityFailure &&
        error.cause instanceof ApplicationFailure &&
        error.cause.type === WATCHER_ID_TAKEN
      ))
        throw error;
      log.error('A foreign workflow holds this follow-up’s job watcher id; moving on to the next watcher', {
        ...this.run.ref,
        watcherId: this.watcherId,
        error: error.cause.message,
      });
      this.registered = false;
      this.watcherTaken = true;
      return false;
    }
  }
}

/** A poll's result, counting the reads of the same wait made before it (and whether one found the job working). */
export function withEarlierReads<R extends PollResult>(result: R, earlier: { polls: number; sawActive: boolean }): R {
  return { ...result, polls: result.polls + earlier.polls, sawActive: result.sawActive || earlier.sawActive };
}

/** Whether the wait registered at the send is the one the follow-up now asks for (its schedule's start aside). */
function isSameWait(registered: WatchRegistration, request: WatchedRequest): boolean {
  const { schedule } = registered;
  const sameKnown =
    registered.known === null || request.known === null
      ? registered.known === request.known
      : sameJobState(registered.known, request.known);
  return (
    sameKnown &&
    !request.readAtOnce &&
    registered.acceptUnchangedFromMs === request.acceptUnchangedFromMs &&
    schedule.initialIntervalMs === request.schedule.initialIntervalMs &&
    schedule.backoffCoefficient === request.schedule.backoffCoefficient &&
    schedule.maxIntervalMs === request.schedule.maxIntervalMs &&
    schedule.deadlineMs === request.schedule.deadlineMs
  );
}
