/**
 * A follow-up's side of its project's coordinator (project-coordinator.ts): check in (take a place in the job's lane,
 * ask for a send slot, learn what earlier runs of this follow-up sent), wait for the job, get a slot before each send
 * attempt, give back a slot no request left under, and leave. Leaving happens on every way out except
 * continue-as-new, where the next run keeps the job.
 */
import {
  CancellationScope,
  condition,
  ContinueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { coordinatorWorkflowId } from '../kernel/workflow-ids';
import { chainOfTicket, checkNotice, checkStanding, checkTurn } from './coordinator-messages';
import { formatMs } from '../kernel/duration';
import { notifyProblem } from '../kernel/request';
import {
  isSlotKeyOfRun,
  RECHECK_GROWTH,
  saidAfter,
  slotKey,
  type CheckInAnswer,
  type QueueNotice,
  type Said,
  type TurnGrant,
} from './project-coordination';
import type { DeliveryRecord } from '../kernel/types';
import type { AgentJob } from '../kernel/agent-job';
import { leaveSignal, slotOutcomeSignal, standingSignal } from './messages';
import {
  type AcceptedSlot,
  type CheckedIn,
  type CheckInRequest,
  type FollowUpActivities,
} from '../workflows/activity-contract';
import type { JobRef } from '../kernel/agent-job';

/** A slot with less of its lease left than this is given back and a new one asked for: the request might not make it. */
const LEASE_LEFT_MS = 1_000;
/** Until the first check-in says otherwise (an hour's window): how long a waiting follow-up trusts silence. */
const DEFAULT_RECHECK_AFTER_MS = 5 * 60_000;
/** `standing` signals held until the ticket is sealed: more than a coordinator sends before a check-in's answer. */
const MAX_UNSEALED = 20;

/**
 * Checks in with the project's coordinator: joins the job's lane, asks for a send slot, and (first time) finds what
 * earlier runs of this follow-up sent. Retried until the follow-up's deadline, never past it.
 *
 * A run's first check-in is a local activity: it runs inside the run's first workflow task, so a follow-up whose
 * check-in gives it the job and a slot schedules its send in that same task (one workflow task and no activity task
 * before the send: the burst figures are in docs/BENCHMARKS.md). A lost task leaves no record of it, so it runs again:
 * the coordinator repeats its answer (by the update's id, or by the slot key, which the run asks for again), a turn
 * its lost answer led to is kept (project-turn.ts, `take`), and the read it makes is only a read. The deadline it is
 * judged by counts from the recorded start (follow-up-run.ts). Later check-ins (a slot asked again, silence while
 * waiting) are rare and may wait long: activities, so a long wait writes nothing.
 */
export async function checkIn(request: CheckInRequest): Promise<CheckedIn> {
  const timeouts = {
    scheduleToCloseTimeout: Math.max(request.deadlineMs - Date.now(), 1_000),
    startToCloseTimeout: '30s',
    retry: { initialInterval: '1s', maximumInterval: '30s' },
  } as const;
  if (request.findEarlier) {
    const { checkIn: local } = proxyLocalActivities<FollowUpActivities>({
      ...timeouts,
      summary:
        "check in with the project's coordinator, look for an earlier run that sent the message, and read the job if given it",
    });
    try {
      return await local(request);
    } catch (error) {
      if (!isUnaskedCancellation(error)) throw error;
      // The SDK cancels a local activity when its worker loses the workflow task (its server killed, the worker
      // shutting down), and that cancellation can reach the workflow though nothing here asked for it. The check-in
      // is made again as an activity, which only this workflow can cancel: repeating it is safe (its update id).
      log.warn('The check-in came back cancelled though the follow-up was not; checking in again', {
        projectId: request.projectId,
        jobId: request.jobId,
      });
    }
  }
  const { checkIn: check } = proxyActivities<FollowUpActivities>({
    ...timeouts,
    summary: request.findEarlier
      ? "check in with the project's coordinator again (the first check-in was cancelled under it)"
      : "ask the project's coordinator for a send slot",
  });
  return check(request);
}

/** A cancellation the follow-up did not ask for: its scope is not cancelled. */
function isUnaskedCancellation(error: unknown): boolean {
  return isCancellation(error) && !CancellationScope.current().consideredCancelled;
}

/**
 * What a follow-up's turn needs of the follow-up: plain values, and calls back that report what the coordinator said,
 * so the turn holds none of the follow-up's own state (the follow-up's run, follow-up-run.ts, is one).
 */
export interface LaneHolder {
  readonly ref: JobRef;
  readonly deadlineMs: number;
  /** An earlier run of this chain holds the job already (continue-as-new keeps it). */
  readonly holdsLane: boolean;
  /** The workers' watcher shards and callback URL, learned at check-in, kept for the follow-up's waits and ending. */
  watchShards: number | null;
  defaultNotifyUrl: string | null;
  /** The sealed ticket, once a check-in gave it (a continued run starts with it); kept for the chain's later runs. */
  ticket: string | null;
  /** Waiting behind earlier follow-ups or for the budget (null: checking in), shown in the follow-up's progress. */
  queued(notice: QueueNotice | null): void;
  tookLane(): void;
  gotSlot(): void;
  /** The failure a follow-up ends with when its deadline passes while it waits for its turn. */
  timedOut(why: string): Error;
}

/** A send slot as the follow-up holds it: its key, until when its request may leave, whether its answer is awaited. */
export interface HeldSlot {
  key: string;
  sendByMs: number;
  /** The coordinator waits for the API's answer to the send under it (`answered`). */
  tellAnswer?: boolean;
}

/** The job and the send slots of one follow-up run. */
export class ProjectTurn {
  private holds: boolean;
  private slot: HeldSlot | null = null;
  /** The slot asked for and not yet granted. */
  private awaited: string | null = null;
  private asked = 0;
  /** What the coordinator last said about the budget, shown while this run waits for a slot. */
  private budgetNotice: QueueNotice | null = null;
  /** When the notice shown was said: an answer or signal said before it is not shown (`saidLast`). */
  private lastSaid: Said | null = null;
  private waitingForSlot = false;
  /** Every slot this run was granted, so a repeated grant is never mistaken for a stray one. */
  private readonly granted = new Set<string>();
  /** Slots granted for an attempt this run no longer waits for, being given back. */
  private readonly strays: Array<Promise<void>> = [];
  /** Counts what the coordinator said: silence is measured from the last word. */
  private heard = 0;
  private recheckAfterMs = DEFAULT_RECHECK_AFTER_MS;
  private checkIns = 0;
  /**
   * The name of this follow-up's check-ins, which the coordinator's grants and notices carry back: its chain's first run
   * id, the same across continue-as-new (the next run keeps the job) and new for a re-run under the same id, sealed by
   * our workers at the first check-in (ticket-seal.activity.ts). Unsealed until then: anyone can read a run id, so a
   * message under it alone is not believed.
   */
  private ticket: string;
  /** The sealed ticket, once known: the only one a message to this follow-up may carry. */
  private readonly tickets = new Set<string>();
  /** `standing` signals that came before the first check-in's answer sealed the ticket: heard once it has. */
  private readonly unsealed: unknown[] = [];
  /** The job as the check-in that gave it read it, until the read before the send takes it. */
  private jobRead: AgentJob | null = null;

  /** A continued run that already holds the job: it does not check in for it again. */
  private readonly beganHolding: boolean;

  constructor(private readonly run: LaneHolder) {
    this.holds = run.holdsLane;
    this.beganHolding = run.holdsLane;
    this.ticket = run.ticket ?? workflowInfo().firstExecutionRunId;
    if (run.ticket !== null) this.tickets.add(run.ticket);
    setHandler(standingSignal, (message) => this.onStanding(message));
  }

  /**
   * A `standing` signal: believed only with this follow-up's sealed ticket. One that comes before the ticket is known
   * (a grant can overtake the check-in's answer) waits for it; a few at most, since anyone may send them.
   */
  private onStanding(message: unknown): void {
    if (this.tickets.size === 0) {
      if (this.unsealed.length < MAX_UNSEALED) this.unsealed.push(message);
      return;
    }
    const heard = checkStanding(message, workflowInfo().workflowId, this.tickets, Date.now());
    if (!heard) return void log.warn('Ignored a standing signal not meant for this follow-up', { ...this.run.ref });
    this.heard += 1;
    this.hear(heard);
  }

  /** The sealed ticket a check-in's answer gave, if it is this chain's: kept, and the signals held for it heard. */
  private sealed(ticket: unknown): void {
    if (typeof ticket !== 'string' || this.tickets.has(ticket)) return;
    const firstRunId = workflowInfo().firstExecutionRunId;
    if (chainOfTicket(ticket) !== firstRunId || ticket === firstRunId) return;
    // A new seal (the workers' API key changed): the coordinator takes it at its next check-in, after its describe.
    this.tickets.clear();
    this.tickets.add(ticket);
    this.ticket = ticket;
    this.run.ticket = ticket;
    for (const message of this.unsealed.splice(0)) this.onStanding(message);
  }

  /** What the coordinator said of this run's standing, by signal or in a check-in's answer (both checked). */
  private hear({ standing, notice }: CheckInAnswer): void {
    if (standing) this.take(standing);
    if (!notice || !this.saidLast(notice)) return;
    if (notice.reason === 'lane') {
      if (!this.holds) this.run.queued(notice);
      return;
    }
    this.budgetNotice = notice;
    if (this.waitingForSlot) this.run.queued(notice);
  }

  /** The job is this run's, and maybe a slot with it: from a `standing` signal, or from a check-in that asked first. */
  private take(grant: Pick<TurnGrant, 'slot' | 'sendByMs' | 'tellAnswer'>): void {
    this.holds = true;
    // Told twice (asked, then signalled): a slot counts once.
    if (grant.slot === null || grant.sendByMs === null || this.granted.has(grant.slot)) return;
    this.granted.add(grant.slot);
    const held = { key: grant.slot, sendByMs: grant.sendByMs, ...(grant.tellAnswer ? { tellAnswer: true } : {}) };
    if (grant.slot === this.awaited) {
      this.slot = held;
      this.awaited = null;
    } else if (
      this.awaited === null &&
      this.slot === null &&
      grant.slot === slotKey(workflowInfo().runId, this.asked + 1)
    ) {
      // The slot this run asks for next, granted before it asked: a check-in whose workflow task was lost asked for it
      // (the first check-in is a local activity, which such a task does not record), and the run asks for it again.
      // Given back here, it would be counted as unused while the request went out under the same key.
      this.asked += 1;
      this.slot = held;
    } else if (isSlotKeyOfRun(grant.slot, workflowInfo().runId)) {
      // For an attempt given up on (a late, repeated check-in asked for it again): it must not count.
      this.strays.push(this.returnSlot(grant.slot));
    } else {
      // Asked for by an earlier run of this chain, which may have sent under it before it continued as new (its
      // grant also came in a check-in's answer): only that run knew, so the slot keeps counting.
      log.info('Kept a send slot granted to an earlier run of this follow-up', { ...this.run.ref, slot: grant.slot });
    }
  }

  /** Runs `work` holding the job; `work` gets what an earlier run under this workflow id did with the message. */
  async hold<T>(work: (earlier: DeliveryRecord | null) => Promise<T>): Promise<T> {
    try {
      const earlier = await this.takeLane();
      const result = await work(earlier);
      await this.leave();
      return result;
    } catch (error) {
      // The next run of a continued follow-up keeps the job; every other way out gives it up.
      if (!(error instanceof ContinueAsNew)) await this.leave();
      throw error;
    }
  }

  /**
   * A slot to send under now: the one that came with the turn while its lease lasts, else a new one. A grant whose
   * lease ended before this run heard of it (its signal was slow, or its answer was repeated) is given back unused.
   */
  async sendSlot(): Promise<HeldSlot> {
    for (;;) {
      const slot = this.slot;
      if (slot && slot.sendByMs - Date.now() >= LEASE_LEFT_MS) {
        this.budgetNotice = null;
        this.run.gotSlot();
        return slot;
      }
      await this.giveBack();
      if (this.awaited === null) {
        this.awaited = this.nextKey();
        this.noteCheckIn(await checkIn(this.checkInRequest(this.awaited, false)));
      }
      if (this.slot === null) {
        this.waitingForSlot = true;
        if (this.budgetNotice) this.run.queued(this.budgetNotice);
        const granted = await this.waitFor(
          () => this.slot !== null,
          `a send slot of project ${this.run.ref.projectId}`,
        );
        this.waitingForSlot = false;
        if (!granted)
          throw this.run.timedOut("the project's send budget had no free slot before the deadline; nothing was sent");
      }
    }
  }

  /** The read the check-in made when it gave the job, once: the first read before the send. */
  takeJobRead(): AgentJob | null {
    const read = this.jobRead;
    this.jobRead = null;
    return read;
  }

  /** Where the send under `slot` tells the coordinator it was accepted, when the coordinator awaits that answer. */
  acceptedSlot(slot: HeldSlot): { tellAccepted?: AcceptedSlot } {
    if (slot.tellAnswer !== true) return {};
    return {
      tellAccepted: {
        coordinatorId: coordinatorWorkflowId(this.run.ref.projectId),
        slot: slot.key,
        ticket: this.ticket,
      },
    };
  }

  /** The slot was sent under, or may have been, and no answer came: it counts in the window. */
  spent(): void {
    this.slot = null;
  }

  /**
   * The API answered the send under the slot. A 429 (`refused`) is always told: the coordinator takes the send out
   * of the window and pauses the project's sends until a probe is accepted. Any other answer is told when the grant
   * asked for it (past the window's first sends, or a probe): the coordinator waits for it before the next send. A
   * 2xx the send activity already told (`toldBySend`, see `acceptedSlot`) is not told again.
   */
  async answered(refused: boolean, retryAfterMs: number | null, toldBySend = false): Promise<void> {
    const slot = this.slot;
    this.slot = null;
    if (!slot || (!refused && (slot.tellAnswer !== true || toldBySend))) return;
    await this.tell((handle) =>
      handle.signal(slotOutcomeSignal, {
        workflowId: workflowInfo().workflowId,
        ticket: this.ticket,
        slot: slot.key,
        outcome: refused ? 'refused' : 'accepted',
        retryAfterMs,
      }),
    );
  }

  /** No request left under the slot: it must not count. */
  async giveBack(): Promise<void> {
    const slot = this.slot;
    this.slot = null;
    if (slot) await this.returnSlot(slot.key);
  }

  private returnSlot(key: string): Promise<void> {
    // Forgotten once given back: the coordinator may grant the key again (a late, repeated check-in asked for it),
    // and that grant, unused, must be given back too rather than taken for a repeat of the first.
    this.granted.delete(key);
    return this.tell((handle) =>
      handle.signal(slotOutcomeSignal, {
        workflowId: workflowInfo().workflowId,
        ticket: this.ticket,
        slot: key,
        outcome: 'unsent',
        retryAfterMs: null,
      }),
    );
  }

  private async takeLane(): Promise<DeliveryRecord | null> {
    if (this.beganHolding) return null;
    // A turn may have come before this first check-in (one made in a lost workflow task): the check-in is still made,
    // for what earlier runs sent, and asks for the slot that turn granted, which the coordinator then repeats.
    if (!this.holds) this.run.queued(null);
    const key = this.slot?.key ?? (this.awaited = this.nextKey());
    const checkedIn = await checkIn({ ...this.checkInRequest(key, true), readJob: true });
    this.noteCheckIn(checkedIn);
    const { earlier } = checkedIn;
    // Read after the job was this run's: the job as the send will find it (unless the send must wait).
    if (this.holds && earlier === null && checkedIn.jobRead) this.jobRead = checkedIn.jobRead;
    if (earlier?.state === 'delivered') this.awaited = null;
    if (!(await this.waitFor(() => this.holds, `job ${this.run.ref.jobId}`))) {
      throw this.run.timedOut('earlier follow-ups to the job were still running; nothing was sent');
    }
    this.run.tookLane();
    return earlier;
  }

  private noteCheckIn(checkedIn: CheckedIn): void {
    this.sealed(checkedIn.ticket);
    if (typeof checkedIn.recheckAfterMs === 'number' && checkedIn.recheckAfterMs > 0)
      this.recheckAfterMs = checkedIn.recheckAfterMs;
    if (typeof checkedIn.watchShards === 'number' && checkedIn.watchShards >= 1)
      this.run.watchShards = Math.floor(checkedIn.watchShards);
    if (typeof checkedIn.notifyUrl === 'string' && notifyProblem({ url: checkedIn.notifyUrl }) === undefined)
      this.run.defaultNotifyUrl = checkedIn.notifyUrl;
    // A part that fails its check is dropped alone: the answer came from our own activity.
    const standing = checkedIn.standing ? checkTurn(checkedIn.standing, workflowInfo().workflowId, this.tickets) : null;
    const notice = checkedIn.notice ? checkNotice(checkedIn.notice, this.ticket, this.tickets, Date.now()) : null;
    this.hear({ standing, notice });
  }

  /**
   * Waits until `ready` or the follow-up's deadline (false). After a silence from the coordinator it checks in again,
   * which changes nothing while the coordinator knows of it, and puts it back in line if the coordinator lost it (it
   * was terminated, or reset to before this follow-up checked in): no waiting follow-up is stranded.
   */
  private async waitFor(ready: () => boolean, what: string): Promise<boolean> {
    // Each check-in that hears nothing new stretches the next silence (RECHECK_GROWTH): a long wait costs a few.
    let silenceMs = this.recheckAfterMs;
    for (;;) {
      const leftMs = this.run.deadlineMs - Date.now();
      if (ready()) return true;
      if (leftMs <= 0) return false;
      const heard = this.heard;
      const waitMs = Math.min(leftMs, silenceMs);
      const summary =
        waitMs === leftMs
          ? `wait for ${what} until the follow-up's deadline`
          : `wait for ${what}; check in again after ${formatMs(waitMs)} of silence`;
      if (await condition(() => ready() || this.heard !== heard, waitMs, { summary })) {
        silenceMs = this.recheckAfterMs;
        continue;
      }
      if (waitMs < leftMs) {
        this.noteCheckIn(await checkIn(this.checkInRequest(this.awaited, false)));
        silenceMs = Math.min(silenceMs * 2, this.recheckAfterMs * RECHECK_GROWTH);
      }
    }
  }

  /**
   * Whether `notice` is the last the coordinator said of those heard, and so the one to show. A check-in's answer can
   * come after a signal said later: the budget changed (a 429 paused the project) while the check-in read the job.
   */
  private saidLast(notice: QueueNotice): boolean {
    if (this.lastSaid && !saidAfter(notice.said, this.lastSaid)) return false;
    this.lastSaid = notice.said;
    return true;
  }

  private checkInRequest(slotFor: string | null, findEarlier: boolean) {
    const { workflowId, runId, startTime } = workflowInfo();
    this.checkIns += 1;
    const { ticket, checkIns: sequence } = this;
    return {
      ...this.run.ref,
      workflowId,
      runId,
      ticket,
      startedAtMs: startTime.getTime(),
      deadlineMs: this.run.deadlineMs,
      slotFor,
      findEarlier,
      sequence,
    };
  }

  /** A name for the next slot asked for, unique over every run of this follow-up. */
  private nextKey(): string {
    this.asked += 1;
    return slotKey(workflowInfo().runId, this.asked);
  }

  /** Tells the coordinator this follow-up is done with the job (or no longer waits), even while being cancelled. */
  private async leave(): Promise<void> {
    await this.giveBack();
    await Promise.all(this.strays);
    await this.tell((handle) =>
      handle.signal(leaveSignal, { workflowId: workflowInfo().workflowId, ticket: this.ticket }),
    );
  }

  private async tell(send: (handle: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>): Promise<void> {
    const id = coordinatorWorkflowId(this.run.ref.projectId);
    await CancellationScope.nonCancellable(async () => {
      try {
        await send(getExternalWorkflowHandle(id));
      } catch (error) {
        // The coordinator has ended (nothing left to keep) or was terminated: there is nothing to tell.
        log.info('The project coordinator could not be told', {
          coordinator: id,
          reason: error instanceof Error ? error.message : String(error),
        });
      }
    });
  }
}
