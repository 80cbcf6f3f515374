/**
 * A durable wake-up that is never cancelled. A wait bounded by `condition(fn, timeout)` cancels its timer when it is
 * answered, which costs the history an event; a timer still pending when the workflow ends costs nothing. So the waits
 * of one follow-up share one alarm: a wait that must wake by some time keeps the pending alarm if it rings no later
 * (waking early only makes the wait look again), and sets another only when none will ring in time.
 */
import { CancellationScope, sleep } from '@temporalio/workflow';

export class Alarm {
  private pending: { atMs: number; rang: boolean } | null = null;

  /** Whether the alarm last set has rung (a wait woken by it looks again, then sets the next). */
  get rang(): boolean {
    return this.pending?.rang === true;
  }

  /** Makes sure the workflow wakes by `atMs`; `summary` names the timer in the Web UI when a new one is set. */
  setBy(atMs: number, summary: string): void {
    if (this.pending && !this.pending.rang && this.pending.atMs <= atMs) return;
    const alarm = { atMs, rang: false };
    this.pending = alarm;
    // Not cancellable: a read asked for cancels the wait it interrupts, and the alarm must outlive it (and cancelling
    // it would cost the event this class saves).
    void CancellationScope.nonCancellable(() => sleep(Math.max(1, atMs - Date.now()), { summary })).then(() => {
      alarm.rang = true;
    });
  }
}
