/** Busy-loop child processes that keep the machine's cores busy, so a test sees its worker slowed the way a loaded host slows it. */
import { spawn, type ChildProcess } from 'node:child_process';

export interface CpuHogs {
  /** SIGKILLs every hog and waits until each is gone; safe to call more than once. */
  stop(): Promise<void>;
}

/** Starts `count` busy loops (`node -e 'for(;;){}'`). Stop them in afterAll, whatever happened. */
export function startCpuHogs(count: number): CpuHogs {
  const hogs: ChildProcess[] = Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }),
  );
  const gone = hogs.map(
    (hog) =>
      new Promise<void>((resolve) =>
        hog.exitCode !== null || hog.signalCode !== null ? resolve() : hog.once('exit', () => resolve()),
      ),
  );
  return {
    async stop() {
      for (const hog of hogs) if (hog.exitCode === null && hog.signalCode === null) hog.kill('SIGKILL');
      await Promise.all(gone);
    },
  };
}
