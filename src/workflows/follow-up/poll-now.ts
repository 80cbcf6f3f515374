/**
 * Reads asked for from outside: a caller who knows the job changed (its own webhook, a person in a UI) calls
 * `pollNow`, and the follow-up's current wait is replaced by one that reads at once. The read is an ordinary poll: the
 * same activity, the same rules of what a read means; only its time changes. A wait that already ended when the ask
 * came is not repeated: the next wait starts with a read instead. Asks are admitted by asked-reads.ts: one that comes
 * while a read is due is refused by the validator (nothing written), and a stream of asks is answered by reads spaced
 * further apart, so a flood costs a few reads, not one each.
 */
import { ApplicationFailure, CancellationScope, condition, isCancellation, setHandler } from '@temporalio/workflow';
import { admitAsk, beginRead, NO_ASKED_READS, type AskedReads } from './asked-reads';
import { POLL_NOW_COVERED, type AskedRead } from '../../kernel/types';
import { pollNowUpdate } from './messages';

export class PollNow {
  private state: AskedReads = NO_ASKED_READS;
  /** Asks admitted: a wait under way is interrupted when one comes due. */
  private admitted = 0;

  constructor() {
    setHandler(
      pollNowUpdate,
      (): AskedRead => {
        // Admitted by the validator in this same activation: the state cannot have changed in between.
        const next = admitAsk(this.state, Date.now()) as AskedReads;
        this.state = next;
        this.admitted += 1;
        return { readAtMs: next.dueAtMs as number };
      },
      {
        validator: () => {
          const dueAtMs = this.state.dueAtMs;
          if (dueAtMs === null) return;
          throw ApplicationFailure.create({
            type: POLL_NOW_COVERED,
            message: `A read asked for earlier is due at ${new Date(dueAtMs).toISOString()} and begins after this ask: it covers it`,
            details: [{ readAtMs: dueAtMs } satisfies AskedRead],
          });
        },
      },
    );
  }

  /**
   * Runs a wait (`start(false)`), and when a read asked for comes due meanwhile, cancels it and starts again reading at
   * once (`start(true)`). A wait that ends on its own in the same moment wins: its read is as new as the one asked for.
   */
  async poll<T>(start: (readAtOnce: boolean) => Promise<T>): Promise<T> {
    for (;;) {
      const readAtOnce = this.isDue();
      if (readAtOnce) this.state = beginRead(this.state, Date.now());
      let settled: { ok: true; value: T } | { ok: false; error: unknown } | null = null;
      const scope = new CancellationScope();
      void scope
        .run(() => start(readAtOnce))
        .then(
          (value) => void (settled = { ok: true, value }),
          (error: unknown) => void (settled = { ok: false, error }),
        );
      while (settled === null && !this.isDue()) {
        const admitted = this.admitted;
        const dueAtMs = this.state.dueAtMs;
        const woken = () => settled !== null || this.admitted !== admitted;
        // A read asked for during a stream of asks is due later: the wait goes on until then.
        if (dueAtMs === null) await condition(woken);
        else
          await condition(woken, Math.max(dueAtMs - Date.now(), 1), {
            summary: 'wait until the read asked for is due (asks in a row are spaced out)',
          });
      }
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

  private isDue(): boolean {
    return this.state.dueAtMs !== null && this.state.dueAtMs <= Date.now();
  }
}
