/**
 * The real worker process (dist/src/worker.js) kept running through chaos: the test SIGKILLs it at will, and a worker
 * that exits by itself (its server was killed under it) is started again after a second, as a process manager would.
 */
import { startBuiltScript, type StartedScript } from './processes';

export interface SupervisedWorker {
  /** Resolves once the current worker polls its task queue (or has exited). */
  ready(): Promise<void>;
  /** SIGKILLs the current worker and starts a new one. */
  killAndRestart(): Promise<void>;
  /** Worker exits the test did not cause (each was followed by a restart). */
  unexpectedExits(): number;
  /** SIGKILLs the worker and starts no other. */
  stop(): Promise<void>;
  /** The current worker's last output lines. */
  tail(): string;
}

/** Starts `node dist/src/worker.js` with exactly `env` (plus PATH and HOME) and keeps one running until `stop()`. */
export function superviseWorker(env: Record<string, string>): SupervisedWorker {
  let stopped = false;
  let unexpected = 0;
  let current: { script: StartedScript; ready: Promise<void>; killedByUs: boolean };
  const start = () => {
    const script = startBuiltScript('worker.js', [], env);
    const ready = new Promise<void>((resolve) => {
      const check = () => {
        if (script.output().includes('worker polling task queue')) resolve();
      };
      script.child.stdout?.on('data', check);
      script.child.stderr?.on('data', check);
      void script.exited.then(() => resolve());
    });
    const entry = { script, ready, killedByUs: false };
    current = entry;
    void script.exited.then(() => {
      if (entry.killedByUs || stopped) return;
      unexpected += 1;
      setTimeout(() => {
        if (!stopped && current === entry) start();
      }, 1_000);
    });
  };
  const killCurrent = async () => {
    const entry = current;
    entry.killedByUs = true;
    if (entry.script.child.exitCode === null && entry.script.child.signalCode === null)
      entry.script.child.kill('SIGKILL');
    await entry.script.exited;
  };
  start();
  return {
    ready: () => current.ready,
    async killAndRestart() {
      await killCurrent();
      if (!stopped) start();
    },
    unexpectedExits: () => unexpected,
    async stop() {
      stopped = true;
      await killCurrent();
    },
    tail: () => current.script.output().split('\n').slice(-20).join('\n'),
  };
}
