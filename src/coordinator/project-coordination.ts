/**
 * A project's coordination, as pure state and changes: its send budget (at most N sends in any rolling window, the
 * way the vendor counts "100 uses per project per hour") and its jobs' lanes (one follow-up at a time per job, the
 * others in the order they were started). The coordinator workflow (project-coordinator.ts) holds one such state per
 * project and turns what `planRound` decides into signals; everything here is unit-tested without a server.
 * Pure: workflow code imports it.
 */

export const HOUR_MS = 3_600_000;

/**
 * How long a follow-up may take to send after it was given a slot. The slot counts in the window from the end of
 * this lease, so the request, which leaves within it, is always inside what the window counts (the send activity
 * refuses to start a request after it). Shorter with a test's short window, so such tests stay short.
 */
export function sendLeaseMs(windowMs: number): number {
  return Math.min(60_000, Math.max(15_000, Math.floor(windowMs / 4)));
}

/**
 * How much later than its lease's end a slot starts to count. The vendor counts a request when it arrives; one that
 * leaves in the last moment of its lease arrives a little after it (more on a loaded machine), and must not share a
 * window with one that leaves the moment that window lets it.
 */
export const ARRIVAL_MARGIN_MS = 2_000;

/** A grant of one send slot: the request may leave until `sendByMs`; it counts in the window from a little later. */
function slotGranted(request: SlotRequest, nowMs: number, windowMs: number): SendSlot {
  const { workflowId, ticket, key } = request;
  const sendByMs = nowMs + sendLeaseMs(windowMs);
  return { workflowId, ticket, key, sendByMs, countsFromMs: sendByMs + ARRIVAL_MARGIN_MS };
}

/**
 * Sends of a window that go at once, without waiting for the API's answers: a burst this size fits the vendor's 100
 * unless others used more than 80 of the project's hour, and it is the common case, so it is not slowed down.
 */
export const SENDS_AT_ONCE = 20;

/**
 * Past the first SENDS_AT_ONCE of a window, sends awaiting the API's answer at once. Others' uses of the project (its
 * dashboard, other services) count in the vendor's 100 and are invisible here: the first 429 is how the coordinator
 * learns of them, and only the sends already in flight then can meet one too.
 */
export const SENDS_AWAITING_ANSWER = 2;

/**
 * After a 429, no send goes until one probe is accepted: the first probe this long after the refusal (or after the
 * API's Retry-After, when it gives one), each refused probe doubling the wait up to `maxMs`. A refused project's
 * quota frees as its uses of the last hour age out, at a time nobody here can see.
 */
export const PROBE_BACKOFF = { firstMs: 60_000, maxMs: 15 * 60_000 } as const;

/**
 * How long a follow-up waiting on its coordinator (for its job or a send slot) may first hear nothing before it checks
 * in again: five minutes on the hour's window, ten seconds on a test's short one. A coordinator that lost it
 * (terminated, reset) takes it back in line then; one that knows it changes nothing. Each silent check-in doubles the
 * next silence, up to RECHECK_GROWTH times this, so a long wait costs a handful of check-ins, not one per silence.
 */
export function recheckAfterMs(windowMs: number): number {
  return Math.min(5 * 60_000, Math.max(10_000, Math.floor(windowMs / 12)));
}

/** How far silent check-ins stretch the silence: 5, 10, 20, 40 minutes on the hour's window, then every 40. */
export const RECHECK_GROWTH = 8;

/** A grant of one send: its request may leave until `sendByMs`, and it counts for a window's length from `countsFromMs`. */
export interface SendSlot {
  workflowId: string;
  /** The sealed ticket of the follow-up it was granted to: only a `slotOutcome` under it is believed. */
  ticket: string;
  /** The follow-up's name for the send attempt it was granted for (its run id and attempt number). */
  key: string;
  sendByMs: number;
  countsFromMs: number;
  /** The follow-up tells the API's answer to this send (`slotOutcome`); set until it has, or its lease ended. */
  awaitsAnswer?: boolean;
}

/** The API refused a send with 429: the project's sends wait for one probe to be accepted. */
export interface Refusal {
  sinceMs: number;
  /** When the next probe may go (the first after PROBE_BACKOFF.firstMs, or the Retry-After). */
  probeAtMs: number;
  /** The wait after the last refusal, doubled by each refused probe. */
  backoffMs: number;
  /** The slot granted as the probe, until its answer comes (or it is given back, or its lease ends unanswered). */
  probe: { workflowId: string; key: string } | null;
}

export interface LaneEntry {
  workflowId: string;
  /** The follow-up's run's name for its messages: a grant or notice carries it back, so a forged or stale one is told apart. */
  ticket: string;
  /** When the server started the follow-up (its chain): the lane's order. */
  startedAtMs: number;
  /** Follow-ups to the job started before this one that the coordinator has not seen yet: it goes after them. */
  awaits?: string[];
  sinceMs: number;
  /** The follow-up's own deadline: past it, it no longer waits (it times out by itself). */
  deadlineMs: number;
  /** The place it was last told (waiting entries), so only changes are signalled. */
  toldAhead?: number;
  /** When the coordinator last made sure this holder still runs. */
  checkedAtMs?: number;
}

export interface Lane {
  holder: LaneEntry | null;
  /** In the order their follow-ups were started. */
  waiting: LaneEntry[];
  /** The last follow-ups that held the job and left, so one started before a newcomer is known to be done. */
  served?: string[];
}

/** Follow-ups remembered per lane as served: more than any newcomer's list of earlier follow-ups holds. */
const SERVED_KEPT = 100;

/** A holder waiting for a send slot. */
export interface SlotRequest {
  workflowId: string;
  ticket: string;
  jobId: string;
  key: string;
  /** The follow-up's start: slots go in this order, so one asked again after a lost lease keeps its place. */
  startedAtMs: number;
  sinceMs: number;
  deadlineMs: number;
  told?: boolean;
  /** The next slot it was told of: told "no time yet" (behind sends awaiting answers), it is told again once there is one. */
  toldSlotAtMs?: number | null;
}

export interface CoordinatorState {
  projectId: string;
  /** Sends allowed in any window: the workers' default (AGENT_SENDS_PER_PROJECT_PER_HOUR) unless set for the project. */
  defaultLimit: number;
  /** Set with `budget set --project`; kept while the coordinator runs, which it then does for good. */
  limitOverride: number | null;
  windowMs: number;
  slots: SendSlot[];
  lanes: Record<string, Lane>;
  slotRequests: SlotRequest[];
  /** Totals over the coordinator's whole life (all runs); `refused`: sends the API answered 429. */
  totals: { served: number; granted: number; returned: number; waitedForBudget: number; refused: number };
  runs: number;
  /** Set from a 429 on any of the project's sends until a probe is accepted (null or absent: sends go). */
  refusal?: Refusal | null;
  /** Sends of a window that go at once before answers are awaited (absent: SENDS_AT_ONCE); only tests change it. */
  sendsAtOnce?: number;
  /**
   * The last slot each holder was granted, so an ask for it again (a check-in that crossed its grant, or retried
   * after the grant's answer was lost) is answered with that grant, never with a second slot or a refund.
   */
  lastGranted?: Record<string, { key: string; ticket: string; sendByMs: number; tellAnswer?: boolean }>;
  /** Follow-ups started before one in a lane that the coordinator has not seen: when to ask next whether each runs. */
  awaitedCheckedAtMs?: Record<string, number>;
  /** Notices said over the coordinator's whole life (all runs), which orders them (`Said`). */
  said?: number;
}

/** What a follow-up asks when it checks in, and again before a later send attempt. */
export interface EnterRequest {
  workflowId: string;
  /** Unique to the follow-up's run; grants and notices carry it back. */
  ticket: string;
  jobId: string;
  /** When the server started the follow-up's chain (`workflowInfo().startTime`). */
  startedAtMs: number;
  /** Running follow-ups to the same job started before this one (from visibility, when the check-in looked). */
  before: string[];
  deadlineMs: number;
  /**
   * The send attempt it wants a slot for, named uniquely by the follow-up (null: none, e.g. a re-run whose message
   * an earlier run delivered). A repeated signal for the same attempt is not granted twice.
   */
  slotFor: string | null;
}

/** To a follow-up: the job is yours; with `sendByMs`, a request may leave until then. */
export interface TurnGrant {
  workflowId: string;
  /** The ticket of the check-in this answers. */
  ticket: string;
  /** The attempt the slot is for (null: the turn comes without a slot). */
  slot: string | null;
  sendByMs: number | null;
  /** The coordinator waits for the API's answer to this send: the follow-up tells it (`slotOutcome`), 2xx or not. */
  tellAnswer?: boolean;
}

/** A follow-up tells its coordinator how the API answered a send: always a 429, and any answer it was asked for. */
/**
 * What became of a granted slot, as its follow-up tells it: no request left under it (`unsent`: it does not count),
 * or the API answered the send (`accepted`, or `refused` with 429 and maybe a Retry-After).
 */
export interface SlotOutcome {
  workflowId: string;
  /** The follow-up's sealed ticket: only the follow-up the slot was granted to tells what became of it. */
  ticket: string;
  slot: string;
  outcome: 'unsent' | 'accepted' | 'refused';
  /** The API's Retry-After with a 429, when it gave one. */
  retryAfterMs: number | null;
}

export interface SendAnswered {
  workflowId: string;
  /** The follow-up's sealed ticket: the one the slot was granted to. */
  ticket: string;
  /** The slot the request left under. */
  slot: string;
  /** The API refused it with 429 (it did not take the message). */
  refused: boolean;
  /** The API's Retry-After with a 429, when it gave one. */
  retryAfterMs: number | null;
}

/** The coordinator's answer to a check-in: the follow-up's standing (its turn, and slot, if it has them), or what it waits for. */
export interface CheckInAnswer {
  standing: TurnGrant | null;
  notice: QueueNotice | null;
}

/** A check-in's answer told later, by signal (`standing`), with the ticket of the check-in it answers. */
export interface StandingNews extends CheckInAnswer {
  ticket: string;
}

/**
 * When a notice was said: the coordinator's clock, then how many notices it had said by then (those of one workflow
 * task share a clock; a coordinator started again after a termination starts counting again, later). A follow-up hears
 * a check-in's answer and a signal in either order, so it keeps the notice said last (`saidAfter`).
 */
export interface Said {
  atMs: number;
  n: number;
}

/** To a follow-up that waits: why, and for how long it may expect to. */
export type QueueNotice = (
  | { reason: 'lane'; jobId: string; ahead: number }
  | {
      reason: 'budget';
      sentInWindow: number;
      limit: number;
      windowMs: number;
      nextSlotAtMs: number | null;
      ahead: number;
      /** The API refused the project's sends (429) since then; the next probe is due at `nextSlotAtMs`. */
      refusedSinceMs?: number;
    }
) & { said: Said };

/** A notice before it is said. */
type Unsaid<T> = T extends QueueNotice ? Omit<T, 'said'> : never;

/** Whether `said` came after `before`. */
export function saidAfter(said: Said, before: Said): boolean {
  return said.atMs > before.atMs || (said.atMs === before.atMs && said.n > before.n);
}

export interface RoundPlan {
  grants: TurnGrant[];
  notices: Array<{ workflowId: string; ticket: string; notice: QueueNotice }>;
  /** When the state next changes by itself (a slot leaves the window, a waiting follow-up's deadline), if ever. */
  wakeAtMs: number | null;
  /** Some grants or notices were left for the next round (more than `maxMessages` were due). */
  more: boolean;
}

export function emptyCoordinator(projectId: string, defaultLimit: number, windowMs: number): CoordinatorState {
  return {
    projectId,
    defaultLimit,
    limitOverride: null,
    windowMs,
    slots: [],
    lanes: {},
    slotRequests: [],
    totals: { served: 0, granted: 0, returned: 0, waitedForBudget: 0, refused: 0 },
    runs: 1,
    refusal: null,
  };
}

export function limitOf(state: CoordinatorState): number {
  return state.limitOverride ?? state.defaultLimit;
}

function say(state: CoordinatorState, notice: Unsaid<QueueNotice>, nowMs: number): QueueNotice {
  state.said = (state.said ?? 0) + 1;
  return { ...notice, said: { atMs: nowMs, n: state.said } };
}

/** Slots still counted at `nowMs`, oldest first. */
function countedSlots(state: CoordinatorState, nowMs: number): SendSlot[] {
  return state.slots
    .filter((slot) => slot.countsFromMs + state.windowMs > nowMs)
    .sort((a, b) => a.countsFromMs - b.countsFromMs);
}

export function sentInWindow(state: CoordinatorState, nowMs: number): number {
  return countedSlots(state, nowMs).length;
}

/** When the next slot becomes free (null: one is free now, or none is counted). */
export function nextSlotAtMs(state: CoordinatorState, nowMs: number): number | null {
  const counted = countedSlots(state, nowMs);
  const surplus = counted.length - limitOf(state);
  if (surplus < 0) return null;
  const slot = counted[surplus];
  return slot ? slot.countsFromMs + state.windowMs : null;
}

/**
 * A follow-up checks in: it takes its place in its job's lane in the order follow-ups were started (or keeps the one it
 * has: a retried check-in, a re-run under the same id) and, with `slotFor`, asks for a send slot once it holds the job.
 * Follow-ups to the job started before it that the coordinator has not seen are awaited: it goes after them.
 */
export function enter(state: CoordinatorState, request: EnterRequest, nowMs: number): void {
  const lane = (state.lanes[request.jobId] ??= { holder: null, waiting: [] });
  const holder = lane.holder?.workflowId === request.workflowId ? lane.holder : null;
  let entry = holder ?? lane.waiting.find((waiting) => waiting.workflowId === request.workflowId) ?? null;
  if (entry === null) {
    entry = {
      workflowId: request.workflowId,
      ticket: request.ticket,
      startedAtMs: request.startedAtMs,
      sinceMs: nowMs,
      deadlineMs: request.deadlineMs,
    };
    insertInStartOrder(lane.waiting, entry);
  }
  entry.ticket = request.ticket;
  entry.deadlineMs = request.deadlineMs;
  if (entry !== holder) {
    const seen = new Set([
      ...(lane.holder ? [lane.holder.workflowId] : []),
      ...lane.waiting.map((waiting) => waiting.workflowId),
      ...(lane.served ?? []),
    ]);
    const awaits = request.before.filter((workflowId) => workflowId !== request.workflowId && !seen.has(workflowId));
    if (awaits.length > 0) entry.awaits = awaits;
    else delete entry.awaits;
  }
  // Whoever awaited this follow-up has now seen it.
  for (const waiting of lane.waiting) forget(waiting, request.workflowId);
  if (request.slotFor !== null) {
    askForSlot(state, {
      workflowId: request.workflowId,
      ticket: request.ticket,
      jobId: request.jobId,
      key: request.slotFor,
      startedAtMs: request.startedAtMs,
      sinceMs: nowMs,
      deadlineMs: request.deadlineMs,
    });
  }
}

function insertInStartOrder<T extends { workflowId: string; startedAtMs: number }>(list: T[], item: T): void {
  const index = list.findIndex(
    (other) =>
      other.startedAtMs > item.startedAtMs ||
      (other.startedAtMs === item.startedAtMs && other.workflowId > item.workflowId),
  );
  if (index < 0) list.push(item);
  else list.splice(index, 0, item);
}

function forget(entry: LaneEntry, workflowId: string): void {
  if (!entry.awaits?.includes(workflowId)) return;
  entry.awaits = entry.awaits.filter((awaited) => awaited !== workflowId);
  if (entry.awaits.length === 0) delete entry.awaits;
}

/**
 * Queues a slot request in start order; a repeated ask updates it. An ask for an attempt already granted changes
 * nothing: the grant stands, and the check-in's answer repeats it (`standingOf`). The ask proves nothing about the
 * grant: it may have crossed the grant's signal, and the follow-up may be sending under it now. Only the follow-up
 * knows that no request left under a slot, and it alone gives one back (`slotOutcome` unsent), also one whose lease ran out
 * before it heard of it.
 */
function askForSlot(state: CoordinatorState, request: SlotRequest): void {
  const queued = state.slotRequests.find((entry) => entry.workflowId === request.workflowId);
  // A late, repeated check-in for an attempt the follow-up has since given up on must not replace the newer one.
  if (queued && isOlderAttempt(request.key, queued.key)) return;
  if (state.lastGranted?.[request.workflowId]?.key === request.key) return;
  if (queued) {
    queued.key = request.key;
    queued.ticket = request.ticket;
    queued.deadlineMs = request.deadlineMs;
    return;
  }
  insertInStartOrder(state.slotRequests, request);
}

/** The name of a follow-up run's `attempt`-th ask for a send slot: unique over every run of the follow-up. */
export function slotKey(runId: string, attempt: number): string {
  return `${runId}#${attempt}`;
}

/** Whether `key` names a slot asked for by the run `runId` (not by an earlier run of its chain). */
export function isSlotKeyOfRun(key: string, runId: string): boolean {
  return key.split('#')[0] === runId;
}

/** Whether `key` names an earlier attempt of the same run than `than`. */
function isOlderAttempt(key: string, than: string): boolean {
  const [run, attempt] = key.split('#');
  const [thanRun, thanAttempt] = than.split('#');
  return run === thanRun && Number(attempt) < Number(thanAttempt);
}

/**
 * Whether a slot may be granted now: freely, only as a refused project's probe, or not at all. Past the window's first
 * SENDS_AT_ONCE, a send waits while SENDS_AWAITING_ANSWER others await the API's answer. `state.slots` must hold only
 * the counted slots (the caller prunes them).
 */
function slotAvailability(state: CoordinatorState, nowMs: number): 'open' | 'probe' | 'closed' {
  if (state.slots.length >= limitOf(state)) return 'closed';
  const refusal = state.refusal;
  if (refusal) return refusal.probe === null && nowMs >= refusal.probeAtMs ? 'probe' : 'closed';
  if (state.slots.length < (state.sendsAtOnce ?? SENDS_AT_ONCE)) return 'open';
  return awaitingAnswer(state, nowMs).length < SENDS_AWAITING_ANSWER ? 'open' : 'closed';
}

/** Slots whose answer the coordinator still waits for; one whose lease ended unanswered no longer holds others up. */
function awaitingAnswer(state: CoordinatorState, nowMs: number): SendSlot[] {
  return state.slots.filter((slot) => slot.awaitsAnswer === true && nowMs < answerDueByMs(slot));
}

function answerDueByMs(slot: SendSlot): number {
  return slot.sendByMs + ARRIVAL_MARGIN_MS;
}

/**
 * How the API answered a send. A 429 takes the send out of the window (the vendor did not count it) and pauses the
 * project's sends: from the first refusal, the first probe after PROBE_BACKOFF.firstMs (or the Retry-After); a
 * refused probe doubles the wait; an accepted probe ends the pause. Only the follow-up granted the slot can name it:
 * an answer for a slot the coordinator does not hold (stale, forged, or already left the window) changes nothing.
 */
export function sendAnswered(state: CoordinatorState, answer: SendAnswered, nowMs: number): boolean {
  const index = state.slots.findIndex(
    (slot) => slot.workflowId === answer.workflowId && slot.key === answer.slot && slot.ticket === answer.ticket,
  );
  const slot = state.slots[index];
  if (!slot) return false;
  delete slot.awaitsAnswer;
  const refusal = state.refusal ?? null;
  const wasProbe = refusal?.probe?.workflowId === answer.workflowId && refusal.probe.key === answer.slot;
  if (!answer.refused) {
    if (wasProbe) endRefusal(state);
    return true;
  }
  state.slots.splice(index, 1);
  state.totals.refused += 1;
  const retryAfterMs = answer.retryAfterMs;
  if (refusal === null || wasProbe) {
    const backoffMs = refusal === null ? PROBE_BACKOFF.firstMs : Math.min(refusal.backoffMs * 2, PROBE_BACKOFF.maxMs);
    state.refusal = {
      sinceMs: refusal?.sinceMs ?? nowMs,
      probeAtMs: nowMs + (retryAfterMs ?? backoffMs),
      backoffMs,
      probe: null,
    };
  } else if (retryAfterMs !== null) {
    // Another send that was in flight when the first was refused: only a later Retry-After moves the probe.
    refusal.probeAtMs = Math.max(refusal.probeAtMs, nowMs + retryAfterMs);
  } else {
    return true;
  }
  retell(state);
  return true;
}

function endRefusal(state: CoordinatorState): void {
  state.refusal = null;
  retell(state);
}

/** What waiting follow-ups were told about the budget changed: each is told again. */
function retell(state: CoordinatorState): void {
  for (const request of state.slotRequests) request.told = false;
}

/**
 * The probe's answer is not coming: its slot was given back (no request left), its follow-up is gone, or its lease
 * ended unanswered. Another probe may go at once.
 */
function dropLostProbe(state: CoordinatorState, nowMs: number): void {
  const probe = state.refusal?.probe;
  if (!state.refusal || !probe) return;
  const slot = state.slots.find((held) => held.workflowId === probe.workflowId && held.key === probe.key);
  if (!slot || slot.awaitsAnswer !== true || nowMs >= answerDueByMs(slot)) state.refusal.probe = null;
}

/**
 * A follow-up gives back a slot it never sent under (no request left), so it does not count. One that has left the
 * window already (its follow-up heard of it late) frees nothing, but is still counted as given back: it was never
 * sent under.
 */
export function returnSlot(state: CoordinatorState, workflowId: string, ticket: string, key: string): boolean {
  const granted = state.lastGranted?.[workflowId];
  const last = granted?.key === key && granted.ticket === ticket;
  if (last) delete state.lastGranted?.[workflowId];
  const index = state.slots.findIndex(
    (slot) => slot.workflowId === workflowId && slot.key === key && slot.ticket === ticket,
  );
  if (index >= 0) state.slots.splice(index, 1);
  if (index < 0 && !last) return false;
  state.totals.returned += 1;
  return true;
}

/**
 * Whether the coordinator confirmed this follow-up's run already: it holds or waits in the job's lane under the same
 * ticket (its chain's first run id), which only a check-in confirmed by a describe put there. Its later check-ins
 * need no describe; any other (a new chain under the id, another job, a name never seen) does.
 */
export function isConfirmed(
  state: CoordinatorState,
  claim: { workflowId: string; ticket: string; jobId: string },
): boolean {
  const lane = state.lanes[claim.jobId];
  if (!lane) return false;
  const same = (entry: LaneEntry | null | undefined) =>
    entry?.workflowId === claim.workflowId && entry.ticket === claim.ticket;
  return same(lane.holder) || lane.waiting.some(same);
}

/**
 * A follow-up is done with its job, or gives up waiting: the next in line may go. Its sent slots still count. With a
 * ticket, only the run that checked in with it may leave (a late leave of an earlier run changes nothing).
 */
export function leave(state: CoordinatorState, workflowId: string, ticket?: string): 'released' | 'left' | 'unknown' {
  const matches = (entry: LaneEntry) =>
    entry.workflowId === workflowId && (ticket === undefined || entry.ticket === ticket);
  for (const [jobId, lane] of Object.entries(state.lanes)) {
    if (lane.holder && matches(lane.holder)) {
      lane.holder = null;
      lane.served = [...(lane.served ?? []), workflowId].slice(-SERVED_KEPT);
      state.totals.served += 1;
      dropSlotRequest(state, workflowId);
      for (const waiting of lane.waiting) forget(waiting, workflowId);
      if (lane.waiting.length === 0) delete state.lanes[jobId];
      return 'released';
    }
    const index = lane.waiting.findIndex(matches);
    if (index >= 0) {
      lane.waiting.splice(index, 1);
      dropSlotRequest(state, workflowId);
      for (const waiting of lane.waiting) forget(waiting, workflowId);
      if (lane.waiting.length === 0 && lane.holder === null) delete state.lanes[jobId];
      return 'left';
    }
  }
  return 'unknown';
}

function dropSlotRequest(state: CoordinatorState, workflowId: string): void {
  state.slotRequests = state.slotRequests.filter((entry) => entry.workflowId !== workflowId);
  if (state.lastGranted) delete state.lastGranted[workflowId];
}

/** A follow-up awaited by others turned out not to run: nobody waits for it any longer. */
export function forgetAwaited(state: CoordinatorState, workflowId: string): void {
  for (const lane of Object.values(state.lanes)) for (const waiting of lane.waiting) forget(waiting, workflowId);
  if (state.awaitedCheckedAtMs) delete state.awaitedCheckedAtMs[workflowId];
}

/**
 * Decides what happens now: drops follow-ups that waited past their deadline, hands each free job to the first in
 * its line, grants send slots in the order they were asked for while the window has room, and says what each
 * waiting follow-up should be told. Changes the state; the caller signals the grants and notices.
 */
export function planRound(state: CoordinatorState, nowMs: number, maxMessages = Number.POSITIVE_INFINITY): RoundPlan {
  const said = new RoundMessages(maxMessages);
  state.slots = countedSlots(state, nowMs);
  dropLostProbe(state, nowMs);
  state.slotRequests = state.slotRequests.filter((request) => request.deadlineMs > nowMs);
  const turns = handOutJobs(state, nowMs, said);
  // Slots go only to follow-ups holding their job, in the order they asked.
  const holders = holderIds(state);
  const grants = grantSlots(state, nowMs, said, turns, holders);
  // A turn without a slot: the follow-up needs none (its message went out in an earlier run), or waits for one,
  // holding the job meanwhile (it reads the job before it sends).
  for (const [workflowId, ticket] of turns) grants.push({ workflowId, ticket, slot: null, sendByMs: null });
  const nextSlot = nextSlotAtMs(state, nowMs);
  const notices = noticesOfRound(state, nowMs, said, holders, nextSlot);
  return { grants, notices, wakeAtMs: roundWakeAtMs(state, nowMs, nextSlot), more: said.more };
}

/**
 * Every grant and notice is a signal, two events in the coordinator's history: a round says at most `max` and leaves
 * the rest for the next, so the coordinator can continue as new between rounds, however big a burst.
 */
class RoundMessages {
  private said = 0;
  /** Something was left for the next round. */
  more = false;
  constructor(private readonly max: number) {}
  canSay(): boolean {
    if (this.said < this.max) return true;
    this.more = true;
    return false;
  }
  say(): void {
    this.said += 1;
  }
}

/** Hands each free job to the first in its line; the turns given, by follow-up (its ticket). */
function handOutJobs(state: CoordinatorState, nowMs: number, said: RoundMessages): Map<string, string> {
  const turns = new Map<string, string>();
  for (const [jobId, lane] of Object.entries(state.lanes)) {
    lane.waiting = lane.waiting.filter((entry) => entry.deadlineMs > nowMs);
    // The first in start order goes, once every follow-up started before it has been seen (or found gone).
    const next = lane.waiting[0];
    if (lane.holder === null && next !== undefined && next.awaits === undefined && said.canSay()) {
      lane.waiting.shift();
      said.say();
      lane.holder = { ...next, sinceMs: nowMs, checkedAtMs: nowMs };
      turns.set(next.workflowId, next.ticket);
    }
    if (lane.holder === null && lane.waiting.length === 0) delete state.lanes[jobId];
  }
  return turns;
}

/** Grants send slots to holders in the order they asked, while the window has room; a turn's slot rides on it. */
function grantSlots(
  state: CoordinatorState,
  nowMs: number,
  said: RoundMessages,
  turns: Map<string, string>,
  holders: ReadonlySet<string>,
): TurnGrant[] {
  const grants: TurnGrant[] = [];
  const stillWaiting: SlotRequest[] = [];
  // Slots keep the order they were asked in: once one waits for the next round, so do those after it.
  let deferred = false;
  for (const request of state.slotRequests) {
    if (!holders.has(request.workflowId)) {
      stillWaiting.push(request);
      continue;
    }
    // A slot that comes with a turn rides on the turn's signal; any other is a signal of its own.
    const ridesOnTurn = turns.has(request.workflowId);
    const open = slotAvailability(state, nowMs) !== 'closed';
    if (!deferred && !ridesOnTurn && open && !said.canSay()) deferred = true;
    if (!deferred && open) {
      if (!ridesOnTurn) said.say();
      const slot = grantSlot(state, request, nowMs);
      grants.push({
        workflowId: request.workflowId,
        ticket: request.ticket,
        slot: request.key,
        sendByMs: slot.sendByMs,
        ...(slot.awaitsAnswer ? { tellAnswer: true } : {}),
      });
      turns.delete(request.workflowId);
    } else {
      stillWaiting.push(request);
    }
  }
  state.slotRequests = stillWaiting;
  return grants;
}

/** What each waiting follow-up is told that it was not told yet: its place for the budget, or in its job's line. */
function noticesOfRound(
  state: CoordinatorState,
  nowMs: number,
  said: RoundMessages,
  holders: ReadonlySet<string>,
  nextSlot: number | null,
): RoundPlan['notices'] {
  const notices: RoundPlan['notices'] = [];
  const counted = countedSlots(state, nowMs);
  let ahead = 0;
  for (const request of state.slotRequests) {
    if (!holders.has(request.workflowId)) continue;
    const notice = budgetNotice(state, ahead, counted, nextSlot);
    const news = !request.told || (request.toldSlotAtMs === null && notice.nextSlotAtMs !== null);
    if (news && said.canSay()) {
      said.say();
      notices.push({ workflowId: request.workflowId, ticket: request.ticket, notice: say(state, notice, nowMs) });
      request.told = true;
      request.toldSlotAtMs = notice.nextSlotAtMs;
    }
    ahead += 1;
  }
  for (const [jobId, lane] of Object.entries(state.lanes)) {
    lane.waiting.forEach((entry, index) => {
      const place = index + (lane.holder ? 1 : 0);
      if (entry.toldAhead !== place && said.canSay()) {
        said.say();
        notices.push({
          workflowId: entry.workflowId,
          ticket: entry.ticket,
          notice: say(state, { reason: 'lane', jobId, ahead: place }, nowMs),
        });
        entry.toldAhead = place;
      }
    });
  }
  return notices;
}

/** When the coordinator must look again: the next slot, an answer overdue, a probe due, or a deadline. */
function roundWakeAtMs(state: CoordinatorState, nowMs: number, nextSlot: number | null): number | null {
  const wakes: number[] = [];
  if (state.slotRequests.length > 0) {
    if (nextSlot !== null) wakes.push(nextSlot);
    // A send whose answer is awaited past its lease no longer holds the others up; a lost probe is replaced.
    for (const slot of awaitingAnswer(state, nowMs)) wakes.push(answerDueByMs(slot));
    if (state.refusal?.probe === null) wakes.push(state.refusal.probeAtMs);
  }
  for (const lane of Object.values(state.lanes)) for (const entry of lane.waiting) wakes.push(entry.deadlineMs);
  for (const request of state.slotRequests) wakes.push(request.deadlineMs);
  return wakes.length > 0 ? Math.min(...wakes) : null;
}

/**
 * What a check-in may take at once without passing anyone: its job, if free and it is first in line with no earlier
 * follow-up awaited; then a slot, if the window has room and no holder asked before it. Everything else is left to
 * `planRound`, whose grants go out as signals in bounded rounds; these ride on the check-in's answer.
 */
export function grantAtCheckIn(state: CoordinatorState, workflowId: string, jobId: string, nowMs: number): void {
  const lane = state.lanes[jobId];
  if (!lane) return;
  const head = lane.waiting[0];
  if (lane.holder === null && head?.workflowId === workflowId && head.awaits === undefined && head.deadlineMs > nowMs) {
    lane.waiting.shift();
    lane.holder = { ...head, sinceMs: nowMs, checkedAtMs: nowMs };
  }
  if (lane.holder?.workflowId !== workflowId) return;
  state.slots = countedSlots(state, nowMs);
  dropLostProbe(state, nowMs);
  if (slotAvailability(state, nowMs) === 'closed') return;
  const holders = holderIds(state);
  const first = state.slotRequests.find((request) => holders.has(request.workflowId) && request.deadlineMs > nowMs);
  if (first?.workflowId !== workflowId) return;
  state.slotRequests = state.slotRequests.filter((request) => request !== first);
  grantSlot(state, first, nowMs);
}

/**
 * A request told to wait for the budget waited, whether its slot comes by signal or at a later check-in. A slot past
 * the window's first SENDS_AT_ONCE, or a refused project's probe, awaits the API's answer.
 */
function grantSlot(state: CoordinatorState, request: SlotRequest, nowMs: number): SendSlot {
  const { workflowId, ticket, key, told } = request;
  const slot = slotGranted(request, nowMs, state.windowMs);
  const tellAnswer = state.refusal ? true : state.slots.length >= (state.sendsAtOnce ?? SENDS_AT_ONCE);
  if (tellAnswer) slot.awaitsAnswer = true;
  if (state.refusal) state.refusal.probe = { workflowId, key };
  state.slots.push(slot);
  state.totals.granted += 1;
  if (told) state.totals.waitedForBudget += 1;
  (state.lastGranted ??= {})[workflowId] = {
    key,
    ticket,
    sendByMs: slot.sendByMs,
    ...(tellAnswer ? { tellAnswer } : {}),
  };
  return slot;
}

/**
 * What a follow-up waiting for a slot is told, `ahead` others before it: while the window is full, the slot it can
 * expect (the one freed after those ahead take theirs); while the API refuses the project, the next probe.
 */
function budgetNotice(
  state: CoordinatorState,
  ahead: number,
  counted: SendSlot[],
  nextSlot: number | null,
): Unsaid<Extract<QueueNotice, { reason: 'budget' }>> {
  const limit = limitOf(state);
  const base = { reason: 'budget' as const, sentInWindow: counted.length, limit, windowMs: state.windowMs, ahead };
  const refusal = state.refusal;
  if (refusal) return { ...base, nextSlotAtMs: refusal.probeAtMs, refusedSinceMs: refusal.sinceMs };
  const expected = counted[counted.length - limit + ahead];
  return { ...base, nextSlotAtMs: expected ? expected.countsFromMs + state.windowMs : nextSlot };
}

/** What a check-in that must wait is told in its answer (and marked told, so no signal repeats it); null if it waits for nothing. */
export function noticeAtCheckIn(
  state: CoordinatorState,
  workflowId: string,
  jobId: string,
  nowMs: number,
): QueueNotice | null {
  const lane = state.lanes[jobId];
  const index = lane?.waiting.findIndex((entry) => entry.workflowId === workflowId) ?? -1;
  const entry = lane?.waiting[index];
  if (lane && entry) {
    entry.toldAhead = index + (lane.holder ? 1 : 0);
    return say(state, { reason: 'lane', jobId, ahead: entry.toldAhead }, nowMs);
  }
  if (lane?.holder?.workflowId !== workflowId) return null;
  const holders = holderIds(state);
  const waiting = state.slotRequests.filter((request) => holders.has(request.workflowId));
  const ahead = waiting.findIndex((request) => request.workflowId === workflowId);
  const request = waiting[ahead];
  if (!request) return null;
  const notice = budgetNotice(state, ahead, countedSlots(state, nowMs), nextSlotAtMs(state, nowMs));
  request.told = true;
  request.toldSlotAtMs = notice.nextSlotAtMs;
  return say(state, notice, nowMs);
}

function holderIds(state: CoordinatorState): Set<string> {
  return new Set(Object.values(state.lanes).flatMap((lane) => (lane.holder ? [lane.holder.workflowId] : [])));
}

/**
 * A follow-up's standing as `planRound` left it: the turn it holds (with the slot granted for `key`, if any), or null
 * while it waits in line. What a `standing` signal says, for a check-in that asks rather than waits for the signal.
 * A slot granted for `key` is repeated with its own lease, even one that has ended (the follow-up then gives it back
 * and asks for another).
 */
export function standingOf(state: CoordinatorState, workflowId: string, key: string | null): TurnGrant | null {
  const holder = Object.values(state.lanes).find((lane) => lane.holder?.workflowId === workflowId)?.holder;
  if (!holder) return null;
  const granted = key === null ? undefined : state.lastGranted?.[workflowId];
  const slot = granted?.key === key ? granted : undefined;
  return {
    workflowId,
    ticket: holder.ticket,
    slot: slot?.key ?? null,
    sendByMs: slot?.sendByMs ?? null,
    ...(slot?.tellAnswer ? { tellAnswer: true } : {}),
  };
}

/**
 * Follow-ups awaited by a lane's first waiter (started before it, not seen yet) to make sure of: each a while after it
 * was first awaited and then every few minutes, since one that ended before checking in never says so.
 */
export function awaitedToCheck(state: CoordinatorState, nowMs: number): string[] {
  const nextCheckAt = (state.awaitedCheckedAtMs ??= {});
  const due: string[] = [];
  for (const lane of Object.values(state.lanes)) {
    for (const workflowId of lane.waiting[0]?.awaits ?? []) {
      const at = (nextCheckAt[workflowId] ??= nowMs + AWAITED_CHECK.firstMs);
      if (nowMs >= at && !due.includes(workflowId)) due.push(workflowId);
    }
  }
  for (const workflowId of Object.keys(nextCheckAt)) if (!isAwaited(state, workflowId)) delete nextCheckAt[workflowId];
  return due;
}

/** When `awaitedToCheck` next has something to say (null: nothing awaited). */
export function nextAwaitedCheckAtMs(state: CoordinatorState): number | null {
  const times = Object.values(state.awaitedCheckedAtMs ?? {});
  return times.length > 0 ? Math.min(...times) : null;
}

/** An awaited follow-up still runs (it has not reached its check-in yet, or held the job before a reset): look again later. */
export function markAwaitedChecked(state: CoordinatorState, workflowId: string, nowMs: number): void {
  (state.awaitedCheckedAtMs ??= {})[workflowId] = nowMs + AWAITED_CHECK.againMs;
}

/** How long an awaited follow-up may not check in before the coordinator asks whether it still runs, and how often after. */
export const AWAITED_CHECK = { firstMs: 30_000, againMs: 2 * 60_000 } as const;

function isAwaited(state: CoordinatorState, workflowId: string): boolean {
  return Object.values(state.lanes).some((lane) => lane.waiting.some((entry) => entry.awaits?.includes(workflowId)));
}

/** How often a holder with others behind it is checked, and how long after its own deadline one alone is. */
export const HOLDER_CHECK = { othersWaitingMs: 5 * 60_000, pastDeadlineMs: 60_000 } as const;

/**
 * Holders to make sure of (a holder that was terminated never says it is done): those with others waiting behind
 * them, every few minutes; any holder a minute past its own deadline, by which it should have left.
 */
export function holdersToCheck(state: CoordinatorState, nowMs: number): string[] {
  const due: string[] = [];
  for (const lane of Object.values(state.lanes)) {
    const holder = lane.holder;
    if (!holder) continue;
    const checked = holder.checkedAtMs ?? holder.sinceMs;
    const othersDue = lane.waiting.length > 0 && nowMs >= checked + HOLDER_CHECK.othersWaitingMs;
    const pastDeadline =
      nowMs >= holder.deadlineMs + HOLDER_CHECK.pastDeadlineMs &&
      checked < holder.deadlineMs + HOLDER_CHECK.pastDeadlineMs;
    if (othersDue || pastDeadline) due.push(holder.workflowId);
  }
  return due;
}

/** When `holdersToCheck` next has something to say (null: never, as things stand). */
export function nextHolderCheckAtMs(state: CoordinatorState): number | null {
  const times: number[] = [];
  for (const lane of Object.values(state.lanes)) {
    const holder = lane.holder;
    if (!holder) continue;
    const checked = holder.checkedAtMs ?? holder.sinceMs;
    if (lane.waiting.length > 0) times.push(checked + HOLDER_CHECK.othersWaitingMs);
    if (checked < holder.deadlineMs + HOLDER_CHECK.pastDeadlineMs)
      times.push(holder.deadlineMs + HOLDER_CHECK.pastDeadlineMs);
  }
  return times.length > 0 ? Math.min(...times) : null;
}

export function markChecked(state: CoordinatorState, workflowId: string, nowMs: number): void {
  for (const lane of Object.values(state.lanes))
    if (lane.holder?.workflowId === workflowId) lane.holder.checkedAtMs = nowMs;
}

/**
 * Nothing left to keep: no lane, no request, no send still counted, no budget of its own. Only then may the
 * coordinator end; its window must outlive every send in it, or a new coordinator would let more through.
 */
export function isIdle(state: CoordinatorState, nowMs: number): boolean {
  return (
    Object.keys(state.lanes).length === 0 &&
    state.slotRequests.length === 0 &&
    sentInWindow(state, nowMs) === 0 &&
    state.limitOverride === null
  );
}

/** When the last counted send leaves the window (null: none counted). */
export function windowEmptiesAtMs(state: CoordinatorState): number | null {
  return state.slots.length > 0 ? Math.max(...state.slots.map((slot) => slot.countsFromMs)) + state.windowMs : null;
}

/** What `budget show` and the `project` query answer. */
export interface ProjectView {
  projectId: string;
  /** Sends allowed in any window, and whether it was set for this project (else the workers' default). */
  limit: number;
  limitSetForProject: boolean;
  windowMs: number;
  sentInWindow: number;
  /** ISO time the next slot frees, while the window is full. */
  nextSlotAt: string | null;
  waitingForBudget: string[];
  /**
   * While the API refuses the project's sends (429): since when, and when the next probe may go (null: a probe is
   * awaiting its answer). Null while sends go.
   */
  refusal: { since: string; nextProbeAt: string | null } | null;
  lanes: Array<{ jobId: string; holder: string | null; waiting: string[] }>;
  totals: CoordinatorState['totals'];
}

export function viewOf(state: CoordinatorState, nowMs: number): ProjectView {
  const next = nextSlotAtMs(state, nowMs);
  const refusal = state.refusal ?? null;
  return {
    projectId: state.projectId,
    limit: limitOf(state),
    limitSetForProject: state.limitOverride !== null,
    windowMs: state.windowMs,
    sentInWindow: sentInWindow(state, nowMs),
    nextSlotAt: next === null ? null : new Date(next).toISOString(),
    // Only those holding their job wait for the budget; the others wait in their job's lane first.
    waitingForBudget: state.slotRequests
      .filter((request) => state.lanes[request.jobId]?.holder?.workflowId === request.workflowId)
      .map((request) => request.workflowId),
    refusal: refusal && {
      since: new Date(refusal.sinceMs).toISOString(),
      nextProbeAt: refusal.probe === null ? new Date(Math.max(refusal.probeAtMs, nowMs)).toISOString() : null,
    },
    lanes: Object.entries(state.lanes).map(([jobId, lane]) => ({
      jobId,
      holder: lane.holder?.workflowId ?? null,
      waiting: lane.waiting.map((entry) => entry.workflowId),
    })),
    totals: { ...state.totals, refused: state.totals.refused ?? 0 },
  };
}

/** A continued coordinator's state, checked before it is trusted (only our own continue-as-new writes one). */
export function isCoordinatorState(value: unknown): value is CoordinatorState {
  if (typeof value !== 'object' || value === null) return false;
  const state = value as Partial<CoordinatorState>;
  return (
    typeof state.projectId === 'string' &&
    typeof state.defaultLimit === 'number' &&
    (state.limitOverride === null || typeof state.limitOverride === 'number') &&
    typeof state.windowMs === 'number' &&
    Array.isArray(state.slots) &&
    typeof state.lanes === 'object' &&
    state.lanes !== null &&
    Array.isArray(state.slotRequests) &&
    typeof state.totals === 'object' &&
    typeof state.runs === 'number'
  );
}
