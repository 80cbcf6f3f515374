/**
 * Waits and timeouts that let go of everything the moment they end.
 *
 * Why not `AbortSignal.timeout` + `AbortSignal.any`, or the activity Context's `sleep()`: each of those stays
 * attached to something long-lived after the work is done. `AbortSignal.timeout` keeps its signal (and with it the
 * whole fetch request listening on it) alive until the timeout would have fired; `Context.sleep()` adds a reaction to
 * the activity's never-settling `cancelled` promise on every call. A polling loop repeats that every few seconds for
 * hours, per follow-up, and the heap grew without bound (docs/BENCHMARKS.md). Here a listener or timer lives exactly
 * as long as the wait it serves.
 */

/** A signal that aborts when `cancel` does or after `timeoutMs`; `release()` detaches it from both once work ends. */
export interface BoundedSignal {
  signal: AbortSignal;
  /** Whether the timeout (not `cancel`) aborted it. */
  timedOut(): boolean;
  release(): void;
}

/** Bounds one piece of work by a timeout and an outer cancellation. Call `release()` when the work has ended. */
export function boundedSignal(cancel: AbortSignal | undefined, timeoutMs: number): BoundedSignal {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`timed out after ${timeoutMs}ms`, 'TimeoutError'));
  }, timeoutMs);
  const onCancel = () => controller.abort(cancel?.reason);
  if (cancel?.aborted) onCancel();
  else cancel?.addEventListener('abort', onCancel, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    release() {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onCancel);
    },
  };
}

/** Sleeps `ms`, or less if any signal aborts first. Resolves either way; the caller asks the signals why it woke. */
export function sleepUnlessAborted(ms: number, signals: readonly AbortSignal[]): Promise<void> {
  if (signals.some((signal) => signal.aborted)) return Promise.resolve();
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener('abort', wake);
      resolve();
    };
    // Node 24 warns on stderr for a negative timeout (a time already past), which breaks one-JSON-object-a-line logs.
    const timer = setTimeout(wake, Math.max(0, ms));
    for (const signal of signals) signal.addEventListener('abort', wake, { once: true });
  });
}
