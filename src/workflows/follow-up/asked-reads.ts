/**
 * Reads asked for from outside (`pollNow`), as a follow-up admits them (pure: workflow code imports it). Every ask is
 * followed by a read that begins after it, so a caller who knows the job changed never goes unheard; but asks that
 * come while a read is still due are the same ask, and a stream of asks is answered by reads spaced further apart the
 * longer it goes on, so a webhook relay calling per event costs a follow-up a few reads and history events, not one
 * per call.
 */

/** The gap between reads asked for: the first one is made at once, a following one this long after, doubling. */
export const ASKED_READ_GAP = { firstMs: 5_000, maxMs: 60_000 } as const;

export interface AskedReads {
  /** When the read asked for and not yet begun is due (null: none is due). */
  dueAtMs: number | null;
  /** When the last read asked for began (null: none yet). */
  lastBegunAtMs: number | null;
  /** The gap the next read asked for keeps from the last one, while asks keep coming. */
  gapMs: number;
}

export const NO_ASKED_READS: AskedReads = { dueAtMs: null, lastBegunAtMs: null, gapMs: ASKED_READ_GAP.firstMs };

/**
 * An ask, admitted when no read is due yet (else the due one covers it: `null`). After a quiet spell (twice the gap
 * since the last read asked for) the read is due at once and the gap starts again from the first; while asks keep
 * coming it is due one gap after the last, and the gap doubles for the next, up to its cap.
 */
export function admitAsk(state: AskedReads, nowMs: number): AskedReads | null {
  if (state.dueAtMs !== null) return null;
  if (state.lastBegunAtMs === null || nowMs - state.lastBegunAtMs >= state.gapMs * 2) {
    return { ...state, dueAtMs: nowMs, gapMs: ASKED_READ_GAP.firstMs };
  }
  return {
    ...state,
    dueAtMs: Math.max(nowMs, state.lastBegunAtMs + state.gapMs),
    gapMs: Math.min(state.gapMs * 2, ASKED_READ_GAP.maxMs),
  };
}

/** The read that was due begins now. */
export function beginRead(state: AskedReads, nowMs: number): AskedReads {
  return { ...state, dueAtMs: null, lastBegunAtMs: nowMs };
}
