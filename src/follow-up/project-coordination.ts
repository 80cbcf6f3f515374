/**
 * A project's coordination, as pure state and changes: its send budget (at most N sends in any rolling window, the
 * way the vendor counts "100 uses per project per hour") and its jobs' lanes (one follow-up at a time per job, the
 * others in arrival order). The coordinator workflow (workflows/project-coordinator.ts) holds one such state per
 * project and turns what `schedule` decides into signals; everything here is unit-tested without a server.
 * Pure: workflow code imports it.
 */

/**
 * The vendor allows 100 uses per project per hour, and creating a job counts too: 80 sends leaves a fifth of the
 * budget to whatever else uses the project (the dashboard, other tools), so our follow-ups never make those fail.
 */
export const DEFAULT_SENDS_PER_PROJECT_PER_HOUR = 80;
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
 * How long a follow-up waiting on its coordinator (for its job or a send slot) may hear nothing before it checks in
 * again: five minutes on the hour's window, ten seconds on a test's short one. A coordinator that lost it (terminated,
 * reset) takes it back in line then; one that knows it changes nothing.
 */
export function recheckAfterMs(windowMs: number): number {
  return Math.min(5 * 60_000, Math.max(10_000, Math.floor(windowMs / 12)));
}

/** A grant of one send: counted in the window from `countsFromMs` (the end of its lease) for a window's length. */
export interface SendSlot {
  workflowId: string;
  /** The follow-up's name for the send attempt it was granted for (its run id and attempt number). */
  key: string;
  countsFromMs: number;
}

export interface LaneEntry {
  workflowId: string;
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
  waiting: LaneEntry[];
}

/** A holder waiting for a send slot. */
export interface SlotRequest {
  workflowId: string;
  jobId: string;
  key: string;
  sinceMs: number;
  deadlineMs: number;
  told?: boolean;
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
  /** Totals over the coordinator's whole life (all runs). */
  totals: { served: number; granted: number; returned: number; waitedForBudget: number };
  runs: number;
}

/** What a follow-up asks when it checks in, and again before a later send attempt. */
export interface EnterRequest {
  workflowId: string;
  jobId: string;
  deadlineMs: number;
  /**
   * The send attempt it wants a slot for, named uniquely by the follow-up (null: none, e.g. a re-run whose message
   * an earlier run delivered). A repeated signal for the same attempt is not granted twice.
   */
  slotFor: string | null;
  /** The sending worker's AGENT_SENDS_PER_PROJECT_PER_HOUR (scaled to the window), the project's default. */
  defaultLimit: number;
}

/** To a follow-up: the job is yours; with `sendByMs`, a request may leave until then. */
export interface TurnGrant {
  workflowId: string;
  /** The attempt the slot is for (null: the turn comes without a slot). */
  slot: string | null;
  sendByMs: number | null;
}

/** To a follow-up that waits: why, and for how long it may expect to. */
export type QueueNotice =
  | { reason: 'lane'; jobId: string; ahead: number }
  | { reason: 'budget'; sentInWindow: number; limit: number; windowMs: number; nextSlotAtMs: number | null; ahead: number };

export interface Schedule {
  grants: TurnGrant[];
  notices: Array<{ workflowId: string; notice: QueueNotice }>;
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
    totals: { served: 0, granted: 0, returned: 0, waitedForBudget: 0 },
    runs: 1,
  };
}

export function limitOf(state: CoordinatorState): number {
  return state.limitOverride ?? state.defaultLimit;
}

/** Slots still counted at `nowMs`, oldest first. */
function countedSlots(state: CoordinatorState, nowMs: number): SendSlot[] {
  return state.slots.filter((slot) => slot.countsFromMs + state.windowMs > nowMs).sort((a, b) => a.countsFromMs - b.countsFromMs);
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
 * A follow-up checks in: it takes its place in its job's lane (or keeps the one it has: a retried check-in, a re-run
 * under the same id) and, with `slotFor`, asks for a send slot once it holds the job.
 */
export function enter(state: CoordinatorState, request: EnterRequest, nowMs: number): void {
  state.defaultLimit = request.defaultLimit;
  const lane = (state.lanes[request.jobId] ??= { holder: null, waiting: [] });
  const holds = lane.holder?.workflowId === request.workflowId;
  const waiting = lane.waiting.some((entry) => entry.workflowId === request.workflowId);
  if (!holds && !waiting) lane.waiting.push({ workflowId: request.workflowId, sinceMs: nowMs, deadlineMs: request.deadlineMs });
  if (holds && lane.holder) lane.holder.deadlineMs = request.deadlineMs;
  if (request.slotFor !== null) askForSlot(state, { workflowId: request.workflowId, jobId: request.jobId, key: request.slotFor, sinceMs: nowMs, deadlineMs: request.deadlineMs });
}

/** Queues a slot request, unless that attempt has a slot already or is queued (a repeated signal). */
function askForSlot(state: CoordinatorState, request: SlotRequest): void {
  if (state.slots.some((slot) => slot.workflowId === request.workflowId && slot.key === request.key)) return;
  const queued = state.slotRequests.find((entry) => entry.workflowId === request.workflowId);
  if (queued) {
    // A late, repeated check-in for an attempt the follow-up has since given up on must not replace the newer one.
    if (isOlderAttempt(request.key, queued.key)) return;
    queued.key = request.key;
    queued.deadlineMs = request.deadlineMs;
    return;
  }
  state.slotRequests.push(request);
}

/** Whether `key` names an earlier attempt of the same run than `than` (keys are `<run id>#<attempt>`). */
function isOlderAttempt(key: string, than: string): boolean {
  const [run, attempt] = key.split('#');
  const [thanRun, thanAttempt] = than.split('#');
  return run === thanRun && Number(attempt) < Number(thanAttempt);
}

/** A follow-up gives back a slot it never sent under (no request left), so it does not count. */
export function returnSlot(state: CoordinatorState, workflowId: string, key: string): boolean {
  const index = state.slots.findIndex((slot) => slot.workflowId === workflowId && slot.key === key);
  if (index < 0) return false;
  state.slots.splice(index, 1);
  state.totals.returned += 1;
  return true;
}

/** A follow-up is done with its job, or gives up waiting: the next in line may go. Its sent slots still count. */
export function leave(state: CoordinatorState, workflowId: string): 'released' | 'left' | 'unknown' {
  state.slotRequests = state.slotRequests.filter((entry) => entry.workflowId !== workflowId);
  for (const [jobId, lane] of Object.entries(state.lanes)) {
    if (lane.holder?.workflowId === workflowId) {
      lane.holder = null;
      state.totals.served += 1;
      if (lane.waiting.length === 0) delete state.lanes[jobId];
      return 'released';
    }
    const index = lane.waiting.findIndex((entry) => entry.workflowId === workflowId);
    if (index >= 0) {
      lane.waiting.splice(index, 1);
      if (lane.waiting.length === 0 && lane.holder === null) delete state.lanes[jobId];
      return 'left';
    }
  }
  return 'unknown';
}

/**
 * Decides what happens now: drops follow-ups that waited past their deadline, hands each free job to the first in
 * its line, grants send slots in the order they were asked for while the window has room, and says what each
 * waiting follow-up should be told. Changes the state; the caller signals the grants and notices.
 */
export function schedule(state: CoordinatorState, nowMs: number, maxMessages = Number.POSITIVE_INFINITY): Schedule {
  const grants: TurnGrant[] = [];
  const notices: Schedule['notices'] = [];
  // Every grant and notice is a signal, two events in the coordinator's history: a round says at most `maxMessages`
  // and leaves the rest for the next, so the coordinator can continue as new between rounds, however big a burst.
  let messages = 0;
  let more = false;
  const canSay = () => {
    if (messages < maxMessages) return true;
    more = true;
    return false;
  };
  state.slots = countedSlots(state, nowMs);
  state.slotRequests = state.slotRequests.filter((request) => request.deadlineMs > nowMs);

  const turns = new Set<string>();
  for (const [jobId, lane] of Object.entries(state.lanes)) {
    lane.waiting = lane.waiting.filter((entry) => entry.deadlineMs > nowMs);
    if (lane.holder === null && lane.waiting.length > 0 && canSay()) {
      const next = lane.waiting.shift();
      if (next) {
        messages += 1;
        lane.holder = { workflowId: next.workflowId, sinceMs: nowMs, deadlineMs: next.deadlineMs, checkedAtMs: nowMs };
        turns.add(next.workflowId);
      }
    }
    if (lane.holder === null && lane.waiting.length === 0) delete state.lanes[jobId];
  }

  // Slots go only to follow-ups holding their job, in the order they asked.
  const holders = new Set(Object.values(state.lanes).flatMap((lane) => (lane.holder ? [lane.holder.workflowId] : [])));
  const lease = sendLeaseMs(state.windowMs);
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
    if (!deferred && !ridesOnTurn && state.slots.length < limitOf(state) && !canSay()) deferred = true;
    if (!deferred && state.slots.length < limitOf(state)) {
      if (!ridesOnTurn) messages += 1;
      state.slots.push({ workflowId: request.workflowId, key: request.key, countsFromMs: nowMs + lease });
      state.totals.granted += 1;
      if (request.told) state.totals.waitedForBudget += 1;
      grants.push({ workflowId: request.workflowId, slot: request.key, sendByMs: nowMs + lease });
      turns.delete(request.workflowId);
    } else {
      stillWaiting.push(request);
    }
  }
  state.slotRequests = stillWaiting;
  // A turn without a slot: the follow-up needs none (its message went out in an earlier run), or waits for one,
  // holding the job meanwhile (it reads the job before it sends).
  for (const workflowId of turns) grants.push({ workflowId, slot: null, sendByMs: null });

  const limit = limitOf(state);
  const nextSlot = nextSlotAtMs(state, nowMs);
  const counted = countedSlots(state, nowMs);
  let ahead = 0;
  for (const request of state.slotRequests) {
    if (!holders.has(request.workflowId)) continue;
    if (!request.told && canSay()) {
      messages += 1;
      // The slot this one can expect: the one freed after those of the follow-ups ahead of it.
      const expected = counted[counted.length - limit + ahead];
      notices.push({
        workflowId: request.workflowId,
        notice: {
          reason: 'budget',
          sentInWindow: counted.length,
          limit,
          windowMs: state.windowMs,
          nextSlotAtMs: expected ? expected.countsFromMs + state.windowMs : nextSlot,
          ahead,
        },
      });
      request.told = true;
    }
    ahead += 1;
  }
  for (const [jobId, lane] of Object.entries(state.lanes)) {
    lane.waiting.forEach((entry, index) => {
      const place = index + (lane.holder ? 1 : 0);
      if (entry.toldAhead !== place && canSay()) {
        messages += 1;
        notices.push({ workflowId: entry.workflowId, notice: { reason: 'lane', jobId, ahead: place } });
        entry.toldAhead = place;
      }
    });
  }

  const wakes: number[] = [];
  if (state.slotRequests.length > 0 && nextSlot !== null) wakes.push(nextSlot);
  for (const lane of Object.values(state.lanes)) for (const entry of lane.waiting) wakes.push(entry.deadlineMs);
  for (const request of state.slotRequests) wakes.push(request.deadlineMs);
  return { grants, notices, wakeAtMs: wakes.length > 0 ? Math.min(...wakes) : null, more };
}

/**
 * A follow-up's standing as `schedule` left it: the turn it holds (with the slot granted for `key`, if any), or null
 * while it waits in line. What the `turn` signal says, for a check-in that asks rather than waits for the signal.
 */
export function standingOf(state: CoordinatorState, workflowId: string, key: string | null): TurnGrant | null {
  const holds = Object.values(state.lanes).some((lane) => lane.holder?.workflowId === workflowId);
  if (!holds) return null;
  const slot = key === null ? undefined : state.slots.find((granted) => granted.workflowId === workflowId && granted.key === key);
  // A slot's lease ends where it starts to count in the window (`schedule`).
  return { workflowId, slot: slot?.key ?? null, sendByMs: slot?.countsFromMs ?? null };
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
    const pastDeadline = nowMs >= holder.deadlineMs + HOLDER_CHECK.pastDeadlineMs && checked < holder.deadlineMs + HOLDER_CHECK.pastDeadlineMs;
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
    if (checked < holder.deadlineMs + HOLDER_CHECK.pastDeadlineMs) times.push(holder.deadlineMs + HOLDER_CHECK.pastDeadlineMs);
  }
  return times.length > 0 ? Math.min(...times) : null;
}

export function markChecked(state: CoordinatorState, workflowId: string, nowMs: number): void {
  for (const lane of Object.values(state.lanes)) if (lane.holder?.workflowId === workflowId) lane.holder.checkedAtMs = nowMs;
}

/**
 * Nothing left to keep: no lane, no request, no send still counted, no budget of its own. Only then may the
 * coordinator end; its window must outlive every send in it, or a new coordinator would let more through.
 */
export function isIdle(state: CoordinatorState, nowMs: number): boolean {
  return Object.keys(state.lanes).length === 0 && state.slotRequests.length === 0 && sentInWindow(state, nowMs) === 0 && state.limitOverride === null;
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
  lanes: Array<{ jobId: string; holder: string | null; waiting: string[] }>;
  totals: CoordinatorState['totals'];
}

export function viewOf(state: CoordinatorState, nowMs: number): ProjectView {
  const next = nextSlotAtMs(state, nowMs);
  return {
    projectId: state.projectId,
    limit: limitOf(state),
    limitSetForProject: state.limitOverride !== null,
    windowMs: state.windowMs,
    sentInWindow: sentInWindow(state, nowMs),
    nextSlotAt: next === null ? null : new Date(next).toISOString(),
    // Only those holding their job wait for the budget; the others wait in their job's lane first.
    waitingForBudget: state.slotRequests.filter((request) => state.lanes[request.jobId]?.holder?.workflowId === request.workflowId).map((request) => request.workflowId),
    lanes: Object.entries(state.lanes).map(([jobId, lane]) => ({ jobId, holder: lane.holder?.workflowId ?? null, waiting: lane.waiting.map((entry) => entry.workflowId) })),
    totals: { ...state.totals },
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
