import {
  admitAsk,
  ASKED_READ_GAP,
  beginRead,
  NO_ASKED_READS,
  type AskedReads,
} from '../../src/workflows/follow-up/asked-reads';

/** Admits an ask, failing the test if it was refused. */
function admitted(state: AskedReads, nowMs: number): AskedReads {
  const next = admitAsk(state, nowMs);
  if (next === null) throw new Error(`ask at ${nowMs} refused`);
  return next;
}

test('a first ask is due at once', () => {
  expect(admitted(NO_ASKED_READS, 1_000).dueAtMs).toBe(1_000);
});

test('an ask while a read is due is covered by it (refused: nothing changes)', () => {
  const due = admitted(NO_ASKED_READS, 1_000);
  expect(admitAsk(due, 1_001)).toBeNull();
  expect(admitAsk(due, 9_999_999)).toBeNull();
});

test('every admitted ask is due no earlier than itself: the read it gets begins after it', () => {
  let state = NO_ASKED_READS;
  for (let nowMs = 0; nowMs < 600_000; nowMs += 700) {
    const next = admitAsk(state, nowMs);
    if (next) {
      expect(next.dueAtMs).toBeGreaterThanOrEqual(nowMs);
      state = next;
    }
    if (state.dueAtMs !== null && state.dueAtMs <= nowMs) state = beginRead(state, nowMs);
  }
});

test('a stream of asks gets reads spaced 5 s, 10 s, 20 s, 40 s, then 60 s apart', () => {
  let state = NO_ASKED_READS;
  const begun: number[] = [];
  // An ask every 100 ms for five minutes; each read begins when it is due.
  for (let nowMs = 0; nowMs <= 300_000; nowMs += 100) {
    if (state.dueAtMs !== null && state.dueAtMs <= nowMs) {
      state = beginRead(state, nowMs);
      begun.push(nowMs);
    }
    state = admitAsk(state, nowMs) ?? state;
  }
  const gaps = begun.slice(1).map((at, index) => at - (begun[index] as number));
  expect(gaps.slice(0, 5)).toEqual([5_000, 10_000, 20_000, 40_000, 60_000]);
  expect(new Set(gaps.slice(4))).toEqual(new Set([ASKED_READ_GAP.maxMs]));
  // 3,001 asks, 8 reads.
  expect(begun).toHaveLength(8);
});

test('after a quiet spell of twice the gap an ask is due at once again, and the gap starts over', () => {
  let state = beginRead(admitted(NO_ASKED_READS, 0), 0);
  state = admitted(state, 1_000);
  expect(state.dueAtMs).toBe(5_000);
  state = beginRead(state, 5_000);
  // The gap is now 10 s: quiet for 20 s.
  state = admitted(state, 25_000);
  expect(state.dueAtMs).toBe(25_000);
  expect(state.gapMs).toBe(ASKED_READ_GAP.firstMs);
});

test('an ask one gap or more after the last read, within the quiet spell, is due at once and still doubles the gap', () => {
  let state = beginRead(admitted(NO_ASKED_READS, 0), 0);
  state = admitted(state, 7_000);
  expect(state.dueAtMs).toBe(7_000);
  expect(state.gapMs).toBe(10_000);
});
