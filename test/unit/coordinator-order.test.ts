import {
  ARRIVAL_MARGIN_MS,
  AWAITED_CHECK,
  awaitedToCheck,
  emptyCoordinator,
  enter,
  forgetAwaited,
  grantAtCheckIn,
  leave,
  markAwaitedChecked,
  noticeAtCheckIn,
  returnSlot,
  planRound,
  sendLeaseMs,
  sentInWindow,
  standingOf,
  viewOf,
  type EnterRequest,
} from '../../src/coordinator/project-coordination';

const HOUR = 3_600_000;
const request = (workflowId: string, jobId: string, startedAtMs: number, before: string[] = []): EnterRequest => ({
  workflowId,
  ticket: `t-${workflowId}`,
  jobId,
  startedAtMs,
  before,
  deadlineMs: 10 * HOUR,
  slotFor: `${workflowId}#1`,
});

describe('a job is handed to its follow-ups in the order the server started them', () => {
  test('one started earlier that checks in later waits ahead of those started after it', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j', 1), 0);
    planRound(state, 0);
    enter(state, request('d', 'j', 4), 1);
    enter(state, request('c', 'j', 3), 2);
    enter(state, request('b', 'j', 2), 3);
    expect(viewOf(state, 3).lanes).toEqual([{ jobId: 'j', holder: 'a', waiting: ['b', 'c', 'd'] }]);
  });

  test('a follow-up waits for the earlier ones its check-in named until they check in, then goes after them', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('late', 'j', 5, ['early']), 0);
    grantAtCheckIn(state, 'late', 'j', 0);
    expect(standingOf(state, 'late', 'late#1')).toBeNull();
    expect(planRound(state, 0).grants).toEqual([]);
    enter(state, request('early', 'j', 1), 1);
    grantAtCheckIn(state, 'early', 'j', 1);
    expect(standingOf(state, 'early', 'early#1')).toEqual({
      workflowId: 'early',
      ticket: 't-early',
      slot: 'early#1',
      sendByMs: 1 + sendLeaseMs(HOUR),
    });
    leave(state, 'early', 't-early');
    expect(planRound(state, 2).grants.map((grant) => grant.workflowId)).toEqual(['late']);
  });

  test('an awaited follow-up that never checks in is asked after, and forgotten once it no longer runs', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('late', 'j', 5, ['gone', 'slow']), 0);
    expect(awaitedToCheck(state, 0)).toEqual([]);
    expect(awaitedToCheck(state, AWAITED_CHECK.firstMs)).toEqual(['gone', 'slow']);
    forgetAwaited(state, 'gone');
    markAwaitedChecked(state, 'slow', AWAITED_CHECK.firstMs);
    expect(awaitedToCheck(state, AWAITED_CHECK.firstMs + 1)).toEqual([]);
    expect(planRound(state, AWAITED_CHECK.firstMs + 1).grants).toEqual([]);
    forgetAwaited(state, 'slow');
    expect(planRound(state, AWAITED_CHECK.firstMs + 2).grants.map((grant) => grant.workflowId)).toEqual(['late']);
  });

  test('earlier follow-ups the lane has already served are not awaited', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j', 1), 0);
    enter(state, request('b', 'j', 2), 0);
    planRound(state, 0);
    leave(state, 'a', 't-a');
    planRound(state, 1);
    enter(state, request('c', 'j', 3, ['a', 'b']), 1);
    expect(viewOf(state, 1).lanes).toEqual([{ jobId: 'j', holder: 'b', waiting: ['c'] }]);
    expect(awaitedToCheck(state, AWAITED_CHECK.firstMs + 1)).toEqual([]);
    leave(state, 'b', 't-b');
    expect(planRound(state, 2).grants.map((grant) => grant.workflowId)).toEqual(['c']);
  });

  test('a slot asked again after its lease was lost keeps its place before follow-ups started later', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    for (const [index, id] of ['a', 'b', 'c'].entries()) enter(state, request(id, id, index + 1), 0);
    planRound(state, 0);
    // a's lease ran out before its request left: it gives the slot back and asks again.
    returnSlot(state, 'a', 't-a', 'a#1');
    enter(state, { ...request('a', 'a', 1), slotFor: 'a#2' }, 1);
    expect(planRound(state, 1).grants).toEqual([
      { workflowId: 'a', ticket: 't-a', slot: 'a#2', sendByMs: 1 + sendLeaseMs(HOUR) },
    ]);
  });
});

describe('a check-in takes at once what it may have without passing anyone', () => {
  test('a free job and a free slot ride on the answer, and are not signalled again', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j', 1), 0);
    grantAtCheckIn(state, 'a', 'j', 0);
    expect(standingOf(state, 'a', 'a#1')).toMatchObject({ slot: 'a#1' });
    expect(noticeAtCheckIn(state, 'a', 'j', 0)).toBeNull();
    expect(planRound(state, 0)).toMatchObject({ grants: [], notices: [] });
  });

  test('behind a holder it is told its place in the answer, and that notice is not signalled again', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j', 1), 0);
    grantAtCheckIn(state, 'a', 'j', 0);
    enter(state, request('b', 'j', 2), 1);
    grantAtCheckIn(state, 'b', 'j', 1);
    expect(standingOf(state, 'b', 'b#1')).toBeNull();
    expect(noticeAtCheckIn(state, 'b', 'j', 1)).toEqual({
      reason: 'lane',
      jobId: 'j',
      ahead: 1,
      said: { atMs: 1, n: 1 },
    });
    expect(planRound(state, 1).notices).toEqual([]);
  });

  test('with the window full it holds the job and is told when its slot comes', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    enter(state, request('a', 'j', 1), 0);
    grantAtCheckIn(state, 'a', 'j', 0);
    enter(state, request('b', 'k', 2), 1);
    grantAtCheckIn(state, 'b', 'k', 1);
    expect(standingOf(state, 'b', 'b#1')).toEqual({ workflowId: 'b', ticket: 't-b', slot: null, sendByMs: null });
    expect(noticeAtCheckIn(state, 'b', 'k', 1)).toMatchObject({
      reason: 'budget',
      sentInWindow: 1,
      limit: 1,
      ahead: 0,
      nextSlotAtMs: sendLeaseMs(HOUR) + ARRIVAL_MARGIN_MS + HOUR,
    });
  });

  test('a slot does not pass a holder that asked before it', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    state.limitOverride = 1;
    enter(state, request('x', 'x', 1), 0);
    grantAtCheckIn(state, 'x', 'x', 0);
    enter(state, request('a', 'j', 2), 1);
    grantAtCheckIn(state, 'a', 'j', 1);
    state.slots = [];
    enter(state, request('b', 'k', 3), 2);
    grantAtCheckIn(state, 'b', 'k', 2);
    expect(standingOf(state, 'b', 'b#1')?.slot).toBeNull();
  });
});

describe('a leave changes only what its own check-in holds', () => {
  test('a leave with the ticket of an earlier run of the same workflow id is stale and changes nothing', () => {
    const state = emptyCoordinator('p', 80, HOUR);
    enter(state, request('a', 'j', 1), 0);
    enter(state, request('b', 'j', 2), 0);
    planRound(state, 0);
    expect(leave(state, 'a', 'ticket-of-an-earlier-run')).toBe('unknown');
    expect(viewOf(state, 1).lanes).toEqual([{ jobId: 'j', holder: 'a', waiting: ['b'] }]);
    expect(leave(state, 'a', 't-a')).toBe('released');
  });
});

describe('what the coordinator counts', () => {
  test('a follow-up told to wait for the budget that gets its slot at a later check-in counts as having waited, as one granted by signal does', () => {
    const state = emptyCoordinator('p', 80, 10_000);
    state.limitOverride = 1;
    enter(state, request('a', 'ja', 1), 0);
    grantAtCheckIn(state, 'a', 'ja', 0);
    enter(state, request('b', 'jb', 2), 1);
    grantAtCheckIn(state, 'b', 'jb', 1);
    expect(noticeAtCheckIn(state, 'b', 'jb', 1)).toMatchObject({ reason: 'budget' });
    const later = sendLeaseMs(10_000) + ARRIVAL_MARGIN_MS + 10_000 + 1;
    enter(state, request('b', 'jb', 2), later);
    grantAtCheckIn(state, 'b', 'jb', later);
    expect(standingOf(state, 'b', 'b#1')).toMatchObject({ slot: 'b#1' });
    expect(state.totals).toMatchObject({ granted: 2, waitedForBudget: 1 });
  });
});

describe('a grant lost with a worker is not counted', () => {
  test('asked again after it left the window, the grant is repeated with its ended lease; the follow-up gives it back and it no longer counts', () => {
    const state = emptyCoordinator('p', 10, 10_000);
    enter(state, request('a', 'j', 1), 0);
    grantAtCheckIn(state, 'a', 'j', 0);
    const later = sendLeaseMs(10_000) + ARRIVAL_MARGIN_MS + 10_000 + 1;
    planRound(state, later);
    enter(state, request('a', 'j', 1), later);
    grantAtCheckIn(state, 'a', 'j', later);
    expect(standingOf(state, 'a', 'a#1')).toMatchObject({ slot: 'a#1', sendByMs: sendLeaseMs(10_000) });
    expect(state.totals).toMatchObject({ granted: 1, returned: 0 });
    expect(returnSlot(state, 'a', 't-a', 'a#1')).toBe(true);
    expect(state.totals).toMatchObject({ granted: 1, returned: 1 });
    expect(returnSlot(state, 'a', 't-a', 'a#1')).toBe(false);
    enter(state, { ...request('a', 'j', 1), slotFor: 'a#2' }, later + 1);
    grantAtCheckIn(state, 'a', 'j', later + 1);
    expect(standingOf(state, 'a', 'a#2')).toMatchObject({ slot: 'a#2', sendByMs: later + 1 + sendLeaseMs(10_000) });
    expect(sentInWindow(state, later + 1)).toBe(1);
  });

  test('a late repeat of a key already given back changes no count', () => {
    const state = emptyCoordinator('p', 10, HOUR);
    enter(state, request('a', 'j', 1), 0);
    grantAtCheckIn(state, 'a', 'j', 0);
    returnSlot(state, 'a', 't-a', 'a#1');
    enter(state, { ...request('a', 'j', 1), slotFor: 'a#2' }, 1);
    enter(state, request('a', 'j', 1), 2);
    expect(state.totals).toMatchObject({ granted: 1, returned: 1 });
    expect(state.slotRequests.map((slot) => slot.key)).toEqual(['a#2']);
  });
});
