/**
 * A follow-up's answers from its watcher, as its one `jobReads` handler hands them over: to the watch that waits now,
 * or held for the next watch of this run. An answer can come before its watch opens (the send registered the first
 * wait, and the watcher answered before the follow-up read the send's result), and one can come between two watches
 * (a read asked for answered the last one). The next watch takes only its own; the others it logs and drops.
 */

/**
 * Answers held while no watch waits. Legitimately one or two; a flood of forged ones from someone with access to the
 * namespace keeps only the latest, so it cannot grow the workflow's memory (the wait's silence still brings the
 * follow-up back to its watcher if a true answer was pushed out).
 */
const HELD_AT_MOST = 20;

export class AnswerInbox {
  private held: unknown[] = [];
  private taker: ((answer: unknown) => void) | null = null;

  deliver(answer: unknown): void {
    if (this.taker) return this.taker(answer);
    if (this.held.length >= HELD_AT_MOST) this.held.shift();
    this.held.push(answer);
  }

  /** The watch that waits from now on: it takes the answers held first, in the order they came. */
  open(taker: (answer: unknown) => void): void {
    this.taker = taker;
    const held = this.held;
    this.held = [];
    for (const answer of held) taker(answer);
  }

  close(): void {
    this.taker = null;
  }
}
