/**
 * A nudge from a registration to the long reader of the same watcher, when both run in this worker: the reader then
 * looks at its book at once, without the round trip through its watcher's workflow task that answers its
 * `awaitChanges`, so a new wait is read at its first due point even on a fast schedule. Across workers the
 * `awaitChanges` answer brings it.
 */
export class ReaderWakeups {
  private readonly listeners = new Map<string, Set<() => void>>();

  /** Calls `onWake` whenever a wait is registered with `watcherId` from this worker; returns what stops it. */
  listen(watcherId: string, onWake: () => void): () => void {
    let listeners = this.listeners.get(watcherId);
    if (!listeners) this.listeners.set(watcherId, (listeners = new Set()));
    listeners.add(onWake);
    return () => {
      listeners.delete(onWake);
      if (listeners.size === 0 && this.listeners.get(watcherId) === listeners) this.listeners.delete(watcherId);
    };
  }

  wake(watcherId: string): void {
    for (const onWake of this.listeners.get(watcherId) ?? []) onWake();
  }
}
