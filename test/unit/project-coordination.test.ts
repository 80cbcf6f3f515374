import { coordinatorWorkflowId, isCoordinatorWorkflowId } from '../../src/kernel/workflow-ids';
import {
  ARRIVAL_MARGIN_MS,
  emptyCoordinator,
  enter,
  grantAtCheckIn,
  holdersToCheck,
  isConfirmed,
  isIdle,
  isSlotKeyOfRun,
  leave,
  limitOf,
  nextSlotAtMs,
  noticeAtCheckIn,
  recheckAfterMs,
  PROBE_BACKOFF,
  returnSlot,
  planRound,
  saidAfter,
  sendAnswered,
  sendLeaseMs,
  SENDS_AT_ONCE,
  SENDS_AWAITING_ANSWER,
  sentInWindow,
  slotKey,
  standingOf,
  viewOf,
  type CoordinatorState,
  type EnterRequest,
  type QueueNotice,
  type RoundPlan,
  type TurnGrant,
} from '../../src/coordinator/project-coordination';
import { defaultLimitFrom, perWindow } from '../../src/coordinator/budget-source';
import { checkEnterRequest } from '../../src/coordinator/coordinator-messages';

const perHourOf = (sends: number, windowMs: number) => (sends * 3_600_000) / windowMs;

const HOUR = 3_600_000;
/** Follow-ups start in the order the tests check them in, unless a test says otherwise. */
let started = 0;
const request = (
  workflowId: string,
  jobId: string,
  slotFor: string | null = `${workflowId}#1`,
  deadlineMs = 10 * HOUR,
): EnterRequest => ({
  workflowId,
  ticket: `t-${workflowId}`,
  jobId,
  startedAtMs: (started += 1),
  before: [],
  deadlineMs,
  slotFor,
});

function burst(state: CoordinatorState, count: number, nowMs: number): void {
  for (let index = 0; index < count; index += 1) enter(state, request(`f${index}`, `job-${index}`), nowMs);
}

/** The API's answer to the send under `grant`, as its follow-up tells it. */
function answer(
  state: CoordinatorState,
  grant: TurnGrant,
  nowMs: number,
  refused = false,
  retryAfterMs: number | null = null,
) {
  return sendAnswered(
    state,
    { workflowId: grant.workflowId, ticket: grant.ticket, slot: grant.slot as string, refused, retryAfterMs },
    nowMs,
  );
}

/**
 * Rounds of `planRound` at `nowMs`, each followed by the API's 2xx to every send whose answer the coordinator asked
 * for, until a round grants none of those: what a burst comes to while the API takes every send.
 */
function sendAll(state: CoordinatorState, nowMs: number, maxMessages?: number) {
  const rounds: RoundPlan[] = [];
  for (;;) {
    const round = planRound(state, nowMs, maxMessages);
    rounds.push(round);
    const awaited = round.grants.filter((grant) => grant.tellAnswer === true);
    for (const grant of awaited) answer(state, grant, nowMs);
    if (awaited.length === 0 && !round.more) break;
  }
  return {
    rounds,
    grants: rounds.flatMap((round) => round.grants),
    notices: rounds.flatMap((round) => round.notices),
  };
}

/** The last thing each follow-up was told, by workflow id. */
function lastNotices(notices: RoundPlan['notices']): Map<string, QueueNotice> {
  return new Map(notices.map(({ workflowId, notice }) => [workflowId, notice]));
}

describe("a project's send budget counts the way the vendor does: at most N in any rolling hour", () => {
  test('a burst up to the budget is granted at once, together with each job', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    burst(state, 20, 0);
    const { grants, notices } = planRound(state, 0);
    expect(grants).toHaveLength(20);
    expect(grants.every((grant) => grant.sendByMs === sendLeaseMs(HOUR))).toBe(true);
    expect(notices).toEqual([]);
    expect(sentInWindow(state, 0)).toBe(20);
  });

  test('past the budget the rest wait, each told how full the window is and when its slot comes; a slot frees when its send leaves the window', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    burst(state, 150, 0);
    const first = sendAll(state, 0);
    // Every job is handed over at once; 80 come with a slot, 70 hold their job and wait for one.
    expect(new Set(first.grants.map((grant) => grant.workflowId)).size).toBe(150);
    expect(first.grants.filter((grant) => grant.slot !== null)).toHaveLength(80);
    const told = lastNotices(first.notices);
    // The 81st send waits for the first to leave the window; those before it were told "soon" (no time) first.
    expect(told.get('f80')).toMatchObject({
      reason: 'budget',
      limit: 80,
      windowMs: HOUR,
      nextSlotAtMs: sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR,
    });
    expect(told.get('f79')).toMatchObject({ reason: 'budget', nextSlotAtMs: null });
    expect(told.get('f149')).toMatchObject({ nextSlotAtMs: expect.any(Number) });
    expect(first.rounds.at(-1)?.wakeAtMs).toBe(sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR);
    // Nothing frees before the oldest send has been counted for a whole hour.
    expect(planRound(state, HOUR).grants).toHaveLength(0);
    const second = sendAll(state, sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR);
    expect(second.grants).toHaveLength(70);
    expect(second.grants[0]?.workflowId).toBe('f80');
  });

  test('a slot given back (no request left under it) does not count; one sent under counts for the whole window', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 2;
    burst(state, 3, 0);
    planRound(state, 0);
    expect(nextSlotAtMs(state, 0)).toBe(sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR);
    expect(returnSlot(state, 'f0', 't-f0', 'f0#1')).toBe(true);
    expect(planRound(state, 1).grants.map((grant) => grant.workflowId)).toEqual(['f2']);
  });

  test('a repeated ask for a granted attempt is answered with that grant: no second slot and no refund; the next attempt gets a slot of its own', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j'), 0);
    planRound(state, 0);
    enter(state, request('a', 'j'), 1);
    expect(planRound(state, 1).grants).toEqual([]);
    expect(standingOf(state, 'a', 'a#1')).toEqual({
      workflowId: 'a',
      ticket: 't-a',
      slot: 'a#1',
      sendByMs: sendLeaseMs(HOUR),
    });
    expect(sentInWindow(state, 1)).toBe(1);
    expect(state.totals).toMatchObject({ granted: 1, returned: 0 });
    enter(state, request('a', 'j', 'a#2'), 2);
    expect(planRound(state, 2).grants).toEqual([
      { workflowId: 'a', ticket: 't-a', slot: 'a#2', sendByMs: 2 + sendLeaseMs(HOUR) },
    ]);
    expect(sentInWindow(state, 2)).toBe(2);
  });

  test('a check-in that crosses its own grant does not free the slot for anyone else: the window never holds one more than the budget', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    // b was started first but checks in after a took the only slot; a's grant is on its way when a checks in again.
    enter(state, { ...request('a', 'ja'), startedAtMs: 2 }, 0);
    planRound(state, 0);
    enter(state, { ...request('b', 'jb'), startedAtMs: 1 }, 1);
    planRound(state, 1);
    enter(state, { ...request('a', 'ja'), startedAtMs: 2 }, 2);
    expect(planRound(state, 2).grants).toEqual([]);
    expect(sentInWindow(state, 2)).toBe(1);
    expect(viewOf(state, 2).waitingForBudget).toEqual(['b']);
  });

  test('a slot counts from a little after its lease ends, since a request that leaves at the last moment arrives later', () => {
    const state = emptyCoordinator('p', 80, 10_000);
    state.limitOverride = 1;
    burst(state, 2, 0);
    const [grant] = planRound(state, 0).grants;
    expect(grant?.sendByMs).toBe(sendLeaseMs(10_000));
    expect(nextSlotAtMs(state, 0)).toBe(sendLeaseMs(10_000) + ARRIVAL_MARGIN_MS + 10_000);
  });

  test('a late repeat of an attempt the follow-up has given up on does not replace its newer request', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    enter(state, request('x', 'other'), 0);
    enter(state, request('a', 'j', 'run#1'), 0);
    planRound(state, 0);
    enter(state, request('a', 'j', 'run#2'), 1);
    enter(state, request('a', 'j', 'run#1'), 2);
    const later = planRound(state, sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR);
    expect(later.grants).toEqual([expect.objectContaining({ workflowId: 'a', ticket: 't-a', slot: 'run#2' })]);
  });

  test("a slot's name says which run of the follow-up asked for it, so a grant reaching a later run is told from one of its own", () => {
    const key = slotKey('run-1', 3);
    expect([
      isSlotKeyOfRun(key, 'run-1'),
      isSlotKeyOfRun(key, 'run-2'),
      isSlotKeyOfRun(slotKey('run-10', 1), 'run-1'),
    ]).toEqual([true, false, false]);
    expect(slotKey('run-1', 1)).not.toBe(slotKey('run-1', 2));
  });

  test('a burst is told in rounds of at most so many signals, in order, so the coordinator can continue as new between them', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    burst(state, 150, 0);
    const { rounds, grants, notices } = sendAll(state, 0, 50);
    for (const round of rounds) expect(round.grants.length + round.notices.length).toBeLessThanOrEqual(50);
    expect(rounds.length).toBeGreaterThan(1);
    // Everything unbounded rounds would have said: a job each, 80 slots in arrival order, the other 70 told when.
    expect(new Set(grants.map((grant) => grant.workflowId)).size).toBe(150);
    expect(grants.filter((grant) => grant.slot !== null).map((grant) => grant.workflowId)).toEqual(
      Array.from({ length: 80 }, (_, index) => `f${index}`),
    );
    const sent = new Set(grants.filter((grant) => grant.slot !== null).map((grant) => grant.workflowId));
    const waiting = [...lastNotices(notices)].filter(
      ([workflowId, notice]) => notice.reason === 'budget' && !sent.has(workflowId),
    );
    expect(waiting.map(([workflowId]) => workflowId).sort()).toEqual(
      Array.from({ length: 70 }, (_, index) => `f${index + 80}`).sort(),
    );
    expect(waiting.every(([, notice]) => notice.reason === 'budget' && notice.nextSlotAtMs !== null)).toBe(true);
    expect(sentInWindow(state, 0)).toBe(80);
  });

  test('a waiting follow-up checks in again after five minutes of silence on the hour window, ten seconds on a short one', () => {
    expect(recheckAfterMs(HOUR)).toBe(5 * 60_000);
    expect(recheckAfterMs(30_000)).toBe(10_000);
  });

  test('a budget set for the project wins over the default and keeps the coordinator from ending', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    burst(state, 2, 0);
    expect(planRound(state, 0).grants.filter((grant) => grant.slot !== null)).toHaveLength(1);
    expect(viewOf(state, 0)).toMatchObject({
      limit: 1,
      limitSetForProject: true,
      sentInWindow: 1,
      waitingForBudget: ['f1'],
    });
    leave(state, 'f0');
    leave(state, 'f1');
    expect(isIdle(state, 2 * HOUR)).toBe(false);
    state.limitOverride = null;
    expect(isIdle(state, 2 * HOUR)).toBe(true);
  });

  test('the coordinator stays while a send is still in its window, so a new one can never let more through', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j'), 0);
    planRound(state, 0);
    leave(state, 'a');
    expect(isIdle(state, HOUR)).toBe(false);
    expect(isIdle(state, HOUR + sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS)).toBe(true);
  });
});

describe("others' uses of the project: the coordinator learns of them from the API's 429 and pauses every send", () => {
  /** A project whose window already holds the first sends, so the next ones await their answers. */
  function pastTheFirstSends(limit = 80): CoordinatorState {
    const state = emptyCoordinator('p', limit, HOUR);
    burst(state, SENDS_AT_ONCE, 0);
    const first = planRound(state, 0);
    expect(first.grants.filter((grant) => grant.slot !== null)).toHaveLength(SENDS_AT_ONCE);
    expect(first.grants.some((grant) => grant.tellAnswer)).toBe(false);
    return state;
  }

  function more(state: CoordinatorState, from: number, count: number, nowMs: number): void {
    for (let index = from; index < from + count; index += 1) enter(state, request(`g${index}`, `job-g${index}`), nowMs);
  }

  const slotsOf = (round: RoundPlan) => round.grants.filter((grant) => grant.slot !== null);

  test('past the first sends of a window, at most two await the API answer at once; each answer lets the next go', () => {
    const state = pastTheFirstSends();
    more(state, 0, 10, 1);
    const round = planRound(state, 1);
    expect(slotsOf(round).map((grant) => grant.workflowId)).toEqual(['g0', 'g1']);
    expect(slotsOf(round).every((grant) => grant.tellAnswer === true)).toBe(true);
    // The others are told they wait, with no time yet: the window has room.
    expect(lastNotices(round.notices).get('g2')).toMatchObject({ reason: 'budget', nextSlotAtMs: null, ahead: 0 });
    expect(SENDS_AWAITING_ANSWER).toBe(2);
    expect(slotsOf(planRound(state, 2))).toEqual([]);
    expect(answer(state, slotsOf(round)[0] as TurnGrant, 3)).toBe(true);
    expect(slotsOf(planRound(state, 3)).map((grant) => grant.workflowId)).toEqual(['g2']);
    // An answer that never comes holds the others up only until its lease ends.
    const unanswered = planRound(state, 4);
    expect(slotsOf(unanswered)).toEqual([]);
    expect(unanswered.wakeAtMs).toBe(1 + sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS);
    expect(slotsOf(planRound(state, 1 + sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS)).length).toBeGreaterThan(0);
  });

  test('a 429 pauses the project: no slot until a probe, the first 60 s after it; a refused probe doubles the wait up to 15 min; an accepted one ends the pause', () => {
    const state = pastTheFirstSends();
    more(state, 0, 10, 1);
    const [first, second] = slotsOf(planRound(state, 1)) as [TurnGrant, TurnGrant];
    expect(answer(state, first, 1_000, true)).toBe(true);
    // The refused send is out of the window: the vendor did not count it.
    expect(sentInWindow(state, 1_000)).toBe(SENDS_AT_ONCE + 1);
    expect(state.totals.refused).toBe(1);
    // The send in flight with it meets the same 429; it does not move the probe.
    expect(answer(state, second, 1_500, true)).toBe(true);
    expect(state.refusal).toMatchObject({ sinceMs: 1_000, probeAtMs: 1_000 + PROBE_BACKOFF.firstMs, probe: null });
    // Both ask again; nobody gets a slot, and every waiting follow-up is told why and when the probe goes.
    enter(state, { ...request('g0', 'job-g0', 'g0#2'), startedAtMs: 0 }, 2_000);
    enter(state, { ...request('g1', 'job-g1', 'g1#2'), startedAtMs: 0 }, 2_000);
    const paused = planRound(state, 2_000);
    expect(slotsOf(paused)).toEqual([]);
    expect(paused.wakeAtMs).toBe(1_000 + PROBE_BACKOFF.firstMs);
    expect(lastNotices(paused.notices).get('g5')).toMatchObject({
      reason: 'budget',
      nextSlotAtMs: 1_000 + PROBE_BACKOFF.firstMs,
      refusedSinceMs: 1_000,
    });
    expect(viewOf(state, 2_000).refusal).toEqual({
      since: new Date(1_000).toISOString(),
      nextProbeAt: new Date(1_000 + PROBE_BACKOFF.firstMs).toISOString(),
    });

    // One probe, and only one, at the probe time.
    let now = 1_000 + PROBE_BACKOFF.firstMs;
    const probe = slotsOf(planRound(state, now));
    expect(probe).toHaveLength(1);
    expect(probe[0]).toMatchObject({ tellAnswer: true });
    expect(viewOf(state, now).refusal?.nextProbeAt).toBeNull();
    expect(slotsOf(planRound(state, now + 1))).toEqual([]);

    // Refused probes: 2, 4, 8 minutes, then 15 at most.
    const waits: number[] = [];
    let last = probe[0] as TurnGrant;
    for (let refused = 0; refused < 5; refused += 1) {
      answer(state, last, now, true);
      enter(
        state,
        { ...request(last.workflowId, `job-${last.workflowId}`, `${last.workflowId}#${refused + 3}`), startedAtMs: 0 },
        now,
      );
      waits.push((state.refusal?.probeAtMs ?? 0) - now);
      now = state.refusal?.probeAtMs ?? 0;
      const next = slotsOf(planRound(state, now));
      expect(next).toHaveLength(1);
      last = next[0] as TurnGrant;
    }
    expect(waits).toEqual([2, 4, 8, 15, 15].map((minutes) => minutes * 60_000));
    expect(state.refusal?.sinceMs).toBe(1_000);

    // The probe is taken: the pause ends and sends go again, two awaiting answers at once.
    answer(state, last, now + 100);
    expect(state.refusal).toBeNull();
    expect(slotsOf(planRound(state, now + 100))).toHaveLength(SENDS_AWAITING_ANSWER);
    expect(viewOf(state, now + 100).refusal).toBeNull();
  });

  test("a follow-up told in its check-in's answer to wait is told again of the 429, in a notice said after the answer", () => {
    // The follow-up hears the signal and the answer in either order (the check-in reads the job before it answers):
    // only the order they were said in tells it which to show, even when both were said in the same moment.
    const state = emptyCoordinator('p', 1, HOUR);
    enter(state, request('a', 'job-a'), 0);
    const [sent] = slotsOf(planRound(state, 0)) as [TurnGrant];
    enter(state, request('b', 'job-b'), 5);
    grantAtCheckIn(state, 'b', 'job-b', 5);
    const answered = noticeAtCheckIn(state, 'b', 'job-b', 5) as QueueNotice;
    expect(answered).toMatchObject({ reason: 'budget', ahead: 0 });
    expect(answered).not.toHaveProperty('refusedSinceMs');
    answer(state, sent, 5, true);
    const retold = lastNotices(planRound(state, 5).notices).get('b') as QueueNotice;
    expect(retold).toMatchObject({ reason: 'budget', refusedSinceMs: 5 });
    expect(saidAfter(retold.said, answered.said)).toBe(true);
    expect(saidAfter(answered.said, retold.said)).toBe(false);
    expect(saidAfter(retold.said, retold.said)).toBe(false);
    // The count goes on across continue-as-new (it is in the state); a coordinator started again from nothing after
    // a termination counts from one, later.
    const restarted = emptyCoordinator('p', 1, HOUR);
    enter(restarted, request('b', 'job-b'), 6);
    const first = planRound(restarted, 6);
    expect(first.grants).toHaveLength(1);
    enter(restarted, request('c', 'job-b'), 6);
    const afresh = lastNotices(planRound(restarted, 6).notices).get('c') as QueueNotice;
    expect(afresh.said).toEqual({ atMs: 6, n: 1 });
    expect(saidAfter(afresh.said, retold.said)).toBe(true);
  });

  test("the API's Retry-After sets the probe, sooner or later than a minute", () => {
    const state = pastTheFirstSends();
    more(state, 0, 3, 1);
    const [first, second] = slotsOf(planRound(state, 1)) as [TurnGrant, TurnGrant];
    answer(state, first, 1_000, true, 5_000);
    expect(state.refusal?.probeAtMs).toBe(6_000);
    // A later Retry-After on a send that was in flight with it moves the probe later, never sooner.
    answer(state, second, 1_200, true, 90_000);
    expect(state.refusal?.probeAtMs).toBe(91_200);
  });

  test('a probe given back (no request left) or unanswered past its lease is replaced by another at once', () => {
    const state = pastTheFirstSends();
    more(state, 0, 5, 1);
    const [first] = slotsOf(planRound(state, 1)) as [TurnGrant];
    answer(state, first, 10, true);
    const at = 10 + PROBE_BACKOFF.firstMs;
    const [probe] = slotsOf(planRound(state, at)) as [TurnGrant];
    expect(returnSlot(state, probe.workflowId, probe.ticket, probe.slot as string)).toBe(true);
    const [again] = slotsOf(planRound(state, at + 1)) as [TurnGrant];
    expect(again.workflowId).not.toBe(probe.workflowId);
    expect(slotsOf(planRound(state, at + 2))).toEqual([]);
    const [third] = slotsOf(planRound(state, (again.sendByMs as number) + ARRIVAL_MARGIN_MS)) as [TurnGrant];
    expect(third).toMatchObject({ tellAnswer: true });
    expect(state.refusal).not.toBeNull();
  });

  test('an answer or a give-back for a slot the coordinator does not hold under that ticket changes nothing: stale, foreign, made up or unsealed', () => {
    const state = pastTheFirstSends();
    more(state, 0, 3, 1);
    const [first] = slotsOf(planRound(state, 1)) as [TurnGrant];
    const before = structuredClone(state);
    expect(
      sendAnswered(
        state,
        { workflowId: 'stranger', ticket: 't-stranger', slot: 'x#1', refused: true, retryAfterMs: null },
        5,
      ),
    ).toBe(false);
    expect(
      sendAnswered(
        state,
        { workflowId: first.workflowId, ticket: first.ticket, slot: 'other-run#1', refused: true, retryAfterMs: null },
        5,
      ),
    ).toBe(false);
    // Its own slot, named under another ticket (the public first run id, say): not its follow-up's word.
    const slot = first.slot as string;
    const unsealed = { workflowId: first.workflowId, ticket: 'its-first-run-id', slot, refused: true };
    expect(sendAnswered(state, { ...unsealed, retryAfterMs: null }, 5)).toBe(false);
    expect(returnSlot(state, first.workflowId, 'its-first-run-id', slot)).toBe(false);
    expect(state).toEqual(before);
    // The real one counts once; told again, it is stale.
    expect(answer(state, first, 6, true)).toBe(true);
    const paused = structuredClone(state);
    expect(answer(state, first, 7, true)).toBe(false);
    expect(state).toEqual(paused);
  });

  test('a coordinator set to send more at once (a test of an API without a limit) awaits no answer before that many', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.sendsAtOnce = 80;
    burst(state, 80, 0);
    const round = planRound(state, 0);
    expect(slotsOf(round)).toHaveLength(80);
    expect(round.grants.some((grant) => grant.tellAnswer)).toBe(false);
  });

  test('a refusal from a send among the first of a window pauses the project too', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    burst(state, 3, 0);
    const [first] = slotsOf(planRound(state, 0)) as [TurnGrant];
    expect(first.tellAnswer).toBeUndefined();
    expect(answer(state, first, 50, true)).toBe(true);
    enter(state, request('late', 'job-late'), 60);
    expect(slotsOf(planRound(state, 60))).toEqual([]);
  });
});

test('no check-in sets the budget: a forged defaultLimit is dropped by the check and the limit stays', () => {
  const state = emptyCoordinator('p', 2, HOUR);
  for (const [workflowId, defaultLimit] of [
    ['a', 1],
    ['b', 2_778],
    ['c', 2_778],
  ] as const) {
    const checked = checkEnterRequest({ ...request(workflowId, `job-${workflowId}`), defaultLimit });
    if (typeof checked === 'string') throw new Error(checked);
    expect(checked).not.toHaveProperty('defaultLimit');
    enter(state, checked, 0);
  }
  expect(limitOf(state)).toBe(2);
  expect(planRound(state, 0).grants.filter((grant) => grant.slot !== null)).toHaveLength(2);
});

test('a follow-up is confirmed once: its lane entry under the same ticket stands for it, nothing else does', () => {
  const state = emptyCoordinator('p', 80, HOUR);
  const a = request('a', 'job-a');
  expect(isConfirmed(state, a)).toBe(false);
  enter(state, a, 0);
  expect(isConfirmed(state, a)).toBe(true);
  // Another chain under the same id, the same follow-up named for another job, a name never seen: described again.
  expect(isConfirmed(state, { ...a, ticket: 'another-chain' })).toBe(false);
  expect(isConfirmed(state, { ...a, jobId: 'job-other' })).toBe(false);
  expect(isConfirmed(state, { ...a, workflowId: 'ghost' })).toBe(false);
  // Waiting behind a holder counts too; leaving ends it.
  const b = request('b', 'job-a');
  enter(state, b, 0);
  planRound(state, 0);
  expect(isConfirmed(state, b)).toBe(true);
  leave(state, 'a', a.ticket);
  expect(isConfirmed(state, a)).toBe(false);
});

test("a leave with a wrong ticket changes nothing; the holder's own ticket releases the job", () => {
  const state = emptyCoordinator('p', 80, HOUR);
  enter(state, request('a', 'job-a'), 0);
  enter(state, request('b', 'job-a'), 0);
  planRound(state, 0);
  expect(leave(state, 'a', 'wrong')).toBe('unknown');
  expect(viewOf(state, 0).lanes).toEqual([{ jobId: 'job-a', holder: 'a', waiting: ['b'] }]);
  expect(leave(state, 'a', 't-a')).toBe('released');
  expect(planRound(state, 0).grants.map((grant) => grant.workflowId)).toEqual(['b']);
});

test("the workers' default reaches a coordinator per window; what is not a budget changes nothing", () => {
  expect(defaultLimitFrom(80, HOUR)).toBe(80);
  expect(defaultLimitFrom(perHourOf(80, 30_000), 30_000)).toBe(80);
  for (const bad of [0, 0.5, Number.NaN, Number.POSITIVE_INFINITY, '80', null, undefined])
    expect(defaultLimitFrom(bad, HOUR)).toBeNull();
  expect(perWindow(1, 10_000)).toBe(1);
});

describe("a job's lane: one follow-up at a time, the others in arrival order", () => {
  test('the first gets the job; the next wait in arrival order and are told their place, then told again as it changes', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    for (const id of ['a', 'b', 'c']) enter(state, request(id, 'j'), 0);
    const first = planRound(state, 0);
    expect(first.grants.map((grant) => grant.workflowId)).toEqual(['a']);
    expect(first.notices).toEqual([
      { workflowId: 'b', ticket: 't-b', notice: { reason: 'lane', jobId: 'j', ahead: 1, said: { atMs: 0, n: 1 } } },
      { workflowId: 'c', ticket: 't-c', notice: { reason: 'lane', jobId: 'j', ahead: 2, said: { atMs: 0, n: 2 } } },
    ]);
    expect(planRound(state, 1).notices).toEqual([]);
    leave(state, 'a');
    const second = planRound(state, 2);
    expect(second.grants.map((grant) => grant.workflowId)).toEqual(['b']);
    expect(second.notices).toEqual([
      { workflowId: 'c', ticket: 't-c', notice: { reason: 'lane', jobId: 'j', ahead: 1, said: { atMs: 2, n: 3 } } },
    ]);
  });

  test('a follow-up that waited past its own deadline loses its place; the deadline is a wake-up time', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j'), 0);
    enter(state, request('b', 'j', 'b#1', 5_000), 0);
    enter(state, request('c', 'j'), 0);
    expect(planRound(state, 0).wakeAtMs).toBe(5_000);
    leave(state, 'a');
    expect(planRound(state, 6_000).grants.map((grant) => grant.workflowId)).toEqual(['c']);
  });

  test('a re-run under the same workflow id keeps the place of the run before it', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j'), 0);
    enter(state, request('b', 'j'), 0);
    planRound(state, 0);
    enter(state, request('a', 'j', 'run2#1'), 1);
    enter(state, request('b', 'j', 'run2#1'), 1);
    const next = planRound(state, 1);
    expect(next.grants).toEqual([{ workflowId: 'a', ticket: 't-a', slot: 'run2#1', sendByMs: 1 + sendLeaseMs(HOUR) }]);
    expect(viewOf(state, 1).lanes).toEqual([{ jobId: 'j', holder: 'a', waiting: ['b'] }]);
  });

  test('a re-run whose message an earlier run delivered gets the job without a slot', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j', null), 0);
    expect(planRound(state, 0).grants).toEqual([{ workflowId: 'a', ticket: 't-a', slot: null, sendByMs: null }]);
    expect(sentInWindow(state, 0)).toBe(0);
  });

  test("a follow-up's standing says what its turn signal says: the job and its slot once scheduled, nothing while it waits", () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    enter(state, request('a', 'j'), 0);
    enter(state, request('b', 'j'), 0);
    enter(state, request('c', 'k'), 0);
    expect(standingOf(state, 'a', 'a#1')).toBeNull();
    const { grants } = planRound(state, 0);
    // Each standing equals the grant signalled: a has the job and the project's only slot, c the job without a slot.
    for (const grant of grants) expect(standingOf(state, grant.workflowId, `${grant.workflowId}#1`)).toEqual(grant);
    expect(grants.map((grant) => [grant.workflowId, grant.slot])).toEqual([
      ['a', 'a#1'],
      ['c', null],
    ]);
    expect(standingOf(state, 'b', 'b#1')).toBeNull();
    // Another attempt's key: the turn, without a slot.
    expect(standingOf(state, 'a', 'a#2')).toEqual({ workflowId: 'a', ticket: 't-a', slot: null, sendByMs: null });
    leave(state, 'a');
    expect(standingOf(state, 'a', 'a#1')).toBeNull();
  });

  test('holders are checked when others wait behind them, and when they outstay their own deadline', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j', 'a#1', 10 * 60_000), 0);
    planRound(state, 0);
    expect(holdersToCheck(state, 4 * 60_000)).toEqual([]);
    expect(holdersToCheck(state, 11 * 60_000 + 1)).toEqual(['a']);
    enter(state, request('x', 'k'), 0);
    enter(state, request('y', 'k'), 0);
    planRound(state, 0);
    expect(holdersToCheck(state, 5 * 60_000)).toEqual(['x']);
  });
});

test('coordinator ids have a space of their own that no project id can fall outside of', () => {
  expect(coordinatorWorkflowId('acme')).toBe('agent-followup-project/acme');
  expect(isCoordinatorWorkflowId('agent-followup-project/acme')).toBe(true);
  expect(isCoordinatorWorkflowId('followup/acme/job/abc')).toBe(false);
});
