import {
  checkEnterRequest,
  checkLeave,
  checkNotice,
  checkStanding,
  checkSlotOutcome,
  checkSetBudget,
  checkTurn,
  MAX_BEFORE,
  SAID_AHEAD_MS,
} from '../../src/coordinator/coordinator-messages';

const valid = {
  workflowId: 'f',
  ticket: 't',
  jobId: 'j',
  startedAtMs: 1,
  before: [],
  deadlineMs: 2,
  slotFor: 'r#1',
};

describe('a coordinator takes a check-in only when every field is what it must be', () => {
  test('a well-formed check-in passes, keeping only the fields it knows', () => {
    expect(checkEnterRequest({ ...valid, extra: 'x'.repeat(10) })).toEqual(valid);
    // A check-in's `defaultLimit` (once the project's budget) is dropped: no check-in sets the budget.
    expect(checkEnterRequest({ ...valid, defaultLimit: 2_778 })).toEqual(valid);
    expect(checkEnterRequest({ ...valid, slotFor: null })).toEqual({ ...valid, slotFor: null });
  });

  test.each([
    ['garbage', 'hello'],
    ['null', null],
    ["a coordinator's id as the follow-up", { ...valid, workflowId: 'agent-followup-project/p' }],
    ['no ticket', { ...valid, ticket: undefined }],
    ['a start time that is not a number', { ...valid, startedAtMs: '1' }],
    [
      'too many earlier follow-ups',
      { ...valid, before: Array.from({ length: MAX_BEFORE + 1 }, (_, index) => `f${index}`) },
    ],
    ['an earlier follow-up that is not an id', { ...valid, before: [3] }],
    ['an infinite deadline', { ...valid, deadlineMs: Number.POSITIVE_INFINITY }],
  ])('%s is refused with what is wrong', (_, value) => {
    expect(typeof checkEnterRequest(value)).toBe('string');
  });
});

test('a leave takes the follow-up and its ticket, always: without one it is refused', () => {
  expect(checkLeave({ workflowId: 'f', ticket: 't' })).toEqual({ workflowId: 'f', ticket: 't' });
  for (const bad of [null, 'f', { workflowId: 'f' }, { workflowId: 3, ticket: 't' }, { workflowId: 'f', ticket: 4 }])
    expect(checkLeave(bad)).toBeNull();
  expect(checkLeave({ workflowId: 'f', ticket: '' })).toBeNull();
});

describe("setBudget is held to the CLI's rule in the workflow", () => {
  test("a whole number up to the vendor's 100, null, or more with the allow flag carried in the signal", () => {
    expect(checkSetBudget({ sendsPerHour: 10 })).toEqual({ sendsPerHour: 10 });
    expect(checkSetBudget({ sendsPerHour: 100 })).toEqual({ sendsPerHour: 100 });
    expect(checkSetBudget({ sendsPerHour: null })).toEqual({ sendsPerHour: null });
    expect(checkSetBudget({ sendsPerHour: 500, aboveVendorLimit: true })).toEqual({
      sendsPerHour: 500,
      aboveVendorLimit: true,
    });
  });

  test.each([
    ['garbage', null],
    ['no figure', {}],
    ['zero', { sendsPerHour: 0 }],
    ['NaN', { sendsPerHour: Number.NaN }],
    ['a string', { sendsPerHour: '10' }],
    ['a fraction', { sendsPerHour: 1.5 }],
    ['1e12 without the allow flag', { sendsPerHour: 1e12 }],
    ['101 without the allow flag', { sendsPerHour: 101 }],
    ['an allow flag that is not true', { sendsPerHour: 500, aboveVendorLimit: 'yes' }],
    ['1e12 even with the allow flag (not a safe whole number)', { sendsPerHour: 1e17, aboveVendorLimit: true }],
  ])('%s is refused with what is wrong', (_, value) => {
    const checked = checkSetBudget(value);
    expect(typeof checked).toBe('string');
  });

  test('the refusal says what is wrong and how to fix it', () => {
    expect(checkSetBudget({ sendsPerHour: 1e12 })).toMatch(
      /above the vendor's documented limit of 100.*aboveVendorLimit: true/,
    );
    expect(checkSetBudget({ sendsPerHour: 1.5 })).toMatch(/whole number of at least 1/);
  });
});

test('slotOutcome takes the ticket, a slot, what became of it, and a Retry-After only with a 429', () => {
  const refused = { workflowId: 'f', ticket: 'run.seal', slot: 'r#1', outcome: 'refused', retryAfterMs: 5_000 };
  expect(checkSlotOutcome(refused)).toEqual(refused);
  for (const outcome of ['accepted', 'unsent'])
    expect(checkSlotOutcome({ ...refused, outcome, retryAfterMs: null })).toEqual({
      ...refused,
      outcome,
      retryAfterMs: null,
    });
  for (const bad of [
    null,
    { workflowId: 'f' },
    { ...refused, ticket: undefined },
    { ...refused, ticket: '' },
    { ...refused, slot: '' },
    { ...refused, outcome: 'yes' },
    { ...refused, outcome: true },
    { ...refused, retryAfterMs: -1 },
    { ...refused, retryAfterMs: undefined },
    { ...refused, outcome: 'accepted' },
    { ...refused, outcome: 'unsent' },
  ])
    expect(checkSlotOutcome(bad)).toBeNull();
});

describe("a follow-up takes a grant or notice only with its check-in's ticket", () => {
  const tickets = new Set(['t']);
  test('its own turn passes; another run (another ticket) or a broken slot does not', () => {
    expect(checkTurn({ workflowId: 'f', ticket: 't', slot: 'r#1', sendByMs: 5 }, 'f', tickets)).toEqual({
      workflowId: 'f',
      ticket: 't',
      slot: 'r#1',
      sendByMs: 5,
    });
    expect(
      checkTurn({ workflowId: 'f', ticket: 't', slot: 'r#1', sendByMs: 5, tellAnswer: true }, 'f', tickets),
    ).toEqual({ workflowId: 'f', ticket: 't', slot: 'r#1', sendByMs: 5, tellAnswer: true });
    expect(
      checkTurn({ workflowId: 'f', ticket: 't', slot: 'r#1', sendByMs: 5, tellAnswer: 1 }, 'f', tickets),
    ).toBeNull();
    expect(checkTurn({ workflowId: 'f', ticket: 't', slot: null, sendByMs: null }, 'f', tickets)).not.toBeNull();
    expect(checkTurn({ workflowId: 'f', ticket: 'other-run', slot: null, sendByMs: null }, 'f', tickets)).toBeNull();
    expect(checkTurn({ workflowId: 'f', ticket: 't', slot: 'r#1', sendByMs: null }, 'f', tickets)).toBeNull();
    expect(checkTurn('garbage', 'f', tickets)).toBeNull();
  });

  test('a notice passes with its ticket and a known shape only', () => {
    const said = { atMs: 5, n: 1 };
    expect(checkNotice({ reason: 'lane', jobId: 'j', ahead: 2, said }, 't', tickets, 5)).toEqual({
      reason: 'lane',
      jobId: 'j',
      ahead: 2,
      said,
    });
    // Without a well-formed time of saying, a notice cannot be ordered against the others: it is not taken.
    expect(checkNotice({ reason: 'lane', jobId: 'j', ahead: 2 }, 't', tickets, 5)).toBeNull();
    expect(checkNotice({ reason: 'lane', jobId: 'j', ahead: 2, said: { atMs: 5, n: 0 } }, 't', tickets, 5)).toBeNull();
    expect(checkNotice({ reason: 'lane', jobId: 'j', ahead: 2, said: { atMs: -1, n: 1 } }, 't', tickets, 5)).toBeNull();
    expect(checkNotice({ reason: 'lane', jobId: 'j', ahead: 2, said: '5' }, 't', tickets, 5)).toBeNull();
    // Said a little after the follow-up's clock (a check-in's answer, said inside the task that reads it): taken. Said
    // far past it: forged, and refused, or it would hide every true notice until then.
    const later = { reason: 'lane', jobId: 'j', ahead: 2, said: { atMs: 5 + SAID_AHEAD_MS, n: 1 } };
    expect(checkNotice(later, 't', tickets, 5)).toEqual(later);
    expect(checkNotice({ ...later, said: { atMs: 6 + SAID_AHEAD_MS, n: 1 } }, 't', tickets, 5)).toBeNull();
    const budget = {
      reason: 'budget',
      sentInWindow: 80,
      limit: 80,
      windowMs: 3_600_000,
      nextSlotAtMs: null,
      ahead: 0,
      said,
    };
    expect(checkNotice(budget, 't', tickets, 5)).toEqual(budget);
    expect(checkNotice(budget, 'x', tickets, 5)).toBeNull();
    expect(checkNotice({ ...budget, ahead: -1 }, 't', tickets, 5)).toBeNull();
    expect(checkNotice({ ...budget, refusedSinceMs: 7 }, 't', tickets, 5)).toEqual({ ...budget, refusedSinceMs: 7 });
    expect(checkNotice({ ...budget, refusedSinceMs: 'then' }, 't', tickets, 5)).toBeNull();
    expect(checkNotice({ reason: 'other' }, 't', tickets, 5)).toBeNull();
  });

  test("a standing carries a turn or a notice under one ticket of the follow-up's own; anything else is refused whole", () => {
    const turn = { workflowId: 'f', ticket: 't', slot: 'r#1', sendByMs: 5 };
    const notice = { reason: 'lane', jobId: 'j', ahead: 2, said: { atMs: 5, n: 1 } };
    expect(checkStanding({ ticket: 't', standing: turn, notice: null }, 'f', tickets, 5)).toEqual({
      standing: turn,
      notice: null,
    });
    expect(checkStanding({ ticket: 't', standing: null, notice }, 'f', tickets, 5)).toEqual({
      standing: null,
      notice,
    });
    expect(checkStanding({ ticket: 't', standing: turn, notice }, 'f', tickets, 5)).toEqual({ standing: turn, notice });
    // Another ticket outside, or inside the turn; nothing said; a part missing or broken: nothing is taken.
    const twoTickets = new Set(['t', 'u']);
    expect(checkStanding({ ticket: 'u', standing: turn, notice: null }, 'f', twoTickets, 5)).toBeNull();
    expect(checkStanding({ ticket: 'x', standing: null, notice }, 'f', tickets, 5)).toBeNull();
    expect(checkStanding({ ticket: 't', standing: null, notice: null }, 'f', tickets, 5)).toBeNull();
    expect(checkStanding({ ticket: 't', standing: turn }, 'f', tickets, 5)).toBeNull();
    expect(
      checkStanding({ ticket: 't', standing: turn, notice: { ...notice, ahead: -1 } }, 'f', tickets, 5),
    ).toBeNull();
    expect(checkStanding({ ticket: 't', standing: { ...turn, sendByMs: null }, notice }, 'f', tickets, 5)).toBeNull();
    expect(checkStanding('garbage', 'f', tickets, 5)).toBeNull();
    expect(checkStanding(null, 'f', tickets, 5)).toBeNull();
  });
});
