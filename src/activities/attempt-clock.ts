/**
 * The time an activity attempt reasons in: the worker's clock, unless the server's is ahead of it. Workflows keep time
 * by the server (a follow-up's schedule and deadline are workflow time); on Temporal's time-skipping test server that
 * time jumps hours ahead of any worker's clock while timers are skipped, and an attempt that planned its next read by
 * the worker's clock would wait those hours again. The server stamps when it scheduled the attempt; from there the
 * attempt's own time runs at the worker's pace. In production both clocks agree (within their skew), and this is the
 * worker's clock.
 */
export function attemptClock(info: { currentAttemptScheduledTimestampMs: number }): () => number {
  const startedAtMs = Date.now();
  const scheduledAtMs = info.currentAttemptScheduledTimestampMs;
  return () => {
    const workerNowMs = Date.now();
    return Math.max(workerNowMs, scheduledAtMs + (workerNowMs - startedAtMs));
  };
}
