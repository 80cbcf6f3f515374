import { coordinatorWorkflowId, isCoordinatorWorkflowId } from '../../src/follow-up/coordinator-id';
import {
  ARRIVAL_MARGIN_MS,
  emptyCoordinator,
  enter,
  holdersToCheck,
  isIdle,
  isSlotKeyOfRun,
  leave,
  nextSlotAtMs,
  recheckAfterMs,
  returnSlot,
  schedule,
  sendLeaseMs,
  sentInWindow,
  slotKey,
  standingOf,
  viewOf,
  type CoordinatorState,
  type EnterRequest,
} from '../../src/follow-up/project-coordination';

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
  defaultLimit: 80,
});

function burst(state: CoordinatorState, count: number, nowMs: number): void {
  for (let index = 0; index < count; index += 1) enter(state, request(`f${index}`, `job-${index}`), nowMs);
}

describe("a project's send budget counts the way the vendor does: at most N in any rolling hour", () => {
  test('a burst up to the budget is granted at once, together with each job', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    burst(state, 20, 0);
    const { grants, notices } = schedule(state, 0);
    expect(grants).toHaveLength(20);
    expect(grants.every((grant) => grant.sendByMs === sendLeaseMs(HOUR))).toBe(true);
    expect(notices).toEqual([]);
    expect(sentInWindow(state, 0)).toBe(20);
  });

  test('past the budget the rest wait, each told how full the window is and when its slot comes; a slot frees when its send leaves the window', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    burst(state, 150, 0);
    const first = schedule(state, 0);
    // Every job is handed over at once; 80 come with a slot, 70 hold their job and wait for one.
    expect(first.grants).toHaveLength(150);
    expect(first.grants.filter((grant) => grant.slot !== null)).toHaveLength(80);
    expect(first.notices).toHaveLength(70);
    expect(first.notices[0]?.notice).toEqual({
      reason: 'budget',
      sentInWindow: 80,
      limit: 80,
      windowMs: HOUR,
      nextSlotAtMs: sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR,
      ahead: 0,
    });
    expect(first.notices[69]?.notice).toMatchObject({ ahead: 69 });
    expect(first.wakeAtMs).toBe(sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR);
    // Nothing frees before the oldest send has been counted for a whole hour.
    expect(schedule(state, HOUR).grants).toHaveLength(0);
    const second = schedule(state, sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR);
    expect(second.grants).toHaveLength(70);
    expect(second.grants[0]?.workflowId).toBe('f80');
  });

  test('a slot given back (no request left under it) does not count; one sent under counts for the whole window', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 2;
    burst(state, 3, 0);
    schedule(state, 0);
    expect(nextSlotAtMs(state, 0)).toBe(sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR);
    expect(returnSlot(state, 'f0', 'f0#1')).toBe(true);
    expect(schedule(state, 1).grants.map((grant) => grant.workflowId)).toEqual(['f2']);
  });

  test('a repeated ask for a granted attempt is answered with that grant: no second slot and no refund; the next attempt gets a slot of its own', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j'), 0);
    schedule(state, 0);
    enter(state, request('a', 'j'), 1);
    expect(schedule(state, 1).grants).toEqual([]);
    expect(standingOf(state, 'a', 'a#1')).toEqual({
      workflowId: 'a',
      ticket: 't-a',
      slot: 'a#1',
      sendByMs: sendLeaseMs(HOUR),
    });
    expect(sentInWindow(state, 1)).toBe(1);
    expect(state.totals).toMatchObject({ granted: 1, returned: 0 });
    enter(state, request('a', 'j', 'a#2'), 2);
    expect(schedule(state, 2).grants).toEqual([
      { workflowId: 'a', ticket: 't-a', slot: 'a#2', sendByMs: 2 + sendLeaseMs(HOUR) },
    ]);
    expect(sentInWindow(state, 2)).toBe(2);
  });

  test('a check-in that crosses its own grant does not free the slot for anyone else: the window never holds one more than the budget', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    // b was started first but checks in after a took the only slot; a's grant is on its way when a checks in again.
    enter(state, { ...request('a', 'ja'), startedAtMs: 2 }, 0);
    schedule(state, 0);
    enter(state, { ...request('b', 'jb'), startedAtMs: 1 }, 1);
    schedule(state, 1);
    enter(state, { ...request('a', 'ja'), startedAtMs: 2 }, 2);
    expect(schedule(state, 2).grants).toEqual([]);
    expect(sentInWindow(state, 2)).toBe(1);
    expect(viewOf(state, 2).waitingForBudget).toEqual(['b']);
  });

  test('a slot counts from a little after its lease ends, since a request that leaves at the last moment arrives later', () => {
    const state = emptyCoordinator('p', 80, 10_000);
    state.limitOverride = 1;
    burst(state, 2, 0);
    const [grant] = schedule(state, 0).grants;
    expect(grant?.sendByMs).toBe(sendLeaseMs(10_000));
    expect(nextSlotAtMs(state, 0)).toBe(sendLeaseMs(10_000) + ARRIVAL_MARGIN_MS + 10_000);
  });

  test('a late repeat of an attempt the follow-up has given up on does not replace its newer request', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    enter(state, request('x', 'other'), 0);
    enter(state, request('a', 'j', 'run#1'), 0);
    schedule(state, 0);
    enter(state, request('a', 'j', 'run#2'), 1);
    enter(state, request('a', 'j', 'run#1'), 2);
    const later = schedule(state, sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR);
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
    const rounds = [];
    for (let round = schedule(state, 0, 50); ; round = schedule(state, 0, 50)) {
      rounds.push(round);
      expect(round.grants.length + round.notices.length).toBeLessThanOrEqual(50);
      if (!round.more) break;
    }
    expect(rounds.length).toBeGreaterThan(1);
    const grants = rounds.flatMap((round) => round.grants);
    const notices = rounds.flatMap((round) => round.notices);
    // Everything one unbounded round would have said, and no more: a job each, 80 slots in arrival order, 70 told why.
    expect(new Set(grants.map((grant) => grant.workflowId)).size).toBe(150);
    expect(grants.filter((grant) => grant.slot !== null).map((grant) => grant.workflowId)).toEqual(
      Array.from({ length: 80 }, (_, index) => `f${index}`),
    );
    expect(notices.filter(({ notice }) => notice.reason === 'budget').map(({ workflowId }) => workflowId)).toEqual(
      Array.from({ length: 70 }, (_, index) => `f${index + 80}`),
    );
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
    expect(schedule(state, 0).grants.filter((grant) => grant.slot !== null)).toHaveLength(1);
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
    schedule(state, 0);
    leave(state, 'a');
    expect(isIdle(state, HOUR)).toBe(false);
    expect(isIdle(state, HOUR + sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS)).toBe(true);
  });
});

test("the workers' default comes with each check-in: the latest one counts", () => {
  const state = emptyCoordinator('p', 80, HOUR);
  enter(state, { ...request('a', 'j'), defaultLimit: 1 }, 0);
  enter(state, { ...request('b', 'k'), defaultLimit: 1 }, 0);
  expect(schedule(state, 0).grants.filter((grant) => grant.slot !== null)).toHaveLength(1);
});

describe("a job's lane: one follow-up at a time, the others in arrival order", () => {
  test('the first gets the job; the next wait in arrival order and are told their place, then told again as it changes', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    for (const id of ['a', 'b', 'c']) enter(state, request(id, 'j'), 0);
    const first = schedule(state, 0);
    expect(first.grants.map((grant) => grant.workflowId)).toEqual(['a']);
    expect(first.notices).toEqual([
      { workflowId: 'b', ticket: 't-b', notice: { reason: 'lane', jobId: 'j', ahead: 1 } },
      { workflowId: 'c', ticket: 't-c', notice: { reason: 'lane', jobId: 'j', ahead: 2 } },
    ]);
    expect(schedule(state, 1).notices).toEqual([]);
    leave(state, 'a');
    const second = schedule(state, 2);
    expect(second.grants.map((grant) => grant.workflowId)).toEqual(['b']);
    expect(second.notices).toEqual([
      { workflowId: 'c', ticket: 't-c', notice: { reason: 'lane', jobId: 'j', ahead: 1 } },
    ]);
  });

  test('a follow-up that waited past its own deadline loses its place; the deadline is a wake-up time', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j'), 0);
    enter(state, request('b', 'j', 'b#1', 5_000), 0);
    enter(state, request('c', 'j'), 0);
    expect(schedule(state, 0).wakeAtMs).toBe(5_000);
    leave(state, 'a');
    expect(schedule(state, 6_000).grants.map((grant) => grant.workflowId)).toEqual(['c']);
  });

  test('a re-run under the same workflow id keeps the place of the run before it', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j'), 0);
    enter(state, request('b', 'j'), 0);
    schedule(state, 0);
    enter(state, request('a', 'j', 'run2#1'), 1);
    enter(state, request('b', 'j', 'run2#1'), 1);
    const next = schedule(state, 1);
    expect(next.grants).toEqual([{ workflowId: 'a', ticket: 't-a', slot: 'run2#1', sendByMs: 1 + sendLeaseMs(HOUR) }]);
    expect(viewOf(state, 1).lanes).toEqual([{ jobId: 'j', holder: 'a', waiting: ['b'] }]);
  });

  test('a re-run whose message an earlier run delivered gets the job without a slot', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j', null), 0);
    expect(schedule(state, 0).grants).toEqual([{ workflowId: 'a', ticket: 't-a', slot: null, sendByMs: null }]);
    expect(sentInWindow(state, 0)).toBe(0);
  });

  test("a follow-up's standing says what its turn signal says: the job and its slot once scheduled, nothing while it waits", () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    enter(state, request('a', 'j'), 0);
    enter(state, request('b', 'j'), 0);
    enter(state, request('c', 'k'), 0);
    expect(standingOf(state, 'a', 'a#1')).toBeNull();
    const { grants } = schedule(state, 0);
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
    schedule(state, 0);
    expect(holdersToCheck(state, 4 * 60_000)).toEqual([]);
    expect(holdersToCheck(state, 11 * 60_000 + 1)).toEqual(['a']);
    enter(state, request('x', 'k'), 0);
    enter(state, request('y', 'k'), 0);
    schedule(state, 0);
    expect(holdersToCheck(state, 5 * 60_000)).toEqual(['x']);
  });
});

test('coordinator ids have a space of their own that no project id can fall outside of', () => {
  expect(coordinatorWorkflowId('acme')).toBe('agent-followup-project/acme');
  expect(isCoordinatorWorkflowId('agent-followup-project/acme')).toBe(true);
  expect(isCoordinatorWorkflowId('followup/acme/job/abc')).toBe(false);
});
