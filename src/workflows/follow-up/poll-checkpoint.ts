/**
 * What the attempts of one wait (the poll activity) hand to each other in heartbeat details, and what a failure of
 * the wait carries: read by the activity, by the workflow (how a wait ended) and by the client (`status`). Pure.
 */

/** What a wait's attempts hand to each other in heartbeat details. Also what `describe()` shows of the wait. */
export interface PollCheckpoint {
  attempt: number;
  polls: number;
  sawActive: boolean;
  invalidInARow: number;
  lastStatus: string | null;
  lastError: string | null;
  nextPollAtMs: number | null;
  /** When the reads now failing began to fail (null: the last read succeeded). */
  failingSinceMs?: number | null;
  /** Reads failed in a row since then. */
  failedReads?: number;
  /** The follow-up was told that reads fail (and must be told when they succeed again). */
  troubleTold?: boolean;
}

/** The checkpoint a failure of the wait carries: its only detail, or the last after the API's own. */
export function checkpointOfFailure(details: readonly unknown[] | null | undefined): PollCheckpoint | undefined {
  return readCheckpoint(details?.at(-1));
}

/** Reads a checkpoint from heartbeat details, or undefined when there is none (or it is not ours). */
export function readCheckpoint(details: unknown): PollCheckpoint | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { attempt, polls, invalidInARow } = details as Partial<PollCheckpoint>;
  if (typeof attempt !== 'number' || typeof polls !== 'number' || typeof invalidInARow !== 'number') return undefined;
  return details as PollCheckpoint;
}
