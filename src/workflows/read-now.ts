/**
 * Reads asked for from outside: a caller who knows the job changed (its own webhook, a person in a UI) signals
 * `pollNow`, and the follow-up's current wait is replaced by one that reads at once. The read is an ordinary poll: the
 * same activity, the same rules of what a read means; only its time changes. A wait that already ended when the
 * signal came is not repeated: the next wait starts with a read instead.
 */
import { CancellationScope, condition, isCancellation, setHandler } from '@temporalio/workflow';
import { pollNowSignal } from './definitions';

export class ReadNow {
  private asked = 0;
  private served = 0;

  constructor() {
    setHandler(pollNowSignal, () => {
      this.asked += 1;
    });
  }

  /**
   * Runs a wait (`start(false)`), and when a read is asked for meanwhile, cancels it and starts again reading at once
   * (`start(true)`). A wait that ends on its own in the same moment wins: its read is as new as the one asked for.
   */
  async poll<T>(start: (readAtOnce: boolean) => Promise<T>): Promise<T> {
    for (;;) {
      const readAtOnce = this.asked > this.served;
      this.served = this.asked;
      const asked = this.asked;
      let settled: { ok: true; value: T } | { ok: false; error: unknown } | null = null;
      const scope = new CancellationScope();
      void scope.run(() => start(readAtOnce)).then(
        (value) => void (settled = { ok: true, value }),
        (error: unknown) => void (settled = { ok: false, error }),
      );
      await condition(() => settled !== null || this.asked !== asked);
      const interrupted = settled === null;
      if (interrupted) {
        scope.cancel();
        await condition(() => settled !== null);
      }
      const outcome = settled as unknown as { ok: true; value: T } | { ok: false; error: unknown };
      if (outcome.ok) return outcome.value;
      // Only the cancel asked for here starts the wait again; the follow-up's own cancellation ends it.
      if (interrupted && isCancellation(outcome.error) && !CancellationScope.current().consideredCancelled) continue;
      throw outcome.error;
    }
  }
}
