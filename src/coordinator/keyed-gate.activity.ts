/**
 * At most N calls at once per key within this process, the rest waiting in arrival order. The check-ins of one worker
 * to one coordinator go through it: Temporal refuses an 11th update in flight to a workflow, and a burst of refused
 * calls, each retried, kept a coordinator's own workflow tasks from running at all (1,000 check-ins to one project).
 */
export class KeyedGate {
  private readonly gates = new Map<string, { active: number; waiting: Array<() => void> }>();

  constructor(private readonly limit: number) {}

  /** Runs `work` once a place is free for `key`; gives up waiting (returns `timedOut`) at `giveUpAtMs`. */
  async run<T>(key: string, giveUpAtMs: number, work: () => Promise<T>): Promise<{ done: T } | 'timedOut'> {
    const gate = this.gates.get(key) ?? { active: 0, waiting: [] };
    this.gates.set(key, gate);
    if (gate.active >= this.limit && !(await this.wait(gate, giveUpAtMs))) {
      this.forgetIfIdle(key, gate);
      return 'timedOut';
    }
    gate.active += 1;
    try {
      return { done: await work() };
    } finally {
      gate.active -= 1;
      gate.waiting.shift()?.();
      this.forgetIfIdle(key, gate);
    }
  }

  private wait(gate: { waiting: Array<() => void> }, giveUpAtMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const admit = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(
        () => {
          gate.waiting.splice(gate.waiting.indexOf(admit), 1);
          resolve(false);
        },
        Math.max(giveUpAtMs - Date.now(), 0),
      );
      gate.waiting.push(admit);
    });
  }

  private forgetIfIdle(key: string, gate: { active: number; waiting: unknown[] }): void {
    if (gate.active === 0 && gate.waiting.length === 0) this.gates.delete(key);
  }
}
