/**
 * A tiny seeded pseudo-random generator for the simulator's fault rates. Seeded so that a chaos run that found a bug
 * can be replayed request for request; hand-written so the simulator needs no dependency for it.
 */

/** The seed used when none is given: any fixed value works, what matters is that every run starts from the same one. */
export const DEFAULT_SEED = 0x5eed_f00d;

/** mulberry32 (Tommy Ettinger): returns a function that yields numbers in [0, 1), the same sequence for the same seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
